/* The reader's index (issue 9 design): sparse variables, dataset steps, values written several
 * times in a step, shapes per step, summaries against loaded blocks, many steps. */
#include "support/test_support.h"

#include <stdio.h>
#include <string.h>

static gpubp_file *open_w(const char *path)
{
    gpubp_file *f = NULL;
    TS_OK(gpubp_open(&f, path, GPUBP_MODE_WRITE, NULL));
    return f;
}

/* var "odd" only in odd steps; "n" written twice per step; "grow" changes shape every step */
static void write_sparse(const char *path, size_t steps)
{
    gpubp_file *w = open_w(path);
    gpubp_variable *odd, *n, *grow;
    size_t shape[1] = {4}, start[1] = {0};
    TS_OK(gpubp_define_variable(&odd, w, "odd", GPUBP_TYPE_INT32, 1, shape, start, shape));
    TS_OK(gpubp_define_variable(&n, w, "n", GPUBP_TYPE_INT64, 0, NULL, NULL, NULL));
    TS_OK(gpubp_define_variable(&grow, w, "grow", GPUBP_TYPE_DOUBLE, 1, shape, start, shape));
    for (size_t s = 0; s < steps; s++) {
        TS_OK(gpubp_begin_step(w));
        if (s % 2) {
            int32_t v[4] = {(int32_t)s, (int32_t)s + 1, (int32_t)s + 2, -(int32_t)s};
            TS_OK(gpubp_put(w, odd, v, GPUBP_SYNC));
        }
        int64_t a = (int64_t)s * 10, b = (int64_t)s * 10 + 1;
        TS_OK(gpubp_put(w, n, &a, GPUBP_SYNC));
        TS_OK(gpubp_put(w, n, &b, GPUBP_SYNC));
        size_t sh[1] = {s + 1};
        double d[64];
        for (size_t i = 0; i <= s && i < 64; i++) d[i] = (double)(100 * s + i);
        TS_OK(gpubp_set_shape(grow, 1, sh));
        TS_OK(gpubp_set_selection(grow, 1, start, sh));
        TS_OK(gpubp_put(w, grow, d, GPUBP_SYNC));
        TS_OK(gpubp_end_step(w));
    }
    TS_OK(gpubp_close(w));
}

static void test_sparse_dataset_steps(void **state)
{
    (void)state;
    const char *path = ts_path("sparse.bp");
    write_sparse(path, 9);
    assert_int_equal(ts_bp4check(path), 0);
    gpubp_file *r;
    TS_OK(gpubp_open(&r, path, GPUBP_MODE_READ_RANDOM_ACCESS, NULL));
    gpubp_variable *v;
    TS_OK(gpubp_inquire_variable(&v, r, "odd"));
    size_t ns = 0;
    TS_OK(gpubp_variable_steps(v, &ns));
    assert_int_equal(ns, 4);
    for (size_t k = 0; k < ns; k++) {
        size_t ds = 99;
        TS_OK(gpubp_variable_dataset_step(v, k, &ds));
        assert_int_equal(ds, 2 * k + 1);
        int32_t got[4];
        TS_OK(gpubp_set_step_selection(v, k, 1));
        TS_OK(gpubp_get(r, v, got, GPUBP_SYNC));
        assert_int_equal(got[0], (int32_t)ds);
        assert_int_equal(got[3], -(int32_t)ds);
        int32_t mn, mx;
        TS_OK(gpubp_variable_minmax(v, &mn, &mx));
        assert_int_equal(mn, -(int32_t)ds);
        assert_int_equal(mx, (int32_t)ds + 2);
    }
    size_t ds;
    assert_int_equal(gpubp_variable_dataset_step(v, 4, &ds), GPUBP_ERR_INVALID_STEP);
    /* all steps: the summary from the streaming pass equals the loaded blocks' */
    TS_OK(gpubp_set_step_selection(v, 0, ns));
    int32_t mn, mx;
    TS_OK(gpubp_variable_minmax(v, &mn, &mx));
    assert_int_equal(mn, -7);
    assert_int_equal(mx, 9);
    TS_OK(gpubp_close(r));
}

