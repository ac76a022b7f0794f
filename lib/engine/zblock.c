/* The compressed write path: a block's values, from host or device memory, become an ADIOS2 blosc
 * operator buffer (Blosc2 chunks, zlib codec) written into its data subfile.
 *
 * The block streams through lib/compress's staged encoder piece by piece: device pieces land in
 * the pinned pool (lib/memspace copies the next pieces ahead while this one is compressed), host
 * pieces are slices of the user's buffer. For each piece: min/max, then the encoder compresses
 * its Blosc2 blocks on all compression threads while the I/O threads write the previous piece's
 * output, then places the streams (in block order) into one output buffer, whose bytes are queued
 * for the I/O threads. The chunk headers, block starts and the 23-byte prefix are written last;
 * a chunk that did not shrink is rewritten raw from the source (a second staging pass over it).
 * Host memory: one piece's output (about 16 MiB) and the encoder's scratch, whatever the block. */
#include "engine/zblock.h"
#include "engine/zdev.h"
#include "engine/zdev_read.h"

#include "compress/blosczlib.h"
#include "compress/pool.h"
#include "memspace/box.h"
#include "memspace/mem_dz.h"

#include <stdio.h>
#include <string.h>

#define GBP_ZERO_BYTES 65536

static const uint8_t zeros[GBP_ZERO_BYTES];

/* A host write of the extents: the library's own bytes (owned), or bytes staged normally. */
static int write_host(gbp_mem *mem, int fd, uint64_t off, const void *p, size_t n, int owned)
{
    return owned ? gbp_mem_write_owned(mem, GPUBP_MEM_HOST, fd, off, p, n)
                 : gbp_mem_write_host_async(mem, fd, off, p, n);
}

/* Queues the extents of one encoder call for writing at base + their offset. */
int gbp_zblock_write_extents(gbp_mem *mem, int fd, uint64_t base, const gbp_blosc_extent *x,
                             size_t nx, int owned)
{
    for (size_t i = 0; i < nx; i++) {
        if (x[i].p) {
            GBP_FORWARD_IF_ERROR(write_host(mem, fd, base + x[i].off, x[i].p, x[i].len, owned));
            continue;
        }
        for (size_t done = 0; done < x[i].len; done += GBP_ZERO_BYTES) {
            size_t n = x[i].len - done < GBP_ZERO_BYTES ? x[i].len - done : GBP_ZERO_BYTES;
            GBP_FORWARD_IF_ERROR(write_host(mem, fd, base + x[i].off + done, zeros, n, owned));
        }
    }
    return GPUBP_OK;
}

/* A chunk that did not shrink is stored raw: the input bytes [r->in_off, + r->len) of the block
 * go, unfiltered, to r->out_off. They are staged again from the source. */
int gbp_zblock_write_redo(gpubp_file *f, const gbp_wblock *wb, int fd, const gbp_blosc_redo *r)
{
    size_t es = gbp_type_size(wb->var->type);
    gbp_stage *st;
    GBP_FORWARD_IF_ERROR(gbp_mem_stage_open(f->mem, &st, wb->space, wb->data, es, &wb->box,
                                            r->in_off, r->in_off + r->len));
    const uint8_t *p;
    size_t off, len;
    int rc;
    while ((rc = gbp_mem_stage_next(st, &p, &off, &len)) == 1) {
        size_t a = off > r->in_off ? off : r->in_off;
        size_t b = off + len < r->in_off + r->len ? off + len : r->in_off + r->len;
        uint64_t at = wb->meta.payload_offset + r->out_off + (a - r->in_off);
        rc = gbp_mem_write_host_async(f->mem, fd, at, p + (a - off), b - a);
        if (rc == GPUBP_OK) rc = gbp_mem_wait_writes(f->mem); /* p is reused by the next piece */
        if (rc != GPUBP_OK) break;
    }
    gbp_mem_stage_close(st);
    return rc < 0 ? rc : GPUBP_OK;
}

