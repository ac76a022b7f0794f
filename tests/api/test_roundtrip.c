/* Round trips through the public API: every type, every variable kind, several blocks and steps,
 * attributes, append, WRITE replacing a dataset. Every dataset written passes bp4verify.py. */
#include "support/api_util.h"

enum { NARR = 7, NSTEPS_T = 2 };

/* "kind/<short name of ts_types[k]>", in a static buffer */
static const char *types_name(const char *kind, size_t k)
{
    static char nm[64];
    snprintf(nm, sizeof nm, "%s/%s", kind, ts_types[k].name);
    return nm;
}

/* asserts the type, the shape kind and the number of dimensions of v */
static void check_var_kind(gpubp_variable *v, gpubp_type type, gpubp_shape_kind kind, size_t ndims)
{
    gpubp_type t;
    TS_OK(gpubp_variable_type(v, &t));
    assert_int_equal(t, type);
    gpubp_shape_kind sk;
    TS_OK(gpubp_variable_shape_kind(v, &sk));
    assert_int_equal(sk, kind);
    size_t nd = 9;
    TS_OK(gpubp_variable_ndims(v, &nd));
    assert_int_equal(nd, ndims);
}

/* Every numeric type as a 1-D global array and a global single value, 2 steps; then
 * opened in `mode` after bp4verify.py accepted it. */
static gpubp_file *open_types(const char *name, gpubp_mode mode)
{
    const char *path = ts_path(name);
    gpubp_file *w = au_open(path, GPUBP_MODE_WRITE);
    gpubp_variable *arr[TS_NTYPES], *val[TS_NTYPES];
    size_t shape[1] = {NARR};
    for (size_t k = 0; k < TS_NTYPES; k++) {
        arr[k] = ts_define(w, types_name("arr", k), ts_types[k].type, 1, shape, NULL);
        val[k] = ts_define(w, types_name("val", k), ts_types[k].type, 0, NULL, NULL);
    }
    for (int s = 0; s < NSTEPS_T; s++) {
        TS_OK(gpubp_begin_step(w));
        for (size_t k = 0; k < TS_NTYPES; k++) {
            unsigned char buf[NARR * 16];
            ts_fill(ts_types[k].type, buf, NARR, s);
            TS_OK(gpubp_put(w, arr[k], buf, GPUBP_SYNC));
            /* the single value: element 3 + s of the array */
            TS_OK(gpubp_put(w, val[k], buf + (3 + (size_t)s) * ts_types[k].size, GPUBP_SYNC));
        }
        TS_OK(gpubp_end_step(w));
    }
    TS_OK(gpubp_close(w));
    AU_CHECK(path);
    return au_open(path, mode);
}

/* asserts the min and max (`size` bytes each) of block 0 of step s of v; its start and count go
 * to st and ct (NULL: not asked for) */
static void check_block_minmax(gpubp_variable *v, size_t s, size_t *st, size_t *ct, const void *wmn,
                               const void *wmx, size_t size)
{
    unsigned char mn[16], mx[16];
    TS_OK(gpubp_variable_block_info(v, s, 0, st, ct, mn, mx));
    assert_memory_equal(mn, wmn, size);
    assert_memory_equal(mx, wmx, size);
}

static void test_types_arrays(void **state)
{
    (void)state;
    gpubp_file *r = open_types("types_arr.bp", GPUBP_MODE_READ_RANDOM_ACCESS);
    au_steps(r, NSTEPS_T);
    for (size_t k = 0; k < TS_NTYPES; k++) {
        gpubp_variable *v = au_inq(r, types_name("arr", k));
        check_var_kind(v, ts_types[k].type, GPUBP_SHAPE_GLOBAL_ARRAY, 1);
        assert_string_equal(gpubp_type_name(ts_types[k].type), ts_types[k].adios);
        assert_int_equal(gpubp_type_size(ts_types[k].type), ts_types[k].size);
        size_t dims[1] = {0};
        TS_OK(gpubp_variable_shape(v, GPUBP_MEM_HOST, dims));
        assert_int_equal(dims[0], NARR);
        au_var_steps(v, NSTEPS_T);
        for (int s = 0; s < NSTEPS_T; s++) {
            unsigned char want[NARR * 16], got[NARR * 16 + 16];
            ts_fill(ts_types[k].type, want, NARR, s);
            memset(got, 0xA5, sizeof got);
            au_get_step(r, v, (size_t)s, got, NARR * ts_types[k].size);
            assert_memory_equal(got, want, NARR * ts_types[k].size);
            assert_int_equal(got[NARR * ts_types[k].size], 0xA5); /* nothing past the box */
            /* per-block min/max as the writer computed them */
            unsigned char wmn[16], wmx[16];
            ts_minmax(ts_types[k].type, ts_types[k].size, want, NARR, wmn, wmx);
            size_t bst[1] = {99}, bct[1] = {0};
            check_block_minmax(v, (size_t)s, bst, bct, wmn, wmx, ts_types[k].size);
            assert_int_equal(bst[0], 0);
            assert_int_equal(bct[0], NARR);
        }
    }
    TS_OK(gpubp_close(r));
}

