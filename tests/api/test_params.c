/* Round trips under the open parameters that change how data moves (chunk_mib, pool_slots,
 * io_threads, subfiles, direct_io), and larger or unusual content: blocks larger than a staging
 * chunk, many variables, long names, many steps, empty blocks, GPU-layout shapes. */
#include "support/api_util.h"

static double big_val(size_t s, size_t i) { return (double)i * 0.5 + (double)s * 1e7; }

/* A 2-D array of 6 MiB in 3 row blocks per step, 2 steps, written and read under `wparams` /
 * `rparams`; checks whole-step reads, a box across blocks and bp4verify.py. */
static void big_round_trip(const char *name, const char *wparams, const char *rparams)
{
    const char *path = ts_path(name);
    const size_t R = 768, C = 1024; /* 768 x 1024 doubles = 6 MiB */
    gpubp_file *w = ts_open(path, GPUBP_MODE_WRITE, wparams);
    size_t shape[2] = {R, C}, ct[2] = {R / 3, C};
    gpubp_variable *v = ts_define(w, "big", GPUBP_TYPE_DOUBLE, 2, shape, ct);
    double *buf = malloc(R * C * sizeof *buf);
    assert_non_null(buf);
    for (size_t s = 0; s < 2; s++) {
        TS_OK(gpubp_begin_step(w));
        for (size_t b = 0; b < 3; b++) {
            double *blk = buf + b * (R / 3) * C;
            for (size_t i = 0; i < (R / 3) * C; i++) blk[i] = big_val(s, b * (R / 3) * C + i);
            size_t bst[2] = {b * (R / 3), 0};
            TS_OK(gpubp_set_selection(v, 2, bst, ct));
            TS_OK(gpubp_put(w, v, blk, GPUBP_DEFERRED));
        }
        TS_OK(gpubp_end_step(w));
    }
    TS_OK(gpubp_close(w));
    AU_CHECK(path);

    gpubp_file *r = ts_open(path, GPUBP_MODE_READ_RANDOM_ACCESS, rparams);
    v = au_inq(r, "big");
    for (size_t s = 0; s < 2; s++) {
        memset(buf, 0, R * C * sizeof *buf);
        TS_OK(gpubp_set_step_selection(v, s, 1));
        size_t z[2] = {0, 0};
        TS_OK(gpubp_set_selection(v, 2, z, shape));
        TS_OK(gpubp_get(r, v, buf, GPUBP_SYNC));
        for (size_t i = 0; i < R * C; i++)
            if (buf[i] != big_val(s, i)) {
                print_error("step %zu element %zu: %g != %g\n", s, i, buf[i], big_val(s, i));
                fail();
            }
        size_t bst[2] = {200, 17}, bct[2] = {400, 1000};
        TS_OK(gpubp_set_selection(v, 2, bst, bct));
        TS_OK(gpubp_get(r, v, buf, GPUBP_SYNC));
        for (size_t i = 0; i < 400; i++)
            for (size_t j = 0; j < 1000; j++)
                if (buf[i * 1000 + j] != big_val(s, (200 + i) * C + 17 + j)) {
                    print_error("box element (%zu,%zu) wrong\n", i, j);
                    fail();
                }
        double mn, mx;
        TS_OK(gpubp_variable_minmax(v, &mn, &mx));
        assert_true(mn == big_val(s, 0));
        assert_true(mx == big_val(s, R * C - 1));
    }
    TS_OK(gpubp_close(r));
    free(buf);
}

/* The cases that are big_round_trip alone: the cmocka name, the dataset, the parameters. */
typedef struct big_case {
    const char *test, *name, *wparams, *rparams;
} big_case;

static const big_case big_cases[] = {
    {"test_blocks_larger_than_chunks", "chunks.bp", "chunk_mib=1,pool_slots=2",
     "chunk_mib=1,pool_slots=2"},
    {"test_io_threads", "threads.bp", "io_threads=4,chunk_mib=1", "io_threads=3"},
    {"test_direct_io", "direct.bp", "direct_io=1", "direct_io=1"},
    {"test_fsync_and_defaults", "fsync_big.bp", "fsync=1", NULL},
};

/* runs big_round_trip on the big_case given as the cmocka state */
static void test_big_case(void **state)
{
    const big_case *c = *state;
    big_round_trip(c->name, c->wparams, c->rparams);
}

/* a cmocka case for big_cases[i], under its own name */
#define BIG_CASE(i) {big_cases[i].test, test_big_case, NULL, NULL, (void *)&big_cases[i]}

