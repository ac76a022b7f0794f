/*
 * gpubpls: formatting of values and of data dumps, as bpls prints them.
 *
 * A value is first split into components (one; two for complex numbers), each an integer, a
 * double, a character or a string. The default rendering reproduces bpls's printf formats
 * (integers in decimal, floats %g, complex "(%g,i%g)", strings quoted). A user format (-f) is
 * applied conversion by conversion, each fed the next component converted to the type that its
 * conversion expects, so a format never reads an argument of the wrong type; an integer given
 * to an integer conversion keeps the bits bpls's printf reads (32 without a length modifier).
 */
#include "gpubpls/ls_print.h"

#include <ctype.h>
#include <float.h>
#include <inttypes.h>
#include <limits.h>
#include <math.h>
#include <string.h>

/* long double is the x87 80-bit format (as ADIOS2 stores it): its values print exactly */
#if LDBL_MANT_DIG == 64 && (defined(__x86_64__) || defined(__i386__))
#define LS_NATIVE_LDBL 1
#else
#define LS_NATIVE_LDBL 0
#endif

typedef enum { C_INT, C_UINT, C_DBL, C_CHAR, C_STR } comp_kind;

typedef struct comp {
    comp_kind kind;
    bool wide; /* a 64-bit integer (others reach printf promoted to a 32-bit int) */
    long long i;
    unsigned long long u;
    double d;
    const char *s;
#if LS_NATIVE_LDBL
    bool isld;      /* a GPUBP_TYPE_LONG_DOUBLE element, exact in ld */
    long double ld;
#endif
} comp;

int ls_ndigits(uint64_t n)
{
    int d = 1;
    while (n >= 10) {
        n /= 10;
        d++;
    }
    return d;
}

/* Splits element `item` of data into its components; returns how many (1 or 2). */
static int components(gpubp_type t, const void *data, size_t item, comp *v)
{
    const unsigned char *p = (const unsigned char *)data;
    memset(v, 0, 2 * sizeof *v);
/* one element of type T at index item, into component field F of kind K */
#define LOAD(T, K, F)                                                                              \
    {                                                                                              \
        T x;                                                                                       \
        memcpy(&x, p + sizeof x * item, sizeof x);                                                 \
        v->kind = K;                                                                               \
        v->wide = sizeof x == 8;                                                                   \
        v->F = x;                                                                                  \
        return 1;                                                                                  \
    }
/* a complex element of two T, into two double components */
#define LOAD2(T)                                                                                   \
    {                                                                                              \
        T x[2];                                                                                    \
        memcpy(x, p + sizeof x * item, sizeof x);                                                  \
        v[0].kind = v[1].kind = C_DBL;                                                             \
        v[0].d = x[0];                                                                             \
        v[1].d = x[1];                                                                             \
        return 2;                                                                                  \
    }
    switch (t) {
    case GPUBP_TYPE_INT8: LOAD(int8_t, C_INT, i)
    case GPUBP_TYPE_CHAR: LOAD(char, C_CHAR, i)
    case GPUBP_TYPE_INT16: LOAD(int16_t, C_INT, i)
    case GPUBP_TYPE_INT32: LOAD(int32_t, C_INT, i)
    case GPUBP_TYPE_INT64: LOAD(int64_t, C_INT, i)
    case GPUBP_TYPE_UINT8: LOAD(uint8_t, C_UINT, u)
    case GPUBP_TYPE_UINT16: LOAD(uint16_t, C_UINT, u)
    case GPUBP_TYPE_UINT32: LOAD(uint32_t, C_UINT, u)
    case GPUBP_TYPE_UINT64: LOAD(uint64_t, C_UINT, u)
    case GPUBP_TYPE_FLOAT: LOAD(float, C_DBL, d)
    case GPUBP_TYPE_DOUBLE: LOAD(double, C_DBL, d)
    case GPUBP_TYPE_FLOAT_COMPLEX: LOAD2(float)
    case GPUBP_TYPE_DOUBLE_COMPLEX: LOAD2(double)
    case GPUBP_TYPE_LONG_DOUBLE:
        /* exact through the native type where it is the x87 80-bit format, else through double */
        v->kind = C_DBL;
        if (gpubp_long_double_to_double(p + 16 * item, &v->d) != GPUBP_OK)
            v->d = NAN;
#if LS_NATIVE_LDBL
        v->isld = true;
        memcpy(&v->ld, p + 16 * item, 10);
#endif
        return 1;
    case GPUBP_TYPE_STRING_ARRAY:
    case GPUBP_TYPE_STRING: {
        const char *const *s = (const char *const *)data;
        v->kind = C_STR, v->s = s[item] ? s[item] : "";
        return 1;
    }
    case GPUBP_TYPE_STRUCT: /* never printed: bpls lists struct variables by name only */
        break;
    }
#undef LOAD
#undef LOAD2
    v->kind = C_STR, v->s = "?";
    return 1;
}