static void test_types_single_values(void **state)
{
    (void)state;
    gpubp_file *r = open_types("types_val.bp", GPUBP_MODE_READ_RANDOM_ACCESS);
    for (size_t k = 0; k < TS_NTYPES; k++) {
        gpubp_variable *v = au_inq(r, types_name("val", k));
        check_var_kind(v, ts_types[k].type, GPUBP_SHAPE_GLOBAL_VALUE, 0);
        for (int s = 0; s < NSTEPS_T; s++) {
            unsigned char all[NARR * 16], got[16];
            ts_fill(ts_types[k].type, all, NARR, s);
            const unsigned char *want = all + (3 + (size_t)s) * ts_types[k].size;
            au_get_step(r, v, (size_t)s, got, ts_types[k].size);
            assert_memory_equal(got, want, ts_types[k].size);
            /* for single values min = max = the value */
            check_block_minmax(v, (size_t)s, NULL, NULL, want, want, ts_types[k].size);
        }
    }
    TS_OK(gpubp_close(r));
}

/* The same file read step by step in READ mode. */
static void test_types_read_mode(void **state)
{
    (void)state;
    gpubp_file *r = open_types("types_rd.bp", GPUBP_MODE_READ);
    int s = 0;
    int rc;
    while ((rc = gpubp_begin_step(r)) == GPUBP_OK) {
        for (size_t k = 0; k < TS_NTYPES; k++) {
            unsigned char want[NARR * 16], got[NARR * 16];
            ts_fill(ts_types[k].type, want, NARR, s);
            gpubp_variable *v = au_inq(r, types_name("arr", k));
            TS_OK(gpubp_get(r, v, got, GPUBP_SYNC));
            assert_memory_equal(got, want, NARR * ts_types[k].size);
            v = au_inq(r, types_name("val", k));
            TS_OK(gpubp_get(r, v, got, GPUBP_SYNC));
            assert_memory_equal(got, want + (3 + (size_t)s) * ts_types[k].size, ts_types[k].size);
        }
        TS_OK(gpubp_end_step(r));
        s++;
    }
    assert_int_equal(rc, GPUBP_END_OF_STREAM);
    assert_int_equal(s, NSTEPS_T);
    TS_OK(gpubp_close(r));
}

static const char *const notes[] = {"first step", "", "a longer string, with punctuation: {x,y} \"q\" / \\ \xc3\xa9", "last"};
#define NNOTES (sizeof notes / sizeof notes[0])

static void test_string_values(void **state)
{
    (void)state;
    const char *path = ts_path("strings.bp");
    gpubp_file *w = au_open(path, GPUBP_MODE_WRITE);
    gpubp_variable *v = ts_define(w, "note", GPUBP_TYPE_STRING, 0, NULL, NULL);
    for (size_t s = 0; s < NNOTES; s++) ts_put_step(w, v, notes[s], GPUBP_SYNC);
    gpubp_file *r = au_reopen(w, path, GPUBP_MODE_READ_RANDOM_ACCESS);
    v = au_inq(r, "note");
    gpubp_type t;
    TS_OK(gpubp_variable_type(v, &t));
    assert_int_equal(t, GPUBP_TYPE_STRING);
    assert_string_equal(gpubp_type_name(t), "string");
    au_var_steps(v, NNOTES);
    for (size_t s = 0; s < NNOTES; s++) {
        char buf[256];
        memset(buf, 'Z', sizeof buf);
        au_get_step(r, v, s, buf, strlen(notes[s]) + 1);
        assert_string_equal(buf, notes[s]);
    }
    TS_OK(gpubp_close(r));

    /* READ mode too */
    r = au_open(path, GPUBP_MODE_READ);
    for (size_t s = 0; s < NNOTES; s++) {
        TS_OK(gpubp_begin_step(r));
        v = au_inq(r, "note");
        size_t bytes = 0;
        TS_OK(gpubp_selection_size(v, &bytes));
        assert_int_equal(bytes, strlen(notes[s]) + 1);
        char buf[256];
        TS_OK(gpubp_get(r, v, buf, GPUBP_SYNC));
        assert_string_equal(buf, notes[s]);
        TS_OK(gpubp_end_step(r));
    }
    assert_int_equal(gpubp_begin_step(r), GPUBP_END_OF_STREAM);
    TS_OK(gpubp_close(r));
}

