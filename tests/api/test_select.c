/* Reader parameters that change what a dataset presents, and the operator of a block:
 * - select_steps (ADIOS2's SelectSteps: space-separated rules first[:last[:stride]], last may be
 *   n) reads only the steps it selects, renumbered from 0; a step left out is as if it were not
 *   there, its attributes included (as ADIOS2's BP5 reader); BP5, BP4 (also written by libgpubp)
 *   and BP3, in both read modes;
 * - ignore_flatten shows the steps of a BP5 dataset written with FlattenSteps as written;
 * - gpubp_variable_block_operator names the operator of a stored block.
 * Datasets: tests/golden/selsteps (ADIOS2 2.12.1, make_selsteps.cpp and make_plugin.cpp:
 * g {4, 6} = 100 step + i,
 * l = {0, step + 1, 2 (step + 1)}, s = 7 step, sparse in steps 1 and 3, z blosc zstd = i / 4 +
 * step; attribute a0 before step 0, a2 in step 2), tests/golden/bp3, tests/golden/bzip2 and a
 * BP4 dataset written here. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "support/api_util.h"

static const char *gold(const char *dir, const char *name)
{
    static char p[2][4300];
    static int k;
    k ^= 1;
    snprintf(p[k], sizeof p[k], "%s/%s/%s", ts_golden_dir(), dir, name);
    return p[k];
}

static int has_attr(gpubp_file *f, const char *name)
{
    size_t n = 0;
    const char *const *names;
    TS_OK(gpubp_available_attributes(f, &n, &names));
    for (size_t i = 0; i < n; i++)
        if (!strcmp(names[i], name)) return 1;
    return 0;
}

static int has_var(gpubp_file *f, const char *name)
{
    gpubp_variable *v = NULL;
    return gpubp_inquire_variable(&v, f, name) == GPUBP_OK;
}

/* The steps `want` (dataset steps as written, n of them) of a steps5/steps4 dataset opened with
 * params, in both read modes: values of g, l, s, z, sparse where its steps are, attributes. */
static void check_selected(const char *path, const char *params, const size_t *want, size_t n)
{
    static const gpubp_mode modes[] = {GPUBP_MODE_READ_RANDOM_ACCESS, GPUBP_MODE_READ};
    for (int m = 0; m < 2; m++) {
        gpubp_file *f = ts_open(path, modes[m], params);
        size_t ns = 99;
        if (!m) {
            TS_OK(gpubp_steps(f, &ns));
            assert_int_equal(ns, n);
        }
        int sel_a0 = 0, sel_a2 = 0, nsparse = 0;
        for (size_t i = 0; i < n; i++) {
            sel_a0 |= want[i] == 0;
            sel_a2 |= want[i] == 2;
            nsparse += want[i] == 1 || want[i] == 3;
        }
        if (!m) { /* random access: every attribute of the selected steps */
            assert_int_equal(has_attr(f, "a0"), sel_a0);
            assert_int_equal(has_attr(f, "a2"), sel_a2);
            assert_int_equal(has_var(f, "sparse"), nsparse > 0);
            if (nsparse) {
                size_t vs = 0;
                TS_OK(gpubp_variable_steps(au_inq(f, "sparse"), &vs));
                assert_int_equal(vs, (size_t)nsparse);
            }
        }
        for (size_t i = 0; i < n; i++) {
            size_t k = want[i], cur = 99;
            if (m) {
                TS_OK(gpubp_begin_step(f));
                TS_OK(gpubp_current_step(f, &cur));
                assert_int_equal(cur, i);
            }
            double g[24], z[64];
            int32_t l[3];
            int64_t s = -1;
            gpubp_variable *vg = au_inq(f, "g"), *vl = au_inq(f, "l"), *vs = au_inq(f, "s");
            gpubp_variable *vz = au_inq(f, "z");
            if (!m) {
                TS_OK(gpubp_set_step_selection(vg, i, 1));
                TS_OK(gpubp_set_step_selection(vl, i, 1));
                TS_OK(gpubp_set_step_selection(vs, i, 1));
                TS_OK(gpubp_set_step_selection(vz, i, 1));
            }
            TS_OK(gpubp_set_block_selection(vl, 0));
            TS_OK(gpubp_get(f, vg, g, GPUBP_SYNC));
            TS_OK(gpubp_get(f, vl, l, GPUBP_SYNC));
            TS_OK(gpubp_get(f, vs, &s, GPUBP_SYNC));
            int zstd = gpubp_features() & GPUBP_FEATURE_ZSTD;
            if (zstd) TS_OK(gpubp_get(f, vz, z, GPUBP_SYNC));
            for (int j = 0; j < 24; j++) assert_true(g[j] == 100.0 * (double)k + j);
            for (int j = 0; j < 3; j++) assert_int_equal(l[j], j * ((int)k + 1));
            assert_int_equal(s, 7 * (int64_t)k);
            for (int j = 0; zstd && j < 64; j++) assert_true(z[j] == 0.25 * j + (double)k);
            char op[64] = "x";
            TS_OK(gpubp_variable_block_operator(vz, i, 0, op, sizeof op));
            assert_string_equal(op, "blosc");
            TS_OK(gpubp_variable_block_operator(vg, i, 0, op, sizeof op));
            assert_string_equal(op, "");
            if (m) {
                /* streaming: attributes defined up to this step, sparse in its own steps */
                if (k == 2) assert_true(has_attr(f, "a2"));
                assert_int_equal(has_var(f, "sparse"), k == 1 || k == 3);
                TS_OK(gpubp_end_step(f));
            }
        }
        if (m) assert_int_equal(gpubp_begin_step(f), GPUBP_END_OF_STREAM);
        TS_OK(gpubp_close(f));
    }
}

