/* Selections: sub-boxes crossing block boundaries (1-D, 2-D, 3-D), block selections, step
 * selections (the step is the slowest dimension), memory selections (ghost cells) on put and get. */
#include "support/api_util.h"

/* value of element (i, j, k) at step s */
static double val3(size_t s, size_t i, size_t j, size_t k)
{
    return (double)(10000 * s + 100 * i + 10 * j + k) + 0.25;
}

/* Writes a 3-D (d0 x d1 x d2) double array per step, decomposed into b0 x b1 x b2 blocks
 * (each dimension split into equal parts), `nsteps` steps. 1-D and 2-D by setting the leading
 * dims to 1 and using ndims < 3: the logical dims are the last `nd` of (d0, d1, d2). */
static void write_blocked(const char *path, size_t nd, const size_t *dims, const size_t *nb,
                          size_t nsteps)
{
    gpubp_file *w = au_open(path, GPUBP_MODE_WRITE);
    gpubp_variable *v;
    size_t zero[3] = {0, 0, 0}, cnt[3];
    for (size_t d = 0; d < nd; d++) cnt[d] = dims[d] / nb[d];
    TS_OK(gpubp_define_variable(&v, w, "a", GPUBP_TYPE_DOUBLE, nd, dims, zero, cnt));
    size_t nblocks = ts_prod(nd, nb);
    for (size_t s = 0; s < nsteps; s++) {
        TS_OK(gpubp_begin_step(w));
        for (size_t b = 0; b < nblocks; b++) {
            size_t bi[3] = {0, 0, 0}, rem = b, st[3] = {0, 0, 0};
            for (size_t d = nd; d-- > 0;) {
                bi[d] = rem % nb[d];
                rem /= nb[d];
                st[d] = bi[d] * cnt[d];
            }
            size_t n = ts_prod(nd, cnt);
            double *buf = malloc(n * sizeof *buf);
            assert_non_null(buf);
            size_t c3[3] = {1, 1, 1}, s3[3] = {0, 0, 0};
            for (size_t d = 0; d < nd; d++) {
                c3[3 - nd + d] = cnt[d];
                s3[3 - nd + d] = st[d];
            }
            size_t x = 0;
            for (size_t i = 0; i < c3[0]; i++)
                for (size_t j = 0; j < c3[1]; j++)
                    for (size_t k = 0; k < c3[2]; k++)
                        buf[x++] = val3(s, s3[0] + i, s3[1] + j, s3[2] + k);
            TS_OK(gpubp_set_selection(v, nd, st, cnt));
            TS_OK(gpubp_put(w, v, buf, GPUBP_SYNC));
            free(buf);
        }
        TS_OK(gpubp_end_step(w));
    }
    TS_OK(gpubp_close(w));
    AU_CHECK(path);
}

/* reads box (start, count) of `nd` dims from step s and checks every element */
static void check_box(gpubp_file *r, gpubp_variable *v, size_t nd, size_t s, const size_t *start,
                      const size_t *count)
{
    TS_OK(gpubp_set_step_selection(v, s, 1));
    TS_OK(gpubp_set_selection(v, nd, start, count));
    size_t n = ts_prod(nd, count), bytes = 0;
    TS_OK(gpubp_selection_size(v, &bytes));
    assert_int_equal(bytes, n * sizeof(double));
    double *got = malloc((n + 1) * sizeof *got);
    assert_non_null(got);
    got[n] = -12345.0;
    TS_OK(gpubp_get(r, v, got, GPUBP_SYNC));
    assert_true(got[n] == -12345.0);
    size_t c3[3] = {1, 1, 1}, s3[3] = {0, 0, 0};
    for (size_t d = 0; d < nd; d++) {
        c3[3 - nd + d] = count[d];
        s3[3 - nd + d] = start[d];
    }
    size_t x = 0;
    for (size_t i = 0; i < c3[0]; i++)
        for (size_t j = 0; j < c3[1]; j++)
            for (size_t k = 0; k < c3[2]; k++, x++) {
                double want = val3(s, s3[0] + i, s3[1] + j, s3[2] + k);
                if (got[x] != want)
                    print_error("element %zu (%zu,%zu,%zu) step %zu: got %g want %g\n", x, i, j,
                                k, s, got[x], want);
                assert_true(got[x] == want);
            }
    free(got);
}