/* Numeric attributes of every type, single and arrays. */
static void test_attributes_numeric(void **state)
{
    (void)state;
    const char *path = ts_path("attr_num.bp");
    gpubp_file *w = au_open(path, GPUBP_MODE_WRITE);
    for (size_t k = 0; k < TS_NTYPES; k++) {
        unsigned char buf[4 * 16];
        char nm[64];
        ts_fill(ts_types[k].type, buf, 4, (int)k);
        snprintf(nm, sizeof nm, "one/%s", ts_types[k].name);
        TS_OK(gpubp_define_attribute(w, nm, ts_types[k].type, buf + 2 * ts_types[k].size, 1));
        snprintf(nm, sizeof nm, "four/%s", ts_types[k].name);
        TS_OK(gpubp_define_attribute(w, nm, ts_types[k].type, buf, 4));
    }
    /* attributes go out with a step */
    int32_t x = 5;
    ts_put_step(w, ts_define(w, "x", GPUBP_TYPE_INT32, 0, NULL, NULL), &x, GPUBP_SYNC);
    gpubp_file *r = au_reopen(w, path, GPUBP_MODE_READ_RANDOM_ACCESS);
    size_t na = 0;
    const char *const *names = NULL;
    TS_OK(gpubp_available_attributes(r, &na, &names));
    assert_int_equal(na, 2 * TS_NTYPES);
    for (size_t i = 1; i < na; i++) assert_true(strcmp(names[i - 1], names[i]) < 0);
    for (size_t k = 0; k < TS_NTYPES; k++) {
        unsigned char want[4 * 16], got[4 * 16];
        char nm[64];
        ts_fill(ts_types[k].type, want, 4, (int)k);
        gpubp_type t;
        size_t n = 0;
        int is_array = -1;
        snprintf(nm, sizeof nm, "one/%s", ts_types[k].name);
        TS_OK(gpubp_inquire_attribute(r, nm, &t, &n, &is_array));
        assert_int_equal(t, ts_types[k].type);
        assert_int_equal(n, 1);
        assert_int_equal(is_array, 0);
        memset(got, 0, sizeof got);
        TS_OK(gpubp_attribute_data(r, nm, got));
        assert_memory_equal(got, want + 2 * ts_types[k].size, ts_types[k].size);
        snprintf(nm, sizeof nm, "four/%s", ts_types[k].name);
        TS_OK(gpubp_inquire_attribute(r, nm, &t, &n, &is_array));
        assert_int_equal(t, ts_types[k].type);
        assert_int_equal(n, 4);
        assert_int_equal(is_array, 1);
        TS_OK(gpubp_attribute_data(r, nm, got));
        assert_memory_equal(got, want, 4 * ts_types[k].size);
    }
    TS_OK(gpubp_close(r));
}

