/* gpubp-bench --compress zlib: end-to-end throughput of the zlib operator through the public API
 * on 1, 2 and all cores, and the compression ratio, on a smooth float field and on random data.
 *   gpubp-bench --compress zlib --dir D [--mib-per-step N (64)] [--steps S (2)] [--repeat R (3)]
 *               [--shuffle byte|bit|none] [--level L (1)]
 * One line per data kind and thread count:
 *   data=smooth threads=T write_MBps=<x> read_MBps=<y> ratio=<r>
 * (MB = 10^6 bytes of uncompressed data; medians over the repetitions; ratio = bytes put / bytes
 * of data.0). */
#include "bench_compress.h"

#include <gpubp.h>

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + t.tv_nsec * 1e-9;
}

static int cmp_d(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof *v, cmp_d);
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

#define CHECK(expr)                                                                        \
    do {                                                                                   \
        int rc_ = (expr);                                                                  \
        if (rc_ != GPUBP_OK) {                                                             \
            fprintf(stderr, "gpubp-bench: %s: %s\n", #expr, gpubp_last_error());           \
            return -1;                                                                     \
        }                                                                                  \
    } while (0)

/* One write + read of `steps` steps of n floats; returns 0 and the times and the file size. */
static int run_once(const char *path, const float *data, size_t n, size_t steps, int threads,
                    int level, const char *shuffle, double *tw, double *tr, double *bytes)
{
    char ops[128];
    snprintf(ops, sizeof ops, "level=%d,shuffle=%s,threads=%d", level, shuffle, threads);
    double t0 = now_s();
    gpubp_file *w;
    gpubp_variable *v;
    size_t shape[1] = {n}, start[1] = {0};
    CHECK(gpubp_open(&w, path, GPUBP_MODE_WRITE, NULL));
    CHECK(gpubp_define_variable(&v, w, "field", GPUBP_TYPE_FLOAT, 1, shape, start, shape));
    CHECK(gpubp_variable_add_operation(v, "zlib", ops));
    for (size_t s = 0; s < steps; s++) {
        CHECK(gpubp_begin_step(w));
        CHECK(gpubp_put(w, v, data, GPUBP_SYNC));
        CHECK(gpubp_end_step(w));
    }
    CHECK(gpubp_close(w));
    double t1 = now_s();
    char dpath[4200];
    snprintf(dpath, sizeof dpath, "%s/data.0", path);
    struct stat st;
    if (stat(dpath, &st) != 0) return -1;
    float *back = malloc(n * sizeof *back);
    if (!back) return -1;
    gpubp_file *r;
    CHECK(gpubp_open(&r, path, GPUBP_MODE_READ_RANDOM_ACCESS, NULL));
    CHECK(gpubp_inquire_variable(&v, r, "field"));
    for (size_t s = 0; s < steps; s++) {
        CHECK(gpubp_set_step_selection(v, s, 1));
        CHECK(gpubp_get(r, v, back, GPUBP_SYNC));
    }
    CHECK(gpubp_close(r));
    double t2 = now_s();
    int same = !memcmp(back, data, n * sizeof *back);
    free(back);
    if (!same) {
        fprintf(stderr, "gpubp-bench: data read back differs\n");
        return -1;
    }
    *tw = t1 - t0;
    *tr = t2 - t1;
    *bytes = (double)st.st_size;
    return 0;
}

int gpubp_bench_compress(int argc, char **argv)
{
    const char *dir = NULL, *shuffle = "byte";
    size_t mib = 64, steps = 2;
    int repeat = 3, level = 1;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(a, "--compress") && v) {
            if (strcmp(v, "zlib")) {
                fprintf(stderr, "gpubp-bench: --compress takes zlib\n");
                return 2;
            }
            i++;
        } else if (!strcmp(a, "--dir") && v) dir = argv[++i];
        else if (!strcmp(a, "--mib-per-step") && v) mib = strtoul(argv[++i], NULL, 10);
        else if (!strcmp(a, "--steps") && v) steps = strtoul(argv[++i], NULL, 10);
        else if (!strcmp(a, "--repeat") && v) repeat = atoi(argv[++i]);
        else if (!strcmp(a, "--shuffle") && v) shuffle = argv[++i];
        else if (!strcmp(a, "--level") && v) level = atoi(argv[++i]);
        else {
            fprintf(stderr, "usage: gpubp-bench --compress zlib --dir D [--mib-per-step N] "
                            "[--steps S] [--repeat R] [--shuffle byte|bit|none] [--level L]\n");
            return 2;
        }
    }
    if (!dir || mib == 0 || steps == 0 || repeat < 1) {
        fprintf(stderr, "gpubp-bench --compress: --dir is required; sizes must be positive\n");
        return 2;
    }
    size_t n = (mib << 20) / sizeof(float);
    float *data = malloc(n * sizeof *data);
    if (!data) return 1;
    long cores = sysconf(_SC_NPROCESSORS_ONLN);
    int counts[3] = {1, 2, (int)(cores > 0 ? cores : 1)};
    int ncounts = counts[2] > 2 ? 3 : (counts[2] == 2 ? 2 : 1);
    char path[4096];
    snprintf(path, sizeof path, "%s/compress_bench.bp", dir);
    for (int kind = 0; kind < 2; kind++) {
        /* smooth: a 3-D product of sines on a 256 x 256 x ... grid; random: xorshift bits */
        uint32_t x = 2463534242u;
        for (size_t i = 0; i < n; i++) {
            if (kind == 0) {
                size_t a = i % 256, b = (i / 256) % 256, c = i / 65536;
                data[i] = (float)(sin(0.05 * (double)a) * cos(0.03 * (double)b) *
                                  sin(0.01 * (double)c + 0.5));
            } else {
                x ^= x << 13;
                x ^= x >> 17;
                x ^= x << 5;
                memcpy(&data[i], &x, sizeof x);
            }
        }
        for (int c = 0; c < ncounts; c++) {
            double *tw = calloc((size_t)repeat, sizeof *tw), *tr = calloc((size_t)repeat, sizeof *tr);
            double bytes = 0;
            if (!tw || !tr) return 1;
            for (int r = 0; r < repeat; r++)
                if (run_once(path, data, n, steps, counts[c], level, shuffle, &tw[r], &tr[r],
                             &bytes) != 0)
                    return 1;
            double raw = (double)n * sizeof(float) * (double)steps;
            printf("data=%s threads=%d write_MBps=%.1f read_MBps=%.1f ratio=%.3f\n",
                   kind ? "random" : "smooth", counts[c], raw / median(tw, repeat) / 1e6,
                   raw / median(tr, repeat) / 1e6, raw / bytes);
            fflush(stdout);
            free(tw);
            free(tr);
        }
    }
    free(data);
    return 0;
}