/* ---- many small blocks ------------------------------------------------------------------------
 * A block of a few Blosc2 blocks gives the pool a few tasks: a step of many such blocks would
 * compress on one or two cores. So when a small block comes up, it and the small compressed
 * blocks that follow it in the step (up to GBP_AHEAD_BYTES of input) are compressed at once, one
 * block per task on all compression threads, each with one thread (the bytes do not depend on the
 * thread count); each result waits in its block (zahead) for its turn, when its file offset is
 * known. gbp_discard_step (writer.c) frees what a failed step leaves. */
#define GBP_AHEAD_BYTES ((size_t)64 << 20)

#define GBP_AHEAD_BLOCKS 4096

/* 1 when block wb goes through the GPU path (zdev.c): device memory, one contiguous run, and a
 * device codec for its codec (compress_device); < 0 when compress_device=on and it cannot. */
static int on_device(gpubp_file *f, const gbp_wblock *wb, int quiet, const gbp_dzops **ops,
                     void **dctx)
{
    if (wb->space != GPUBP_MEM_GPU || wb->cpu_lane) return 0;
    char what[300];
    snprintf(what, sizeof what, "a block of '%s'", wb->var->name);
    return gbp_zdev_choose(f, wb->var->op_codec, gbp_box_is_contiguous(&wb->box), quiet, what,
                           ops, dctx);
}

static int is_small(gpubp_file *f, const gbp_wblock *wb)
{
    const gpubp_variable *v = wb->var;
    const gbp_dzops *ops;
    void *dctx;
    if (!v->op || wb->performed || wb->zahead || wb->payload_len == 0 ||
        gbp_kind_is_value(v->kind) || on_device(f, wb, 1, &ops, &dctx) != 0)
        return 0;
    size_t es = gbp_type_size(v->type), raw = (size_t)wb->payload_len;
    int threads = v->op_threads ? v->op_threads : f->params.compress_threads;
    size_t bsz = gbp_blosc_blocksize(raw, es, v->op_codec, v->op_level, v->op_shuffle);
    return raw / bsz + 1 < (size_t)gbp_pool_workers(threads, SIZE_MAX);
}

typedef struct ahead_task {
    gbp_wblock *wb;
    const uint8_t *src; /* host bytes, packed */
    uint8_t *z;
    size_t zlen;
    int rc;
    char msg[256];
} ahead_task;

static void ahead_run(void *ctx, size_t t, int worker)
{
    (void)worker;
    ahead_task *a = &((ahead_task *)ctx)[t];
    const gpubp_variable *v = a->wb->var;
    size_t es = gbp_type_size(v->type), raw = (size_t)a->wb->payload_len;
    gbp_minmax(v->type, a->src, raw / es, a->wb->meta.mm, a->wb->meta.mm + 16, 0);
    a->rc = gbp_blosc_compress(a->src, raw, es, v->op_codec, v->op_level, v->op_shuffle, 1, a->z,
                               gbp_blosc_bound(raw), &a->zlen);
    if (a->rc) snprintf(a->msg, sizeof a->msg, "%s", gbp_error_message());
}

/* Packs the block's values into host memory: a pointer into the user's buffer when it is a
 * contiguous host box, else *tmp (allocated here). */
static int gather(gpubp_file *f, const gbp_wblock *wb, const uint8_t **src, uint8_t **tmp)
{
    size_t es = gbp_type_size(wb->var->type), raw = (size_t)wb->payload_len;
    *tmp = NULL;
    if (wb->space == GPUBP_MEM_HOST && gbp_box_is_contiguous(&wb->box)) {
        *src = (const uint8_t *)wb->data + gbp_box_offset(&wb->box) * es;
        return GPUBP_OK;
    }
    uint8_t *t = gbp_malloc(raw);
    if (!t) return gbp_error(GPUBP_ERR_NOMEM, 0, "out of memory (%zu bytes to compress)", raw);
    gbp_stage *st;
    int rc = gbp_mem_stage_open(f->mem, &st, wb->space, wb->data, es, &wb->box, 0, raw);
    const uint8_t *p;
    size_t off, len;
    while (rc == GPUBP_OK && (rc = gbp_mem_stage_next(st, &p, &off, &len)) == 1) {
        memcpy(t + off, p, len);
        rc = GPUBP_OK;
    }
    gbp_mem_stage_close(st);
    if (rc < 0) {
        gbp_free(t);
        return rc;
    }
    *src = *tmp = t;
    return GPUBP_OK;
}

