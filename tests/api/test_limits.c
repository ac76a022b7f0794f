/* Limits of the format and odd inputs: strings and names longer than a BP string holds (u16
 * length), read-only and unknown types, ndims of single values, name lists in write mode,
 * thread-local errors and files used from distinct threads. */
#include "support/api_util.h"

#include <pthread.h>

/* A string value longer than 65535 bytes cannot be a BP string: an error, or a faithful
 * round trip, never a silently cut or corrupt file. */
static void test_string_value_too_long(void **state)
{
    (void)state;
    const char *path = ts_path("longstr.bp");
    size_t n = 70000;
    char *s = malloc(n + 1);
    assert_non_null(s);
    for (size_t i = 0; i < n; i++) s[i] = (char)('A' + i % 26);
    s[n] = '\0';
    gpubp_file *w = au_open(path, GPUBP_MODE_WRITE);
    gpubp_variable *v, *ok;
    TS_OK(gpubp_define_variable(&v, w, "long", GPUBP_TYPE_STRING, 0, NULL, NULL, NULL));
    TS_OK(gpubp_define_variable(&ok, w, "ok", GPUBP_TYPE_INT32, 0, NULL, NULL, NULL));
    TS_OK(gpubp_begin_step(w));
    int32_t one = 1;
    TS_OK(gpubp_put(w, ok, &one, GPUBP_SYNC));
    int rc = gpubp_put(w, v, s, GPUBP_SYNC);
    if (rc != GPUBP_OK) assert_true(gpubp_last_error()[0] != '\0');
    int rc2 = gpubp_end_step(w);
    if (rc == GPUBP_OK && rc2 != GPUBP_OK) rc = rc2;
    gpubp_file *r = au_reopen(w, path, GPUBP_MODE_READ_RANDOM_ACCESS);
    if (rc == GPUBP_OK) {
        v = au_inq(r, "long");
        size_t bytes = 0;
        TS_OK(gpubp_selection_size(v, &bytes));
        assert_int_equal(bytes, n + 1);
        char *got = malloc(n + 1);
        TS_OK(gpubp_get(r, v, got, GPUBP_SYNC));
        assert_memory_equal(got, s, n + 1);
        free(got);
    }
    /* the rest of the step is intact either way */
    ok = au_inq(r, "ok");
    int32_t x = 0;
    TS_OK(gpubp_get(r, ok, &x, GPUBP_SYNC));
    assert_int_equal(x, 1);
    TS_OK(gpubp_close(r));
    free(s);
}

/* The same for string attributes (single and array elements). */
static void test_string_attribute_too_long(void **state)
{
    (void)state;
    const char *path = ts_path("longattr.bp");
    size_t n = 66000;
    char *s = malloc(n + 1);
    for (size_t i = 0; i < n; i++) s[i] = (char)('a' + i % 26);
    s[n] = '\0';
    gpubp_file *w = au_open(path, GPUBP_MODE_WRITE);
    int rc1 = gpubp_define_attribute(w, "long1", GPUBP_TYPE_STRING, s, 1);
    const char *arr[2] = {"short", s};
    int rc2 = gpubp_define_attribute(w, "long2", GPUBP_TYPE_STRING, arr, 2);
    gpubp_variable *v;
    TS_OK(gpubp_define_variable(&v, w, "x", GPUBP_TYPE_INT8, 0, NULL, NULL, NULL));
    TS_OK(gpubp_begin_step(w));
    int8_t x = 3;
    TS_OK(gpubp_put(w, v, &x, GPUBP_SYNC));
    int rc3 = gpubp_end_step(w);
    TS_OK(gpubp_close(w));
    if (rc3 != GPUBP_OK) {
        free(s);
        return; /* refused at end_step: acceptable, as long as nothing broken was committed */
    }
    AU_CHECK(path);
    gpubp_file *r = au_open(path, GPUBP_MODE_READ_RANDOM_ACCESS);
    const char *got = NULL;
    if (rc1 == GPUBP_OK) {
        TS_OK(gpubp_attribute_string(r, "long1", 0, &got));
        assert_int_equal(strlen(got), n);
        assert_memory_equal(got, s, n);
    }
    if (rc2 == GPUBP_OK) {
        TS_OK(gpubp_attribute_string(r, "long2", 1, &got));
        assert_int_equal(strlen(got), n);
        assert_memory_equal(got, s, n);
    }
    TS_OK(gpubp_close(r));
    free(s);
}

