/* gpubp-bench: writes and reads steps through libgpubp and prints one line
 *
 *     write_GBps=<x> read_GBps=<y>
 *
 * (the medians of --repeat runs; GB = 1e9 bytes; a run's time covers open, every step and close).
 *
 *   gpubp-bench --dir D --mib-per-step N --steps S --blocks B --mem host|gpu [--vars V]
 *               [--repeat R] [--params "key=value,..."] [--cold] [--baseline] [--keep]
 *
 * Each step is a global 2-D array of doubles (rows of 1024 doubles, N MiB) put as B blocks of
 * rows; the reader gets the whole array of every step and checks the values. --vars V (1 to 64):
 * the step's rows are cut into V variables (field0 ...), each a global array put as B blocks.
 * --mem gpu: the arrays live in device memory (cudaMalloc); GPU memory space, GPU layout.
 * --sub: also times the strided half-box read (every row, its first half) after each whole read
 *   and prints "gpubp: sub_read_GBps=..." (--baseline does both, with its baselines).
 * --cold: before each read, the dataset's files are flushed and dropped from the page cache
 *   (fdatasync + posix_fadvise DONTNEED), so reads come from the disk.
 * --baseline: before the result line, prints in the same run the raw limits:
 *   host: "baseline: dd_write_GBps=... raw_read_GBps=..." (one thread writing the same bytes
 *     with write(2) of 4 MiB blocks to a file in D, as dd bs=4M does, then reading it back), and
 *     "gpubp: rss_extra_MiB=..." (peak host memory during the writes beyond the user's arrays);
 *   gpu: "baseline: d2h_GBps=... h2d_GBps=... raw_write_GBps=... raw_read_GBps=... threads=T
 *     files=F" (pinned copies of 16 MiB; T threads pwrite-ing pinned 16 MiB buffers into F files
 *     in D, T and F as the library uses them; cold pread of those files), and
 *     "gpubp: sub_read_GBps=... rss_growth_MiB=... pool_MiB=..." (a strided half-box read into
 *     device memory; the growth of peak host memory over the writes, from a baseline taken after
 *     CUDA context creation and pool allocation), and
 *     "baseline: dev_loop_write_GBps=..." (the hand-written device-to-file loop: the same T
 *     threads copying 16 MiB chunks of the device array into two pinned buffers each, on two
 *     streams, and pwrite-ing one while the other fills), and
 *     "baseline: memcpy_GBps=..." (the same T threads memcpy-ing 16 MiB buffers: the host memory
 *     bandwidth that pwrite into the page cache and the copy engine's writes share), and
 *     "baseline: raw_write_fresh_GBps=..." (the raw write again, each thread pwrite-ing 16 MiB
 *     pieces of its own share of a pinned region of min(data, 1 GiB), in turn: bytes that are not
 *     in the CPU cache when written, as the library's bytes are when they arrive from the
 *     device, whereas the raw write's one 16 MiB buffer per thread stays in the cache), and
 *     "ratios: write/raw=... write/loop=... read/raw=... write/raw_fresh=..." (the medians of the
 *     ratios of each repetition, whose library run follows its own baselines: steadier than
 *     ratios of medians where the machine's speed drifts between repetitions);
 *   both: "baseline: raw_best_write_GBps=..." (raw_best, once per run on min(data, 2 GiB): the
 *     best rate of N threads writing pinned 16 MiB buffers into N files, N = 1, 2, 4, 8, 16, the
 *     core count and the library's threads, then reading them back warm and, with --cold, cold
 *     (0.00 without); and the one-file rates, 1 and the library's threads writing one file) and "ratios_best: write/raw_best=...
 *     read/raw_best_warm|cold=..." (the library's medians against them; for a dataset of one data
 *     file also against the one-file rates; for F files of unsplit blocks, write/(files*one_file):
 *     against F times the one-file write rate). Cold: before it is opened for reading, each file is
 *     fdatasync'ed and dropped from the page cache with posix_fadvise(POSIX_FADV_DONTNEED) (no
 *     root needed, only the files of the run; --cold does the same to the dataset's files);
 *   with direct_io=1 or fsync=1 in --params: "baseline: raw_best_direct_write_GBps=..." (the
 *     best of N threads writing 16 MiB page-aligned buffers with O_DIRECT into N files, each
 *     fdatasync'ed before the clock stops) and "ratios_direct: write/raw_best_direct=...".
 * Exit status: 0, 1 on a failure (message on stderr), 2 on bad usage. */
#include "bench/bench_compress.h"
#include "bench/bench_meta.h"
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <gpubp.h>

#include "bench/bench_dev.h"
#include "bench/bench_util.h"

#define COLS 1024
#define MAX_REPEAT 64

typedef struct opts {
    const char *dir;
    size_t mib, steps, blocks;
    int gpu, baseline, cold, keep, repeat;
    const char *params;
    size_t vars; /* the step's array cut into this many variables (rows), each put as `blocks` */
    int raw_direct; /* raw writes: O_DIRECT from page-aligned buffers, fdatasync'ed at the end */
    int sub;        /* --sub: the strided half-box read without the baselines */
} opts;

static int fail(const char *what, int rc)
{
    fprintf(stderr, "gpubp-bench: %s: %s: %s\n", what, gpubp_strerror(rc), gpubp_last_error());
    return 1;
}