static void test_box_1d_crossing_blocks(void **state)
{
    (void)state;
    const char *path = ts_path("sel1d.bp");
    size_t dims[1] = {20}, nb[1] = {4};
    write_blocked(path, 1, dims, nb, 2);
    gpubp_file *r = au_open(path, GPUBP_MODE_READ_RANDOM_ACCESS);
    gpubp_variable *v = au_inq(r, "a");
    size_t st[1] = {3}, ct[1] = {11}; /* blocks 0,1,2 */
    check_box(r, v, 1, 1, st, ct);
    st[0] = 5; ct[0] = 5; /* exactly block 1 */
    check_box(r, v, 1, 0, st, ct);
    st[0] = 19; ct[0] = 1; /* last element */
    check_box(r, v, 1, 1, st, ct);
    st[0] = 0; ct[0] = 20; /* everything */
    check_box(r, v, 1, 0, st, ct);
    TS_OK(gpubp_close(r));
}

static void test_box_2d_crossing_blocks(void **state)
{
    (void)state;
    const char *path = ts_path("sel2d.bp");
    size_t dims[2] = {6, 8}, nb[2] = {2, 2};
    write_blocked(path, 2, dims, nb, 2);
    gpubp_file *r = au_open(path, GPUBP_MODE_READ_RANDOM_ACCESS);
    gpubp_variable *v = au_inq(r, "a");
    size_t st[2] = {1, 2}, ct[2] = {4, 5}; /* all four blocks */
    check_box(r, v, 2, 0, st, ct);
    st[0] = 2; st[1] = 3; ct[0] = 2; ct[1] = 2; /* the corner of four blocks */
    check_box(r, v, 2, 1, st, ct);
    st[0] = 0; st[1] = 3; ct[0] = 6; ct[1] = 2; /* a column band */
    check_box(r, v, 2, 1, st, ct);
    st[0] = 5; st[1] = 0; ct[0] = 1; ct[1] = 8; /* last row */
    check_box(r, v, 2, 0, st, ct);
    TS_OK(gpubp_close(r));
}

static void test_box_3d_crossing_blocks(void **state)
{
    (void)state;
    const char *path = ts_path("sel3d.bp");
    size_t dims[3] = {4, 4, 6}, nb[3] = {2, 2, 2};
    write_blocked(path, 3, dims, nb, 2);
    gpubp_file *r = au_open(path, GPUBP_MODE_READ_RANDOM_ACCESS);
    gpubp_variable *v = au_inq(r, "a");
    size_t nbk = 0;
    TS_OK(gpubp_variable_blocks(v, 0, &nbk));
    assert_int_equal(nbk, 8);
    size_t st[3] = {1, 1, 2}, ct[3] = {2, 3, 3}; /* eight blocks */
    check_box(r, v, 3, 1, st, ct);
    st[0] = 0; st[1] = 0; st[2] = 0; ct[0] = 4; ct[1] = 4; ct[2] = 6;
    check_box(r, v, 3, 0, st, ct);
    st[0] = 3; st[1] = 1; st[2] = 5; ct[0] = 1; ct[1] = 2; ct[2] = 1;
    check_box(r, v, 3, 1, st, ct);
    TS_OK(gpubp_close(r));
}