/* String and string-array attributes, a one-element array, and variable attributes. */
static void test_attributes_string(void **state)
{
    (void)state;
    const char *path = ts_path("attr_str.bp");
    gpubp_file *w = au_open(path, GPUBP_MODE_WRITE);
    TS_OK(gpubp_define_attribute(w, "unit", GPUBP_TYPE_STRING, "kelvin", 1));
    const char *axes[3] = {"x", "y", "a longer axis name"};
    TS_OK(gpubp_define_attribute(w, "axes", GPUBP_TYPE_STRING, axes, 3));
    double one = 2.5;
    TS_OK(gpubp_define_attribute(w, "scale", GPUBP_TYPE_DOUBLE, &one, 1));
    size_t shape[1] = {4};
    gpubp_variable *v = ts_define(w, "temperature", GPUBP_TYPE_FLOAT, 1, shape, NULL);
    TS_OK(gpubp_define_variable_attribute(w, "temperature", "description", GPUBP_TYPE_STRING,
                                          "surface temperature", 1));
    float range[2] = {-1.5f, 99.0f};
    TS_OK(gpubp_define_variable_attribute(w, "temperature", "range", GPUBP_TYPE_FLOAT, range, 2));
    float t[4] = {1, 2, 3, 4};
    ts_put_step(w, v, t, GPUBP_SYNC);
    gpubp_file *r = au_reopen(w, path, GPUBP_MODE_READ_RANDOM_ACCESS);
    size_t na = 0;
    const char *const *names = NULL;
    TS_OK(gpubp_available_attributes(r, &na, &names));
    const char *want_names[] = {"axes", "scale", "temperature/description", "temperature/range",
                                "unit"};
    assert_int_equal(na, 5);
    for (size_t i = 0; i < na; i++) assert_string_equal(names[i], want_names[i]);

    gpubp_type ty;
    size_t n = 0;
    int arr = -1;
    const char *s = NULL;
    TS_OK(gpubp_inquire_attribute(r, "unit", &ty, &n, &arr));
    assert_int_equal(ty, GPUBP_TYPE_STRING);
    assert_int_equal(n, 1);
    assert_int_equal(arr, 0);
    TS_OK(gpubp_attribute_string(r, "unit", 0, &s));
    assert_string_equal(s, "kelvin");

    TS_OK(gpubp_inquire_attribute(r, "axes", &ty, &n, &arr));
    assert_int_equal(ty, GPUBP_TYPE_STRING);
    assert_int_equal(n, 3);
    assert_int_equal(arr, 1);
    for (size_t i = 0; i < 3; i++) {
        TS_OK(gpubp_attribute_string(r, "axes", i, &s));
        assert_string_equal(s, axes[i]);
    }
    TS_OK(gpubp_inquire_attribute(r, "temperature/description", &ty, &n, &arr));
    assert_int_equal(ty, GPUBP_TYPE_STRING);
    TS_OK(gpubp_attribute_string(r, "temperature/description", 0, &s));
    assert_string_equal(s, "surface temperature");
    float got[2] = {0, 0};
    TS_OK(gpubp_inquire_attribute(r, "temperature/range", &ty, &n, &arr));
    assert_int_equal(ty, GPUBP_TYPE_FLOAT);
    assert_int_equal(n, 2);
    TS_OK(gpubp_attribute_data(r, "temperature/range", got));
    assert_true(got[0] == -1.5f && got[1] == 99.0f);
    double d = 0;
    TS_OK(gpubp_attribute_data(r, "scale", &d));
    assert_true(d == 2.5);
    TS_OK(gpubp_close(r));
}

/* Defining an attribute again with other data modifies it: the last value wins on read. */
static void test_attribute_modified(void **state)
{
    (void)state;
    const char *path = ts_path("attr_mod.bp");
    gpubp_file *w = au_open(path, GPUBP_MODE_WRITE);
    gpubp_variable *v = ts_define(w, "x", GPUBP_TYPE_INT32, 0, NULL, NULL);
    for (int32_t s = 0; s < 3; s++) {
        int32_t a = 100 + s;
        if (s != 1) TS_OK(gpubp_define_attribute(w, "counter", GPUBP_TYPE_INT32, &a, 1));
        ts_put_step(w, v, &s, GPUBP_SYNC);
    }
    gpubp_file *r = au_reopen(w, path, GPUBP_MODE_READ_RANDOM_ACCESS);
    int32_t got = 0;
    TS_OK(gpubp_attribute_data(r, "counter", &got));
    assert_int_equal(got, 102);
    TS_OK(gpubp_close(r));
}

/* A 2-D global array written as 3 row blocks of different heights per step, 3 steps. */
static float g2(int step, size_t i, size_t j) { return (float)(1000 * step) + (float)(10 * i + j) + 0.5f; }

