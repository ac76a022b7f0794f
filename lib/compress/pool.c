/* A process-wide pool of worker threads serving fork-join jobs.
 *
 * A call puts its job (function, task count, worker limit) on a queue and works on it itself as
 * worker 0; idle pool threads join queued jobs that still have tasks and room for a worker
 * (getting ids 1, 2, ...) and take task indices from the job's atomic counter. When the caller
 * has run out of tasks it takes the job off the queue, so nobody else joins, and waits for the
 * workers that did join to finish their last task. Several callers can run jobs at once; the
 * threads are created on demand (up to the largest worker count asked for, at most
 * GBP_POOL_MAX) and then wait for work for the life of the process. If threads cannot be
 * created, fewer workers (at least the caller) do all the tasks: the set of calls is the same. */
#include "compress/pool.h"

#include <pthread.h>
#include <stdatomic.h>
#include <string.h>
#include <unistd.h>

#define GBP_POOL_MAX 1024

typedef struct pool_job {
    atomic_size_t next;
    size_t ntasks;
    void (*fn)(void *ctx, size_t task, int worker);
    void *ctx;
    int max_workers;
    int joined;             /* workers other than the caller that joined (ids 1..joined) */
    int active;             /* of those, still working */
    struct pool_job *qnext; /* queue link */
} pool_job;

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t work_cv = PTHREAD_COND_INITIALIZER; /* a job was queued */
static pthread_cond_t done_cv = PTHREAD_COND_INITIALIZER; /* a worker left a job */
static pool_job *queue;
static int nthreads, idle;

static void drain(pool_job *j, int id)
{
    for (;;) {
        size_t t = atomic_fetch_add(&j->next, 1);
        if (t >= j->ntasks) return;
        j->fn(j->ctx, t, id);
    }
}

/* A queued job that can take one more worker; under mu. */
static pool_job *joinable(void)
{
    for (pool_job *j = queue; j; j = j->qnext)
        if (j->joined + 1 < j->max_workers && atomic_load(&j->next) < j->ntasks) return j;
    return NULL;
}

static void *worker_main(void *arg)
{
    (void)arg;
    pthread_mutex_lock(&mu);
    for (;;) {
        pool_job *j;
        while (!(j = joinable())) {
            idle++;
            pthread_cond_wait(&work_cv, &mu);
            idle--;
        }
        int id = ++j->joined;
        j->active++;
        pthread_mutex_unlock(&mu);
        drain(j, id);
        pthread_mutex_lock(&mu);
        if (--j->active == 0) pthread_cond_broadcast(&done_cv);
    }
    return NULL;
}

int gbp_pool_workers(int threads, size_t ntasks)
{
    long n = threads;
    if (n <= 0) {
        n = sysconf(_SC_NPROCESSORS_ONLN);
        if (n < 1) n = 1;
    }
    if (n > GBP_POOL_MAX) n = GBP_POOL_MAX;
    if ((size_t)n > ntasks) n = ntasks ? (long)ntasks : 1;
    return (int)n;
}

void gbp_pool_run(int workers, size_t ntasks, void (*fn)(void *ctx, size_t task, int worker),
                  void *ctx)
{
    pool_job j;
    atomic_init(&j.next, 0);
    j.ntasks = ntasks;
    j.fn = fn;
    j.ctx = ctx;
    j.max_workers = workers > GBP_POOL_MAX ? GBP_POOL_MAX : workers;
    j.joined = 0;
    j.active = 0;
    j.qnext = NULL;
    if (j.max_workers <= 1 || ntasks <= 1) {
        drain(&j, 0);
        return;
    }
    pthread_mutex_lock(&mu);
    while (nthreads < j.max_workers - 1) { /* grow the pool to what this job can use */
        pthread_t tid;
        pthread_attr_t attr;
        int ok = pthread_attr_init(&attr) == 0;
        if (ok) pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
        ok = ok && pthread_create(&tid, &attr, worker_main, NULL) == 0;
        pthread_attr_destroy(&attr);
        if (!ok) break;
        nthreads++;
    }
    j.qnext = queue;
    queue = &j;
    if (idle > 0) pthread_cond_broadcast(&work_cv);
    pthread_mutex_unlock(&mu);

    drain(&j, 0);

    pthread_mutex_lock(&mu);
    for (pool_job **p = &queue; *p; p = &(*p)->qnext) /* no one joins from now on */
        if (*p == &j) {
            *p = j.qnext;
            break;
        }
    while (j.active > 0) pthread_cond_wait(&done_cv, &mu);
    pthread_mutex_unlock(&mu);
}

typedef struct copy_job {
    uint8_t *dst;
    const uint8_t *src;
    size_t n, part;
} copy_job;

static void copy_task(void *ctx, size_t task, int worker)
{
    (void)worker;
    copy_job *c = ctx;
    size_t off = task * c->part, len = c->n - off < c->part ? c->n - off : c->part;
    memcpy(c->dst + off, c->src + off, len);
}

#define COPY_PART ((size_t)4 << 20)

void gbp_pool_copy(void *dst, const void *src, size_t n, int threads)
{
    copy_job c = {dst, src, n, COPY_PART};
    size_t parts = n / COPY_PART + (n % COPY_PART != 0);
    int workers = gbp_pool_workers(threads, parts);
    if (parts <= 1 || workers <= 1) {
        if (n) memcpy(dst, src, n);
        return;
    }
    gbp_pool_run(workers, parts, copy_task, &c);
}
