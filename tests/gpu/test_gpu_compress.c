/* The GPU compression path on a real CUDA device with nvCOMP (issue 24; the lead runs it on the
 * H200): for each codec (zlib, lz4, lz4hc, zstd) x shuffle (none, byte, bit) x type, device data
 * written with compress_device=on (shuffle kernels, nvCOMP's batch, framing assembled on the
 * device) reads back exactly — into host memory through the CPU decoder (compress_device=off:
 * the bytes are valid Blosc2 as our decoder, written from the format, reads them), and into
 * device memory decoded on the device — and the CPU path's file reads back on the device too; a
 * put split over subfiles likewise, its sub-blocks decoded in groups of one batch each.
 * Without a device: exit 77 (skipped). With GPUBP_TEST_NO_NVCOMP=1 (ctest runs it so, with
 * GPUBP_NVCOMP_LIBRARY naming no file): auto falls back to the CPU codecs and on fails naming
 * nvCOMP. GPUBP_TEST_SMALL=1: a small case (1 MiB, level 1) for compute-sanitizer;
 * GPUBP_TEST_GPUZ_KEEP=DIR: files for ADIOS2's bpls (keep_for_adios2). */
#include "support/test_support.h"

#include "engine/zdev_read.h"

#include <cuda_runtime.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void die_cuda(cudaError_t e, const char *what)
{
    if (e != cudaSuccess) fail_msg("%s: %s", what, cudaGetErrorString(e));
}

static void fill(float *p, size_t n, unsigned seed)
{
    uint32_t x = 88172645u ^ seed;
    for (size_t i = 0; i < n; i++) {
        x ^= x << 13;
        x ^= x >> 17;
        x ^= x << 5;
        p[i] = (float)(sin(0.0003 * (double)(i + seed)) * 50.0);
        if (i % 100000 < 3000) p[i] = 0.0f;                          /* runs */
        if (i % 250000 > 240000) memcpy(&p[i], &x, 4), p[i] = isnan(p[i]) ? 1.0f : p[i]; /* noise */
    }
}

static void write_file(const char *path, const char *params, const char *codec, const char *ops,
                       gpubp_type type, const void *dev, size_t n)
{
    gpubp_file *w;
    TS_OK(gpubp_open(&w, path, GPUBP_MODE_WRITE, params));
    size_t shape[1] = {n}, start[1] = {0};
    gpubp_variable *v;
    TS_OK(gpubp_define_variable(&v, w, "x", type, 1, shape, start, shape));
    TS_OK(gpubp_set_memory_space(v, GPUBP_MEM_GPU));
    if (codec) TS_OK(gpubp_variable_add_operation(v, codec, ops)); /* NULL: uncompressed */
    TS_OK(gpubp_begin_step(w));
    TS_OK(gpubp_put(w, v, dev, GPUBP_SYNC));
    TS_OK(gpubp_end_step(w));
    TS_OK(gpubp_close(w));
}

static void read_check(const char *path, const char *params, int on_device, const void *want,
                       size_t bytes)
{
    gpubp_file *r;
    TS_OK(gpubp_open(&r, path, GPUBP_MODE_READ, params));
    TS_OK(gpubp_begin_step(r));
    gpubp_variable *v;
    TS_OK(gpubp_inquire_variable(&v, r, "x"));
    uint8_t *back = malloc(bytes);
    void *d = NULL;
    if (on_device) {
        TS_OK(gpubp_set_memory_space(v, GPUBP_MEM_GPU));
        die_cuda(cudaMalloc(&d, bytes), "cudaMalloc");
        die_cuda(cudaMemset(d, 0x5A, bytes), "cudaMemset");
        TS_OK(gpubp_get(r, v, d, GPUBP_SYNC));
        die_cuda(cudaMemcpy(back, d, bytes, cudaMemcpyDeviceToHost), "cudaMemcpy");
        cudaFree(d);
    } else {
        TS_OK(gpubp_get(r, v, back, GPUBP_SYNC));
    }
    if (memcmp(back, want, bytes)) {
        size_t i = 0;
        while (((const uint8_t *)want)[i] == back[i]) i++;
        fail_msg("%s (%s, %s): first differing byte %zu", path, params ? params : "-",
                 on_device ? "device" : "host", i);
    }
    free(back);
    TS_OK(gpubp_end_step(r));
    TS_OK(gpubp_close(r));
}

