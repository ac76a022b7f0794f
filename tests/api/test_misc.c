/* Less common sequences: memory selections on local arrays and deferred puts, block selections in
 * READ mode, variables defined but never put, two puts of one box, values put twice, attributes
 * defined between steps, gets without a step selection. */
#include "support/api_util.h"

/* ghost cells around local-array blocks, put deferred; get into a larger buffer too */
static void test_memory_selection_local_deferred(void **state)
{
    (void)state;
    const char *path = ts_path("memsel_local.bp");
    gpubp_file *w = au_open(path, GPUBP_MODE_WRITE);
    size_t c[2] = {2, 3};
    gpubp_variable *v = ts_define(w, "l", GPUBP_TYPE_INT16, 2, NULL, c);
    size_t mst[2] = {1, 2}, mct[2] = {4, 6};
    TS_OK(gpubp_set_memory_selection(v, 2, mst, mct));
    int16_t bufs[2][24];
    TS_OK(gpubp_begin_step(w));
    for (int b = 0; b < 2; b++) {
        for (int i = 0; i < 24; i++) bufs[b][i] = -1;
        for (int i = 0; i < 2; i++)
            for (int j = 0; j < 3; j++) bufs[b][(i + 1) * 6 + j + 2] = (int16_t)(100 * b + 10 * i + j);
        TS_OK(gpubp_put(w, v, bufs[b], GPUBP_DEFERRED));
    }
    TS_OK(gpubp_end_step(w));
    gpubp_file *r = au_reopen(w, path, GPUBP_MODE_READ_RANDOM_ACCESS);
    v = au_inq(r, "l");
    for (int b = 0; b < 2; b++) {
        TS_OK(gpubp_set_block_selection(v, (size_t)b));
        int16_t got[6];
        TS_OK(gpubp_get(r, v, got, GPUBP_SYNC));
        for (int i = 0; i < 6; i++) assert_int_equal(got[i], 100 * b + 10 * (i / 3) + i % 3);
        int16_t big[3 * 5];
        for (int i = 0; i < 15; i++) big[i] = 7;
        size_t gst[2] = {1, 1}, gct[2] = {3, 5};
        TS_OK(gpubp_set_memory_selection(v, 2, gst, gct));
        TS_OK(gpubp_get(r, v, big, GPUBP_SYNC));
        for (int i = 0; i < 3; i++)
            for (int j = 0; j < 5; j++) {
                int inside = i >= 1 && j >= 1 && j < 4;
                assert_int_equal(big[i * 5 + j], inside ? 100 * b + 10 * (i - 1) + (j - 1) : 7);
            }
        TS_OK(gpubp_set_memory_selection(v, 0, NULL, NULL));
    }
    TS_OK(gpubp_close(r));
}

/* READ mode: block ids count within the current step. */
static void test_block_selection_read_mode(void **state)
{
    (void)state;
    const char *path = ts_path("blk_read.bp");
    gpubp_file *w = au_open(path, GPUBP_MODE_WRITE);
    size_t c[1] = {2};
    gpubp_variable *v = ts_define(w, "l", GPUBP_TYPE_UINT64, 1, NULL, c);
    for (uint64_t s = 0; s < 3; s++) {
        TS_OK(gpubp_begin_step(w));
        for (uint64_t b = 0; b <= s; b++) {
            uint64_t d[2] = {s * 100 + b * 10, s * 100 + b * 10 + 1};
            TS_OK(gpubp_put(w, v, d, GPUBP_SYNC));
        }
        TS_OK(gpubp_end_step(w));
    }
    gpubp_file *r = au_reopen(w, path, GPUBP_MODE_READ);
    for (uint64_t s = 0; s < 3; s++) {
        TS_OK(gpubp_begin_step(r));
        v = au_inq(r, "l");
        size_t nb = 0;
        TS_OK(gpubp_variable_blocks(v, 0, &nb));
        assert_int_equal(nb, s + 1);
        for (size_t b = 0; b < nb; b++) {
            TS_OK(gpubp_set_block_selection(v, b));
            uint64_t d[2] = {0, 0};
            TS_OK(gpubp_get(r, v, d, GPUBP_SYNC));
            assert_int_equal(d[0], s * 100 + b * 10);
            assert_int_equal(d[1], s * 100 + b * 10 + 1);
        }
        int rc = gpubp_set_block_selection(v, nb);
        if (rc == GPUBP_OK) {
            uint64_t d[2];
            rc = gpubp_get(r, v, d, GPUBP_SYNC);
        }
        TS_ERR(rc, GPUBP_ERR_INVALID_SELECTION);
        TS_OK(gpubp_end_step(r));
    }
    TS_OK(gpubp_close(r));
}