static void test_global_array_blocks_steps(void **state)
{
    (void)state;
    const char *path = ts_path("global2d.bp");
    const size_t shape[2] = {6, 5};
    const size_t rows0[3] = {0, 1, 4}, rows[3] = {1, 3, 2};
    gpubp_file *w = au_open(path, GPUBP_MODE_WRITE);
    size_t c0[2] = {1, 5};
    gpubp_variable *v = ts_define(w, "g", GPUBP_TYPE_FLOAT, 2, shape, c0);
    for (int s = 0; s < 3; s++) {
        TS_OK(gpubp_begin_step(w));
        for (int b = 2; b >= 0; b--) { /* blocks out of order on purpose */
            float buf[30];
            for (size_t i = 0; i < rows[b]; i++)
                for (size_t j = 0; j < 5; j++) buf[i * 5 + j] = g2(s, rows0[b] + i, j);
            size_t st[2] = {rows0[b], 0}, ct[2] = {rows[b], 5};
            TS_OK(gpubp_set_selection(v, 2, st, ct));
            TS_OK(gpubp_put(w, v, buf, GPUBP_SYNC));
        }
        TS_OK(gpubp_end_step(w));
        size_t committed = 0;
        TS_OK(gpubp_steps(w, &committed));
        assert_int_equal(committed, (size_t)s + 1);
    }
    gpubp_file *r = au_reopen(w, path, GPUBP_MODE_READ_RANDOM_ACCESS);
    v = au_inq(r, "g");
    for (int s = 0; s < 3; s++) {
        size_t nb = 0;
        TS_OK(gpubp_variable_blocks(v, (size_t)s, &nb));
        assert_int_equal(nb, 3);
        for (size_t b = 0; b < 3; b++) {
            size_t st[2], ct[2];
            float mn, mx;
            TS_OK(gpubp_variable_block_info(v, (size_t)s, b, st, ct, &mn, &mx));
            size_t ob = 2 - b; /* put order */
            assert_int_equal(st[0], rows0[ob]);
            assert_int_equal(st[1], 0);
            assert_int_equal(ct[0], rows[ob]);
            assert_int_equal(ct[1], 5);
            assert_true(mn == g2(s, rows0[ob], 0));
            assert_true(mx == g2(s, rows0[ob] + rows[ob] - 1, 4));
        }
        float got[30];
        TS_OK(gpubp_set_step_selection(v, (size_t)s, 1));
        TS_OK(gpubp_get(r, v, got, GPUBP_SYNC));
        for (size_t i = 0; i < 6; i++)
            for (size_t j = 0; j < 5; j++) assert_true(got[i * 5 + j] == g2(s, i, j));
    }
    TS_OK(gpubp_close(r));
}

/* Local arrays: no shape, a different number and size of blocks per step. */
static int64_t lv(int step, size_t b, size_t i) { return -1000 * (int64_t)b + (int64_t)i * (step + 1) + 7; }

static void test_local_arrays(void **state)
{
    (void)state;
    const char *path = ts_path("local.bp");
    gpubp_file *w = au_open(path, GPUBP_MODE_WRITE);
    size_t c1[1] = {1}, c2[2] = {1, 3};
    gpubp_variable *v = ts_define(w, "particles", GPUBP_TYPE_INT64, 1, NULL, c1);
    gpubp_variable *v2 = ts_define(w, "pos", GPUBP_TYPE_UINT16, 2, NULL, c2);
    for (int s = 0; s < 2; s++) {
        TS_OK(gpubp_begin_step(w));
        for (size_t b = 0; b < (size_t)(2 + s); b++) {
            size_t n = b + 1 + (size_t)s;
            int64_t buf[16];
            uint16_t u[48];
            for (size_t i = 0; i < n; i++) buf[i] = lv(s, b, i);
            for (size_t i = 0; i < 3 * n; i++) u[i] = (uint16_t)(i + 7 * b + (size_t)s);
            size_t cc[1] = {n}, cc2[2] = {n, 3};
            TS_OK(gpubp_set_selection(v, 1, NULL, cc));
            TS_OK(gpubp_put(w, v, buf, GPUBP_SYNC));
            TS_OK(gpubp_set_selection(v2, 2, NULL, cc2));
            TS_OK(gpubp_put(w, v2, u, GPUBP_SYNC));
        }
        TS_OK(gpubp_end_step(w));
    }
    gpubp_file *r = au_reopen(w, path, GPUBP_MODE_READ_RANDOM_ACCESS);
    v = au_inq(r, "particles");
    v2 = au_inq(r, "pos");
    gpubp_shape_kind kind;
    TS_OK(gpubp_variable_shape_kind(v, &kind));
    assert_int_equal(kind, GPUBP_SHAPE_LOCAL_ARRAY);
    TS_OK(gpubp_variable_shape_kind(v2, &kind));
    assert_int_equal(kind, GPUBP_SHAPE_LOCAL_ARRAY);
    for (int s = 0; s < 2; s++) {
        size_t nb = 0;
        TS_OK(gpubp_variable_blocks(v, (size_t)s, &nb));
        assert_int_equal(nb, (size_t)(2 + s));
        TS_OK(gpubp_set_step_selection(v, (size_t)s, 1));
        TS_OK(gpubp_set_step_selection(v2, (size_t)s, 1));
        for (size_t b = 0; b < nb; b++) {
            size_t n = b + 1 + (size_t)s;
            size_t st[2] = {9, 9}, ct[2] = {0, 0}, dims[2] = {0, 0}, bytes = 0;
            int64_t mn, mx;
            TS_OK(gpubp_variable_block_info(v, (size_t)s, b, st, ct, &mn, &mx));
            assert_int_equal(st[0], 0);
            assert_int_equal(ct[0], n);
            assert_int_equal(mn, lv(s, b, 0));
            assert_int_equal(mx, lv(s, b, n - 1));
            TS_OK(gpubp_set_block_selection(v, b));
            TS_OK(gpubp_variable_shape(v, GPUBP_MEM_HOST, dims));
            assert_int_equal(dims[0], n);
            TS_OK(gpubp_selection_size(v, &bytes));
            assert_int_equal(bytes, n * sizeof(int64_t));
            int64_t got[16];
            TS_OK(gpubp_get(r, v, got, GPUBP_SYNC));
            for (size_t i = 0; i < n; i++) assert_int_equal(got[i], lv(s, b, i));

            TS_OK(gpubp_set_block_selection(v2, b));
            TS_OK(gpubp_variable_shape(v2, GPUBP_MEM_HOST, dims));
            assert_int_equal(dims[0], n);
            assert_int_equal(dims[1], 3);
            uint16_t u[48];
            TS_OK(gpubp_get(r, v2, u, GPUBP_SYNC));
            for (size_t i = 0; i < 3 * n; i++) assert_int_equal(u[i], i + 7 * b + (size_t)s);
        }
    }
    TS_OK(gpubp_close(r));
}

