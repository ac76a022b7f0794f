/* The simulated device: a registry of "device" allocations (so that pointers can be told apart),
 * and per context a worker thread that runs queued copies and reductions in order, as a CUDA
 * stream would. Events are sequence numbers: recording one notes the last queued operation,
 * waiting for it waits until the worker has completed that operation. The first failure of the
 * stream is kept (with its message, to be re-raised on the waiting thread) until sync reports it. */
#include "memspace/simdev.h"

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "memspace/devops.h"

#define SIM_ERR_COPY 700 /* native code of an injected failure (cudaErrorIllegalAddress's value) */
#define SIM_ERR_QUEUE 1  /* native code of an injected refusal (cudaErrorInvalidValue's value) */

/* ---- hooks and counters ------------------------------------------------------------------- */
static atomic_uint sim_delay_us;
static atomic_long sim_fail_copy = -1;
static atomic_long sim_fail_pinned = -1;
static atomic_long sim_fail_queue = -1;
static atomic_long sim_fail_record = -1;
static atomic_long sim_fail_io = -1; /* the pipeline's pwrites and preads, any backend */
static atomic_int sim_hold;
static atomic_long st_copies, st_reductions, st_fences, st_signals, st_pinned_live, st_hazards;
static atomic_ullong st_bytes;
static atomic_size_t st_pinned_bytes;
/* the threads that queue copies: a number each (1 …, on first use), a bit each in st_copy_tids */
static atomic_int sim_next_tid;
static _Thread_local int sim_tid;
static atomic_ullong st_copy_tids;
static atomic_long st_copies_behind_own;

void gbp_sim_set_delay_us(unsigned us) { atomic_store(&sim_delay_us, us); }
void gbp_sim_fail_copy_after(long n) { atomic_store(&sim_fail_copy, n); }
void gbp_sim_fail_pinned_alloc_after(long n) { atomic_store(&sim_fail_pinned, n); }
void gbp_sim_fail_queue_after(long n) { atomic_store(&sim_fail_queue, n); }
void gbp_sim_fail_record_after(long n) { atomic_store(&sim_fail_record, n); }
void gbp_sim_fail_io_after(long n) { atomic_store(&sim_fail_io, n); }
static void wake_all_contexts(void);
/* Releasing the hold wakes every context's worker: a held worker waits on its condition
 * variable, not on a clock (a timed poll on CLOCK_REALTIME would sleep as long as the wall clock
 * was set back). */
void gbp_sim_hold(int on)
{
    atomic_store(&sim_hold, on != 0);
    if (!on) wake_all_contexts();
}

static int countdown_hits(atomic_long *c)
{
    long v = atomic_load(c);
    while (v >= 0) {
        if (atomic_compare_exchange_weak(c, &v, v - 1)) return v == 0;
    }
    return 0;
}

static atomic_int sim_hold_io;
static pthread_mutex_t hold_io_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t hold_io_cv = PTHREAD_COND_INITIALIZER;

void gbp_sim_hold_io(int on)
{
    pthread_mutex_lock(&hold_io_lock);
    atomic_store(&sim_hold_io, on != 0);
    if (!on) pthread_cond_broadcast(&hold_io_cv);
    pthread_mutex_unlock(&hold_io_lock);
}

int gbp_sim_io_fail_now(void)
{
    if (atomic_load(&sim_hold_io)) {
        pthread_mutex_lock(&hold_io_lock);
        while (atomic_load(&sim_hold_io)) pthread_cond_wait(&hold_io_cv, &hold_io_lock);
        pthread_mutex_unlock(&hold_io_lock);
    }
    return countdown_hits(&sim_fail_io);
}

void gbp_sim_get_stats(gbp_sim_stats *s)
{
    s->copies = atomic_load(&st_copies);
    s->reductions = atomic_load(&st_reductions);
    s->bytes = atomic_load(&st_bytes);
    s->fences = atomic_load(&st_fences);
    s->signals = atomic_load(&st_signals);
    s->pinned_live = atomic_load(&st_pinned_live);
    s->pinned_bytes = atomic_load(&st_pinned_bytes);
    s->hazards = atomic_load(&st_hazards);
    s->copy_threads = __builtin_popcountll(atomic_load(&st_copy_tids));
    s->copies_behind_own = atomic_load(&st_copies_behind_own);
}

