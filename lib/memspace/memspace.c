/* The memory-space context of one file: its public calls (open and close, device status and
 * detection, the user's stream, the waits and the commits, the footprint). Transfers are cut into
 * jobs in mem_write.c, mem_read.c and stage.c; mem_internal.h describes the pipeline behind
 * them. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "memspace/ioq.h"
#include "memspace/mem_ctx.h"
#include "memspace/mem_minmax.h"
#include "memspace/mem_dz.h"
#include "memspace/slots.h"

/* ---- GPUBP_MEM_STATS=trace: a timeline of one file's transfers, printed at close ---------
 * Each event is a span of host wall time: a phase of the GPU codec path (gbp_mem_dz_time), an
 * I/O job (the thread, the file descriptor, the bytes) or a wait of gbp_mem_sync. Kept in
 * memory (GBP_TRACE_MAX events at most, later ones dropped and counted), so that the tracing
 * itself does not slow the threads it watches; for measurements only (docs/parameters.md,
 * docs/compression.md "Per-phase times"). */
struct gbp_trace_ev {
    double t, dt;
    int kind, fd;
    uint64_t bytes;
};

void gbp_mem_trace_locked(gbp_mem *m, double t, double dt, int kind, int fd, uint64_t bytes)
{
    if (!m->captev) return;
    if (!m->tev && !(m->tev = gbp_malloc((size_t)m->captev * sizeof *m->tev))) return;
    if (m->ntev >= m->captev) {
        m->ntev++; /* counted, not kept */
        return;
    }
    m->tev[m->ntev++] = (struct gbp_trace_ev){t, dt, kind, fd, bytes};
}

void gbp_mem_trace(gbp_mem *m, double t, double dt, int kind, int fd, uint64_t bytes)
{
    if (!m->captev) return;
    pthread_mutex_lock(&m->lock);
    gbp_mem_trace_locked(m, t, dt, kind, fd, bytes);
    pthread_mutex_unlock(&m->lock);
}

static const char *gbp_trace_name(int kind)
{
    static const char *dz[] = {"dz_w_filter_code", "dz_w_frame", "dz_w_assemble", "dz_w_submit",
                               "dz_w_wait", "dz_w_finish", "dz_r_file", "dz_r_parse",
                               "dz_r_upload", "dz_r_decode", "dz_r_place", "dz_state",
                               "dz_close"};
    static const char *jobs[] = {"job_dev_write", "job_dev_read", "job_host_write",
                                 "job_host_read", "job_commit"};
    _Static_assert(sizeof dz / sizeof *dz == GBP_DZT_PHASES, "a name per phase");
    if (kind >= 0 && kind < (int)(sizeof dz / sizeof *dz)) return dz[kind];
    if (kind >= GBP_TRACE_JOB && kind <= GBP_TRACE_JOB + JOB_COMMIT)
        return jobs[kind - GBP_TRACE_JOB];
    return kind == GBP_TRACE_SYNC ? "sync_wait" : "?";
}

/* A wait for the pipeline that began at t0 (GPUBP_MEM_STATS: t0 read then): its time, its span. */
static void sync_time(gbp_mem *m, double t0)
{
    if (!m->stats) return;
    double dt = gbp_now_s() - t0;
    m->t_sync += dt;
    gbp_mem_trace(m, t0, dt, GBP_TRACE_SYNC, -1, 0);
}

static int trace_cmp(const void *a, const void *b)
{
    double x = ((const struct gbp_trace_ev *)a)->t, y = ((const struct gbp_trace_ev *)b)->t;
    return (x > y) - (x < y);
}

static void trace_report(gbp_mem *m)
{
    if (!m->tev) return;
    int n = m->ntev < m->captev ? m->ntev : m->captev;
    qsort(m->tev, (size_t)n, sizeof *m->tev, trace_cmp);
    fprintf(stderr, "gpubp-trace: %d events (%d dropped); start ms, duration ms, what, fd, "
            "bytes\n", n, m->ntev - n);
    for (int i = 0; i < n; i++) {
        const struct gbp_trace_ev *e = &m->tev[i];
        fprintf(stderr, "gpubp-trace: %9.3f %8.3f %s %d %llu\n", (e->t - m->tev[0].t) * 1e3,
                e->dt * 1e3, gbp_trace_name(e->kind), e->fd, (unsigned long long)e->bytes);
    }
    gbp_free(m->tev);
    m->tev = NULL;
}

