/* The GPU compression path on the simulated device (CI has no GPU): with compress_device=on the
 * blocks are filtered, coded (the CPU stand-in of the batched device codec) and framed by
 * lib/engine/zdev.c, the Blosc2 framing assembled in "device" memory; data.0 and md.0 must equal
 * byte for byte those of compress_device=off (the CPU path), for every codec x shuffle x type,
 * at levels 1, 5 and 9, with pieces cut small and Blosc2 chunks cut small (the test hooks), and
 * the values must read back (split puts: test_compress_devz_split.c). compress_device=on fails clearly where the device cannot be used
 * (blosclz, a strided device box, host memory only), and a bad value is a parameter error. */
#include "support/test_support.h"

#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/common.h"
#include "compress/blosczlib.h"
#include "engine/zdev.h"
#include "engine/zdev_read.h"
#include "io/fileio.h"
#include "memspace/dz_stub.h"
#include "memspace/dz_cache.h"
#include "memspace/mem_dz.h"
#include "memspace/simdev.h"

#include "support/devz_support.h"

static const char *codecs[] = {"zlib", "lz4", "lz4hc", "zstd"};

/* one codec x shuffle x type x level: device path == CPU path, byte for byte */
static void check_case(const char *codec, const char *shuf, int level, const tcase *t, size_t n,
                       const char *extra)
{
    char ops[64], on[200], off[200], tag[160];
    snprintf(ops, sizeof ops, "shuffle=%s,level=%d", shuf, level);
    snprintf(on, sizeof on, "device=simulated,compress_device=on,chunk_mib=1,pool_slots=3%s", extra);
    snprintf(off, sizeof off, "device=simulated,compress_device=off%s", extra);
    snprintf(tag, sizeof tag, "%s %s level %d type %d n %zu%s", codec, shuf, level, (int)t->type,
             n, extra);
    uint8_t *host = malloc(2 * n);
    fill(host, n, t->es, t->type, 7);
    fill(host + n, n, t->es, t->type, 99);
    const char *pa = ts_path("devz_on.bp"), *pb = ts_path("devz_off.bp");
    write_one(pa, on, codec, ops, t, host, n);
    write_one(pb, off, codec, ops, t, host, n);
    same_file(pa, pb, "data.0", tag);
    same_file(pa, pb, "md.0", tag);
    read_back(pa, host, n, NULL, 0);
    read_back(pa, host, n, "device=simulated,gpu_layout=row_major", 1);
    free(host);
}

static void device_equals_cpu(void **state)
{
    (void)state;
    static const char *shufs[] = {"none", "byte", "bit"};
    gbp_zdev_set_piece(200000); /* pieces: several per block */
    for (size_t c = 0; c < sizeof codecs / sizeof *codecs; c++) {
        if (!have_codec(codecs[c])) continue;
        for (size_t s = 0; s < 3; s++)
            for (size_t k = 0; k < sizeof types / sizeof *types; k++)
                for (int level = 1; level <= 9; level += 4)
                    check_case(codecs[c], shufs[s], level, &types[k], 300000 + 48 + types[k].es * 3, "");
    }
    gbp_zdev_set_piece(0);
}

/* Small blocks (one Blosc2 block, the raw layout under 128 bytes), level 0, several chunks. */
static void device_equals_cpu_edges(void **state)
{
    (void)state;
    const tcase *f = &types[0];
    check_case("zlib", "byte", 1, f, 100, "");
    check_case("zlib", "byte", 1, f, 4000, "");
    check_case("lz4", "bit", 0, f, 40000, "");
    gbp_blosc_set_max_chunk(300007);
    gbp_zdev_set_piece(100000);
    for (size_t c = 0; c < sizeof codecs / sizeof *codecs; c++)
        if (have_codec(codecs[c])) check_case(codecs[c], "byte", 5, &types[1], 1000000, "");
    gbp_zdev_set_piece(0);
    gbp_blosc_set_max_chunk(0);
}

/* Whole chunks that do not shrink (abandoned, rewritten raw) in the middle of pieces: the
 * encoder holds the next piece's put while the current one is emitted (the device codes them
 * back to back), and the units of an abandoned chunk that the held put cut are placed raw. */
