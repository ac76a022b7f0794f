/* Type table and min/max, matching ADIOS2 (complex values compare by their norm). */
#include "common/types.h"
#include "common/buf.h"

#include <math.h>

size_t gbp_type_size(int type)
{
    switch (type) {
    case GPUBP_TYPE_INT8: case GPUBP_TYPE_UINT8: case GPUBP_TYPE_CHAR: return 1;
    case GPUBP_TYPE_INT16: case GPUBP_TYPE_UINT16: return 2;
    case GPUBP_TYPE_INT32: case GPUBP_TYPE_UINT32: case GPUBP_TYPE_FLOAT: return 4;
    case GPUBP_TYPE_INT64: case GPUBP_TYPE_UINT64: case GPUBP_TYPE_DOUBLE:
    case GPUBP_TYPE_FLOAT_COMPLEX: return 8;
    case GPUBP_TYPE_DOUBLE_COMPLEX: case GPUBP_TYPE_LONG_DOUBLE: return 16;
    default: return 0;
    }
}

int gbp_type_known(int type) { return type == GPUBP_TYPE_STRING || gbp_type_size(type) != 0; }

const char *gbp_type_name(int type)
{
    switch (type) {
    case GPUBP_TYPE_INT8: return "int8_t";
    case GPUBP_TYPE_INT16: return "int16_t";
    case GPUBP_TYPE_INT32: return "int32_t";
    case GPUBP_TYPE_INT64: return "int64_t";
    case GPUBP_TYPE_UINT8: return "uint8_t";
    case GPUBP_TYPE_UINT16: return "uint16_t";
    case GPUBP_TYPE_UINT32: return "uint32_t";
    case GPUBP_TYPE_UINT64: return "uint64_t";
    case GPUBP_TYPE_FLOAT: return "float";
    case GPUBP_TYPE_DOUBLE: return "double";
    case GPUBP_TYPE_LONG_DOUBLE: return "long double";
    case GPUBP_TYPE_FLOAT_COMPLEX: return "float complex";
    case GPUBP_TYPE_DOUBLE_COMPLEX: return "double complex";
    case GPUBP_TYPE_STRING: case GPUBP_TYPE_STRING_ARRAY: return "string";
    case GPUBP_TYPE_CHAR: return "char";
    case GPUBP_TYPE_STRUCT: return "struct";
    default: return "unknown";
    }
}

/* ---- long double: the x87 80-bit extended format in 16 bytes, handled bit by bit so that every
 * platform reads it the same way ---------------------------------------------------------------- */

static void ld_split(const void *p, uint64_t *mant, unsigned *exp, int *neg)
{
    const uint8_t *b = p;
    uint16_t se = gbp_ld16(b + 8);
    *mant = gbp_ld64(b);
    *exp = se & 0x7fffu;
    *neg = se >> 15;
}

static int ld_isnan(uint64_t m, unsigned e) { return e == 0x7fff && (m << 1) != 0; }

/* The magnitude as one ordered key: exponent, then significand (the explicit integer bit makes
 * the significand of normal numbers >= 2^63; pseudo-denormals compare by value as well). */
static int ld_mag_cmp(uint64_t ma, unsigned ea, uint64_t mb, unsigned eb)
{
    /* a denormal (exponent 0) has the scale of exponent 1 */
    unsigned xa = ea ? ea : 1, xb = eb ? eb : 1;
    if (ma == 0) xa = 0;
    if (mb == 0) xb = 0;
    if (xa != xb) return xa < xb ? -1 : 1;
    return ma < mb ? -1 : (ma > mb ? 1 : 0);
}

/* a < b as IEEE comparison: false when either is NaN, -0 == +0 */
int gbp_ld_less(const void *a, const void *b)
{
    uint64_t ma, mb;
    unsigned ea, eb;
    int na, nb;
    ld_split(a, &ma, &ea, &na);
    ld_split(b, &mb, &eb, &nb);
    if (ld_isnan(ma, ea) || ld_isnan(mb, eb)) return 0;
    int za = ma == 0, zb = mb == 0;
    if (za && zb) return 0;
    if (na != nb) return na && !(za && zb);
    int c = ld_mag_cmp(ma, ea, mb, eb);
    return na ? c > 0 : c < 0;
}