#define CHECK(call)                          \
    do {                                     \
        int rc_ = (call);                    \
        if (rc_ != GPUBP_OK) return fail(#call, rc_); \
    } while (0)

static double median(double *v, int n) { return bench_median(v, (size_t)n); }

/* kB fields of /proc/self/status */
static long status_kb(const char *key)
{
    FILE *f = fopen("/proc/self/status", "r");
    if (!f) return -1;
    char line[256];
    long v = -1;
    size_t kl = strlen(key);
    while (fgets(line, sizeof line, f))
        if (!strncmp(line, key, kl) && line[kl] == ':') v = strtol(line + kl + 1, NULL, 10);
    fclose(f);
    return v;
}

static void reset_peak_rss(void)
{
    FILE *f = fopen("/proc/self/clear_refs", "w");
    if (f) {
        fputs("5", f); /* resets VmHWM to the current RSS */
        fclose(f);
    }
}

/* fdatasync + DONTNEED on every file of dir whose name starts with one of the prefixes */
static void drop_cache(const char *dir)
{
    static const char *names[] = {"md.idx", "md.0", NULL};
    char p[4096];
    for (int k = 0; k < 4096; k++) {
        snprintf(p, sizeof p, "%s/data.%d", dir, k);
        int fd = open(p, O_RDONLY);
        if (fd < 0) break;
        (void)fdatasync(fd);
        (void)posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
        close(fd);
    }
    for (int i = 0; names[i]; i++) {
        snprintf(p, sizeof p, "%s/%s", dir, names[i]);
        int fd = open(p, O_RDONLY);
        if (fd < 0) continue;
        (void)fdatasync(fd);
        (void)posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
        close(fd);
    }
}

static void drop_file(const char *p)
{
    int fd = open(p, O_RDONLY);
    if (fd < 0) return;
    (void)fdatasync(fd);
    (void)posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
    close(fd);
}

/* ---- the library runs ------------------------------------------------------------------------ */
typedef struct run {
    const opts *o;
    char path[4096];
    size_t rows, nel;   /* rows of COLS doubles per step */
    double *data;       /* host or device: the step array */
    double *back;       /* host or device: the read buffer */
} run;

/* part b of n parts of `rows` rows: its first row and its count */
static size_t split_rows(size_t rows, size_t n, size_t b, size_t *first)
{
    size_t per = rows / n, extra = rows % n;
    *first = b * per + (b < extra ? b : extra);
    return per + (b < extra ? 1 : 0);
}

/* variable k's name: "field" alone, else field0, field1, ... */
static void var_name(const opts *o, size_t k, char *name, size_t cap)
{
    if (o->vars == 1) snprintf(name, cap, "field");
    else snprintf(name, cap, "field%zu", k);
}

static int do_write(run *r, double *secs)
{
    const opts *o = r->o;
    double t0 = bench_now();
    gpubp_file *w;
    CHECK(gpubp_open(&w, r->path, GPUBP_MODE_WRITE, o->params));
    gpubp_variable *vs[64];
    for (size_t k = 0; k < o->vars; k++) {
        size_t vfirst, vrows = split_rows(r->rows, o->vars, k, &vfirst);
        /* dims in the layout of the memory space: GPU is column-major (reversed) */
        size_t shape[2] = {vrows, COLS}, start[2] = {0, 0}, count[2] = {vrows, COLS};
        if (o->gpu) {
            shape[0] = COLS;
            shape[1] = vrows;
            count[0] = COLS;
            count[1] = vrows;
        }
        char name[32];
        var_name(o, k, name, sizeof name);
        CHECK(gpubp_define_variable(&vs[k], w, name, GPUBP_TYPE_DOUBLE, 2, shape, start, count));
        CHECK(gpubp_set_memory_space(vs[k], o->gpu ? GPUBP_MEM_GPU : GPUBP_MEM_HOST));
    }
    for (size_t s = 0; s < o->steps; s++) {
        CHECK(gpubp_begin_step(w));
        for (size_t k = 0; k < o->vars; k++) {
            size_t vfirst, vrows = split_rows(r->rows, o->vars, k, &vfirst);
            for (size_t b = 0; b < o->blocks; b++) {
                size_t first, n = split_rows(vrows, o->blocks, b, &first);
                if (o->gpu) {
                    size_t st[2] = {0, first}, ct[2] = {COLS, n};
                    CHECK(gpubp_set_selection(vs[k], 2, st, ct));
                } else {
                    size_t st[2] = {first, 0}, ct[2] = {n, COLS};
                    CHECK(gpubp_set_selection(vs[k], 2, st, ct));
                }
                CHECK(gpubp_put(w, vs[k], r->data + (vfirst + first) * COLS, GPUBP_DEFERRED));
            }
        }
        CHECK(gpubp_end_step(w));
    }
    CHECK(gpubp_close(w));
    *secs = bench_now() - t0;
    return 0;
}

static int check_host(const double *p, size_t n)
{
    for (size_t i = 0; i < n; i += 4099)
        if (p[i] != (double)i) return -1;
    return p[n - 1] == (double)(n - 1) ? 0 : -1;
}

/* half: read columns [0, COLS/2) of every row (a strided sub-box) instead of the whole array */
static int do_read(run *r, int half, double *secs)
{
    const opts *o = r->o;
    if (o->cold) drop_cache(r->path);
    double t0 = bench_now();
    gpubp_file *f;
    CHECK(gpubp_open(&f, r->path, GPUBP_MODE_READ, o->params));
    size_t steps = 0;
    int rc;
    while ((rc = gpubp_begin_step(f)) == GPUBP_OK) {
        for (size_t k = 0; k < o->vars; k++) {
            size_t vfirst;
            (void)split_rows(r->rows, o->vars, k, &vfirst);
            char name[32];
            var_name(o, k, name, sizeof name);
            gpubp_variable *v;
            CHECK(gpubp_inquire_variable(&v, f, name));
            CHECK(gpubp_set_memory_space(v, o->gpu ? GPUBP_MEM_GPU : GPUBP_MEM_HOST));
            size_t st[2] = {0, 0}, ct[2];
            CHECK(gpubp_variable_shape(v, GPUBP_MEM_DETECT, ct));
            if (half) ct[o->gpu ? 0 : 1] = COLS / 2;
            CHECK(gpubp_set_selection(v, 2, st, ct));
            /* the variables' rows lie one after the other in the step array (halves: packed) */
            size_t at = vfirst * (half ? COLS / 2 : COLS);
            CHECK(gpubp_get(f, v, r->back + at, o->vars == 1 ? GPUBP_SYNC : GPUBP_DEFERRED));
        }
        CHECK(gpubp_end_step(f));
        steps++;
    }
    if (rc != GPUBP_END_OF_STREAM) return fail("gpubp_begin_step", rc);
    CHECK(gpubp_close(f));
    *secs = bench_now() - t0;
    if (steps != o->steps) {
        fprintf(stderr, "gpubp-bench: read %zu steps, wrote %zu\n", steps, o->steps);
        return 1;
    }
    if (!half) {
        long bad = o->gpu ? bench_dev_check(r->back, r->nel, 0.0) : check_host(r->back, r->nel);
        if (bad != 0) {
            fprintf(stderr, "gpubp-bench: the data read back is wrong (%ld)\n", bad);
            return 1;
        }
    }
    return 0;
}

/* ---- raw baselines ---------------------------------------------------------------------------- */
static int dd_baseline(const opts *o, const double *data, size_t bytes, double *wgbps,
                       double *rgbps)
{
    char p[4096];
    snprintf(p, sizeof p, "%s/gpubp-bench-dd.tmp", o->dir);
    const size_t bs = (size_t)4 << 20;
    double t0 = bench_now();
    int fd = open(p, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd < 0) return fprintf(stderr, "gpubp-bench: %s: %s\n", p, strerror(errno)), 1;
    for (size_t s = 0; s < o->steps; s++) {
        const char *src = (const char *)data;
        for (size_t off = 0; off < bytes; off += bs) {
            size_t n = bytes - off < bs ? bytes - off : bs;
            if (write(fd, src + off, n) != (ssize_t)n) {
                fprintf(stderr, "gpubp-bench: write %s: %s\n", p, strerror(errno));
                close(fd);
                return 1;
            }
        }
    }
    close(fd);
    double t1 = bench_now();
    *wgbps = (double)bytes * (double)o->steps / (t1 - t0) / 1e9;
    if (o->cold) drop_file(p);
    char *buf = malloc(bs);
    fd = open(p, O_RDONLY);
    double t2 = bench_now();
    ssize_t got;
    size_t total = 0;
    while (fd >= 0 && buf && (got = read(fd, buf, bs)) > 0) total += (size_t)got;
    double t3 = bench_now();
    if (fd >= 0) close(fd);
    free(buf);
    *rgbps = (double)total / (t3 - t2) / 1e9;
    unlink(p);
    return 0;
}

typedef struct raw_thread {
    const opts *o;
    int t, nthreads, nfiles;
    size_t per_file, chunk;
    int *fds;
    void *buf;
    int rd;
    int err;
    /* the device-to-file loop: chunks come from the device array dev (dev_bytes, reused
     * cyclically) through buf and buf2, each with its stream, the next copy running while the
     * current buffer is written */
    const char *dev;
    size_t dev_bytes;
    void *buf2;
    /* the raw write from fresh bytes: this thread's share of a pinned region (fresh_bytes, a
     * multiple of chunk), written 16 MiB piece after piece, in turn */
    const char *fresh;
    size_t fresh_bytes;
    int heap; /* buf is malloc'ed: no pinned memory in this build (host runs) */
} raw_thread;

/* The device-to-file loop's chunk c: waits for its copy (queued by the previous chunk, or now
 * for the first), queues the copy of the thread's next chunk into the other buffer, writes. */
static void *dev_streams[256][2];
static const char *dev_src(const raw_thread *a, size_t c, size_t n)
{
    size_t off = (c * a->chunk) % a->dev_bytes;
    return a->dev + (off + n <= a->dev_bytes ? off : 0);
}

static ssize_t dev_chunk(raw_thread *a, size_t c, int f, size_t off, size_t n)
{
    void **st = dev_streams[a->t];
    int cur = (int)((c / (size_t)a->nthreads) & 1);
    void *bufs[2] = {a->buf, a->buf2};
    if (c == (size_t)a->t && bench_d2h_async(st[cur], bufs[cur], dev_src(a, c, n), n)) return -1;
    if (bench_stream_wait(st[cur])) return -1;
    size_t nc = c + (size_t)a->nthreads;
    if (nc < (a->per_file + a->chunk - 1) / a->chunk * (size_t)a->nfiles) {
        size_t nk = nc / (size_t)a->nfiles, noff = nk * a->chunk;
        size_t nn = a->per_file - noff < a->chunk ? a->per_file - noff : a->chunk;
        if (bench_d2h_async(st[!cur], bufs[!cur], dev_src(a, nc, nn), nn))
            return -1;
    }
    return pwrite(a->fds[f], bufs[cur], n, (off_t)off);
}

/* thread t handles chunks t, t+T, ... of the global sequence; chunk c goes to file c % F */
static void *raw_main(void *arg)
{
    raw_thread *a = arg;
    size_t chunks_per_file = (a->per_file + a->chunk - 1) / a->chunk;
    size_t total_chunks = chunks_per_file * (size_t)a->nfiles, mine = 0;
    for (size_t c = (size_t)a->t; c < total_chunks; c += (size_t)a->nthreads, mine++) {
        int f = (int)(c % (size_t)a->nfiles);
        size_t k = c / (size_t)a->nfiles, off = k * a->chunk;
        size_t n = a->per_file - off < a->chunk ? a->per_file - off : a->chunk;
        const void *src = a->fresh ? a->fresh + mine * a->chunk % a->fresh_bytes : a->buf;
        ssize_t r = a->dev ? dev_chunk(a, c, f, off, n)
                  : a->rd  ? pread(a->fds[f], a->buf, n, (off_t)off)
                           : pwrite(a->fds[f], src, n, (off_t)off);
        if (r != (ssize_t)n) {
            a->err = errno ? errno : EIO;
            return NULL;
        }
    }
    return NULL;
}

/* fresh (fresh_bytes, pinned; NULL: none): the raw write takes its bytes from there, thread t
 * from its share, instead of from one 16 MiB buffer per thread */
static double raw_io(const opts *o, int nthreads, int nfiles, size_t total, int rd,
                     const void *dev, size_t dev_bytes, const char *fresh, size_t fresh_bytes)
{
    const size_t chunk = (size_t)16 << 20;
    int fds[256];
    raw_thread th[256];
    pthread_t tid[256];
    if (nthreads > 256) nthreads = 256;
    if (nfiles > 256) nfiles = 256;
    if (dev && dev_bytes < chunk) return -1; /* a step smaller than a chunk: no loop to time */
    size_t share = fresh ? fresh_bytes / (size_t)nthreads / chunk * chunk : 0;
    if (fresh && share == 0) return -1; /* less than a chunk per thread */
    char p[4096];
    int direct = o->raw_direct && !rd;
    size_t per_file = total / (size_t)nfiles;
    if (direct) per_file &= ~(((size_t)1 << 20) - 1); /* whole MiB: every pwrite page-aligned */
    if (per_file == 0) return -1;
    for (int f = 0; f < nfiles; f++) {
        snprintf(p, sizeof p, "%s/gpubp-bench-raw.%d", o->dir, f);
        if (rd && o->cold) drop_file(p);
        fds[f] = open(p, rd ? O_RDONLY : (O_WRONLY | O_CREAT | O_TRUNC | (direct ? O_DIRECT : 0)),
                      0644);
        if (fds[f] < 0) {
            while (f-- > 0) close(fds[f]);
            return -1; /* no O_DIRECT here (tmpfs): no durable baseline */
        }
    }
    /* the buffers are pinned before the clock starts: the raw limit is the I/O alone (the
     * library's pool is pinned once per process and reused, docs/performance.md) */
    for (int t = 0; t < nthreads; t++)
        th[t] = (raw_thread){o, t, nthreads, nfiles, per_file, chunk, fds,
                             o->gpu ? bench_pinned_alloc(chunk) : NULL, rd, 0, dev, dev_bytes,
                             dev ? bench_pinned_alloc(chunk) : NULL,
                             share ? fresh + (size_t)t * share : NULL, share, 0};
    for (int t = 0; !dev && t < nthreads; t++) {
        void *heap = NULL;
        if (th[t].buf || posix_memalign(&heap, 4096, chunk)) continue; /* aligned for O_DIRECT */
        th[t].buf = heap;
        memset(th[t].buf, 0x5a, chunk);
        th[t].heap = 1;
    }
    for (int t = 0; dev && t < nthreads; t++) {
        dev_streams[t][0] = bench_stream_create();
        dev_streams[t][1] = bench_stream_create();
        if (!th[t].buf2 || !dev_streams[t][0] || !dev_streams[t][1]) th[t].buf = NULL;
    }
    double t0 = bench_now();
    int started = 0;
    for (int t = 0; t < nthreads; t++) {
        if (!th[t].buf) break;
        if (pthread_create(&tid[t], NULL, raw_main, &th[t])) break;
        started++;
    }
    int err = started == nthreads ? 0 : EIO;
    for (int t = 0; t < started; t++) {
        pthread_join(tid[t], NULL);
        if (th[t].err) err = th[t].err;
    }
    for (int f = 0; direct && f < nfiles; f++)
        if (fdatasync(fds[f]) != 0) err = errno; /* durable: the file's metadata too */
    double secs = bench_now() - t0;
    for (int t = 0; t < nthreads; t++) {
        if (th[t].buf && th[t].heap) free(th[t].buf);
        else if (th[t].buf) bench_pinned_free(th[t].buf);
        if (th[t].buf2) bench_pinned_free(th[t].buf2);
        for (int i = 0; dev && i < 2; i++) bench_stream_destroy(dev_streams[t][i]);
    }
    for (int f = 0; f < nfiles; f++) close(fds[f]);
    if (err) return -1;
    return (double)(per_file * (size_t)nfiles) / secs / 1e9;
}

/* The host's memory bandwidth as the same T threads see it: each copies its share of `total`
 * bytes from a 16 MiB buffer into another (both touched before the clock starts). A pwrite into
 * the page cache reads and writes each byte once, as memcpy does; the device-to-file path also
 * has the copy engine write it into the pinned slot first. GB/s of bytes copied, -1 on failure. */
typedef struct copy_thread {
    uint8_t *src, *dst;
    size_t n, chunk;
} copy_thread;

static void *copy_main(void *arg)
{
    copy_thread *c = arg;
    for (size_t done = 0; done < c->n; done += c->chunk)
        memcpy(c->dst, c->src, c->n - done < c->chunk ? c->n - done : c->chunk);
    return NULL;
}

static double memcpy_GBps(int nthreads, size_t total)
{
    const size_t chunk = (size_t)16 << 20;
    copy_thread c[256];
    pthread_t tid[256];
    if (nthreads > 256) nthreads = 256;
    int ok = 1, started = 0;
    for (int t = 0; t < nthreads; t++) {
        c[t] = (copy_thread){malloc(chunk), malloc(chunk), total / (size_t)nthreads, chunk};
        if (!c[t].src || !c[t].dst) ok = 0;
        else {
            memset(c[t].src, t + 1, chunk);
            memset(c[t].dst, 0, chunk);
        }
    }
    double t0 = bench_now();
    for (int t = 0; ok && t < nthreads; t++) {
        if (pthread_create(&tid[t], NULL, copy_main, &c[t])) ok = 0;
        else started++;
    }
    for (int t = 0; t < started; t++) pthread_join(tid[t], NULL);
    double secs = bench_now() - t0;
    for (int t = 0; t < nthreads; t++) {
        free(c[t].src);
        free(c[t].dst);
    }
    return ok ? (double)(total / (size_t)nthreads * (size_t)nthreads) / secs / 1e9 : -1;
}

static void raw_cleanup(const opts *o, int nfiles)
{
    char p[4096];
    for (int f = 0; f < nfiles; f++) {
        snprintf(p, sizeof p, "%s/gpubp-bench-raw.%d", o->dir, f);
        unlink(p);
    }
}

/* raw_best: the best rate of N threads writing pinned 16 MiB buffers into N files, then reading
 * them back warm (page cache) and, with --cold, cold (dropped first: about a second per N on the
 * H200's virtio disk, so only when the run reads cold), for N in 1, 2, 4, 8, 16, the core count
 * and the library's thread count; and the same into one file (1 and the library's threads).
 * On min(data, 2 GiB), once per run. */
typedef struct raw_best {
    double w, rw, rc;    /* N files */
    int tw, trw, trc;    /* the N that gave them */
    double w1, rw1, rc1; /* one file */
} raw_best;

static void raw_sweep(const opts *o, size_t total, int threads, raw_best *b)
{
    opts warm = *o, cold = *o;
    warm.cold = 0;
    cold.cold = 1;
    long cores = sysconf(_SC_NPROCESSORS_ONLN);
    int ns[7] = {1, 2, 4, 8, 16, cores > 0 && cores < 256 ? (int)cores : 16, threads};
    memset(b, 0, sizeof *b);
    for (int i = 0; i < 7; i++) {
        int n = ns[i], seen = 0;
        for (int k = 0; k < i; k++) seen |= ns[k] == n;
        if (seen || n < 1 || n > 256) continue;
        double w = raw_io(o, n, n, total, 0, NULL, 0, NULL, 0);
        double rw = raw_io(&warm, n, n, total, 1, NULL, 0, NULL, 0);
        double rc = o->cold ? raw_io(&cold, n, n, total, 1, NULL, 0, NULL, 0) : 0;
        raw_cleanup(o, n);
        if (w > b->w) b->w = w, b->tw = n;
        if (rw > b->rw) b->rw = rw, b->trw = n;
        if (rc > b->rc) b->rc = rc, b->trc = n;
    }
    int one[2] = {1, threads};
    for (int i = 0; i < (threads > 1 ? 2 : 1); i++) {
        double w = raw_io(o, one[i], 1, total, 0, NULL, 0, NULL, 0);
        double rw = raw_io(&warm, one[i], 1, total, 1, NULL, 0, NULL, 0);
        double rc = o->cold ? raw_io(&cold, one[i], 1, total, 1, NULL, 0, NULL, 0) : 0;
        raw_cleanup(o, 1);
        if (w > b->w1) b->w1 = w;
        if (rw > b->rw1) b->rw1 = rw;
        if (rc > b->rc1) b->rc1 = rc;
    }
}

/* The durable limit: the best rate of N threads writing page-aligned 16 MiB buffers (pinned for
 * gpu) with O_DIRECT into N files, each fdatasync'ed before the clock stops, N as raw_sweep's.
 * 0 where O_DIRECT is not possible (tmpfs); *tn: the N that gave it. */
static double raw_sweep_direct(const opts *o, size_t total, int threads, int *tn)
{
    opts d = *o;
    d.raw_direct = 1;
    long cores = sysconf(_SC_NPROCESSORS_ONLN);
    int ns[7] = {1, 2, 4, 8, 16, cores > 0 && cores < 256 ? (int)cores : 16, threads};
    double best = 0;
    *tn = 0;
    for (int i = 0; i < 7; i++) {
        int n = ns[i], seen = 0;
        for (int k = 0; k < i; k++) seen |= ns[k] == n;
        if (seen || n < 1 || n > 256) continue;
        double w = raw_io(&d, n, n, total, 0, NULL, 0, NULL, 0);
        raw_cleanup(o, n);
        if (w > best) best = w, *tn = n;
    }
    return best;
}

static double ratio(double a, double b) { return b > 0 ? a / b : 0; }

/* How many data.K files the dataset at path holds (K = 0, 1, ... without a gap). */
static int data_files(const char *path)
{
    int n = 0;
    char p[4200];
    struct stat st;
    for (;; n++) {
        snprintf(p, sizeof p, "%s/data.%d", path, n);
        if (stat(p, &st) != 0) return n;
    }
}

/* the value of key in a params string (what follows "key="), or NULL */
static const char *param_at(const char *params, const char *key)
{
    if (!params) return NULL;
    size_t kl = strlen(key);
    for (const char *s = params; *s;) {
        while (*s == ' ' || *s == ',') s++;
        if (!strncmp(s, key, kl) && s[kl] == '=') return s + kl + 1;
        s = strchr(s, ',');
        if (!s) break;
    }
    return NULL;
}

/* the value of key in a params string, or dflt */
static int param_int(const char *params, const char *key, int dflt)
{
    const char *v = param_at(params, key);
    return v ? atoi(v) : dflt;
}

/* 1 when the params string has key (any value); param_is: when its value is val */
static int param_has(const char *params, const char *key) { return param_at(params, key) != NULL; }

static int param_is(const char *params, const char *key, const char *val)
{
    const char *v = param_at(params, key);
    size_t n = strlen(val);
    return v && !strncmp(v, val, n) && (v[n] == '\0' || v[n] == ',' || v[n] == ' ');
}

static size_t gcd_size(size_t a, size_t b)
{
    while (b) {
        size_t t = a % b;
        a = b;
        b = t;
    }
    return a;
}

static int usage(void)
{
    fprintf(stderr, "usage: gpubp-bench --dir D --mib-per-step N --steps S --blocks B "
                    "--mem host|gpu [--vars V] [--repeat R] [--params P] [--cold] [--baseline] "
                    "[--sub] [--keep]\n");
    return 2;
}

int main(int argc, char **argv)
{
    /* the other modes: metadata at scale, compression */
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--meta")) return gpubp_bench_meta(argc, argv);
        if (!strcmp(argv[i], "--compress")) return gpubp_bench_compress(argc, argv);
    }
    opts o = {NULL, 256, 8, 4, 0, 0, 0, 0, 3, NULL, 1, 0, 0};
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(a, "--dir") && v) o.dir = argv[++i];
        else if (!strcmp(a, "--mib-per-step") && v) o.mib = strtoul(argv[++i], NULL, 10);
        else if (!strcmp(a, "--steps") && v) o.steps = strtoul(argv[++i], NULL, 10);
        else if (!strcmp(a, "--blocks") && v) o.blocks = strtoul(argv[++i], NULL, 10);
        else if (!strcmp(a, "--repeat") && v) o.repeat = atoi(argv[++i]);
        else if (!strcmp(a, "--vars") && v) o.vars = strtoul(argv[++i], NULL, 10);
        else if (!strcmp(a, "--params") && v) o.params = argv[++i];
        else if (!strcmp(a, "--mem") && v) {
            v = argv[++i];
            if (!strcmp(v, "gpu")) o.gpu = 1;
            else if (strcmp(v, "host")) return usage();
        } else if (!strcmp(a, "--baseline")) o.baseline = 1;
        else if (!strcmp(a, "--cold")) o.cold = 1;
        else if (!strcmp(a, "--keep")) o.keep = 1;
        else if (!strcmp(a, "--sub")) o.sub = 1;
        else return usage();
    }
    if (!o.dir || o.mib == 0 || o.steps == 0 || o.blocks == 0 || o.repeat < 1 ||
        o.repeat > MAX_REPEAT || o.vars < 1 || o.vars > 64)
        return usage();
    if (mkdir(o.dir, 0755) < 0 && errno != EEXIST) {
        fprintf(stderr, "gpubp-bench: cannot create %s: %s\n", o.dir, strerror(errno));
        return 1;
    }
    run r;
    memset(&r, 0, sizeof r);
    r.o = &o;
    snprintf(r.path, sizeof r.path, "%s/gpubp-bench.bp", o.dir);
    r.rows = (o.mib << 20) / (COLS * sizeof(double));
    if (r.rows < o.blocks * o.vars) r.rows = o.blocks * o.vars;
    r.nel = r.rows * COLS;
    size_t bytes = r.nel * sizeof(double);

    if (o.gpu) {
        const char *why = "";
        if (!bench_dev_init(&why)) {
            fprintf(stderr, "gpubp-bench: --mem gpu: %s\n", why);
            return 1;
        }
        r.data = bench_dev_alloc(bytes);
        r.back = bench_dev_alloc(bytes);
        if (!r.data || !r.back || bench_dev_fill(r.data, r.nel, 0.0)) return 1;
    } else {
        r.data = malloc(bytes);
        r.back = malloc(bytes);
        if (!r.data || !r.back) {
            fprintf(stderr, "gpubp-bench: out of memory for %zu MiB steps\n", o.mib);
            return 1;
        }
        for (size_t i = 0; i < r.nel; i++) r.data[i] = (double)i;
        memset(r.back, 0, bytes);
    }
    double total = (double)bytes * (double)o.steps;

    /* a warm-up write creates the CUDA context's pool once, so that RSS growth is measured from
     * a baseline taken after context creation and pool allocation, as the issue defines it */
    double secs, wr[MAX_REPEAT], rd[MAX_REPEAT], sub[MAX_REPEAT];
    double dw[MAX_REPEAT], dr[MAX_REPEAT], rw[MAX_REPEAT], rr[MAX_REPEAT], mc[MAX_REPEAT];
    double rf[MAX_REPEAT];
    double qwr[MAX_REPEAT], qwl[MAX_REPEAT], qrr[MAX_REPEAT], qwf[MAX_REPEAT]; /* per-repetition ratios */
    long rss0 = 0, hwm = 0;
    /* the library's defaults (lib/common/params.c gbp_params_io_threads, _pool_slots): threads
     * = the online cores within [4, 16] unless pool_slots says; one slot per thread, 4 at least */
    long cores = sysconf(_SC_NPROCESSORS_ONLN);
    int dflt_threads = cores < 4 ? 4 : cores > 16 ? 16 : (int)cores;
    int threads =
        param_int(o.params, "io_threads", param_int(o.params, "pool_slots", dflt_threads));
    int pool_slots = param_int(o.params, "pool_slots", threads > 4 ? threads : 4);
    int chunk_mib = param_int(o.params, "chunk_mib", 16);
    /* the data files the library writes: subfiles=auto (the default) spreads blocks of 4 MiB or
     * more over as many files as I/O threads; checked against the dataset after the first run */
    int files = param_int(o.params, "subfiles", 0);
    /* split_mib (auto by default: one chunk, chunk_mib; 0 off): the puts of a step that large
     * become n0 = S / gcd(V, S) sub-blocks each (S subfiles, V puts of 4 MiB or more), at most
     * one per 4 MiB (half the threshold when smaller) (lib/engine/writer.c split_target) */
    int split_auto = param_is(o.params, "split_mib", "auto") || !param_has(o.params, "split_mib");
    int split_mib = split_auto ? chunk_mib : param_int(o.params, "split_mib", 0);
    size_t blk = bytes / o.blocks / o.vars;
    size_t nsub = files > 0 ? (size_t)files : (size_t)threads, per_block = 1;
    size_t nlarge = blk >= ((size_t)4 << 20) ? o.blocks * o.vars : 0;
    size_t n0 = nlarge ? nsub / gcd_size(nlarge, nsub) : 1;
    size_t floor_b = (size_t)split_mib << 19 < ((size_t)4 << 20) ? (size_t)split_mib << 19
                                                                 : ((size_t)4 << 20);
    if (split_mib > 0 && blk >= ((size_t)split_mib << 20) && nsub > 1 && n0 > 1)
        per_block = n0 < blk / floor_b ? n0 : blk / floor_b;
    if (per_block < 1) per_block = 1;
    if (files <= 0) {
        size_t pieces = o.blocks * o.vars * per_block;
        files = blk < ((size_t)4 << 20) ? 1 : pieces < (size_t)threads ? (int)pieces : threads;
    }
    /* direct_io=1 or fsync=1: the durable path, against the best raw O_DIRECT write */
    int durable = param_int(o.params, "direct_io", 0) || param_int(o.params, "fsync", 0);
    /* the fresh bytes of the second raw write: min(data, 1 GiB) of pinned memory, more than the
     * L3 cache holds, touched before any clock starts */
    size_t fresh_bytes = (size_t)total < ((size_t)1 << 30) ? (size_t)total : ((size_t)1 << 30);
    char *fresh = NULL;
    if (o.baseline && o.gpu && (fresh = bench_pinned_alloc(fresh_bytes)) != NULL)
        memset(fresh, 0x5a, fresh_bytes);
    raw_best best;
    memset(&best, 0, sizeof best);
    double best_direct = 0;
    int direct_threads = 0;
    if (o.baseline) {
        size_t sweep = (size_t)total < ((size_t)2 << 30) ? (size_t)total : ((size_t)2 << 30);
        raw_sweep(&o, sweep, threads, &best);
        if (durable) best_direct = raw_sweep_direct(&o, sweep, threads, &direct_threads);
    }
    /* each repetition measures the raw limits first, then the library, on the same bytes; a run
     * starts from no dataset, as the raw write starts from no file */
    for (int k = 0; k < o.repeat; k++) {
        if (o.baseline && o.gpu) {
            rw[k] = raw_io(&o, threads, files, (size_t)total, 0, NULL, 0, NULL, 0);
            rr[k] = raw_io(&o, threads, files, (size_t)total, 1, NULL, 0, NULL, 0);
            raw_cleanup(&o, files);
            rf[k] = fresh ? raw_io(&o, threads, files, (size_t)total, 0, NULL, 0, fresh, fresh_bytes)
                          : -1;
            raw_cleanup(&o, files);
            dw[k] = raw_io(&o, threads, files, (size_t)total, 0, r.data, bytes, NULL, 0);
            raw_cleanup(&o, files);
            mc[k] = memcpy_GBps(threads, (size_t)total);
        } else if (o.baseline) {
            if (dd_baseline(&o, r.data, bytes, &dw[k], &dr[k])) return 1;
        }
        bench_remove_dataset(r.path);
        if (k == 0) {
            reset_peak_rss();
            rss0 = status_kb("VmRSS");
        }
        if (do_write(&r, &secs)) return 1;
        if (k == 0) hwm = status_kb("VmHWM");
        int wrote = k == 0 ? data_files(r.path) : files;
        if (wrote != files)
            fprintf(stderr, "gpubp-bench: the library wrote %d data files, the raw baselines use "
                            "%d\n", wrote, files);
        wr[k] = total / secs / 1e9;
        if (do_read(&r, 0, &secs)) return 1;
        rd[k] = total / secs / 1e9;
        if (o.baseline && o.gpu) {
            qwr[k] = wr[k] / rw[k];
            qwl[k] = dw[k] > 0 ? wr[k] / dw[k] : 0;
            qwf[k] = rf[k] > 0 ? wr[k] / rf[k] : 0;
            qrr[k] = rd[k] / rr[k];
        }
        if (o.baseline || o.sub) {
            if (do_read(&r, 1, &secs)) return 1;
            sub[k] = total / 2 / secs / 1e9;
        }
    }
    double wmed = median(wr, o.repeat), rmed = median(rd, o.repeat);

    if (o.baseline) {
        const char *rk = o.cold ? "cold" : "warm";
        double rbest = o.cold ? best.rc : best.rw, rone = o.cold ? best.rc1 : best.rw1;
        printf("baseline: raw_best_write_GBps=%.2f (%d threads) raw_best_warm_read_GBps=%.2f (%d) "
               "raw_best_cold_read_GBps=%.2f (%d) one_file_write_GBps=%.2f "
               "one_file_warm_read_GBps=%.2f one_file_cold_read_GBps=%.2f (16 MiB buffers, "
               "pinned for gpu, N threads into N files; one file: 1 and %d threads)\n",
               best.w, best.tw, best.rw, best.trw, best.rc, best.trc, best.w1, best.rw1, best.rc1,
               threads);
        printf("ratios_best: write/raw_best=%.2f read/raw_best_%s=%.2f", ratio(wmed, best.w), rk,
               ratio(rmed, rbest));
        if (files == 1)
            printf(" write/one_file=%.2f read/one_file_%s=%.2f", ratio(wmed, best.w1), rk,
                   ratio(rmed, rone));
        else if (per_block == 1) /* unsplit blocks over F files: each file at most one file's rate */
            printf(" write/(files*one_file)=%.2f", ratio(wmed, best.w1 * files));
        printf(" (library medians: %d data files, %zu variables x %zu blocks, split_mib=%d: "
               "%zu sub-blocks per block)\n", files, o.vars, o.blocks, split_mib, per_block);
        if (durable)
            printf("baseline: raw_best_direct_write_GBps=%.2f (%d threads; O_DIRECT from 16 MiB "
                   "page-aligned buffers into N files, each fdatasync'ed, N = 1, 2, 4, 8, 16, cores, "
                   "%d)\nratios_direct: write/raw_best_direct=%.2f\n", best_direct,
                   direct_threads, threads, ratio(wmed, best_direct));
    }
    if (o.baseline) {
        if (o.gpu) {
            size_t cbytes = bytes < ((size_t)1 << 30) ? bytes : ((size_t)1 << 30);
            double d2h = bench_copy_GBps(1, cbytes, (size_t)16 << 20);
            double h2d = bench_copy_GBps(0, cbytes, (size_t)16 << 20);
            printf("baseline: d2h_GBps=%.2f h2d_GBps=%.2f raw_write_GBps=%.2f raw_read_GBps=%.2f "
                   "threads=%d files=%d\n", d2h, h2d, median(rw, o.repeat), median(rr, o.repeat),
                   threads, files);
            printf("gpubp: sub_read_GBps=%.2f rss_growth_MiB=%.1f pool_MiB=%d\n",
                   median(sub, o.repeat), (double)(hwm - rss0) / 1024.0, pool_slots * chunk_mib);
            printf("baseline: dev_loop_write_GBps=%.2f (the same threads copying 16 MiB chunks "
                   "from the device into two pinned buffers each, on two streams, and writing "
                   "them)\n", median(dw, o.repeat));
            printf("baseline: memcpy_GBps=%.2f (the same threads copying 16 MiB buffers in host "
                   "memory)\n", median(mc, o.repeat));
            printf("baseline: raw_write_fresh_GBps=%.2f (the raw write from %zu MiB of pinned "
                   "memory, each thread its share in turn: bytes not in the CPU cache)\n",
                   median(rf, o.repeat), fresh_bytes >> 20);
            printf("ratios: write/raw=%.2f write/loop=%.2f read/raw=%.2f write/raw_fresh=%.2f "
                   "(medians of the per-repetition ratios)\n", median(qwr, o.repeat),
                   median(qwl, o.repeat), median(qrr, o.repeat), median(qwf, o.repeat));
        } else {
            printf("baseline: dd_write_GBps=%.2f raw_read_GBps=%.2f\n", median(dw, o.repeat),
                   median(dr, o.repeat));
            printf("gpubp: sub_read_GBps=%.2f rss_extra_MiB=%.1f\n", median(sub, o.repeat),
                   (double)(hwm - rss0) / 1024.0);
        }
    }
    if (o.sub && !o.baseline) printf("gpubp: sub_read_GBps=%.2f\n", median(sub, o.repeat));
    printf("write_GBps=%.2f read_GBps=%.2f\n", wmed, rmed);

    if (!o.keep) bench_remove_dataset(r.path);
    if (fresh) bench_pinned_free(fresh);
    if (o.gpu) {
        bench_dev_free(r.data);
        bench_dev_free(r.back);
    } else {
        free(r.data);
        free(r.back);
    }
    return 0;
}
