/* ADIOS2 BP5 struct variables (IO::DefineStruct, DefineStructVariable): tests/golden/structs,
 * written by tests/golden/generators/make_structs.cpp. Every value is computed here from the
 * generator's formulas: the description (names, types, offsets, counts, sizes), whole steps, a
 * box, blocks of a local array, steps a variable is absent from, statistics-free metadata, the
 * READ mode, and the calls that have no meaning for records (min/max) or for other types. */
#include <complex.h>
#include <stdio.h>
#include <string.h>

#include "support/api_util.h"

typedef struct particle {
    int8_t a;
    int32_t b[4];
    double c;
} particle; /* 32 bytes: 3 bytes of padding after a, 4 before c */

typedef struct pair {
    double x, y;
} pair;

typedef struct small {
    float f;
    uint16_t u;
    int8_t ch;
} small; /* 8 bytes */

typedef struct cplx {
    float z[2];
    int64_t n;
    uint8_t m[3];
} cplx; /* 24 bytes */

static const char *gold(const char *name)
{
    static char p[4300];
    snprintf(p, sizeof p, "%s/structs/%s", ts_golden_dir(), name);
    return p;
}

static void want_field(gpubp_variable *v, size_t i, const char *name, gpubp_type type,
                       size_t offset, size_t count)
{
    const char *n = NULL;
    gpubp_type t;
    size_t off, cnt;
    TS_OK(gpubp_variable_struct_field(v, i, &n, &t, &off, &cnt));
    assert_string_equal(n, name);
    assert_int_equal(t, type);
    assert_int_equal(off, offset);
    assert_int_equal(cnt, count);
}

static void want_struct(gpubp_variable *v, const char *name, size_t size, size_t nfields)
{
    gpubp_type t;
    const char *n = NULL;
    size_t sz = 0, nf = 0, es = 0;
    TS_OK(gpubp_variable_type(v, &t));
    assert_int_equal(t, GPUBP_TYPE_STRUCT);
    assert_string_equal(gpubp_type_name(t), "struct");
    TS_OK(gpubp_variable_element_size(v, &es));
    assert_int_equal(es, size);
    TS_OK(gpubp_variable_struct(v, &n, &sz, &nf));
    assert_string_equal(n, name);
    assert_int_equal(sz, size);
    assert_int_equal(nf, nfields);
    TS_OK(gpubp_variable_struct(v, NULL, NULL, NULL));
    TS_ERR(gpubp_variable_struct_field(v, nfields, NULL, NULL, NULL, NULL), GPUBP_ERR_INVALID_ARG);
}

/* The particle of global row g (0..9), column k of step s, as the generator wrote it. */
static particle particle_at(int s, int g, int k)
{
    particle p;
    memset(&p, 0, sizeof p);
    int e = g * 2 + k; /* the element in its block of 5 x 2 */
    int blk = g / 5, local = e - blk * 10;
    int gg = blk * 10 + local;
    p.a = (int8_t)(gg - 3 * s);
    for (int j = 0; j < 4; j++) p.b[j] = 1000 * s + 10 * gg + j;
    p.c = gg * 0.25 - s;
    return p;
}

static void check_particles(const particle *got, int s, size_t r0, size_t nr, size_t c0,
                            size_t nc)
{
    for (size_t r = 0; r < nr; r++)
        for (size_t k = 0; k < nc; k++) {
            particle w = particle_at(s, (int)(r0 + r), (int)(c0 + k)), g = got[r * nc + k];
            assert_int_equal(g.a, w.a);
            assert_memory_equal(g.b, w.b, sizeof w.b);
            assert_true(g.c == w.c);
        }
}

