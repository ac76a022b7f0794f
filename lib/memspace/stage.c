/* The staging iterator (gbp_mem_stage_*): a block delivered to a consumer on the host
 * (compression) in packed pieces. */
#include "memspace/stage.h"

#include <string.h>

#include "memspace/jobs.h"
#include "memspace/mem_ctx.h"
#include "memspace/slots.h"

/* Device pieces land in pool slots: up to nslots copies are queued ahead of the piece the caller
 * holds, so the copy engine fills the next slots while the caller works on this one. Host
 * pieces are slices of the user's buffer, or packed into the bounce buffer when strided. */
struct gbp_stage {
    gbp_mem *m;
    gpubp_memory_space sp;
    const uint8_t *base;
    size_t elsize;
    gbp_chunker ch;
    size_t from, to;       /* packed byte range wanted */
    int more;              /* the chunker may have more */
    int ring[GBP_STAGE_MAX]; /* device: slots with a copy queued, oldest first */
    gbp_chunk rc[GBP_STAGE_MAX];
    int head, n, depth;
    int held;              /* device: the slot the caller holds, or -1 */
};

/* The next chunk of the chunker that overlaps [from, to), or 0. */
static int stage_chunk(gbp_stage *st, gbp_chunk *c)
{
    while (st->more && (st->more = gbp_chunker_next(&st->ch, c)))
        if (c->packed_off < st->to && c->packed_off + c->bytes > st->from) return 1;
    return 0;
}

/* Queues the device-to-host copy of the next chunk into a slot. 1 queued, 0 none left, <0 error. */
static int stage_queue(gbp_stage *st)
{
    gbp_chunk c;
    if (!stage_chunk(st, &c)) return 0;
    gbp_mem *m = st->m;
    int s;
    GBP_FORWARD_IF_ERROR(gbp_slots_acquire(m, &s));
    int rc = gbp_jobs_fill_slot(m, s, 0, st->base, st->elsize, &c);
    if (rc < 0) {
        gbp_slots_release(m, s);
        return rc;
    }
    int at = (st->head + st->n) % GBP_STAGE_MAX;
    st->ring[at] = s;
    st->rc[at] = c;
    st->n++;
    return 1;
}

int gbp_mem_stage_open(gbp_mem *m, gbp_stage **out, gpubp_memory_space sp, const void *base,
                       size_t elsize, const gbp_box *box, size_t from, size_t to)
{
    *out = NULL;
    GBP_RETURN_ERROR_IF(elsize == 0, GPUBP_ERR_INVALID_ARG, "gbp_mem_stage_open: element size 0");
    size_t limit = GBP_HOST_CHUNK * 2; /* host: 16 MiB slices, as a slot */
    if (sp == GPUBP_MEM_GPU) {
        if (!gbp_memctx_dev_open(m)) return gbp_memctx_unsupported(m);
        GBP_FORWARD_IF_ERROR(gbp_slots_pool_open(m));
        /* queued device writes take their slots when an I/O thread gets to them: let them
         * finish before the stage holds every slot (and before its caller waits for them) */
        GBP_FORWARD_IF_ERROR(gbp_mem_wait_writes(m));
        if (m->user_stream) GBP_FORWARD_IF_ERROR(m->ops->fence_user_stream(m->dctx));
        limit = m->slot_bytes;
    } else if (!gbp_box_is_contiguous(box)) {
        GBP_FORWARD_IF_ERROR(gbp_memctx_need_bounce(m));
        limit = GBP_BOUNCE_BYTES;
    }
    if (limit < elsize) limit = elsize;
    gbp_stage *st = gbp_calloc(1, sizeof *st);
    if (!st) return gbp_error(GPUBP_ERR_NOMEM, 0, "out of memory (staging)");
    st->m = m;
    st->sp = sp;
    st->base = base;
    st->elsize = elsize;
    st->from = from;
    st->to = to;
    st->more = 1;
    st->held = -1;
    st->depth = m->nslots < GBP_STAGE_MAX ? m->nslots : GBP_STAGE_MAX;
    gbp_chunker_init(&st->ch, box, elsize, limit, 0);
    *out = st;
    return GPUBP_OK;
}

typedef struct pack2_ctx {
    const uint8_t *base;
    uint8_t *dst;
    size_t at;
} pack2_ctx;

static int pack2_run(void *ctx, size_t a_off, size_t b_off, size_t bytes)
{
    pack2_ctx *c = ctx;
    (void)b_off;
    memcpy(c->dst + c->at, c->base + a_off, bytes);
    c->at += bytes;
    return 0;
}

int gbp_mem_stage_next(gbp_stage *st, const uint8_t **p, size_t *off, size_t *len)
{
    gbp_mem *m = st->m;
    if (st->sp != GPUBP_MEM_GPU) {
        gbp_chunk c;
        if (!stage_chunk(st, &c)) return 0;
        *off = c.packed_off;
        *len = c.bytes;
        if (gbp_box_is_contiguous(&st->ch.box)) {
            *p = st->base + (gbp_box_offset(&st->ch.box) * st->elsize + c.packed_off);
        } else {
            pack2_ctx pc = {st->base, m->bounce, 0};
            GBP_FORWARD_IF_ERROR(gbp_box_foreach_run(&c.a, NULL, st->elsize, pack2_run, &pc));
            *p = m->bounce;
        }
        return 1;
    }
    if (st->held >= 0) {
        gbp_slots_release(m, st->held);
        st->held = -1;
    }
    while (st->n < st->depth) { /* keep the copy engine busy ahead of the caller */
        int rc = stage_queue(st);
        if (rc < 0) return gbp_memctx_keep_error(m, rc);
        if (rc == 0) break;
    }
    if (st->n == 0) return 0;
    int s = st->ring[st->head];
    gbp_chunk c = st->rc[st->head];
    st->head = (st->head + 1) % GBP_STAGE_MAX;
    st->n--;
    st->held = s;
    int rc = m->ops->event_wait(m->dctx, m->slots[s].ev);
    if (rc < 0) return gbp_memctx_keep_error(m, rc);
    *p = m->slots[s].buf;
    *off = c.packed_off;
    *len = c.bytes;
    return 1;
}

void gbp_mem_stage_close(gbp_stage *st)
{
    if (!st) return;
    gbp_mem *m = st->m;
    if (st->sp == GPUBP_MEM_GPU) {
        /* copies still queued into slots must complete before the slots are reused */
        while (st->n > 0) {
            int s = st->ring[st->head];
            (void)m->ops->event_wait(m->dctx, m->slots[s].ev);
            gbp_error_clear();
            gbp_slots_release(m, s);
            st->head = (st->head + 1) % GBP_STAGE_MAX;
            st->n--;
        }
        if (st->held >= 0) gbp_slots_release(m, st->held);
    }
    gbp_free(st);
}