static long long as_ll(const comp *x)
{
    switch (x->kind) {
    case C_INT:
    case C_CHAR:
        return x->i;
    case C_UINT:
        return (long long)x->u;
    case C_DBL:
        if (isnan(x->d))
            return 0;
        if (x->d >= 9.2e18)
            return LLONG_MAX;
        if (x->d <= -9.2e18)
            return LLONG_MIN;
        return (long long)x->d;
    case C_STR:
        break;
    }
    return 0;
}

static double as_double(const comp *x)
{
    switch (x->kind) {
    case C_INT:
    case C_CHAR:
        return (double)x->i;
    case C_UINT:
        return (double)x->u;
    case C_DBL:
        return x->d;
    case C_STR:
        break;
    }
    return 0.0;
}

/* The default text of one component, as bpls prints it with no -f format. */
static void comp_default(FILE *out, const comp *x, bool allowformat)
{
    switch (x->kind) {
    case C_INT:
        fprintf(out, "%lld", x->i);
        return;
    case C_UINT:
        fprintf(out, "%llu", x->u);
        return;
    case C_CHAR:
        fputc((int)(unsigned char)x->i, out);
        return;
    case C_DBL:
#if LS_NATIVE_LDBL
        if (x->isld) {
            if (allowformat || (-10000.0L < x->ld && x->ld < 100000.0L))
                fprintf(out, "%Lg", x->ld);
            else
                fprintf(out, "%Le", x->ld);
            return;
        }
#endif
        /* min/max and attribute values switch to %e outside (-10000, 100000) */
        if (allowformat || (-10000.0 < x->d && x->d < 100000.0))
            fprintf(out, "%g", x->d);
        else
            fprintf(out, "%e", x->d);
        return;
    case C_STR:
        fprintf(out, "\"%s\"", x->s);
        return;
    }
}

/* Parses one conversion after '%' at *pp: copies it into spec (length modifiers dropped),
 * *width the bits an integer conversion reads (32 without a modifier, 16 h, 8 hh, 64 l ll q j z
 * t), and returns the conversion character, or 0 when it is not one gpubpls accepts. */
static char parse_conversion(const char **pp, char *spec, size_t specsize, int *width)
{
    const char *p = *pp;
    size_t n = 0;
    int k;
    spec[n++] = '%';
    for (k = 0; *p && strchr("-+ #0", *p); k++, p++)
        if (k < 8)
            spec[n++] = *p;
    for (k = 0; isdigit((unsigned char)*p); k++, p++)
        if (k < 4)
            spec[n++] = *p;
        else
            return 0;
    if (*p == '.') {
        spec[n++] = *p++;
        for (k = 0; isdigit((unsigned char)*p); k++, p++)
            if (k < 4)
                spec[n++] = *p;
            else
                return 0;
    }
    *width = 32;
    for (; *p && strchr("hlLqjzt", *p); p++)
        *width = *p != 'h' ? 64 : *width == 32 ? 16 : *width == 16 ? 8 : *width;
    char conv = *p;
    if (conv == 0 || strchr("diouxXeEfFgGaAcs", conv) == NULL)
        return 0;
    *pp = p + 1;
    if (strchr("diouxX", conv)) {
        spec[n++] = 'l';
        spec[n++] = 'l';
    }
    spec[n++] = conv;
    spec[n] = '\0';
    (void)specsize;
    return conv;
}

int ls_format_check(const char *fmt, char *msg, size_t msgsize)
{
    char spec[32];
    const char *p = fmt;
    while (*p) {
        if (*p++ != '%')
            continue;
        if (*p == '%') {
            p++;
            continue;
        }
        const char *at = p - 1;
        int width;
        if (parse_conversion(&p, spec, sizeof spec, &width) == 0) {
            snprintf(msg, msgsize,
                     "unsupported conversion at \"%s\" in format \"%s\" (allowed: flags, a "
                     "width and a precision of up to 4 digits, and one of d i o u x X e E f F "
                     "g G a A c s)",
                     at, fmt);
            return -1;
        }
    }
    return 0;
}

/* Prints the user format with the value's components, one per conversion (the last component
 * repeats when the format has more conversions than the value has components). */