static void device_equals_cpu_abandoned(void **state)
{
    (void)state;
    fill_random_third = 1;
    gbp_blosc_set_max_chunk(300007);
    gbp_zdev_set_piece(70000);
    for (size_t c = 0; c < sizeof codecs / sizeof *codecs; c++)
        if (have_codec(codecs[c])) {
            check_case(codecs[c], "byte", 5, &types[2], 1200000, "");
            check_case(codecs[c], "none", 1, &types[3], 1000000, "");
            /* the random third (2 steps) stored raw: the chunks there were abandoned */
            assert_true(ts_file_size(ts_join(ts_path("devz_on.bp"), "data.0")) > 2 * 1000000 / 3);
        }
    gbp_zdev_set_piece(0);
    gbp_blosc_set_max_chunk(0);
    fill_random_third = 0;
}

/* The first chunk of the operator buffer of raw bytes in the file at path: its flags and block
 * size (the buffer found by its prefix: 0, 1, then raw as 8 bytes at 4). */
static void first_chunk(const char *path, size_t raw, int *flags, size_t *bsz)
{
    size_t len;
    unsigned char *d = ts_read_file(path, &len);
    assert_non_null(d);
    *flags = -1;
    for (size_t i = 0; i + 23 + 32 <= len; i++) {
        uint64_t v;
        memcpy(&v, d + i + 4, 8);
        if (d[i] != 0 || d[i + 1] != 1 || v != raw) continue;
        uint32_t b;
        memcpy(&b, d + i + 23 + 8, 4);
        *flags = d[i + 23 + 2];
        *bsz = b;
        break;
    }
    free(d);
    assert_int_not_equal(*flags, -1);
}

/* compress_device_block_kib: the GPU path's own blocks (unsplit streams), read back on the host
 * (CPU decoder) and the device; the stored size stays near the CPU path's for smooth data.
 * GPUBP_TEST_DEVZ_KEEP=DIR writes the files as DIR/blocks_CODEC.bp and DIR/cpu_CODEC.bp. */
static void device_blocks(void **state)
{
    (void)state;
    const tcase *t = &types[0];
    size_t n = (size_t)3 << 20;
    const char *keep = getenv("GPUBP_TEST_DEVZ_KEEP");
    uint8_t *host = two_steps(t, n, 5);
    for (size_t c = 0; c < sizeof codecs / sizeof *codecs; c++) {
        if (!have_codec(codecs[c])) continue;
        char pa[1024], pb[1024];
        snprintf(pa, sizeof pa, "%s", ts_path("devz_blocks_on.bp"));
        snprintf(pb, sizeof pb, "%s", ts_path("devz_blocks_off.bp"));
        if (keep && *keep) { /* for ADIOS2's bpls -d (docs/compression.md, "GPU blocks") */
            snprintf(pa, sizeof pa, "%s/blocks_%s.bp", keep, codecs[c]);
            snprintf(pb, sizeof pb, "%s/cpu_%s.bp", keep, codecs[c]);
        }
        write_one(pa, "device=simulated,compress_device=on,compress_device_block_kib=256", codecs[c],
                  "shuffle=byte,level=1", t, host, n);
        write_one(pb, "device=simulated,compress_device=off", codecs[c], "shuffle=byte,level=1", t,
                  host, n);
        int flags;
        size_t bsz;
        first_chunk(ts_join(pa, "data.0"), n, &flags, &bsz);
        assert_int_equal(bsz, 256 << 10);
        assert_true(flags & 0x10); /* DONTSPLIT */
        double on = (double)ts_file_size(ts_join(pa, "data.0")),
               off = (double)ts_file_size(ts_join(pb, "data.0"));
        assert_true(on < off * 1.2);
        read_back(pa, host, n, NULL, 0);
        size_t w0, r0, w1, r1;
        gbp_zdev_counts(&w0, &r0);
        read_back(pa, host, n, "device=simulated,gpu_layout=row_major", 1);
        gbp_zdev_counts(&w1, &r1);
        assert_int_equal(r1 - r0, 2);
    }
    free(host);
}

/* The device codec state of a closed file is parked (memspace/dz_cache.c) and the next file
 * takes it: with the simulated device in the cache, files written one after the other (rings,
 * fences and coded sets reused) still equal the CPU path's byte for byte and read back (the
 * reader's state parked too); turning the cache off frees what it holds. */
