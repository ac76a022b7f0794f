/* Compressed writes and reads from (simulated) device memory with every Blosc2 codec (issue 22):
 * for blosclz, lz4, lz4hc, zstd (and zlib, the reference) x byte, bit and no shuffle, a device
 * block streamed through the pinned pool (pieces of 1 MiB, blocks cut into several Blosc2
 * chunks by the chunk hook) gives data.0 and md.0 byte-identical to the same content written
 * from host memory; the values read back into host and into device memory (whole and a sub-box
 * that starts and ends inside Blosc2 blocks, decoded span by span) are those put. The data:
 * smooth floats and doubles (split streams of typesize 4 and 8 with byte shuffle), random words
 * (chunks that do not shrink: rewritten raw), zeros (special chunks), half zeros, many small
 * blocks, a block under 128 bytes. A codec this build lacks is skipped (the refusal itself is
 * test_compress_codec_missing). */
#include "support/test_support.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "compress/blosczlib.h"
#include "memspace/memspace.h"
#include "memspace/simdev.h"

enum { K_SMOOTH, K_RANDOM, K_ZEROS, K_HALF, K_DOUBLE };

typedef struct spec {
    const char *name;
    size_t n;      /* elements of the variable per step */
    int kind;
    size_t blocks; /* blocks per step */
} spec;

static const spec specs[] = {
    {"smooth", 150001, K_SMOOTH, 1}, {"random", 100000, K_RANDOM, 1},
    {"zeros", 100000, K_ZEROS, 1},   {"half", 50003, K_HALF, 1},
    {"dbl", 60000, K_DOUBLE, 1},     {"small_blocks", 20 * 1000, K_SMOOTH, 20},
    {"tiny", 20, K_SMOOTH, 2},
};
#define NSPECS (sizeof specs / sizeof specs[0])

static size_t esize(const spec *s) { return s->kind == K_DOUBLE ? 8 : 4; }

static void fill(const spec *s, void *buf, size_t n, unsigned seed)
{
    uint32_t x = 2463534242u ^ seed;
    float *p = buf;
    for (size_t i = 0; i < n; i++) {
        x ^= x << 13;
        x ^= x >> 17;
        x ^= x << 5;
        switch (s->kind) {
        case K_SMOOTH: p[i] = (float)(sin(0.001 * (double)(i + seed)) * 100.0); break;
        case K_RANDOM: memcpy(&p[i], &x, 4); if (isnan(p[i])) p[i] = 1.5f; break;
        case K_ZEROS: p[i] = 0.0f; break;
        case K_HALF: p[i] = i < n / 2 ? 0.0f : (float)(x % 1000u); break;
        default: ((double *)buf)[i] = cos(3e-4 * (double)(i + seed)) * 1e3; break;
        }
    }
}

static gpubp_type vtype(const spec *s) { return s->kind == K_DOUBLE ? GPUBP_TYPE_DOUBLE : GPUBP_TYPE_FLOAT; }

/* Every spec over two steps from host (dev 0) or simulated device (dev 1) memory. */
static void write_all(const char *path, int dev, const char *params, const char *codec,
                      const char *ops, void **host)
{
    gpubp_file *w;
    TS_OK(gpubp_open(&w, path, GPUBP_MODE_WRITE, params));
    gpubp_variable *v[NSPECS];
    for (size_t k = 0; k < NSPECS; k++) {
        const spec *s = &specs[k];
        size_t shape[1] = {s->n}, start[1] = {0}, count[1] = {s->n / s->blocks};
        TS_OK(gpubp_define_variable(&v[k], w, s->name, vtype(s), 1, shape, start, count));
        TS_OK(gpubp_set_memory_space(v[k], dev ? GPUBP_MEM_GPU : GPUBP_MEM_HOST));
        TS_OK(gpubp_variable_add_operation(v[k], codec, ops));
    }
    void *bufs[NSPECS];
    for (int step = 0; step < 2; step++) {
        TS_OK(gpubp_begin_step(w));
        for (size_t k = 0; k < NSPECS; k++) {
            const spec *s = &specs[k];
            size_t bytes = s->n * esize(s), per = s->n / s->blocks;
            bufs[k] = dev ? gbp_sim_alloc(bytes) : malloc(bytes);
            assert_non_null(bufs[k]);
            memcpy(bufs[k], (char *)host[k] + (size_t)step * bytes, bytes);
            for (size_t b = 0; b < s->blocks; b++) {
                size_t st[1] = {b * per}, ct[1] = {per};
                TS_OK(gpubp_set_selection(v[k], 1, st, ct));
                TS_OK(gpubp_put(w, v[k], (char *)bufs[k] + b * per * esize(s), GPUBP_DEFERRED));
            }
        }
        TS_OK(gpubp_end_step(w));
        for (size_t k = 0; k < NSPECS; k++) {
            if (dev) gbp_sim_free(bufs[k]);
            else free(bufs[k]);
        }
    }
    TS_OK(gpubp_close(w));
}

