/* Helpers shared by the api tests: the numeric type table, deterministic fills, element
 * comparison (complex by modulus, as ADIOS2), and small open/close wrappers. */
#ifndef GPUBP_TEST_API_UTIL_H
#define GPUBP_TEST_API_UTIL_H

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "test_support.h"

typedef struct au_type {
    gpubp_type type;
    size_t size;
    const char *name;  /* short name used in variable names */
    const char *adios; /* ADIOS2 type name (gpubp_type_name) */
} au_type;

static const au_type au_types[] = {
    {GPUBP_TYPE_INT8, 1, "i8", "int8_t"},
    {GPUBP_TYPE_INT16, 2, "i16", "int16_t"},
    {GPUBP_TYPE_INT32, 4, "i32", "int32_t"},
    {GPUBP_TYPE_INT64, 8, "i64", "int64_t"},
    {GPUBP_TYPE_UINT8, 1, "u8", "uint8_t"},
    {GPUBP_TYPE_UINT16, 2, "u16", "uint16_t"},
    {GPUBP_TYPE_UINT32, 4, "u32", "uint32_t"},
    {GPUBP_TYPE_UINT64, 8, "u64", "uint64_t"},
    {GPUBP_TYPE_FLOAT, 4, "f32", "float"},
    {GPUBP_TYPE_DOUBLE, 8, "f64", "double"},
    {GPUBP_TYPE_FLOAT_COMPLEX, 8, "c64", "float complex"},
    {GPUBP_TYPE_DOUBLE_COMPLEX, 16, "c128", "double complex"},
};
#define AU_NTYPES (sizeof au_types / sizeof au_types[0])

/* Element i of a deterministic sequence of `type` for a given salt; covers negative values and
 * the type's extremes (elements 0 and 1 are the minimum and maximum of the type for integers). */
static inline void au_fill(gpubp_type type, void *buf, size_t n, int salt)
{
    for (size_t i = 0; i < n; i++) {
        long long s = (long long)i * 37 - 50 + salt * 7;
        switch (type) {
        case GPUBP_TYPE_INT8:
            ((int8_t *)buf)[i] = i == 0 ? INT8_MIN : i == 1 ? INT8_MAX : (int8_t)(s % 100);
            break;
        case GPUBP_TYPE_INT16:
            ((int16_t *)buf)[i] = i == 0 ? INT16_MIN : i == 1 ? INT16_MAX : (int16_t)(s * 91);
            break;
        case GPUBP_TYPE_INT32:
            ((int32_t *)buf)[i] = i == 0 ? INT32_MIN : i == 1 ? INT32_MAX : (int32_t)(s * 100003);
            break;
        case GPUBP_TYPE_INT64:
            ((int64_t *)buf)[i] = i == 0 ? INT64_MIN : i == 1 ? INT64_MAX : (int64_t)s * 10000000007LL;
            break;
        case GPUBP_TYPE_UINT8:
            ((uint8_t *)buf)[i] = i == 0 ? 0 : i == 1 ? UINT8_MAX : (uint8_t)(s + 128);
            break;
        case GPUBP_TYPE_UINT16:
            ((uint16_t *)buf)[i] = i == 0 ? 1 : i == 1 ? UINT16_MAX : (uint16_t)(s * 13 + 30000);
            break;
        case GPUBP_TYPE_UINT32:
            ((uint32_t *)buf)[i] = i == 0 ? 2 : i == 1 ? UINT32_MAX : (uint32_t)(s * 1000003 + 2000000000LL);
            break;
        case GPUBP_TYPE_UINT64:
            ((uint64_t *)buf)[i] = i == 0 ? 3 : i == 1 ? UINT64_MAX : (uint64_t)(s + 1000) * 1000000007ULL;
            break;
        case GPUBP_TYPE_FLOAT:
            ((float *)buf)[i] = (float)s * 0.25f - 0.125f;
            break;
        case GPUBP_TYPE_DOUBLE:
            ((double *)buf)[i] = (double)s / 3.0 + 1e-9;
            break;
        case GPUBP_TYPE_FLOAT_COMPLEX:
            ((float *)buf)[2 * i] = (float)s * 0.5f;
            ((float *)buf)[2 * i + 1] = (float)(i % 3) - 1.25f;
            break;
        case GPUBP_TYPE_DOUBLE_COMPLEX:
            ((double *)buf)[2 * i] = (double)s * 0.75;
            ((double *)buf)[2 * i + 1] = (double)i * 0.5 + 0.1;
            break;
        default:
            break;
        }
    }
}

