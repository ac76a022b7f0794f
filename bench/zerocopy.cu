// gpubp-zerocopy: can the device path skip the bounce through pinned slots? (issue 23)
//
// The staged path moves every byte through host memory three times (reads: the page cache
// copied into a pinned slot by pread, then read by the copy engine; writes: the copy engine
// writes the slot, pwrite reads it and writes the page cache), where a raw pread or pwrite of
// a cache-resident buffer moves it twice. This program measures, on one machine and in one run,
// warm reads of N files (one per thread) into device memory and writes from device memory into
// N files:
//   staged   pread / pwrite through two pinned chunks per thread, copies on the thread's stream
//            (what the library does)
//   mapreg   the file mmap'ed and each chunk of the mapping registered with cudaHostRegister
//            (read-only for reads), so that the copy engine reads or writes the page cache
//            itself; the registration and its removal are inside the clock (they are per
//            transfer: the page cache's pages change). Writes need a writable registration of
//            a shared file mapping, which the H200 machine's CUDA 13 / kernel refuses
//            (cudaHostRegister: invalid argument; run 57): then mapreg write prints -1
//   mapcopy  cudaMemcpyAsync from / to the pageable mapping (CUDA's own staging)
//   raw      pread / pwrite of the same files from one cache-resident pinned chunk per thread
//            at the threads given (not raw_best: that is the best over 1-16 threads,
//            gpubp-bench --baseline; run this at several thread counts to compare with it)
// staged's and raw's pinned chunks are allocated once, before any clock starts, as the library
// pins its pool once per file (until run 58 each pass pinned its own inside the clock).
// Every read and write is checked against the pattern (a word per KiB). Not a test.
//
//   gpubp-zerocopy DIR [MiB=2048] [threads=16] [chunk_MiB=16] [repeat=3]
#include <cuda_runtime.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#define CK(x)                                                                                  \
    do {                                                                                       \
        cudaError_t e_ = (x);                                                                  \
        if (e_ != cudaSuccess) {                                                               \
            fprintf(stderr, "%s:%d %s: %s\n", __FILE__, __LINE__, #x, cudaGetErrorString(e_)); \
            exit(1);                                                                           \
        }                                                                                      \
    } while (0)

enum { STAGED, MAPREG, MAPCOPY, RAW, NMETHOD };
static const char *method_name[NMETHOD] = {"staged", "mapreg", "mapcopy", "raw"};

struct job {
    int id, write, method;
    const char *dir;
    size_t bytes, chunk;
    char *dev;    // this thread's share of the device buffer
    char *h[2];   // staged and raw: two pinned chunks, allocated before the clock starts
    int failed;   // registration refused (errno-like code), or a short transfer
    char why[640];
};

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + t.tv_nsec * 1e-9;
}

static void path_of(char *p, size_t n, const char *dir, int id)
{
    snprintf(p, n, "%s/zc.%d", dir, id);
}

static void remove_files(const char *dir, int threads)
{
    for (int i = 0; i < threads; i++) {
        char p[512];
        path_of(p, sizeof p, dir, i);
        unlink(p);
    }
}

static uint64_t word_at(int id, size_t off)
{
    return (uint64_t)id * 0x9e3779b97f4a7c15ull ^ (off * 0xbf58476d1ce4e5b9ull);
}

static void fill(char *h, size_t n, int id)
{
    for (size_t o = 0; o + 8 <= n; o += 8) {
        uint64_t w = word_at(id, o);
        memcpy(h + o, &w, 8);
    }
}

