/* The worker pool of lib/compress: run ntasks independent tasks on up to `workers` threads, the
 * calling thread being worker 0 and the others taken from a process-wide pool of threads that
 * is created on demand and kept (a call with one task or one worker creates none). */
#ifndef GBP_POOL_H
#define GBP_POOL_H

#include <stddef.h>
#include <stdint.h>

/* Threads a call with `threads` (0 = all online cores) and ntasks tasks uses: 1 .. ntasks. */
int gbp_pool_workers(int threads, size_t ntasks);

/* Calls fn(ctx, task, worker) once for every task in [0, ntasks), tasks taken in increasing order
 * by `workers` threads (worker in [0, workers)), and returns when all have returned. If a thread
 * cannot be created the remaining workers do its share: the set of calls is the same. fn must
 * not fail silently: it records its own errors in ctx. */
void gbp_pool_run(int workers, size_t ntasks, void (*fn)(void *ctx, size_t task, int worker),
                  void *ctx);

/* memcpy of n bytes on up to `threads` workers (0 = all cores), in parts of 4 MiB. */
void gbp_pool_copy(void *dst, const void *src, size_t n, int threads);

#endif /* GBP_POOL_H */