static void cache_across_files(void **state)
{
    (void)state;
    gbp_dz_cache_sim(1);
    assert_int_equal(gbp_dz_cache_count(), 0);
    setenv("GPUBP_ZDEV_SPLIT_MIB", "1", 1);
    gbp_zdev_set_piece(300000);
    const tcase *t = &types[0];
    size_t n = ((size_t)3 << 20) + 4 * 5;
    uint8_t *host = two_steps(t, n, 8);
    const char *on = "device=simulated,compress_device=on,chunk_mib=1,pool_slots=4,split_mib=2,subfiles=2";
    const char *off = "device=simulated,compress_device=off,split_mib=2,subfiles=2";
    for (int round = 0; round < 3; round++) {
        const char *codec = round == 1 ? "zstd" : "lz4";
        if (!have_codec(codec)) continue;
        char pa[1024], pb[1024];
        snprintf(pa, sizeof pa, "%s", ts_path("devz_cache_on.bp"));
        snprintf(pb, sizeof pb, "%s", ts_path("devz_cache_off.bp"));
        write_one(pa, on, codec, "shuffle=byte", t, host, n);
        assert_int_equal(gbp_dz_cache_count(), 1); /* parked at close */
        write_one(pb, off, codec, "shuffle=byte", t, host, n);
        static const char *files[] = {"data.0", "data.1", "md.0"};
        for (size_t k = 0; k < 3; k++) same_file(pa, pb, files[k], codec);
        read_back(pa, host, n, "device=simulated,gpu_layout=row_major", 1);
        assert_int_equal(gbp_dz_cache_count(), 1); /* taken by the reader, parked again */
    }
    free(host);
    gbp_zdev_set_piece(0);
    unsetenv("GPUBP_ZDEV_SPLIT_MIB");
    gbp_dz_cache_sim(0);
    assert_int_equal(gbp_dz_cache_count(), 0);
}

/* async_commit=1 with compressed device puts: end_step returns once the step's blocks are coded
 * into the library's own device buffers (gbp_mem_write_owned), not after their writes. In the
 * first step the I/O threads are held (gbp_sim_hold_io), so that no write can finish: end_step
 * must return all the same, and the caller overwrites its device buffer at once. Released, the
 * writes and the commit run behind; the second step runs unheld, its buffer overwritten as soon
 * as end_step returns. The file equals the synchronous writer's byte for byte and both steps read
 * back as put. */
typedef struct end_step_call {
    gpubp_file *w;
    atomic_int done;
    int rc;
} end_step_call;

static void *end_step_thread(void *p)
{
    end_step_call *c = p;
    c->rc = gpubp_end_step(c->w);
    atomic_store(&c->done, 1);
    return NULL;
}

static void async_commit_coded(void **state)
{
    (void)state;
    if (!have_codec("lz4")) skip();
    const tcase *t = &types[0];
    size_t n = ((size_t)3 << 20) + 4 * 5;
    uint8_t *host = two_steps(t, n, 11);
    const char *common =
        "device=simulated,compress_device=on,chunk_mib=1,pool_slots=2,io_threads=1";
    char pa[1024], pb[1024], params[256];
    snprintf(pa, sizeof pa, "%s", ts_path("devz_async.bp"));
    snprintf(pb, sizeof pb, "%s", ts_path("devz_sync.bp"));
    snprintf(params, sizeof params, "%s,async_commit=1", common);
    gpubp_variable *v;
    gpubp_file *w = open_x(pa, params, "lz4", "shuffle=byte", t, n, &v);
    uint8_t *d = gbp_sim_alloc(n);
    assert_non_null(d);
    for (int step = 0; step < 2; step++) {
        memcpy(d, host + (size_t)step * n, n);
        TS_OK(gpubp_begin_step(w));
        TS_OK(gpubp_put(w, v, d, GPUBP_DEFERRED));
        if (step == 1) {
            TS_OK(gpubp_end_step(w));
            memset(d, 0x5A, n);
            continue;
        }
        gbp_sim_hold_io(1);
        end_step_call c = {w, 0, -1};
        pthread_t th;
        assert_int_equal(pthread_create(&th, NULL, end_step_thread, &c), 0);
        for (int i = 0; i < 20000 && !atomic_load(&c.done); i++) usleep(1000); /* 20 s at most */
        int returned = atomic_load(&c.done);
        if (returned) memset(d, 0x5A, n); /* the caller's again: its writes are still held */
        gbp_sim_hold_io(0);
        assert_int_equal(pthread_join(th, NULL), 0);
        if (!returned) fail_msg("end_step waited for the held writes of coded outputs");
        TS_OK(c.rc);
    }
    TS_OK(gpubp_close(w));
    gbp_sim_free(d);
    write_one(pb, common, "lz4", "shuffle=byte", t, host, n);
    same_file(pa, pb, "data.0", "async_commit=1");
    same_file(pa, pb, "md.0", "async_commit=1");
    read_back(pa, host, n, NULL, 0);
    read_back(pa, host, n, "device=simulated,gpu_layout=row_major", 1);
    free(host);
}

