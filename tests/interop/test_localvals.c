/* Issue 18 against golden ADIOS2 output (tests/golden/localvals, see its README.md): local values,
 * long double and one-element string arrays that ADIOS2 2.12.1 wrote read exactly through every
 * API path (whole steps, boxes, memory selections, block selections, step selections,
 * selection_size, min/max, block_info, READ mode, deferred gets, the simulated device); the same
 * content written by libgpubp (gpubp_write_localvals) reads the same, matches ADIOS2's files
 * through libgpubp, and matches the bpls dumps that ADIOS2's bpls printed of libgpubp's files.
 * Types the library cannot read are listed and answer GPUBP_ERR_UNSUPPORTED_TYPE.
 * Usage: test_interop_localvals GOLDEN_DIR WRITER */
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "interop/bpls_dump.h"
#include "memspace/simdev.h"
#include "support/test_support.h"

static const char *golden, *writer;
static char ours[4096]; /* the directory gpubp_write_localvals wrote into */

static const char *gold(const char *name)
{
    static char p[2][4300];
    static int k;
    k ^= 1;
    snprintf(p[k], sizeof p[k], "%s/%s", golden, name);
    return p[k];
}

static const char *mine(const char *name)
{
    static char p[2][4300];
    static int k;
    k ^= 1;
    snprintf(p[k], sizeof p[k], "%s/%s", ours, name);
    return p[k];
}

/* ---- the values both writers wrote ---------------------------------------------------------- */

static int32_t v_i32(int s, int b) { return 100 * (s + 1) + 7 * b - 13; }
static double v_f64(int s, int b) { return 0.5 * s - 1.25 * b + 1e-3; }
static uint8_t v_u8(int s, int b) { return (uint8_t)(250 + b - s); }
static int64_t v_sparse(int s, int b) { return -1000000000000LL * (b + 1) + s; }

static gpubp_file *open_ra(const char *path)
{
    gpubp_file *f = NULL;
    TS_OK(gpubp_open(&f, path, GPUBP_MODE_READ_RANDOM_ACCESS, NULL));
    return f;
}

static gpubp_variable *inq(gpubp_file *f, const char *name)
{
    gpubp_variable *v = NULL;
    TS_OK(gpubp_inquire_variable(&v, f, name));
    return v;
}

static void check_lv_shape(gpubp_variable *v, gpubp_type type, size_t nsteps, size_t nblocks)
{
    gpubp_type t;
    gpubp_shape_kind k;
    size_t nd = 0, dims[1] = {0}, n = 0;
    TS_OK(gpubp_variable_type(v, &t));
    TS_OK(gpubp_variable_shape_kind(v, &k));
    TS_OK(gpubp_variable_ndims(v, &nd));
    assert_int_equal(t, type);
    assert_int_equal(k, GPUBP_SHAPE_LOCAL_VALUE);
    assert_int_equal(nd, 1);
    TS_OK(gpubp_variable_shape(v, GPUBP_MEM_HOST, dims));
    assert_int_equal(dims[0], nblocks);
    TS_OK(gpubp_variable_steps(v, &n));
    if (nsteps) assert_int_equal(n, nsteps); /* 0: READ mode, where steps are counted as read */
}