static void *run_job(void *arg)
{
    struct job *j = (struct job *)arg;
    char path[512];
    path_of(path, sizeof path, j->dir, j->id);
    cudaStream_t s;
    CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    int fd = open(path, j->write ? (O_RDWR | O_CREAT | O_TRUNC) : O_RDONLY, 0644);
    if (fd < 0) {
        snprintf(j->why, sizeof j->why, "open %s: %s", path, strerror(errno));
        j->failed = 1;
        return NULL;
    }
    if (j->method == STAGED || j->method == RAW) {
        char **h = j->h;
        cudaEvent_t ev[2];
        for (int i = 0; i < 2; i++)
            CK(cudaEventCreateWithFlags(&ev[i], cudaEventDisableTiming));
        size_t k = 0;
        for (size_t off = 0; off < j->bytes; off += j->chunk, k++) {
            size_t n = j->bytes - off < j->chunk ? j->bytes - off : j->chunk;
            char *b = j->method == RAW ? h[0] : h[k & 1];
            ssize_t r;
            if (j->method == RAW) {
                r = j->write ? pwrite(fd, b, n, (off_t)off) : pread(fd, b, n, (off_t)off);
            } else if (j->write) {
                CK(cudaMemcpyAsync(b, j->dev + off, n, cudaMemcpyDeviceToHost, s));
                CK(cudaStreamSynchronize(s));
                r = pwrite(fd, b, n, (off_t)off);
            } else {
                CK(cudaEventSynchronize(ev[k & 1])); // the copy out of this chunk is done
                r = pread(fd, b, n, (off_t)off);
                CK(cudaMemcpyAsync(j->dev + off, b, n, cudaMemcpyHostToDevice, s));
                CK(cudaEventRecord(ev[k & 1], s));
            }
            if (r != (ssize_t)n) {
                snprintf(j->why, sizeof j->why, "short transfer at %zu", off);
                j->failed = 1;
                break;
            }
        }
        CK(cudaStreamSynchronize(s));
        for (int i = 0; i < 2; i++)
            CK(cudaEventDestroy(ev[i]));
    } else {
        if (j->write && ftruncate(fd, (off_t)j->bytes) != 0) {
            snprintf(j->why, sizeof j->why, "ftruncate: %s", strerror(errno));
            j->failed = 1;
        }
        char *m = j->failed ? (char *)MAP_FAILED
                            : (char *)mmap(NULL, j->bytes, j->write ? PROT_READ | PROT_WRITE : PROT_READ,
                                           MAP_SHARED, fd, 0);
        if (m == MAP_FAILED) {
            if (!j->failed)
                snprintf(j->why, sizeof j->why, "mmap: %s", strerror(errno));
            j->failed = 1;
        } else {
            for (size_t off = 0; off < j->bytes && !j->failed; off += j->chunk) {
                size_t n = j->bytes - off < j->chunk ? j->bytes - off : j->chunk;
                if (j->method == MAPREG) {
                    unsigned fl = j->write ? cudaHostRegisterDefault : cudaHostRegisterReadOnly;
                    cudaError_t e = cudaHostRegister(m + off, n, fl);
                    if (e != cudaSuccess) {
                        snprintf(j->why, sizeof j->why, "cudaHostRegister: %s", cudaGetErrorString(e));
                        cudaGetLastError();
                        j->failed = 1;
                        break;
                    }
                }
                if (j->write)
                    CK(cudaMemcpyAsync(m + off, j->dev + off, n, cudaMemcpyDeviceToHost, s));
                else
                    CK(cudaMemcpyAsync(j->dev + off, m + off, n, cudaMemcpyHostToDevice, s));
                CK(cudaStreamSynchronize(s));
                if (j->method == MAPREG)
                    CK(cudaHostUnregister(m + off));
            }
            munmap(m, j->bytes);
        }
    }
    close(fd);
    CK(cudaStreamDestroy(s));
    return NULL;
}

// one pass of a method over all threads; returns GB/s or -1 when a thread failed. pinned holds
// two chunks per thread (staged and raw), allocated once by main: pinning is outside the clock,
// as the library's pool is allocated once per file (mapreg's registration is inside: it is
// per transfer, the page cache's pages change)
static double pass(const char *dir, int threads, size_t per, size_t chunk, char *dev, int write,
                   int method, char *pinned)
{
    struct job *j = (struct job *)calloc(threads, sizeof *j);
    pthread_t *t = (pthread_t *)calloc(threads, sizeof *t);
    if (write) remove_files(dir, threads); // dropping the old pages: outside the clock
    for (int i = 0; i < threads; i++) {
        j[i] = (struct job){i, write, method, dir, per, chunk, dev + per * i, {NULL, NULL}, 0, ""};
        j[i].h[0] = pinned + 2 * chunk * i;
        j[i].h[1] = j[i].h[0] + chunk;
        if (method == RAW) memset(j[i].h[0], 0x5a, chunk);
    }
    double t0 = now();
    for (int i = 0; i < threads; i++)
        pthread_create(&t[i], NULL, run_job, &j[i]);
    for (int i = 0; i < threads; i++)
        pthread_join(t[i], NULL);
    double dt = now() - t0;
    double r = (double)per * threads / dt / 1e9;
    for (int i = 0; i < threads; i++)
        if (j[i].failed) {
            printf("  %s %s thread %d: %s\n", method_name[method], write ? "write" : "read", i,
                   j[i].why);
            r = -1;
            break;
        }
    free(j);
    free(t);
    return r;
}

