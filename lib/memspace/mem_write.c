/* Writes, cut into jobs: device blocks into chunks queued for the I/O threads (jobs.c copies and
 * writes them); large contiguous host blocks into pieces the I/O threads pwrite from the user's
 * buffer; strided host blocks packed through the bounce buffer on the caller's thread. */
#include "memspace/mem_write.h"

#include <string.h>

#include "memspace/ioq.h"
#include "memspace/mem_ctx.h"
#include "memspace/mem_minmax.h"
#include "memspace/slots.h"

/* owned: the source is the library's (gbp_mem_write_owned): staged at once */
static int device_write(gbp_mem *m, int fd, uint64_t off, const void *base, int type,
                        const gbp_box *src, void *min, void *max, int owned)
{
    GBP_FORWARD_IF_ERROR(gbp_slots_pool_open(m));
    size_t elsize = gbp_type_size(type);
    GBP_RETURN_ERROR_IF(elsize == 0, GPUBP_ERR_INVALID_ARG, "gbp_mem_write: bad type %d", type);
    if (m->user_stream) GBP_FORWARD_IF_ERROR(m->ops->fence_user_stream(m->dctx));
    if (min && max && gbp_box_elements(src) > 0)
        GBP_FORWARD_IF_ERROR(gbp_mem_minmax_queue(m, base, type, src, min, max));
    size_t limit = m->slot_bytes;
    if (limit < elsize) limit = elsize;
    /* the chunks are queued, not copied: an I/O thread that takes one copies it into a free
     * slot, so that every file (subfile) has a thread streaming its chunks whatever the order of
     * the blocks, and the caller never waits for a slot */
    gbp_chunker ch;
    gbp_chunker_init(&ch, src, elsize, limit, 0);
    gbp_chunk c;
    while (gbp_chunker_next(&ch, &c)) {
        if (gbp_memctx_has_error(m)) return GPUBP_OK; /* reported by gbp_mem_sync */
        job j;
        memset(&j, 0, sizeof j);
        j.kind = JOB_DEV_WRITE;
        j.slot = -1;
        j.fd = fd;
        j.off = off + c.packed_off;
        j.len = c.bytes;
        j.ch = c;
        j.base = base;
        j.elsize = elsize;
        j.np = 1;
        j.staged = owned;
        /* contiguous on the device: copied (and written) in pieces */
        gbp_box dense;
        gbp_box_dense(&dense, c.a.ndims, c.count);
        gbp_one_piece op = {0, {0}};
        if (!m->params.direct_io && c.bytes > m->piece &&
            gbp_box_walk3d(&c.a, &dense, elsize, gbp_memctx_one_piece_fn, &op) == GPUBP_OK &&
            op.n == 1 &&
            op.p.height == 1 && op.p.depth == 1 && op.p.width == c.bytes) {
            j.csrc = (const uint8_t *)base + op.p.a_off;
            j.np = (int)((c.bytes + m->piece - 1) / m->piece);
            if (j.np > m->npev) j.np = 1;
        }
        gbp_ioq_submit(m, &j);
    }
    return GPUBP_OK;
}

typedef struct pack_ctx {
    gbp_mem *m;
    int fd;
    uint64_t off;     /* file offset of the next byte */
    const uint8_t *base;
    size_t fill;      /* bytes in the bounce buffer */
    int type;
    size_t elsize;
    void *min, *max;
    int have;
} pack_ctx;

static int flush_bounce(pack_ctx *c)
{
    if (c->fill == 0) return 0;
    if (c->min) {
        gbp_minmax(c->type, c->m->bounce, c->fill / c->elsize, c->min, c->max, c->have);
        c->have = 1;
    }
    int rc = gbp_pwrite_all(c->fd, c->m->bounce, c->fill, c->off, "data file");
    c->off += c->fill;
    c->fill = 0;
    return rc;
}

static int pack_run(void *ctx, size_t a_off, size_t b_off, size_t bytes)
{
    pack_ctx *c = ctx;
    (void)b_off;
    const uint8_t *src = c->base + a_off;
    while (bytes > 0) {
        size_t room = GBP_BOUNCE_BYTES - c->fill;
        size_t n = bytes < room ? bytes : room;
        memcpy(c->m->bounce + c->fill, src, n);
        c->fill += n;
        src += n;
        bytes -= n;
        if (c->fill == GBP_BOUNCE_BYTES) {
            int rc = flush_bounce(c);
            if (rc) return rc;
        }
    }
    return 0;
}