void gbp_ld_from_double(void *dst, double x)
{
    uint8_t *b = dst;
    uint64_t bits, m;
    memcpy(&bits, &x, 8);
    unsigned neg = (unsigned)(bits >> 63), e = (unsigned)(bits >> 52) & 0x7ffu;
    uint64_t frac = bits & ((UINT64_C(1) << 52) - 1);
    unsigned ex;
    if (e == 0x7ff) {
        ex = 0x7fff;
        m = (UINT64_C(1) << 63) | (frac << 11);
    } else if (e == 0 && frac == 0) {
        ex = 0;
        m = 0;
    } else if (e == 0) {
        /* subnormal double: normal in the extended format */
        int sh = 0;
        while (!(frac & (UINT64_C(1) << 52))) {
            frac <<= 1;
            sh++;
        }
        m = frac << 11;
        ex = (unsigned)(16383 - 1022 - sh);
    } else {
        m = (UINT64_C(1) << 63) | (frac << 11);
        ex = e - 1023 + 16383;
    }
    memset(b, 0, 16);
    memcpy(b, &m, 8);
    uint16_t se = (uint16_t)((neg << 15) | ex);
    memcpy(b + 8, &se, 2);
}

/* IEEE binary128 in 16 little-endian bytes: sign and 15-bit exponent in the top 16 bits, a
 * 112-bit fraction below (the exponent's range and bias are the x87 format's). */
int gbp_ld_from_binary128(void *dst, const void *src)
{
    const uint8_t *s = src;
    uint64_t lo = gbp_ld64(s), hi = gbp_ld64(s + 8);
    unsigned e = (unsigned)(hi >> 48) & 0x7fffu, neg = (unsigned)(hi >> 63);
    uint64_t fhi = hi & ((UINT64_C(1) << 48) - 1), low49 = lo & ((UINT64_C(1) << 49) - 1);
    uint64_t top = fhi << 15 | lo >> 49, m; /* the fraction's top 63 bits */
    int exact = low49 == 0;
    if (e == 0x7fff) {
        m = UINT64_C(1) << 63 | top;
        if (fhi | lo) { /* NaN: a NaN (its payload's top bits), quiet if they are all zero */
            if (!top) m |= UINT64_C(1) << 62;
            exact = 1;
        }
    } else if (e == 0) {
        m = top; /* zero or subnormal: the same scale, no integer bit */
    } else {
        m = UINT64_C(1) << 63 | top;
    }
    if (!exact) return -1;
    uint8_t b[16] = {0};
    for (int i = 0; i < 8; i++) b[i] = (uint8_t)(m >> 8 * i);
    uint16_t se = (uint16_t)(neg << 15 | e);
    b[8] = (uint8_t)se;
    b[9] = (uint8_t)(se >> 8);
    memcpy(dst, b, 16);
    return 0;
}

void gbp_ld_to_binary128(void *dst, const void *src)
{
    uint64_t m, top;
    unsigned e;
    int neg;
    ld_split(src, &m, &e, &neg);
    if (e == 0 && (m >> 63)) { /* a pseudo-denormal: the value of exponent 1 */
        e = 1;
        top = m & ~(UINT64_C(1) << 63);
    } else if (e != 0 && e != 0x7fff && !(m >> 63)) { /* an unnormal (invalid): a NaN */
        e = 0x7fff;
        top = UINT64_C(1) << 62;
    } else {
        top = m & ~(UINT64_C(1) << 63);
    }
    uint64_t lo = (top & 0x7fff) << 49, hi = (uint64_t)(neg != 0) << 63 | (uint64_t)e << 48 | top >> 15;
    uint8_t *b = dst;
    for (int i = 0; i < 8; i++) {
        b[i] = (uint8_t)(lo >> 8 * i);
        b[8 + i] = (uint8_t)(hi >> 8 * i);
    }
}