/* A variable defined but never put is not in the file. */
static void test_defined_never_put(void **state)
{
    (void)state;
    const char *path = ts_path("neverput.bp");
    gpubp_file *w = au_open(path, GPUBP_MODE_WRITE);
    gpubp_variable *v = ts_define(w, "used", GPUBP_TYPE_INT32, 0, NULL, NULL);
    size_t sh[1] = {4};
    gpubp_variable *u = ts_define(w, "unused", GPUBP_TYPE_DOUBLE, 1, sh, NULL);
    int32_t x = 1;
    ts_put_step(w, v, &x, GPUBP_SYNC);
    gpubp_file *r = au_reopen(w, path, GPUBP_MODE_READ_RANDOM_ACCESS);
    size_t n = 0;
    const char *const *names;
    TS_OK(gpubp_available_variables(r, &n, &names));
    assert_int_equal(n, 1);
    assert_string_equal(names[0], "used");
    TS_ERR(gpubp_inquire_variable(&u, r, "unused"), GPUBP_ERR_NOT_FOUND);
    TS_OK(gpubp_close(r));
}

/* The same box put twice in a step: two blocks (ADIOS2 keeps both). */
static void test_same_box_twice(void **state)
{
    (void)state;
    const char *path = ts_path("twice_box.bp");
    gpubp_file *w = au_open(path, GPUBP_MODE_WRITE);
    size_t sh[1] = {4};
    gpubp_variable *v = ts_define(w, "a", GPUBP_TYPE_INT32, 1, sh, NULL);
    int32_t a[4] = {1, 2, 3, 4}, b[4] = {5, 6, 7, 8};
    TS_OK(gpubp_begin_step(w));
    TS_OK(gpubp_put(w, v, a, GPUBP_SYNC));
    TS_OK(gpubp_put(w, v, b, GPUBP_SYNC));
    TS_OK(gpubp_end_step(w));
    gpubp_file *r = au_reopen(w, path, GPUBP_MODE_READ_RANDOM_ACCESS);
    v = au_inq(r, "a");
    size_t nb = 0;
    TS_OK(gpubp_variable_blocks(v, 0, &nb));
    assert_int_equal(nb, 2);
    int32_t got[4];
    TS_OK(gpubp_set_block_selection(v, 1));
    TS_OK(gpubp_get(r, v, got, GPUBP_SYNC));
    assert_memory_equal(got, b, sizeof b);
    /* block 0's own min/max; its data is not checked: ADIOS2 2.12 itself reads {5,6,7,8} for
     * a block selection of 0 here (the box of block 0 from every block, the last winning) */
    int32_t bmn, bmx;
    TS_OK(gpubp_variable_block_info(v, 0, 0, NULL, NULL, &bmn, &bmx));
    assert_int_equal(bmn, 1);
    assert_int_equal(bmx, 4);
    int32_t mn, mx;
    TS_OK(gpubp_variable_minmax(v, &mn, &mx)); /* block 1 is still selected */
    assert_int_equal(mn, 5);
    assert_int_equal(mx, 8);
    TS_OK(gpubp_close(r));
}

/* A global value put twice in a step: ADIOS2 reads the first block's value. */
static void test_value_put_twice(void **state)
{
    (void)state;
    const char *path = ts_path("value_twice.bp");
    gpubp_file *w = au_open(path, GPUBP_MODE_WRITE);
    gpubp_variable *v = ts_define(w, "n", GPUBP_TYPE_FLOAT, 0, NULL, NULL);
    float a = 1.5f, b = 2.5f;
    TS_OK(gpubp_begin_step(w));
    TS_OK(gpubp_put(w, v, &a, GPUBP_SYNC));
    TS_OK(gpubp_put(w, v, &b, GPUBP_SYNC));
    TS_OK(gpubp_end_step(w));
    gpubp_file *r = au_reopen(w, path, GPUBP_MODE_READ_RANDOM_ACCESS);
    v = au_inq(r, "n");
    float got = 0;
    TS_OK(gpubp_get(r, v, &got, GPUBP_SYNC));
    assert_true(got == 1.5f);
    au_var_steps(v, 1);
    TS_OK(gpubp_close(r));
}