static void test_subfiles(void **state)
{
    (void)state;
    big_round_trip("subfiles.bp", "subfiles=3,io_threads=3", NULL);
    /* the data files the parameter asks for, and no more */
    const char *path = ts_path("subfiles.bp");
    assert_true(ts_exists(ts_join(path, "data.0")));
    assert_false(ts_exists(ts_join(path, "data.3")));
}

/* One step (the writer's first): nbig blocks of 4 MiB of doubles (a 1-D array) and three small blocks of
 * another variable, the small ones put between the big ones; value(step, i) everywhere. */
static double auto_val(size_t s, size_t i) { return (double)i + (double)s * 0.25; }

static void auto_step(gpubp_file *w, size_t step, size_t nbig)
{
    const size_t B = (size_t)1 << 19; /* doubles per big block: 4 MiB */
    size_t shape = nbig * B, sshape = 3 * 100;
    gpubp_variable *v = nbig ? ts_define(w, "big", GPUBP_TYPE_DOUBLE, 1, &shape, &B) : NULL;
    gpubp_variable *sv = ts_define(w, "small", GPUBP_TYPE_DOUBLE, 1, &sshape, NULL);
    double *buf = malloc((nbig * B + sshape) * sizeof *buf);
    assert_non_null(buf);
    for (size_t i = 0; i < nbig * B; i++) buf[i] = auto_val(step, i);
    for (size_t i = 0; i < sshape; i++) buf[nbig * B + i] = auto_val(step, i);
    TS_OK(gpubp_begin_step(w));
    for (size_t b = 0; b < nbig || b < 3; b++) {
        if (b < nbig) {
            size_t st = b * B;
            TS_OK(gpubp_set_selection(v, 1, &st, &B));
            TS_OK(gpubp_put(w, v, buf + st, GPUBP_DEFERRED));
        }
        if (b < 3) {
            size_t st = b * 100, ct = 100;
            TS_OK(gpubp_set_selection(sv, 1, &st, &ct));
            TS_OK(gpubp_put(w, sv, buf + nbig * B + st, GPUBP_DEFERRED));
        }
    }
    TS_OK(gpubp_end_step(w));
    free(buf);
}

/* Reads the variable's step vs (written in step s) of `name`, n values, and checks them. */
static void auto_check(gpubp_file *r, size_t vs, size_t s, const char *name, size_t n)
{
    gpubp_variable *v = au_inq(r, name);
    double *buf = malloc(n * sizeof *buf);
    assert_non_null(buf);
    size_t z = 0;
    TS_OK(gpubp_set_step_selection(v, vs, 1));
    TS_OK(gpubp_set_selection(v, 1, &z, &n));
    TS_OK(gpubp_get(r, v, buf, GPUBP_SYNC));
    for (size_t i = 0; i < n; i++)
        if (buf[i] != auto_val(s, i)) {
            print_error("%s step %zu element %zu: %g != %g\n", name, s, i, buf[i], auto_val(s, i));
            fail();
        }
    free(buf);
}

/* Which of data.0 … data.5 exist under path, as a bit mask. */
static unsigned data_files(const char *path)
{
    unsigned m = 0;
    char name[16];
    for (int k = 0; k < 6; k++) {
        snprintf(name, sizeof name, "data.%d", k);
        if (ts_exists(ts_join(path, name))) m |= 1u << k;
    }
    return m;
}

/* subfiles=auto, the default: small blocks keep data.0 alone (as ADIOS2 writes it; data.K of an
 * earlier dataset of the name is removed), blocks of 4 MiB or more spread over as many subfiles as
 * I/O threads (created when first used), appends continue them; explicit values as asked. */