void gbp_sim_reset(void)
{
    atomic_store(&sim_delay_us, 0);
    atomic_store(&sim_fail_copy, -1);
    atomic_store(&sim_fail_pinned, -1);
    atomic_store(&sim_fail_queue, -1);
    atomic_store(&sim_fail_record, -1);
    atomic_store(&st_copies, 0);
    atomic_store(&st_reductions, 0);
    atomic_store(&st_bytes, 0);
    atomic_store(&st_fences, 0);
    atomic_store(&st_hazards, 0);
    atomic_store(&st_signals, 0);
    atomic_store(&st_copy_tids, 0);
    atomic_store(&st_copies_behind_own, 0);
    gbp_sim_hold(0);
    gbp_sim_hold_io(0);
}

/* ---- the registry of device allocations ----------------------------------------------------- */
typedef struct sim_range {
    uintptr_t lo, hi;
} sim_range;

static pthread_mutex_t reg_lock = PTHREAD_MUTEX_INITIALIZER;
static sim_range *reg;
static size_t reg_n, reg_cap;

void *gbp_sim_alloc(size_t n)
{
    void *p = gbp_malloc(n ? n : 1);
    if (!p) return NULL;
    pthread_mutex_lock(&reg_lock);
    if (reg_n == reg_cap) {
        size_t cap = reg_cap ? reg_cap * 2 : 16;
        sim_range *r = gbp_realloc(reg, cap * sizeof *r);
        if (!r) {
            pthread_mutex_unlock(&reg_lock);
            gbp_free(p);
            return NULL;
        }
        reg = r;
        reg_cap = cap;
    }
    reg[reg_n].lo = (uintptr_t)p;
    reg[reg_n].hi = (uintptr_t)p + (n ? n : 1);
    reg_n++;
    pthread_mutex_unlock(&reg_lock);
    return p;
}

void gbp_sim_free(void *p)
{
    if (!p) return;
    pthread_mutex_lock(&reg_lock);
    for (size_t i = 0; i < reg_n; i++) {
        if (reg[i].lo == (uintptr_t)p) {
            reg[i] = reg[--reg_n];
            break;
        }
    }
    if (reg_n == 0) {
        gbp_free(reg);
        reg = NULL;
        reg_cap = 0;
    }
    pthread_mutex_unlock(&reg_lock);
    gbp_free(p);
}

static int is_device(const void *ptr)
{
    uintptr_t a = (uintptr_t)ptr;
    int found = 0;
    pthread_mutex_lock(&reg_lock);
    for (size_t i = 0; i < reg_n && !found; i++) found = a >= reg[i].lo && a < reg[i].hi;
    pthread_mutex_unlock(&reg_lock);
    return found;
}

/* ---- the stream ----------------------------------------------------------------------------- */
typedef enum op_kind { OP_COPY, OP_MM_BEGIN, OP_MM_REGION, OP_MM_END } op_kind;

typedef struct sim_op {
    op_kind kind;
    int type;
    gbp_copy3d c; /* OP_COPY; OP_MM_REGION uses src, width, height, depth, spitch, sslice */
    void *out;    /* OP_MM_END */
    int tid;      /* OP_COPY: the queuing thread's number (sim_tid) */
    struct sim_op *next;
} sim_op;

typedef struct sim_ctx {
    pthread_mutex_t lock;
    pthread_cond_t cv;
    pthread_t worker;
    sim_op *head, *tail;
    sim_op *running;       /* taken by the worker, not complete yet */
    uint64_t queued, done; /* sequence numbers */
    int stop;
    int err;             /* first failure not yet reported by sync */
    int err_native;
    uint64_t err_seq;
    char err_msg[256];
    /* the reduction accumulator (touched by the worker only) */
    unsigned char acc_min[16], acc_max[16];
    int acc_have;
    void *user_stream;
    struct sim_ctx *next_ctx; /* the list of open contexts (ctx_lock) */
} sim_ctx;