// the words of thread id's share p (per bytes) that differ from the pattern, one per KiB
static long diff_words(const char *p, int id, size_t per)
{
    long bad = 0;
    for (size_t o = 0; o + 8 <= per; o += 1024) {
        uint64_t g;
        memcpy(&g, p + o, 8);
        bad += g != word_at(id, o);
    }
    return bad;
}

// after a read: the device buffer against the pattern
static long check(const char *dev, int threads, size_t per)
{
    size_t n = per * threads;
    char *h = (char *)malloc(n);
    CK(cudaMemcpy(h, dev, n, cudaMemcpyDeviceToHost));
    long bad = 0;
    for (int i = 0; i < threads; i++)
        bad += diff_words(h + per * i, i, per);
    free(h);
    return bad;
}

// after a write: every file against the pattern
static long check_files(const char *dir, int threads, size_t per)
{
    long bad = 0;
    for (int i = 0; i < threads; i++) {
        char p[512];
        path_of(p, sizeof p, dir, i);
        int fd = open(p, O_RDONLY);
        const char *m = fd < 0 ? (const char *)MAP_FAILED
                               : (const char *)mmap(NULL, per, PROT_READ, MAP_SHARED, fd, 0);
        if (m == MAP_FAILED) {
            bad++;
        } else {
            bad += diff_words(m, i, per);
            munmap((void *)m, per);
        }
        if (fd >= 0) close(fd);
    }
    return bad;
}

static int cmpd(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: %s DIR [MiB=2048] [threads=16] [chunk_MiB=16] [repeat=3]\n", argv[0]);
        return 2;
    }
    const char *dir = argv[1];
    size_t mib = argc > 2 ? strtoul(argv[2], NULL, 10) : 2048;
    int threads = argc > 3 ? atoi(argv[3]) : 16;
    size_t chunk = (argc > 4 ? strtoul(argv[4], NULL, 10) : 16) << 20;
    int repeat = argc > 5 ? atoi(argv[5]) : 3;
    size_t per = (mib << 20) / threads / chunk * chunk;
    char *dev;
    CK(cudaMalloc((void **)&dev, per * threads));
    char *h = (char *)malloc(per);
    for (int i = 0; i < threads; i++) { // the pattern on the device, thread i's share
        fill(h, per, i);
        CK(cudaMemcpy(dev + per * i, h, per, cudaMemcpyHostToDevice));
    }
    free(h);
    char *pinned;
    CK(cudaHostAlloc((void **)&pinned, 2 * chunk * threads, cudaHostAllocDefault));
    printf("zerocopy: %zu MiB, %d threads, %zu MiB chunks, %d repetitions (medians)\n",
           per * threads >> 20, threads, chunk >> 20, repeat);
    double med[2][NMETHOD];
    for (int w = 1; w >= 0; w--) {
        double v[NMETHOD][16];
        for (int r = 0; r < repeat && r < 16; r++)
            for (int m = 0; m < NMETHOD; m++) {
                if (!w) CK(cudaMemset(dev, 0, per * threads)); // reads must fill it
                v[m][r] = pass(dir, threads, per, chunk, dev, w, m, pinned);
                if (m != RAW && v[m][r] > 0) { // raw moves a host buffer: nothing to check
                    long bad = w ? check_files(dir, threads, per) : check(dev, threads, per);
                    if (bad) {
                        printf("  %s %s: %ld words differ\n", method_name[m], w ? "write" : "read",
                               bad);
                        v[m][r] = -1;
                    }
                }
                if (w && m == RAW) // raw wrote 0x5a: the pattern back for the reads
                    pass(dir, threads, per, chunk, dev, 1, STAGED, pinned);
            }
        for (int m = 0; m < NMETHOD; m++) {
            int n = repeat < 16 ? repeat : 16;
            qsort(v[m], n, sizeof(double), cmpd);
            med[w][m] = v[m][n / 2];
        }
    }
    for (int w = 1; w >= 0; w--)
        printf("%s_GBps: staged=%.2f mapreg=%.2f mapcopy=%.2f raw=%.2f "
               "mapreg/staged=%.2f staged/raw=%.2f mapreg/raw=%.2f\n",
               w ? "write" : "warm_read", med[w][STAGED], med[w][MAPREG], med[w][MAPCOPY],
               med[w][RAW], med[w][MAPREG] / med[w][STAGED], med[w][STAGED] / med[w][RAW],
               med[w][MAPREG] / med[w][RAW]);
    remove_files(dir, threads);
    CK(cudaFreeHost(pinned));
    CK(cudaFree(dev));
    return 0;
}
