/* Compression throughput and ratio of lib/compress (not a test).
 * usage: gpubp_zbench [MiB (64)] [runs (5)] [level (1)] [threads list (1,2,all)]
 * Data: a smooth float32 field (a 3-D product of sines, the kind of data simulations write) and
 * random bytes. For each shuffle mode and 1, 2 and all online cores: median over the runs of the
 * compression and decompression throughput (MB/s of uncompressed data, 1 MB = 1e6 bytes) and the
 * compression ratio (input / output). Markdown table on stdout. */
#include "compress/blosczlib.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof *v, cmp_double);
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

int main(int argc, char **argv)
{
    size_t mib = argc > 1 ? strtoul(argv[1], NULL, 10) : 64;
    int runs = argc > 2 ? atoi(argv[2]) : 5, level = argc > 3 ? atoi(argv[3]) : 1;
    if (mib == 0 || runs < 1 || runs > 101 || level < 0 || level > 9) {
        fprintf(stderr, "usage: %s [MiB] [runs] [level]\n", argv[0]);
        return 2;
    }
    size_t n = mib << 20, cap = gbp_blosc_bound(n);
    float *smooth = malloc(n);
    uint8_t *rnd = malloc(n), *buf = malloc(cap), *back = malloc(n);
    if (!smooth || !rnd || !buf || !back) return 1;
    size_t nel = n / 4, nx = 256, ny = 256;
    for (size_t i = 0; i < nel; i++) {
        size_t x = i % nx, y = (i / nx) % ny, z = i / (nx * ny);
        smooth[i] = (float)(sin(0.02 * (double)x) * cos(0.03 * (double)y) * sin(0.01 * (double)z + 1.0));
    }
    uint64_t s = 0x9E3779B97F4A7C15ull;
    for (size_t i = 0; i < n; i++) {
        s ^= s << 13;
        s ^= s >> 7;
        s ^= s << 17;
        rnd[i] = (uint8_t)(s >> 24);
    }
    int cores = (int)sysconf(_SC_NPROCESSORS_ONLN);
    int thr[16] = {1, 2, cores};
    int nthr = cores > 2 ? 3 : cores == 2 ? 2 : 1;
    if (argc > 4) { /* e.g. "1,2,4,8,16" */
        nthr = 0;
        for (char *p = argv[4]; *p && nthr < 16; p += *p == ',') {
            char *end;
            long t = strtol(p, &end, 10);
            if (end == p || t < 1) break;
            thr[nthr++] = (int)t;
            p = end;
        }
        if (nthr == 0) return 2;
    }
    static const char *shname[3] = {"none", "byte", "bit"};
    printf("input %zu MiB, %d runs (median), level %d, %d online cores\n\n", mib, runs, level,
           cores);
    printf("| data | shuffle | threads | compress MB/s | decompress MB/s | ratio |\n");
    printf("|---|---|---:|---:|---:|---:|\n");
    for (int d = 0; d < 2; d++) {
        const uint8_t *src = d == 0 ? (const uint8_t *)smooth : rnd;
        for (int sh = 0; sh < 3; sh++) {
            if (d == 1 && sh != 1) continue; /* random data: byte shuffle only */
            for (int t = 0; t < nthr; t++) {
                double c[101], u[101];
                size_t len = 0;
                for (int r = 0; r < runs; r++) {
                    double t0 = now();
                    if (gbp_blosc_compress(src, n, 4, GBP_BLOSC_ZLIB, level, sh, thr[t], buf, cap, &len)) {
                        fprintf(stderr, "compress: %s\n", gbp_error_message());
                        return 1;
                    }
                    double t1 = now();
                    if (gbp_blosc_decompress(buf, len, back, n, thr[t])) {
                        fprintf(stderr, "decompress: %s\n", gbp_error_message());
                        return 1;
                    }
                    double t2 = now();
                    if (memcmp(back, src, n)) {
                        fprintf(stderr, "round trip differs\n");
                        return 1;
                    }
                    c[r] = (double)n / (t1 - t0) / 1e6;
                    u[r] = (double)n / (t2 - t1) / 1e6;
                }
                printf("| %s | %s | %d | %.1f | %.1f | %.3f |\n", d ? "random" : "smooth float32",
                       shname[sh], thr[t], median(c, runs), median(u, runs),
                       (double)n / (double)len);
                fflush(stdout);
            }
        }
    }
    free(smooth);
    free(rnd);
    free(buf);
    free(back);
    return 0;
}