/* The open contexts, so that gbp_sim_hold(0) can wake their workers. */
static pthread_mutex_t ctx_lock = PTHREAD_MUTEX_INITIALIZER;
static sim_ctx *ctx_list;

static void wake_all_contexts(void)
{
    pthread_mutex_lock(&ctx_lock);
    for (sim_ctx *s = ctx_list; s; s = s->next_ctx) {
        pthread_mutex_lock(&s->lock);
        pthread_cond_broadcast(&s->cv);
        pthread_mutex_unlock(&s->lock);
    }
    pthread_mutex_unlock(&ctx_lock);
}

typedef struct sim_event {
    uint64_t target;
} sim_event;

static void sleep_us(unsigned us)
{
    if (!us) return;
    struct timespec ts = {us / 1000000u, (long)(us % 1000000u) * 1000L};
    while (nanosleep(&ts, &ts) < 0 && errno == EINTR) {}
}

/* Runs a copy; returns 0, or 1 when an injected failure stopped it halfway. */
static int run_copy(const gbp_copy3d *c)
{
    size_t rows = c->height * c->depth, half = rows / 2, r = 0;
    int fail = countdown_hits(&sim_fail_copy);
    for (size_t z = 0; z < c->depth; z++) {
        for (size_t y = 0; y < c->height; y++, r++) {
            if (fail && r >= half) return 1;
            memcpy((unsigned char *)c->dst + z * c->dslice + y * c->dpitch,
                   (const unsigned char *)c->src + z * c->sslice + y * c->spitch, c->width);
        }
    }
    atomic_fetch_add(&st_copies, 1);
    atomic_fetch_add(&st_bytes, (unsigned long long)(c->width * rows));
    return fail;
}

static void run_region(sim_ctx *s, const sim_op *op)
{
    size_t el = gbp_type_size(op->type);
    for (size_t z = 0; z < op->c.depth; z++) {
        for (size_t y = 0; y < op->c.height; y++) {
            const unsigned char *row =
                (const unsigned char *)op->c.src + z * op->c.sslice + y * op->c.spitch;
            gbp_minmax(op->type, row, op->c.width / el, s->acc_min, s->acc_max, s->acc_have);
            s->acc_have = s->acc_have || op->c.width > 0;
        }
    }
}

static void *worker_main(void *arg)
{
    sim_ctx *s = arg;
    pthread_mutex_lock(&s->lock);
    for (;;) {
        /* held (gbp_sim_hold): nothing runs until the hold is released, which wakes us */
        while (!s->stop && (!s->head || atomic_load(&sim_hold))) pthread_cond_wait(&s->cv, &s->lock);
        if (!s->head) break; /* stop, and the queue is drained */
        sim_op *op = s->head;
        s->head = op->next;
        if (!s->head) s->tail = NULL;
        s->running = op;
        int failed_before = s->err != 0;
        pthread_mutex_unlock(&s->lock);

        sleep_us(atomic_load(&sim_delay_us));
        int failed = 0;
        if (!failed_before) { /* like CUDA after a fault, work after a failure does not run */
            switch (op->kind) {
            case OP_COPY: failed = run_copy(&op->c); break;
            case OP_MM_BEGIN: s->acc_have = 0; break;
            case OP_MM_REGION: run_region(s, op); break;
            case OP_MM_END: {
                size_t el = gbp_type_size(op->type);
                memcpy(op->out, s->acc_min, el);
                memcpy((unsigned char *)op->out + el, s->acc_max, el);
                atomic_fetch_add(&st_reductions, 1);
                break;
            }
            }
        }
        pthread_mutex_lock(&s->lock);
        s->running = NULL;
        gbp_free(op);
        s->done++;
        if (failed && !s->err) {
            s->err = GPUBP_ERR_DEVICE;
            s->err_native = SIM_ERR_COPY;
            s->err_seq = s->done;
            snprintf(s->err_msg, sizeof s->err_msg,
                     "simulated device: copy %llu failed (injected failure)",
                     (unsigned long long)s->done);
        }
        pthread_cond_broadcast(&s->cv);
    }
    pthread_mutex_unlock(&s->lock);
    return NULL;
}