double gbp_ld_to_double(const void *src)
{
    uint64_t m;
    unsigned e;
    int neg;
    ld_split(src, &m, &e, &neg);
    double r;
    if (e == 0x7fff) {
        if ((m << 1) == 0) {
            r = HUGE_VAL;
        } else {
            /* NaN: keep the top of the payload, quiet */
            uint64_t bits = (UINT64_C(0x7ff) << 52) | (UINT64_C(1) << 51) | ((m << 1) >> 12);
            memcpy(&r, &bits, 8);
        }
    } else if (m == 0) {
        r = 0.0;
    } else {
        /* value = m * 2^(e' - 16383 - 63) with e' = max(e, 1): the conversion of m rounds to
         * 53 bits, ldexp scales (rounding once more only in double's subnormal range) */
        int x = (int)(e ? e : 1) - 16383 - 63;
        r = ldexp((double)m, x);
    }
    return neg ? -r : r;
}

/* min: first smallest (v < min); max: last largest (!(v < max)), as std::minmax_element. */
#define GBP_MINMAX_REAL(T)                                             \
    do {                                                               \
        T mn, mx, v;                                                   \
        const unsigned char *q = p;                                    \
        size_t i = 0;                                                  \
        if (have) { memcpy(&mn, min, sizeof(T)); memcpy(&mx, max, sizeof(T)); } \
        else { memcpy(&mn, q, sizeof(T)); mx = mn; i = 1; }            \
        if (((uintptr_t)q % sizeof(T)) == 0) {                         \
            const T *a = (const T *)(const void *)q;                   \
            for (; i < n; i++) {                                       \
                v = a[i];                                              \
                mn = v < mn ? v : mn;                                  \
                mx = v < mx ? mx : v;                                  \
            }                                                          \
        } else {                                                       \
            for (; i < n; i++) {                                       \
                memcpy(&v, q + i * sizeof(T), sizeof(T));              \
                mn = v < mn ? v : mn;                                  \
                mx = v < mx ? mx : v;                                  \
            }                                                          \
        }                                                              \
        memcpy(min, &mn, sizeof(T));                                   \
        memcpy(max, &mx, sizeof(T));                                   \
    } while (0)

/* the same rules through gbp_ld_less */
static void minmax_ld(const unsigned char *q, size_t n, void *min, void *max, int have)
{
    uint8_t mn[16], mx[16];
    size_t i = 0;
    if (have) {
        memcpy(mn, min, 16);
        memcpy(mx, max, 16);
    } else {
        memcpy(mn, q, 16);
        memcpy(mx, q, 16);
        i = 1;
    }
    for (; i < n; i++) {
        const unsigned char *v = q + i * 16;
        if (gbp_ld_less(v, mn)) memcpy(mn, v, 16);
        if (!gbp_ld_less(v, mx)) memcpy(mx, v, 16);
    }
    memset(mn + 10, 0, 6); /* padding: zeros in the metadata */
    memset(mx + 10, 0, 6);
    memcpy(min, mn, 16);
    memcpy(max, mx, 16);
}

#define GBP_MINMAX_CPLX(T)                                             \
    do {                                                               \
        T mn[2], mx[2], v[2];                                          \
        const unsigned char *q = p;                                    \
        size_t i = 0;                                                  \
        if (have) { memcpy(mn, min, sizeof mn); memcpy(mx, max, sizeof mx); } \
        else { memcpy(mn, q, sizeof mn); memcpy(mx, q, sizeof mx); i = 1; } \
        T nmn = mn[0] * mn[0] + mn[1] * mn[1];                         \
        T nmx = mx[0] * mx[0] + mx[1] * mx[1];                         \
        for (; i < n; i++) {                                           \
            memcpy(v, q + i * sizeof v, sizeof v);                     \
            T nv = v[0] * v[0] + v[1] * v[1];                          \
            if (nv < nmn) { nmn = nv; mn[0] = v[0]; mn[1] = v[1]; }    \
            if (nv > nmx) { nmx = nv; mx[0] = v[0]; mx[1] = v[1]; }    \
        }                                                              \
        memcpy(min, mn, sizeof mn);                                    \
        memcpy(max, mx, sizeof mx);                                    \
    } while (0)