static void codecs_roundtrip(void **state)
{
    (void)state;
    static const char *codecs[] = {"zlib", "lz4", "lz4hc", "zstd"};
    static const char *shufs[] = {"none", "byte", "bit"};
    /* GPUBP_TEST_SMALL=1 (the compute-sanitizer runs): 1 MiB and level 1 only, so that memcheck
     * and racecheck finish in about a minute */
    const char *sm = getenv("GPUBP_TEST_SMALL");
    int small = sm && *sm == '1';
    size_t n = small ? (size_t)1 << 18 : (size_t)3 << 20; /* 1 or 12 MiB of floats */
    float *h = malloc(n * 4);
    fill(h, n, 5);
    void *d;
    die_cuda(cudaMalloc(&d, n * 4), "cudaMalloc");
    die_cuda(cudaMemcpy(d, h, n * 4, cudaMemcpyHostToDevice), "cudaMemcpy");
    /* own copies: ts_path and ts_join hand out rotating buffers, reused after 16 calls */
    char pa[1024], pb[1024];
    snprintf(pa, sizeof pa, "%s", ts_path("gpuz_on.bp"));
    snprintf(pb, sizeof pb, "%s", ts_path("gpuz_off.bp"));
    for (size_t c = 0; c < 4; c++)
        for (size_t s = 0; s < 3; s++)
            for (int level = 1; level <= (small ? 1 : 9); level += 8) {
                char ops[64];
                snprintf(ops, sizeof ops, "shuffle=%s,level=%d", shufs[s], level);
                write_file(pa, "compress_device=on", codecs[c], ops, GPUBP_TYPE_FLOAT, d, n);
                read_check(pa, "compress_device=off", 0, h, n * 4);
                read_check(pa, "compress_device=on", 1, h, n * 4);
                write_file(pb, "compress_device=off", codecs[c], ops, GPUBP_TYPE_FLOAT, d, n);
                read_check(pb, "compress_device=on", 1, h, n * 4);
                printf("%-5s %-4s level %d: on %ld bytes, off %ld bytes (data.0)\n", codecs[c],
                       shufs[s], level, ts_file_size(ts_join(pa, "data.0")),
                       ts_file_size(ts_join(pb, "data.0")));
            }
    /* a put split over subfiles (sub-blocks of 1 MiB here): each sub-block coded on the device
     * while the earlier ones are written, every one decoded on the device */
    setenv("GPUBP_ZDEV_SPLIT_MIB", "1", 1);
    size_t ns = (size_t)1 << 20; /* 4 MiB: 4 sub-blocks */
    float *hs = malloc(ns * 4);
    fill(hs, ns, 11);
    void *ds;
    die_cuda(cudaMalloc(&ds, ns * 4), "cudaMalloc");
    die_cuda(cudaMemcpy(ds, hs, ns * 4, cudaMemcpyHostToDevice), "cudaMemcpy");
    for (size_t c = small ? 3 : 0; c < 4; c += 3) { /* zlib, zstd */
        write_file(pa, "compress_device=on,split_mib=2,subfiles=4", codecs[c], "shuffle=byte",
                   GPUBP_TYPE_FLOAT, ds, ns);
        assert_true(ts_file_size(ts_join(pa, "data.3")) > 0);
        read_check(pa, "compress_device=off", 0, hs, ns * 4);
        /* into device memory: the four sub-blocks of 1 MiB one by one (the default), as one
         * batch, one by one, and two by two (GPUBP_ZDEV_READ_GROUP_MIB unset, 128, 0, 2; the
         * next group read ahead while one decodes) */
        static const char *group_mib[] = {NULL, "128", "0", "2"};
        static const size_t groups[] = {0, 1, 0, 2};
        for (int g = 0; g < 4; g++) {
            if (group_mib[g]) setenv("GPUBP_ZDEV_READ_GROUP_MIB", group_mib[g], 1);
            size_t q0 = gbp_zdev_read_groups();
            read_check(pa, "compress_device=on", 1, hs, ns * 4);
            assert_int_equal(gbp_zdev_read_groups() - q0, groups[g]);
            unsetenv("GPUBP_ZDEV_READ_GROUP_MIB");
        }
    }
    cudaFree(ds);
    free(hs);
    unsetenv("GPUBP_ZDEV_SPLIT_MIB");
    /* the GPU path's own blocks (compress_device_block_kib): one unsplit nvCOMP chunk a block */
    for (size_t c = 0; c < 4; c++) {
        write_file(pa, "compress_device=on,compress_device_block_kib=256", codecs[c],
                   "shuffle=byte", GPUBP_TYPE_FLOAT, d, n);
        read_check(pa, "compress_device=off", 0, h, n * 4);
        read_check(pa, "compress_device=on", 1, h, n * 4);
    }
    /* other element sizes: doubles, int16, bytes, complex doubles */
    static const gpubp_type types[] = {GPUBP_TYPE_DOUBLE, GPUBP_TYPE_INT16, GPUBP_TYPE_UINT8,
                                       GPUBP_TYPE_DOUBLE_COMPLEX};
    static const size_t es[] = {8, 2, 1, 16};
    for (size_t t = 0; t < 4; t++)
        for (size_t s = 1; s < 3; s++) {
            char ops[64];
            snprintf(ops, sizeof ops, "shuffle=%s", shufs[s]);
            size_t ne = n * 4 / es[t] - 3;
            write_file(pa, "compress_device=on", "lz4", ops, types[t], d, ne);
            read_check(pa, "compress_device=off", 0, h, ne * es[t]);
            read_check(pa, "compress_device=on", 1, h, ne * es[t]);
        }
    cudaFree(d);
    free(h);
}