static void read_file(const char *name)
{
    gpubp_file *f = au_open(gold(name), GPUBP_MODE_READ_RANDOM_ACCESS);
    size_t nv = 0;
    const char *const *names;
    TS_OK(gpubp_available_variables(f, &nv, &names));
    static const char *want[] = {"a_field", "cplx", "grp/pairs", "local_small", "particles",
                                 "z_step"};
    assert_int_equal(nv, 6);
    for (size_t i = 0; i < nv; i++) assert_string_equal(names[i], want[i]);

    /* particles: global {10, 2}, two blocks of 5 rows a step, the second absent from step 1 */
    gpubp_variable *p = au_inq(f, "particles");
    want_struct(p, "particle", sizeof(particle), 3);
    want_field(p, 0, "a", GPUBP_TYPE_INT8, offsetof(particle, a), 1);
    want_field(p, 1, "b", GPUBP_TYPE_INT32, offsetof(particle, b), 4);
    want_field(p, 2, "c", GPUBP_TYPE_DOUBLE, offsetof(particle, c), 1);
    size_t ns = 0, nb = 0, dims[2], bytes = 0, start[2], count[2];
    TS_OK(gpubp_variable_steps(p, &ns));
    assert_int_equal(ns, 3);
    TS_OK(gpubp_variable_blocks(p, 1, &nb));
    assert_int_equal(nb, 1);
    TS_OK(gpubp_variable_blocks(p, 2, &nb));
    assert_int_equal(nb, 2);
    TS_OK(gpubp_variable_block_info(p, 2, 1, start, count, NULL, NULL));
    assert_true(start[0] == 5 && start[1] == 0 && count[0] == 5 && count[1] == 2);
    unsigned char mn[32], mx[32];
    memset(mn, 0x5A, sizeof mn);
    TS_OK(gpubp_variable_block_info(p, 0, 0, NULL, NULL, mn, mx));
    assert_int_equal(mn[0], 0x5A); /* no statistics: nothing written */
    TS_ERR(gpubp_variable_minmax(p, mn, mx), GPUBP_ERR_NOT_SUPPORTED);
    int missing = 0;
    TS_ERR(gpubp_variable_minmax_missing(p, &missing), GPUBP_ERR_NOT_SUPPORTED);
    for (int s = 0; s < 3; s++) {
        TS_OK(gpubp_set_step_selection(p, (size_t)s, 1));
        TS_OK(gpubp_variable_shape(p, GPUBP_MEM_HOST, dims));
        assert_true(dims[0] == 10 && dims[1] == 2);
        size_t rows = s == 1 ? 5 : 10;
        size_t st0[2] = {0, 0}, ct0[2] = {rows, 2};
        TS_OK(gpubp_set_selection(p, 2, st0, ct0));
        TS_OK(gpubp_selection_size(p, &bytes));
        assert_int_equal(bytes, rows * 2 * sizeof(particle));
        particle got[20];
        memset(got, 0xEE, sizeof got);
        TS_OK(gpubp_get(f, p, got, GPUBP_SYNC));
        check_particles(got, s, 0, rows, 0, 2);
        /* padding bytes travel with the records (the writer cleared them) */
        static const unsigned char zero[3] = {0};
        assert_memory_equal((unsigned char *)&got[0] + 1, zero, 3);
    }
    /* a box across both blocks of step 2: rows 3..7, column 1 */
    size_t bs[2] = {3, 1}, bc[2] = {5, 1};
    TS_OK(gpubp_set_step_selection(p, 2, 1));
    TS_OK(gpubp_set_selection(p, 2, bs, bc));
    particle box[5];
    TS_OK(gpubp_get(f, p, box, GPUBP_SYNC));
    check_particles(box, 2, 3, 5, 1, 1);
    /* block 1 of step 0 by block id */
    TS_OK(gpubp_set_step_selection(p, 0, 1));
    TS_OK(gpubp_set_block_selection(p, 1));
    particle blk[10];
    TS_OK(gpubp_get(f, p, blk, GPUBP_SYNC));
    check_particles(blk, 0, 5, 5, 0, 2);

    /* grp/pairs: {6}, steps 0 and 1 only (16-byte records: a MetaArrayMM16 record) */
    gpubp_variable *q = au_inq(f, "grp/pairs");
    want_struct(q, "pair", sizeof(pair), 2);
    want_field(q, 1, "y", GPUBP_TYPE_DOUBLE, 8, 1);
    TS_OK(gpubp_variable_steps(q, &ns));
    assert_int_equal(ns, 2);
    size_t ds = 0;
    TS_OK(gpubp_variable_dataset_step(q, 1, &ds));
    assert_int_equal(ds, 1);
    for (int s = 0; s < 2; s++) {
        pair pv[6];
        TS_OK(gpubp_set_step_selection(q, (size_t)s, 1));
        TS_OK(gpubp_get(f, q, pv, GPUBP_SYNC));
        for (int k = 0; k < 6; k++) assert_true(pv[k].x == k + s && pv[k].y == -k * 1.5);
    }

    /* local_small: a local array of 1 + s blocks a step, of 3, 2, 3 records */
    gpubp_variable *l = au_inq(f, "local_small");
    want_struct(l, "small", sizeof(small), 3);
    want_field(l, 2, "ch", GPUBP_TYPE_INT8, offsetof(small, ch), 1);
    gpubp_shape_kind kind;
    TS_OK(gpubp_variable_shape_kind(l, &kind));
    assert_int_equal(kind, GPUBP_SHAPE_LOCAL_ARRAY);
    for (int s = 0; s < 3; s++) {
        TS_OK(gpubp_variable_blocks(l, (size_t)s, &nb));
        assert_int_equal(nb, (size_t)s + 1);
        for (int b = 0; b <= s; b++) {
            small m[3];
            size_t n = b == 1 ? 2 : 3;
            TS_OK(gpubp_set_step_selection(l, (size_t)s, 1));
            TS_OK(gpubp_set_block_selection(l, (size_t)b));
            TS_OK(gpubp_selection_size(l, &bytes));
            assert_int_equal(bytes, n * sizeof(small));
            TS_OK(gpubp_get(f, l, m, GPUBP_SYNC));
            for (size_t k = 0; k < n; k++) {
                assert_true(m[k].f == 0.5f * (float)k + (float)b + (float)s);
                assert_int_equal(m[k].u, 65535 - 100 * s - 10 * b - (int)k);
                assert_int_equal(m[k].ch, 'A' + 3 * b + (int)k);
            }
        }
    }

    /* cplx: {2, 2} records with a float complex field and a uint8_t[3] */
    gpubp_variable *c = au_inq(f, "cplx");
    want_struct(c, "cplx", sizeof(cplx), 3);
    want_field(c, 0, "z", GPUBP_TYPE_FLOAT_COMPLEX, 0, 1);
    want_field(c, 1, "n", GPUBP_TYPE_INT64, 8, 1);
    want_field(c, 2, "m", GPUBP_TYPE_UINT8, 16, 3);
    for (int s = 0; s < 3; s++) {
        cplx cv[4];
        TS_OK(gpubp_set_step_selection(c, (size_t)s, 1));
        TS_OK(gpubp_get(f, c, cv, GPUBP_SYNC));
        for (int k = 0; k < 4; k++) {
            assert_true(cv[k].z[0] == (float)k + 0.5f && cv[k].z[1] == (float)-s - 0.25f);
            assert_true(cv[k].n == (int64_t)-1 - k - ((int64_t)1 << 40) * s);
            for (int j = 0; j < 3; j++) assert_int_equal(cv[k].m[j], 200 + 10 * j + k + s);
        }
    }

    /* the struct calls on other variables */
    gpubp_variable *a = au_inq(f, "a_field");
    TS_ERR(gpubp_variable_struct(a, NULL, NULL, NULL), GPUBP_ERR_TYPE_MISMATCH);
    TS_ERR(gpubp_variable_struct_field(a, 0, NULL, NULL, NULL, NULL), GPUBP_ERR_TYPE_MISMATCH);
    TS_ERR(gpubp_variable_struct(NULL, NULL, NULL, NULL), GPUBP_ERR_INVALID_ARG);
    size_t es = 0;
    TS_OK(gpubp_variable_element_size(a, &es));
    assert_int_equal(es, 8);
    TS_OK(gpubp_close(f));
}