/* random access: every path of an int32 local value with 4 blocks in each of 3 steps */
static void ra_int32(const char *path)
{
    gpubp_file *f = open_ra(path);
    gpubp_variable *v = inq(f, "lv_i32");
    check_lv_shape(v, GPUBP_TYPE_INT32, 3, 4);
    int32_t a[12], mn, mx;
    size_t bytes = 0, nb = 0;
    /* no step selection: step 0, one element per block */
    TS_OK(gpubp_selection_size(v, &bytes));
    assert_int_equal(bytes, 4 * sizeof(int32_t));
    memset(a, 0x55, sizeof a);
    TS_OK(gpubp_get(f, v, a, GPUBP_SYNC));
    for (int b = 0; b < 4; b++) assert_int_equal(a[b], v_i32(0, b));
    assert_int_equal(a[4], 0x55555555); /* nothing written past the selection */
    /* each step, then all three at once */
    for (int s = 0; s < 3; s++) {
        TS_OK(gpubp_set_step_selection(v, (size_t)s, 1));
        TS_OK(gpubp_variable_blocks(v, (size_t)s, &nb));
        assert_int_equal(nb, 4);
        TS_OK(gpubp_get(f, v, a, GPUBP_SYNC));
        for (int b = 0; b < 4; b++) assert_int_equal(a[b], v_i32(s, b));
        for (int b = 0; b < 4; b++) {
            size_t st = 9, ct = 9;
            TS_OK(gpubp_variable_block_info(v, (size_t)s, (size_t)b, &st, &ct, &mn, &mx));
            assert_int_equal(st, b);
            assert_int_equal(ct, 1);
            assert_int_equal(mn, v_i32(s, b));
            assert_int_equal(mx, v_i32(s, b));
        }
    }
    TS_OK(gpubp_set_step_selection(v, 0, 3));
    TS_OK(gpubp_selection_size(v, &bytes));
    assert_int_equal(bytes, 12 * sizeof(int32_t));
    TS_OK(gpubp_get(f, v, a, GPUBP_SYNC));
    for (int s = 0; s < 3; s++)
        for (int b = 0; b < 4; b++) assert_int_equal(a[4 * s + b], v_i32(s, b));
    TS_OK(gpubp_variable_minmax(v, &mn, &mx));
    assert_int_equal(mn, 87);
    assert_int_equal(mx, 308);
    /* a box [2:3] of step 2 (the issue: [v3, untouched] before the fix) */
    const size_t s2[1] = {2}, c2[1] = {2};
    TS_OK(gpubp_set_step_selection(v, 2, 1));
    TS_OK(gpubp_set_selection(v, 1, s2, c2));
    TS_OK(gpubp_selection_size(v, &bytes));
    assert_int_equal(bytes, 2 * sizeof(int32_t));
    memset(a, 0, sizeof a);
    TS_OK(gpubp_get(f, v, a, GPUBP_SYNC));
    assert_int_equal(a[0], v_i32(2, 2));
    assert_int_equal(a[1], v_i32(2, 3));
    assert_int_equal(a[2], 0);
    /* the box inside a larger buffer */
    const size_t ms[1] = {1}, mc[1] = {4};
    TS_OK(gpubp_set_memory_selection(v, 1, ms, mc));
    memset(a, 0, sizeof a);
    TS_OK(gpubp_get(f, v, a, GPUBP_SYNC));
    assert_int_equal(a[0], 0);
    assert_int_equal(a[1], v_i32(2, 2));
    assert_int_equal(a[2], v_i32(2, 3));
    assert_int_equal(a[3], 0);
    TS_OK(gpubp_set_memory_selection(v, 0, NULL, NULL));
    /* beyond the blocks of the step */
    const size_t s3[1] = {3};
    TS_OK(gpubp_set_selection(v, 1, s3, c2));
    TS_ERR(gpubp_get(f, v, a, GPUBP_SYNC), GPUBP_ERR_INVALID_SELECTION);
    TS_ERR(gpubp_selection_size(v, &bytes), GPUBP_ERR_INVALID_SELECTION);
    /* block selections: one value per selected step (ADIOS2: SelectionSize 1) */
    for (int b = 0; b < 4; b++) {
        TS_OK(gpubp_set_block_selection(v, (size_t)b));
        TS_OK(gpubp_set_step_selection(v, 1, 1));
        TS_OK(gpubp_selection_size(v, &bytes));
        assert_int_equal(bytes, sizeof(int32_t));
        memset(a, 0, sizeof a);
        TS_OK(gpubp_get(f, v, a, GPUBP_SYNC));
        assert_int_equal(a[0], v_i32(1, b));
        assert_int_equal(a[1], 0);
        TS_OK(gpubp_set_step_selection(v, 0, 3));
        TS_OK(gpubp_selection_size(v, &bytes));
        assert_int_equal(bytes, 3 * sizeof(int32_t));
        TS_OK(gpubp_get(f, v, a, GPUBP_SYNC));
        for (int s = 0; s < 3; s++) assert_int_equal(a[s], v_i32(s, b));
        TS_OK(gpubp_variable_minmax(v, &mn, &mx));
        assert_int_equal(mn, v_i32(0, b));
        assert_int_equal(mx, v_i32(2, b));
    }
    TS_OK(gpubp_set_block_selection(v, 4));
    TS_ERR(gpubp_get(f, v, a, GPUBP_SYNC), GPUBP_ERR_INVALID_SELECTION);
    TS_ERR(gpubp_selection_size(v, &bytes), GPUBP_ERR_INVALID_SELECTION);
    /* deferred */
    gpubp_variable *w = inq(f, "lv_u8");
    check_lv_shape(w, GPUBP_TYPE_UINT8, 3, 4);
    uint8_t u[12] = {0};
    TS_OK(gpubp_set_step_selection(w, 0, 3));
    TS_OK(gpubp_get(f, w, u, GPUBP_DEFERRED));
    TS_OK(gpubp_perform_gets(f));
    for (int s = 0; s < 3; s++)
        for (int b = 0; b < 4; b++) assert_int_equal(u[4 * s + b], v_u8(s, b));
    TS_OK(gpubp_close(f));
}

