/* The threaded pass of the whole-buffer encoder (gbp_blosc_compress with more than one thread;
 * blosc_enc.c holds the rest): coding, the walk in block order and the copies into place fused
 * into one pass over each batch of blocks. */
#include "compress/blosc_fused.h"

#include "compress/pool.h"

#define COPY_RUN ((size_t)64 << 10) /* fused_task: walked units claimed at once for copying */

/* Threads, whole buffer: a worker codes a unit into its scratch slot, marks it ready, then walks
 * the units ready next in block order (walk_ready), then copies the streams of walked units into
 * place while in cache: its own unit first, then any walked unit not claimed yet (e->copy_next),
 * so that the worker that advances the walk past a slow block does not copy alone all the blocks
 * coded meanwhile. What is left when the workers run out of units is copied after the join, with
 * whole blocks stored plain: a chunk found not to shrink overwrites the streams copied before
 * it was. The same bytes as coding all, then walking, then copying. */
static void copied(gbp_blosc_enc *e, size_t t, int worker)
{
    /* its scratch is read no more (the join's copies come from the input): the next unit of
     * this worker codes into it, still in cache */
    hot_slots *h = &e->hot[worker];
    if (h->n < GBP_HOT_SLOTS) h->s[h->n++] = gbp_blosc_enc_unit_scr(e, t);
}

static void copy_unit(gbp_blosc_enc *e, size_t t, int worker)
{
    unit *r = &e->u[t];
    if (r->late || atomic_exchange(&r->claimed, 1)) return;
    gbp_blosc_enc_store_streams(e, t, worker, 1);
    copied(e, t, worker);
}

/* Unit t, just coded by this worker, whose raw (filtered) streams are still in the worker's
 * filtered block (raw_fbuf), claimed by it before it was marked ready: walked, its streams go to
 * their places from there (one copy of those bytes less than through the scratch); not walked
 * yet (or late), the raw streams are kept in its scratch, before the next unit overwrites the
 * filtered block, and the claim is given up for whoever copies it once walked. */
static void own_copy(gbp_blosc_enc *e, size_t t, int worker)
{
    unit *r = &e->u[t];
    size_t walked = atomic_load(&e->walked);
    if (t < walked && !r->late) {
        gbp_blosc_enc_store_streams(e, t, worker, 1);
        r->raw_fbuf = 0;
        copied(e, t, worker);
        return;
    }
    gbp_blosc_enc_keep_raw(e, t, e->fbuf[worker]);
    if (t < walked) return; /* late: copied after the join, from the scratch */
    atomic_store(&r->claimed, 0);
    /* walked meanwhile: a copier may have passed it while it was claimed */
    if (t < atomic_load(&e->walked)) copy_unit(e, t, worker);
}

/* Unit r has unfiltered raw streams, which store_task copies after the join (gbp_blosc_enc_store_streams) */
static int raw_left(const gbp_blosc_enc *e, const unit *r)
{
    for (unsigned s = 0; e->filter == FILTER_NONE && s < r->nst; s++)
        if (r->sstore[s] == STORE_FILTERED) return 1;
    return 0;
}

/* One walker at a time (e->walking), and no worker waits for it: one that finds the walk taken
 * goes on coding, since the holder looks at the front again after letting go, and a unit marked
 * ready before that look is seen by it (all seq_cst: the flag, the marks, the look). With 16
 * threads and 16 KiB blocks a blocking lock was taken 2048 times per 32 MiB, workers sleeping
 * on it while a block was walked. */
static void walk_ready(gbp_blosc_enc *e)
{
    for (;;) {
        int idle = 0;
        if (!atomic_compare_exchange_strong(&e->walking, &idle, 1)) return;
        size_t f = e->front;
        int rc = e->walk_rc;
        while (rc == GPUBP_OK && f < e->nu && atomic_load(&e->u[f].ready)) {
            unit *r = &e->u[f];
            rc = gbp_blosc_enc_emit_one(e, f++);
            /* a chunk under 97 % so far is unlikely not to shrink: its streams are copied now;
             * the others after the join (if it shrinks after all), so that one that does not
             * shrink does not copy streams that its plain copy overwrites */
            uint64_t in = (uint64_t)r->block * e->ck_bsz + r->len + HDR_EXT;
            r->late = e->ck_mode != CK_NORMAL || e->nt + e->nt / 32 >= in;
            e->after |= r->late || r->store == STORE_PLAIN || raw_left(e, r);
            atomic_store_explicit(&e->walked, f, memory_order_release); /* copies start now */
        }
        e->front = f;
        e->walk_rc = rc;
        atomic_store(&e->walking, 0);
        if (rc != GPUBP_OK || f >= e->nu || !atomic_load(&e->u[f].ready)) return;
    }
}