static void test_golden_steps(void **state)
{
    (void)state;
    static const size_t all[] = {0, 1, 2, 3, 4}, s13[] = {1, 2, 3}, s0n2[] = {0, 2, 4},
                        s31[] = {1, 3}, s2n[] = {2, 3, 4}, s4[] = {4};
    const char *files[] = {gold("selsteps", "steps5.bp"), gold("selsteps", "steps4.bp")};
    for (int fi = 0; fi < 2; fi++) {
        const char *p = files[fi];
        check_selected(p, NULL, all, 5);
        check_selected(p, "select_steps=", all, 5); /* empty or blanks: every step */
        check_selected(p, "select_steps=  ", all, 5);
        check_selected(p, "select_steps=1:3", s13, 3);
        check_selected(p, "select_steps=0:n:2", s0n2, 3);
        check_selected(p, "select_steps=3 1", s31, 2);
        check_selected(p, "select_steps=3 1 3 1:1", s31, 2); /* rules add up */
        check_selected(p, "select_steps=2:n", s2n, 3);
        check_selected(p, "select_steps=2:", s2n + 0, 1); /* "2:" is step 2, as in ADIOS2 */
        check_selected(p, "select_steps=4:n:7", s4, 1);
        check_selected(p, "select_steps=1::2", s13, 1); /* no last: one step, whatever the stride */
        check_selected(p, "select_steps=3:1", NULL, 0);  /* last before first: nothing */
        check_selected(p, "select_steps=100", NULL, 0);
        check_selected(p, "select_steps=100:n", NULL, 0);
        check_selected(p, "select_steps=0:4:1,ignore_flatten=1", all, 5);
    }
}

static void test_flatten(void **state)
{
    (void)state;
    const char *p = gold("selsteps", "flat5.bp");
    /* flattened: one step, every block of every step in it */
    gpubp_file *f = ts_open(p, GPUBP_MODE_READ_RANDOM_ACCESS, NULL);
    size_t ns = 0, nb = 0;
    TS_OK(gpubp_steps(f, &ns));
    assert_int_equal(ns, 1);
    TS_OK(gpubp_variable_blocks(au_inq(f, "l"), 0, &nb));
    assert_int_equal(nb, 5);
    TS_OK(gpubp_close(f));
    f = ts_open(p, GPUBP_MODE_READ_RANDOM_ACCESS, "select_steps=1:3");
    TS_OK(gpubp_variable_blocks(au_inq(f, "l"), 0, &nb));
    assert_int_equal(nb, 3);
    gpubp_variable *vl = au_inq(f, "l");
    for (size_t b = 0; b < 3; b++) { /* block b is dataset step b + 1 */
        int32_t l[3];
        TS_OK(gpubp_set_block_selection(vl, b));
        TS_OK(gpubp_get(f, vl, l, GPUBP_SYNC));
        for (int j = 0; j < 3; j++) assert_int_equal(l[j], j * ((int)b + 2));
    }
    TS_OK(gpubp_close(f));
    /* ignore_flatten: the steps as written */
    static const size_t all[] = {0, 1, 2, 3, 4}, s12[] = {1, 2};
    check_selected(p, "ignore_flatten=1", all, 5);
    check_selected(p, "ignore_flatten=on,select_steps=1:2", s12, 2);
}

