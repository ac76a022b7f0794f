/* The value patterns of every suite (tests/support/values.h). */
#include "support/values.h"

#include <float.h>
#include <math.h>
#include <string.h>

const ts_type ts_types[TS_NTYPES] = {
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

void ts_fill(gpubp_type type, void *buf, size_t n, int salt)
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

int ts_cmp(gpubp_type type, const void *a, const void *b)
{
#define TS_CMP(T) { T x, y; memcpy(&x, a, sizeof x); memcpy(&y, b, sizeof y); return x < y ? -1 : x > y; }
    switch (type) {
    case GPUBP_TYPE_INT8: TS_CMP(int8_t)
    case GPUBP_TYPE_INT16: TS_CMP(int16_t)
    case GPUBP_TYPE_INT32: TS_CMP(int32_t)
    case GPUBP_TYPE_INT64: TS_CMP(int64_t)
#if LDBL_MANT_DIG == 64
    case GPUBP_TYPE_LONG_DOUBLE: TS_CMP(long double)
#endif
    case GPUBP_TYPE_CHAR:
    case GPUBP_TYPE_UINT8: TS_CMP(uint8_t)
    case GPUBP_TYPE_UINT16: TS_CMP(uint16_t)
    case GPUBP_TYPE_UINT32: TS_CMP(uint32_t)
    case GPUBP_TYPE_UINT64: TS_CMP(uint64_t)
    case GPUBP_TYPE_FLOAT: TS_CMP(float)
    case GPUBP_TYPE_DOUBLE: TS_CMP(double)
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
#undef TS_CMP
}

int ts_elems_differ(gpubp_type type, const void *a, const void *b, size_t n)
{
    if (type != GPUBP_TYPE_LONG_DOUBLE) return memcmp(a, b, n) != 0;
    for (size_t i = 0; i + 16 <= n; i += 16)
        if (memcmp((const char *)a + i, (const char *)b + i, 10)) return 1;
    return 0;
}

void ts_minmax(gpubp_type type, size_t size, const void *buf, size_t n, void *min,
               void *max)
{
    const unsigned char *p = buf;
    memcpy(min, p, size);
    memcpy(max, p, size);
    for (size_t i = 1; i < n; i++) {
        if (ts_cmp(type, p + i * size, min) < 0) memcpy(min, p + i * size, size);
        if (ts_cmp(type, p + i * size, max) > 0) memcpy(max, p + i * size, size);
    }
}

size_t ts_prod(size_t n, const size_t *d)
{
    size_t p = 1;
    for (size_t i = 0; i < n; i++) p *= d[i];
    return p;
}

void ts_fill_spread(gpubp_type t, void *buf, size_t n, int salt)
{
    for (size_t i = 0; i < n; i++) {
        long long s = (long long)((i * 2654435761u + (size_t)salt * 97u) % 20011u) - 10005;
        switch (t) {
        case GPUBP_TYPE_INT8: ((int8_t *)buf)[i] = (int8_t)(s % 120); break;
        case GPUBP_TYPE_INT16: ((int16_t *)buf)[i] = (int16_t)s; break;
        case GPUBP_TYPE_INT32: ((int32_t *)buf)[i] = (int32_t)(s * 1000); break;
        case GPUBP_TYPE_INT64: ((int64_t *)buf)[i] = s * 1000000007LL; break;
        case GPUBP_TYPE_UINT8: ((uint8_t *)buf)[i] = (uint8_t)s; break;
        case GPUBP_TYPE_UINT16: ((uint16_t *)buf)[i] = (uint16_t)s; break;
        case GPUBP_TYPE_UINT32: ((uint32_t *)buf)[i] = (uint32_t)(s * 7777); break;
        case GPUBP_TYPE_UINT64: ((uint64_t *)buf)[i] = (uint64_t)s * 3000000019ULL; break;
        case GPUBP_TYPE_FLOAT: ((float *)buf)[i] = (float)s * 0.25f; break;
        case GPUBP_TYPE_DOUBLE: ((double *)buf)[i] = (double)s * 0.125; break;
        case GPUBP_TYPE_FLOAT_COMPLEX:
            ((float *)buf)[2 * i] = (float)s; ((float *)buf)[2 * i + 1] = (float)(s % 17); break;
        case GPUBP_TYPE_DOUBLE_COMPLEX:
            ((double *)buf)[2 * i] = (double)s; ((double *)buf)[2 * i + 1] = (double)(-s % 13); break;
        default: break;
        }
    }
}

static uint64_t ts_rng = 88172645463325252ull;
uint64_t ts_rand(void)
{
    ts_rng ^= ts_rng << 13;
    ts_rng ^= ts_rng >> 7;
    ts_rng ^= ts_rng << 17;
    return ts_rng;
}

void ts_fill_bytes(uint8_t *p, size_t n, size_t ts, int pat)
{
    switch (pat) {
    case PAT_SMOOTH: /* a smooth field: doubles for ts 8/16, floats otherwise, truncated to n */
        for (size_t i = 0; i < n; i++) {
            size_t e = ts >= 8 ? i / 8 : i / 4;
            union { double d; float f; uint8_t b[8]; } u;
            if (ts >= 8) u.d = sin(0.001 * (double)e) * 100.0;
            else u.f = (float)(sin(0.001 * (double)e) * 100.0);
            p[i] = u.b[ts >= 8 ? i % 8 : i % 4];
        }
        break;
    case PAT_RANDOM:
        for (size_t i = 0; i < n; i++) p[i] = (uint8_t)(ts_rand() >> 24);
        break;
    case PAT_ZEROS: memset(p, 0, n); break;
    case PAT_CONST: memset(p, 0x41, n); break;
    case PAT_INTS: /* int32 (i*7)%97-40 */
        for (size_t i = 0; i < n; i++) {
            int32_t v = (int32_t)(((i / 4) * 7) % 97) - 40;
            p[i] = (uint8_t)((uint32_t)v >> (8 * (i % 4)));
        }
        break;
    default: /* first half random, second half zeros: partly compressible */
        for (size_t i = 0; i < n; i++) p[i] = i < n / 2 ? (uint8_t)(ts_rand() >> 24) : 0;
        break;
    }
}

float ts_step_f(size_t s, size_t i) { return (float)(s * 1000 + i); }
double ts_step_d(size_t s, size_t i) { return (double)s * 1e6 + (double)i * 0.5; }