static int compress_ahead(gpubp_file *f, gbp_wblock *first)
{
    size_t i0 = (size_t)(first - f->wr.blocks), n = 0, bytes = 0;
    while (i0 + n < f->wr.nblocks && n < GBP_AHEAD_BLOCKS && bytes < GBP_AHEAD_BYTES &&
           is_small(f, &f->wr.blocks[i0 + n]))
        bytes += (size_t)f->wr.blocks[i0 + n++].payload_len;
    ahead_task *a = gbp_calloc(n, sizeof *a);
    uint8_t **tmp = gbp_calloc(n, sizeof *tmp);
    int rc = a && tmp ? GPUBP_OK : gbp_error(GPUBP_ERR_NOMEM, 0, "out of memory (compression)");
    for (size_t t = 0; rc == GPUBP_OK && t < n; t++) {
        a[t].wb = &f->wr.blocks[i0 + t];
        rc = gather(f, a[t].wb, &a[t].src, &tmp[t]);
        a[t].z = rc == GPUBP_OK ? gbp_malloc(gbp_blosc_bound((size_t)a[t].wb->payload_len)) : NULL;
        if (rc == GPUBP_OK && !a[t].z)
            rc = gbp_error(GPUBP_ERR_NOMEM, 0, "out of memory (compression)");
    }
    if (rc == GPUBP_OK) {
        int threads = first->var->op_threads ? first->var->op_threads : f->params.compress_threads;
        gbp_pool_run(gbp_pool_workers(threads, n), n, ahead_run, a);
    }
    for (size_t t = 0; a && t < n; t++) { /* the first failure is reported; nothing is kept then */
        if (rc == GPUBP_OK && a[t].rc) rc = gbp_error(a[t].rc, 0, "%s", a[t].msg);
    }
    for (size_t t = 0; a && t < n; t++) {
        if (rc == GPUBP_OK) {
            a[t].wb->zahead = a[t].z;
            a[t].wb->zahead_len = a[t].zlen;
        } else {
            gbp_free(a[t].z);
        }
        gbp_free(tmp[t]);
    }
    gbp_free(a);
    gbp_free(tmp);
    return rc;
}

/* The first CPU sub-block of a split device put (cpu_lane; writer.c zcpu_lanes): the device's
 * first batches of the put's other sub-blocks are launched now, so that they are coded while the
 * CPU codes this one and the lanes after it. A put whose device sub-blocks would not go to the
 * device anyway is left to the CPU path throughout. */
static int lane_prelaunch(gpubp_file *f, const gbp_wblock *wb)
{
    if (GBP_SPLIT_INDEX(wb->meta.split) != 0 || wb < f->wr.blocks ||
        wb >= f->wr.blocks + f->wr.nblocks)
        return GPUBP_OK;
    size_t i = (size_t)(wb - f->wr.blocks), n = GBP_SPLIT_COUNT(wb->meta.split);
    for (size_t j = 1; j < n && i + j < f->wr.nblocks; j++) {
        const gbp_wblock *g = &f->wr.blocks[i + j];
        if (g->var != wb->var || g->data != wb->data || GBP_SPLIT_INDEX(g->meta.split) != j)
            return GPUBP_OK;
        if (g->cpu_lane || g->performed) continue;
        const gbp_dzops *ops;
        void *dctx;
        int dev = on_device(f, g, 1, &ops, &dctx);
        if (dev <= 0) return dev;
        return gbp_zdev_prelaunch(f, g, ops, dctx);
    }
    return GPUBP_OK;
}