/* A BP4 dataset of libgpubp, compressed with zlib, and a BP3 file */
static void test_ours_and_bp3(void **state)
{
    (void)state;
    const char *path = ts_path("sel_ours.bp");
    gpubp_file *w = ts_open(path, GPUBP_MODE_WRITE, "compress=zlib");
    size_t shape[1] = {8};
    gpubp_variable *v = ts_define(w, "x", GPUBP_TYPE_INT32, 1, shape, NULL);
    for (int s = 0; s < 6; s++) {
        int32_t x[8];
        for (int i = 0; i < 8; i++) x[i] = 10 * s + i;
        ts_put_step(w, v, x, GPUBP_SYNC);
    }
    TS_OK(gpubp_close(w));
    gpubp_file *f = ts_open(path, GPUBP_MODE_READ, "select_steps=5 1:n:3");
    static const int want[] = {1, 4, 5};
    for (int i = 0; i < 3; i++) {
        int32_t x[8];
        char op[8];
        TS_OK(gpubp_begin_step(f));
        gpubp_variable *r = au_inq(f, "x");
        TS_OK(gpubp_get(f, r, x, GPUBP_SYNC));
        for (int j = 0; j < 8; j++) assert_int_equal(x[j], 10 * want[i] + j);
        TS_OK(gpubp_variable_block_operator(r, 0, 0, op, sizeof op));
        assert_string_equal(op, "blosc");
        /* "blosc" needs 6 bytes with its NUL */
        TS_ERR(gpubp_variable_block_operator(r, 0, 0, op, 5), GPUBP_ERR_INVALID_ARG);
        assert_non_null(strstr(gpubp_last_error(), "6 bytes"));
        TS_ERR(gpubp_variable_block_operator(r, 0, 1, op, sizeof op), GPUBP_ERR_INVALID_SELECTION);
        TS_OK(gpubp_end_step(f));
    }
    assert_int_equal(gpubp_begin_step(f), GPUBP_END_OF_STREAM);
    TS_OK(gpubp_close(f));
    /* BP3: bp3_basic has 3 steps of a2d = 100 s + 10 blk + k + 0.5 */
    f = ts_open(gold("bp3", "bp3_basic.bp"), GPUBP_MODE_READ_RANDOM_ACCESS, "select_steps=2 0");
    size_t ns = 0;
    TS_OK(gpubp_steps(f, &ns));
    assert_int_equal(ns, 2);
    gpubp_variable *a = au_inq(f, "a2d");
    double d[20];
    TS_OK(gpubp_set_step_selection(a, 1, 1));
    TS_OK(gpubp_get(f, a, d, GPUBP_SYNC));
    for (int i = 0; i < 20; i++) assert_true(d[i] == 200.0 + 10 * (i / 10) + i % 10 + 0.5);
    TS_OK(gpubp_close(f));
}

/* A reader following a live writer with select_steps: the steps left out are skipped as they
 * come (NOT_READY while the writer is active and no selected step is there). */
static void test_live(void **state)
{
    (void)state;
    const char *path = ts_path("sel_live.bp");
    gpubp_file *w = ts_open(path, GPUBP_MODE_WRITE, NULL);
    size_t shape[1] = {4};
    gpubp_variable *v = ts_define(w, "x", GPUBP_TYPE_INT32, 1, shape, NULL);
    int32_t x[4];
    for (int s = 0; s < 2; s++) {
        for (int i = 0; i < 4; i++) x[i] = 10 * s + i;
        ts_put_step(w, v, x, GPUBP_SYNC);
    }
    gpubp_file *r = ts_open(path, GPUBP_MODE_READ, "select_steps=0:n:2,timeout=0");
    int want = 0;
    for (int round = 0; round < 3; round++) {
        int st;
        while ((st = gpubp_begin_step(r)) == GPUBP_OK) {
            size_t cur = 9;
            TS_OK(gpubp_current_step(r, &cur));
            assert_int_equal(cur, (size_t)want / 2);
            TS_OK(gpubp_get(r, au_inq(r, "x"), x, GPUBP_SYNC));
            for (int i = 0; i < 4; i++) assert_int_equal(x[i], 10 * want + i);
            TS_OK(gpubp_end_step(r));
            want += 2;
        }
        if (round < 2) {
            assert_int_equal(st, GPUBP_NOT_READY);
            for (int s = 2 + 2 * round; s < 4 + 2 * round; s++) { /* two more steps */
                for (int i = 0; i < 4; i++) x[i] = 10 * s + i;
                ts_put_step(w, v, x, GPUBP_SYNC);
            }
            if (round == 1) TS_OK(gpubp_close(w));
        } else {
            assert_int_equal(st, GPUBP_END_OF_STREAM);
        }
    }
    assert_int_equal(want, 6); /* steps 0, 2, 4 of 0 ... 5 */
    TS_OK(gpubp_close(r));
}

