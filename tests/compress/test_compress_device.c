/* Compressed writes from device memory (the simulated device, so it runs in CI): the staged path
 * (pieces landing in the pinned pool, compressed while the next pieces are copied and the
 * previous output is written) must write exactly the bytes that the same content written from
 * host memory gives — data.0 and md.0 byte for byte — for every shuffle, smooth, random (chunks
 * that do not shrink, rewritten raw) and zero (special chunks) data, strided device buffers
 * (memory selections), blocks cut into many pieces and into several Blosc2 chunks, and many
 * small blocks; read back into device memory (whole and sub-boxes). Failures injected mid-copy and
 * mid-write fail the step and leave the committed steps readable. */
#include "support/test_support.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "compress/blosczlib.h"
#include "memspace/memspace.h"
#include "memspace/simdev.h"

enum { K_SMOOTH, K_RANDOM, K_ZEROS, K_HALF };

static void fill(float *p, size_t n, int kind, unsigned seed)
{
    uint32_t x = 2463534242u ^ seed;
    for (size_t i = 0; i < n; i++) {
        x ^= x << 13;
        x ^= x >> 17;
        x ^= x << 5;
        switch (kind) {
        case K_SMOOTH: p[i] = (float)(sin(0.001 * (double)(i + seed)) * 100.0); break;
        case K_RANDOM: memcpy(&p[i], &x, 4); if (isnan(p[i])) p[i] = 1.5f; break;
        case K_ZEROS: p[i] = 0.0f; break;
        default: p[i] = i < n / 2 ? 0.0f : (float)(x % 1000u); break;
        }
    }
}

typedef struct spec {
    const char *name;
    size_t n;        /* elements of the 1-D block (or rows x 100 for the strided one) */
    int kind;
    const char *ops; /* operator params */
    int strided;     /* put from a buffer with a ghost column on each side */
    size_t blocks;   /* blocks of the variable per step */
} spec;

static const spec specs[] = {
    {"smooth_byte", 400001, K_SMOOTH, "shuffle=byte", 0, 1},
    {"smooth_bit", 100000, K_SMOOTH, "shuffle=bit,level=5", 0, 1},
    {"random_none", 300000, K_RANDOM, "shuffle=none", 0, 1},
    {"zeros", 300000, K_ZEROS, "shuffle=byte", 0, 1},
    {"half", 150003, K_HALF, "shuffle=byte,level=9", 0, 1},
    {"strided", 1000, K_SMOOTH, "shuffle=byte", 1, 1}, /* 1000 rows of 100 */
    {"small_blocks", 30 * 1000, K_SMOOTH, "shuffle=byte", 0, 30},
    {"tiny", 20, K_SMOOTH, "shuffle=byte", 0, 2},
};
#define NSPECS (sizeof specs / sizeof specs[0])

