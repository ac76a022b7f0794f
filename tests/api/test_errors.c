/* The error statuses the header documents; each leaves a non-empty gpubp_last_error(). */
#include "support/api_util.h"

#include <sys/stat.h>

/* a small valid dataset: "g" 2-D float (4 x 6) in 2 blocks, 2 steps; "n" int32; "s" string;
 * "loc" a local int32 array of 3; attribute "unit" (string) */
static const char *fixture(void)
{
    static char path[4096];
    if (path[0]) return path;
    snprintf(path, sizeof path, "%s", ts_path("fixture.bp"));
    gpubp_file *w = au_open(path, GPUBP_MODE_WRITE);
    gpubp_variable *g, *n, *s, *l;
    size_t shape[2] = {4, 6}, st[2] = {0, 0}, ct[2] = {2, 6}, lc[1] = {3};
    TS_OK(gpubp_define_variable(&g, w, "g", GPUBP_TYPE_FLOAT, 2, shape, st, ct));
    TS_OK(gpubp_define_variable(&n, w, "n", GPUBP_TYPE_INT32, 0, NULL, NULL, NULL));
    TS_OK(gpubp_define_variable(&s, w, "s", GPUBP_TYPE_STRING, 0, NULL, NULL, NULL));
    TS_OK(gpubp_define_variable(&l, w, "loc", GPUBP_TYPE_INT32, 1, NULL, NULL, lc));
    TS_OK(gpubp_define_attribute(w, "unit", GPUBP_TYPE_STRING, "m", 1));
    for (int step = 0; step < 2; step++) {
        TS_OK(gpubp_begin_step(w));
        float buf[12];
        for (int i = 0; i < 12; i++) buf[i] = (float)i;
        for (size_t b = 0; b < 2; b++) {
            size_t bst[2] = {2 * b, 0};
            TS_OK(gpubp_set_selection(g, 2, bst, ct));
            TS_OK(gpubp_put(w, g, buf, GPUBP_SYNC));
        }
        int32_t x = step, lv[3] = {1, 2, 3};
        TS_OK(gpubp_put(w, n, &x, GPUBP_SYNC));
        TS_OK(gpubp_put(w, s, "text", GPUBP_SYNC));
        TS_OK(gpubp_put(w, l, lv, GPUBP_SYNC));
        TS_OK(gpubp_end_step(w));
    }
    TS_OK(gpubp_close(w));
    AU_CHECK(path);
    return path;
}

static void test_unknown_variable(void **state)
{
    (void)state;
    gpubp_file *r = au_open(fixture(), GPUBP_MODE_READ_RANDOM_ACCESS);
    gpubp_variable *v = (gpubp_variable *)0x1;
    TS_ERR(gpubp_inquire_variable(&v, r, "no_such_variable"), GPUBP_ERR_NOT_FOUND);
    assert_non_null(strstr(gpubp_last_error(), "no_such_variable"));
    TS_OK(gpubp_close(r));
    gpubp_file *w = au_open(ts_path("unknown_w.bp"), GPUBP_MODE_WRITE);
    TS_ERR(gpubp_inquire_variable(&v, w, "nothing_defined"), GPUBP_ERR_NOT_FOUND);
    assert_non_null(strstr(gpubp_last_error(), "nothing_defined"));
    TS_OK(gpubp_close(w));
}

static void test_unknown_attribute(void **state)
{
    (void)state;
    gpubp_file *r = au_open(fixture(), GPUBP_MODE_READ_RANDOM_ACCESS);
    gpubp_type t;
    size_t n;
    int a;
    TS_ERR(gpubp_inquire_attribute(r, "no_such_attr", &t, &n, &a), GPUBP_ERR_NOT_FOUND);
    assert_non_null(strstr(gpubp_last_error(), "no_such_attr"));
    double d;
    TS_ERR(gpubp_attribute_data(r, "no_such_attr", &d), GPUBP_ERR_NOT_FOUND);
    const char *s;
    TS_ERR(gpubp_attribute_string(r, "no_such_attr", 0, &s), GPUBP_ERR_NOT_FOUND);
    /* a string attribute has no numeric data */
    char buf[64];
    TS_ERR(gpubp_attribute_data(r, "unit", buf), GPUBP_ERR_TYPE_MISMATCH);
    TS_OK(gpubp_close(r));
}