/* A variable name longer than 65535 bytes: refused at define, or a faithful round trip. */
static void test_name_too_long(void **state)
{
    (void)state;
    const char *path = ts_path("longname.bp");
    size_t n = 65600;
    char *name = malloc(n + 1);
    for (size_t i = 0; i < n; i++) name[i] = (char)('a' + i % 26);
    name[n] = '\0';
    gpubp_file *w = au_open(path, GPUBP_MODE_WRITE);
    gpubp_variable *v = NULL;
    int rc = gpubp_define_variable(&v, w, name, GPUBP_TYPE_DOUBLE, 0, NULL, NULL, NULL);
    if (rc != GPUBP_OK) {
        assert_true(rc == GPUBP_ERR_INVALID_ARG);
        assert_true(gpubp_last_error()[0] != '\0');
        TS_OK(gpubp_close(w));
        free(name);
        return;
    }
    TS_OK(gpubp_begin_step(w));
    double d = 2.5;
    rc = gpubp_put(w, v, &d, GPUBP_SYNC);
    int rc2 = gpubp_end_step(w);
    TS_OK(gpubp_close(w));
    if (rc == GPUBP_OK && rc2 == GPUBP_OK) {
        AU_CHECK(path);
        gpubp_file *r = au_open(path, GPUBP_MODE_READ_RANDOM_ACCESS);
        v = au_inq(r, name);
        double got = 0;
        TS_OK(gpubp_get(r, v, &got, GPUBP_SYNC));
        assert_true(got == 2.5);
        TS_OK(gpubp_close(r));
    }
    free(name);
}

static void test_bad_types(void **state)
{
    (void)state;
    gpubp_file *w = au_open(ts_path("badtypes.bp"), GPUBP_MODE_WRITE);
    gpubp_variable *v;
    TS_ERR(gpubp_define_variable(&v, w, "t3", (gpubp_type)3, 0, NULL, NULL, NULL),
           GPUBP_ERR_INVALID_ARG);
    TS_ERR(gpubp_define_variable(&v, w, "t99", (gpubp_type)99, 0, NULL, NULL, NULL),
           GPUBP_ERR_INVALID_ARG);
    int32_t x = 1;
    TS_ERR(gpubp_define_attribute(w, "a", (gpubp_type)8, &x, 1), GPUBP_ERR_INVALID_ARG);
    /* CHAR ("read only" in the header): refused, or written so that it reads back */
    int rc = gpubp_define_variable(&v, w, "c", GPUBP_TYPE_CHAR, 0, NULL, NULL, NULL);
    if (rc == GPUBP_OK) {
        char c = 'q';
        TS_OK(gpubp_begin_step(w));
        TS_OK(gpubp_put(w, v, &c, GPUBP_SYNC));
        TS_OK(gpubp_end_step(w));
    } else {
        assert_true(rc == GPUBP_ERR_INVALID_ARG || rc == GPUBP_ERR_TYPE_MISMATCH ||
                    rc == GPUBP_ERR_NOT_SUPPORTED);
    }
    /* an attribute with no element */
    rc = gpubp_define_attribute(w, "empty", GPUBP_TYPE_INT32, &x, 0);
    assert_true(rc == GPUBP_ERR_INVALID_ARG);
    assert_string_equal(gpubp_type_name(GPUBP_TYPE_DOUBLE_COMPLEX), "double complex");
    assert_string_equal(gpubp_type_name(GPUBP_TYPE_STRING), "string");
    assert_int_equal(gpubp_type_size(GPUBP_TYPE_STRING), 0);
    assert_int_equal(gpubp_type_size(GPUBP_TYPE_FLOAT_COMPLEX), 8);
    TS_OK(gpubp_close(w));
    if (rc == GPUBP_OK) {
        AU_CHECK(ts_path("badtypes.bp"));
        gpubp_file *r = au_open(ts_path("badtypes.bp"), GPUBP_MODE_READ_RANDOM_ACCESS);
        v = au_inq(r, "c");
        gpubp_type t;
        TS_OK(gpubp_variable_type(v, &t));
        assert_int_equal(t, GPUBP_TYPE_CHAR);
        char c = 0;
        TS_OK(gpubp_get(r, v, &c, GPUBP_SYNC));
        assert_int_equal(c, 'q');
        TS_OK(gpubp_close(r));
    }
}

/* Selections on a single value: only ndims 0 is right. */
static void test_value_selection_ndims(void **state)
{
    (void)state;
    const char *path = ts_path("valsel.bp");
    gpubp_file *w = au_open(path, GPUBP_MODE_WRITE);
    gpubp_variable *v;
    TS_OK(gpubp_define_variable(&v, w, "n", GPUBP_TYPE_INT32, 0, NULL, NULL, NULL));
    size_t st[1] = {0}, ct[1] = {1};
    TS_ERR(gpubp_set_selection(v, 1, st, ct), GPUBP_ERR_INVALID_DIMS);
    TS_ERR(gpubp_set_shape(v, 1, ct), GPUBP_ERR_WRONG_MODE);
    TS_OK(gpubp_begin_step(w));
    int32_t x = 4;
    TS_OK(gpubp_put(w, v, &x, GPUBP_SYNC));
    TS_OK(gpubp_end_step(w));
    TS_OK(gpubp_close(w));
    gpubp_file *r = au_open(path, GPUBP_MODE_READ_RANDOM_ACCESS);
    v = au_inq(r, "n");
    TS_ERR(gpubp_set_selection(v, 1, st, ct), GPUBP_ERR_INVALID_DIMS);
    TS_OK(gpubp_close(r));
}

