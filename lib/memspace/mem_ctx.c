/* The state of a context that the producers, the queue and the jobs share: the device backend,
 * opened on first use; the first failure of any thread, kept until gbp_mem_sync reports it; the
 * writes whose data may still be read from the caller's buffers (staged accounting); and the
 * small checks every job makes (the simulated device's hazard check, the one-piece test, the
 * bounce buffer). */
#include "memspace/mem_ctx.h"

#include <pthread.h>
#include <stdio.h>
#include <string.h>

/* Opens the backend context on first use. Returns 1 when a device is usable. */
int gbp_memctx_dev_open(gbp_mem *m)
{
    if (m->dev_state == 0) {
        m->dev_state = -1;
        double t0 = gbp_now_s();
        int rc = m->ops ? m->ops->open(&m->dctx) : GPUBP_ERR_NOT_SUPPORTED;
        m->t_dev += gbp_now_s() - t0;
        if (rc == GPUBP_OK) {
            m->dev_state = 1;
        } else if (rc == GPUBP_ERR_NOMEM) {
            m->dev_state = 0; /* not "no device": a later call tries again */
            m->dev_nomem = 1; /* the error record says what failed */
            return 0;
        }
        gbp_error_clear();
    }
    m->dev_nomem = 0;
    return m->dev_state == 1;
}

int gbp_memctx_unsupported(const gbp_mem *m)
{
    if (m->dev_nomem) return GPUBP_ERR_NOMEM; /* the record has the allocation that failed */
    if (m->ops)
        return gbp_error(GPUBP_ERR_NOT_SUPPORTED, 0,
                         "GPU memory: no usable %s device (none present, or its runtime failed)",
                         m->ops->name);
    return gbp_error(GPUBP_ERR_NOT_SUPPORTED, 0,
                     "GPU memory is not supported by this build of libgpubp (built without CUDA)");
}

/* ---- errors of the pipeline ------------------------------------------------------------------ */
/* Keeps the first failure (the message of gbp_error on this thread). Caller holds m->lock. */
void gbp_memctx_keep_error_ep_locked(gbp_mem *m, int rc, int epoch)
{
    if (rc >= 0) return;
    m->ep_failed[epoch & 1] = 1;
    if (m->err) return;
    m->err = rc;
    m->err_native = gbp_error_native();
    snprintf(m->err_msg, sizeof m->err_msg, "%s", gbp_error_message());
}

void gbp_memctx_keep_error_locked(gbp_mem *m, int rc)
{
    gbp_memctx_keep_error_ep_locked(m, rc, m->epoch);
}

/* The failure kept so far, raised again on this thread (it stays kept), or GPUBP_OK. */
int gbp_memctx_kept_error(gbp_mem *m)
{
    pthread_mutex_lock(&m->lock);
    int err = m->err, native = m->err_native;
    char msg[sizeof m->err_msg];
    memcpy(msg, m->err_msg, sizeof msg);
    pthread_mutex_unlock(&m->lock);
    return err ? gbp_error(err, native, "%s", msg) : GPUBP_OK;
}

int gbp_memctx_keep_error(gbp_mem *m, int rc)
{
    if (rc >= 0) return rc;
    pthread_mutex_lock(&m->lock);
    gbp_memctx_keep_error_locked(m, rc);
    pthread_mutex_unlock(&m->lock);
    return rc;
}

int gbp_memctx_has_error(gbp_mem *m)
{
    pthread_mutex_lock(&m->lock);
    int e = m->err;
    pthread_mutex_unlock(&m->lock);
    return e;
}

/* A job of j's epoch failed: j does nothing more (a job of a later epoch failing does not stop
 * an earlier one, whose commit is still to come). */
int gbp_memctx_job_failed(gbp_mem *m, const job *j)
{
    pthread_mutex_lock(&m->lock);
    int e = m->ep_failed[j->epoch & 1];
    pthread_mutex_unlock(&m->lock);
    return e;
}

int gbp_memctx_one_piece_fn(void *vc, const gbp_piece *p)
{
    gbp_one_piece *c = vc;
    if (c->n++ == 0) c->p = *p;
    return 0;
}

/* Failure rc came after copies into or out of a slot were queued that no recorded event covers
 * (a copy queued, then its event refused; a strided copy queued in part): waits for the whole
 * stream, so that the slot can be freed, and returns rc with its message. */
int gbp_memctx_drain_after(gbp_mem *m, int rc)
{
    gbp_saved_error e;
    gbp_error_save(&e, rc, sizeof m->err_msg);
    (void)m->ops->sync(m->dctx);
    return gbp_error_restore(&e, rc);
}

/* The simulated device's hazard check (devops.h check_idle), nothing elsewhere. */
int gbp_memctx_slot_idle(gbp_mem *m, const void *p, size_t n, int reads)
{
    return m->ops->check_idle ? m->ops->check_idle(m->dctx, p, n, reads) : GPUBP_OK;
}


/* A write's data has left the caller's buffer (its copies into a slot are all queued, or it
 * failed, or it was written): gbp_mem_wait_staged counts it out. Caller holds m->lock. */
void gbp_memctx_staged_locked(gbp_mem *m, job *j)
{
    if (!gbp_job_is_write(j) || j->staged) return;
    j->staged = 1;
    if (--m->unstaged == 0) pthread_cond_broadcast(&m->cv);
}

/* gbp_memctx_staged_locked once every copy of device write j is queued */
void gbp_memctx_staged_if_queued(gbp_mem *m, job *j)
{
    if (j->queued < j->np) return;
    pthread_mutex_lock(&m->lock);
    gbp_memctx_staged_locked(m, j);
    pthread_mutex_unlock(&m->lock);
}

int gbp_memctx_need_bounce(gbp_mem *m)
{
    if (!m->bounce) {
        m->bounce = gbp_malloc(GBP_BOUNCE_BYTES);
        if (!m->bounce) return gbp_error(GPUBP_ERR_NOMEM, 0, "out of memory (bounce buffer)");
    }
    return GPUBP_OK;
}