static void ra_other_types(const char *path)
{
    gpubp_file *f = open_ra(path);
    gpubp_variable *v = inq(f, "lv_f64");
    check_lv_shape(v, GPUBP_TYPE_DOUBLE, 3, 4);
    double d[12], dmin, dmax;
    TS_OK(gpubp_set_step_selection(v, 0, 3));
    TS_OK(gpubp_get(f, v, d, GPUBP_SYNC));
    for (int s = 0; s < 3; s++)
        for (int b = 0; b < 4; b++) assert_true(d[4 * s + b] == v_f64(s, b));
    TS_OK(gpubp_variable_minmax(v, &dmin, &dmax));
    assert_true(dmin == v_f64(0, 3) && dmax == v_f64(2, 0));

    v = inq(f, "lv_c128");
    check_lv_shape(v, GPUBP_TYPE_DOUBLE_COMPLEX, 3, 4);
    double c[24];
    TS_OK(gpubp_set_step_selection(v, 0, 3));
    TS_OK(gpubp_get(f, v, c, GPUBP_SYNC));
    for (int s = 0; s < 3; s++)
        for (int b = 0; b < 4; b++) {
            assert_true(c[2 * (4 * s + b)] == s + b);
            assert_true(c[2 * (4 * s + b) + 1] == -b);
        }

#if LDBL_MANT_DIG == 64
    v = inq(f, "lv_ld");
    check_lv_shape(v, GPUBP_TYPE_LONG_DOUBLE, 3, 4);
    long double l[12];
    assert_int_equal(gpubp_type_size(GPUBP_TYPE_LONG_DOUBLE), sizeof(long double));
    TS_OK(gpubp_set_step_selection(v, 0, 3));
    TS_OK(gpubp_get(f, v, l, GPUBP_SYNC));
    for (int s = 0; s < 3; s++)
        for (int b = 0; b < 4; b++) assert_true(l[4 * s + b] == (long double)(s * 4 + b) / 3.0L);
    long double lmin, lmax;
    TS_OK(gpubp_variable_minmax(v, &lmin, &lmax));
    assert_true(lmin == 0.0L && lmax == 11.0L / 3.0L);
#endif

    /* strings: each value and its NUL, block after block */
    v = inq(f, "lv_str");
    check_lv_shape(v, GPUBP_TYPE_STRING, 3, 4);
    char buf[128];
    size_t bytes = 0;
    TS_OK(gpubp_set_step_selection(v, 1, 1));
    TS_OK(gpubp_selection_size(v, &bytes));
    assert_int_equal(bytes, 4 * 5);
    TS_OK(gpubp_get(f, v, buf, GPUBP_SYNC));
    assert_memory_equal(buf, "w0s1\0w1s1\0w2s1\0w3s1\0", 20);
    const size_t s1[1] = {1}, c2[1] = {2};
    TS_OK(gpubp_set_selection(v, 1, s1, c2));
    TS_OK(gpubp_get(f, v, buf, GPUBP_SYNC));
    assert_memory_equal(buf, "w1s1\0w2s1\0", 10);
    TS_OK(gpubp_set_block_selection(v, 3));
    TS_OK(gpubp_set_step_selection(v, 0, 3));
    TS_OK(gpubp_selection_size(v, &bytes));
    assert_int_equal(bytes, 15);
    TS_OK(gpubp_get(f, v, buf, GPUBP_SYNC));
    assert_memory_equal(buf, "w3s0\0w3s1\0w3s2\0", 15);
    TS_ERR(gpubp_variable_minmax(v, NULL, NULL), GPUBP_ERR_NOT_SUPPORTED);

    /* absent from step 1, 3 blocks in step 0, 2 in step 2 */
    v = inq(f, "lv_sparse");
    check_lv_shape(v, GPUBP_TYPE_INT64, 2, 2); /* no step selection: the last step's blocks */
    size_t ds = 0, nb = 0;
    TS_OK(gpubp_variable_dataset_step(v, 1, &ds));
    assert_int_equal(ds, 2);
    TS_OK(gpubp_variable_blocks(v, 0, &nb));
    assert_int_equal(nb, 3);
    int64_t p[8];
    TS_OK(gpubp_set_step_selection(v, 0, 2));
    TS_OK(gpubp_selection_size(v, &bytes));
    assert_int_equal(bytes, 5 * sizeof(int64_t)); /* each step its own blocks */
    TS_OK(gpubp_get(f, v, p, GPUBP_SYNC));
    for (int b = 0; b < 3; b++) assert_int_equal(p[b], v_sparse(0, b));
    for (int b = 0; b < 2; b++) assert_int_equal(p[3 + b], v_sparse(2, b));
    TS_OK(gpubp_close(f));
}