static void test_wrong_ndims(void **state)
{
    (void)state;
    gpubp_file *r = au_open(fixture(), GPUBP_MODE_READ_RANDOM_ACCESS);
    gpubp_variable *g = au_inq(r, "g");
    size_t st[3] = {0, 0, 0}, ct[3] = {1, 1, 1};
    TS_ERR(gpubp_set_selection(g, 3, st, ct), GPUBP_ERR_INVALID_DIMS);
    TS_ERR(gpubp_set_selection(g, 1, st, ct), GPUBP_ERR_INVALID_DIMS);
    TS_ERR(gpubp_set_memory_selection(g, 3, st, ct), GPUBP_ERR_INVALID_DIMS);
    TS_OK(gpubp_close(r));

    gpubp_file *w = au_open(ts_path("ndims_w.bp"), GPUBP_MODE_WRITE);
    gpubp_variable *v;
    size_t shape[2] = {4, 4};
    TS_OK(gpubp_define_variable(&v, w, "v", GPUBP_TYPE_DOUBLE, 2, shape, st, shape));
    TS_ERR(gpubp_set_shape(v, 3, ct), GPUBP_ERR_INVALID_DIMS);
    TS_ERR(gpubp_set_selection(v, 1, st, ct), GPUBP_ERR_INVALID_DIMS);
    /* strings are single values only */
    gpubp_variable *s;
    TS_ERR(gpubp_define_variable(&s, w, "str", GPUBP_TYPE_STRING, 1, shape, st, shape),
           GPUBP_ERR_INVALID_DIMS);
    /* more than 32 dims */
    size_t big[33];
    for (int i = 0; i < 33; i++) big[i] = 1;
    TS_ERR(gpubp_define_variable(&s, w, "too_many", GPUBP_TYPE_DOUBLE, 33, big, big, big),
           GPUBP_ERR_INVALID_DIMS);
    /* a zero count is a legal empty block (a rank with no data), as in ADIOS2 */
    size_t zc[2] = {0, 4};
    TS_OK(gpubp_define_variable(&s, w, "zero", GPUBP_TYPE_DOUBLE, 2, shape, st, zc));
    TS_OK(gpubp_close(w));
}

/* A box outside the shape on read: INVALID_SELECTION at set_selection or at the get. */
static void expect_bad_read_box(gpubp_file *r, gpubp_variable *v, size_t nd, const size_t *st,
                                const size_t *ct)
{
    int rc = gpubp_set_selection(v, nd, st, ct);
    if (rc == GPUBP_OK) {
        float buf[256];
        rc = gpubp_get(r, v, buf, GPUBP_SYNC);
    }
    TS_ERR(rc, GPUBP_ERR_INVALID_SELECTION);
}