static int enqueue(sim_ctx *s, sim_op *op)
{
    op->next = NULL;
    pthread_mutex_lock(&s->lock);
    if (s->tail) s->tail->next = op;
    else s->head = op;
    s->tail = op;
    s->queued++;
    pthread_cond_broadcast(&s->cv);
    pthread_mutex_unlock(&s->lock);
    return GPUBP_OK;
}

static sim_op *new_op(op_kind k)
{
    sim_op *op = gbp_calloc(1, sizeof *op);
    if (op) op->kind = k;
    return op;
}

static void unlist_context(sim_ctx *s)
{
    pthread_mutex_lock(&ctx_lock);
    for (sim_ctx **p = &ctx_list; *p; p = &(*p)->next_ctx) {
        if (*p == s) {
            *p = s->next_ctx;
            break;
        }
    }
    pthread_mutex_unlock(&ctx_lock);
}

static int sim_open(void **out)
{
    sim_ctx *s = gbp_calloc(1, sizeof *s);
    if (!s) return gbp_error(GPUBP_ERR_NOMEM, 0, "out of memory (simulated device)");
    pthread_mutex_init(&s->lock, NULL);
    pthread_cond_init(&s->cv, NULL);
    /* listed before its worker starts: a release of the hold from then on wakes it */
    pthread_mutex_lock(&ctx_lock);
    s->next_ctx = ctx_list;
    ctx_list = s;
    pthread_mutex_unlock(&ctx_lock);
    int e = pthread_create(&s->worker, NULL, worker_main, s);
    if (e) {
        unlist_context(s);
        pthread_cond_destroy(&s->cv);
        pthread_mutex_destroy(&s->lock);
        gbp_free(s);
        return gbp_error(GPUBP_ERR_IO, e, "simulated device: cannot start its thread: %s",
                         strerror(e));
    }
    *out = s;
    return GPUBP_OK;
}

static void sim_close(void *ctx)
{
    sim_ctx *s = ctx;
    if (!s) return;
    unlist_context(s);
    pthread_mutex_lock(&s->lock);
    s->stop = 1;
    pthread_cond_broadcast(&s->cv);
    pthread_mutex_unlock(&s->lock);
    pthread_join(s->worker, NULL);
    pthread_cond_destroy(&s->cv);
    pthread_mutex_destroy(&s->lock);
    gbp_free(s);
}

static int sim_bind(void *ctx) { (void)ctx; return GPUBP_OK; }

static int sim_query(void *ctx, const void *ptr, gpubp_memory_space *space)
{
    (void)ctx;
    *space = ptr && is_device(ptr) ? GPUBP_MEM_GPU : GPUBP_MEM_HOST;
    return GPUBP_OK;
}

static int sim_host_alloc(void *ctx, void **p, size_t n)
{
    (void)ctx;
    if (countdown_hits(&sim_fail_pinned))
        return gbp_error(GPUBP_ERR_NOMEM, 0,
                         "simulated device: pinned allocation of %zu bytes failed (injected)", n);
    void *q = NULL;
    int e = posix_memalign(&q, 4096, n ? n : 1);
    if (e) return gbp_error(GPUBP_ERR_NOMEM, e, "pinned allocation of %zu bytes failed", n);
    atomic_fetch_add(&st_pinned_live, 1);
    atomic_fetch_add(&st_pinned_bytes, n);
    *p = q;
    return GPUBP_OK;
}

static void sim_host_free(void *ctx, void *p, size_t n)
{
    (void)ctx;
    if (!p) return;
    atomic_fetch_sub(&st_pinned_live, 1);
    atomic_fetch_sub(&st_pinned_bytes, n);
    free(p); /* from posix_memalign in sim_host_alloc: the pinned allocator of this backend */
}