/* ---- min/max of host pieces on the compression threads -----------------------------------------
 * A piece of a compressed host block is scanned for its min/max before it is coded: on one thread
 * that scan takes as long as 16 threads' coding of the piece. So the pool scans it in ranges, each
 * folded by gbp_minmax from the same start (the values before the piece, or its first element),
 * and the caller merges the ranges' results in order. The fold keeps the first smallest and the
 * last largest element, which ranges merged in order give too, as long as no NaN is met (a NaN
 * makes the largest restart behind it): float and double ranges report one, and then the piece
 * is scanned again on one thread, as are complex and long double pieces. */
#define GBP_MM_RANGES 64
#define GBP_MM_MIN_BYTES ((size_t)1 << 20) /* smaller pieces: one thread */

typedef struct mm_par {
    int type;
    const uint8_t *p;
    size_t es, n, per;
    uint8_t init[2][16];
    uint8_t res[GBP_MM_RANGES][2][16];
    int nan[GBP_MM_RANGES];
} mm_par;

static int has_nan(int type, const uint8_t *p, size_t n)
{
    int any = 0;
    if (type == GPUBP_TYPE_FLOAT) {
        for (size_t i = 0; i < n; i++) {
            float v;
            memcpy(&v, p + 4 * i, 4);
            any |= v != v;
        }
    } else if (type == GPUBP_TYPE_DOUBLE) {
        for (size_t i = 0; i < n; i++) {
            double v;
            memcpy(&v, p + 8 * i, 8);
            any |= v != v;
        }
    }
    return any;
}

static void mm_range(void *ctx, size_t k, int worker)
{
    (void)worker;
    mm_par *m = ctx;
    size_t a = k * m->per, b = a + m->per < m->n ? a + m->per : m->n;
    memcpy(m->res[k], m->init, sizeof m->init);
    gbp_minmax(m->type, m->p + a * m->es, b - a, m->res[k][0], m->res[k][1], 1);
    m->nan[k] = has_nan(m->type, m->p + a * m->es, b - a);
}

/* gbp_minmax(type, p, n, min, max, have) on up to `threads` workers: the same values. */
static void minmax_threads(int type, const void *p, size_t n, void *min, void *max, int have,
                           int threads)
{
    size_t es = gbp_type_size(type);
    int real = type != GPUBP_TYPE_FLOAT_COMPLEX && type != GPUBP_TYPE_DOUBLE_COMPLEX &&
               type != GPUBP_TYPE_LONG_DOUBLE && es > 0 && es <= 8;
    size_t ranges = n * es / (GBP_MM_MIN_BYTES / 4);
    int w = real && n * es >= GBP_MM_MIN_BYTES ? gbp_pool_workers(threads, ranges) : 1;
    if (w < 2) {
        gbp_minmax(type, p, n, min, max, have);
        return;
    }
    mm_par mp, *m = &mp;
    if (ranges > GBP_MM_RANGES) ranges = GBP_MM_RANGES;
    m->type = type;
    m->p = p;
    m->es = es;
    m->n = n;
    m->per = (n + ranges - 1) / ranges;
    ranges = (n + m->per - 1) / m->per;
    memcpy(m->init[0], have ? min : p, es);
    memcpy(m->init[1], have ? max : p, es);
    int nan = has_nan(type, m->init[0], 1) || has_nan(type, m->init[1], 1);
    if (!nan) gbp_pool_run(w, ranges, mm_range, m);
    for (size_t k = 0; !nan && k < ranges; k++) nan = m->nan[k];
    if (nan) {
        gbp_minmax(type, p, n, min, max, have);
    } else {
        uint8_t mn[16], mx[16], spare[16];
        memcpy(mn, m->init[0], es);
        memcpy(mx, m->init[1], es);
        for (size_t k = 0; k < ranges; k++) { /* in order: the first smallest, the last largest */
            memcpy(spare, mx, es);
            gbp_minmax(type, m->res[k][0], 1, mn, spare, 1);
            memcpy(spare, mn, es);
            gbp_minmax(type, m->res[k][1], 1, spare, mx, 1);
        }
        memcpy(min, mn, es);
        memcpy(max, mx, es);
    }
}

