/* Steps and inquiry: the READ step loop, random access, sparse variables, available variables,
 * deferred puts and gets with perform_puts / perform_gets. */
#include "support/api_util.h"

/* 4 steps; "always" in every step, "even" in steps 0 and 2, "late" from step 2 on (a 1-D array of
 * 3 int16). "always" and "even" are int32 single values. */
static void write_sparse(const char *path)
{
    gpubp_file *w = au_open(path, GPUBP_MODE_WRITE);
    size_t shape[1] = {3};
    gpubp_variable *a = ts_define(w, "always", GPUBP_TYPE_INT32, 0, NULL, NULL);
    gpubp_variable *e = ts_define(w, "even", GPUBP_TYPE_INT32, 0, NULL, NULL);
    gpubp_variable *l = ts_define(w, "late", GPUBP_TYPE_INT16, 1, shape, NULL);
    for (int32_t s = 0; s < 4; s++) {
        TS_OK(gpubp_begin_step(w));
        int32_t x = s, y = 100 + s;
        int16_t z[3] = {(int16_t)(10 * s), (int16_t)(10 * s + 1), (int16_t)(10 * s + 2)};
        TS_OK(gpubp_put(w, a, &x, GPUBP_SYNC));
        if (s % 2 == 0) TS_OK(gpubp_put(w, e, &y, GPUBP_SYNC));
        if (s >= 2) TS_OK(gpubp_put(w, l, z, GPUBP_SYNC));
        TS_OK(gpubp_end_step(w));
    }
    TS_OK(gpubp_close(w));
    AU_CHECK(path);
}

static void test_read_step_loop(void **state)
{
    (void)state;
    const char *path = ts_path("loop.bp");
    write_sparse(path);
    gpubp_file *r = au_open(path, GPUBP_MODE_READ);
    int rc, s = 0;
    while ((rc = gpubp_begin_step(r)) == GPUBP_OK) {
        size_t cur = 99, seen = 0;
        TS_OK(gpubp_current_step(r, &cur));
        assert_int_equal(cur, (size_t)s);
        TS_OK(gpubp_steps(r, &seen));
        assert_true(seen >= (size_t)s + 1);
        gpubp_variable *v = au_inq(r, "always");
        int32_t x = -1;
        TS_OK(gpubp_get(r, v, &x, GPUBP_SYNC));
        assert_int_equal(x, s);
        gpubp_variable *e = NULL;
        if (s % 2 == 0) {
            TS_OK(gpubp_inquire_variable(&e, r, "even"));
            TS_OK(gpubp_get(r, e, &x, GPUBP_SYNC));
            assert_int_equal(x, 100 + s);
        } else {
            TS_ERR(gpubp_inquire_variable(&e, r, "even"), GPUBP_ERR_NOT_FOUND);
            assert_non_null(strstr(gpubp_last_error(), "even"));
        }
        TS_OK(gpubp_end_step(r));
        s++;
    }
    assert_int_equal(rc, GPUBP_END_OF_STREAM);
    assert_int_equal(s, 4);
    /* and it stays at the end */
    assert_int_equal(gpubp_begin_step(r), GPUBP_END_OF_STREAM);
    TS_OK(gpubp_close(r));
}

/* available_variables lists (sorted) the variables of the current step in READ mode, all of
 * them in random access. */
static void test_available_variables(void **state)
{
    (void)state;
    const char *path = ts_path("avail.bp");
    write_sparse(path);
    gpubp_file *r = au_open(path, GPUBP_MODE_READ_RANDOM_ACCESS);
    size_t n = 0;
    const char *const *names = NULL;
    TS_OK(gpubp_available_variables(r, &n, &names));
    assert_int_equal(n, 3);
    assert_string_equal(names[0], "always");
    assert_string_equal(names[1], "even");
    assert_string_equal(names[2], "late");
    TS_OK(gpubp_close(r));

    r = au_open(path, GPUBP_MODE_READ);
    const size_t want_n[4] = {2, 1, 3, 2};
    for (int s = 0; s < 4; s++) {
        TS_OK(gpubp_begin_step(r));
        TS_OK(gpubp_available_variables(r, &n, &names));
        assert_int_equal(n, want_n[s]);
        for (size_t i = 0; i < n; i++) {
            if (i) assert_true(strcmp(names[i - 1], names[i]) < 0);
            gpubp_variable *v;
            TS_OK(gpubp_inquire_variable(&v, r, names[i]));
            const char *nm = NULL;
            TS_OK(gpubp_variable_name(v, &nm));
            assert_string_equal(nm, names[i]);
        }
        TS_OK(gpubp_end_step(r));
    }
    TS_OK(gpubp_close(r));
}