static void print_formatted(FILE *out, const char *fmt, const comp *v, int nv)
{
    char spec[32];
    int k = 0;
    const char *p = fmt;
    while (*p) {
        if (*p != '%') {
            fputc(*p++, out);
            continue;
        }
        p++;
        if (*p == '%') {
            fputc('%', out);
            p++;
            continue;
        }
        int width;
        char conv = parse_conversion(&p, spec, sizeof spec, &width);
        if (conv == 0) /* checked at startup; stop rather than guess */
            return;
        const comp *x = &v[k < nv ? k : nv - 1];
        k++;
        /* an integer reaches bpls's printf as its C type promoted (a 32-bit int, or a 64-bit
         * long), and the conversion reads the bits its length modifier says: %x of an int8 -92
         * is ffffff5c, %d of an int64 its low 32 bits, %ld of an int32 its 32 bits with a zero
         * upper half (the x86-64 ABI as bpls's builds print it); so here */
        unsigned long long bits = x->kind == C_UINT ? x->u : (unsigned long long)as_ll(x);
        long long sbits = as_ll(x);
        if (x->kind == C_INT || x->kind == C_UINT) {
            if (!x->wide)
                bits = (unsigned)bits;
            if (width < 64)
                bits &= (1ULL << width) - 1;
            sbits = width < 64 && bits >> (width - 1) ? (long long)(bits | ~0ULL << width)
                                                      : (long long)bits;
        }
        switch (conv) {
        case 'd':
        case 'i':
            fprintf(out, spec, sbits);
            break;
        case 'o':
        case 'u':
        case 'x':
        case 'X':
            fprintf(out, spec, bits);
            break;
        case 'c':
            fprintf(out, spec, (int)(unsigned char)as_ll(x));
            break;
        case 's':
            if (x->kind == C_STR) {
                fprintf(out, spec, x->s);
            } else {
                char buf[64];
                if (x->kind == C_DBL)
                    snprintf(buf, sizeof buf, "%g", x->d);
                else if (x->kind == C_UINT)
                    snprintf(buf, sizeof buf, "%llu", x->u);
                else
                    snprintf(buf, sizeof buf, "%lld", x->i);
                fprintf(out, spec, buf);
            }
            break;
        default:
            fprintf(out, spec, as_double(x));
            break;
        }
    }
}

void ls_print_value(ls_ctx *c, gpubp_type t, const void *data, size_t item, bool allowformat)
{
    comp v[2];
    int nv = components(t, data, item, v);
    if (allowformat && c->opt.format) {
        print_formatted(c->out, c->opt.format, v, nv);
        return;
    }
    if (nv == 2) {
        fprintf(c->out, "(%g,i%g)", v[0].d, v[1].d);
        return;
    }
    comp_default(c->out, &v[0], allowformat);
}

/* -S: bytes printed as a string, trailing NULs or (with none) trailing blanks dropped. */
static void print_bytes_as_string(ls_ctx *c, const char *str, uint64_t maxlen)
{
    uint64_t len = maxlen;
    while (len > 0 && str[len - 1] == 0)
        len--;
    if (len < maxlen) {
        fprintf(c->out, "\"%.*s\"", (int)len, str);
        return;
    }
    while (len > 0 && str[len - 1] == ' ')
        len--;
    fprintf(c->out, "\"%*.*s\"", (int)len, (int)len, str);
    if (len < maxlen)
        fprintf(c->out, " + %d spaces", (int)(maxlen - len));
}

void ls_print_dataset(ls_ctx *c, const void *data, gpubp_type t, const uint64_t *s,
                      const uint64_t *cnt, int tdims, const int *ndigits)
{
    uint64_t ids[LS_MAX_DIMS];
    uint64_t n = 1;
    for (int i = 0; i < tdims; i++) {
        ids[i] = s[i];
        n *= cnt[i];
    }
    bool bytes = c->opt.byte_as_char &&
                 (t == GPUBP_TYPE_INT8 || t == GPUBP_TYPE_UINT8 || t == GPUBP_TYPE_CHAR);

    for (uint64_t item = 0; item < n; item++) {
        if (c->nextcol == 0 && !c->opt.noindex && tdims > 0) {
            fprintf(c->out, "    (%*" PRIu64, ndigits[0], ids[0]);
            for (int i = 1; i < tdims; i++)
                fprintf(c->out, ",%*" PRIu64, ndigits[i], ids[i]);
            fputs(")    ", c->out);
        }
        if (bytes) {
            /* a k-D byte array prints as a (k-1)-D array of strings */
            const char *str = (const char *)data;
            if (tdims == 0) {
                print_bytes_as_string(c, str, n);
            } else {
                print_bytes_as_string(c, str + item, cnt[tdims - 1]);
                item += cnt[tdims - 1] - 1;
                ids[tdims - 1] = s[tdims - 1] + cnt[tdims - 1] - 1;
            }
            c->nextcol = c->opt.ncols - 1;
        } else {
            ls_print_value(c, t, data, (size_t)item, true);
        }

        c->nextcol++;
        if (c->nextcol == c->opt.ncols) {
            fputc('\n', c->out);
            c->nextcol = 0;
        } else {
            fputc(' ', c->out);
        }

        bool roll = true;
        for (int i = tdims - 1; i >= 0 && roll; i--) {
            if (ids[i] == s[i] + cnt[i] - 1) {
                ids[i] = s[i];
            } else {
                ids[i]++;
                roll = false;
            }
        }
    }
}

void ls_print_endline(ls_ctx *c)
{
    if (c->nextcol != 0)
        fputc('\n', c->out);
    c->nextcol = 0;
}
