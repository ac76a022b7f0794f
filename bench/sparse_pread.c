/* gpubp-sparse-pread: the raw measurement behind the strided-read rule (lib/memspace/box.c
 * gbp_box_sparse_pays, docs/performance.md "Strided reads: run by run"). A warm file of rows of
 * ROW bytes, of which the first RUN bytes of every row are wanted, read by T threads (each its
 * share of the rows) three ways:
 *   span   one pread of 16 MiB spans, the gaps read too (what the device path did: the copy
 *          engine drops them);
 *   pack   the same spans, then the runs packed on the CPU (the host bounce-buffer path);
 *   runs   one pread per run, straight into a packed buffer;
 *   vec    one preadv per 512 rows: each run into the packed buffer, each gap into one small
 *          buffer that stays in cache (the gaps leave the page cache, but nothing stores them);
 *   map    the same spans mapped (mmap, MAP_POPULATE: the page tables filled in one call), the
 *          runs copied out of the mapping, then unmapped: no call per run, no copy of the gaps
 *          (a file truncated meanwhile raises SIGBUS: why the library does not read this way);
 *   pvm    the same mapping, the runs copied by process_vm_readv of this process, VEC_ROWS runs
 *          a call (a page truncated away fails the call with EFAULT instead of a signal).
 * Prints, per mode, the median over the repetitions of the bytes wanted per second:
 *   sparse_pread row=ROW run=RUN threads=T mode=span|pack|runs|vec|map|pvm GBps=<x>
 * Usage: gpubp-sparse-pread FILE [MiB=512] [row=8192] [run=4096] [threads=1] [repeat=3]
 * FILE is created (or extended) to MiB and read once before the clock starts. Not a test. */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>

#include "bench/bench_util.h"

#define SPAN ((size_t)16 << 20)
#define MAX_THREADS 64

typedef struct sp_arg {
    int fd, mode;
    size_t lo, hi, row, run; /* this thread's rows [lo, hi) */
    int failed;
} sp_arg;

static int read_full(int fd, char *p, size_t n, off_t off)
{
    while (n > 0) {
        ssize_t r = pread(fd, p, n, off);
        if (r < 0 && errno == EINTR) continue;
        if (r <= 0) return -1;
        p += r;
        n -= (size_t)r;
        off += r;
    }
    return 0;
}

#define VEC_ROWS 512 /* iovecs: two a row, within IOV_MAX (1024) */

/* preadv of the whole iov from off, resumed after short reads; 0, or -1. */
static int readv_full(int fd, struct iovec *iov, int n, off_t off)
{
    while (n > 0) {
        ssize_t r = preadv(fd, iov, n, off);
        if (r < 0 && errno == EINTR) continue;
        if (r <= 0) return -1;
        off += r;
        while (n > 0 && (size_t)r >= iov->iov_len) {
            r -= (ssize_t)iov->iov_len;
            iov++;
            n--;
        }
        if (n > 0) {
            iov->iov_base = (char *)iov->iov_base + r;
            iov->iov_len -= (size_t)r;
        }
    }
    return 0;
}

/* Rows [r, r + n) of a mapped span: each row's run copied into out (mode 4 by memcpy, mode 5 by
 * process_vm_readv, VEC_ROWS runs a call); 0, or -1. */
static int map_copy(const sp_arg *a, size_t r, size_t n, char *out)
{
    size_t off = r * a->row, skew = off % 4096, len = n * a->row + skew;
    char *m = mmap(NULL, len, PROT_READ, MAP_SHARED | MAP_POPULATE, a->fd, (off_t)(off - skew));
    if (m == MAP_FAILED) return -1;
    int rc = 0;
    for (size_t k = 0; k < n && rc == 0; k += VEC_ROWS) {
        struct iovec li[VEC_ROWS], ri[VEC_ROWS];
        size_t c = n - k < VEC_ROWS ? n - k : VEC_ROWS;
        for (size_t i = 0; i < c; i++) {
            li[i] = (struct iovec){out + (k + i) * a->run, a->run};
            ri[i] = (struct iovec){m + skew + (k + i) * a->row, a->run};
            if (a->mode == 4) memcpy(li[i].iov_base, ri[i].iov_base, a->run);
        }
        if (a->mode == 5 &&
            process_vm_readv(getpid(), li, c, ri, c, 0) != (ssize_t)(c * a->run))
            rc = -1;
    }
    munmap(m, len);
    return rc;
}

