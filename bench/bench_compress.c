/* gpubp-bench --compress zlib: end-to-end throughput of the zlib operator through the public API
 * on 1, 2 and all cores, and the compression ratio, on a smooth float field and on random data.
 *   gpubp-bench --compress zlib --dir D [--mib-per-step N (64)] [--steps S (2)] [--repeat R (3)]
 *               [--shuffle byte|bit|none] [--level L (1)] [--mem host|gpu] [--params P]
 *               [--codec C (zlib): the operator of these rows, blosclz, lz4, lz4hc, zlib or zstd]
 * One line per data kind and thread count:
 *   data=smooth threads=T write_MBps=<x> read_MBps=<y> ratio=<r>
 * (MB = 10^6 bytes of uncompressed data; medians over the repetitions; ratio = bytes put / bytes
 * of the data files, data.0 and the other subfiles). With --mem gpu the field lives in device
 * memory and is put from there (the staged path: pieces compressed as they land in the pinned
 * pool) and read back into device memory; each
 * repetition also measures, in the same run, the copy-then-compress baseline: the field copied
 * to host memory (cudaMemcpy into a pageable buffer) and written from there, and read into host
 * memory then copied to the device. The line then reads
 *   data=smooth mem=gpu threads=T write_MBps=<x> base_write_MBps=<b> read_MBps=<y>
 *   base_read_MBps=<c> ratio=<r>
 * --params is passed to gpubp_open (for example device=simulated where a build has it).
 *
 * The GPU compression path side by side (issue 24), --mem gpu with --codecs LIST (e.g.
 * zlib,lz4,lz4hc,zstd): the smooth field, put from device memory and read back into it, once per
 * codec with compress_device=on (shuffle and codec on the device) and with compress_device=off
 * (the CPU path), and once uncompressed, all threads, medians over the repetitions:
 *   codec=C path=device|cpu|raw write_MBps=<x> read_MBps=<y> ratio=<r> size_device_vs_cpu=<s>
 * (on the cpu row: the device path's data files over the CPU path's); --no-cpu-path leaves the
 * CPU path's rows out. */
#include "bench/bench_compress.h"

#include <gpubp.h>

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "bench/bench_dev.h"
#include "bench/bench_util.h"