/* Random access: steps count over the steps in which the variable appears. */
static void test_random_access_sparse(void **state)
{
    (void)state;
    const char *path = ts_path("ra.bp");
    write_sparse(path);
    gpubp_file *r = au_open(path, GPUBP_MODE_READ_RANDOM_ACCESS);
    au_steps(r, 4);
    gpubp_variable *e = au_inq(r, "even"), *l = au_inq(r, "late"), *a = au_inq(r, "always");
    au_var_steps(e, 2);
    au_var_steps(l, 2);
    au_var_steps(a, 4);
    int32_t x = 0;
    TS_OK(gpubp_set_step_selection(e, 1, 1)); /* the second step in which "even" appears: step 2 */
    TS_OK(gpubp_get(r, e, &x, GPUBP_SYNC));
    assert_int_equal(x, 102);
    TS_OK(gpubp_set_step_selection(e, 0, 1));
    TS_OK(gpubp_get(r, e, &x, GPUBP_SYNC));
    assert_int_equal(x, 100);
    int16_t z[6];
    TS_OK(gpubp_set_step_selection(l, 0, 2));
    TS_OK(gpubp_get(r, l, z, GPUBP_SYNC));
    for (int i = 0; i < 6; i++) assert_int_equal(z[i], 10 * (2 + i / 3) + i % 3);
    size_t nb = 0;
    TS_OK(gpubp_variable_blocks(l, 1, &nb));
    assert_int_equal(nb, 1);
    TS_ERR(gpubp_variable_blocks(l, 2, &nb), GPUBP_ERR_INVALID_STEP);
    TS_ERR(gpubp_set_step_selection(e, 1, 2), GPUBP_ERR_INVALID_STEP);
    /* random access has no begin_step */
    TS_ERR(gpubp_begin_step(r), GPUBP_ERR_WRONG_MODE);
    size_t cur;
    TS_ERR(gpubp_current_step(r, &cur), GPUBP_ERR_WRONG_MODE);
    /* out of order steps */
    for (int k = 3; k >= 0; k--) {
        TS_OK(gpubp_set_step_selection(a, (size_t)k, 1));
        TS_OK(gpubp_get(r, a, &x, GPUBP_SYNC));
        assert_int_equal(x, k);
    }
    TS_OK(gpubp_close(r));
}

/* Deferred puts: perform_puts consumes the data, the buffer may then change. */
static void test_deferred_puts_perform(void **state)
{
    (void)state;
    const char *path = ts_path("defput.bp");
    gpubp_file *w = au_open(path, GPUBP_MODE_WRITE);
    size_t shape[1] = {8}, ct[1] = {4};
    gpubp_variable *v = ts_define(w, "d", GPUBP_TYPE_DOUBLE, 1, shape, ct);
    gpubp_variable *n = ts_define(w, "n", GPUBP_TYPE_INT64, 0, NULL, NULL);
    for (int s = 0; s < 2; s++) {
        double b0[4], b1[4];
        int64_t x = 77 + s;
        for (int i = 0; i < 4; i++) {
            b0[i] = s * 100 + i;
            b1[i] = s * 100 + 4 + i;
        }
        TS_OK(gpubp_begin_step(w));
        size_t s0[1] = {0}, s1[1] = {4};
        TS_OK(gpubp_set_selection(v, 1, s0, ct));
        TS_OK(gpubp_put(w, v, b0, GPUBP_DEFERRED));
        TS_OK(gpubp_set_selection(v, 1, s1, ct));
        TS_OK(gpubp_put(w, v, b1, GPUBP_DEFERRED));
        TS_OK(gpubp_put(w, n, &x, GPUBP_DEFERRED));
        TS_OK(gpubp_perform_puts(w));
        for (int i = 0; i < 4; i++) b0[i] = b1[i] = -1; /* after perform: may be reused */
        x = -1;
        TS_OK(gpubp_end_step(w));
    }
    gpubp_file *r = au_reopen(w, path, GPUBP_MODE_READ_RANDOM_ACCESS);
    v = au_inq(r, "d");
    n = au_inq(r, "n");
    double got[16];
    TS_OK(gpubp_set_step_selection(v, 0, 2));
    TS_OK(gpubp_get(r, v, got, GPUBP_SYNC));
    for (int s = 0; s < 2; s++)
        for (int i = 0; i < 8; i++) assert_true(got[s * 8 + i] == s * 100 + i);
    int64_t xs[2];
    TS_OK(gpubp_set_step_selection(n, 0, 2));
    TS_OK(gpubp_get(r, n, xs, GPUBP_SYNC));
    assert_int_equal(xs[0], 77);
    assert_int_equal(xs[1], 78);
    size_t nb = 0;
    TS_OK(gpubp_variable_blocks(v, 1, &nb));
    assert_int_equal(nb, 2);
    TS_OK(gpubp_close(r));
}