static void test_structs(void **state)
{
    (void)state;
    read_file("structs.bp");
}

static void test_structs_nostats(void **state)
{
    (void)state;
    read_file("structs_nostats.bp");
}

/* Step by step (READ mode): the struct variables follow the steps as any other. */
static void test_structs_streaming(void **state)
{
    (void)state;
    gpubp_file *f = au_open(gold("structs.bp"), GPUBP_MODE_READ);
    for (int s = 0; s < 3; s++) {
        TS_OK(gpubp_begin_step(f));
        gpubp_variable *p = au_inq(f, "particles");
        size_t nb = 0;
        TS_OK(gpubp_variable_blocks(p, 0, &nb));
        assert_int_equal(nb, s == 1 ? 1 : 2);
        size_t st0[2] = {0, 0}, ct0[2] = {5, 2};
        TS_OK(gpubp_set_selection(p, 2, st0, ct0));
        particle got[10];
        TS_OK(gpubp_get(f, p, got, GPUBP_DEFERRED));
        gpubp_variable *q = NULL;
        int rc = gpubp_inquire_variable(&q, f, "grp/pairs");
        assert_int_equal(rc, s == 2 ? GPUBP_ERR_NOT_FOUND : GPUBP_OK);
        TS_OK(gpubp_end_step(f));
        check_particles(got, s, 0, 5, 0, 2);
    }
    TS_OK(gpubp_close(f));
}

/* Writing struct variables is not offered: define_variable refuses the type. */
static void test_structs_not_written(void **state)
{
    (void)state;
    char path[4300];
    snprintf(path, sizeof path, "%s", ts_path("w.bp"));
    gpubp_file *f;
    TS_OK(gpubp_open(&f, path, GPUBP_MODE_WRITE, NULL));
    gpubp_variable *v;
    size_t shape = 4, start = 0, count = 4;
    TS_ERR(gpubp_define_variable(&v, f, "s", GPUBP_TYPE_STRUCT, 1, &shape, &start, &count),
           GPUBP_ERR_INVALID_ARG);
    assert_int_equal(gpubp_type_size(GPUBP_TYPE_STRUCT), 0);
    TS_OK(gpubp_close(f));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_structs),
        cmocka_unit_test(test_structs_nostats),
        cmocka_unit_test(test_structs_streaming),
        cmocka_unit_test(test_structs_not_written),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