static void test_selection_outside_shape(void **state)
{
    (void)state;
    gpubp_file *r = au_open(fixture(), GPUBP_MODE_READ_RANDOM_ACCESS);
    gpubp_variable *g = au_inq(r, "g");
    size_t st[2] = {3, 0}, ct[2] = {2, 6};
    expect_bad_read_box(r, g, 2, st, ct); /* rows 3..4 of 4 */
    st[0] = 0; st[1] = 6; ct[0] = 1; ct[1] = 1;
    expect_bad_read_box(r, g, 2, st, ct); /* column 6 of 6 */
    st[0] = 0; st[1] = 0; ct[0] = 5; ct[1] = 6;
    expect_bad_read_box(r, g, 2, st, ct);
    st[0] = (size_t)-1; st[1] = 0; ct[0] = 2; ct[1] = 1; /* overflowing start + count */
    expect_bad_read_box(r, g, 2, st, ct);
    /* a block that does not exist: checked at the get */
    int rc = gpubp_set_block_selection(g, 2);
    if (rc == GPUBP_OK) {
        float buf[64];
        rc = gpubp_get(r, g, buf, GPUBP_SYNC);
    }
    TS_ERR(rc, GPUBP_ERR_INVALID_SELECTION);
    gpubp_variable *l = au_inq(r, "loc");
    rc = gpubp_set_block_selection(l, 1);
    if (rc == GPUBP_OK) {
        int32_t buf[8];
        rc = gpubp_get(r, l, buf, GPUBP_SYNC);
    }
    TS_ERR(rc, GPUBP_ERR_INVALID_SELECTION);
    /* a local-array box larger than the block */
    TS_OK(gpubp_set_block_selection(l, 0));
    size_t lc[1] = {4};
    rc = gpubp_set_selection(l, 1, NULL, lc);
    if (rc == GPUBP_OK) {
        int32_t buf[8];
        rc = gpubp_get(r, l, buf, GPUBP_SYNC);
    }
    TS_ERR(rc, GPUBP_ERR_INVALID_SELECTION);
    /* block_info of a block that does not exist */
    size_t bs[2], bc[2];
    TS_ERR(gpubp_variable_block_info(g, 0, 2, bs, bc, NULL, NULL), GPUBP_ERR_INVALID_SELECTION);
    TS_OK(gpubp_close(r));

    /* write: checked at once */
    gpubp_file *w = au_open(ts_path("sel_w.bp"), GPUBP_MODE_WRITE);
    gpubp_variable *v;
    size_t shape[2] = {4, 4}, z[2] = {0, 0}, c[2] = {2, 2}, far[2] = {3, 3};
    TS_ERR(gpubp_define_variable(&v, w, "bad", GPUBP_TYPE_DOUBLE, 2, shape, far, c),
           GPUBP_ERR_INVALID_SELECTION);
    TS_OK(gpubp_define_variable(&v, w, "v", GPUBP_TYPE_DOUBLE, 2, shape, z, c));
    TS_ERR(gpubp_set_selection(v, 2, far, c), GPUBP_ERR_INVALID_SELECTION);
    /* a memory box that does not hold the selection: at the put */
    size_t mst[2] = {1, 1}, mct[2] = {2, 3};
    int mrc = gpubp_set_memory_selection(v, 2, mst, mct);
    if (mrc == GPUBP_OK) {
        double buf[16] = {0};
        TS_OK(gpubp_begin_step(w));
        mrc = gpubp_put(w, v, buf, GPUBP_SYNC);
    }
    TS_ERR(mrc, GPUBP_ERR_INVALID_SELECTION);
    TS_OK(gpubp_close(w));
}

static void test_step_does_not_exist(void **state)
{
    (void)state;
    gpubp_file *r = au_open(fixture(), GPUBP_MODE_READ_RANDOM_ACCESS);
    gpubp_variable *g = au_inq(r, "g");
    TS_ERR(gpubp_set_step_selection(g, 2, 1), GPUBP_ERR_INVALID_STEP);
    TS_ERR(gpubp_set_step_selection(g, 1, 2), GPUBP_ERR_INVALID_STEP);
    TS_ERR(gpubp_set_step_selection(g, (size_t)-1, 2), GPUBP_ERR_INVALID_STEP);
    size_t nb;
    TS_ERR(gpubp_variable_blocks(g, 5, &nb), GPUBP_ERR_INVALID_STEP);
    size_t bs[2], bc[2];
    TS_ERR(gpubp_variable_block_info(g, 2, 0, bs, bc, NULL, NULL), GPUBP_ERR_INVALID_STEP);
    /* a zero-step selection is not a range that exists */
    int rc = gpubp_set_step_selection(g, 0, 0);
    assert_true(rc == GPUBP_ERR_INVALID_STEP || rc == GPUBP_ERR_INVALID_ARG);
    TS_OK(gpubp_close(r));
}