/* zlib at level 1 alternates nvCOMP deflate's algorithms 2 and 1 batch by batch, from each put's
 * first batch (2): a put of three 1 MiB pieces (three batches: 2, 1, 2) stores more than with
 * algorithm 2 throughout and less than with 1 throughout, every file reads back exactly (the
 * host through the CPU decoder: standard zlib streams), and a put of one batch after it codes as
 * algorithm 2 alone (the count starts again at each put, also in a codec state that the file
 * before left after an odd number of batches). */
static void zlib_level1_alternates(void **state)
{
    (void)state;
    size_t n = (size_t)3 << 18; /* 3 MiB of floats */
    float *h = malloc(n * 4);
    fill(h, n, 23);
    void *d;
    die_cuda(cudaMalloc(&d, n * 4), "cudaMalloc");
    die_cuda(cudaMemcpy(d, h, n * 4, cudaMemcpyHostToDevice), "cudaMemcpy");
    char pa[1024];
    snprintf(pa, sizeof pa, "%s", ts_path("gpuz_alt.bp"));
    static const char *algo[] = {"2", NULL, "1"}; /* forced 2, the default, forced 1 */
    long size[3];
    for (int pieces = 3; pieces >= 1; pieces -= 2) {
        setenv("GPUBP_ZDEV_PIECE_MIB", pieces == 3 ? "1" : "64", 1);
        /* one batch: the default first, right after a file that ended on an odd batch count */
        static const int order[2][3] = {{1, 0, 2}, {0, 1, 2}};
        for (int k = 0; k < 3; k++) {
            int a = order[pieces == 3][k];
            if (algo[a]) setenv("GPUBP_NVCOMP_DEFLATE_ALGO", algo[a], 1);
            else unsetenv("GPUBP_NVCOMP_DEFLATE_ALGO");
            write_file(pa, "compress_device=on", "zlib", "shuffle=byte,level=1", GPUBP_TYPE_FLOAT,
                       d, n);
            size[a] = ts_file_size(ts_join(pa, "data.0"));
            read_check(pa, "compress_device=off", 0, h, n * 4);
            read_check(pa, "compress_device=on", 1, h, n * 4);
        }
        printf("zlib level 1, %d batch(es): algorithm 2 %ld, default %ld, algorithm 1 %ld bytes\n",
               pieces, size[0], size[1], size[2]);
        assert_true(size[0] < size[2]); /* algorithm 1 stores more on these floats */
        if (pieces == 3) {
            assert_true(size[0] < size[1]);
            assert_true(size[1] < size[2]);
        } else {
            assert_int_equal(size[1], size[0]);
        }
    }
    unsetenv("GPUBP_NVCOMP_DEFLATE_ALGO");
    unsetenv("GPUBP_ZDEV_PIECE_MIB");
    cudaFree(d);
    free(h);
}

/* GPUBP_TEST_GPUZ_KEEP=DIR (a folder that exists): files for ADIOS2 to read, by hand: DIR/plain.bp
 * uncompressed and DIR/<codec>_<shuffle>_<level>.bp written on the device with nvCOMP, the same
 * 4 MiB of floats, a put split over 4 subfiles, and DIR/<codec>_blocks256.bp with the GPU
 * path's own blocks (compress_device_block_kib=256); `bpls -d` of each must print what it prints
 * for plain.bp. Nothing without the variable. */