/* The same 2-D box read in READ mode (the selection applies to the current step). */
static void test_box_read_mode(void **state)
{
    (void)state;
    const char *path = ts_path("sel2d_rd.bp");
    size_t dims[2] = {6, 8}, nb[2] = {3, 2};
    write_blocked(path, 2, dims, nb, 3);
    gpubp_file *r = au_open(path, GPUBP_MODE_READ);
    for (size_t s = 0; s < 3; s++) {
        TS_OK(gpubp_begin_step(r));
        gpubp_variable *v = au_inq(r, "a");
        size_t st[2] = {1, 3}, ct[2] = {4, 3};
        TS_OK(gpubp_set_selection(v, 2, st, ct));
        double got[12];
        TS_OK(gpubp_get(r, v, got, GPUBP_SYNC));
        for (size_t i = 0; i < 4; i++)
            for (size_t j = 0; j < 3; j++) assert_true(got[i * 3 + j] == val3(s, 0, 1 + i, 3 + j));
        TS_OK(gpubp_end_step(r));
    }
    assert_int_equal(gpubp_begin_step(r), GPUBP_END_OF_STREAM);
    TS_OK(gpubp_close(r));
}

/* A block selection on a global array with no box limits the get to that block. */
static void test_block_selection_global(void **state)
{
    (void)state;
    const char *path = ts_path("blocksel.bp");
    size_t dims[2] = {6, 8}, nb[2] = {2, 2};
    write_blocked(path, 2, dims, nb, 1);
    gpubp_file *r = au_open(path, GPUBP_MODE_READ_RANDOM_ACCESS);
    gpubp_variable *v = au_inq(r, "a");
    for (size_t b = 0; b < 4; b++) {
        size_t st[2], ct[2], bytes = 0;
        TS_OK(gpubp_variable_block_info(v, 0, b, st, ct, NULL, NULL));
        assert_int_equal(st[0], (b / 2) * 3);
        assert_int_equal(st[1], (b % 2) * 4);
        assert_int_equal(ct[0], 3);
        assert_int_equal(ct[1], 4);
        TS_OK(gpubp_set_block_selection(v, b));
        TS_OK(gpubp_selection_size(v, &bytes));
        assert_int_equal(bytes, 12 * sizeof(double));
        double got[12];
        TS_OK(gpubp_get(r, v, got, GPUBP_SYNC));
        for (size_t i = 0; i < 3; i++)
            for (size_t j = 0; j < 4; j++)
                assert_true(got[i * 4 + j] == val3(0, 0, st[0] + i, st[1] + j));
    }
    TS_OK(gpubp_close(r));
}

/* Local array: a box inside the selected block (start NULL = zeros, then an offset box). */
static void test_block_selection_local_subbox(void **state)
{
    (void)state;
    const char *path = ts_path("localsub.bp");
    gpubp_file *w = au_open(path, GPUBP_MODE_WRITE);
    gpubp_variable *v;
    size_t c[2] = {3, 4};
    TS_OK(gpubp_define_variable(&v, w, "loc", GPUBP_TYPE_INT32, 2, NULL, NULL, c));
    TS_OK(gpubp_begin_step(w));
    for (int b = 0; b < 3; b++) {
        int32_t buf[12];
        for (int i = 0; i < 12; i++) buf[i] = 100 * b + i;
        TS_OK(gpubp_put(w, v, buf, GPUBP_SYNC));
    }
    TS_OK(gpubp_end_step(w));
    gpubp_file *r = au_reopen(w, path, GPUBP_MODE_READ_RANDOM_ACCESS);
    v = au_inq(r, "loc");
    size_t nb = 0;
    TS_OK(gpubp_variable_blocks(v, 0, &nb));
    assert_int_equal(nb, 3);
    TS_OK(gpubp_set_block_selection(v, 2));
    size_t cnt[2] = {2, 3};
    TS_OK(gpubp_set_selection(v, 2, NULL, cnt));
    int32_t got[12];
    TS_OK(gpubp_get(r, v, got, GPUBP_SYNC));
    for (int i = 0; i < 2; i++)
        for (int j = 0; j < 3; j++) assert_int_equal(got[i * 3 + j], 200 + i * 4 + j);
    size_t st[2] = {1, 1};
    TS_OK(gpubp_set_block_selection(v, 1));
    TS_OK(gpubp_set_selection(v, 2, st, cnt));
    TS_OK(gpubp_get(r, v, got, GPUBP_SYNC));
    for (int i = 0; i < 2; i++)
        for (int j = 0; j < 3; j++) assert_int_equal(got[i * 3 + j], 100 + (i + 1) * 4 + j + 1);
    TS_OK(gpubp_close(r));
}