int gbp_mem_open(gbp_mem **out, const gbp_params *params)
{
    gbp_mem *m = gbp_calloc(1, sizeof *m);
    if (!m) return gbp_error(GPUBP_ERR_NOMEM, 0, "out of memory");
    m->params = *params;
    m->ops = params->simulated_device ? gbp_sim_ops() : gbp_cuda_ops();
    const char *st = getenv("GPUBP_MEM_STATS");
    m->stats = st && *st && strcmp(st, "0") != 0;
    if (m->stats && !strcmp(st, "trace")) m->captev = GBP_TRACE_MAX;
    pthread_mutex_init(&m->lock, NULL);
    pthread_cond_init(&m->cv, NULL);
    *out = m;
    return GPUBP_OK;
}

void gbp_mem_close(gbp_mem *m)
{
    if (!m) return;
    if (m->pool_ready || m->threads_started) {
        (void)gbp_mem_sync(m); /* nothing may still write into freed slots */
        gbp_error_clear();
    }
    double t0 = gbp_now_s();
    gbp_ioq_stop(m);
    if (m->dctx) {
        for (int i = 0; m->slots && i < m->nslots; i++) {
            if (m->slots[i].ev) m->ops->event_destroy(m->dctx, m->slots[i].ev);
            for (int k = 0; m->slots[i].pev && k < m->npev; k++)
                if (m->slots[i].pev[k]) m->ops->event_destroy(m->dctx, m->slots[i].pev[k]);
            gbp_free(m->slots[i].pev);
            gbp_slots_free(m, m->slots[i].buf);
        }
        if (m->misc_ev) m->ops->event_destroy(m->dctx, m->misc_ev);
        gbp_mem_dz_free(m);
        for (mm_page *p = m->pages, *n; p; p = n) {
            n = p->next;
            m->ops->host_free(m->dctx, p->mem, GBP_MM_PAGE_ENTRIES * GBP_MM_ENTRY);
            gbp_free(p);
        }
        m->ops->close(m->dctx);
    }
    if (m->stats && (m->pool_ready || m->threads_started))
        fprintf(stderr, "gpubp-mem: dev_open_ms=%.2f pool_ms=%.2f close_ms=%.2f sync_wait_ms=%.2f "
                "slot_wait_ms=%.2f io_busy_ms=%.2f jobs=%ld threads=%d slots=%d chunk_MiB=%.1f\n",
                m->t_dev * 1e3, m->t_pool * 1e3, (gbp_now_s() - t0) * 1e3, m->t_sync * 1e3,
                m->t_slot * 1e3, m->t_io * 1e3, m->njobs, m->nthreads, m->nslots,
                (double)m->slot_bytes / 1048576.0);
    gbp_mem_dz_report(m);
    trace_report(m);
    for (int i = 0; i < m->ndfds; i++)
        if (m->dfds[i].dfd >= 0) close(m->dfds[i].dfd);
    gbp_free(m->slots);
    gbp_free(m->threads);
    gbp_free(m->wfd);
    gbp_free(m->args);
    gbp_free(m->queue);
    gbp_free(m->pend);
    gbp_free(m->bounce);
    pthread_cond_destroy(&m->cv);
    pthread_mutex_destroy(&m->lock);
    gbp_free(m);
}

int gbp_mem_device_status(gbp_mem *m)
{
    return gbp_memctx_dev_open(m) ? GPUBP_OK : gbp_memctx_unsupported(m);
}

int gbp_mem_has_device(const gbp_mem *m)
{
    /* the context is opened lazily; m is not const in spirit */
    return gbp_memctx_dev_open((gbp_mem *)m);
}

int gbp_mem_detect(gbp_mem *m, const void *ptr, gpubp_memory_space *space)
{
    *space = GPUBP_MEM_HOST;
    if (!ptr || !m->ops) return GPUBP_OK;
    if (m->dev_state == 0 && m->ops->present && !m->ops->present()) return GPUBP_OK;
    if (!gbp_memctx_dev_open(m)) return GPUBP_OK;
    return m->ops->query(m->dctx, ptr, space);
}

void gbp_mem_set_files(gbp_mem *m, int n)
{
    pthread_mutex_lock(&m->lock);
    m->nfiles = n > 0 ? n : 0;
    pthread_mutex_unlock(&m->lock);
}