static void test_subfiles_auto(void **state)
{
    (void)state;
    const size_t B = (size_t)1 << 19;
    char path[4096]; /* ts_path's buffer is reused by later calls */
    snprintf(path, sizeof path, "%s", ts_path("auto.bp"));
    /* a dataset of small blocks, over an earlier one that had 3 subfiles */
    big_round_trip("auto.bp", "subfiles=3,io_threads=3", NULL);
    big_round_trip("auto.bp", NULL, NULL);
    assert_int_equal(data_files(path), 0x1);
    /* 4 big blocks, 3 small ones: 4 subfiles (io_threads defaults to pool_slots, 4), each big
     * block in a file of its own; steps appended with small blocks only, then big ones again */
    gpubp_file *w = ts_open(path, GPUBP_MODE_WRITE, "subfiles=auto");
    auto_step(w, 0, 4);
    TS_OK(gpubp_close(w));
    assert_int_equal(data_files(path), 0xF);
    for (int k = 0; k < 4; k++) {
        char name[16];
        snprintf(name, sizeof name, "data.%d", k);
        assert_true(ts_file_size(ts_join(path, name)) >= (long)(B * sizeof(double)));
        assert_true(ts_file_size(ts_join(path, name)) < (long)(2 * B * sizeof(double)));
    }
    long before = ts_file_size(ts_join(path, "data.3"));
    w = ts_open(path, GPUBP_MODE_APPEND, NULL);
    auto_step(w, 1, 0);
    TS_OK(gpubp_close(w));
    assert_int_equal(ts_file_size(ts_join(path, "data.3")), before); /* small: data.0 */
    w = ts_open(path, GPUBP_MODE_APPEND, NULL);
    auto_step(w, 2, 4);
    TS_OK(gpubp_close(w));
    assert_true(ts_file_size(ts_join(path, "data.3")) > before);
    AU_CHECK(path);
    gpubp_file *r = ts_open(path, GPUBP_MODE_READ_RANDOM_ACCESS, NULL);
    auto_check(r, 0, 0, "big", 4 * B);
    auto_check(r, 1, 2, "big", 4 * B); /* not in step 1 */
    for (size_t s = 0; s < 3; s++) auto_check(r, s, s, "small", 300);
    TS_OK(gpubp_close(r));
    /* a dataset of small blocks appended with big ones: data.1… created then */
    w = ts_open(path, GPUBP_MODE_WRITE, NULL);
    auto_step(w, 0, 0);
    TS_OK(gpubp_close(w));
    assert_int_equal(data_files(path), 0x1);
    w = ts_open(path, GPUBP_MODE_APPEND, "io_threads=2");
    auto_step(w, 1, 3);
    TS_OK(gpubp_close(w));
    assert_int_equal(data_files(path), 0x3); /* as many as I/O threads */
    AU_CHECK(path);
    r = ts_open(path, GPUBP_MODE_READ_RANDOM_ACCESS, NULL);
    auto_check(r, 0, 1, "big", 3 * B);
    auto_check(r, 0, 0, "small", 300);
    auto_check(r, 1, 1, "small", 300);
    TS_OK(gpubp_close(r));
    /* subfiles=1: one file whatever the blocks; bad values name the key */
    w = ts_open(path, GPUBP_MODE_WRITE, "subfiles=1");
    auto_step(w, 0, 4);
    TS_OK(gpubp_close(w));
    assert_int_equal(data_files(path), 0x1);
    gpubp_file *f = NULL;
    assert_int_equal(gpubp_open(&f, ts_path("bad_sub.bp"), GPUBP_MODE_WRITE, "subfiles=0"),
                     GPUBP_ERR_PARAM);
    assert_non_null(strstr(gpubp_last_error(), "subfiles"));
    assert_int_equal(gpubp_open(&f, ts_path("bad_sub.bp"), GPUBP_MODE_WRITE, "subfiles=autox"),
                     GPUBP_ERR_PARAM);
}

/* The MPI keys are accepted by a serial open (where they change nothing); bad values name the key. */
static void test_mpi_keys(void **state)
{
    (void)state;
    big_round_trip("mpi_keys.bp", "aggregators=4,aggregation=funnel", NULL);
    gpubp_file *f = NULL;
    assert_int_equal(gpubp_open(&f, ts_path("bad_agg.bp"), GPUBP_MODE_WRITE, "aggregation=star"),
                     GPUBP_ERR_PARAM);
    assert_null(f);
    assert_non_null(strstr(gpubp_last_error(), "aggregation"));
    assert_int_equal(gpubp_open(&f, ts_path("bad_agg.bp"), GPUBP_MODE_WRITE, "aggregators=0"),
                     GPUBP_ERR_PARAM);
    assert_non_null(strstr(gpubp_last_error(), "aggregators"));
}