/* available_variables in write mode: what was defined, sorted. */
static void test_write_mode_names(void **state)
{
    (void)state;
    gpubp_file *w = au_open(ts_path("wnames.bp"), GPUBP_MODE_WRITE);
    gpubp_variable *v;
    TS_OK(gpubp_define_variable(&v, w, "zeta", GPUBP_TYPE_INT8, 0, NULL, NULL, NULL));
    TS_OK(gpubp_define_variable(&v, w, "alpha", GPUBP_TYPE_INT8, 0, NULL, NULL, NULL));
    TS_OK(gpubp_define_variable(&v, w, "mid/x", GPUBP_TYPE_INT8, 0, NULL, NULL, NULL));
    size_t n = 0;
    const char *const *names;
    TS_OK(gpubp_available_variables(w, &n, &names));
    assert_int_equal(n, 3);
    assert_string_equal(names[0], "alpha");
    assert_string_equal(names[1], "mid/x");
    assert_string_equal(names[2], "zeta");
    TS_OK(gpubp_close(w));
}

/* gpubp_last_error is per thread: a failure on another thread leaves ours alone. */
static void *fail_in_thread(void *arg)
{
    (void)arg;
    gpubp_file *f = NULL;
    int rc = gpubp_open(&f, NULL, GPUBP_MODE_READ, NULL);
    static char msg[512];
    snprintf(msg, sizeof msg, "%d:%s", rc, gpubp_last_error());
    return msg;
}

static void test_last_error_thread_local(void **state)
{
    (void)state;
    gpubp_file *f = NULL;
    TS_ERR(gpubp_open(&f, ts_path("does_not_exist.bp"), GPUBP_MODE_READ, NULL), GPUBP_ERR_NOT_BP4);
    char mine[1024];
    snprintf(mine, sizeof mine, "%s", gpubp_last_error());
    pthread_t t;
    assert_int_equal(pthread_create(&t, NULL, fail_in_thread, NULL), 0);
    void *ret = NULL;
    pthread_join(t, &ret);
    assert_true(((char *)ret)[0] == '-'); /* the thread saw its own failure */
    assert_string_not_equal(strchr((char *)ret, ':') + 1, mine);
    assert_string_equal(gpubp_last_error(), mine);
}

/* Distinct files from distinct threads at the same time. */
typedef struct job {
    char path[4096];
    int id;
    int ok;
} job;

static void *write_read(void *arg)
{
    job *j = arg;
    j->ok = 0;
    gpubp_file *w = NULL;
    if (gpubp_open(&w, j->path, GPUBP_MODE_WRITE, NULL) != GPUBP_OK) return NULL;
    gpubp_variable *v;
    size_t shape[1] = {4096}, st[1] = {0};
    if (gpubp_define_variable(&v, w, "a", GPUBP_TYPE_INT32, 1, shape, st, shape) != GPUBP_OK) return NULL;
    static _Thread_local int32_t buf[4096];
    for (int s = 0; s < 5; s++) {
        for (int i = 0; i < 4096; i++) buf[i] = j->id * 1000000 + s * 10000 + i;
        if (gpubp_begin_step(w) || gpubp_put(w, v, buf, GPUBP_SYNC) || gpubp_end_step(w)) return NULL;
    }
    if (gpubp_close(w) != GPUBP_OK) return NULL;
    gpubp_file *r = NULL;
    if (gpubp_open(&r, j->path, GPUBP_MODE_READ_RANDOM_ACCESS, NULL) != GPUBP_OK) return NULL;
    if (gpubp_inquire_variable(&v, r, "a") != GPUBP_OK) return NULL;
    for (int s = 0; s < 5; s++) {
        if (gpubp_set_step_selection(v, (size_t)s, 1) || gpubp_get(r, v, buf, GPUBP_SYNC)) return NULL;
        for (int i = 0; i < 4096; i++)
            if (buf[i] != j->id * 1000000 + s * 10000 + i) return NULL;
    }
    gpubp_close(r);
    j->ok = 1;
    return NULL;
}

static void test_files_in_threads(void **state)
{
    (void)state;
    enum { NT = 4 };
    job jobs[NT];
    pthread_t t[NT];
    for (int i = 0; i < NT; i++) {
        char nm[64];
        snprintf(nm, sizeof nm, "thread%d.bp", i);
        snprintf(jobs[i].path, sizeof jobs[i].path, "%s", ts_path(nm));
        jobs[i].id = i;
        assert_int_equal(pthread_create(&t[i], NULL, write_read, &jobs[i]), 0);
    }
    for (int i = 0; i < NT; i++) pthread_join(t[i], NULL);
    for (int i = 0; i < NT; i++) {
        assert_int_equal(jobs[i].ok, 1);
        AU_CHECK(jobs[i].path);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_string_value_too_long),
        cmocka_unit_test(test_string_attribute_too_long),
        cmocka_unit_test(test_name_too_long),
        cmocka_unit_test(test_bad_types),
        cmocka_unit_test(test_value_selection_ndims),
        cmocka_unit_test(test_write_mode_names),
        cmocka_unit_test(test_last_error_thread_local),
        cmocka_unit_test(test_files_in_threads),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