static void test_wrong_mode(void **state)
{
    (void)state;
    gpubp_file *w = au_open(ts_path("mode_w.bp"), GPUBP_MODE_WRITE);
    gpubp_variable *v;
    size_t shape[1] = {4}, st[1] = {0};
    TS_OK(gpubp_define_variable(&v, w, "v", GPUBP_TYPE_INT32, 1, shape, st, shape));
    int32_t buf[4] = {1, 2, 3, 4};
    /* put outside a step */
    TS_ERR(gpubp_put(w, v, buf, GPUBP_SYNC), GPUBP_ERR_WRONG_MODE);
    TS_ERR(gpubp_end_step(w), GPUBP_ERR_WRONG_MODE);
    TS_OK(gpubp_begin_step(w));
    TS_ERR(gpubp_begin_step(w), GPUBP_ERR_WRONG_MODE); /* a step is open */
    /* get, step/block selections on a write file */
    TS_ERR(gpubp_get(w, v, buf, GPUBP_SYNC), GPUBP_ERR_WRONG_MODE);
    TS_ERR(gpubp_set_step_selection(v, 0, 1), GPUBP_ERR_WRONG_MODE);
    TS_ERR(gpubp_set_block_selection(v, 0), GPUBP_ERR_WRONG_MODE);
    TS_OK(gpubp_put(w, v, buf, GPUBP_SYNC));
    TS_OK(gpubp_end_step(w));
    TS_OK(gpubp_close(w));

    gpubp_file *r = au_open(fixture(), GPUBP_MODE_READ);
    gpubp_variable *g;
    /* READ: inquire with no step open */
    TS_ERR(gpubp_inquire_variable(&g, r, "g"), GPUBP_ERR_WRONG_MODE);
    TS_ERR(gpubp_end_step(r), GPUBP_ERR_WRONG_MODE);
    TS_OK(gpubp_begin_step(r));
    TS_ERR(gpubp_begin_step(r), GPUBP_ERR_WRONG_MODE);
    g = au_inq(r, "g");
    TS_ERR(gpubp_set_step_selection(g, 0, 1), GPUBP_ERR_WRONG_MODE);
    /* no writing on a reader */
    gpubp_variable *nv;
    TS_ERR(gpubp_define_variable(&nv, r, "new", GPUBP_TYPE_INT8, 0, NULL, NULL, NULL),
           GPUBP_ERR_WRONG_MODE);
    float f[24];
    TS_ERR(gpubp_put(r, g, f, GPUBP_SYNC), GPUBP_ERR_WRONG_MODE);
    size_t shape2[2] = {4, 6};
    TS_ERR(gpubp_set_shape(g, 2, shape2), GPUBP_ERR_WRONG_MODE);
    TS_OK(gpubp_end_step(r));
    TS_OK(gpubp_close(r));

    /* set_shape on a local array */
    w = au_open(ts_path("mode_w2.bp"), GPUBP_MODE_WRITE);
    gpubp_variable *l;
    TS_OK(gpubp_define_variable(&l, w, "l", GPUBP_TYPE_INT32, 1, NULL, NULL, shape));
    TS_ERR(gpubp_set_shape(l, 1, shape), GPUBP_ERR_WRONG_MODE);
    TS_OK(gpubp_close(w));
}

static void test_defined_twice(void **state)
{
    (void)state;
    gpubp_file *w = au_open(ts_path("twice.bp"), GPUBP_MODE_WRITE);
    gpubp_variable *v;
    TS_OK(gpubp_define_variable(&v, w, "v", GPUBP_TYPE_INT32, 0, NULL, NULL, NULL));
    TS_ERR(gpubp_define_variable(&v, w, "v", GPUBP_TYPE_INT32, 0, NULL, NULL, NULL),
           GPUBP_ERR_EXISTS);
    TS_OK(gpubp_close(w));
}

static void test_bad_params(void **state)
{
    (void)state;
    gpubp_file *f = (gpubp_file *)0x1;
    TS_ERR(gpubp_open(&f, ts_path("params.bp"), GPUBP_MODE_WRITE, "no_such_key=1"),
           GPUBP_ERR_PARAM);
    assert_null(f);
    assert_non_null(strstr(gpubp_last_error(), "no_such_key"));
    TS_ERR(gpubp_open(&f, ts_path("params.bp"), GPUBP_MODE_WRITE, "pool_slots=many"),
           GPUBP_ERR_PARAM);
    assert_non_null(strstr(gpubp_last_error(), "pool_slots"));
    TS_ERR(gpubp_open(&f, ts_path("params.bp"), GPUBP_MODE_WRITE, "gpu_layout=diagonal"),
           GPUBP_ERR_PARAM);
    TS_ERR(gpubp_open(&f, fixture(), GPUBP_MODE_READ, "fsync=1,bogus=2"), GPUBP_ERR_PARAM);
    assert_non_null(strstr(gpubp_last_error(), "bogus"));
    /* known keys, spaces allowed */
    TS_OK(gpubp_open(&f, fixture(), GPUBP_MODE_READ, "timeout=0, fsync=1"));
    TS_OK(gpubp_close(f));
}