/* 300 variables with names up to 1000 characters, in one step. */
static void test_many_variables_long_names(void **state)
{
    (void)state;
    const char *path = ts_path("manyvars.bp");
    gpubp_file *w = au_open(path, GPUBP_MODE_WRITE);
    enum { NV = 300 };
    static char names[NV][1100];
    gpubp_variable *v[NV];
    for (int k = 0; k < NV; k++) {
        int len = snprintf(names[k], sizeof names[k], "group%03d/", k);
        int extra = (k * 37) % 1000;
        for (int i = 0; i < extra && len < 1090; i++) names[k][len++] = (char)('a' + (i + k) % 26);
        names[k][len] = '\0';
        size_t shape[1] = {3};
        v[k] = ts_define(w, names[k], GPUBP_TYPE_INT32, 1, shape, NULL);
    }
    TS_OK(gpubp_begin_step(w));
    for (int k = 0; k < NV; k++) {
        int32_t d[3] = {k, -k, k * 1000};
        TS_OK(gpubp_put(w, v[k], d, GPUBP_SYNC));
    }
    TS_OK(gpubp_end_step(w));
    gpubp_file *r = au_reopen(w, path, GPUBP_MODE_READ_RANDOM_ACCESS);
    size_t n = 0;
    const char *const *list;
    TS_OK(gpubp_available_variables(r, &n, &list));
    assert_int_equal(n, NV);
    for (int k = NV - 1; k >= 0; k--) {
        gpubp_variable *x = au_inq(r, names[k]);
        int32_t d[3];
        TS_OK(gpubp_get(r, x, d, GPUBP_SYNC));
        assert_int_equal(d[0], k);
        assert_int_equal(d[1], -k);
        assert_int_equal(d[2], k * 1000);
    }
    TS_OK(gpubp_close(r));
}

/* 400 steps: the index grows to 400 records; the last step reads back in both modes. */
static void test_many_steps(void **state)
{
    (void)state;
    const char *path = ts_path("manysteps.bp");
    gpubp_file *w = au_open(path, GPUBP_MODE_WRITE);
    gpubp_variable *v = ts_define(w, "s", GPUBP_TYPE_INT64, 0, NULL, NULL);
    for (int64_t s = 0; s < 400; s++) {
        int64_t x = s * s;
        ts_put_step(w, v, &x, GPUBP_SYNC);
    }
    TS_OK(gpubp_close(w));
    assert_int_equal(ts_file_size(ts_join(path, "md.idx")), 64 + 400 * 64);
    AU_CHECK(path);
    gpubp_file *r = au_open(path, GPUBP_MODE_READ_RANDOM_ACCESS);
    v = au_inq(r, "s");
    int64_t all[400];
    TS_OK(gpubp_set_step_selection(v, 0, 400));
    TS_OK(gpubp_get(r, v, all, GPUBP_SYNC));
    for (int64_t s = 0; s < 400; s++) assert_int_equal(all[s], s * s);
    TS_OK(gpubp_close(r));
    r = au_open(path, GPUBP_MODE_READ);
    int64_t s = 0;
    while (gpubp_begin_step(r) == GPUBP_OK) {
        v = au_inq(r, "s");
        int64_t x = -1;
        TS_OK(gpubp_get(r, v, &x, GPUBP_SYNC));
        assert_int_equal(x, s * s);
        TS_OK(gpubp_end_step(r));
        s++;
    }
    assert_int_equal(s, 400);
    TS_OK(gpubp_close(r));
}

/* A block with a zero count between two real ones (a rank with nothing to write). */
static void test_empty_block(void **state)
{
    (void)state;
    const char *path = ts_path("emptyblock.bp");
    gpubp_file *w = au_open(path, GPUBP_MODE_WRITE);
    size_t shape[1] = {10}, ct[1] = {5};
    gpubp_variable *v = ts_define(w, "e", GPUBP_TYPE_FLOAT, 1, shape, ct);
    float a[5] = {1, 2, 3, 4, 5}, b[5] = {6, 7, 8, 9, 10};
    TS_OK(gpubp_begin_step(w));
    TS_OK(gpubp_put(w, v, a, GPUBP_SYNC));
    size_t s1[1] = {5}, c0[1] = {0};
    TS_OK(gpubp_set_selection(v, 1, s1, c0));
    TS_OK(gpubp_put(w, v, b, GPUBP_SYNC));
    TS_OK(gpubp_set_selection(v, 1, s1, ct));
    TS_OK(gpubp_put(w, v, b, GPUBP_SYNC));
    TS_OK(gpubp_end_step(w));
    gpubp_file *r = au_reopen(w, path, GPUBP_MODE_READ_RANDOM_ACCESS);
    v = au_inq(r, "e");
    float got[10];
    TS_OK(gpubp_get(r, v, got, GPUBP_SYNC));
    for (int i = 0; i < 10; i++) assert_true(got[i] == (float)(i + 1));
    float mn, mx;
    TS_OK(gpubp_variable_minmax(v, &mn, &mx));
    assert_true(mn == 0.0f && mx == 10.0f); /* the empty block counts as 0 / 0, as in ADIOS2 */
    size_t nb = 0, bs[1] = {99}, bc[1] = {99};
    TS_OK(gpubp_variable_blocks(v, 0, &nb));
    assert_int_equal(nb, 3);
    /* the empty block is a block like the others: block_info answers for it */
    TS_OK(gpubp_variable_block_info(v, 0, 1, bs, bc, NULL, NULL));
    assert_int_equal(bs[0], 5);
    assert_int_equal(bc[0], 0);
    TS_OK(gpubp_variable_block_info(v, 0, 1, bs, bc, &mn, &mx));
    TS_OK(gpubp_close(r));
}