/* A global single value over several steps; a step selection of n > 1 reads n values. */
static void test_global_value_steps(void **state)
{
    (void)state;
    const char *path = ts_path("gvalue.bp");
    gpubp_file *w = au_open(path, GPUBP_MODE_WRITE);
    gpubp_variable *v = ts_define(w, "n", GPUBP_TYPE_INT32, 0, NULL, NULL);
    for (int32_t s = 0; s < 5; s++) {
        int32_t x = s * 10 - 17;
        ts_put_step(w, v, &x, GPUBP_SYNC);
    }
    gpubp_file *r = au_reopen(w, path, GPUBP_MODE_READ_RANDOM_ACCESS);
    v = au_inq(r, "n");
    TS_OK(gpubp_set_step_selection(v, 1, 3));
    size_t bytes = 0;
    TS_OK(gpubp_selection_size(v, &bytes));
    assert_int_equal(bytes, 3 * sizeof(int32_t));
    int32_t got[3] = {0, 0, 0};
    TS_OK(gpubp_get(r, v, got, GPUBP_SYNC));
    assert_int_equal(got[0], -7);
    assert_int_equal(got[1], 3);
    assert_int_equal(got[2], 13);
    int32_t mn = 0, mx = 0;
    TS_OK(gpubp_set_step_selection(v, 0, 5));
    TS_OK(gpubp_variable_minmax(v, &mn, &mx));
    assert_int_equal(mn, -17);
    assert_int_equal(mx, 23);
    TS_OK(gpubp_close(r));
}

/* APPEND continues the step numbering; the file reads as one. */
static void write_counter_steps(const char *path, gpubp_mode mode, int first, int n)
{
    gpubp_file *w = au_open(path, mode);
    size_t shape[1] = {4};
    gpubp_variable *v = ts_define(w, "counter", GPUBP_TYPE_INT32, 0, NULL, NULL);
    gpubp_variable *a = ts_define(w, "arr", GPUBP_TYPE_DOUBLE, 1, shape, NULL);
    for (int s = first; s < first + n; s++) {
        TS_OK(gpubp_begin_step(w));
        size_t cur = 99;
        TS_OK(gpubp_current_step(w, &cur));
        assert_int_equal(cur, (size_t)s);
        int32_t x = s;
        double d[4] = {s, s + 0.25, s + 0.5, s + 0.75};
        TS_OK(gpubp_put(w, v, &x, GPUBP_SYNC));
        TS_OK(gpubp_put(w, a, d, GPUBP_SYNC));
        TS_OK(gpubp_end_step(w));
    }
    TS_OK(gpubp_close(w));
}