/* Sets the operator record of a written compressed block. */
static void set_op(gbp_wblock *wb, size_t raw, size_t total)
{
    memset(&wb->opstore, 0, sizeof wb->opstore);
    memcpy(wb->opstore.name, "blosc", 6);
    wb->opstore.pre_type = (uint8_t)wb->var->type;
    wb->opstore.raw_size = raw;
    wb->opstore.size = total;
    wb->meta.op = &wb->opstore;
    wb->payload_len = total;
}

int gbp_write_compressed(gpubp_file *f, gbp_wblock *wb, int fd, const char *fname)
{
    gpubp_variable *v = wb->var;
    size_t es = gbp_type_size(v->type), raw = (size_t)wb->payload_len;
    int threads = v->op_threads ? v->op_threads : f->params.compress_threads;
    (void)fname; /* the I/O threads name the data file in their errors; src/ adds the path */
    const gbp_dzops *ops;
    void *dctx;
    int dev = wb->zahead ? 0 : on_device(f, wb, 0, &ops, &dctx);
    if (dev < 0) return dev;
    if (dev) {
        size_t total = 0;
        int rc = gbp_zdev_write(f, wb, fd, ops, dctx, &total);
        if (rc == GPUBP_OK) set_op(wb, raw, total);
        return rc;
    }
    if (wb->cpu_lane) GBP_FORWARD_IF_ERROR(lane_prelaunch(f, wb));
    if (!wb->zahead && is_small(f, wb)) GBP_FORWARD_IF_ERROR(compress_ahead(f, wb));
    if (wb->zahead) {
        int rc = gbp_pwrite_all(fd, wb->zahead, wb->zahead_len, wb->meta.payload_offset, fname);
        if (rc == GPUBP_OK) set_op(wb, raw, wb->zahead_len);
        gbp_free(wb->zahead);
        wb->zahead = NULL;
        return rc;
    }
    gbp_blosc_enc *e = NULL;
    gbp_stage *st = NULL;
    int rc = gbp_blosc_enc_open(&e, raw, es, v->op_codec, v->op_level, v->op_shuffle,
                                threads);
    /* min/max of a contiguous device block by the device's reduction kernel (delivered at the
     * step's gbp_mem_sync, as for uncompressed device blocks), not by the caller over each piece
     * landed in the pool: one thread's pass over the data took as long as 16 threads' coding */
    int dev_mm = wb->space == GPUBP_MEM_GPU && gbp_box_is_contiguous(&wb->box);
    if (rc == GPUBP_OK && dev_mm)
        rc = gbp_mem_dev_minmax(f->mem, (const uint8_t *)wb->data + gbp_box_offset(&wb->box) * es,
                                v->type, raw / es, wb->meta.mm, wb->meta.mm + 16);
    if (rc == GPUBP_OK)
        rc = gbp_mem_stage_open(f->mem, &st, wb->space, wb->data, es, &wb->box, 0, raw);
    const uint8_t *p;
    size_t off, len;
    int have = 0;
    while (rc == GPUBP_OK && (rc = gbp_mem_stage_next(st, &p, &off, &len)) == 1) {
        rc = GPUBP_OK;
        if (!dev_mm) minmax_threads(v->type, p, len / es, wb->meta.mm, wb->meta.mm + 16, have, threads);
        have = 1;
        size_t need = gbp_blosc_enc_out_bound(e, len);
        if (need > f->wr.zout_cap) { /* kept from block to block (f->wr.zout) */
            rc = gbp_mem_wait_writes(f->mem);
            gbp_free(f->wr.zout);
            f->wr.zout = rc == GPUBP_OK ? gbp_malloc(need) : NULL;
            f->wr.zout_cap = f->wr.zout ? need : 0;
            if (!f->wr.zout && rc == GPUBP_OK)
                rc = gbp_error(GPUBP_ERR_NOMEM, 0,
                               "out of memory (%zu bytes of compressed output)", need);
        }
        uint8_t *out = f->wr.zout;
        size_t cap = f->wr.zout_cap;
        /* compresses while the I/O threads still write the previous piece's output */
        if (rc == GPUBP_OK) rc = gbp_blosc_enc_put(e, p, len);
        if (rc == GPUBP_OK) rc = gbp_mem_wait_writes(f->mem);
        const gbp_blosc_extent *x;
        size_t nx;
        if (rc == GPUBP_OK) rc = gbp_blosc_enc_emit(e, out, cap, &x, &nx);
        if (rc == GPUBP_OK)
            rc = gbp_zblock_write_extents(f->mem, fd, wb->meta.payload_offset, x, nx, 0);
    }
    gbp_mem_stage_close(st);
    if (rc < 0) goto done;
    rc = gbp_mem_wait_writes(f->mem);
    const gbp_blosc_extent *x = NULL;
    const gbp_blosc_redo *r = NULL;
    size_t nx = 0, nr = 0, total = 0;
    if (rc == GPUBP_OK) rc = gbp_blosc_enc_finish(e, &x, &nx, &r, &nr, &total);
    if (rc == GPUBP_OK)
        rc = gbp_zblock_write_extents(f->mem, fd, wb->meta.payload_offset, x, nx, 0);
    for (size_t i = 0; rc == GPUBP_OK && i < nr; i++) rc = gbp_zblock_write_redo(f, wb, fd, &r[i]);
    if (rc == GPUBP_OK) rc = gbp_mem_wait_writes(f->mem);
    if (rc != GPUBP_OK) goto done;
    set_op(wb, raw, total);
done:
    if (rc < 0) (void)gbp_mem_wait_writes(f->mem); /* nothing may still read f->wr.zout */
    gbp_blosc_enc_close(e);
    return rc < 0 ? rc : GPUBP_OK;
}