/* READ mode: the step's blocks, absent variables absent */
static void read_mode(const char *path)
{
    gpubp_file *f = NULL;
    TS_OK(gpubp_open(&f, path, GPUBP_MODE_READ, NULL));
    int s = 0;
    while (gpubp_begin_step(f) == GPUBP_OK) {
        gpubp_variable *v = inq(f, "lv_i32");
        check_lv_shape(v, GPUBP_TYPE_INT32, 0, 4);
        int32_t a[4];
        const size_t z[1] = {0}, all[1] = {4};
        if (s > 0) TS_OK(gpubp_set_selection(v, 1, z, all)); /* a box replaces the block */
        TS_OK(gpubp_get(f, v, a, GPUBP_SYNC));
        for (int b = 0; b < 4; b++) assert_int_equal(a[b], v_i32(s, b));
        TS_OK(gpubp_set_block_selection(v, 2));
        memset(a, 0, sizeof a);
        TS_OK(gpubp_get(f, v, a, GPUBP_DEFERRED));
        gpubp_variable *p = NULL;
        int rc = gpubp_inquire_variable(&p, f, "lv_sparse");
        if (s == 1) {
            assert_int_equal(rc, GPUBP_ERR_NOT_FOUND);
        } else {
            TS_OK(rc);
            size_t dims[1] = {0};
            TS_OK(gpubp_variable_shape(p, GPUBP_MEM_HOST, dims));
            assert_int_equal(dims[0], s == 0 ? 3 : 2);
            int64_t q[3];
            TS_OK(gpubp_get(f, p, q, GPUBP_SYNC));
            for (size_t b = 0; b < dims[0]; b++) assert_int_equal(q[b], v_sparse(s, (int)b));
        }
        TS_OK(gpubp_end_step(f));
        assert_int_equal(a[0], v_i32(s, 2));
        assert_int_equal(a[1], 0);
        s++;
    }
    assert_int_equal(s, 3);
    TS_OK(gpubp_close(f));
}

/* long double arrays, values, local arrays and attributes */
static void long_doubles(const char *path)
{
    gpubp_file *f = open_ra(path);
    gpubp_type t;
    size_t n = 0;
    int arr = -1;
    unsigned char raw[3][16];
    double d;
    TS_OK(gpubp_inquire_attribute(f, "ld_attr", &t, &n, &arr));
    assert_int_equal(t, GPUBP_TYPE_LONG_DOUBLE);
    assert_int_equal(n, 1);
    assert_int_equal(arr, 0);
    TS_OK(gpubp_attribute_data(f, "ld_attr", raw));
    TS_OK(gpubp_long_double_to_double(raw[0], &d));
    assert_true(d == 0.1);
    TS_OK(gpubp_inquire_attribute(f, "ld_attr_arr", &t, &n, &arr));
    assert_int_equal(n, 3);
    assert_int_equal(arr, 1);
    TS_OK(gpubp_attribute_data(f, "ld_attr_arr", raw));
    TS_OK(gpubp_long_double_to_double(raw[2], &d));
    assert_true(d == 1.0 / 3.0);
    TS_OK(gpubp_inquire_attribute(f, "ld_arr/position", &t, &n, &arr));
    assert_int_equal(t, GPUBP_TYPE_LONG_DOUBLE);
    TS_OK(gpubp_attribute_data(f, "ld_arr/position", raw));
    TS_OK(gpubp_long_double_to_double(raw[0], &d));
    assert_true(d == 0.5);
    assert_string_equal(gpubp_type_name(GPUBP_TYPE_LONG_DOUBLE), "long double");

    gpubp_variable *v = inq(f, "ld_arr");
    unsigned char a[12][16], mn[16], mx[16];
    TS_OK(gpubp_set_step_selection(v, 0, 2));
    TS_OK(gpubp_get(f, v, a, GPUBP_SYNC));
    const double want[2][6] = {{1.0 / 3.0, -0.0, HUGE_VAL, -0.0, HUGE_VAL, -0.0},
                               {4.0 / 3.0, -0.0, HUGE_VAL, -0.0, HUGE_VAL, -2.5}};
    for (int s = 0; s < 2; s++)
        for (int i = 0; i < 6; i++) {
            TS_OK(gpubp_long_double_to_double(a[6 * s + i], &d));
            assert_true(d == want[s][i]);
        }
    /* -LDBL_TRUE_MIN: exponent 0, significand 1 */
    assert_int_equal(a[3][0], 1);
    assert_int_equal(a[3][9], 0x80);
    TS_OK(gpubp_variable_minmax(v, mn, mx));
    TS_OK(gpubp_long_double_to_double(mn, &d));
    assert_true(d == -2.5);
    TS_OK(gpubp_long_double_to_double(mx, &d));
    assert_true(d == HUGE_VAL);
    assert_int_equal(mx[9] & 0x7f, 0x7f); /* inf, not 1e4000 (which is the same double) */
    assert_int_equal(mx[7], 0x80);
    assert_int_equal(mx[6], 0);
    v = inq(f, "ld_value");
    TS_OK(gpubp_set_step_selection(v, 1, 1));
    TS_OK(gpubp_get(f, v, a, GPUBP_SYNC));
#if LDBL_MANT_DIG == 64
    long double lv;
    memcpy(&lv, a[0], sizeof lv);
    assert_true(lv == 2.0L / 7.0L);
    v = inq(f, "ld_local");
    long double loc[3];
    TS_OK(gpubp_set_step_selection(v, 1, 1));
    TS_OK(gpubp_set_block_selection(v, 0));
    TS_OK(gpubp_get(f, v, loc, GPUBP_SYNC));
    assert_true(loc[0] == 2.0L && loc[1] == 2.0L && loc[2] == 3.0L);
#endif
    TS_OK(gpubp_close(f));
}