/* Deferred puts without perform_puts: end_step consumes them. */
static void test_deferred_puts_end_step(void **state)
{
    (void)state;
    const char *path = ts_path("defput2.bp");
    gpubp_file *w = au_open(path, GPUBP_MODE_WRITE);
    size_t shape[2] = {3, 3};
    gpubp_variable *v = ts_define(w, "m", GPUBP_TYPE_UINT64, 2, shape, NULL);
    uint64_t buf[9];
    for (int i = 0; i < 9; i++) buf[i] = UINT64_MAX - (uint64_t)i;
    ts_put_step(w, v, buf, GPUBP_DEFERRED);
    gpubp_file *r = au_reopen(w, path, GPUBP_MODE_READ_RANDOM_ACCESS);
    v = au_inq(r, "m");
    uint64_t got[9];
    TS_OK(gpubp_get(r, v, got, GPUBP_SYNC));
    assert_memory_equal(got, buf, sizeof buf);
    uint64_t mn, mx;
    TS_OK(gpubp_variable_minmax(v, &mn, &mx));
    assert_true(mn == UINT64_MAX - 8);
    assert_true(mx == UINT64_MAX);
    TS_OK(gpubp_close(r));
}

/* Deferred gets: filled by perform_gets (random access) or end_step (READ). */
static void test_deferred_gets(void **state)
{
    (void)state;
    const char *path = ts_path("defget.bp");
    write_sparse(path);
    gpubp_file *r = au_open(path, GPUBP_MODE_READ_RANDOM_ACCESS);
    gpubp_variable *a = au_inq(r, "always"), *l = au_inq(r, "late");
    int32_t x[4] = {-1, -1, -1, -1};
    int16_t z[3] = {-1, -1, -1};
    TS_OK(gpubp_set_step_selection(a, 0, 4));
    TS_OK(gpubp_get(r, a, x, GPUBP_DEFERRED));
    TS_OK(gpubp_set_step_selection(l, 1, 1));
    TS_OK(gpubp_get(r, l, z, GPUBP_DEFERRED));
    TS_OK(gpubp_perform_gets(r));
    for (int i = 0; i < 4; i++) assert_int_equal(x[i], i);
    for (int i = 0; i < 3; i++) assert_int_equal(z[i], 30 + i);
    TS_OK(gpubp_close(r));

    r = au_open(path, GPUBP_MODE_READ);
    for (int s = 0; s < 4; s++) {
        TS_OK(gpubp_begin_step(r));
        a = au_inq(r, "always");
        int32_t y = -1;
        TS_OK(gpubp_get(r, a, &y, GPUBP_DEFERRED));
        if (s >= 2) {
            l = au_inq(r, "late");
            size_t st[1] = {1}, ct[1] = {2};
            TS_OK(gpubp_set_selection(l, 1, st, ct));
            for (int i = 0; i < 3; i++) z[i] = -1;
            TS_OK(gpubp_get(r, l, z, GPUBP_DEFERRED));
        }
        TS_OK(gpubp_end_step(r));
        assert_int_equal(y, s);
        if (s >= 2) {
            assert_int_equal(z[0], 10 * s + 1);
            assert_int_equal(z[1], 10 * s + 2);
            assert_int_equal(z[2], -1);
        }
    }
    TS_OK(gpubp_close(r));
}

