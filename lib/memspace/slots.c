/* Pinned slots: the pool of one context (allocated at its first device transfer, taken by the
 * I/O threads and by the stage) and the process-wide cache that keeps the slots of closed files
 * for the next one. */
#include "memspace/slots.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>

#include "memspace/ioq.h"
#include "memspace/mem_ctx.h"

/* ---- the process-wide cache of pinned slots -------------------------------------------------- */
/* Pinning costs about 0.3 ms per MiB on the H200 machine (the pages are faulted in, zeroed and
 * locked): a 256 MiB pool took 70-78 ms, as long as writing 1.3 GB into the page cache. So the
 * slots of a closed file are not unpinned but kept, up to GPUBP_POOL_CACHE_MIB (default 1024;
 * 0 disables the cache), and the next file of the process with the same backend and slot size
 * takes them. Only for CUDA, whose pinning is what costs; the simulated device uses it when a
 * test asks (gbp_mem_pool_cache_sim). */
#define GBP_CACHE_ENTRIES 256
typedef struct cached_slot {
    const gbp_devops *ops;
    size_t bytes;
    uint8_t *buf;
} cached_slot;
static pthread_mutex_t cache_mu = PTHREAD_MUTEX_INITIALIZER;
static cached_slot cache[GBP_CACHE_ENTRIES];
static int ncache;
static size_t cache_bytes;
static atomic_int cache_sim;

void gbp_mem_pool_cache_sim(int on) { atomic_store(&cache_sim, on); }

/* What the cache holds is unpinned at exit (atexit, registered at the first slot kept: after the
 * CUDA runtime registered its own teardown, so this runs before it), so that leak checkers
 * (compute-sanitizer --leak-check full, valgrind) see every registration released. */
static pthread_once_t cache_exit_once = PTHREAD_ONCE_INIT;
static void cache_at_exit(void) { gbp_mem_pool_cache_trim(); }
static void cache_register_exit(void) { (void)atexit(cache_at_exit); }

static size_t cache_limit(void)
{
    const char *v = getenv("GPUBP_POOL_CACHE_MIB");
    if (!v || !*v) return (size_t)1024 << 20;
    char *end;
    unsigned long long mib = strtoull(v, &end, 10);
    if (*end || mib > ((size_t)-1 >> 20)) return (size_t)1024 << 20;
    return (size_t)mib << 20;
}

static int caches(const gbp_mem *m)
{
    return m->ops == gbp_cuda_ops() || (m->ops == gbp_sim_ops() && atomic_load(&cache_sim));
}

static int slot_alloc(gbp_mem *m, uint8_t **buf)
{
    if (caches(m)) {
        pthread_mutex_lock(&cache_mu);
        for (int i = ncache - 1; i >= 0; i--) {
            if (cache[i].ops != m->ops || cache[i].bytes != m->slot_alloc) continue;
            *buf = cache[i].buf;
            cache_bytes -= cache[i].bytes;
            cache[i] = cache[--ncache];
            pthread_mutex_unlock(&cache_mu);
            return GPUBP_OK;
        }
        pthread_mutex_unlock(&cache_mu);
    }
    return m->ops->host_alloc(m->dctx, (void **)buf, m->slot_alloc);
}

void gbp_slots_free(gbp_mem *m, uint8_t *buf)
{
    if (!buf) return;
    if (caches(m)) {
        size_t limit = cache_limit();
        pthread_mutex_lock(&cache_mu);
        /* room: drop slots of other sizes first (an older configuration), then refuse */
        for (int i = 0; i < ncache && cache_bytes + m->slot_alloc > limit; i++) {
            if (cache[i].bytes == m->slot_alloc && cache[i].ops == m->ops) continue;
            cache[i].ops->host_free(NULL, cache[i].buf, cache[i].bytes);
            cache_bytes -= cache[i].bytes;
            cache[i--] = cache[--ncache];
        }
        if (ncache < GBP_CACHE_ENTRIES && cache_bytes + m->slot_alloc <= limit) {
            pthread_once(&cache_exit_once, cache_register_exit);
            cache[ncache++] = (cached_slot){m->ops, m->slot_alloc, buf};
            cache_bytes += m->slot_alloc;
            pthread_mutex_unlock(&cache_mu);
            return;
        }
        pthread_mutex_unlock(&cache_mu);
    }
    m->ops->host_free(m->dctx, buf, m->slot_alloc);
}