/* single strings and one-element string arrays stay apart */
static void string_arrays(const char *path)
{
    gpubp_file *f = open_ra(path);
    static const struct {
        const char *name;
        size_t n;
        int is_array;
        const char *first;
    } want[] = {{"single", 1, 0, "one string"},      {"array1", 1, 1, "only element"},
                {"array2", 2, 1, "first"},            {"array1_empty", 1, 1, ""},
                {"single_empty", 1, 0, ""},           {"x/unitSI_names", 1, 1, "only element"}};
    for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
        gpubp_type t;
        size_t n = 0;
        int arr = -1;
        const char *s = NULL;
        TS_OK(gpubp_inquire_attribute(f, want[i].name, &t, &n, &arr));
        assert_int_equal(t, GPUBP_TYPE_STRING);
        assert_int_equal(n, want[i].n);
        assert_int_equal(arr, want[i].is_array);
        TS_OK(gpubp_attribute_string(f, want[i].name, 0, &s));
        assert_string_equal(s, want[i].first);
    }
    TS_OK(gpubp_close(f));
}

/* ---- the cases ------------------------------------------------------------------------------ */

static void adios2_localvals(void **state)
{
    (void)state;
    ra_int32(gold("localvals.bp"));
    ra_other_types(gold("localvals.bp"));
    read_mode(gold("localvals.bp"));
}

static void gpubp_localvals(void **state)
{
    (void)state;
    ra_int32(mine("localvals.bp"));
    ra_other_types(mine("localvals.bp"));
    read_mode(mine("localvals.bp"));
}

static void adios2_long_double(void **state)
{
    (void)state;
    long_doubles(gold("longdouble.bp"));
}

static void gpubp_long_double(void **state)
{
    (void)state;
    long_doubles(mine("longdouble.bp"));
}

static void adios2_string_arrays(void **state)
{
    (void)state;
    string_arrays(gold("strattrs.bp"));
}

static void gpubp_string_arrays(void **state)
{
    (void)state;
    string_arrays(mine("strattrs.bp"));
}

static const char *const names[] = {"localvals.bp", "longdouble.bp", "strattrs.bp"};

/* ADIOS2's files read as ADIOS2's bpls printed them; libgpubp's files as ADIOS2's bpls printed
 * those (tests/golden/localvals/gpubp/), in both read modes */
static void bpls_dumps(void **state)
{
    (void)state;
    int diffs = 0;
    for (size_t i = 0; i < 3; i++)
        for (int m = 0; m < 2; m++) {
            gpubp_mode mode = m ? GPUBP_MODE_READ : GPUBP_MODE_READ_RANDOM_ACCESS;
            char prefix[4400];
            diffs += dump_check_dataset(gold(names[i]), gold(names[i]), mode);
            snprintf(prefix, sizeof prefix, "%s/gpubp/%s", golden, names[i]);
            diffs += dump_check_dataset(mine(names[i]), prefix, mode);
        }
    assert_int_equal(diffs, 0);
}

/* libgpubp's files and ADIOS2's, compared through libgpubp: every name, type, kind, step, block,
 * value and attribute */
static void same_as_adios2(void **state)
{
    (void)state;
    int diffs = 0;
    for (size_t i = 0; i < 3; i++) diffs += dump_compare_datasets(mine(names[i]), gold(names[i]));
    assert_int_equal(diffs, 0);
}

/* ---- types this library cannot read --------------------------------------------------------- */