/* Inquiry in write mode: steps written so far, name, ndims, shape, type, memory space. */
static void test_write_mode_inquiry(void **state)
{
    (void)state;
    const char *path = ts_path("winq.bp");
    gpubp_file *w = au_open(path, GPUBP_MODE_WRITE);
    size_t shape[3] = {2, 3, 4};
    gpubp_variable *v = ts_define(w, "grid/field", GPUBP_TYPE_FLOAT, 3, shape, NULL), *v2;
    TS_OK(gpubp_inquire_variable(&v2, w, "grid/field"));
    assert_ptr_equal(v, v2);
    const char *nm = NULL;
    TS_OK(gpubp_variable_name(v, &nm));
    assert_string_equal(nm, "grid/field");
    size_t nd = 0, dims[3] = {0, 0, 0};
    TS_OK(gpubp_variable_ndims(v, &nd));
    assert_int_equal(nd, 3);
    TS_OK(gpubp_variable_shape(v, GPUBP_MEM_HOST, dims));
    assert_int_equal(dims[0], 2);
    assert_int_equal(dims[1], 3);
    assert_int_equal(dims[2], 4);
    gpubp_memory_space sp = GPUBP_MEM_GPU;
    TS_OK(gpubp_variable_memory_space(v, &sp));
    assert_int_equal(sp, GPUBP_MEM_DETECT);
    au_var_steps(v, 0);
    float buf[24] = {0};
    for (int s = 0; s < 2; s++) ts_put_step(w, v, buf, GPUBP_SYNC);
    au_var_steps(v, 2);
    TS_OK(gpubp_variable_memory_space(v, &sp));
    assert_int_equal(sp, GPUBP_MEM_HOST); /* resolved by the first (host) pointer */
    au_steps(w, 2);
    TS_OK(gpubp_close(w));
    AU_CHECK(path);
}

/* A step with no puts is still a step (ADIOS2 writes it). */
static void test_empty_step(void **state)
{
    (void)state;
    const char *path = ts_path("emptystep.bp");
    gpubp_file *w = au_open(path, GPUBP_MODE_WRITE);
    gpubp_variable *v = ts_define(w, "x", GPUBP_TYPE_INT8, 0, NULL, NULL);
    int8_t x = -5;
    ts_put_step(w, v, &x, GPUBP_SYNC);
    TS_OK(gpubp_begin_step(w));
    TS_OK(gpubp_end_step(w));
    ts_put_step(w, v, &x, GPUBP_SYNC);
    gpubp_file *r = au_reopen(w, path, GPUBP_MODE_READ_RANDOM_ACCESS);
    au_steps(r, 3);
    au_var_steps(au_inq(r, "x"), 2);
    TS_OK(gpubp_close(r));
}

/* async_commit=1 with host data: the step's block headers and PG heads and tails are written by
 * its commit on an I/O thread (after the step's data), not by end_step. Three steps over three
 * subfiles (a 2 MiB array, pieces the I/O threads write, a small array, a single value, an
 * attribute from step 1), with and without fsync=1: data.0-2 and md.0 equal byte for byte the
 * synchronous writer's, and the values read back. */
static void write_async_case(const char *path, const char *params)
{
    gpubp_file *w = ts_open(path, GPUBP_MODE_WRITE, params);
    size_t n = (size_t)1 << 18, shape[1] = {n}, small[1] = {5};
    gpubp_variable *big = ts_define(w, "big", GPUBP_TYPE_DOUBLE, 1, shape, NULL);
    gpubp_variable *few = ts_define(w, "few", GPUBP_TYPE_INT16, 1, small, NULL);
    gpubp_variable *one = ts_define(w, "one", GPUBP_TYPE_INT32, 0, NULL, NULL);
    double *x = malloc(n * sizeof *x);
    assert_non_null(x);
    for (int32_t s = 0; s < 3; s++) {
        for (size_t i = 0; i < n; i++) x[i] = (double)i * 0.25 + 1000.0 * s;
        int16_t f[5] = {(int16_t)s, 1, 2, 3, (int16_t)(4 * s)};
        if (s == 1) TS_OK(gpubp_define_attribute(w, "unit", GPUBP_TYPE_STRING, "m/s", 1));
        TS_OK(gpubp_begin_step(w));
        TS_OK(gpubp_put(w, big, x, GPUBP_DEFERRED));
        TS_OK(gpubp_put(w, few, f, GPUBP_SYNC));
        TS_OK(gpubp_put(w, one, &s, GPUBP_SYNC));
        TS_OK(gpubp_end_step(w));
        memset(x, 0xAB, n * sizeof *x); /* the caller's buffer again */
    }
    TS_OK(gpubp_close(w));
    free(x);
}