int gbp_mem_write(gbp_mem *m, gpubp_memory_space sp, int fd, uint64_t off, const void *base,
                  int type, const gbp_box *src, void *min, void *max)
{
    if (sp == GPUBP_MEM_GPU) {
        if (!gbp_memctx_dev_open(m)) return gbp_memctx_unsupported(m);
        return device_write(m, fd, off, base, type, src, min, max, 0);
    }
    size_t elsize = gbp_type_size(type);
    size_t n = gbp_box_elements(src);
    if (gbp_box_is_contiguous(src) && n * elsize >= GBP_HOST_ASYNC_MIN) {
        /* I/O threads pwrite the pieces straight from the user's buffer while this thread
         * computes min/max: the two overlap (the buffer stays valid until gbp_mem_sync) */
        GBP_FORWARD_IF_ERROR(gbp_ioq_open(m));
        const uint8_t *p = (const uint8_t *)base + gbp_box_offset(src) * elsize;
        size_t bytes = n * elsize, done = 0;
        int have = 0;
        while (done < bytes) {
            size_t step = bytes - done < GBP_HOST_CHUNK ? bytes - done : GBP_HOST_CHUNK;
            GBP_FORWARD_IF_ERROR(gbp_mem_write_host_async(m, fd, off + done, p + done, step));
            if (min) {
                gbp_minmax(type, p + done, step / elsize, min, max, have);
                have = 1;
            }
            done += step;
        }
        return GPUBP_OK;
    }
    if (gbp_box_is_contiguous(src)) {
        const uint8_t *p = (const uint8_t *)base + gbp_box_offset(src) * elsize;
        size_t bytes = n * elsize, done = 0;
        int have = 0;
        /* minmax of a chunk while it is in cache, then its write */
        while (done < bytes) {
            size_t step = bytes - done < GBP_HOST_SYNC_PIECE ? bytes - done : GBP_HOST_SYNC_PIECE;
            if (min) {
                gbp_minmax(type, p + done, step / elsize, min, max, have);
                have = 1;
            }
            GBP_FORWARD_IF_ERROR(gbp_pwrite_all(fd, p + done, step, off + done, "data file"));
            done += step;
        }
        return GPUBP_OK;
    }
    GBP_FORWARD_IF_ERROR(gbp_memctx_need_bounce(m));
    pack_ctx c = {m, fd, off, base, 0, type, elsize, min, max, 0};
    int rc = gbp_box_foreach_run(src, NULL, elsize, pack_run, &c);
    if (rc) return rc;
    return flush_bounce(&c);
}

static int host_async(gbp_mem *m, int fd, uint64_t off, const void *p, size_t n, int owned)
{
    if (n == 0) return GPUBP_OK;
    GBP_FORWARD_IF_ERROR(gbp_ioq_open(m));
    if (gbp_memctx_has_error(m)) return GPUBP_OK; /* reported by gbp_mem_sync */
    job j;
    memset(&j, 0, sizeof j);
    j.kind = JOB_HOST_WRITE;
    j.fd = fd;
    j.off = off;
    j.len = n;
    j.src = p;
    j.staged = owned;
    gbp_ioq_submit(m, &j);
    return GPUBP_OK;
}

int gbp_mem_write_host_async(gbp_mem *m, int fd, uint64_t off, const void *p, size_t n)
{
    return host_async(m, fd, off, p, n, 0);
}

int gbp_mem_write_owned(gbp_mem *m, gpubp_memory_space sp, int fd, uint64_t off, const void *p,
                        size_t n)
{
    if (sp != GPUBP_MEM_GPU) return host_async(m, fd, off, p, n, 1);
    if (!gbp_memctx_dev_open(m)) return gbp_memctx_unsupported(m);
    gbp_box b;
    gbp_box_dense(&b, 1, &n);
    return device_write(m, fd, off, p, GPUBP_TYPE_UINT8, &b, NULL, NULL, 1);
}

int gbp_mem_wait_writes(gbp_mem *m)
{
    if (!m->threads_started) return GPUBP_OK;
    pthread_mutex_lock(&m->lock);
    while (m->inflight > 0) pthread_cond_wait(&m->cv, &m->lock);
    pthread_mutex_unlock(&m->lock);
    return gbp_memctx_kept_error(m);
}