/* async_commit=1 with compressed device puts, a write failing behind a step: the pipeline's
 * next pwrite fails (EIO) from the moment end_step of step 2 returned, so the failure falls on a
 * write of step 2 or, when step 2's were all done, of step 3. The failed step f is reported by
 * a later call naming it ("step f was not committed (async_commit)"), or by its own end_step
 * when the write failed before that returned (step 3; the I/O failure); the writer stops; steps
 * 0 .. f-1 stay readable, exactly as put, and the dataset has f steps. */
static void async_commit_coded_failure(void **state)
{
    (void)state;
    if (!have_codec("lz4")) skip();
    const tcase *t = &types[0];
    size_t n = ((size_t)3 << 20) + 4 * 5;
    uint8_t *host = malloc(4 * n);
    assert_non_null(host);
    for (unsigned k = 0; k < 4; k++) fill(host + k * n, n, t->es, t->type, 21 + k);
    const char *path = ts_path("devz_async_fail.bp");
    gpubp_variable *v;
    gpubp_file *w = open_x(path, "device=simulated,compress_device=on,chunk_mib=1,io_threads=2,"
                                 "async_commit=1", "lz4", "shuffle=byte", t, n, &v);
    uint8_t *d = gbp_sim_alloc(n);
    assert_non_null(d);
    int failed = -1, rc = GPUBP_OK;
    char msg[1024] = "";
    for (int step = 0; step < 4 && rc == GPUBP_OK; step++) {
        memcpy(d, host + (size_t)step * n, n);
        rc = gpubp_begin_step(w);
        if (rc == GPUBP_OK) rc = gpubp_put(w, v, d, GPUBP_DEFERRED);
        if (rc == GPUBP_OK) rc = gpubp_end_step(w);
        if (rc != GPUBP_OK) {
            snprintf(msg, sizeof msg, "%s", gpubp_last_error());
            failed = step; /* the call that found it; the step it names is checked below */
        }
        if (step == 2 && rc == GPUBP_OK) gbp_sim_fail_io_after(0);
    }
    int rc_close = gpubp_close(w);
    gbp_sim_fail_io_after(-1);
    if (failed < 0) { /* found by close */
        assert_int_not_equal(rc_close, GPUBP_OK);
        snprintf(msg, sizeof msg, "%s", gpubp_last_error());
    }
    gbp_sim_free(d);
    /* found behind: the message names the step; found by the step's own end_step (its write
     * failed before the step's perform was done): the I/O failure itself */
    int f = failed;
    const char *at = strstr(msg, "not committed") ? strstr(msg, "step ") : NULL;
    if (at) assert_int_equal(sscanf(at, "step %d", &f), 1);
    else assert_non_null(strstr(msg, "(injected)"));
    printf("async compressed failure: step %d, found at step %d (-1: close): %s\n", f, failed, msg);
    if (f != 2 && f != 3) fail_msg("failed step %d: %s", f, msg);
    gpubp_file *r;
    TS_OK(gpubp_open(&r, path, GPUBP_MODE_READ_RANDOM_ACCESS, NULL));
    size_t nsteps;
    TS_OK(gpubp_steps(r, &nsteps));
    assert_int_equal(nsteps, (size_t)f);
    gpubp_variable *rv;
    TS_OK(gpubp_inquire_variable(&rv, r, "x"));
    uint8_t *back = malloc(n);
    assert_non_null(back);
    for (size_t s = 0; s < (size_t)f; s++) {
        TS_OK(gpubp_set_step_selection(rv, s, 1));
        TS_OK(gpubp_get(r, rv, back, GPUBP_SYNC));
        assert_memory_equal(back, host + s * n, n);
    }
    free(back);
    TS_OK(gpubp_close(r));
    assert_int_equal(ts_bp4check(path), 0);
    free(host);
}