static void check_counter_steps(const char *path, int n)
{
    gpubp_file *r = au_open(path, GPUBP_MODE_READ_RANDOM_ACCESS);
    au_steps(r, (size_t)n);
    gpubp_variable *v = au_inq(r, "counter"), *a = au_inq(r, "arr");
    au_var_steps(v, (size_t)n);
    int32_t got[16];
    TS_OK(gpubp_set_step_selection(v, 0, (size_t)n));
    TS_OK(gpubp_get(r, v, got, GPUBP_SYNC));
    for (int s = 0; s < n; s++) assert_int_equal(got[s], s);
    double d[64];
    TS_OK(gpubp_set_step_selection(a, 0, (size_t)n));
    TS_OK(gpubp_get(r, a, d, GPUBP_SYNC));
    for (int s = 0; s < n; s++)
        for (int i = 0; i < 4; i++) assert_true(d[s * 4 + i] == s + 0.25 * i);
    TS_OK(gpubp_close(r));
    r = au_open(path, GPUBP_MODE_READ);
    int s = 0, rc;
    while ((rc = gpubp_begin_step(r)) == GPUBP_OK) {
        size_t cur = 99;
        TS_OK(gpubp_current_step(r, &cur));
        assert_int_equal(cur, (size_t)s);
        v = au_inq(r, "counter");
        int32_t x = -1;
        TS_OK(gpubp_get(r, v, &x, GPUBP_SYNC));
        assert_int_equal(x, s);
        TS_OK(gpubp_end_step(r));
        s++;
    }
    assert_int_equal(rc, GPUBP_END_OF_STREAM);
    assert_int_equal(s, n);
    TS_OK(gpubp_close(r));
}

static void test_append_continues(void **state)
{
    (void)state;
    const char *path = ts_path("append.bp");
    write_counter_steps(path, GPUBP_MODE_WRITE, 0, 2);
    AU_CHECK(path);
    write_counter_steps(path, GPUBP_MODE_APPEND, 2, 3);
    AU_CHECK(path);
    assert_int_equal(ts_file_size(ts_join(path, "md.idx")), 64 + 5 * 64);
    check_counter_steps(path, 5);
    write_counter_steps(path, GPUBP_MODE_APPEND, 5, 1);
    AU_CHECK(path);
    check_counter_steps(path, 6);
}

static void test_append_creates_absent(void **state)
{
    (void)state;
    const char *path = ts_path("append_new.bp");
    write_counter_steps(path, GPUBP_MODE_APPEND, 0, 2);
    AU_CHECK(path);
    check_counter_steps(path, 2);
}

/* A variable first defined in the appending run joins the file at the next step. */
static void test_append_new_variable(void **state)
{
    (void)state;
    const char *path = ts_path("append_var.bp");
    write_counter_steps(path, GPUBP_MODE_WRITE, 0, 2);
    uint8_t x = 200;
    au_write_one(path, GPUBP_MODE_APPEND, "late", GPUBP_TYPE_UINT8, 0, NULL, &x);
    AU_CHECK(path);
    gpubp_file *r = au_open(path, GPUBP_MODE_READ_RANDOM_ACCESS);
    au_steps(r, 3);
    gpubp_variable *v = au_inq(r, "late");
    au_var_steps(v, 1);
    uint8_t got = 0;
    TS_OK(gpubp_get(r, v, &got, GPUBP_SYNC));
    assert_int_equal(got, 200);
    au_var_steps(au_inq(r, "counter"), 2);
    TS_OK(gpubp_close(r));
}

/* WRITE replaces an existing dataset: none of its steps or variables remain. */
static void test_write_replaces(void **state)
{
    (void)state;
    const char *path = ts_path("replace.bp");
    write_counter_steps(path, GPUBP_MODE_WRITE, 0, 4);
    long big = ts_file_size(ts_join(path, "data.0"));
    int16_t x = -3;
    au_write_one(path, GPUBP_MODE_WRITE, "other", GPUBP_TYPE_INT16, 0, NULL, &x);
    AU_CHECK(path);
    assert_int_equal(ts_file_size(ts_join(path, "md.idx")), 128);
    assert_true(ts_file_size(ts_join(path, "data.0")) < big);
    gpubp_file *r = au_open(path, GPUBP_MODE_READ_RANDOM_ACCESS);
    au_steps(r, 1);
    size_t nv = 0;
    const char *const *names;
    TS_OK(gpubp_available_variables(r, &nv, &names));
    assert_int_equal(nv, 1);
    assert_string_equal(names[0], "other");
    gpubp_variable *gone = NULL;
    TS_ERR(gpubp_inquire_variable(&gone, r, "counter"), GPUBP_ERR_NOT_FOUND);
    gpubp_variable *v = au_inq(r, "other");
    int16_t got = 0;
    TS_OK(gpubp_get(r, v, &got, GPUBP_SYNC));
    assert_int_equal(got, -3);
    TS_OK(gpubp_close(r));
}