/* md.idx of a BP5 dataset cut after its first `steps` step records ('w' and 's' records: u8
 * type, u64 length, body), the writer-active flag (byte 39) set as given */
static void write_idx(const unsigned char *idx, size_t len, const char *to, int steps, int active)
{
    size_t at = 64;
    for (int n = 0; at + 9 <= len;) {
        uint64_t l = 0;
        for (int i = 7; i >= 0; i--) l = l << 8 | idx[at + 1 + i];
        if (idx[at] == 's' && n++ == steps) break;
        at += 9 + (size_t)l;
    }
    unsigned char *cut = malloc(at);
    assert_non_null(cut);
    memcpy(cut, idx, at);
    cut[39] = (unsigned char)active;
    assert_int_equal(ts_write_file(to, cut, at), 0);
    free(cut);
}

/* The same with a BP5 dataset whose writer is still active: steps5.bp's md.idx given out two
 * steps, then four, then five with the writer done, to a reader of steps 1, 3, ... */
static void test_live_bp5(void **state)
{
    (void)state;
    const char *src = gold("selsteps", "steps5.bp");
    char dst[4300];
    snprintf(dst, sizeof dst, "%s", ts_path("sel_live5.bp"));
    ts_remove_tree(dst);
    assert_int_equal(ts_copy_dataset(src, dst), 0);
    size_t len = 0;
    unsigned char *idx = ts_read_file(ts_join(src, "md.idx"), &len);
    assert_non_null(idx);
    const char *ip = ts_join(dst, "md.idx");
    char ipath[4400];
    snprintf(ipath, sizeof ipath, "%s", ip);
    write_idx(idx, len, ipath, 2, 1);
    gpubp_file *r = ts_open(dst, GPUBP_MODE_READ, "select_steps=1:n:2,timeout=0");
    static const int cut[] = {2, 4, 5};
    int want = 1;
    for (int round = 0; round < 3; round++) {
        int st;
        while ((st = gpubp_begin_step(r)) == GPUBP_OK) {
            int64_t sv = -1;
            TS_OK(gpubp_get(r, au_inq(r, "s"), &sv, GPUBP_SYNC));
            assert_int_equal(sv, 7 * want);
            assert_true(has_var(r, "sparse")); /* steps 1 and 3 have it */
            TS_OK(gpubp_end_step(r));
            want += 2;
        }
        assert_int_equal(st, round < 2 ? GPUBP_NOT_READY : GPUBP_END_OF_STREAM);
        if (round < 2) write_idx(idx, len, ipath, cut[round + 1], round + 1 < 2);
    }
    assert_int_equal(want, 5); /* steps 1 and 3 */
    TS_OK(gpubp_close(r));
    free(idx);
}