void gbp_mem_pool_cache_trim(void)
{
    pthread_mutex_lock(&cache_mu);
    for (int i = 0; i < ncache; i++) cache[i].ops->host_free(NULL, cache[i].buf, cache[i].bytes);
    ncache = 0;
    cache_bytes = 0;
    pthread_mutex_unlock(&cache_mu);
}

size_t gbp_mem_pool_cache_bytes(void)
{
    pthread_mutex_lock(&cache_mu);
    size_t n = cache_bytes;
    pthread_mutex_unlock(&cache_mu);
    return n;
}

static int pool_alloc(gbp_mem *m)
{
    GBP_FORWARD_IF_ERROR(gbp_ioq_open(m));
    int nslots = gbp_params_pool_slots(&m->params);
    m->slot_bytes = m->params.chunk_bytes ? m->params.chunk_bytes : (size_t)16 << 20;
    m->slot_alloc = m->slot_bytes + (m->params.direct_io ? 2 * GBP_DIRECT_ALIGN : 0);
    /* the slot table first, its count after: nothing may walk a table that does not exist */
    if (!m->slots) m->slots = gbp_calloc((size_t)nslots, sizeof *m->slots);
    if (!m->slots) return gbp_error(GPUBP_ERR_NOMEM, 0, "out of memory (staging pool)");
    m->nslots = nslots;
    m->piece = m->params.piece_bytes ? m->params.piece_bytes : (size_t)4 << 20;
    if (m->piece > m->slot_bytes) m->piece = m->slot_bytes;
    m->npev = (int)((m->slot_bytes + m->piece - 1) / m->piece);
    for (int i = 0; i < m->nslots; i++) {
        slot *s = &m->slots[i];
        if (!s->buf) GBP_FORWARD_IF_ERROR(slot_alloc(m, &s->buf));
        if (!s->ev) GBP_FORWARD_IF_ERROR(m->ops->event_create(m->dctx, &s->ev));
        if (m->npev > 1 && !s->pev && !(s->pev = gbp_calloc((size_t)m->npev, sizeof *s->pev)))
            return gbp_error(GPUBP_ERR_NOMEM, 0, "out of memory (staging pool)");
        for (int k = 0; m->npev > 1 && k < m->npev; k++)
            if (!s->pev[k]) GBP_FORWARD_IF_ERROR(m->ops->event_create(m->dctx, &s->pev[k]));
    }
    if (!m->misc_ev) GBP_FORWARD_IF_ERROR(m->ops->event_create(m->dctx, &m->misc_ev));
    m->pool_ready = 1;
    return GPUBP_OK;
}

/* The pinned pool and its events, once per file at the first device transfer. */
int gbp_slots_pool_open(gbp_mem *m)
{
    if (m->pool_ready) return GPUBP_OK;
    if (!gbp_memctx_dev_open(m)) return gbp_memctx_unsupported(m);
    double t0 = gbp_now_s();
    int rc = pool_alloc(m);
    m->t_pool += gbp_now_s() - t0;
    return rc;
}

/* Takes slot next mod N, waiting until it is free and copies out of it have completed. */
int gbp_slots_acquire(gbp_mem *m, int *out)
{
    pthread_mutex_lock(&m->lock);
    int i = m->next_slot;
    double t0 = m->stats && m->slots[i].busy ? gbp_now_s() : 0;
    while (m->slots[i].busy) pthread_cond_wait(&m->cv, &m->lock);
    if (t0 > 0) m->t_slot += gbp_now_s() - t0;
    m->next_slot = (i + 1) % m->nslots;
    int pending = m->slots[i].ev_pending;
    m->slots[i].ev_pending = 0;
    m->slots[i].busy = 1;
    pthread_mutex_unlock(&m->lock);
    if (pending) {
        int rc = m->ops->event_wait(m->dctx, m->slots[i].ev);
        if (rc < 0) {
            gbp_memctx_keep_error(m, rc);
            pthread_mutex_lock(&m->lock);
            m->slots[i].busy = 0;
            pthread_mutex_unlock(&m->lock);
            return rc;
        }
    }
    *out = i;
    return GPUBP_OK;
}

void gbp_slots_release(gbp_mem *m, int i)
{
    pthread_mutex_lock(&m->lock);
    m->slots[i].busy = 0;
    pthread_cond_broadcast(&m->cv);
    pthread_mutex_unlock(&m->lock);
}