static void test_async_commit_host(void **state)
{
    (void)state;
    static const char *fs[] = {"", ",fsync=1"};
    for (int k = 0; k < 2; k++) {
        char pa[1024], pb[1024], qa[128], qb[128];
        snprintf(pa, sizeof pa, "%s", ts_path("async_host.bp"));
        snprintf(pb, sizeof pb, "%s", ts_path("sync_host.bp"));
        snprintf(qa, sizeof qa, "subfiles=3,io_threads=2,async_commit=1%s", fs[k]);
        snprintf(qb, sizeof qb, "subfiles=3,io_threads=2%s", fs[k]);
        write_async_case(pa, qa);
        write_async_case(pb, qb);
        AU_CHECK(pa);
        static const char *files[] = {"data.0", "data.1", "data.2", "md.0"};
        for (size_t i = 0; i < 4; i++) {
            size_t la, lb;
            unsigned char *a = ts_read_file(ts_join(pa, files[i]), &la);
            unsigned char *b = ts_read_file(ts_join(pb, files[i]), &lb);
            assert_non_null(a);
            assert_non_null(b);
            assert_int_equal(la, lb);
            assert_memory_equal(a, b, la);
            free(a);
            free(b);
        }
        gpubp_file *r = ts_open(pa, GPUBP_MODE_READ_RANDOM_ACCESS, NULL);
        gpubp_variable *v;
        TS_OK(gpubp_inquire_variable(&v, r, "big"));
        size_t n = (size_t)1 << 18;
        double *y = malloc(n * sizeof *y);
        assert_non_null(y);
        for (size_t s = 0; s < 3; s++) {
            TS_OK(gpubp_set_step_selection(v, s, 1));
            TS_OK(gpubp_get(r, v, y, GPUBP_SYNC));
            for (size_t i = 0; i < n; i++)
                if (y[i] != (double)i * 0.25 + 1000.0 * (double)s) fail_msg("step %zu at %zu", s, i);
        }
        free(y);
        TS_OK(gpubp_close(r));
    }
}

/* close() ends an open step: its data is committed. */
static void test_close_ends_open_step(void **state)
{
    (void)state;
    const char *path = ts_path("closestep.bp");
    gpubp_file *w = au_open(path, GPUBP_MODE_WRITE);
    gpubp_variable *v = ts_define(w, "x", GPUBP_TYPE_UINT16, 0, NULL, NULL);
    uint16_t x = 4242;
    TS_OK(gpubp_begin_step(w));
    TS_OK(gpubp_put(w, v, &x, GPUBP_DEFERRED));
    gpubp_file *r = au_reopen(w, path, GPUBP_MODE_READ_RANDOM_ACCESS);
    v = au_inq(r, "x");
    uint16_t got = 0;
    TS_OK(gpubp_get(r, v, &got, GPUBP_SYNC));
    assert_int_equal(got, 4242);
    TS_OK(gpubp_close(r));
    TS_OK(gpubp_close(NULL));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_read_step_loop),
        cmocka_unit_test(test_available_variables),
        cmocka_unit_test(test_random_access_sparse),
        cmocka_unit_test(test_deferred_puts_perform),
        cmocka_unit_test(test_deferred_puts_end_step),
        cmocka_unit_test(test_deferred_gets),
        cmocka_unit_test(test_write_mode_inquiry),
        cmocka_unit_test(test_empty_step),
        cmocka_unit_test(test_close_ends_open_step),
        cmocka_unit_test(test_async_commit_host),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