static void test_bp5_directory(void **state)
{
    (void)state;
    char bp5[4096];
    snprintf(bp5, sizeof bp5, "%s/BP5/steps_2d.bp", ts_golden_dir());
    gpubp_file *f = (gpubp_file *)0x1;
    /* BP5 datasets are read (issue 21) in both read modes */
    TS_OK(gpubp_open(&f, bp5, GPUBP_MODE_READ, NULL));
    TS_OK(gpubp_close(f));
    TS_OK(gpubp_open(&f, bp5, GPUBP_MODE_READ_RANDOM_ACCESS, NULL));
    size_t n = 0;
    TS_OK(gpubp_steps(f, &n));
    assert_int_equal(n, 3);
    TS_OK(gpubp_close(f));
    /* appending to a BP5 dataset is refused (on a copy) */
    const char *copy = ts_path("bp5copy.bp");
    assert_int_equal(ts_copy_dataset(bp5, copy), 0);
    TS_ERR(gpubp_open(&f, copy, GPUBP_MODE_APPEND, NULL), GPUBP_ERR_BP5);
}

static void test_not_bp4(void **state)
{
    (void)state;
    gpubp_file *f = (gpubp_file *)0x1;
    /* a plain file */
    const char *plain = ts_path("plain.bp");
    assert_int_equal(ts_write_file(plain, "just text\n", 10), 0);
    TS_ERR(gpubp_open(&f, plain, GPUBP_MODE_READ, NULL), GPUBP_ERR_NOT_BP4);
    assert_null(f);
    TS_ERR(gpubp_open(&f, plain, GPUBP_MODE_READ_RANDOM_ACCESS, NULL), GPUBP_ERR_NOT_BP4);
    /* a missing path in read mode */
    TS_ERR(gpubp_open(&f, ts_path("absent.bp"), GPUBP_MODE_READ, NULL), GPUBP_ERR_NOT_BP4);
    /* a foreign directory: an md.idx that is not a BP4 index */
    const char *foreign = ts_path("foreign.bp");
    assert_int_equal(mkdir(foreign, 0777), 0);
    char junk[256];
    for (int i = 0; i < 256; i++) junk[i] = (char)('a' + i % 26);
    assert_int_equal(ts_write_file(ts_join(foreign, "md.idx"), junk, sizeof junk), 0);
    assert_int_equal(ts_write_file(ts_join(foreign, "md.0"), junk, sizeof junk), 0);
    TS_ERR(gpubp_open(&f, foreign, GPUBP_MODE_READ_RANDOM_ACCESS, NULL), GPUBP_ERR_NOT_BP4);
    TS_ERR(gpubp_open(&f, foreign, GPUBP_MODE_READ, NULL), GPUBP_ERR_NOT_BP4);
    /* appending to a foreign dataset must not clobber it */
    TS_ERR(gpubp_open(&f, foreign, GPUBP_MODE_APPEND, NULL), GPUBP_ERR_NOT_BP4);
    assert_int_equal(ts_file_size(ts_join(foreign, "md.idx")), 256);
    /* a BP version byte other than 4 */
    const char *bp3 = ts_path("bpver3.bp");
    assert_int_equal(ts_copy_dataset(fixture(), bp3), 0);
    size_t len = 0;
    unsigned char *idx = ts_read_file(ts_join(bp3, "md.idx"), &len);
    assert_non_null(idx);
    idx[37] = 3;
    assert_int_equal(ts_write_file(ts_join(bp3, "md.idx"), idx, len), 0);
    free(idx);
    int rc = gpubp_open(&f, bp3, GPUBP_MODE_READ_RANDOM_ACCESS, NULL);
    assert_true(rc == GPUBP_ERR_NOT_BP4 || rc == GPUBP_ERR_FORMAT);
    assert_true(gpubp_last_error()[0] != '\0');
    assert_null(f);
}