static int sim_dev_alloc(void *ctx, void **p, size_t n)
{
    (void)ctx;
    *p = gbp_sim_alloc(n);
    return *p ? GPUBP_OK : gbp_error(GPUBP_ERR_NOMEM, 0, "simulated device: out of memory");
}

static void sim_dev_free(void *ctx, void *p) { (void)ctx; gbp_sim_free(p); }

static int sim_copy_async(void *ctx, const gbp_copy3d *c)
{
    if (countdown_hits(&sim_fail_queue))
        return gbp_error(GPUBP_ERR_DEVICE, SIM_ERR_QUEUE,
                         "simulated device: copy refused (injected failure)");
    sim_op *op = new_op(OP_COPY);
    if (!op) return gbp_error(GPUBP_ERR_NOMEM, 0, "out of memory (simulated copy)");
    op->c = *c;
    if (!sim_tid) sim_tid = atomic_fetch_add(&sim_next_tid, 1) + 1;
    op->tid = sim_tid;
    atomic_fetch_or(&st_copy_tids, 1ull << (sim_tid % 64));
    /* a copy queued while one this thread queued before has not completed: the thread went on
     * (read its next piece) while its copy was in flight */
    sim_ctx *sc = ctx;
    pthread_mutex_lock(&sc->lock);
    int behind = sc->running && sc->running->kind == OP_COPY && sc->running->tid == sim_tid;
    for (const sim_op *q = sc->head; q && !behind; q = q->next)
        behind = q->kind == OP_COPY && q->tid == sim_tid;
    pthread_mutex_unlock(&sc->lock);
    if (behind) atomic_fetch_add(&st_copies_behind_own, 1);
    return enqueue(ctx, op);
}

static int sim_mm_begin(void *ctx, int type)
{
    sim_op *op = new_op(OP_MM_BEGIN);
    if (!op) return gbp_error(GPUBP_ERR_NOMEM, 0, "out of memory (simulated reduction)");
    op->type = type;
    return enqueue(ctx, op);
}

static int sim_mm_region(void *ctx, int type, const void *dptr, size_t width, size_t height,
                         size_t depth, size_t pitch, size_t slice)
{
    sim_op *op = new_op(OP_MM_REGION);
    if (!op) return gbp_error(GPUBP_ERR_NOMEM, 0, "out of memory (simulated reduction)");
    op->type = type;
    op->c.src = dptr;
    op->c.width = width;
    op->c.height = height;
    op->c.depth = depth;
    op->c.spitch = pitch;
    op->c.sslice = slice;
    return enqueue(ctx, op);
}

static int sim_mm_end(void *ctx, int type, void *out)
{
    sim_op *op = new_op(OP_MM_END);
    if (!op) return gbp_error(GPUBP_ERR_NOMEM, 0, "out of memory (simulated reduction)");
    op->type = type;
    op->out = out;
    return enqueue(ctx, op);
}

static int sim_event_create(void *ctx, void **ev)
{
    (void)ctx;
    sim_event *e = gbp_calloc(1, sizeof *e);
    if (!e) return gbp_error(GPUBP_ERR_NOMEM, 0, "out of memory (simulated event)");
    *ev = e;
    return GPUBP_OK;
}

static void sim_event_destroy(void *ctx, void *ev) { (void)ctx; gbp_free(ev); }

static int sim_event_record(void *ctx, void *ev)
{
    if (countdown_hits(&sim_fail_record))
        return gbp_error(GPUBP_ERR_DEVICE, SIM_ERR_QUEUE,
                         "simulated device: event record refused (injected failure)");
    sim_ctx *s = ctx;
    sim_event *e = ev;
    pthread_mutex_lock(&s->lock);
    e->target = s->queued;
    pthread_mutex_unlock(&s->lock);
    return GPUBP_OK;
}

/* Waits until the worker completed sequence number `target`; re-raises a failure at or before it
 * on this thread. `clear` (sync) forgets the failure once reported. */