static void fused_task(void *ctx, size_t task, int worker)
{
    gbp_blosc_enc *e = ctx;
    unit *u = &e->u[task];
    gbp_blosc_unit_zero_streams(u); /* left by the cut (gbp_blosc_enc_fused), unread so far */
    /* after the block that abandoned its chunk: placed plain, its coded streams never read
     * (gbp_blosc_enc_emit_one), so not coded at all (as Blosc2's threads give up, thread_giveup_code) */
    if (u->chunk == atomic_load(&e->dead_ck)) u->kind = BLK_SKIP;
    /* into a slot this worker copied out of (in its cache), not the unit's own, cold one */
    hot_slots *h = &e->hot[worker];
    if (u->kind != BLK_SKIP && h->n > 0) u->scr = h->s[--h->n];
    gbp_blosc_enc_code(e, task, worker);
    int own = u->raw_fbuf; /* copied by this worker, before it codes another unit */
    if (own) atomic_store(&u->claimed, 1);
    atomic_store(&u->ready, 1);
    walk_ready(e);
    if (own) own_copy(e, task, worker);
    else if (task < atomic_load(&e->walked)) copy_unit(e, task, worker);
    /* the others' copies in runs of COPY_RUN bytes of blocks: one claim per run, not per unit */
    size_t run = e->bsz_max < COPY_RUN ? COPY_RUN / e->bsz_max : 1;
    size_t c = atomic_load(&e->copy_next), w;
    while (c < (w = atomic_load(&e->walked))) {
        size_t end = w - c < run ? w : c + run;
        if (atomic_compare_exchange_weak(&e->copy_next, &c, end)) {
            for (; c < end; c++) copy_unit(e, c, worker);
            c = atomic_load(&e->copy_next);
        }
    }
}

int gbp_blosc_enc_fused_batch(gbp_blosc_enc *e, const uint8_t *in, size_t len)
{
    GBP_FORWARD_IF_ERROR(gbp_blosc_enc_cut(e, in, len));
    GBP_FORWARD_IF_ERROR(gbp_blosc_enc_unit_scratch(e, 1));
    if (!e->hot) {
        /* nw <= the pool's workers: no overflow; n is reset per batch (below) */
        if (!(e->hot = gbp_malloc_line((size_t)e->nw * sizeof *e->hot, &e->hot_mem)))
            return gbp_error(GPUBP_ERR_NOMEM, 0, "blosc: out of memory (encoder)");
    }
    for (int w = 0; w < e->nw; w++) e->hot[w].n = 0; /* slots of the batch before */
    gbp_blosc_enc_emit_start(e);
    e->front = 0;
    atomic_store(&e->walking, 0);
    atomic_store(&e->walked, 0);
    atomic_store(&e->copy_next, 0);
    e->walk_rc = GPUBP_OK;
    e->after = 0;
    atomic_store(&e->store_nomem, 0);
    gbp_pool_run(gbp_pool_workers(e->threads, e->nu), e->nu, fused_task, e);
    if (e->walk_rc != GPUBP_OK)
        return gbp_error(e->walk_rc, 0, "blosc: out of memory compressing a block");
    e->plain_only = 1;
    /* nothing left to copy (every stream coded and copied): no copy pass, no second wake of
     * the pool for 1000s of empty tasks */
    GBP_RETURN_ERROR_IF(atomic_load(&e->store_nomem), GPUBP_ERR_NOMEM, "blosc: out of memory placing streams");
    GBP_FORWARD_IF_ERROR(gbp_blosc_enc_settle(e));
    return e->after ? gbp_blosc_enc_store_all(e) : GPUBP_OK;
}

