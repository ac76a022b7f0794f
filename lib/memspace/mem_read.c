/* Reads, cut into jobs: device reads into chunks queued for the I/O threads (jobs.c reads and
 * copies them; only the runs of a strided box whose runs lie far apart); large host runs into
 * pieces the I/O threads pread in place; strided host boxes run by run into place (far apart,
 * by the I/O threads when large) or through the bounce buffer. Also the synchronous small
 * copies (scatter, copy out). */
#include "memspace/mem_read.h"

#include <string.h>

#include "memspace/ioq.h"
#include "memspace/mem_ctx.h"
#include "memspace/slots.h"

/* ---- reads ----------------------------------------------------------------------------------- */
/* Whether the runs of box a (contiguous in b too, when given) are better read one by one. */
static int sparse_pays(const gbp_box *a, const gbp_box *b, size_t elsize)
{
    return gbp_box_sparse_pays(gbp_box_span(a, elsize), gbp_box_elements(a) * elsize,
                               gbp_box_run_bytes(a, b, elsize));
}

static int device_read(gbp_mem *m, int fd, uint64_t off, size_t elsize, const gbp_box *fbox,
                       void *dst, const gbp_box *dbox, gbp_fill_fn fill, void *fill_ctx)
{
    GBP_FORWARD_IF_ERROR(gbp_slots_pool_open(m));
    GBP_RETURN_ERROR_IF(elsize == 0, GPUBP_ERR_INVALID_ARG, "gbp_mem_read: element size 0");
    if (m->user_stream) GBP_FORWARD_IF_ERROR(m->ops->fence_user_stream(m->dctx));
    /* direct I/O reads whole pages around the span: keep room for the alignment on both ends */
    size_t limit = m->slot_bytes;
    if (limit < elsize) limit = elsize;
    /* runs far apart are read one by one, packed in the slot: chunks of at most a slot's bytes
     * (whatever their span); otherwise each chunk's span is read whole */
    int sparse = !fill && !m->params.direct_io && sparse_pays(fbox, NULL, elsize);
    gbp_chunker ch;
    gbp_chunker_init(&ch, fbox, elsize, limit, !sparse);
    gbp_chunk c;
    while (gbp_chunker_next(&ch, &c)) {
        if (gbp_memctx_has_error(m)) return GPUBP_OK;
        /* queued, not read: an I/O thread that takes the chunk takes any free slot for it */
        job j;
        memset(&j, 0, sizeof j);
        j.kind = JOB_DEV_READ;
        j.is_read = 1;
        j.slot = -1;
        j.fd = fd;
        j.off = off + c.span_off;
        j.len = c.span;
        if (sparse && c.bytes < c.span) {
            j.sparse = 1;
            j.len = c.bytes;
        }
        j.fa = c.a;
        gbp_box_sub(&j.da, dbox, c.rel, c.count);
        j.span_off = c.span_off;
        j.elsize = elsize;
        j.dst = dst;
        j.fill = fill;
        j.fill_ctx = fill_ctx;
        gbp_ioq_submit(m, &j);
    }
    return GPUBP_OK;
}

typedef struct read_ctx {
    gbp_mem *m;
    int fd;
    uint64_t off;
    uint8_t *dst;
} read_ctx;

/* Large runs are read by the I/O threads in parallel pieces; small ones here. */
static int read_run(void *ctx, size_t a_off, size_t b_off, size_t bytes)
{
    read_ctx *c = ctx;
    if (bytes < GBP_HOST_ASYNC_MIN)
        return gbp_pread_all(c->fd, c->dst + b_off, bytes, c->off + a_off, "data file");
    GBP_FORWARD_IF_ERROR(gbp_ioq_open(c->m));
    for (size_t done = 0; done < bytes; done += GBP_HOST_CHUNK) {
        if (gbp_memctx_has_error(c->m)) return GPUBP_OK;
        job j;
        memset(&j, 0, sizeof j);
        j.kind = JOB_HOST_READ;
        j.fd = c->fd;
        j.off = c->off + a_off + done;
        j.len = bytes - done < GBP_HOST_CHUNK ? bytes - done : GBP_HOST_CHUNK;
        j.dst = c->dst + b_off + done;
        gbp_ioq_submit(c->m, &j);
    }
    return GPUBP_OK;
}