/* Writes every spec over two steps from host (dev 0) or simulated device (dev 1) memory. */
static void write_all(const char *path, int dev, const char *params, float **host)
{
    gpubp_file *w;
    TS_OK(gpubp_open(&w, path, GPUBP_MODE_WRITE, params));
    gpubp_variable *v[NSPECS];
    for (size_t k = 0; k < NSPECS; k++) {
        const spec *s = &specs[k];
        if (s->strided) {
            size_t shape[2] = {s->n, 100}, start[2] = {0, 0};
            TS_OK(gpubp_define_variable(&v[k], w, s->name, GPUBP_TYPE_FLOAT, 2, shape, start, shape));
            size_t ms[2] = {0, 1}, mc[2] = {s->n, 102};
            TS_OK(gpubp_set_memory_selection(v[k], 2, ms, mc));
        } else {
            size_t shape[1] = {s->n}, start[1] = {0}, count[1] = {s->n / s->blocks};
            TS_OK(gpubp_define_variable(&v[k], w, s->name, GPUBP_TYPE_FLOAT, 1, shape, start, count));
        }
        TS_OK(gpubp_set_memory_space(v[k], dev ? GPUBP_MEM_GPU : GPUBP_MEM_HOST));
        TS_OK(gpubp_variable_add_operation(v[k], "zlib", s->ops));
    }
    void *bufs[NSPECS];
    for (int step = 0; step < 2; step++) {
        TS_OK(gpubp_begin_step(w));
        for (size_t k = 0; k < NSPECS; k++) {
            const spec *s = &specs[k];
            size_t n = s->strided ? s->n * 102 : s->n;
            bufs[k] = dev ? gbp_sim_alloc(n * 4) : malloc(n * 4);
            assert_non_null(bufs[k]);
            memcpy(bufs[k], host[k] + (size_t)step * n, n * 4);
            if (s->blocks == 1) {
                TS_OK(gpubp_put(w, v[k], bufs[k], GPUBP_DEFERRED));
                continue;
            }
            for (size_t b = 0; b < s->blocks; b++) {
                size_t per = s->n / s->blocks, st[1] = {b * per}, ct[1] = {per};
                TS_OK(gpubp_set_selection(v[k], 1, st, ct));
                TS_OK(gpubp_put(w, v[k], (float *)bufs[k] + b * per, GPUBP_DEFERRED));
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

static float **make_data(void)
{
    float **host = calloc(NSPECS, sizeof *host);
    for (size_t k = 0; k < NSPECS; k++) {
        size_t n = specs[k].strided ? specs[k].n * 102 : specs[k].n;
        host[k] = malloc(2 * n * 4);
        fill(host[k], 2 * n, specs[k].kind, (unsigned)k);
    }
    return host;
}

static void free_data(float **host)
{
    for (size_t k = 0; k < NSPECS; k++) free(host[k]);
    free(host);
}

static void same_file(const char *a, const char *b, const char *name)
{
    size_t la, lb;
    unsigned char *x = ts_read_file(ts_join(a, name), &la), *y = ts_read_file(ts_join(b, name), &lb);
    assert_non_null(x);
    assert_non_null(y);
    if (la != lb || memcmp(x, y, la)) print_error("%s differs: %zu vs %zu bytes\n", name, la, lb);
    assert_int_equal(la, lb);
    assert_memory_equal(x, y, la);
    free(x);
    free(y);
}

/* Reads every spec back (host memory) and compares with what was put. */
static void check_values(const char *path, float **host)
{
    gpubp_file *r;
    TS_OK(gpubp_open(&r, path, GPUBP_MODE_READ_RANDOM_ACCESS, NULL));
    for (size_t k = 0; k < NSPECS; k++) {
        const spec *s = &specs[k];
        gpubp_variable *v;
        TS_OK(gpubp_inquire_variable(&v, r, s->name));
        size_t n = s->strided ? s->n * 100 : s->n;
        float *back = malloc(n * 4);
        for (size_t step = 0; step < 2; step++) {
            TS_OK(gpubp_set_step_selection(v, step, 1));
            TS_OK(gpubp_get(r, v, back, GPUBP_SYNC));
            const float *want = host[k] + step * (s->strided ? s->n * 102 : s->n);
            if (!s->strided) {
                assert_memory_equal(back, want, n * 4);
                continue;
            }
            for (size_t row = 0; row < s->n; row++)
                assert_memory_equal(back + row * 100, want + row * 102 + 1, 400);
        }
        free(back);
    }
    TS_OK(gpubp_close(r));
}

/* Reads every spec back into (simulated) device memory, whole and as a sub-box that starts and
 * ends inside Blosc2 blocks, through a pool of small slots (decoded span by span). */
static void check_values_device(const char *path, float **host)
{
    gpubp_file *r;
    TS_OK(gpubp_open(&r, path, GPUBP_MODE_READ_RANDOM_ACCESS,
                     "device=simulated,gpu_layout=row_major,chunk_mib=1,pool_slots=3"));
    for (size_t k = 0; k < NSPECS; k++) {
        const spec *s = &specs[k];
        gpubp_variable *v;
        TS_OK(gpubp_inquire_variable(&v, r, s->name));
        TS_OK(gpubp_set_memory_space(v, GPUBP_MEM_GPU));
        size_t n = s->strided ? s->n * 100 : s->n;
        float *back = gbp_sim_alloc(n * 4);
        for (size_t step = 0; step < 2; step++) {
            const float *want = host[k] + step * (s->strided ? s->n * 102 : s->n);
            TS_OK(gpubp_set_step_selection(v, step, 1));
            if (s->strided) {
                size_t st[2] = {s->n / 3, 7}, ct[2] = {s->n / 2, 50};
                TS_OK(gpubp_set_selection(v, 2, st, ct));
                TS_OK(gpubp_get(r, v, back, GPUBP_SYNC));
                for (size_t row = 0; row < ct[0]; row++)
                    assert_memory_equal(back + row * 50, want + (st[0] + row) * 102 + 1 + 7, 200);
                continue;
            }
            size_t st[1] = {0}, ct[1] = {n};
            TS_OK(gpubp_set_selection(v, 1, st, ct));
            TS_OK(gpubp_get(r, v, back, GPUBP_SYNC));
            assert_memory_equal(back, want, n * 4);
            st[0] = n / 3 + 1;
            ct[0] = n / 2;
            TS_OK(gpubp_set_selection(v, 1, st, ct));
            TS_OK(gpubp_get(r, v, back, GPUBP_SYNC));
            assert_memory_equal(back, want + st[0], ct[0] * 4);
        }
        gbp_sim_free(back);
    }
    TS_OK(gpubp_close(r));
}

static void run_case(const char *tag, const char *dev_params, int max_chunk)
{
    char hp[64], dp[64];
    snprintf(hp, sizeof hp, "host_%s.bp", tag);
    snprintf(dp, sizeof dp, "dev_%s.bp", tag);
    const char *host_path = ts_path(hp), *dev_path = ts_path(dp);
    float **host = make_data();
    gbp_blosc_set_max_chunk((size_t)max_chunk);
    write_all(host_path, 0, "gpu_layout=row_major", host);
    write_all(dev_path, 1, dev_params, host);
    gbp_blosc_set_max_chunk(0);
    same_file(host_path, dev_path, "data.0");
    same_file(host_path, dev_path, "md.0");
    check_values(dev_path, host);
    check_values_device(dev_path, host);
    assert_int_equal(ts_bp4check(dev_path), 0);
    free_data(host);
}

/* Slots of 1 MiB: every large block is many pieces; 3 slots: copies queued ahead wrap around. */
static void device_equals_host(void **state)
{
    (void)state;
    run_case("pieces", "device=simulated,gpu_layout=row_major,chunk_mib=1,pool_slots=3", 0);
}

/* Blosc2 chunks of 500 003 bytes (the split hook): pieces straddle chunk boundaries. */
static void device_equals_host_chunks(void **state)
{
    (void)state;
    run_case("chunks",
             "device=simulated,gpu_layout=row_major,chunk_mib=1,pool_slots=2,compress_threads=3",
             500003);
}

/* Failures in the middle of a compressed device block: a copy, then a write. The step fails with
 * the status, the step before it stays readable, and the file stays usable for later steps. */
static void failures(void **state)
{
    (void)state;
    for (int what = 0; what < 2; what++) {
        const char *path = ts_path(what ? "fail_io.bp" : "fail_copy.bp");
        size_t n = 400000, shape[1] = {n}, start[1] = {0};
        float *h = malloc(n * 4), *d = gbp_sim_alloc(n * 4);
        fill(h, n, K_SMOOTH, 3);
        memcpy(d, h, n * 4);
        gpubp_file *w;
        TS_OK(gpubp_open(&w, path, GPUBP_MODE_WRITE, "device=simulated,chunk_mib=1,pool_slots=2"));
        gpubp_variable *v;
        TS_OK(gpubp_define_variable(&v, w, "x", GPUBP_TYPE_FLOAT, 1, shape, start, shape));
        TS_OK(gpubp_set_memory_space(v, GPUBP_MEM_GPU));
        TS_OK(gpubp_variable_add_operation(v, "zlib", NULL));
        TS_OK(gpubp_begin_step(w));
        TS_OK(gpubp_put(w, v, d, GPUBP_SYNC));
        TS_OK(gpubp_end_step(w));
        if (what) gbp_sim_fail_io_after(1);
        else gbp_sim_fail_copy_after(0); /* the block's one piece: its only copy */
        TS_OK(gpubp_begin_step(w));
        int rc = gpubp_put(w, v, d, GPUBP_DEFERRED);
        if (rc == GPUBP_OK) rc = gpubp_end_step(w);
        assert_int_equal(rc, what ? GPUBP_ERR_IO : GPUBP_ERR_DEVICE);
        gbp_sim_reset();
        (void)gpubp_close(w);
        gpubp_file *r;
        TS_OK(gpubp_open(&r, path, GPUBP_MODE_READ_RANDOM_ACCESS, NULL));
        size_t steps = 0;
        TS_OK(gpubp_steps(r, &steps));
        assert_int_equal(steps, 1);
        gpubp_variable *rv;
        TS_OK(gpubp_inquire_variable(&rv, r, "x"));
        float *back = malloc(n * 4);
        TS_OK(gpubp_get(r, rv, back, GPUBP_SYNC));
        assert_memory_equal(back, h, n * 4);
        TS_OK(gpubp_close(r));
        free(back);
        free(h);
        gbp_sim_free(d);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(device_equals_host),
        cmocka_unit_test(device_equals_host_chunks),
        cmocka_unit_test(failures),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