static void keep_for_adios2(void **state)
{
    (void)state;
    const char *dir = getenv("GPUBP_TEST_GPUZ_KEEP");
    if (!dir || !*dir) return;
    static const char *codecs[] = {"zlib", "lz4", "lz4hc", "zstd"};
    static const char *shufs[] = {"none", "byte", "bit"};
    size_t n = (size_t)1 << 20;
    float *h = malloc(n * 4);
    fill(h, n, 17);
    void *d;
    die_cuda(cudaMalloc(&d, n * 4), "cudaMalloc");
    die_cuda(cudaMemcpy(d, h, n * 4, cudaMemcpyHostToDevice), "cudaMemcpy");
    setenv("GPUBP_ZDEV_SPLIT_MIB", "1", 1);
    const char *params = "compress_device=on,split_mib=2,subfiles=4";
    char path[4200];
    snprintf(path, sizeof path, "%s/plain.bp", dir);
    write_file(path, params, NULL, NULL, GPUBP_TYPE_FLOAT, d, n);
    for (size_t c = 0; c < 4; c++)
        for (size_t s = 0; s < 3; s++)
            for (int level = 1; level <= 9; level += 8) {
                char ops[64];
                snprintf(ops, sizeof ops, "shuffle=%s,level=%d", shufs[s], level);
                snprintf(path, sizeof path, "%s/%s_%s_%d.bp", dir, codecs[c], shufs[s], level);
                write_file(path, params, codecs[c], ops, GPUBP_TYPE_FLOAT, d, n);
                read_check(path, "compress_device=on", 1, h, n * 4);
            }
    for (size_t c = 0; c < 4; c++) { /* GPU blocks of 256 KiB: DIR/<codec>_blocks256.bp */
        snprintf(path, sizeof path, "%s/%s_blocks256.bp", dir, codecs[c]);
        write_file(path, "compress_device=on,split_mib=2,subfiles=4,compress_device_block_kib=256",
                   codecs[c], "shuffle=byte", GPUBP_TYPE_FLOAT, d, n);
        read_check(path, "compress_device=on", 1, h, n * 4);
    }
    unsetenv("GPUBP_ZDEV_SPLIT_MIB");
    cudaFree(d);
    free(h);
}

/* nvCOMP absent (GPUBP_NVCOMP_LIBRARY names no file): auto writes with the CPU codecs, on fails
 * with a message naming nvCOMP. */
static void no_nvcomp(void **state)
{
    (void)state;
    size_t n = 100000;
    float *h = malloc(n * 4);
    fill(h, n, 9);
    void *d;
    die_cuda(cudaMalloc(&d, n * 4), "cudaMalloc");
    die_cuda(cudaMemcpy(d, h, n * 4, cudaMemcpyHostToDevice), "cudaMemcpy");
    const char *p = ts_path("gpuz_nonv.bp");
    write_file(p, NULL, "zstd", NULL, GPUBP_TYPE_FLOAT, d, n);
    read_check(p, NULL, 1, h, n * 4);
    gpubp_file *w;
    TS_OK(gpubp_open(&w, p, GPUBP_MODE_WRITE, "compress_device=on"));
    size_t shape[1] = {n}, start[1] = {0};
    gpubp_variable *v;
    TS_OK(gpubp_define_variable(&v, w, "x", GPUBP_TYPE_FLOAT, 1, shape, start, shape));
    TS_OK(gpubp_set_memory_space(v, GPUBP_MEM_GPU));
    TS_OK(gpubp_variable_add_operation(v, "lz4", NULL));
    TS_OK(gpubp_begin_step(w));
    TS_OK(gpubp_put(w, v, d, GPUBP_DEFERRED));
    assert_int_equal(gpubp_end_step(w), GPUBP_ERR_NOT_SUPPORTED);
    assert_non_null(strstr(gpubp_last_error(), "nvCOMP"));
    gpubp_close(w);
    cudaFree(d);
    free(h);
}

int main(void)
{
    int n = 0;
    cudaError_t e = cudaGetDeviceCount(&n);
    if (e != cudaSuccess || n == 0) {
        printf("no CUDA device (%s): skipped\n", e != cudaSuccess ? cudaGetErrorString(e) : "none");
        return TS_SKIP_CODE;
    }
    const char *nonv = getenv("GPUBP_TEST_NO_NVCOMP");
    const struct CMUnitTest with[] = {cmocka_unit_test(codecs_roundtrip),
                                      cmocka_unit_test(zlib_level1_alternates),
                                      cmocka_unit_test(keep_for_adios2)};
    const struct CMUnitTest without[] = {cmocka_unit_test(no_nvcomp)};
    if (nonv && *nonv == '1') return cmocka_run_group_tests_name("no nvCOMP", without, NULL, NULL);
    return cmocka_run_group_tests_name("nvCOMP", with, NULL, NULL);
}