/* Sets the type byte of the md.0 entry (variable or attribute) named `name` (every step) to id. */
static void patch_type(const char *dataset, const char *name, unsigned char id)
{
    char p[4400];
    snprintf(p, sizeof p, "%s/md.0", dataset);
    size_t len = 0;
    unsigned char *md = ts_read_file(p, &len);
    assert_non_null(md);
    size_t nl = strlen(name), hits = 0;
    for (size_t i = 2; i + nl + 3 < len; i++) {
        /* u16 name length, name, u8 order, u8 0, u8 type */
        if (md[i - 2] != (nl & 0xff) || md[i - 1] != (nl >> 8) || memcmp(md + i, name, nl)) continue;
        md[i + nl + 2] = id;
        hits++;
    }
    assert_true(hits > 0);
    assert_int_equal(ts_write_file(p, md, len), 0);
    free(md);
}

static void unsupported_types(void **state)
{
    (void)state;
    const char *d = ts_path("unknown.bp");
    assert_int_equal(ts_copy_dataset(mine("localvals.bp"), d), 0);
    patch_type(d, "lv_u8", 3);   /* ids 3 and 8 are unused by ADIOS2 */
    patch_type(d, "lv_i32", 8);
    gpubp_file *f = open_ra(d);
    size_t n = 0;
    const char *const *vars;
    TS_OK(gpubp_available_variables(f, &n, &vars));
    assert_int_equal(n, 8); /* still listed */
    gpubp_variable *v = inq(f, "lv_u8");
    gpubp_type t;
    gpubp_shape_kind k;
    size_t nb = 0, st, ct, bytes;
    TS_OK(gpubp_variable_type(v, &t));
    assert_int_equal((int)t, 3);
    assert_int_equal(gpubp_type_size(t), 0);
    TS_OK(gpubp_variable_shape_kind(v, &k));
    assert_int_equal(k, GPUBP_SHAPE_LOCAL_VALUE);
    TS_OK(gpubp_variable_blocks(v, 2, &nb));
    assert_int_equal(nb, 4);
    TS_OK(gpubp_variable_block_info(v, 2, 3, &st, &ct, NULL, NULL));
    assert_int_equal(st, 3);
    unsigned char buf[64];
    TS_ERR(gpubp_get(f, v, buf, GPUBP_SYNC), GPUBP_ERR_UNSUPPORTED_TYPE);
    assert_non_null(strstr(gpubp_last_error(), "type id 3"));
    assert_non_null(strstr(gpubp_last_error(), "lv_u8"));
    TS_ERR(gpubp_selection_size(v, &bytes), GPUBP_ERR_UNSUPPORTED_TYPE);
    TS_ERR(gpubp_variable_minmax(v, buf, buf + 16), GPUBP_ERR_UNSUPPORTED_TYPE);
    TS_ERR(gpubp_variable_block_info(v, 0, 0, NULL, NULL, buf, NULL), GPUBP_ERR_UNSUPPORTED_TYPE);
    /* the rest of the dataset reads as before */
    v = inq(f, "lv_f64");
    double x[4];
    TS_OK(gpubp_get(f, v, x, GPUBP_SYNC));
    assert_true(x[3] == v_f64(0, 3));
    TS_OK(gpubp_close(f));
    /* READ mode too */
    TS_OK(gpubp_open(&f, d, GPUBP_MODE_READ, NULL));
    assert_int_equal(gpubp_begin_step(f), GPUBP_OK);
    v = inq(f, "lv_i32");
    TS_ERR(gpubp_get(f, v, buf, GPUBP_SYNC), GPUBP_ERR_UNSUPPORTED_TYPE);
    TS_OK(gpubp_end_step(f));
    TS_OK(gpubp_close(f));

    /* attributes: the six long double attributes were dropped; an unknown id is kept */
    d = ts_path("unknown_attr.bp");
    assert_int_equal(ts_copy_dataset(mine("longdouble.bp"), d), 0);
    patch_type(d, "ld_attr_arr", 8);
    f = open_ra(d);
    const char *const *attrs;
    TS_OK(gpubp_available_attributes(f, &n, &attrs));
    assert_int_equal(n, 3);
    int arr = -1;
    TS_OK(gpubp_inquire_attribute(f, "ld_attr_arr", &t, &n, &arr));
    assert_int_equal((int)t, 8);
    assert_int_equal(n, 3);
    TS_ERR(gpubp_attribute_data(f, "ld_attr_arr", buf), GPUBP_ERR_UNSUPPORTED_TYPE);
    assert_non_null(strstr(gpubp_last_error(), "type id 8"));
    const char *s;
    TS_ERR(gpubp_attribute_string(f, "ld_attr_arr", 0, &s), GPUBP_ERR_UNSUPPORTED_TYPE);
    TS_OK(gpubp_attribute_data(f, "ld_attr", buf));
    TS_OK(gpubp_close(f));
}

/* ---- the write side's contract -------------------------------------------------------------- */