/* A step selection of n > 1 steps: the step is the slowest dimension of the buffer. */
static void test_step_selection_multi(void **state)
{
    (void)state;
    const char *path = ts_path("stepsel.bp");
    size_t dims[2] = {4, 6}, nb[2] = {2, 1};
    write_blocked(path, 2, dims, nb, 5);
    gpubp_file *r = au_open(path, GPUBP_MODE_READ_RANDOM_ACCESS);
    gpubp_variable *v = au_inq(r, "a");
    size_t ns = 0;
    TS_OK(gpubp_variable_steps(v, &ns));
    assert_int_equal(ns, 5);
    TS_OK(gpubp_set_step_selection(v, 1, 3));
    size_t st[2] = {1, 2}, ct[2] = {2, 3}, bytes = 0;
    TS_OK(gpubp_set_selection(v, 2, st, ct));
    TS_OK(gpubp_selection_size(v, &bytes));
    assert_int_equal(bytes, 3 * 6 * sizeof(double));
    double got[18];
    TS_OK(gpubp_get(r, v, got, GPUBP_SYNC));
    for (size_t s = 0; s < 3; s++)
        for (size_t i = 0; i < 2; i++)
            for (size_t j = 0; j < 3; j++)
                assert_true(got[s * 6 + i * 3 + j] == val3(1 + s, 0, 1 + i, 2 + j));
    /* the whole shape, all steps */
    TS_OK(gpubp_set_step_selection(v, 0, 5));
    size_t z[2] = {0, 0};
    TS_OK(gpubp_set_selection(v, 2, z, dims));
    double all[5 * 24];
    TS_OK(gpubp_get(r, v, all, GPUBP_SYNC));
    for (size_t s = 0; s < 5; s++)
        for (size_t i = 0; i < 4; i++)
            for (size_t j = 0; j < 6; j++) assert_true(all[s * 24 + i * 6 + j] == val3(s, 0, i, j));
    TS_OK(gpubp_close(r));
}

/* Step selection on a local array block: block b of steps [1, 3). */
static void test_step_selection_local(void **state)
{
    (void)state;
    const char *path = ts_path("stepsel_local.bp");
    gpubp_file *w = au_open(path, GPUBP_MODE_WRITE);
    gpubp_variable *v;
    size_t c[1] = {4};
    TS_OK(gpubp_define_variable(&v, w, "l", GPUBP_TYPE_UINT32, 1, NULL, NULL, c));
    for (uint32_t s = 0; s < 3; s++) {
        TS_OK(gpubp_begin_step(w));
        for (uint32_t b = 0; b < 2; b++) {
            uint32_t buf[4];
            for (uint32_t i = 0; i < 4; i++) buf[i] = 1000 * s + 100 * b + i;
            TS_OK(gpubp_put(w, v, buf, GPUBP_SYNC));
        }
        TS_OK(gpubp_end_step(w));
    }
    gpubp_file *r = au_reopen(w, path, GPUBP_MODE_READ_RANDOM_ACCESS);
    v = au_inq(r, "l");
    TS_OK(gpubp_set_step_selection(v, 1, 2));
    TS_OK(gpubp_set_block_selection(v, 1));
    uint32_t got[8];
    TS_OK(gpubp_get(r, v, got, GPUBP_SYNC));
    for (uint32_t s = 0; s < 2; s++)
        for (uint32_t i = 0; i < 4; i++) assert_int_equal(got[s * 4 + i], 1000 * (s + 1) + 100 + i);
    TS_OK(gpubp_close(r));
}

