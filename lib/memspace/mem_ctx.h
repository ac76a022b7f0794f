/* lib/memspace: the state of a context that the producers, the queue and the jobs share
 * (mem_ctx.c). Internal to lib/memspace. */
#ifndef GBP_MEM_CTX_H
#define GBP_MEM_CTX_H

#include "memspace/mem_internal.h"

/* The device backend, opened on first use: 1 when a device is usable. gbp_memctx_unsupported
 * says why not (NOT_SUPPORTED, or NOMEM when opening it ran out of memory), as a status. */
int gbp_memctx_dev_open(gbp_mem *m);
int gbp_memctx_unsupported(const gbp_mem *m);

/* The first failure since the last gbp_mem_sync, with this thread's message and native code.
 * rc >= 0 keeps nothing. _locked: caller holds m->lock; _ep_locked marks the failure against
 * epoch `epoch` (the commit that follows the job), the others against the current one.
 * gbp_memctx_keep_error returns rc. */
void gbp_memctx_keep_error_ep_locked(gbp_mem *m, int rc, int epoch);
void gbp_memctx_keep_error_locked(gbp_mem *m, int rc);
int gbp_memctx_keep_error(gbp_mem *m, int rc);
/* The kept failure raised again on this thread (it stays kept), or GPUBP_OK. */
int gbp_memctx_kept_error(gbp_mem *m);
/* Non-zero when a failure is kept. */
int gbp_memctx_has_error(gbp_mem *m);
/* Non-zero when a job of j's epoch failed: j does nothing more. */
int gbp_memctx_job_failed(gbp_mem *m, const job *j);

/* Waits for the whole stream after failure rc (copies queued that no event covers) and returns
 * rc with its message. */
int gbp_memctx_drain_after(gbp_mem *m, int rc);
/* The simulated device's hazard check of n slot bytes at p (GPUBP_OK elsewhere). */
int gbp_memctx_slot_idle(gbp_mem *m, const void *p, size_t n, int reads);

/* A gbp_piece_fn counting the pieces of a box walk and keeping the first: a walk that gives one
 * piece of height and depth 1 is contiguous on both sides. */
typedef struct gbp_one_piece {
    int n;
    gbp_piece p; /* the first */
} gbp_one_piece;
int gbp_memctx_one_piece_fn(void *vc, const gbp_piece *p);

/* The host bounce buffer (GBP_BOUNCE_BYTES), allocated on first use. */
int gbp_memctx_need_bounce(gbp_mem *m);

/* Counts write j out of m->unstaged once its data left the caller's buffer (once);
 * _if_queued: when every copy of device write j is queued (takes m->lock). */
void gbp_memctx_staged_locked(gbp_mem *m, job *j);
void gbp_memctx_staged_if_queued(gbp_mem *m, job *j);

#endif /* GBP_MEM_CTX_H */