/* variable_shape in the GPU layout: reversed by default, as ADIOS2; not with
 * gpu_layout=row_major. Pure bookkeeping: no device needed. */
static void test_shape_gpu_layout(void **state)
{
    (void)state;
    const char *path = ts_path("layout.bp");
    size_t shape[3] = {2, 3, 4};
    uint8_t d[24];
    for (int i = 0; i < 24; i++) d[i] = (uint8_t)i;
    au_write_one(path, GPUBP_MODE_WRITE, "a", GPUBP_TYPE_UINT8, 3, shape, d);
    for (int k = 0; k < 2; k++) {
        gpubp_file *r = ts_open(path, GPUBP_MODE_READ_RANDOM_ACCESS, k ? "gpu_layout=row_major" : NULL);
        gpubp_variable *v = au_inq(r, "a");
        size_t h[3], g[3], x[3];
        TS_OK(gpubp_variable_shape(v, GPUBP_MEM_HOST, h));
        TS_OK(gpubp_variable_shape(v, GPUBP_MEM_GPU, g));
        TS_OK(gpubp_variable_shape(v, GPUBP_MEM_DETECT, x));
        for (int i = 0; i < 3; i++) {
            assert_int_equal(h[i], shape[i]);
            assert_int_equal(x[i], shape[i]); /* unresolved: host */
            assert_int_equal(g[i], k ? shape[i] : shape[2 - i]);
        }
        TS_OK(gpubp_close(r));
    }
}

/* Attributes survive an append; the appending run adds its own. */
static void test_append_keeps_attributes(void **state)
{
    (void)state;
    const char *path = ts_path("append_attr.bp");
    for (int pass = 0; pass < 2; pass++) {
        gpubp_file *w = au_open(path, pass ? GPUBP_MODE_APPEND : GPUBP_MODE_WRITE);
        gpubp_variable *v = ts_define(w, "x", GPUBP_TYPE_INT16, 0, NULL, NULL);
        if (pass == 0) {
            TS_OK(gpubp_define_attribute(w, "first", GPUBP_TYPE_STRING, "from run 1", 1));
        } else {
            double d[2] = {1.5, 2.5};
            TS_OK(gpubp_define_attribute(w, "second", GPUBP_TYPE_DOUBLE, d, 2));
        }
        int16_t x = (int16_t)(pass + 1);
        ts_put_step(w, v, &x, GPUBP_SYNC);
        TS_OK(gpubp_close(w));
    }
    AU_CHECK(path);
    gpubp_file *r = au_open(path, GPUBP_MODE_READ_RANDOM_ACCESS);
    size_t n = 0;
    const char *const *names;
    TS_OK(gpubp_available_attributes(r, &n, &names));
    assert_int_equal(n, 2);
    assert_string_equal(names[0], "first");
    assert_string_equal(names[1], "second");
    const char *s;
    TS_OK(gpubp_attribute_string(r, "first", 0, &s));
    assert_string_equal(s, "from run 1");
    double d[2];
    TS_OK(gpubp_attribute_data(r, "second", d));
    assert_true(d[0] == 1.5 && d[1] == 2.5);
    TS_OK(gpubp_close(r));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        BIG_CASE(0),
        BIG_CASE(1),
        cmocka_unit_test(test_subfiles),
        cmocka_unit_test(test_subfiles_auto),
        BIG_CASE(2),
        BIG_CASE(3),
        cmocka_unit_test(test_many_variables_long_names),
        cmocka_unit_test(test_many_steps),
        cmocka_unit_test(test_empty_block),
        cmocka_unit_test(test_shape_gpu_layout),
        cmocka_unit_test(test_append_keeps_attributes),
        cmocka_unit_test(test_mpi_keys),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