/* compress_device=on where the device cannot compress: a clear NOT_SUPPORTED naming why. */
static void on_fails_clearly(void **state)
{
    (void)state;
    size_t n = 10000, shape[1] = {n}, start[1] = {0};
    float *d = gbp_sim_alloc(n * 4 * 3);
    memset(d, 0, n * 12);
    const char *path = ts_path("devz_fail.bp");
    for (int what = 0; what < 2; what++) {
        gpubp_file *w;
        TS_OK(gpubp_open(&w, path, GPUBP_MODE_WRITE,
                         "device=simulated,compress_device=on,gpu_layout=row_major"));
        gpubp_variable *v;
        size_t shape2[2] = {100, 100}, start2[2] = {0, 0};
        if (what) /* a strided device box: rows of 100 in rows of 102 */
            TS_OK(gpubp_define_variable(&v, w, "x", GPUBP_TYPE_FLOAT, 2, shape2, start2, shape2));
        else
            TS_OK(gpubp_define_variable(&v, w, "x", GPUBP_TYPE_FLOAT, 1, shape, start, shape));
        TS_OK(gpubp_set_memory_space(v, GPUBP_MEM_GPU));
        TS_OK(gpubp_variable_add_operation(v, what ? "zlib" : "blosclz", NULL));
        if (what) {
            size_t ms[2] = {0, 1}, mc[2] = {100, 102};
            TS_OK(gpubp_set_memory_selection(v, 2, ms, mc));
        }
        TS_OK(gpubp_begin_step(w));
        TS_OK(gpubp_put(w, v, d, GPUBP_DEFERRED));
        int rc = gpubp_end_step(w);
        assert_int_equal(rc, GPUBP_ERR_NOT_SUPPORTED);
        const char *msg = gpubp_last_error();
        assert_non_null(strstr(msg, "compress_device=on"));
        assert_non_null(strstr(msg, what ? "contiguous" : "blosclz has no device codec"));
        gpubp_close(w);
    }
    /* off and auto: the CPU codec, and the file reads back */
    for (int mode = 0; mode < 2; mode++) {
        gpubp_file *w;
        TS_OK(gpubp_open(&w, path, GPUBP_MODE_WRITE,
                         mode ? "device=simulated,compress_device=off" : "device=simulated"));
        gpubp_variable *v;
        TS_OK(gpubp_define_variable(&v, w, "x", GPUBP_TYPE_FLOAT, 1, shape, start, shape));
        TS_OK(gpubp_set_memory_space(v, GPUBP_MEM_GPU));
        TS_OK(gpubp_variable_add_operation(v, "blosclz", NULL));
        TS_OK(gpubp_begin_step(w));
        TS_OK(gpubp_put(w, v, d, GPUBP_SYNC));
        TS_OK(gpubp_end_step(w));
        TS_OK(gpubp_close(w));
        uint8_t zero[40000] = {0};
        {
            gpubp_file *r;
            TS_OK(gpubp_open(&r, path, GPUBP_MODE_READ, NULL));
            TS_OK(gpubp_begin_step(r));
            gpubp_variable *rv;
            TS_OK(gpubp_inquire_variable(&rv, r, "x"));
            float *back = malloc(n * 4);
            TS_OK(gpubp_get(r, rv, back, GPUBP_SYNC));
            assert_memory_equal(back, zero, n * 4);
            free(back);
            TS_OK(gpubp_end_step(r));
            TS_OK(gpubp_close(r));
        }
    }
    gbp_sim_free(d);
    gpubp_file *w;
    assert_int_equal(gpubp_open(&w, path, GPUBP_MODE_WRITE, "compress_device=maybe"), GPUBP_ERR_PARAM);
    assert_non_null(strstr(gpubp_last_error(), "compress_device"));
}

/* ADIOS2's files (tests/golden/codecs: every codec x shuffle, BP4 and BP5) read into device
 * memory: decoded on the device (blosclz: the CPU decoder), the values those of a host read. */
