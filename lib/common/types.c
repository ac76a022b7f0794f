/* Type table and min/max, matching ADIOS2 (complex values compare by their norm). */
#include "common.h"

size_t gbp_type_size(int type)
{
    switch (type) {
    case GPUBP_TYPE_INT8: case GPUBP_TYPE_UINT8: case GPUBP_TYPE_CHAR: return 1;
    case GPUBP_TYPE_INT16: case GPUBP_TYPE_UINT16: return 2;
    case GPUBP_TYPE_INT32: case GPUBP_TYPE_UINT32: case GPUBP_TYPE_FLOAT: return 4;
    case GPUBP_TYPE_INT64: case GPUBP_TYPE_UINT64: case GPUBP_TYPE_DOUBLE:
    case GPUBP_TYPE_FLOAT_COMPLEX: return 8;
    case GPUBP_TYPE_DOUBLE_COMPLEX: return 16;
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
    case GPUBP_TYPE_FLOAT_COMPLEX: return "float complex";
    case GPUBP_TYPE_DOUBLE_COMPLEX: return "double complex";
    case GPUBP_TYPE_STRING: return "string";
    case GPUBP_TYPE_CHAR: return "char";
    default: return "unknown";
    }
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
    default: return 0;
    }
}