static int wait_seq(sim_ctx *s, uint64_t target, int clear)
{
    pthread_mutex_lock(&s->lock);
    while (s->done < target && !(s->err && s->err_seq <= target))
        pthread_cond_wait(&s->cv, &s->lock);
    int rc = GPUBP_OK;
    if (s->err && s->err_seq <= target) {
        rc = gbp_error(s->err, s->err_native, "%s", s->err_msg);
        if (clear) s->err = 0;
    }
    pthread_mutex_unlock(&s->lock);
    return rc;
}

static int sim_event_wait(void *ctx, void *ev)
{
    return wait_seq(ctx, ((sim_event *)ev)->target, 0);
}

static int sim_sync(void *ctx)
{
    sim_ctx *s = ctx;
    pthread_mutex_lock(&s->lock);
    uint64_t t = s->queued;
    pthread_mutex_unlock(&s->lock);
    /* wait for everything, even past a failure, so that no queued work touches buffers later */
    pthread_mutex_lock(&s->lock);
    while (s->done < t) pthread_cond_wait(&s->cv, &s->lock);
    pthread_mutex_unlock(&s->lock);
    return wait_seq(s, t, 1);
}

/* Whether the bytes a 3-D copy side touches (from p, rows `width` bytes) meet [lo, hi). */
static int side_meets(const void *p, const gbp_copy3d *c, size_t pitch, size_t slice,
                      uintptr_t lo, uintptr_t hi)
{
    if (c->width == 0 || c->height == 0 || c->depth == 0) return 0;
    uintptr_t a = (uintptr_t)p;
    uintptr_t e = a + (c->depth - 1) * (c->depth > 1 ? slice : 0) +
                  (c->height - 1) * (c->height > 1 ? pitch : 0) + c->width;
    return a < hi && lo < e;
}

static int op_meets(const sim_op *op, uintptr_t lo, uintptr_t hi, int reads)
{
    if (op->kind != OP_COPY) return 0;
    const gbp_copy3d *c = &op->c;
    return side_meets(c->dst, c, c->dpitch, c->dslice, lo, hi) ||
           (reads && side_meets(c->src, c, c->spitch, c->sslice, lo, hi));
}

static int sim_check_idle(void *ctx, const void *p, size_t n, int reads)
{
    sim_ctx *s = ctx;
    uintptr_t lo = (uintptr_t)p, hi = lo + n;
    pthread_mutex_lock(&s->lock);
    int hit = s->running && op_meets(s->running, lo, hi, reads);
    for (const sim_op *op = s->head; op && !hit; op = op->next) hit = op_meets(op, lo, hi, reads);
    pthread_mutex_unlock(&s->lock);
    if (!hit) return GPUBP_OK;
    atomic_fetch_add(&st_hazards, 1);
    return gbp_error(GPUBP_ERR_INTERNAL, 0, "simulated device: %zu bytes at %p are reused while "
                     "a copy %s them is still queued", n, p, reads ? "into or out of" : "into");
}

static int sim_set_user_stream(void *ctx, void *stream)
{
    sim_ctx *s = ctx;
    s->user_stream = stream;
    return GPUBP_OK;
}

static int sim_fence(void *ctx)
{
    sim_ctx *s = ctx;
    if (s->user_stream) atomic_fetch_add(&st_fences, 1);
    return GPUBP_OK;
}

static int sim_signal(void *ctx)
{
    sim_ctx *s = ctx;
    if (s->user_stream) atomic_fetch_add(&st_signals, 1);
    return GPUBP_OK;
}

static const gbp_devops sim_ops = {
    "simulated",
    sim_open, sim_close, sim_bind, NULL, sim_query,
    sim_host_alloc, sim_host_free, sim_dev_alloc, sim_dev_free,
    sim_copy_async,
    sim_mm_begin, sim_mm_region, sim_mm_end,
    sim_event_create, sim_event_destroy, sim_event_record, sim_event_wait,
    sim_sync,
    sim_set_user_stream, sim_fence, sim_signal,
    sim_check_idle,
};

const gbp_devops *gbp_sim_ops(void) { return &sim_ops; }