/* -1/0/1 comparing two elements; complex values by modulus (ADIOS2 min/max rule). */
static inline int au_cmp(gpubp_type type, const void *a, const void *b)
{
#define AU_CMP(T) { T x, y; memcpy(&x, a, sizeof x); memcpy(&y, b, sizeof y); return x < y ? -1 : x > y; }
    switch (type) {
    case GPUBP_TYPE_INT8: AU_CMP(int8_t)
    case GPUBP_TYPE_INT16: AU_CMP(int16_t)
    case GPUBP_TYPE_INT32: AU_CMP(int32_t)
    case GPUBP_TYPE_INT64: AU_CMP(int64_t)
    case GPUBP_TYPE_UINT8: AU_CMP(uint8_t)
    case GPUBP_TYPE_UINT16: AU_CMP(uint16_t)
    case GPUBP_TYPE_UINT32: AU_CMP(uint32_t)
    case GPUBP_TYPE_UINT64: AU_CMP(uint64_t)
    case GPUBP_TYPE_FLOAT: AU_CMP(float)
    case GPUBP_TYPE_DOUBLE: AU_CMP(double)
    case GPUBP_TYPE_FLOAT_COMPLEX: {
        float x[2], y[2];
        memcpy(x, a, sizeof x);
        memcpy(y, b, sizeof y);
        double mx = hypot(x[0], x[1]), my = hypot(y[0], y[1]);
        return mx < my ? -1 : mx > my;
    }
    case GPUBP_TYPE_DOUBLE_COMPLEX: {
        double x[2], y[2];
        memcpy(x, a, sizeof x);
        memcpy(y, b, sizeof y);
        double mx = hypot(x[0], x[1]), my = hypot(y[0], y[1]);
        return mx < my ? -1 : mx > my;
    }
    default:
        return 0;
    }
#undef AU_CMP
}

/* min and max element of n elements (first occurrence wins on ties). */
static inline void au_minmax(gpubp_type type, size_t size, const void *buf, size_t n, void *min,
                             void *max)
{
    const unsigned char *p = buf;
    memcpy(min, p, size);
    memcpy(max, p, size);
    for (size_t i = 1; i < n; i++) {
        if (au_cmp(type, p + i * size, min) < 0) memcpy(min, p + i * size, size);
        if (au_cmp(type, p + i * size, max) > 0) memcpy(max, p + i * size, size);
    }
}

static inline size_t au_prod(size_t n, const size_t *d)
{
    size_t p = 1;
    for (size_t i = 0; i < n; i++) p *= d[i];
    return p;
}

/* gpubp_open without parameters, asserting success */
static inline gpubp_file *au_open(const char *path, gpubp_mode mode) { return ts_open(path, mode, NULL); }

static inline gpubp_variable *au_inq(gpubp_file *f, const char *name)
{
    gpubp_variable *v = NULL;
    TS_OK(gpubp_inquire_variable(&v, f, name));
    assert_non_null(v);
    return v;
}

/* asserts that bp4verify.py accepts the dataset */
#define AU_CHECK(path) assert_int_equal(ts_bp4check(path), 0)

/* Closes the writer w of path, asserts that bp4verify.py accepts the dataset, opens it in `mode`. */
static inline gpubp_file *au_reopen(gpubp_file *w, const char *path, gpubp_mode mode)
{
    TS_OK(gpubp_close(w));
    AU_CHECK(path);
    return au_open(path, mode);
}

/* asserts that f holds `want` steps (gpubp_steps) */
static inline void au_steps(gpubp_file *f, size_t want)
{
    size_t n = 0;
    TS_OK(gpubp_steps(f, &n));
    assert_int_equal(n, want);
}

/* asserts that v appears in `want` steps (gpubp_variable_steps) */
static inline void au_var_steps(gpubp_variable *v, size_t want)
{
    size_t n = 0;
    TS_OK(gpubp_variable_steps(v, &n));
    assert_int_equal(n, want);
}

/* Selects step `step` of v, asserts that the selection is `bytes` long and reads it into buf. */
static inline void au_get_step(gpubp_file *r, gpubp_variable *v, size_t step, void *buf, size_t bytes)
{
    size_t n = 0;
    TS_OK(gpubp_set_step_selection(v, step, 1));
    TS_OK(gpubp_selection_size(v, &n));
    assert_int_equal(n, bytes);
    TS_OK(gpubp_get(r, v, buf, GPUBP_SYNC));
}

/* Writes path in `mode` as one step in which `name` (ts_define's kinds, whole) is put once. */
static inline void au_write_one(const char *path, gpubp_mode mode, const char *name, gpubp_type type,
                                size_t ndims, const size_t *shape, const void *data)
{
    gpubp_file *w = au_open(path, mode);
    ts_put_step(w, ts_define(w, name, type, ndims, shape, NULL), data, GPUBP_SYNC);
    TS_OK(gpubp_close(w));
}

#endif