static void test_invalid_args(void **state)
{
    (void)state;
    gpubp_file *f = NULL;
    TS_ERR(gpubp_open(NULL, ts_path("x.bp"), GPUBP_MODE_WRITE, NULL), GPUBP_ERR_INVALID_ARG);
    TS_ERR(gpubp_open(&f, NULL, GPUBP_MODE_WRITE, NULL), GPUBP_ERR_INVALID_ARG);
    TS_ERR(gpubp_open(&f, ts_path("x.bp"), (gpubp_mode)42, NULL), GPUBP_ERR_INVALID_ARG);
    gpubp_file *r = au_open(fixture(), GPUBP_MODE_READ_RANDOM_ACCESS);
    gpubp_variable *g = au_inq(r, "g");
    TS_ERR(gpubp_get(r, g, NULL, GPUBP_SYNC), GPUBP_ERR_INVALID_ARG);
    TS_ERR(gpubp_inquire_variable(NULL, r, "g"), GPUBP_ERR_INVALID_ARG);
    gpubp_variable *v;
    TS_ERR(gpubp_inquire_variable(&v, r, NULL), GPUBP_ERR_INVALID_ARG);
    TS_ERR(gpubp_steps(r, NULL), GPUBP_ERR_INVALID_ARG);
    float buf[24];
    TS_ERR(gpubp_get(r, g, buf, (gpubp_launch)7), GPUBP_ERR_INVALID_ARG);
    TS_OK(gpubp_close(r));
}

static void test_minmax_string_not_supported(void **state)
{
    (void)state;
    gpubp_file *r = au_open(fixture(), GPUBP_MODE_READ_RANDOM_ACCESS);
    gpubp_variable *s = au_inq(r, "s");
    char mn[16], mx[16];
    TS_ERR(gpubp_variable_minmax(s, mn, mx), GPUBP_ERR_NOT_SUPPORTED);
    TS_OK(gpubp_close(r));
}

static void test_strerror(void **state)
{
    (void)state;
    static const int all[] = {GPUBP_OK, GPUBP_END_OF_STREAM, GPUBP_NOT_READY,
                              GPUBP_ERR_INVALID_ARG, GPUBP_ERR_NOT_FOUND,
                              GPUBP_ERR_INVALID_SELECTION, GPUBP_ERR_INVALID_DIMS,
                              GPUBP_ERR_INVALID_STEP, GPUBP_ERR_WRONG_MODE,
                              GPUBP_ERR_TYPE_MISMATCH, GPUBP_ERR_FORMAT, GPUBP_ERR_NOT_BP4,
                              GPUBP_ERR_BP5, GPUBP_ERR_IO, GPUBP_ERR_NOMEM,
                              GPUBP_ERR_NOT_SUPPORTED, GPUBP_ERR_DEVICE,
                              GPUBP_ERR_MEMORY_SPACE, GPUBP_ERR_PARAM, GPUBP_ERR_EXISTS,
                              GPUBP_ERR_CODEC, GPUBP_ERR_UNSUPPORTED_TYPE,
                              GPUBP_ERR_INTERNAL};
    const size_t n = sizeof all / sizeof all[0];
    for (size_t i = 0; i < n; i++) {
        const char *s = gpubp_strerror(all[i]);
        assert_non_null(s);
        assert_true(s[0] != '\0');
        assert_string_not_equal(s, "unknown status");
        for (size_t j = 0; j < i; j++) assert_string_not_equal(s, gpubp_strerror(all[j]));
    }
    assert_string_equal(gpubp_strerror(-12345), "unknown status");
    assert_string_equal(gpubp_strerror(GPUBP_ERR_INVALID_SELECTION), "invalid selection");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_unknown_variable),
        cmocka_unit_test(test_unknown_attribute),
        cmocka_unit_test(test_wrong_ndims),
        cmocka_unit_test(test_selection_outside_shape),
        cmocka_unit_test(test_step_does_not_exist),
        cmocka_unit_test(test_wrong_mode),
        cmocka_unit_test(test_defined_twice),
        cmocka_unit_test(test_bad_params),
        cmocka_unit_test(test_bp5_directory),
        cmocka_unit_test(test_not_bp4),
        cmocka_unit_test(test_invalid_args),
        cmocka_unit_test(test_minmax_string_not_supported),
        cmocka_unit_test(test_strerror),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