/* ---- reads into device memory ------------------------------------------------------------------
 * The block's uncompressed bytes are never all on the host: each pool slot gets, on an I/O
 * thread, the decoded bytes of the span it needs (the Blosc2 blocks that hold them, decoded on
 * the compression threads), and its host-to-device copy runs while the next slots are decoded. */
int gbp_zspan_fill(void *ctx, uint8_t *to, size_t off, size_t len)
{
    const gbp_zspan *c = ctx;
    return gbp_blosc_decompress_range(c->z, c->zlen, c->raw, off, off + len, to, c->threads);
}

int gbp_read_compressed_device(gpubp_file *f, const uint8_t *z, size_t zlen, size_t raw,
                               size_t es, const gbp_box *fbox, void *dst, const gbp_box *dbox)
{
    if (gbp_box_is_contiguous(fbox) && gbp_box_is_contiguous(dbox) &&
        gbp_box_elements(fbox) * es == raw) { /* the whole block: decoded on the device */
        int dev = gbp_zdev_read(f, z, zlen, raw, (uint8_t *)dst + gbp_box_offset(dbox) * es);
        if (dev != 0) return dev < 0 ? dev : GPUBP_OK;
    } else if (f->params.compress_device >= 0) {
        gbp_mem_dz_note(f->mem, 1, 0, 0, "a read of part of a compressed block: the CPU decoder");
    }
    gbp_zspan c = {z, zlen, raw, f->params.compress_threads};
    int rc = gbp_mem_read_fill(f->mem, gbp_zspan_fill, &c, es, fbox, dst, dbox);
    int rc2 = gbp_mem_sync(f->mem); /* z and c are the caller's until every fill is done */
    return rc != GPUBP_OK ? rc : rc2;
}

int gbp_zblock_codec(const char *op, int *codec)
{
    GBP_RETURN_ERROR_IF(gbp_blosc_codec_from_name(op, codec) != GPUBP_OK, GPUBP_ERR_CODEC,
                        "gpubp_variable_add_operation: operator '%s' is not supported (blosclz, "
                        "lz4, lz4hc, zlib or zstd)", op);
    return gbp_blosc_check_codec(*codec);
}

int gbp_zblock_params(const char *params, int *level, int *shuffle, int *threads)
{
    return gbp_blosc_parse_params(params, level, shuffle, threads);
}
