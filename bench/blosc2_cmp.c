/* lib/compress side by side with Blosc2 itself (issue 22 item 5; not a test, never run by CI).
 *
 * usage: gpubp_blosc2_cmp LIBBLOSC2_SO [MiB (16)] [runs (3)] [level (1)] [threads (1,2,4,8,16)]
 *                         [codecs (blosclz,lz4,lz4hc,zlib,zstd)]
 *   LIBBLOSC2_SO: path of a Blosc2 2.x shared library (or "-": $GPUBP_BLOSC2_LIB), loaded with
 *   dlopen: Blosc2 is not a dependency of the project, this program only loads it when run.
 *   GPUBP_BENCH_CLOCK=cpu: times are process CPU time (one thread on a loaded machine).
 *   GPUBP_BLOSC2_BIND=system: Blosc2 calls our liblz4 / libzstd instead of its own copies.
 *
 * For smooth doubles (a 3-D product of sines, every mantissa bit in use) and random doubles
 * (uniform in [0, 1)), typesize 8, each codec x shuffle (none, byte, bit) x thread count, the
 * same bytes go through
 *   ours:   gbp_blosc_compress / gbp_blosc_decompress (the ADIOS2 operator buffer);
 *   Blosc2: blosc2_compress_ctx / blosc2_decompress_ctx with the parameters ADIOS2's blosc
 *           operator passes (typesize, clevel, compcode, the shuffle in the last filter slot,
 *           automatic block size, the default split mode, nthreads).
 * One line per case (after one warm-up run): medians over the runs of compression and
 * decompression speed (MB/s of uncompressed data, 1 MB = 1e6 bytes), the ratio (input / output;
 * ours counts the chunk only, without ADIOS2's 23-byte prefix, so that both measure the same
 * Blosc2 chunk), our speed as a fraction of Blosc2's (the median of the ratios of the runs,
 * each run timing both compressions, then both decompressions, the side going first alternating), our size over Blosc2's, the block size and
 * the flags byte (ours/Blosc2's) each chunk header records, and whether each side decodes the
 * other's chunk to the input (cross=ok). Input is one chunk (at most 2 GiB). */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* RTLD_DEEPBIND */
#endif
#include "compress/blosczlib.h"
#include "bench/bench_util.h"

#include <dlfcn.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* The Blosc2 2.x ABI this program uses (blosc2.h of 2.x: the public parameter structs). */
#define B2_MAX_FILTERS 6
typedef struct {
    uint8_t compcode, compcode_meta, clevel;
    int use_dict;
    int32_t typesize;
    int16_t nthreads;
    int32_t blocksize, splitmode;
    void *schunk;
    uint8_t filters[B2_MAX_FILTERS], filters_meta[B2_MAX_FILTERS];
    void *prefilter, *preparams, *tuner_params;
    int tuner_id;
    bool instr_codec;
    void *codec_params;
    void *filter_params[B2_MAX_FILTERS];
} b2_cparams;
typedef struct {
    int16_t nthreads;
    void *schunk, *postfilter, *postparams;
} b2_dparams;
#define B2_FORWARD_COMPAT_SPLIT 4

static struct {
    void (*init)(void);
    const char *(*version)(void);
    void *(*create_cctx)(b2_cparams);
    void *(*create_dctx)(b2_dparams);
    void (*free_ctx)(void *);
    int (*compress_ctx)(void *, const void *, int32_t, void *, int32_t);
    int (*decompress_ctx)(void *, const void *, int32_t, void *, int32_t);
} b2;

static int load_blosc2(const char *path)
{
    /* DEEPBIND: Blosc2 calls its own lz4 / zstd (it exports them), not the liblz4 / libzstd
     * this program links, so that each side runs as built; GPUBP_BLOSC2_BIND=system: Blosc2's
     * lz4 / zstd calls go to the libraries we use (the same codec code on both sides: what
     * differs is the framing, the filters and the threads) */
    int flags = RTLD_NOW | RTLD_LOCAL;
    const char *bind = getenv("GPUBP_BLOSC2_BIND");
#ifdef RTLD_DEEPBIND
    if (!bind || strcmp(bind, "system")) flags |= RTLD_DEEPBIND;
#endif
    void *h = dlopen(path, flags);
    if (!h) {
        fprintf(stderr, "cannot load %s: %s\n", path, dlerror());
        return -1;
    }
    struct { const char *name; void **fn; } syms[] = {
        {"blosc2_init", (void **)&b2.init},
        {"blosc2_get_version_string", (void **)&b2.version},
        {"blosc2_create_cctx", (void **)&b2.create_cctx},
        {"blosc2_create_dctx", (void **)&b2.create_dctx},
        {"blosc2_free_ctx", (void **)&b2.free_ctx},
        {"blosc2_compress_ctx", (void **)&b2.compress_ctx},
        {"blosc2_decompress_ctx", (void **)&b2.decompress_ctx}};
    for (size_t i = 0; i < sizeof syms / sizeof *syms; i++) {
        void *p = dlsym(h, syms[i].name);
        if (!p) {
            fprintf(stderr, "%s: no symbol %s\n", path, syms[i].name);
            return -1;
        }
        memcpy(syms[i].fn, &p, sizeof p);
    }
    b2.init();
    const char *v = b2.version();
    if (!v || v[0] != '2' || v[1] != '.') {
        fprintf(stderr, "%s: Blosc2 version %s, expected 2.x\n", path, v ? v : "?");
        return -1;
    }
    return 0;
}