static void *sp_main(void *vp)
{
    sp_arg *a = vp;
    char *buf = malloc(SPAN), *out = malloc(SPAN);
    if (!buf || !out) {
        a->failed = 1;
        free(buf);
        free(out);
        return NULL;
    }
    size_t rows_per_span = SPAN / a->row, p = 0;
    for (size_t r = a->lo; r < a->hi && !a->failed;) {
        if (a->mode == 3) { /* one preadv per VEC_ROWS rows, the gaps into buf's first bytes */
            struct iovec iov[2 * VEC_ROWS];
            size_t n = a->hi - r < VEC_ROWS ? a->hi - r : VEC_ROWS;
            if (p + n * a->run > SPAN) p = 0;
            int k = 0;
            for (size_t i = 0; i < n; i++) {
                iov[k++] = (struct iovec){out + p + i * a->run, a->run};
                if (a->row > a->run && i + 1 < n) iov[k++] = (struct iovec){buf, a->row - a->run};
            }
            a->failed = readv_full(a->fd, iov, k, (off_t)(r * a->row)) != 0;
            p += n * a->run;
            r += n;
            continue;
        }
        if (a->mode >= 4) { /* a mapped span; the runs copied out of it (4) or by pvm (5) */
            size_t n = a->hi - r < rows_per_span ? a->hi - r : rows_per_span;
            a->failed = map_copy(a, r, n, out) != 0;
            r += n;
            continue;
        }
        if (a->mode == 2) { /* one pread per run */
            if (p + a->run > SPAN) p = 0;
            a->failed = read_full(a->fd, out + p, a->run, (off_t)(r * a->row)) != 0;
            p += a->run;
            r++;
            continue;
        }
        size_t n = a->hi - r < rows_per_span ? a->hi - r : rows_per_span;
        a->failed = read_full(a->fd, buf, n * a->row, (off_t)(r * a->row)) != 0;
        if (a->mode == 1)
            for (size_t k = 0; k < n; k++) memcpy(out + k * a->run, buf + k * a->row, a->run);
        r += n;
    }
    free(buf);
    free(out);
    return NULL;
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: %s FILE [MiB=512] [row=8192] [run=4096] [threads=1] [repeat=3]\n",
                argv[0]);
        return 2;
    }
    size_t mib = argc > 2 ? strtoul(argv[2], NULL, 10) : 512;
    size_t row = argc > 3 ? strtoul(argv[3], NULL, 10) : 8192;
    size_t run = argc > 4 ? strtoul(argv[4], NULL, 10) : 4096;
    int threads = argc > 5 ? atoi(argv[5]) : 1, repeat = argc > 6 ? atoi(argv[6]) : 3;
    if (row == 0 || run == 0 || run > row || row > SPAN || threads < 1 || threads > MAX_THREADS ||
        repeat < 1 || repeat > 100 || mib == 0) {
        fprintf(stderr, "gpubp-sparse-pread: bad arguments (0 < run <= row <= 16 MiB, 1-%d "
                        "threads, 1-100 repeats)\n", MAX_THREADS);
        return 2;
    }
    size_t rows = (mib << 20) / row, bytes = rows * row;
    int fd = open(argv[1], O_RDWR | O_CREAT, 0644);
    struct stat st;
    if (fd < 0 || fstat(fd, &st) != 0) {
        fprintf(stderr, "gpubp-sparse-pread: %s: %s\n", argv[1], strerror(errno));
        return 1;
    }
    char *fill = malloc(SPAN);
    if (!fill) return 1;
    memset(fill, 0x3c, SPAN);
    for (size_t o = (size_t)st.st_size; o < bytes; o += SPAN) {
        size_t n = bytes - o < SPAN ? bytes - o : SPAN;
        if (pwrite(fd, fill, n, (off_t)o) != (ssize_t)n) {
            fprintf(stderr, "gpubp-sparse-pread: write %s: %s\n", argv[1], strerror(errno));
            return 1;
        }
    }
    for (size_t o = 0; o < bytes; o += SPAN) /* warm */
        if (read_full(fd, fill, bytes - o < SPAN ? bytes - o : SPAN, (off_t)o) != 0) return 1;
    free(fill);
    static const char *names[] = {"span", "pack", "runs", "vec", "map", "pvm"};
    double v[6][100];
    for (int k = 0; k < repeat; k++)
        for (int mode = 0; mode < 6; mode++) {
            sp_arg a[MAX_THREADS];
            pthread_t t[MAX_THREADS];
            double t0 = bench_now();
            for (int i = 0; i < threads; i++) {
                a[i] = (sp_arg){fd, mode, rows * (size_t)i / (size_t)threads,
                                rows * ((size_t)i + 1) / (size_t)threads, row, run, 0};
                if (pthread_create(&t[i], NULL, sp_main, &a[i]) != 0) return 1;
            }
            int failed = 0;
            for (int i = 0; i < threads; i++) {
                pthread_join(t[i], NULL);
                failed |= a[i].failed;
            }
            if (failed) {
                fprintf(stderr, "gpubp-sparse-pread: a read failed\n");
                return 1;
            }
            v[mode][k] = (double)(rows * run) / (bench_now() - t0) / 1e9;
        }
    for (int mode = 0; mode < 6; mode++)
        printf("sparse_pread row=%zu run=%zu threads=%d mode=%s GBps=%.2f\n", row, run, threads,
               names[mode], bench_median(v[mode], (size_t)repeat));
    close(fd);
    return 0;
}