static void define_rules(void **state)
{
    (void)state;
    gpubp_file *f = NULL;
    gpubp_variable *v = NULL;
    TS_OK(gpubp_open(&f, ts_path("rules.bp"), GPUBP_MODE_WRITE, NULL));
    const size_t lv[1] = {GPUBP_LOCAL_VALUE_DIM}, lv2[2] = {GPUBP_LOCAL_VALUE_DIM, 4};
    const size_t joined[1] = {(size_t)-2}, big[1] = {SIZE_MAX}, one[1] = {1}, zero[1] = {0};
    TS_ERR(gpubp_define_variable(&v, f, "a", GPUBP_TYPE_INT32, 2, lv2, zero, one),
           GPUBP_ERR_INVALID_DIMS);
    TS_ERR(gpubp_define_variable(&v, f, "b", GPUBP_TYPE_INT32, 1, joined, zero, one),
           GPUBP_ERR_INVALID_DIMS);
    TS_ERR(gpubp_define_variable(&v, f, "c", GPUBP_TYPE_INT32, 1, big, zero, one),
           GPUBP_ERR_INVALID_DIMS);
    TS_ERR(gpubp_define_variable(&v, f, "d", GPUBP_TYPE_STRING, 1, one, zero, one),
           GPUBP_ERR_INVALID_DIMS);
    TS_ERR(gpubp_define_variable(&v, f, "e", GPUBP_TYPE_STRING_ARRAY, 0, NULL, NULL, NULL),
           GPUBP_ERR_INVALID_ARG);
    TS_OK(gpubp_define_variable(&v, f, "lv", GPUBP_TYPE_INT16, 1, lv, NULL, NULL));
    gpubp_shape_kind k;
    TS_OK(gpubp_variable_shape_kind(v, &k));
    assert_int_equal(k, GPUBP_SHAPE_LOCAL_VALUE);
    TS_ERR(gpubp_set_selection(v, 1, zero, one), GPUBP_ERR_WRONG_MODE);
    TS_ERR(gpubp_variable_add_operation(v, "zlib", NULL), GPUBP_ERR_NOT_SUPPORTED);
    const char *none[1] = {NULL};
    TS_ERR(gpubp_define_attribute(f, "sa", GPUBP_TYPE_STRING_ARRAY, none, 1), GPUBP_ERR_INVALID_ARG);
    unsigned char ld[16];
    TS_OK(gpubp_long_double_from_double(ld, -0.0));
    assert_int_equal(ld[9], 0x80);
    TS_ERR(gpubp_long_double_from_double(NULL, 1.0), GPUBP_ERR_INVALID_ARG);
    TS_OK(gpubp_close(f));
}

/* every double converts to long double and back exactly */
static void long_double_conversions(void **state)
{
    (void)state;
    const double vals[] = {0.0, -0.0, 1.0, -2.5, 1.0 / 3.0, DBL_MAX, -DBL_MIN, DBL_TRUE_MIN,
                           -DBL_TRUE_MIN * 3, HUGE_VAL, -HUGE_VAL, 1e-310, 123456789.125};
    for (size_t i = 0; i < sizeof vals / sizeof vals[0]; i++) {
        unsigned char b[16];
        double back = 0;
        TS_OK(gpubp_long_double_from_double(b, vals[i]));
        TS_OK(gpubp_long_double_to_double(b, &back));
        assert_memory_equal(&back, &vals[i], sizeof back);
#if LDBL_MANT_DIG == 64
        long double l = vals[i], got;
        memcpy(&got, b, sizeof got);
        assert_memory_equal(&got, &l, 10);
#endif
    }
    unsigned char nan[16];
    double d;
    TS_OK(gpubp_long_double_from_double(nan, NAN));
    TS_OK(gpubp_long_double_to_double(nan, &d));
    assert_true(isnan(d));
}

/* ---- device memory (the simulated device: its allocations are the device's memory) ----------- */