/* Memory selection on put: the user's buffer has ghost cells around the block. */
static void test_memory_selection_put(void **state)
{
    (void)state;
    const char *path = ts_path("memsel_put.bp");
    gpubp_file *w = au_open(path, GPUBP_MODE_WRITE);
    gpubp_variable *v;
    size_t shape[2] = {4, 6}, st[2] = {0, 0}, ct[2] = {2, 6};
    TS_OK(gpubp_define_variable(&v, w, "f", GPUBP_TYPE_FLOAT, 2, shape, st, ct));
    TS_OK(gpubp_begin_step(w));
    /* buffer 4 x 8 with one ghost cell on each side of a 2 x 6 interior */
    size_t mst[2] = {1, 1}, mct[2] = {4, 8};
    TS_OK(gpubp_set_memory_selection(v, 2, mst, mct));
    for (size_t b = 0; b < 2; b++) {
        float buf[32];
        for (size_t i = 0; i < 32; i++) buf[i] = -1.0f; /* ghosts */
        for (size_t i = 0; i < 2; i++)
            for (size_t j = 0; j < 6; j++) buf[(i + 1) * 8 + j + 1] = (float)(10 * (2 * b + i) + j);
        size_t bst[2] = {2 * b, 0};
        TS_OK(gpubp_set_selection(v, 2, bst, ct));
        TS_OK(gpubp_put(w, v, buf, GPUBP_SYNC));
    }
    TS_OK(gpubp_end_step(w));
    gpubp_file *r = au_reopen(w, path, GPUBP_MODE_READ_RANDOM_ACCESS);
    v = au_inq(r, "f");
    float got[24];
    TS_OK(gpubp_get(r, v, got, GPUBP_SYNC));
    for (size_t i = 0; i < 4; i++)
        for (size_t j = 0; j < 6; j++) assert_true(got[i * 6 + j] == (float)(10 * i + j));
    float mn = 0, mx = 0;
    TS_OK(gpubp_variable_minmax(v, &mn, &mx)); /* ghosts (-1) are not part of the data */
    assert_true(mn == 0.0f);
    assert_true(mx == 35.0f);
    TS_OK(gpubp_close(r));
}

/* Memory selection on get: only the box inside the larger buffer is written. */
static void test_memory_selection_get(void **state)
{
    (void)state;
    const char *path = ts_path("memsel_get.bp");
    size_t dims[3] = {4, 4, 6}, nb[3] = {2, 1, 2};
    write_blocked(path, 3, dims, nb, 1);
    gpubp_file *r = au_open(path, GPUBP_MODE_READ_RANDOM_ACCESS);
    gpubp_variable *v = au_inq(r, "a");
    size_t st[3] = {1, 0, 2}, ct[3] = {2, 3, 3};
    size_t mst[3] = {1, 2, 0}, mct[3] = {4, 5, 4};
    TS_OK(gpubp_set_selection(v, 3, st, ct));
    TS_OK(gpubp_set_memory_selection(v, 3, mst, mct));
    double buf[80];
    for (size_t i = 0; i < 80; i++) buf[i] = -7.0;
    TS_OK(gpubp_get(r, v, buf, GPUBP_SYNC));
    for (size_t i = 0; i < 4; i++)
        for (size_t j = 0; j < 5; j++)
            for (size_t k = 0; k < 4; k++) {
                double g = buf[(i * 5 + j) * 4 + k];
                int inside = i >= 1 && i < 3 && j >= 2 && j < 5 && k < 3;
                if (inside)
                    assert_true(g == val3(0, st[0] + i - 1, st[1] + j - 2, st[2] + k));
                else
                    assert_true(g == -7.0);
            }
    /* ndims 0 clears it: the next get is dense again */
    TS_OK(gpubp_set_memory_selection(v, 0, NULL, NULL));
    double dense[18];
    TS_OK(gpubp_get(r, v, dense, GPUBP_SYNC));
    for (size_t i = 0; i < 2; i++)
        for (size_t j = 0; j < 3; j++)
            for (size_t k = 0; k < 3; k++)
                assert_true(dense[(i * 3 + j) * 3 + k] == val3(0, 1 + i, j, 2 + k));
    TS_OK(gpubp_close(r));
}