/* A shape that changes every step: each step reads with its own shape. */
static void test_changing_shape(void **state)
{
    (void)state;
    const char *path = ts_path("changing.bp");
    gpubp_file *w = au_open(path, GPUBP_MODE_WRITE);
    size_t shape[2] = {2, 1}, start[2] = {0, 0};
    gpubp_variable *v = ts_define(w, "grow", GPUBP_TYPE_DOUBLE, 2, shape, NULL);
    for (size_t s = 0; s < 3; s++) {
        TS_OK(gpubp_begin_step(w));
        size_t sh[2] = {2, s + 1};
        TS_OK(gpubp_set_shape(v, 2, sh));
        TS_OK(gpubp_set_selection(v, 2, start, sh));
        double buf[8];
        for (size_t i = 0; i < 2 * (s + 1); i++) buf[i] = (double)(100 * s + i);
        TS_OK(gpubp_put(w, v, buf, GPUBP_SYNC));
        TS_OK(gpubp_end_step(w));
    }
    gpubp_file *r = au_reopen(w, path, GPUBP_MODE_READ_RANDOM_ACCESS);
    v = au_inq(r, "grow");
    size_t dims[2] = {0, 0};
    /* no step selection: the last step's shape */
    TS_OK(gpubp_variable_shape(v, GPUBP_MEM_HOST, dims));
    assert_int_equal(dims[0], 2);
    assert_int_equal(dims[1], 3);
    for (size_t s = 0; s < 3; s++) {
        TS_OK(gpubp_set_step_selection(v, s, 1));
        TS_OK(gpubp_variable_shape(v, GPUBP_MEM_HOST, dims));
        assert_int_equal(dims[0], 2);
        assert_int_equal(dims[1], s + 1);
        TS_OK(gpubp_variable_shape(v, GPUBP_MEM_DETECT, dims));
        assert_int_equal(dims[1], s + 1);
        size_t bytes = 0;
        TS_OK(gpubp_selection_size(v, &bytes));
        assert_int_equal(bytes, 2 * (s + 1) * sizeof(double));
        double got[8];
        TS_OK(gpubp_get(r, v, got, GPUBP_SYNC));
        for (size_t i = 0; i < 2 * (s + 1); i++) assert_true(got[i] == (double)(100 * s + i));
    }
    TS_OK(gpubp_close(r));
    r = au_open(path, GPUBP_MODE_READ);
    for (size_t s = 0; s < 3; s++) {
        TS_OK(gpubp_begin_step(r));
        v = au_inq(r, "grow");
        TS_OK(gpubp_variable_shape(v, GPUBP_MEM_HOST, dims));
        assert_int_equal(dims[1], s + 1);
        double got[8];
        TS_OK(gpubp_get(r, v, got, GPUBP_SYNC));
        for (size_t i = 0; i < 2 * (s + 1); i++) assert_true(got[i] == (double)(100 * s + i));
        TS_OK(gpubp_end_step(r));
    }
    TS_OK(gpubp_close(r));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_types_arrays),
        cmocka_unit_test(test_types_single_values),
        cmocka_unit_test(test_types_read_mode),
        cmocka_unit_test(test_string_values),
        cmocka_unit_test(test_attributes_numeric),
        cmocka_unit_test(test_attributes_string),
        cmocka_unit_test(test_attribute_modified),
        cmocka_unit_test(test_global_array_blocks_steps),
        cmocka_unit_test(test_local_arrays),
        cmocka_unit_test(test_global_value_steps),
        cmocka_unit_test(test_append_continues),
        cmocka_unit_test(test_append_creates_absent),
        cmocka_unit_test(test_append_new_variable),
        cmocka_unit_test(test_write_replaces),
        cmocka_unit_test(test_changing_shape),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