/* An attribute defined after step 0 goes out with step 1. */
static void test_attribute_between_steps(void **state)
{
    (void)state;
    const char *path = ts_path("attr_later.bp");
    gpubp_file *w = au_open(path, GPUBP_MODE_WRITE);
    gpubp_variable *v = ts_define(w, "x", GPUBP_TYPE_INT8, 0, NULL, NULL);
    int8_t x = 1;
    ts_put_step(w, v, &x, GPUBP_SYNC);
    uint16_t later[3] = {1, 2, 65535};
    TS_OK(gpubp_define_attribute(w, "later", GPUBP_TYPE_UINT16, later, 3));
    ts_put_step(w, v, &x, GPUBP_SYNC);
    gpubp_file *r = au_reopen(w, path, GPUBP_MODE_READ_RANDOM_ACCESS);
    gpubp_type t;
    size_t n;
    int arr;
    TS_OK(gpubp_inquire_attribute(r, "later", &t, &n, &arr));
    assert_int_equal(t, GPUBP_TYPE_UINT16);
    assert_int_equal(n, 3);
    uint16_t got[3];
    TS_OK(gpubp_attribute_data(r, "later", got));
    assert_memory_equal(got, later, sizeof later);
    TS_OK(gpubp_close(r));
    /* READ mode: present by the second step at the latest */
    r = au_open(path, GPUBP_MODE_READ);
    TS_OK(gpubp_begin_step(r));
    TS_OK(gpubp_end_step(r));
    TS_OK(gpubp_begin_step(r));
    TS_OK(gpubp_attribute_data(r, "later", got));
    assert_memory_equal(got, later, sizeof later);
    TS_OK(gpubp_end_step(r));
    TS_OK(gpubp_close(r));
}

/* Random access without a step selection: shape of the last step, a get reads step 0 with
 * step 0's shape (header, gpubp_variable_shape). */
static void test_get_without_step_selection(void **state)
{
    (void)state;
    const char *path = ts_path("nostepsel.bp");
    gpubp_file *w = au_open(path, GPUBP_MODE_WRITE);
    size_t sh[1] = {2}, st[1] = {0};
    gpubp_variable *v = ts_define(w, "g", GPUBP_TYPE_INT32, 1, sh, NULL);
    for (int32_t s = 0; s < 3; s++) {
        size_t n[1] = {(size_t)(2 + s)};
        int32_t d[4];
        for (int i = 0; i < 4; i++) d[i] = 10 * s + i;
        TS_OK(gpubp_begin_step(w));
        TS_OK(gpubp_set_shape(v, 1, n));
        TS_OK(gpubp_set_selection(v, 1, st, n));
        TS_OK(gpubp_put(w, v, d, GPUBP_SYNC));
        TS_OK(gpubp_end_step(w));
    }
    gpubp_file *r = au_reopen(w, path, GPUBP_MODE_READ_RANDOM_ACCESS);
    v = au_inq(r, "g");
    size_t dims[1] = {0}, bytes = 0;
    TS_OK(gpubp_variable_shape(v, GPUBP_MEM_HOST, dims));
    assert_int_equal(dims[0], 4);
    TS_OK(gpubp_selection_size(v, &bytes));
    assert_int_equal(bytes, 2 * sizeof(int32_t));
    int32_t got[4] = {-1, -1, -1, -1};
    TS_OK(gpubp_get(r, v, got, GPUBP_SYNC));
    assert_int_equal(got[0], 0);
    assert_int_equal(got[1], 1);
    assert_int_equal(got[2], -1);
    TS_OK(gpubp_close(r));
}

/* Deferred gets still pending at close: no crash, no leak (ASan), nothing written after close. */
static void test_pending_deferred_get_at_close(void **state)
{
    (void)state;
    const char *path = ts_path("pending.bp");
    gpubp_file *w = au_open(path, GPUBP_MODE_WRITE);
    size_t sh[1] = {64};
    gpubp_variable *v = ts_define(w, "a", GPUBP_TYPE_DOUBLE, 1, sh, NULL);
    double d[64];
    for (int i = 0; i < 64; i++) d[i] = i;
    for (int s = 0; s < 2; s++) ts_put_step(w, v, d, GPUBP_DEFERRED);
    TS_OK(gpubp_close(w));
    double *buf = malloc(2 * 64 * sizeof *buf);
    gpubp_file *r = au_open(path, GPUBP_MODE_READ_RANDOM_ACCESS);
    v = au_inq(r, "a");
    TS_OK(gpubp_set_step_selection(v, 0, 2));
    TS_OK(gpubp_get(r, v, buf, GPUBP_DEFERRED));
    TS_OK(gpubp_close(r));
    r = au_open(path, GPUBP_MODE_READ);
    TS_OK(gpubp_begin_step(r));
    v = au_inq(r, "a");
    TS_OK(gpubp_get(r, v, buf, GPUBP_DEFERRED));
    TS_OK(gpubp_close(r)); /* a step is open, a get pending */
    free(buf);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_memory_selection_local_deferred),
        cmocka_unit_test(test_block_selection_read_mode),
        cmocka_unit_test(test_defined_never_put),
        cmocka_unit_test(test_same_box_twice),
        cmocka_unit_test(test_value_put_twice),
        cmocka_unit_test(test_attribute_between_steps),
        cmocka_unit_test(test_get_without_step_selection),
        cmocka_unit_test(test_pending_deferred_get_at_close),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