int gbp_mem_set_stream(gbp_mem *m, void *stream)
{
    if (!gbp_memctx_dev_open(m)) return gbp_memctx_unsupported(m);
    GBP_FORWARD_IF_ERROR(m->ops->set_user_stream(m->dctx, stream));
    m->user_stream = stream;
    return GPUBP_OK;
}

int gbp_mem_wait_staged(gbp_mem *m)
{
    if (!m->pool_ready && !m->threads_started) return GPUBP_OK;
    double t0 = m->stats ? gbp_now_s() : 0;
    pthread_mutex_lock(&m->lock);
    while (m->unstaged > 0) pthread_cond_wait(&m->cv, &m->lock);
    pthread_mutex_unlock(&m->lock);
    /* the copies queued so far */
    if (m->pool_ready) gbp_memctx_keep_error(m, m->ops->sync(m->dctx));
    sync_time(m, t0);
    gbp_mem_minmax_deliver(m);
    return gbp_memctx_kept_error(m);
}

int gbp_mem_commit_async(gbp_mem *m, gbp_commit_fn fn, void *ctx, void (*free_ctx)(void *))
{
    int rc = gbp_ioq_open(m);
    pthread_mutex_lock(&m->lock);
    if (rc == GPUBP_OK && m->commit_pending)
        rc = gbp_error(GPUBP_ERR_INTERNAL, 0, "gbp_mem_commit_async: a commit is still queued");
    if (rc == GPUBP_OK) m->commit_pending = 1;
    pthread_mutex_unlock(&m->lock);
    if (rc != GPUBP_OK) {
        if (free_ctx) free_ctx(ctx);
        return rc;
    }
    job j;
    memset(&j, 0, sizeof j);
    j.kind = JOB_COMMIT;
    j.slot = -1;
    j.fd = -1;
    j.commit = fn;
    j.commit_ctx = ctx;
    j.commit_free = free_ctx;
    gbp_ioq_submit(m, &j);
    /* what is queued from now on belongs to the next commit */
    pthread_mutex_lock(&m->lock);
    m->epoch++;
    m->ep_failed[m->epoch & 1] = 0;
    pthread_mutex_unlock(&m->lock);
    return GPUBP_OK;
}

int gbp_mem_commit_wait(gbp_mem *m)
{
    pthread_mutex_lock(&m->lock);
    while (m->commit_pending) pthread_cond_wait(&m->cv, &m->lock);
    int rc = m->commit_rc, native = m->commit_native;
    char msg[sizeof m->commit_msg];
    memcpy(msg, m->commit_msg, sizeof msg);
    m->commit_rc = 0;
    m->commit_msg[0] = '\0';
    pthread_mutex_unlock(&m->lock);
    return rc ? gbp_error(rc, native, "%s", msg) : GPUBP_OK;
}

int gbp_mem_sync(gbp_mem *m)
{
    if (!m->pool_ready && !m->threads_started) return GPUBP_OK;
    double t0 = m->stats ? gbp_now_s() : 0;
    pthread_mutex_lock(&m->lock);
    while (m->inflight > 0) pthread_cond_wait(&m->cv, &m->lock);
    pthread_mutex_unlock(&m->lock);
    if (m->pool_ready) gbp_memctx_keep_error(m, m->ops->sync(m->dctx));
    sync_time(m, t0);
    pthread_mutex_lock(&m->lock);
    for (int i = 0; i < m->nslots; i++) m->slots[i].ev_pending = 0;
    pthread_mutex_unlock(&m->lock);
    gbp_mem_minmax_deliver(m);
    pthread_mutex_lock(&m->lock);
    m->ep_failed[0] = m->ep_failed[1] = 0;
    int err = m->err;
    int native = m->err_native;
    char msg[sizeof m->err_msg];
    memcpy(msg, m->err_msg, sizeof msg);
    m->err = 0;
    m->err_native = 0;
    m->err_msg[0] = '\0';
    pthread_mutex_unlock(&m->lock);
    if (err) return gbp_error(err, native, "%s", msg);
    return GPUBP_OK;
}

size_t gbp_mem_footprint(const gbp_mem *m)
{
    size_t n = m->bounce ? GBP_BOUNCE_BYTES : 0;
    if (m->pool_ready) n += (size_t)m->nslots * m->slot_alloc;
    for (const mm_page *p = m->pages; p; p = p->next) n += GBP_MM_PAGE_ENTRIES * GBP_MM_ENTRY;
    return n;
}