/* GPUBP_BENCH_CLOCK=cpu: the process's CPU time instead of the wall clock (a loaded machine,
 * one thread: what the work costs, not how long the scheduler made it wait) */
static int use_cpu_clock;

static double clock_now(void)
{
    if (!use_cpu_clock) return bench_now();
    struct timespec t;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static uint32_t get32(const uint8_t *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static int parse_list(const char *s, int *out, int max)
{
    int n = 0;
    while (*s && n < max) {
        char *end;
        long t = strtol(s, &end, 10);
        if (end == s || t < 1 || t > 1024) return 0;
        out[n++] = (int)t;
        s = *end == ',' ? end + 1 : end;
    }
    return n;
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: %s LIBBLOSC2_SO|- [MiB] [runs] [level] [threads,...] "
                        "[codec,...]\n", argv[0]);
        return 2;
    }
    const char *so = strcmp(argv[1], "-") ? argv[1] : getenv("GPUBP_BLOSC2_LIB");
    if (!so) {
        fprintf(stderr, "no library: give its path or set GPUBP_BLOSC2_LIB\n");
        return 2;
    }
    size_t mib = argc > 2 ? strtoul(argv[2], NULL, 10) : 16;
    int runs = argc > 3 ? atoi(argv[3]) : 3, level = argc > 4 ? atoi(argv[4]) : 1;
    int thr[32] = {1, 2, 4, 8, 16}, nthr = argc > 5 ? parse_list(argv[5], thr, 32) : 5;
    const char *codec_list = argc > 6 ? argv[6] : "blosclz,lz4,lz4hc,zlib,zstd";
    if (mib == 0 || mib > 2047 || runs < 1 || runs > 101 || level < 0 || level > 9 || nthr == 0) {
        fprintf(stderr, "bad arguments\n");
        return 2;
    }
    const char *clk = getenv("GPUBP_BENCH_CLOCK");
    use_cpu_clock = clk && !strcmp(clk, "cpu");
    if (load_blosc2(so)) return 1;
    int codecs[5], ncodec = 0;
    char names[128];
    snprintf(names, sizeof names, "%s", codec_list);
    for (char *tok = strtok(names, ","); tok && ncodec < 5; tok = strtok(NULL, ",")) {
        if (gbp_blosc_codec_from_name(tok, &codecs[ncodec]) ||
            gbp_blosc_check_codec(codecs[ncodec])) {
            fprintf(stderr, "%s\n", gbp_error_message());
            return 2;
        }
        ncodec++;
    }

    size_t n = mib << 20, nel = n / 8, cap = gbp_blosc_bound(n);
    double *smooth = malloc(n), *rnd = malloc(n);
    uint8_t *ours = malloc(cap), *theirs = malloc(cap), *back = malloc(n), *back2 = malloc(n);
    if (!smooth || !rnd || !ours || !theirs || !back || !back2) return 1;
    for (size_t i = 0; i < nel; i++) {
        size_t x = i % 256, y = (i / 256) % 256, z = i / 65536;
        smooth[i] = sin(0.02 * (double)x) * cos(0.03 * (double)y) * sin(0.01 * (double)z + 1.0);
    }
    uint64_t s = 0x9E3779B97F4A7C15ull;
    for (size_t i = 0; i < nel; i++) {
        s ^= s << 13;
        s ^= s >> 7;
        s ^= s << 17;
        rnd[i] = (double)(s >> 11) * 0x1.0p-53;
    }
    const char *bind = getenv("GPUBP_BLOSC2_BIND");
    printf("# gpubp_blosc2_cmp: Blosc2 %s (%s lz4/zstd), %zu MiB doubles, level %d, %d runs "
           "(median), %s\n", b2.version(), bind && !strcmp(bind, "system") ? "our" : "its own",
           mib, level, runs, use_cpu_clock ? "process CPU time" : "wall clock");
    static const char *shname[3] = {"none", "byte", "bit"};
    for (int d = 0; d < 2; d++) {
        const uint8_t *src = d ? (const uint8_t *)rnd : (const uint8_t *)smooth;
        for (int c = 0; c < ncodec; c++)
            for (int sh = 0; sh < 3; sh++)
                for (int t = 0; t < nthr; t++) {
                    double oc[101], od[101], bc[101], bd[101], rc[101], rd[101];
                    size_t olen = 0;
                    int blen = 0;
                    b2_cparams cp = {0};
                    cp.compcode = (uint8_t)codecs[c];
                    cp.clevel = (uint8_t)level;
                    cp.typesize = 8;
                    cp.nthreads = (int16_t)thr[t];
                    cp.splitmode = B2_FORWARD_COMPAT_SPLIT;
                    cp.filters[B2_MAX_FILTERS - 1] = (uint8_t)sh;
                    b2_dparams dp = {0};
                    dp.nthreads = (int16_t)thr[t];
                    void *cctx = b2.create_cctx(cp), *dctx = b2.create_dctx(dp);
                    if (!cctx || !dctx) {
                        fprintf(stderr, "blosc2: cannot create contexts\n");
                        return 1;
                    }
                    for (int r = -1; r < runs; r++) { /* run -1: warm-up, not counted */
                        /* both compress, then both decompress, the side that goes first
                         * alternating from run to run: each call finds the caches as the
                         * other side's call left them (a decompression timed right after its
                         * own slow compression would find its chunk's bytes colder) */
                        double tc[2], td[2];
                        int got = 0;
                        memset(back, 0, n);
                        memset(back2, 0, n);
                        for (int k = 0; k < 4; k++) {
                            int side = (k & 1) ^ (r & 1);
                            double t0 = clock_now();
                            if (k < 2 && side == 0) {
                                if (gbp_blosc_compress(src, n, 8, codecs[c], level, sh, thr[t],
                                                       ours, cap, &olen)) {
                                    fprintf(stderr, "compress: %s\n", gbp_error_message());
                                    return 1;
                                }
                            } else if (k < 2) {
                                blen = b2.compress_ctx(cctx, src, (int32_t)n, theirs, (int32_t)cap);
                            } else if (side == 0) {
                                if (gbp_blosc_decompress(ours, olen, back, n, thr[t])) {
                                    fprintf(stderr, "decompress: %s\n", gbp_error_message());
                                    return 1;
                                }
                            } else if (blen > 0) {
                                got = b2.decompress_ctx(dctx, theirs, blen, back2, (int32_t)n);
                            }
                            double dt = clock_now() - t0;
                            if (k < 2) tc[side] = dt;
                            else td[side] = dt;
                        }
                        if (memcmp(back, src, n)) {
                            fprintf(stderr, "our round trip differs\n");
                            return 1;
                        }
                        if (blen <= 0 || got != (int)n || memcmp(back2, src, n)) {
                            fprintf(stderr, "blosc2 round trip failed (%d, %d)\n", blen, got);
                            return 1;
                        }
                        if (r < 0) continue;
                        oc[r] = (double)n / tc[0] / 1e6;
                        od[r] = (double)n / td[0] / 1e6;
                        bc[r] = (double)n / tc[1] / 1e6;
                        bd[r] = (double)n / td[1] / 1e6;
                        rc[r] = oc[r] / bc[r]; /* paired: both ran under the same load */
                        rd[r] = od[r] / bd[r];
                    }
                    /* each side decodes the other's chunk */
                    const uint8_t *chunk = ours + GBP_BLOSC_PREFIX;
                    size_t clen = olen - GBP_BLOSC_PREFIX;
                    int cross = b2.decompress_ctx(dctx, chunk, (int32_t)clen, back, (int32_t)n) ==
                                    (int)n && !memcmp(back, src, n);
                    /* an operator buffer around Blosc2's chunk, as ADIOS2 frames it */
                    memmove(theirs + GBP_BLOSC_PREFIX, theirs, (size_t)blen);
                    memcpy(theirs, ours, GBP_BLOSC_PREFIX);
                    cross = cross && !gbp_blosc_decompress(theirs, (size_t)blen + GBP_BLOSC_PREFIX,
                                                          back, n, thr[t]) &&
                            !memcmp(back, src, n);
                    size_t nr = (size_t)runs;
                    double moc = bench_median(oc, nr), mod = bench_median(od, nr);
                    double mbc = bench_median(bc, nr), mbd = bench_median(bd, nr);
                    printf("data=%s codec=%s shuffle=%s threads=%d ours_c_MBps=%.1f "
                           "ours_d_MBps=%.1f ours_ratio=%.4f blosc2_c_MBps=%.1f "
                           "blosc2_d_MBps=%.1f blosc2_ratio=%.4f c_speed=%.3f d_speed=%.3f "
                           "size=%.4f blocksize=%u/%u flags=%02x/%02x cross=%s\n",
                           d ? "random" : "smooth", gbp_blosc_codec_str(codecs[c]), shname[sh],
                           thr[t], moc, mod, (double)n / (double)clen, mbc, mbd,
                           (double)n / (double)blen, bench_median(rc, nr), bench_median(rd, nr),
                           (double)clen / (double)blen, get32(chunk + 8),
                           get32(theirs + GBP_BLOSC_PREFIX + 8), chunk[2],
                           theirs[GBP_BLOSC_PREFIX + 2], cross ? "ok" : "FAILED");
                    fflush(stdout);
                    b2.free_ctx(cctx);
                    b2.free_ctx(dctx);
                    if (!cross) return 1;
                }
    }
    free(smooth);
    free(rnd);
    free(ours);
    free(theirs);
    free(back);
    free(back2);
    return 0;
}
