/* gpubp-bench-sim: gpubp-bench over the simulated device (no GPU): bench_dev.h implemented with
 * the simulated device's memory (gbp_sim_alloc, host memory that the library's "device=simulated"
 * backend counts as device memory), so that the staging pipeline's job counts and waits
 * (GPUBP_MEM_STATS=1) can be looked at on any machine; its rates say nothing about a GPU.
 *   gpubp-bench-sim --dir D --mib-per-step N --steps S --blocks B --mem gpu \
 *                   --params device=simulated[,...] [--vars V] [--repeat R] [--baseline]
 * "Copies" are memcpy on the calling thread; pinned memory is page-aligned heap memory. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "bench/bench_dev.h"
#include "bench/bench_util.h"
#include "memspace/simdev.h"

int bench_dev_init(const char **why)
{
    (void)why;
    return 1;
}
void *bench_dev_alloc(size_t bytes) { return gbp_sim_alloc(bytes); }
void bench_dev_free(void *p) { gbp_sim_free(p); }

int bench_dev_fill(double *p, size_t n, double salt)
{
    for (size_t i = 0; i < n; i++) p[i] = (double)i + salt;
    return 0;
}

long bench_dev_check(const double *p, size_t n, double salt)
{
    long bad = 0;
    for (size_t i = 0; i < n; i++) bad += p[i] != (double)i + salt;
    return bad;
}

void *bench_pinned_alloc(size_t bytes)
{
    void *p = NULL;
    return posix_memalign(&p, 4096, bytes ? bytes : 1) ? NULL : p;
}
void bench_pinned_free(void *p) { free(p); }

double bench_copy_GBps(int d2h, size_t total, size_t chunk)
{
    (void)d2h;
    uint8_t *a = malloc(chunk), *b = malloc(chunk);
    double gbps = -1;
    if (a && b) {
        memset(a, 1, chunk);
        memset(b, 0, chunk);
        double t0 = bench_now();
        for (size_t done = 0; done < total; done += chunk) memcpy(b, a, chunk);
        gbps = (double)total / (bench_now() - t0) / 1e9;
    }
    free(a);
    free(b);
    return gbps;
}

/* streams: the copies run on the caller's thread, so a stream is only a token */
static char stream_token;
void *bench_stream_create(void) { return &stream_token; }
void bench_stream_destroy(void *s) { (void)s; }
int bench_d2h_async(void *s, void *host, const void *dev, size_t n)
{
    (void)s;
    memcpy(host, dev, n);
    return 0;
}
int bench_stream_wait(void *s)
{
    (void)s;
    return 0;
}

int bench_dev_upload(void *dev, const void *host, size_t n)
{
    memcpy(dev, host, n);
    return 0;
}
int bench_dev_download(void *host, const void *dev, size_t n)
{
    memcpy(host, dev, n);
    return 0;
}