static void read_adios2_files(void **state)
{
    (void)state;
    static const char *cs[] = {"blosclz", "lz4", "lz4hc", "zlib", "zstd"};
    static const char *ss[] = {"shuffle", "bitshuffle", "noshuffle"};
    static const char *vars[] = {"ints", "smooth", "tiny"};
    for (int bp = 4; bp <= 5; bp++)
        for (size_t c = 0; c < 5; c++) {
            if (!have_codec(cs[c])) continue;
            for (size_t s = 0; s < 3; s++) {
                char rel[128];
                snprintf(rel, sizeof rel, "codecs/BP%d/%s_%s.bp", bp, cs[c], ss[s]);
                const char *path = ts_join(ts_golden_dir(), rel);
                size_t w0, r0, w1, r1;
                gbp_zdev_counts(&w0, &r0);
                gpubp_file *hf, *df;
                TS_OK(gpubp_open(&hf, path, GPUBP_MODE_READ_RANDOM_ACCESS, "compress_device=off"));
                TS_OK(gpubp_open(&df, path, GPUBP_MODE_READ_RANDOM_ACCESS,
                                 "device=simulated,compress_device=on,gpu_layout=row_major"));
                size_t decoded = 0, tiny = 0;
                for (size_t k = 0; k < 3; k++) {
                    gpubp_variable *hv, *dv;
                    TS_OK(gpubp_inquire_variable(&hv, hf, vars[k]));
                    TS_OK(gpubp_inquire_variable(&dv, df, vars[k]));
                    TS_OK(gpubp_set_memory_space(dv, GPUBP_MEM_GPU));
                    size_t steps = 0, dims[2] = {1, 1}, nd = 0;
                    TS_OK(gpubp_variable_steps(hv, &steps));
                    TS_OK(gpubp_variable_ndims(hv, &nd));
                    TS_OK(gpubp_variable_shape(hv, GPUBP_MEM_HOST, dims));
                    size_t n = dims[0] * (nd > 1 ? dims[1] : 1) * 8;
                    uint8_t *h = calloc(1, n), *d = gbp_sim_alloc(n);
                    for (size_t st = 0; st < steps; st++) {
                        TS_OK(gpubp_set_step_selection(hv, st, 1));
                        TS_OK(gpubp_set_step_selection(dv, st, 1));
                        memset(d, 0x5A, n);
                        TS_OK(gpubp_get(hf, hv, h, GPUBP_SYNC));
                        TS_OK(gpubp_get(df, dv, d, GPUBP_SYNC));
                        size_t es = k == 1 ? 8 : 4, used = dims[0] * (nd > 1 ? dims[1] : 1) * es;
                        assert_memory_equal(h, d, used);
                        decoded++;
                        tiny += k == 2;
                    }
                    free(h);
                    gbp_sim_free(d);
                }
                TS_OK(gpubp_close(hf));
                TS_OK(gpubp_close(df));
                gbp_zdev_counts(&w1, &r1);
                /* blosclz streams are decoded on the CPU (blocks stored raw or as runs, and tiny,
                 * 28 bytes stored raw, on the device) */
                if (strcmp(cs[c], "blosclz") == 0) assert_true(r1 - r0 >= tiny);
                else assert_true(r1 - r0 >= decoded); /* every get, some of several blocks */
            }
        }
}

/* The CUDA device codec where nvCOMP cannot be loaded (no GPU needed: only its dlopen): the
 * reason names nvCOMP and the path, and blosclz is refused; a build without CUDA has none. */
static void cuda_codec_without_nvcomp(void **state)
{
    (void)state;
    const gbp_dzops *ops = gbp_cuda_dzops();
    if (!ops) return; /* no CUDA backend: gbp_zdev_choose says "built without CUDA" */
    setenv("GPUBP_NVCOMP_LIBRARY", "/nonexistent/libnvcomp.so.6", 1);
    const char *why = ops->unavailable(GBP_BLOSC_LZ4);
    assert_non_null(why);
    assert_non_null(strstr(why, "nvCOMP"));
    assert_non_null(strstr(ops->unavailable(GBP_BLOSC_BLOSCLZ), "blosclz"));
    unsetenv("GPUBP_NVCOMP_LIBRARY");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(device_equals_cpu),
        cmocka_unit_test(device_equals_cpu_edges),
        cmocka_unit_test(device_equals_cpu_abandoned),
        cmocka_unit_test(device_blocks),
        cmocka_unit_test(async_commit_coded),
        cmocka_unit_test(async_commit_coded_failure),
        cmocka_unit_test(cache_across_files),
        cmocka_unit_test(on_fails_clearly),
        cmocka_unit_test(read_adios2_files),
        cmocka_unit_test(cuda_codec_without_nvcomp),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
