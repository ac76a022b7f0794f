/* Fork-join over an atomic task counter: each worker takes the next task index until none is
 * left. The caller is worker 0; workers 1 .. n-1 are threads created for this call and joined
 * before it returns, so no state outlives the call and nothing is shared between calls. */
#include "pool.h"

#include <pthread.h>
#include <stdatomic.h>
#include <unistd.h>

typedef struct pool_run {
    atomic_size_t next;
    size_t ntasks;
    void (*fn)(void *ctx, size_t task, int worker);
    void *ctx;
} pool_run;

typedef struct pool_worker {
    pool_run *run;
    int id;
} pool_worker;

static void drain(pool_run *r, int id)
{
    for (;;) {
        size_t t = atomic_fetch_add(&r->next, 1);
        if (t >= r->ntasks) return;
        r->fn(r->ctx, t, id);
    }
}

static void *worker_main(void *arg)
{
    pool_worker *w = arg;
    drain(w->run, w->id);
    return NULL;
}

int gbp_pool_workers(int threads, size_t ntasks)
{
    long n = threads;
    if (n <= 0) {
        n = sysconf(_SC_NPROCESSORS_ONLN);
        if (n < 1) n = 1;
    }
    if (n > 1024) n = 1024;
    if ((size_t)n > ntasks) n = ntasks ? (long)ntasks : 1;
    return (int)n;
}

#define GBP_POOL_MAX 1024

void gbp_pool_run(int workers, size_t ntasks, void (*fn)(void *ctx, size_t task, int worker),
                  void *ctx)
{
    pool_run r;
    atomic_init(&r.next, 0);
    r.ntasks = ntasks;
    r.fn = fn;
    r.ctx = ctx;
    if (workers > GBP_POOL_MAX) workers = GBP_POOL_MAX;
    if (workers <= 1 || ntasks <= 1) {
        drain(&r, 0);
        return;
    }
    pthread_t tid[GBP_POOL_MAX];
    pool_worker w[GBP_POOL_MAX];
    int started = 0;
    for (int i = 1; i < workers; i++) {
        w[i].run = &r;
        w[i].id = i;
        if (pthread_create(&tid[i], NULL, worker_main, &w[i]) != 0) break;
        started = i;
    }
    drain(&r, 0);
    for (int i = 1; i <= started; i++) pthread_join(tid[i], NULL);
}