static void test_operators(void **state)
{
    (void)state;
    const char *sets[] = {"bzip2/BP4/bzip2.bp", "bzip2/BP5/bzip2.bp", "codecs/BP5/lz4_shuffle.bp",
                          "codecs/BP4/zlib_shuffle.bp"};
    const char *names[] = {"bzip2", "bzip2", "blosc", "blosc"};
    for (int i = 0; i < 4; i++) {
        char p[4300], op[64];
        snprintf(p, sizeof p, "%s/%s", ts_golden_dir(), sets[i]);
        /* naming the operator needs no codec: a build without libbz2 names it too */
        gpubp_file *f = au_open(p, GPUBP_MODE_READ_RANDOM_ACCESS);
        TS_OK(gpubp_variable_block_operator(au_inq(f, "smooth"), 1, 0, op, sizeof op));
        assert_string_equal(op, names[i]);
        TS_ERR(gpubp_variable_block_operator(au_inq(f, "smooth"), 2, 0, op, sizeof op),
               GPUBP_ERR_INVALID_STEP);
        TS_ERR(gpubp_variable_block_operator(au_inq(f, "smooth"), 0, 0, op, 0),
               GPUBP_ERR_INVALID_ARG);
        TS_ERR(gpubp_variable_block_operator(au_inq(f, "smooth"), 0, 0, NULL, 8),
               GPUBP_ERR_INVALID_ARG);
        TS_OK(gpubp_close(f));
    }
    /* an ADIOS2 plugin operator (tests/golden/generators/xor_plugin.cpp): named by its header,
     * BP5 and BP4; its data is refused with CODEC naming it, the other variable reads */
    const char *plug[] = {"plugin5.bp", "plugin4.bp"};
    for (int i = 0; i < 2; i++) {
        char op[64];
        gpubp_file *f = au_open(gold("selsteps", plug[i]), GPUBP_MODE_READ_RANDOM_ACCESS);
        gpubp_variable *x = au_inq(f, "x"), *pl = au_inq(f, "plain");
        TS_OK(gpubp_variable_block_operator(x, 1, 0, op, sizeof op));
        assert_string_equal(op, "xorop(XorOp)");
        TS_ERR(gpubp_variable_block_operator(x, 1, 0, op, 12), GPUBP_ERR_INVALID_ARG);
        TS_OK(gpubp_variable_block_operator(pl, 1, 0, op, sizeof op));
        assert_string_equal(op, "");
        double d[8];
        TS_ERR(gpubp_get(f, x, d, GPUBP_SYNC), GPUBP_ERR_CODEC);
        assert_non_null(strstr(gpubp_last_error(), "'xorop(XorOp)'"));
        int32_t p3[3];
        TS_OK(gpubp_set_step_selection(pl, 1, 1));
        TS_OK(gpubp_get(f, pl, p3, GPUBP_SYNC));
        assert_true(p3[0] == 1 && p3[1] == 2 && p3[2] == 3);
        TS_OK(gpubp_close(f));
    }
    TS_ERR(gpubp_variable_block_operator(NULL, 0, 0, NULL, 0), GPUBP_ERR_INVALID_ARG);
    /* write mode */
    gpubp_file *w = ts_open(ts_path("sel_w.bp"), GPUBP_MODE_WRITE, NULL);
    size_t shape[1] = {2};
    char op[8];
    gpubp_variable *v = ts_define(w, "x", GPUBP_TYPE_INT32, 1, shape, NULL);
    TS_ERR(gpubp_variable_block_operator(v, 0, 0, op, sizeof op), GPUBP_ERR_WRONG_MODE);
    TS_OK(gpubp_close(w));
}

static void test_bad_params(void **state)
{
    (void)state;
    const char *p = gold("selsteps", "steps5.bp");
    const char *bad[] = {"select_steps=x",     "select_steps=1:3:0", "select_steps=-1",
                         "select_steps=1:2:3:4", "select_steps=:3",   "select_steps=n",
                         "select_steps=1:x",   "select_steps=+1",    "select_steps=1:n:n",
                         "select_steps=18446744073709551616", "ignore_flatten=maybe"};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        gpubp_file *f = NULL;
        TS_ERR(gpubp_open(&f, p, GPUBP_MODE_READ_RANDOM_ACCESS, bad[i]), GPUBP_ERR_PARAM);
        assert_null(f);
        assert_non_null(strstr(gpubp_last_error(), i + 1 < sizeof bad / sizeof *bad ?
                                                       "select_steps" : "ignore_flatten"));
    }
    char many[1024] = "select_steps=";
    for (int i = 0; i < 65; i++)
        snprintf(many + strlen(many), sizeof many - strlen(many), "%d ", i);
    gpubp_file *f = NULL;
    TS_ERR(gpubp_open(&f, p, GPUBP_MODE_READ_RANDOM_ACCESS, many), GPUBP_ERR_PARAM);
    assert_non_null(strstr(gpubp_last_error(), "more than 64 rules"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_golden_steps), cmocka_unit_test(test_flatten),
        cmocka_unit_test(test_ours_and_bp3), cmocka_unit_test(test_live),
        cmocka_unit_test(test_live_bp5),
        cmocka_unit_test(test_operators),
        cmocka_unit_test(test_bad_params)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}