static void device_memory(void **state)
{
    (void)state;
    gpubp_file *f = NULL;
    TS_OK(gpubp_open(&f, gold("localvals.bp"), GPUBP_MODE_READ_RANDOM_ACCESS, "device=simulated"));
    gpubp_variable *v = inq(f, "lv_i32");
    int32_t *d = gbp_sim_alloc(16 * sizeof *d);
    assert_non_null(d);
    memset(d, 0, 16 * sizeof *d);
    TS_OK(gpubp_set_step_selection(v, 0, 3));
    TS_OK(gpubp_get(f, v, d, GPUBP_SYNC));
    gpubp_memory_space sp;
    TS_OK(gpubp_variable_memory_space(v, &sp));
    assert_int_equal(sp, GPUBP_MEM_GPU);
    for (int s = 0; s < 3; s++)
        for (int b = 0; b < 4; b++) assert_int_equal(d[4 * s + b], v_i32(s, b));
    /* a box into a larger device buffer, then a block */
    const size_t st[1] = {1}, ct[1] = {3}, ms[1] = {2}, mc[1] = {6};
    memset(d, 0, 16 * sizeof *d);
    TS_OK(gpubp_set_step_selection(v, 2, 1));
    TS_OK(gpubp_set_selection(v, 1, st, ct));
    TS_OK(gpubp_set_memory_selection(v, 1, ms, mc));
    TS_OK(gpubp_get(f, v, d, GPUBP_DEFERRED));
    TS_OK(gpubp_perform_gets(f));
    assert_int_equal(d[1], 0);
    for (int b = 1; b < 4; b++) assert_int_equal(d[1 + b], v_i32(2, b));
    assert_int_equal(d[5], 0);
    TS_OK(gpubp_set_memory_selection(v, 0, NULL, NULL));
    TS_OK(gpubp_set_block_selection(v, 3));
    TS_OK(gpubp_set_step_selection(v, 0, 3));
    memset(d, 0, 16 * sizeof *d);
    TS_OK(gpubp_get(f, v, d, GPUBP_SYNC));
    for (int s = 0; s < 3; s++) assert_int_equal(d[s], v_i32(s, 3));
    assert_int_equal(d[3], 0);
    TS_OK(gpubp_close(f));
    /* long double arrays read into device memory */
    TS_OK(gpubp_open(&f, gold("longdouble.bp"), GPUBP_MODE_READ_RANDOM_ACCESS, "device=simulated"));
    unsigned char *l = gbp_sim_alloc(6 * 16);
    assert_non_null(l);
    v = inq(f, "ld_arr");
    TS_OK(gpubp_get(f, v, l, GPUBP_SYNC));
    double x;
    TS_OK(gpubp_long_double_to_double(l, &x));
    assert_true(x == 1.0 / 3.0);
    TS_OK(gpubp_close(f));
    /* written from device memory: local values read back on the host */
    const char *p = ts_path("device_lv.bp");
    TS_OK(gpubp_open(&f, p, GPUBP_MODE_WRITE, "device=simulated"));
    const size_t lv[1] = {GPUBP_LOCAL_VALUE_DIM}, six = 6, zero = 0;
    gpubp_variable *w, *la;
    TS_OK(gpubp_define_variable(&w, f, "lv", GPUBP_TYPE_INT32, 1, lv, NULL, NULL));
    TS_OK(gpubp_define_variable(&la, f, "ld", GPUBP_TYPE_LONG_DOUBLE, 1, &six, &zero, &six));
    TS_OK(gpubp_begin_step(f));
    for (int b = 0; b < 5; b++) {
        d[b] = 1000 + b;
        TS_OK(gpubp_put(f, w, d + b, b % 2 ? GPUBP_DEFERRED : GPUBP_SYNC));
    }
    TS_ERR(gpubp_put(f, la, l, GPUBP_SYNC), GPUBP_ERR_NOT_SUPPORTED);
    TS_OK(gpubp_end_step(f));
    TS_OK(gpubp_close(f));
    f = open_ra(p);
    v = inq(f, "lv");
    check_lv_shape(v, GPUBP_TYPE_INT32, 1, 5);
    int32_t h[5];
    TS_OK(gpubp_get(f, v, h, GPUBP_SYNC));
    for (int b = 0; b < 5; b++) assert_int_equal(h[b], 1000 + b);
    TS_OK(gpubp_close(f));
    gbp_sim_free(d);
    gbp_sim_free(l);
}

static int setup(void **state)
{
    (void)state;
    snprintf(ours, sizeof ours, "%s", ts_path("ours"));
    char cmd[9000];
    snprintf(cmd, sizeof cmd, "mkdir -p '%s' && '%s' '%s'", ours, writer, ours);
    int st = system(cmd);
    return st == 0 ? 0 : -1;
}

int main(int argc, char **argv)
{
    if (argc < 3) {
        fprintf(stderr, "usage: %s GOLDEN_DIR WRITER\n", argv[0]);
        return 2;
    }
#if LDBL_MANT_DIG != 64
    fprintf(stderr, "long double is not the x87 80-bit format here: skipped\n");
    return TS_SKIP_CODE;
#endif
    golden = argv[1];
    writer = argv[2];
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(adios2_localvals),     cmocka_unit_test(gpubp_localvals),
        cmocka_unit_test(adios2_long_double),   cmocka_unit_test(gpubp_long_double),
        cmocka_unit_test(adios2_string_arrays), cmocka_unit_test(gpubp_string_arrays),
        cmocka_unit_test(bpls_dumps),           cmocka_unit_test(same_as_adios2),
        cmocka_unit_test(unsupported_types),    cmocka_unit_test(define_rules),
        cmocka_unit_test(long_double_conversions), cmocka_unit_test(device_memory),
    };
    return cmocka_run_group_tests(tests, setup, NULL);
}