/* gpubp_variable_minmax follows the step and block selections. */
static void test_minmax_selections(void **state)
{
    (void)state;
    const char *path = ts_path("minmax.bp");
    size_t dims[1] = {12}, nb[1] = {3};
    write_blocked(path, 1, dims, nb, 3);
    gpubp_file *r = au_open(path, GPUBP_MODE_READ_RANDOM_ACCESS);
    gpubp_variable *v = au_inq(r, "a");
    double mn = 0, mx = 0;
    TS_OK(gpubp_variable_minmax(v, &mn, &mx)); /* all steps */
    assert_true(mn == val3(0, 0, 0, 0));
    assert_true(mx == val3(2, 0, 0, 11));
    TS_OK(gpubp_set_step_selection(v, 1, 1));
    TS_OK(gpubp_variable_minmax(v, &mn, &mx));
    assert_true(mn == val3(1, 0, 0, 0));
    assert_true(mx == val3(1, 0, 0, 11));
    TS_OK(gpubp_set_block_selection(v, 1));
    TS_OK(gpubp_variable_minmax(v, &mn, NULL));
    TS_OK(gpubp_variable_minmax(v, NULL, &mx));
    assert_true(mn == val3(1, 0, 0, 4));
    assert_true(mx == val3(1, 0, 0, 7));
    for (size_t s = 0; s < 3; s++)
        for (size_t b = 0; b < 3; b++) {
            TS_OK(gpubp_variable_block_info(v, s, b, NULL, NULL, &mn, &mx));
            assert_true(mn == val3(s, 0, 0, 4 * b));
            assert_true(mx == val3(s, 0, 0, 4 * b + 3));
        }
    TS_OK(gpubp_close(r));
    /* READ mode: the current step */
    r = au_open(path, GPUBP_MODE_READ);
    for (size_t s = 0; s < 3; s++) {
        TS_OK(gpubp_begin_step(r));
        v = au_inq(r, "a");
        TS_OK(gpubp_variable_minmax(v, &mn, &mx));
        assert_true(mn == val3(s, 0, 0, 0));
        assert_true(mx == val3(s, 0, 0, 11));
        size_t nbk = 0;
        TS_OK(gpubp_variable_blocks(v, 0, &nbk));
        assert_int_equal(nbk, 3);
        TS_OK(gpubp_end_step(r));
    }
    TS_OK(gpubp_close(r));
}

/* Complex min/max: compared by modulus, as ADIOS2. */
static void test_minmax_complex(void **state)
{
    (void)state;
    const char *path = ts_path("cminmax.bp");
    size_t shape[1] = {4};
    double z[8] = {3, 4, /* |5| */ -0.5, 0.5, /* smallest */ 0, -7, /* largest */ 6, 0};
    au_write_one(path, GPUBP_MODE_WRITE, "z", GPUBP_TYPE_DOUBLE_COMPLEX, 1, shape, z);
    AU_CHECK(path);
    gpubp_file *r = au_open(path, GPUBP_MODE_READ_RANDOM_ACCESS);
    gpubp_variable *v = au_inq(r, "z");
    double mn[2], mx[2];
    TS_OK(gpubp_variable_minmax(v, mn, mx));
    assert_true(mn[0] == -0.5 && mn[1] == 0.5);
    assert_true(mx[0] == 0 && mx[1] == -7);
    TS_OK(gpubp_close(r));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_box_1d_crossing_blocks),
        cmocka_unit_test(test_box_2d_crossing_blocks),
        cmocka_unit_test(test_box_3d_crossing_blocks),
        cmocka_unit_test(test_box_read_mode),
        cmocka_unit_test(test_block_selection_global),
        cmocka_unit_test(test_block_selection_local_subbox),
        cmocka_unit_test(test_step_selection_multi),
        cmocka_unit_test(test_step_selection_local),
        cmocka_unit_test(test_memory_selection_put),
        cmocka_unit_test(test_memory_selection_get),
        cmocka_unit_test(test_minmax_selections),
        cmocka_unit_test(test_minmax_complex),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
