/* gpubp-bench's device helpers: bench_cuda.cu with CUDA, bench_nocuda.c without (every call
 * then fails). Plain C interface so that gpubp_bench.c includes no CUDA header. */
#ifndef GPUBP_BENCH_DEV_H
#define GPUBP_BENCH_DEV_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* 1 when a CUDA device is usable; creates the context. Otherwise 0 and *why says why. */
int bench_dev_init(const char **why);
void *bench_dev_alloc(size_t bytes);            /* device memory, NULL on failure */
void bench_dev_free(void *p);
int bench_dev_fill(double *p, size_t n, double salt); /* p[i] = i + salt; 0 on success */
/* Counts the elements of p (n doubles) that differ from i + salt; -1 on a CUDA failure.
 * With stride/cols: only the first `cols` of every row of `stride` elements were written. */
long bench_dev_check(const double *p, size_t n, double salt);
void *bench_pinned_alloc(size_t bytes);
void bench_pinned_free(void *p);
/* Pinned <-> device copy bandwidth in GB/s: `total` bytes in copies of `chunk` bytes on one
 * stream, timed with events. d2h 1: device to host. */
double bench_copy_GBps(int d2h, size_t total, size_t chunk);
/* A stream of the calling thread (NULL on failure), a device-to-host copy queued on it, and the
 * wait for what is queued on it (0 on success): the hand-written device-to-file loop. */
void *bench_stream_create(void);
void bench_stream_destroy(void *s);
int bench_d2h_async(void *s, void *host, const void *dev, size_t n);
int bench_stream_wait(void *s);
/* Synchronous copies between host memory (pageable) and device memory; 0 on success. */
int bench_dev_upload(void *dev, const void *host, size_t n);
int bench_dev_download(void *host, const void *dev, size_t n);

#ifdef __cplusplus
}
#endif

#endif
