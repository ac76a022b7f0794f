/* remote_bench: throughput of a large read over loopback (gpubp-serve + the client's pipelined
 * pread) against the same read from the local file, both from a warm page cache. Not a test; the
 * numbers go into docs/performance-remote.md.
 *
 *   remote_bench GPUBP_SERVE SCRATCH_DIR [MIB=1024] [REPS=5]
 *
 * Writes SCRATCH_DIR/bench.bp through the API (one 1-D double variable "x" of MIB MiB in one
 * block; kept for later runs), reads it once to warm the cache, then alternates, per repetition:
 *   transport: data.0 whole, local (pread in 16 MiB pieces, as lib/io does) vs remote (one
 *              gbp_remote_pread through gpubp-serve on a free 127.0.0.1 port);
 *   API:       gpubp_open + gpubp_get of all of "x" into host memory, local path vs gpubp:// URL.
 * Prints each repetition and the median and best of each. */
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <arpa/inet.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "gpubp.h"
#include "remote/remote.h"

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

static int cmp_d(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static int free_port(void)
{
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in a;
    memset(&a, 0, sizeof a);
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t l = sizeof a;
    int port = -1;
    if (bind(fd, (struct sockaddr *)&a, sizeof a) == 0 &&
        getsockname(fd, (struct sockaddr *)&a, &l) == 0)
        port = ntohs(a.sin_port);
    close(fd);
    return port;
}

static int local_read(const char *path, uint8_t *buf, size_t n)
{
    int fd = open(path, O_RDONLY);
    if (fd < 0) return -1;
    size_t done = 0;
    while (done < n) {
        size_t k = n - done < ((size_t)16 << 20) ? n - done : ((size_t)16 << 20);
        ssize_t r = pread(fd, buf + done, k, (off_t)done);
        if (r <= 0) break;
        done += (size_t)r;
    }
    close(fd);
    return done == n ? 0 : -1;
}

int main(int argc, char **argv)
{
    if (argc < 3) {
        fprintf(stderr, "usage: remote_bench GPUBP_SERVE SCRATCH_DIR [MIB=1024] [REPS=5]\n");
        return 2;
    }
    const char *serve = argv[1], *dir = argv[2];
    size_t mib = argc > 3 ? (size_t)atol(argv[3]) : 1024;
    int reps = argc > 4 ? atoi(argv[4]) : 5;
    if (mib < 1 || reps < 1 || reps > 100) return 2;
    size_t nx = (mib << 20) / sizeof(double);
    char ds[4200], data[4300], idx[4300];
    snprintf(ds, sizeof ds, "%s/bench.bp", dir);
    snprintf(data, sizeof data, "%s/data.0", ds);
    snprintf(idx, sizeof idx, "%s/md.idx", ds);
    mkdir(dir, 0755);
    double *x = malloc(nx * sizeof *x), *y = malloc(nx * sizeof *y);
    if (!x || !y) return 1;
    for (size_t i = 0; i < nx; i++) x[i] = (double)i * 0.25 - 7.0;
    struct stat st;
    char sizefile[4300];
    snprintf(sizefile, sizeof sizefile, "%s/bench.mib", dir);
    FILE *sf = fopen(sizefile, "r");
    size_t have = 0;
    if (sf) {
        if (fscanf(sf, "%zu", &have) != 1) have = 0;
        fclose(sf);
    }
    if (have != mib || stat(idx, &st) != 0) {
        gpubp_file *w;
        gpubp_variable *v;
        size_t shape[1] = {nx}, start[1] = {0};
        if (gpubp_open(&w, ds, GPUBP_MODE_WRITE, NULL) || gpubp_define_variable(&v, w, "x",
            GPUBP_TYPE_DOUBLE, 1, shape, start, shape) || gpubp_begin_step(w) ||
            gpubp_put(w, v, x, GPUBP_SYNC) || gpubp_end_step(w) || gpubp_close(w)) {
            fprintf(stderr, "writing %s: %s\n", ds, gpubp_last_error());
            return 1;
        }
        sf = fopen(sizefile, "w");
        if (sf) {
            fprintf(sf, "%zu\n", mib);
            fclose(sf);
        }
    }
    if (stat(data, &st) != 0) return 1;
    size_t n = (size_t)st.st_size;
    uint8_t *buf = malloc(n), *chk = malloc(n);
    if (!buf || !chk) return 1;
    if (local_read(data, chk, n)) return 1; /* warm the page cache; the reference bytes */

    int port = free_port();
    char listen[64];
    snprintf(listen, sizeof listen, "127.0.0.1:%d", port);
    pid_t pid = fork();
    if (pid == 0) {
        execl(serve, serve, "--listen", listen, "--root", dir, (char *)NULL);
        _exit(127);
    }
    char url[4400];
    snprintf(url, sizeof url, "gpubp://127.0.0.1:%d/bench.bp", port);
    gbp_remote *r = NULL;
    if (gbp_remote_open(&r, url, NULL) != 0) {
        fprintf(stderr, "%s\n", gbp_error_message());
        kill(pid, SIGTERM);
        return 1;
    }
    double tl[100], tr[100], al[100], ar[100];
    printf("# data.0: %zu bytes (%zu MiB variable), %d repetitions; GB/s = 1e9 bytes/s\n", n, mib,
           reps);
    for (int i = 0; i < reps; i++) {
        double t0 = now_s();
        if (local_read(data, buf, n)) return 1;
        tl[i] = now_s() - t0;
        memset(buf, 0, 4096);
        t0 = now_s();
        if (gbp_remote_pread(r, "data.0", buf, n, 0) != 0) {
            fprintf(stderr, "%s\n", gbp_error_message());
            return 1;
        }
        tr[i] = now_s() - t0;
        if (memcmp(buf, chk, n)) {
            fprintf(stderr, "remote bytes differ\n");
            return 1;
        }
        double *ta[2] = {&al[i], &ar[i]};
        for (int k = 0; k < 2; k++) {
            gpubp_file *f;
            gpubp_variable *v;
            memset(y, 0, 4096);
            t0 = now_s();
            if (gpubp_open(&f, k ? url : ds, GPUBP_MODE_READ_RANDOM_ACCESS, NULL) ||
                gpubp_inquire_variable(&v, f, "x") || gpubp_get(f, v, y, GPUBP_SYNC) ||
                gpubp_close(f)) {
                fprintf(stderr, "API read %s: %s\n", k ? url : ds, gpubp_last_error());
                return 1;
            }
            *ta[k] = now_s() - t0;
            if (memcmp(x, y, nx * sizeof *x)) {
                fprintf(stderr, "API values differ\n");
                return 1;
            }
        }
        printf("rep %d: transport local %.3f s (%.2f GB/s) remote %.3f s (%.2f GB/s); "
               "API local %.3f s (%.2f GB/s) remote %.3f s (%.2f GB/s)\n", i, tl[i],
               n / tl[i] / 1e9, tr[i], n / tr[i] / 1e9, al[i], nx * 8 / al[i] / 1e9, ar[i],
               nx * 8 / ar[i] / 1e9);
    }
    qsort(tl, (size_t)reps, sizeof tl[0], cmp_d);
    qsort(tr, (size_t)reps, sizeof tr[0], cmp_d);
    qsort(al, (size_t)reps, sizeof al[0], cmp_d);
    qsort(ar, (size_t)reps, sizeof ar[0], cmp_d);
    printf("transport local : median %.2f GB/s, best %.2f GB/s\n", n / tl[reps / 2] / 1e9,
           n / tl[0] / 1e9);
    printf("transport remote: median %.2f GB/s, best %.2f GB/s (%.0f%% of local, median)\n",
           n / tr[reps / 2] / 1e9, n / tr[0] / 1e9, 100.0 * tl[reps / 2] / tr[reps / 2]);
    double nb = (double)nx * 8;
    printf("API local       : median %.2f GB/s, best %.2f GB/s\n", nb / al[reps / 2] / 1e9,
           nb / al[0] / 1e9);
    printf("API remote      : median %.2f GB/s, best %.2f GB/s (%.0f%% of local, median)\n",
           nb / ar[reps / 2] / 1e9, nb / ar[0] / 1e9, 100.0 * al[reps / 2] / ar[reps / 2]);
    gbp_remote_close(r);
    kill(pid, SIGTERM);
    waitpid(pid, NULL, 0);
    free(buf);
    free(chk);
    free(x);
    free(y);
    return 0;
}
