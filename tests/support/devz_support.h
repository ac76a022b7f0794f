/* The helpers of the GPU compression path's tests on the simulated device
 * (test_compress_devz.c, test_compress_devz_split.c): data with smooth, zero and random stretches,
 * writers of one device array "x" over two steps, byte comparison of two datasets' files, reads
 * back into host or (simulated) device memory. */
#ifndef GBP_TESTS_DEVZ_SUPPORT_H
#define GBP_TESTS_DEVZ_SUPPORT_H

#include "support/test_support.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/common.h"
#include "compress/blosczlib.h"
#include "memspace/simdev.h"

typedef struct tcase {
    gpubp_type type;
    size_t es;
} tcase;

static const tcase types[] = {{GPUBP_TYPE_FLOAT, 4}, {GPUBP_TYPE_DOUBLE, 8}, {GPUBP_TYPE_INT16, 2},
                              {GPUBP_TYPE_INT8, 1}, {GPUBP_TYPE_DOUBLE_COMPLEX, 16}};

/* fill: the second third random too (chunks that do not shrink, abandoned) */
static int fill_random_third;

/* smooth values, a zero stretch (runs, special chunks), a random stretch (raw streams) */
static inline void fill(uint8_t *p, size_t n, size_t es, gpubp_type type, unsigned seed)
{
    uint32_t x = 2463534242u ^ seed;
    size_t ne = n / es;
    for (size_t i = 0; i < ne; i++) {
        x ^= x << 13;
        x ^= x >> 17;
        x ^= x << 5;
        double v = sin(0.0007 * (double)(i + seed)) * 1000.0;
        if (i > ne / 3 && i < ne / 2) v = 0;
        uint8_t *e = p + i * es;
        if ((i > 2 * ne / 3 && i < 3 * ne / 4) ||
            (fill_random_third && i >= ne / 3 && i < 2 * ne / 3)) {
            for (size_t b = 0; b < es; b++) e[b] = (uint8_t)(x >> (b % 4 * 8));
            if (type == GPUBP_TYPE_FLOAT || type == GPUBP_TYPE_DOUBLE ||
                type == GPUBP_TYPE_DOUBLE_COMPLEX)
                memset(e, 0, es / 2); /* no NaN: values are compared as bytes anyway */
            continue;
        }
        switch (type) {
        case GPUBP_TYPE_FLOAT: { float f = (float)v; memcpy(e, &f, 4); break; }
        case GPUBP_TYPE_INT16: { int16_t s = (int16_t)v; memcpy(e, &s, 2); break; }
        case GPUBP_TYPE_INT8: { int8_t s = (int8_t)(v / 10); memcpy(e, &s, 1); break; }
        case GPUBP_TYPE_DOUBLE_COMPLEX: { double c[2] = {v, -v / 3}; memcpy(e, c, 16); break; }
        default: memcpy(e, &v, 8); break;
        }
    }
}

/* Two steps of n bytes of fill (seeds seed, seed + 1). */
static inline uint8_t *two_steps(const tcase *t, size_t n, unsigned seed)
{
    uint8_t *host = malloc(2 * n);
    assert_non_null(host);
    fill(host, n, t->es, t->type, seed);
    fill(host + n, n, t->es, t->type, seed + 1);
    return host;
}

/* The two steps of host (n bytes each) put through the device buffer d. */
static inline void put_steps(gpubp_file *w, gpubp_variable *v, uint8_t *d, const uint8_t *host, size_t n)
{
    for (int step = 0; step < 2; step++) {
        memcpy(d, host + (size_t)step * n, n);
        TS_OK(gpubp_begin_step(w));
        TS_OK(gpubp_put(w, v, d, GPUBP_SYNC));
        TS_OK(gpubp_end_step(w));
    }
}

/* A writer of path (params) with "x", n bytes of t in device memory through codec (ops). */
static inline gpubp_file *open_x(const char *path, const char *params, const char *codec,
                          const char *ops, const tcase *t, size_t n, gpubp_variable **v)
{
    gpubp_file *w;
    TS_OK(gpubp_open(&w, path, GPUBP_MODE_WRITE, params));
    size_t shape[1] = {n / t->es}, start[1] = {0};
    TS_OK(gpubp_define_variable(v, w, "x", t->type, 1, shape, start, shape));
    TS_OK(gpubp_set_memory_space(*v, GPUBP_MEM_GPU));
    TS_OK(gpubp_variable_add_operation(*v, codec, ops));
    return w;
}

static inline void write_one(const char *path, const char *params, const char *codec, const char *ops,
                      const tcase *t, const uint8_t *host, size_t n)
{
    gpubp_variable *v;
    gpubp_file *w = open_x(path, params, codec, ops, t, n, &v);
    uint8_t *d = gbp_sim_alloc(n);
    assert_non_null(d);
    put_steps(w, v, d, host, n);
    TS_OK(gpubp_close(w));
    gbp_sim_free(d);
}

static inline void same_file(const char *a, const char *b, const char *name, const char *what)
{
    size_t la, lb;
    unsigned char *x = ts_read_file(ts_join(a, name), &la), *y = ts_read_file(ts_join(b, name), &lb);
    assert_non_null(x);
    assert_non_null(y);
    if (la != lb || memcmp(x, y, la)) print_error("%s: %s differs: %zu vs %zu bytes\n", what, name, la, lb);
    assert_int_equal(la, lb);
    assert_memory_equal(x, y, la);
    free(x);
    free(y);
}

static inline void read_back(const char *path, const uint8_t *host, size_t n, const char *params, int dev)
{
    gpubp_file *r;
    TS_OK(gpubp_open(&r, path, GPUBP_MODE_READ_RANDOM_ACCESS, params));
    gpubp_variable *v;
    TS_OK(gpubp_inquire_variable(&v, r, "x"));
    if (dev) TS_OK(gpubp_set_memory_space(v, GPUBP_MEM_GPU));
    uint8_t *back = dev ? gbp_sim_alloc(n) : malloc(n);
    for (size_t step = 0; step < 2; step++) {
        memset(back, 0xA5, n);
        TS_OK(gpubp_set_step_selection(v, step, 1));
        TS_OK(gpubp_get(r, v, back, GPUBP_SYNC));
        assert_memory_equal(back, host + step * n, n);
    }
    if (dev) gbp_sim_free(back);
    else free(back);
    TS_OK(gpubp_close(r));
}

static inline int have_codec(const char *c)
{
    int code;
    if (gbp_blosc_codec_from_name(c, &code) != GPUBP_OK) return 0;
    int ok = gbp_blosc_check_codec(code) == GPUBP_OK;
    gbp_error_clear();
    return ok;
}

#endif /* GBP_TESTS_DEVZ_SUPPORT_H */
