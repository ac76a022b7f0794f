/* A small fork-join pool for lib/compress: run ntasks independent tasks on up to `threads`
 * threads, the calling thread being worker 0. Threads live for one call; a call that has a single
 * task or a single worker runs inline without creating any. */
#ifndef GBP_POOL_H
#define GBP_POOL_H

#include <stddef.h>

/* Threads a call with `threads` (0 = all online cores) and ntasks tasks uses: 1 .. ntasks. */
int gbp_pool_workers(int threads, size_t ntasks);

/* Calls fn(ctx, task, worker) once for every task in [0, ntasks), tasks taken in increasing order
 * by `workers` threads (worker in [0, workers)), and returns when all have returned. If a thread
 * cannot be created the remaining workers do its share: the set of calls is the same. fn must
 * not fail silently: it records its own errors in ctx. */
void gbp_pool_run(int workers, size_t ntasks, void (*fn)(void *ctx, size_t task, int worker),
                  void *ctx);

#endif /* GBP_POOL_H */