static void same_file(const char *a, const char *b, const char *name, const char *tag)
{
    size_t la, lb;
    unsigned char *x = ts_read_file(ts_join(a, name), &la), *y = ts_read_file(ts_join(b, name), &lb);
    assert_non_null(x);
    assert_non_null(y);
    if (la != lb || memcmp(x, y, la))
        fail_msg("%s: %s differs: %zu vs %zu bytes", tag, name, la, lb);
    free(x);
    free(y);
}

/* Reads every spec back into host memory (dev 0) or into simulated device memory through a pool
 * of small slots (dev 1: whole, and a sub-box inside Blosc2 blocks). */
static void check_values(const char *path, void **host, int dev, const char *tag)
{
    gpubp_file *r;
    TS_OK(gpubp_open(&r, path, GPUBP_MODE_READ_RANDOM_ACCESS,
                     dev ? "device=simulated,gpu_layout=row_major,chunk_mib=1,pool_slots=3"
                         : NULL));
    for (size_t k = 0; k < NSPECS; k++) {
        const spec *s = &specs[k];
        gpubp_variable *v;
        TS_OK(gpubp_inquire_variable(&v, r, s->name));
        if (dev) TS_OK(gpubp_set_memory_space(v, GPUBP_MEM_GPU));
        size_t es = esize(s), n = s->n;
        char *back = dev ? gbp_sim_alloc(n * es) : malloc(n * es);
        assert_non_null(back);
        for (size_t step = 0; step < 2; step++) {
            const char *want = (const char *)host[k] + step * n * es;
            TS_OK(gpubp_set_step_selection(v, step, 1));
            size_t st[1] = {0}, ct[1] = {n};
            TS_OK(gpubp_set_selection(v, 1, st, ct));
            TS_OK(gpubp_get(r, v, back, GPUBP_SYNC));
            if (memcmp(back, want, n * es))
                fail_msg("%s: %s step %zu differs (%s memory)", tag, s->name, step,
                         dev ? "device" : "host");
            st[0] = n / 3 + 1;
            ct[0] = n / 2;
            TS_OK(gpubp_set_selection(v, 1, st, ct));
            TS_OK(gpubp_get(r, v, back, GPUBP_SYNC));
            if (memcmp(back, want + st[0] * es, ct[0] * es))
                fail_msg("%s: %s step %zu sub-box differs (%s memory)", tag, s->name, step,
                         dev ? "device" : "host");
        }
        if (dev) gbp_sim_free(back);
        else free(back);
    }
    TS_OK(gpubp_close(r));
}

static int have(const char *codec)
{
    int c;
    return gbp_blosc_codec_from_name(codec, &c) == GPUBP_OK && gbp_blosc_check_codec(c) == GPUBP_OK;
}

/* One codec, every shuffle (levels 1, 5 and 9 in turn, so that each codec's level mapping and
 * block sizes show up), in pieces of 1 MiB and in Blosc2 chunks of 200 003 bytes. */
static void run_codec(const char *codec)
{
    if (!have(codec)) {
        print_message("skipped %s: %s\n", codec, gpubp_last_error());
        return;
    }
    static const char *const ops[] = {"shuffle=byte,level=1", "shuffle=bit,level=5",
                                      "shuffle=none,level=9"};
    void *host[NSPECS];
    for (size_t k = 0; k < NSPECS; k++) {
        size_t bytes = specs[k].n * esize(&specs[k]);
        host[k] = malloc(2 * bytes);
        assert_non_null(host[k]);
        fill(&specs[k], host[k], 2 * specs[k].n, (unsigned)k);
    }
    for (size_t o = 0; o < 3; o++) {
        char tag[64], hp[80], dp[80];
        snprintf(tag, sizeof tag, "%s_%zu", codec, o);
        snprintf(hp, sizeof hp, "host_%s.bp", tag);
        snprintf(dp, sizeof dp, "dev_%s.bp", tag);
        const char *host_path = ts_path(hp), *dev_path = ts_path(dp);
        gbp_blosc_set_max_chunk(o == 1 ? 200003 : 0);
        write_all(host_path, 0, "gpu_layout=row_major", codec, ops[o], host);
        write_all(dev_path, 1,
                  "device=simulated,gpu_layout=row_major,chunk_mib=1,pool_slots=3,"
                  "compress_threads=3",
                  codec, ops[o], host);
        gbp_blosc_set_max_chunk(0);
        same_file(host_path, dev_path, "data.0", tag);
        same_file(host_path, dev_path, "md.0", tag);
        check_values(dev_path, host, 0, tag);
        check_values(dev_path, host, 1, tag);
        assert_int_equal(ts_bp4check(dev_path), 0);
    }
    for (size_t k = 0; k < NSPECS; k++) free(host[k]);
}

static void device_blosclz(void **state) { (void)state; run_codec("blosclz"); }
static void device_lz4(void **state) { (void)state; run_codec("lz4"); }
static void device_lz4hc(void **state) { (void)state; run_codec("lz4hc"); }
static void device_zstd(void **state) { (void)state; run_codec("zstd"); }
static void device_zlib(void **state) { (void)state; run_codec("zlib"); }

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(device_blosclz), cmocka_unit_test(device_lz4),
        cmocka_unit_test(device_lz4hc),   cmocka_unit_test(device_zstd),
        cmocka_unit_test(device_zlib),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