void gbp_minmax(int type, const void *p, size_t n, void *min, void *max, int have)
{
    if (n == 0) return;
    switch (type) {
    case GPUBP_TYPE_INT8: GBP_MINMAX_REAL(int8_t); break;
    case GPUBP_TYPE_CHAR: GBP_MINMAX_REAL(char); break;
    case GPUBP_TYPE_INT16: GBP_MINMAX_REAL(int16_t); break;
    case GPUBP_TYPE_INT32: GBP_MINMAX_REAL(int32_t); break;
    case GPUBP_TYPE_INT64: GBP_MINMAX_REAL(int64_t); break;
    case GPUBP_TYPE_UINT8: GBP_MINMAX_REAL(uint8_t); break;
    case GPUBP_TYPE_UINT16: GBP_MINMAX_REAL(uint16_t); break;
    case GPUBP_TYPE_UINT32: GBP_MINMAX_REAL(uint32_t); break;
    case GPUBP_TYPE_UINT64: GBP_MINMAX_REAL(uint64_t); break;
    case GPUBP_TYPE_FLOAT: GBP_MINMAX_REAL(float); break;
    case GPUBP_TYPE_DOUBLE: GBP_MINMAX_REAL(double); break;
    case GPUBP_TYPE_FLOAT_COMPLEX: GBP_MINMAX_CPLX(float); break;
    case GPUBP_TYPE_DOUBLE_COMPLEX: GBP_MINMAX_CPLX(double); break;
    case GPUBP_TYPE_LONG_DOUBLE: minmax_ld(p, n, min, max, have); break;
    default: break;
    }
}

#define GBP_CMP(T)                                                     \
    do {                                                               \
        T x, y;                                                        \
        memcpy(&x, a, sizeof x);                                       \
        memcpy(&y, b, sizeof y);                                       \
        return x < y ? -1 : (y < x ? 1 : 0);                           \
    } while (0)
#define GBP_CMPC(T)                                                    \
    do {                                                               \
        T x[2], y[2];                                                  \
        memcpy(x, a, sizeof x);                                        \
        memcpy(y, b, sizeof y);                                        \
        T nx = x[0] * x[0] + x[1] * x[1], ny = y[0] * y[0] + y[1] * y[1]; \
        return nx < ny ? -1 : (ny < nx ? 1 : 0);                       \
    } while (0)

int gbp_value_cmp(int type, const void *a, const void *b)
{
    switch (type) {
    case GPUBP_TYPE_INT8: GBP_CMP(int8_t);
    case GPUBP_TYPE_CHAR: GBP_CMP(char);
    case GPUBP_TYPE_INT16: GBP_CMP(int16_t);
    case GPUBP_TYPE_INT32: GBP_CMP(int32_t);
    case GPUBP_TYPE_INT64: GBP_CMP(int64_t);
    case GPUBP_TYPE_UINT8: GBP_CMP(uint8_t);
    case GPUBP_TYPE_UINT16: GBP_CMP(uint16_t);
    case GPUBP_TYPE_UINT32: GBP_CMP(uint32_t);
    case GPUBP_TYPE_UINT64: GBP_CMP(uint64_t);
    case GPUBP_TYPE_FLOAT: GBP_CMP(float);
    case GPUBP_TYPE_DOUBLE: GBP_CMP(double);
    case GPUBP_TYPE_FLOAT_COMPLEX: GBP_CMPC(float);
    case GPUBP_TYPE_DOUBLE_COMPLEX: GBP_CMPC(double);
    case GPUBP_TYPE_LONG_DOUBLE: return gbp_ld_less(a, b) ? -1 : (gbp_ld_less(b, a) ? 1 : 0);
    default: return 0;
    }
}