#define CHECK(expr)                                                                        \
    do {                                                                                   \
        int rc_ = (expr);                                                                  \
        if (rc_ != GPUBP_OK) {                                                             \
            fprintf(stderr, "gpubp-bench: %s: %s\n", #expr, gpubp_last_error());           \
            return -1;                                                                     \
        }                                                                                  \
    } while (0)

typedef struct zrun {
    const char *path, *params, *shuffle;
    const char *codec;  /* the operator ("zlib"), or "none" */
    size_t n, steps;
    int threads, level;
    const float *host;  /* the field (host copy, the reference) */
    void *dev;          /* the field in device memory (--mem gpu), or NULL */
    float *hbuf;        /* pageable host buffer of n floats (baselines, host reads) */
    void *dback;        /* device buffer for reads (--mem gpu) */
} zrun;

/* GPUBP_MEM_STATS: where a file's time goes, as the caller sees it. */
static void lap_to(double *acc, double *last)
{
    double now = bench_now();
    *acc += now - *last;
    *last = now;
}

static void print_phases(const char *what, const char *codec, const double *t)
{
    if (!getenv("GPUBP_MEM_STATS")) return;
    fprintf(stderr, "gpubp-bench: %s %s seconds: open(+define) %.4f, %s %.4f, %s %.4f, close %.4f; "
            "total %.4f\n", codec, what, t[0], what[0] == 'w' ? "puts (SYNC)" : "gets (SYNC)", t[1],
            what[0] == 'w' ? "end_step" : "step selection", t[2], t[3], t[0] + t[1] + t[2] + t[3]);
}

/* Writes `steps` steps of the field: from device memory (dev), from host memory, or copied from
 * the device to host memory first (base: the copy-then-compress baseline). */
static int zwrite(const zrun *z, int from_dev, int base, double *secs, double *bytes)
{
    bench_remove_dataset(z->path); /* the last repetition's, before the clock */
    char ops[128];
    snprintf(ops, sizeof ops, "level=%d,shuffle=%s,threads=%d", z->level, z->shuffle, z->threads);
    double t0 = bench_now(), t[4] = {0, 0, 0, 0}, tl = t0; /* open, puts, end_step, close */
    gpubp_file *w;
    gpubp_variable *v;
    size_t shape[1] = {z->n}, start[1] = {0};
    CHECK(gpubp_open(&w, z->path, GPUBP_MODE_WRITE, z->params));
    CHECK(gpubp_define_variable(&v, w, "field", GPUBP_TYPE_FLOAT, 1, shape, start, shape));
    CHECK(gpubp_set_memory_space(v, from_dev ? GPUBP_MEM_GPU : GPUBP_MEM_HOST));
    if (strcmp(z->codec, "none")) CHECK(gpubp_variable_add_operation(v, z->codec, ops));
    lap_to(&t[0], &tl);
    for (size_t s = 0; s < z->steps; s++) {
        const void *src = from_dev ? z->dev : (const void *)z->host;
        if (base) {
            if (bench_dev_download(z->hbuf, z->dev, z->n * sizeof(float))) return -1;
            src = z->hbuf;
        }
        CHECK(gpubp_begin_step(w));
        CHECK(gpubp_put(w, v, src, GPUBP_SYNC));
        lap_to(&t[1], &tl);
        CHECK(gpubp_end_step(w));
        lap_to(&t[2], &tl);
    }
    CHECK(gpubp_close(w));
    lap_to(&t[3], &tl);
    *secs = bench_now() - t0;
    print_phases("write", z->codec, t);
    /* every subfile: split puts (split_mib) spread over data.0, data.1, ... */
    *bytes = 0;
    for (int k = 0;; k++) {
        char dpath[4200];
        snprintf(dpath, sizeof dpath, "%s/data.%d", z->path, k);
        struct stat st;
        if (stat(dpath, &st) != 0) return k ? 0 : -1;
        *bytes += (double)st.st_size;
    }
}

/* Reads every step back: into device memory (to_dev), into host memory, or into host memory
 * then copied to the device (base). Checks the last step's values. */
static int zread(const zrun *z, int to_dev, int base, double *secs)
{
    double t0 = bench_now(), t[4] = {0, 0, 0, 0}, tl = t0;
    gpubp_file *r;
    gpubp_variable *v;
    CHECK(gpubp_open(&r, z->path, GPUBP_MODE_READ_RANDOM_ACCESS, z->params));
    CHECK(gpubp_inquire_variable(&v, r, "field"));
    CHECK(gpubp_set_memory_space(v, to_dev ? GPUBP_MEM_GPU : GPUBP_MEM_HOST));
    lap_to(&t[0], &tl);
    for (size_t s = 0; s < z->steps; s++) {
        CHECK(gpubp_set_step_selection(v, s, 1));
        lap_to(&t[2], &tl);
        CHECK(gpubp_get(r, v, to_dev ? z->dback : (void *)z->hbuf, GPUBP_SYNC));
        if (base && bench_dev_upload(z->dback, z->hbuf, z->n * sizeof(float))) return -1;
        lap_to(&t[1], &tl);
    }
    CHECK(gpubp_close(r));
    lap_to(&t[3], &tl);
    *secs = bench_now() - t0;
    print_phases("read", z->codec, t);
    if (to_dev && bench_dev_download(z->hbuf, z->dback, z->n * sizeof(float))) return -1;
    if (memcmp(z->hbuf, z->host, z->n * sizeof(float))) {
        fprintf(stderr, "gpubp-bench: data read back differs\n");
        return -1;
    }
    return 0;
}

/* --codecs: per codec, the device path, the CPU path, then the uncompressed field. */
static int codec_rows(zrun *z, const char *list, int repeat, const char *params, int no_cpu)
{
    char codecs[256], pbuf[1024];
    snprintf(codecs, sizeof codecs, "%s,none", list);
    size_t nr = (size_t)repeat;
    double raw = (double)z->n * sizeof(float) * (double)z->steps;
    z->threads = 0; /* all cores */
    for (char *save = NULL, *c = strtok_r(codecs, ",", &save); c; c = strtok_r(NULL, ",", &save)) {
        int none = !strcmp(c, "none");
        double dev_bytes = 0;
        z->codec = c;
        for (int mode = 0; mode < (none || no_cpu ? 1 : 2); mode++) {
            snprintf(pbuf, sizeof pbuf, "%s%scompress_device=%s", params ? params : "",
                     params ? "," : "", mode ? "off" : "on");
            z->params = pbuf;
            double tw[101], tr[101], fbytes = 0;
            for (int r = 0; r < repeat; r++)
                if (zwrite(z, 1, 0, &tw[r], &fbytes) || zread(z, 1, 0, &tr[r])) return 1;
            printf("codec=%s path=%s write_MBps=%.1f read_MBps=%.1f ratio=%.3f", c,
                   none ? "raw" : mode ? "cpu" : "device", raw / bench_median(tw, nr) / 1e6,
                   raw / bench_median(tr, nr) / 1e6, raw / fbytes);
            if (mode == 0) dev_bytes = fbytes;
            else printf(" size_device_vs_cpu=%.4f", dev_bytes / fbytes);
            printf("\n");
            fflush(stdout);
        }
    }
    return 0;
}

int gpubp_bench_compress(int argc, char **argv)
{
    const char *dir = NULL, *shuffle = "byte", *params = NULL, *codecs = NULL, *codec = "zlib";
    size_t mib = 64, steps = 2;
    int no_cpu = 0; /* --codecs: leave out the CPU path's rows (a quicker comparison) */
    int repeat = 3, level = 1, gpu = 0;
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
        else if (!strcmp(a, "--params") && v) params = argv[++i];
        else if (!strcmp(a, "--codecs") && v) codecs = argv[++i];
        else if (!strcmp(a, "--codec") && v) codec = argv[++i];
        else if (!strcmp(a, "--no-cpu-path")) no_cpu = 1;
        else if (!strcmp(a, "--mem") && v && (!strcmp(v, "gpu") || !strcmp(v, "host")))
            gpu = !strcmp(argv[++i], "gpu");
        else {
            fprintf(stderr, "usage: gpubp-bench --compress zlib --dir D [--mib-per-step N] "
                            "[--steps S] [--repeat R] [--shuffle byte|bit|none] [--level L] "
                            "[--mem host|gpu] [--params P] [--codec C] "
                            "[--codecs zlib,lz4,lz4hc,zstd] [--no-cpu-path]\n");
            return 2;
        }
    }
    if (!dir || mib == 0 || steps == 0 || repeat < 1 || repeat > 101) {
        fprintf(stderr, "gpubp-bench --compress: --dir is required; sizes must be positive\n");
        return 2;
    }
    zrun z;
    memset(&z, 0, sizeof z);
    z.n = (mib << 20) / sizeof(float);
    z.steps = steps;
    z.level = level;
    z.shuffle = shuffle;
    z.params = params;
    z.codec = codec;
    size_t bytes = z.n * sizeof(float);
    float *data = malloc(bytes);
    z.hbuf = malloc(bytes);
    if (!data || !z.hbuf) return 1;
    z.host = data;
    if (gpu) {
        const char *why = "";
        if (!bench_dev_init(&why)) {
            fprintf(stderr, "gpubp-bench: --mem gpu: %s\n", why);
            return 1;
        }
        z.dev = bench_dev_alloc(bytes);
        z.dback = bench_dev_alloc(bytes);
        if (!z.dev || !z.dback) return 1;
    }
    long cores = sysconf(_SC_NPROCESSORS_ONLN);
    int counts[3] = {1, 2, (int)(cores > 0 ? cores : 1)};
    int ncounts = counts[2] > 2 ? 3 : (counts[2] == 2 ? 2 : 1);
    char path[4096];
    snprintf(path, sizeof path, "%s/compress_bench.bp", dir);
    z.path = path;
    if (codecs && !gpu) {
        fprintf(stderr, "gpubp-bench --compress: --codecs needs --mem gpu\n");
        return 2;
    }
    for (int kind = 0; kind < 2; kind++) {
        /* smooth: a 3-D product of sines on a 256 x 256 x ... grid; random: xorshift bits */
        uint32_t x = 2463534242u;
        for (size_t i = 0; i < z.n; i++) {
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
        if (gpu && bench_dev_upload(z.dev, data, bytes)) return 1;
        if (codecs) {
            if (codec_rows(&z, codecs, repeat, params, no_cpu)) return 1;
            break; /* the smooth field only */
        }
        for (int c = 0; c < ncounts; c++) {
            double tw[101], tr[101], bw[101], br[101], fbytes = 0, b2 = 0;
            z.threads = counts[c];
            for (int r = 0; r < repeat; r++) {
                if (gpu) { /* the baseline first, then the library's device path, same run */
                    if (zwrite(&z, 0, 1, &bw[r], &b2) || zread(&z, 0, 1, &br[r])) return 1;
                }
                if (zwrite(&z, gpu, 0, &tw[r], &fbytes) || zread(&z, gpu, 0, &tr[r])) return 1;
                if (gpu && b2 != fbytes) {
                    fprintf(stderr, "gpubp-bench: device and host writes differ in size\n");
                    return 1;
                }
            }
            double raw = (double)bytes * (double)steps;
            size_t nr = (size_t)repeat;
            double w = raw / bench_median(tw, nr) / 1e6, rd = raw / bench_median(tr, nr) / 1e6;
            const char *kname = kind ? "random" : "smooth";
            if (gpu)
                printf("data=%s mem=gpu threads=%d write_MBps=%.1f base_write_MBps=%.1f "
                       "read_MBps=%.1f base_read_MBps=%.1f ratio=%.3f\n", kname, counts[c], w,
                       raw / bench_median(bw, nr) / 1e6, rd, raw / bench_median(br, nr) / 1e6,
                       raw / fbytes);
            else
                printf("data=%s threads=%d write_MBps=%.1f read_MBps=%.1f ratio=%.3f\n", kname,
                       counts[c], w, rd, raw / fbytes);
            fflush(stdout);
        }
    }
    if (gpu) {
        bench_dev_free(z.dev);
        bench_dev_free(z.dback);
    }
    free(data);
    free(z.hbuf);
    return 0;
}