static void test_value_written_twice(void **state)
{
    (void)state;
    const char *path = ts_path("twice.bp");
    write_sparse(path, 3);
    gpubp_file *r;
    TS_OK(gpubp_open(&r, path, GPUBP_MODE_READ_RANDOM_ACCESS, NULL));
    gpubp_variable *v;
    TS_OK(gpubp_inquire_variable(&v, r, "n"));
    for (size_t s = 0; s < 3; s++) {
        size_t nb = 0;
        TS_OK(gpubp_variable_blocks(v, s, &nb));
        assert_int_equal(nb, 2);
        int64_t got = -1;
        TS_OK(gpubp_set_step_selection(v, s, 1));
        TS_OK(gpubp_get(r, v, &got, GPUBP_SYNC)); /* no block selection: the first value */
        assert_int_equal(got, (int64_t)s * 10);
        TS_OK(gpubp_set_block_selection(v, 1));
        TS_OK(gpubp_get(r, v, &got, GPUBP_SYNC));
        assert_int_equal(got, (int64_t)s * 10 + 1);
        TS_OK(gpubp_set_block_selection(v, 0));
    }
    TS_OK(gpubp_set_block_selection(v, 2));
    int64_t x;
    assert_int_equal(gpubp_get(r, v, &x, GPUBP_SYNC), GPUBP_ERR_INVALID_SELECTION);
    assert_true(strlen(gpubp_last_error()) > 0);
    TS_OK(gpubp_close(r));
}

static void test_shape_per_step_streaming(void **state)
{
    (void)state;
    const char *path = ts_path("grow.bp");
    write_sparse(path, 5);
    gpubp_file *r;
    TS_OK(gpubp_open(&r, path, GPUBP_MODE_READ, NULL));
    size_t s = 0;
    while (gpubp_begin_step(r) == GPUBP_OK) {
        gpubp_variable *v;
        TS_OK(gpubp_inquire_variable(&v, r, "grow"));
        size_t dims[1] = {0};
        TS_OK(gpubp_variable_shape(v, GPUBP_MEM_HOST, dims));
        assert_int_equal(dims[0], s + 1);
        double got[8];
        TS_OK(gpubp_get(r, v, got, GPUBP_SYNC));
        assert_true(got[s] == (double)(100 * s + s));
        /* "odd" is in the step or not: inquire says so */
        gpubp_variable *o;
        int rc = gpubp_inquire_variable(&o, r, "odd");
        assert_int_equal(rc, (s % 2) ? GPUBP_OK : GPUBP_ERR_NOT_FOUND);
        TS_OK(gpubp_end_step(r));
        s++;
    }
    assert_int_equal(s, 5);
    TS_OK(gpubp_close(r));
}

/* Many steps: the index answers per-step shapes and the last step without loading everything,
 * and re-opening gives the same answers. */
static void test_many_steps(void **state)
{
    (void)state;
    const char *path = ts_path("many.bp");
    gpubp_file *w = open_w(path);
    gpubp_variable *v[3];
    size_t shape[1] = {16}, start[1] = {0};
    for (int i = 0; i < 3; i++) {
        char name[16];
        snprintf(name, sizeof name, "var%03d", i);
        TS_OK(gpubp_define_variable(&v[i], w, name, GPUBP_TYPE_DOUBLE, 1, shape, start, shape));
    }
    double d[16];
    const size_t S = 3000;
    for (size_t s = 0; s < S; s++) {
        TS_OK(gpubp_begin_step(w));
        for (int i = 0; i < 3; i++) {
            for (int k = 0; k < 16; k++) d[k] = (double)(s * 100 + (size_t)i * 16 + (size_t)k);
            TS_OK(gpubp_put(w, v[i], d, GPUBP_SYNC));
        }
        TS_OK(gpubp_end_step(w));
    }
    TS_OK(gpubp_close(w));
    gpubp_file *r;
    TS_OK(gpubp_open(&r, path, GPUBP_MODE_READ_RANDOM_ACCESS, NULL));
    size_t n = 0;
    TS_OK(gpubp_steps(r, &n));
    assert_int_equal(n, S);
    gpubp_variable *x;
    TS_OK(gpubp_inquire_variable(&x, r, "var002"));
    double mn, mx;
    TS_OK(gpubp_variable_minmax(x, &mn, &mx));
    assert_true(mn == 32.0);
    assert_true(mx == (double)((S - 1) * 100 + 47));
    TS_OK(gpubp_set_step_selection(x, S - 1, 1));
    TS_OK(gpubp_get(r, x, d, GPUBP_SYNC));
    assert_true(d[0] == (double)((S - 1) * 100 + 32));
    TS_OK(gpubp_set_step_selection(x, 1234, 2));
    double two[32];
    TS_OK(gpubp_get(r, x, two, GPUBP_SYNC));
    assert_true(two[0] == 123432.0);
    assert_true(two[31] == 123547.0);
    TS_OK(gpubp_close(r));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_sparse_dataset_steps),
        cmocka_unit_test(test_value_written_twice),
        cmocka_unit_test(test_shape_per_step_streaming),
        cmocka_unit_test(test_many_steps),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