int gbp_mem_read(gbp_mem *m, gpubp_memory_space sp, int fd, uint64_t off, size_t elsize,
                 const gbp_box *fbox, void *dst, const gbp_box *dbox)
{
    if (sp == GPUBP_MEM_GPU) {
        if (!gbp_memctx_dev_open(m)) return gbp_memctx_unsupported(m);
        return device_read(m, fd, off, elsize, fbox, dst, dbox, NULL, NULL);
    }
    read_ctx c = {m, fd, off, dst};
    if (gbp_box_is_contiguous(fbox) || gbp_box_elements(fbox) == 0)
        return gbp_box_foreach_run(fbox, dbox, elsize, read_run, &c);
    /* a strided sub-box whose runs are far apart: one pread per run, straight into place; by
     * the I/O threads when it is large */
    if (sparse_pays(fbox, dbox, elsize)) {
        if (gbp_box_elements(fbox) * elsize < GBP_HOST_ASYNC_MIN)
            return gbp_box_foreach_run(fbox, dbox, elsize, read_run, &c);
        GBP_FORWARD_IF_ERROR(gbp_ioq_open(m));
        gbp_chunker ch;
        gbp_chunker_init(&ch, fbox, elsize, GBP_HOST_CHUNK, 0);
        gbp_chunk k;
        while (gbp_chunker_next(&ch, &k)) {
            if (gbp_memctx_has_error(m)) return GPUBP_OK;
            job j;
            memset(&j, 0, sizeof j);
            j.kind = JOB_HOST_READ;
            j.sparse = 1;
            j.fd = fd;
            j.off = off;
            j.len = k.bytes;
            j.fa = k.a;
            gbp_box_sub(&j.da, dbox, k.rel, k.count);
            j.elsize = elsize;
            j.dst = dst;
            gbp_ioq_submit(m, &j);
        }
        return GPUBP_OK;
    }
    /* runs close together: spans of the file read into the bounce buffer, the runs scattered */
    GBP_FORWARD_IF_ERROR(gbp_memctx_need_bounce(m));
    gbp_chunker ch;
    gbp_chunker_init(&ch, fbox, elsize, GBP_BOUNCE_BYTES, 1);
    gbp_chunk k;
    while (gbp_chunker_next(&ch, &k)) {
        gbp_box da;
        gbp_box_sub(&da, dbox, k.rel, k.count);
        GBP_FORWARD_IF_ERROR(gbp_pread_all(fd, m->bounce, k.span, off + k.span_off, "data file"));
        gbp_box_copy_runs(&k.a, &da, elsize, m->bounce, k.span_off, dst);
    }
    return GPUBP_OK;
}

int gbp_mem_read_fill(gbp_mem *m, gbp_fill_fn fill, void *ctx, size_t elsize, const gbp_box *fbox,
                      void *dst, const gbp_box *dbox)
{
    if (!gbp_memctx_dev_open(m)) return gbp_memctx_unsupported(m);
    return device_read(m, -1, 0, elsize, fbox, dst, dbox, fill, ctx);
}

/* ---- synchronous small copies ---------------------------------------------------------------- */
typedef struct sync_ctx {
    gbp_mem *m;
    const uint8_t *src;
    uint8_t *dst;
    gbp_copy_kind kind;
} sync_ctx;

static int sync_piece(void *vc, const gbp_piece *p)
{
    sync_ctx *c = vc;
    gbp_copy3d k = {c->src + p->a_off, c->dst + p->b_off, p->width, p->height, p->depth,
                    p->apitch, p->aslice, p->bpitch, p->bslice, c->kind};
    return c->m->ops->copy_async(c->m->dctx, &k);
}

static int wait_misc(gbp_mem *m)
{
    if (!m->misc_ev) GBP_FORWARD_IF_ERROR(m->ops->event_create(m->dctx, &m->misc_ev));
    GBP_FORWARD_IF_ERROR(m->ops->event_record(m->dctx, m->misc_ev));
    return m->ops->event_wait(m->dctx, m->misc_ev);
}

int gbp_mem_scatter(gbp_mem *m, gpubp_memory_space sp, const void *src, size_t elsize,
                    const gbp_box *sbox, void *dst, const gbp_box *dbox)
{
    if (sp == GPUBP_MEM_GPU) {
        if (!gbp_memctx_dev_open(m)) return gbp_memctx_unsupported(m);
        if (m->user_stream) GBP_FORWARD_IF_ERROR(m->ops->fence_user_stream(m->dctx));
        sync_ctx c = {m, src, dst, GBP_COPY_H2D};
        GBP_FORWARD_IF_ERROR(gbp_box_walk3d(sbox, dbox, elsize, sync_piece, &c));
        return wait_misc(m);
    }
    gbp_box_copy_runs(sbox, dbox, elsize, src, 0, dst);
    return GPUBP_OK;
}

int gbp_mem_copy_out(gbp_mem *m, gpubp_memory_space sp, void *dst_host, const void *src, size_t n)
{
    if (sp == GPUBP_MEM_GPU) {
        if (!gbp_memctx_dev_open(m)) return gbp_memctx_unsupported(m);
        if (n == 0) return GPUBP_OK;
        if (m->user_stream) GBP_FORWARD_IF_ERROR(m->ops->fence_user_stream(m->dctx));
        gbp_copy3d k = {src, dst_host, n, 1, 1, 0, 0, 0, 0, GBP_COPY_D2H};
        GBP_FORWARD_IF_ERROR(m->ops->copy_async(m->dctx, &k));
        return wait_misc(m);
    }
    memcpy(dst_host, src, n);
    return GPUBP_OK;
}
