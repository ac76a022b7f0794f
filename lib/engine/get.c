/* Gets: block reads (local, remote, compressed) and the deferred-get queue. */
#include "engine/get.h"

#include "engine/bp5read.h"
#include "engine/dataset.h"
#include "engine/handles.h"
#include "engine/rvar.h"
#include "engine/zblock.h"
#include "engine/zdev.h"
#include "engine/zdev_read.h"

#include "common/params.h"
#include "compress/blosczlib.h"
#include "compress/bzip2_op.h"
#include "format/bp5_op.h"
#include "memspace/box.h"
#include "memspace/mem_dz.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

/* Parallel step-mode readers remember the first failed get of the step for end_step. */
int gbp_reader_get_failed(gpubp_file *f, int rc)
{
    if (rc < 0 && f->comm && f->mode == GPUBP_MODE_READ && f->in_step && !f->failed_step) {
        snprintf(f->failed_msg, sizeof f->failed_msg, "%s", gbp_error_message());
        f->failed_rc = rc;
        f->failed_step = 1;
    }
    return rc;
}

typedef struct span_ctx {
    gbp_mem *mem;
    gpubp_memory_space space;
    const uint8_t *span;   /* the block's bytes from `skip` on */
    size_t skip;
    uint8_t *dst;
} span_ctx;

static int span_run(void *ctx, size_t a_off, size_t b_off, size_t bytes)
{
    span_ctx *c = ctx;
    gbp_box one;
    gbp_box_dense(&one, 1, &bytes);
    return gbp_mem_scatter(c->mem, c->space, c->span + (a_off - c->skip), 1, &one, c->dst + b_off,
                           &one);
}

/* The bytes of a block that hold box fbox, [first, first + span) from the box's first byte:
 * produced by `fill` straight into a host destination when both boxes are one run, else into a
 * buffer of the span's size and copied into the destination box run by run. Remote blocks fetch
 * their span; compressed blocks read into host memory decode only the Blosc2 blocks of it. */
static int read_span(gpubp_file *f, gpubp_memory_space space, size_t es, const gbp_box *fbox,
                     uint8_t *dst, const gbp_box *dbox, gbp_fill_fn fill, void *ctx)
{
    size_t first = gbp_box_offset(fbox) * es, span = gbp_box_span(fbox, es);
    if (span == 0) return GPUBP_OK;
    if (space == GPUBP_MEM_HOST && gbp_box_is_contiguous(fbox) && gbp_box_is_contiguous(dbox))
        return fill(ctx, dst + gbp_box_offset(dbox) * es, first, span);
    uint8_t *tmp = gbp_malloc(span);
    if (!tmp) return gbp_error(GPUBP_ERR_NOMEM, 0, "out of memory (%zu bytes)", span);
    int rc = fill(ctx, tmp, first, span);
    if (rc == GPUBP_OK) {
        span_ctx c = {f->mem, space, tmp, first, dst};
        rc = gbp_box_foreach_run(fbox, dbox, es, span_run, &c);
    }
    gbp_free(tmp);
    return rc;
}

/* A remote block's bytes [off, off + len) over the connection (a gbp_fill_fn) */
typedef struct remote_span {
    gpubp_file *f;
    const gbp_block *b;
} remote_span;

static int remote_fill(void *ctx, uint8_t *to, size_t off, size_t len)
{
    const remote_span *c = ctx;
    return gbp_dataset_pread(c->f, c->b->subfile, -1, to, len, c->b->payload_offset + off);
}

/* Every operator buffer (blosc, bzip2, BP5's) says its uncompressed size at 4: checked before
 * that size is allocated, so that a damaged count in the metadata never asks for more memory
 * than the buffer holds. */
static int op_header_check(const uint8_t *z, size_t zn, size_t raw)
{
    if (zn < 12)
        return gbp_error(GPUBP_ERR_FORMAT, 0, "an operator buffer of %zu bytes, shorter than its "
                         "12-byte header", zn);
    if (gbp_ld64(z + 4) != raw)
        return gbp_error(GPUBP_ERR_FORMAT, 0, "the operator buffer says %llu uncompressed bytes, "
                         "the metadata %zu", (unsigned long long)gbp_ld64(z + 4), raw);
    return GPUBP_OK;
}

/* A FORMAT or CODEC failure of a block's payload (a short data file, a damaged operator buffer,
 * a codec or operator this build does not decode) names the data file, the variable and the
 * block's offset before the decoder's own message. */
static int name_block(int rc, const gpubp_file *f, const gpubp_variable *v, const gbp_block *b)
{
    if (rc != GPUBP_ERR_FORMAT && rc != GPUBP_ERR_CODEC) return rc;
    return gbp_block_name_error(rc, f, v->name, b);
}

/* Whether block b, of boxes fbox (in the block) and dbox (in the destination), is read whole into
 * device memory on the device codec path (blosc, a local data file fd, the whole block one dense
 * run of the destination): 1 with its operator buffer, size and place in the destination in *m. */
static int zdev_whole(const gpubp_file *f, const gpubp_variable *v, gpubp_memory_space space,
                      const gbp_block *b, int fd, const gbp_box *fbox, const gbp_box *dbox,
                      gbp_zblk *m)
{
    size_t es = gbp_rvar_esize(v);
    if (space != GPUBP_MEM_GPU || !b->op || strcmp(b->op->name, "blosc") != 0 || fd < 0 ||
        f->rd.remote || f->params.compress_device < 0 || b->has_value ||
        b->payload_offset == UINT64_MAX || !gbp_box_is_contiguous(fbox) ||
        !gbp_box_is_contiguous(dbox) || gbp_box_elements(fbox) * es != b->op->raw_size)
        return 0;
    *m = (gbp_zblk){fd, b->payload_offset, (size_t)b->op->size, (size_t)b->op->raw_size,
                    gbp_box_offset(dbox) * es};
    return 1;
}

/* Reads the group g of blocks (from blocks[0] on; each one's bytes checked to lie within its
 * data file first) into dst on the device codec path, reading the next group ahead (NULL or n 0:
 * none); what the device does not decode, each block by gbp_read_compressed_device from the
 * buffers read (the device for a block it decodes alone, else the CPU decoder). */
static int read_group(gpubp_file *f, const gpubp_variable *v, const gbp_block *blocks,
                      const gbp_zahead *g, uint8_t *dst, const gbp_zahead *ahead)
{
    for (size_t k = 0; k < g->n; k++)
        GBP_FORWARD_IF_ERROR(gbp_block_check_span(f, v->name, &blocks[k], g->b[k].fd, g->b[k].zlen));
    uint8_t *z = NULL;
    int rc = gbp_zdev_read_group(f, g->b, g->n, dst, &z, ahead);
    if (rc != 0) return rc < 0 ? rc : GPUBP_OK;
    size_t es = gbp_rvar_esize(v);
    for (size_t k = 0, zo = 0; rc == GPUBP_OK && k < g->n; zo += g->b[k].zlen, k++) {
        const gbp_zblk *m = &g->b[k];
        const uint8_t *zk = z + zo;
        rc = op_header_check(zk, m->zlen, m->raw);
        if (rc == GPUBP_OK) { /* the whole block, as one dense run of elements */
            size_t ne = m->raw / es;
            gbp_box bx;
            gbp_box_dense(&bx, 1, &ne);
            rc = gbp_read_compressed_device(f, zk, m->zlen, m->raw, es, &bx, dst + m->doff, &bx);
        }
        rc = name_block(rc, f, v, &blocks[k]);
    }
    return rc;
}

/* A compressed block: read the operator buffer, check its size against the metadata, then
 * decode the box: blosc into host memory only the span that holds it (read_span), into device
 * memory on the device or span by span through the pool (zblock.c, zdev.c); bzip2 and values of
 * the other byte order whole on the host, then copied out. Its FORMAT and CODEC messages get the
 * block's head ("DATAFILE: 'VAR': block at offset N") from name_block, its only caller's
 * wrapper. */
static int read_compressed(gpubp_file *f, const gpubp_variable *v, gpubp_memory_space space,
                           int fd, const gbp_block *b, const gbp_box *fbox, uint8_t *dst,
                           const gbp_box *dbox)
{
    size_t es = gbp_rvar_esize(v), n = 1;
    for (size_t i = 0; i < fbox->ndims; i++)
        if (!gbp_mul_ok(n, fbox->dims[i], &n)) n = SIZE_MAX / 2;
    /* BP5, and ADIOS2's null operator in BP4: the buffer names its operator (type, 3 bytes,
     * the raw size, then the bytes for null) */
    int bp5 = !strcmp(b->op->name, "bp5") || !strcmp(b->op->name, "null"), optype = 0;
    int bz = strcmp(b->op->name, "bzip2") == 0;
    const uint8_t *rawp = NULL;
    if (strcmp(b->op->name, "blosc") != 0 && !bp5 && !bz) {
        char name[600]; /* a plugin is named by its buffer: LIBRARY(NAME) */
        if (gbp_rvar_block_operator(v, b, name, sizeof name) != GPUBP_OK)
            snprintf(name, sizeof name, "%s", b->op->name);
        return gbp_error(GPUBP_ERR_CODEC, 0,
                         "'%s': block compressed with operator '%s' is not supported (only blosc, "
                         "bzip2 and null)", v->name, name);
    }
    size_t raw = 0;
    if (!gbp_mul_ok(n, es, &raw) || b->op->raw_size != raw)
        return gbp_error(GPUBP_ERR_FORMAT, 0, "operator says %llu uncompressed bytes, the block "
                         "has %zu", (unsigned long long)b->op->raw_size, raw);
    gbp_zahead one; /* the whole block into device memory: a group of one */
    if (zdev_whole(f, v, space, b, fd, fbox, dbox, &one.b[0])) {
        one.n = 1;
        return read_group(f, v, b, &one, dst, NULL);
    }
    GBP_FORWARD_IF_ERROR(gbp_block_check_span(f, v->name, b, fd, b->op->size));
    /* device destinations: decoded span by span into the pinned pool (zblock.c); values of the
     * other byte order are decoded on the host, converted, then scattered */
    int swap = bp5 && gbp_bp5_swapped(f), dev = space == GPUBP_MEM_GPU && !swap;
    size_t zn = (size_t)b->op->size; /* the buffer's size once in the decoders' layout */
    double t0 = dev && gbp_mem_dz_timing(f->mem) ? gbp_now_s() : 0;
    /* blosc blocks read into device memory from a local file: into the GPU path's buffer (kept
     * per file), by the I/O threads in parallel pieces */
    int zdev = dev && !bp5 && !bz && !f->rd.remote && fd >= 0 && f->params.compress_device >= 0;
    uint8_t *z = zdev ? gbp_zdev_inbuf(f, zn, 0) : gbp_malloc(zn), *r = NULL;
    int rc = z ? GPUBP_OK : gbp_error(GPUBP_ERR_NOMEM, 0, "out of memory (decompression)");
    if (rc == GPUBP_OK && zdev) {
        rc = gbp_zdev_fetch(f, fd, b->payload_offset, zn, z);
    } else if (rc == GPUBP_OK) {
        rc = gbp_dataset_pread(f, b->subfile, fd, z, zn, b->payload_offset);
    }
    if (t0 > 0) gbp_mem_dz_time(f->mem, GBP_DZT_R_FILE, gbp_now_s() - t0);
    if (rc == GPUBP_OK && bp5) rc = gbp_bp5_op_layout(f, &z, &zn, raw);
    /* the operator first: one libgpubp does not decode (a plugin, zfp, sz, ...) is CODEC, named,
     * before its header is read as blosc's or bzip2's sizes */
    if (rc == GPUBP_OK && bp5) rc = bp5_op_parse(z, zn, raw, &optype, &rawp);
    if (rc == GPUBP_OK) rc = op_header_check(z, zn, raw);
    bz = bz || (bp5 && optype == GBP_BZIP2_OP_TYPE); /* bzip2: on the host, then scattered */
    if (rc == GPUBP_OK && (bz || swap) && !(r = gbp_malloc(raw ? raw : 1)))
        rc = gbp_error(GPUBP_ERR_NOMEM, 0, "out of memory (decompression)");
    if (rc == GPUBP_OK && rawp) { /* the null operator */
        if (swap) memcpy(r, rawp, raw);
        else rc = gbp_mem_scatter(f->mem, space, rawp, es, fbox, dst, dbox);
    } else if (rc == GPUBP_OK && bz) {
        rc = gbp_bzip2_decompress(z, zn, r, raw);
    } else if (rc == GPUBP_OK && dev)
        rc = gbp_read_compressed_device(f, z, zn, raw, es, fbox, dst, dbox);
    else if (rc == GPUBP_OK && swap)
        rc = gbp_blosc_decompress(z, zn, r, raw, f->params.compress_threads);
    else if (rc == GPUBP_OK) { /* blosc into host memory */
        gbp_zspan c = {z, zn, raw, f->params.compress_threads};
        rc = read_span(f, space, es, fbox, dst, dbox, gbp_zspan_fill, &c);
    }
    if (rc == GPUBP_OK && swap) rc = gbp_bp5_to_host(f, v, r, raw);
    if (rc == GPUBP_OK && (bz || swap)) rc = gbp_mem_scatter(f->mem, space, r, es, fbox, dst, dbox);
    if (!zdev) gbp_free(z);
    gbp_free(r);
    return rc;
}

/* The boxes of block b that the box (start, count) and the memory selection of s read: fbox in
 * the block, dbox in the destination; 0 when the block is outside the box. */
static int block_boxes(const gpubp_variable *v, const gbp_block *b, const size_t *start,
                       const size_t *count, const gbp_sel *s, int rev, int local, gbp_box *fbox,
                       gbp_box *dbox)
{
    size_t nd = v->sel.ndims;
    fbox->ndims = dbox->ndims = nd;
    for (size_t i = 0; i < nd; i++) {
        size_t bs = local ? 0 : (size_t)GBP_START(b)[i], bc = (size_t)GBP_COUNT(b)[i];
        size_t lo = start[i] > bs ? start[i] : bs;
        size_t hi1 = start[i] + count[i], hi2 = bs + bc;
        size_t hi = hi1 < hi2 ? hi1 : hi2;
        if (lo >= hi) return 0; /* no overlap */
        fbox->dims[i] = bc;
        fbox->start[i] = lo - bs;
        fbox->count[i] = hi - lo;
        dbox->dims[i] = count[i];
        dbox->start[i] = lo - start[i];
        dbox->count[i] = hi - lo;
    }
    if (s->mem_ndims) {
        size_t ms[GBP_MAX_DIMS], mc[GBP_MAX_DIMS];
        memcpy(ms, s->mem_start, nd * sizeof *ms);
        memcpy(mc, s->mem_count, nd * sizeof *mc);
        if (rev) {
            gbp_reverse(ms, nd);
            gbp_reverse(mc, nd);
        }
        for (size_t i = 0; i < nd; i++) {
            dbox->dims[i] = mc[i];
            dbox->start[i] += ms[i];
        }
    }
    return 1;
}

/* Block nb of a global array, when the get reads it whole into device memory on the device
 * codec path (zdev_whole): 1 with its operator buffer, size and place in *m; 0 when not such a
 * block. Whether its bytes lie within the file is checked by its group's read (read_group),
 * before its buffer is read or taken from what was read ahead: a short file fails there with the
 * block's FORMAT error, which wins over the read ahead's. */
static int zdev_member(gpubp_file *f, const gpubp_variable *v, gpubp_memory_space space,
                       const gbp_block *nb, const size_t *start, const size_t *count,
                       const gbp_sel *s, int rev, gbp_zblk *m)
{
    gbp_box fbox, dbox;
    int fd = -1;
    if (space != GPUBP_MEM_GPU || !nb->op || f->rd.remote ||
        !block_boxes(v, nb, start, count, s, rev, 0, &fbox, &dbox))
        return 0;
    if (gbp_dataset_data_fd(f, nb->subfile, &fd) != GPUBP_OK) {
        gbp_error_clear(); /* the block's own read reports it */
        return 0;
    }
    return zdev_whole(f, v, space, nb, fd, &fbox, &dbox, m);
}

/* The group of blocks from b on (of nb) that the get reads whole into device memory as one
 * batch (g->n 0: block b is not such a block): consecutive such blocks whose destinations follow
 * each other, up to cap bytes of input (gbp_zdev_read_group_bytes; one block when it is 0). */
static void group_at(gpubp_file *f, const gpubp_variable *v, gpubp_memory_space space,
                     const gbp_block *blocks, size_t b, size_t nb, const size_t *start,
                     const size_t *count, const gbp_sel *s, int rev, size_t cap, gbp_zahead *g)
{
    g->n = 0;
    size_t raw = 0;
    while (b + g->n < nb && g->n < GBP_ZGROUP_MAX) {
        gbp_zblk m;
        if (!zdev_member(f, v, space, &blocks[b + g->n], start, count, s, rev, &m)) break;
        if (g->n && (m.doff != g->b[g->n - 1].doff + g->b[g->n - 1].raw || raw + m.raw > cap))
            break;
        g->b[g->n++] = m;
        raw += m.raw;
    }
}

/* Reads the part of one array block that intersects the box (start, count) into dst (a whole
 * block read into device memory on the device codec path: a group of one, nothing read ahead). */
static int read_block_part(gpubp_file *f, const gpubp_variable *v, gpubp_memory_space space,
                           const gbp_block *b, const size_t *start, const size_t *count,
                           const gbp_sel *s, int rev, uint8_t *dst, int local)
{
    size_t es = gbp_rvar_esize(v);
    gbp_box fbox, dbox;
    if (!block_boxes(v, b, start, count, s, rev, local, &fbox, &dbox)) return GPUBP_OK;
    /* a block whose value lives in the metadata: one element (BP5 writes a global value of
     * several writers so, seen as a 1-D array of one element a block); a selection of more of it
     * is damaged metadata (fuzz_open, BUG-14) */
    if (b->has_value) {
        if (gbp_box_elements(&fbox) != 1)
            return gbp_error(GPUBP_ERR_FORMAT, 0, "%s: '%s': a block whose value is in the "
                             "metadata (one element) has %zu elements in the selection", f->path,
                             v->name, gbp_box_elements(&fbox));
        /* the source box has the destination's dimensions (all 1): the box walk pairs boxes
         * of one rank */
        gbp_box one;
        size_t c1[GBP_MAX_DIMS];
        for (size_t i = 0; i < dbox.ndims; i++) c1[i] = 1;
        gbp_box_dense(&one, dbox.ndims, c1);
        return gbp_mem_scatter(f->mem, space, b->mm, es, &one, dst, &dbox);
    }
    if (b->payload_offset == UINT64_MAX && v->rv && v->rv->expr)
        return gbp_error(GPUBP_ERR_NOT_FOUND, 0, "'%s': a derived variable written without data "
                         "(ADIOS2 readers built with derived variables compute it from its "
                         "expression: %s)", v->name, v->rv->expr);
    if (b->payload_offset == UINT64_MAX)
        return gbp_error(GPUBP_ERR_NOT_FOUND, 0, "'%s': no data exists for this variable (only its "
                         "statistics were written)", v->name);
    int fd = -1;
    if (!f->rd.remote) GBP_FORWARD_IF_ERROR(gbp_dataset_data_fd(f, b->subfile, &fd));
    if (b->op)
        return name_block(read_compressed(f, v, space, fd, b, &fbox, dst, &dbox), f, v, b);
    if (f->rd.remote) { /* the block's span over the connection */
        remote_span c = {f, b};
        return read_span(f, space, es, &fbox, dst, &dbox, remote_fill, &c);
    }
    if (f->rd.bp5) GBP_FORWARD_IF_ERROR(gbp_bp5_check_block(f, v, b, fd, es)); /* BP5: unchecked */
    if (gbp_bp5_swapped(f)) /* a writer of the other byte order */
        return name_block(gbp_bp5_read_swapped(f, v, space, fd, b, &fbox, dst, &dbox), f, v, b);
    return name_block(gbp_mem_read(f->mem, space, fd, b->payload_offset, es, &fbox, dst, &dbox), f,
                      v, b);
}

/* The end of a get's blocks: what was read ahead and not taken (a block that failed before its
 * successor) is waited for; rc, the blocks' status, wins over the wait's. */
static int ahead_end(gpubp_file *f, int rc)
{
    if (!f->rd.zahead.pending) return rc;
    gbp_saved_error e;
    gbp_error_save(&e, rc, sizeof e.msg);
    return gbp_error_restore(&e, gbp_zdev_read_ahead_wait(f));
}

static int do_get_queued(gpubp_file *f, gpubp_variable *v, const gbp_sel *s, void *data);

/* A get: queue every transfer, then wait for all of them, also when queueing failed part way,
 * so that nothing is still writing into the user's buffer when the call returns. */
static int do_get(gpubp_file *f, gpubp_variable *v, const gbp_sel *s, void *data)
{
    int rc = do_get_queued(f, v, s, data);
    int rc2 = gbp_mem_sync(f->mem);
    return rc ? rc : rc2;
}

static int do_get_queued(gpubp_file *f, gpubp_variable *v, const gbp_sel *s, void *data)
{
    gpubp_memory_space space = GPUBP_MEM_HOST;
    if (v->type != GPUBP_TYPE_STRING) GBP_FORWARD_IF_ERROR(gbp_resolve_space(v, data, &space));
    int rev = gbp_space_reverses(f, space);
    size_t first, n, es = gbp_rvar_esize(v);
    GBP_FORWARD_IF_ERROR(gbp_rvar_steps(v, s, &first, &n));
    uint8_t *out = data;
    if (v->kind == GPUBP_SHAPE_GLOBAL_VALUE) {
        for (size_t t = 0; t < n; t++) {
            const gbp_block *b = NULL;
            GBP_FORWARD_IF_ERROR(gbp_rvar_select_block(v, s, first + t, &b)); /* block 0 unless selected */
            if (v->type == GPUBP_TYPE_STRING) {
                memcpy(out, b->str, b->str_len);
                out[b->str_len] = '\0';
                out += b->str_len + 1;
            } else {
                gbp_box one;
                gbp_box_dense(&one, 0, NULL);
                GBP_FORWARD_IF_ERROR(gbp_mem_scatter(f->mem, space, b->mm, es, &one, out, &one));
                out += es;
            }
        }
        return GPUBP_OK;
    }
    size_t start[GBP_MAX_DIMS], count[GBP_MAX_DIMS];
    uint8_t *next = out;
    for (size_t t = 0; t < n; t++) {
        size_t vs = first + t, sbytes;
        GBP_FORWARD_IF_ERROR(gbp_rvar_box(v, s, vs, rev, start, count));
        GBP_FORWARD_IF_ERROR(gbp_rvar_check_mem_sel(v, s, rev, count));
        GBP_FORWARD_IF_ERROR(gbp_rvar_step_bytes(v, s, vs, rev, &sbytes));
        uint8_t *dst = next;
        next += sbytes;
        const gbp_var_step *st = &v->rv->steps[vs];
        const gbp_block *blocks = NULL;
        GBP_FORWARD_IF_ERROR(gbp_rvar_blocks(v, vs, &blocks));
        if (v->kind == GPUBP_SHAPE_LOCAL_VALUE && v->type == GPUBP_TYPE_STRING) {
            for (size_t b = start[0]; b < start[0] + count[0]; b++) {
                memcpy(dst, blocks[b].str, blocks[b].str_len);
                dst[blocks[b].str_len] = '\0';
                dst += blocks[b].str_len + 1;
            }
        } else if (v->kind == GPUBP_SHAPE_LOCAL_VALUE) {
            /* block b's value (in the metadata) is element b - start of the box */
            for (size_t b = start[0]; b < start[0] + count[0]; b++) {
                gbp_box one, d;
                const size_t n1 = 1;
                gbp_box_dense(&one, 1, &n1);
                d.ndims = 1;
                d.dims[0] = s->mem_ndims ? s->mem_count[0] : count[0];
                d.start[0] = (s->mem_ndims ? s->mem_start[0] : 0) + b - start[0];
                d.count[0] = 1;
                GBP_FORWARD_IF_ERROR(gbp_mem_scatter(f->mem, space, blocks[b].mm, es,
                                                     &one, dst, &d));
            }
        } else if (v->kind == GPUBP_SHAPE_LOCAL_ARRAY) {
            const gbp_block *b = NULL;
            GBP_FORWARD_IF_ERROR(gbp_rvar_select_block(v, s, vs, &b));
            GBP_FORWARD_IF_ERROR(
                read_block_part(f, v, space, b, start, count, s, rev, dst, 1));
        } else {
            /* blocks read whole into device memory go in groups (one batch of the device
             * codec each), the next group read ahead while one decodes */
            int rc = GPUBP_OK, ahead = 0;
            size_t cap = 0;
            if (space == GPUBP_MEM_GPU) {
                ahead = gbp_env_long("GPUBP_ZDEV_READ_AHEAD", 0, 1, 1) != 0;
                cap = gbp_zdev_read_group_bytes();
            }
            gbp_zahead g[2];
            group_at(f, v, space, blocks, 0, st->nblocks, start, count, s, rev, cap, &g[0]);
            for (size_t b = 0, i = 0; rc == GPUBP_OK && b < st->nblocks; i ^= 1) {
                const gbp_zahead *cur = &g[i];
                size_t used = cur->n ? cur->n : 1;
                group_at(f, v, space, blocks, b + used, st->nblocks, start, count, s, rev, cap,
                         &g[i ^ 1]);
                if (cur->n)
                    rc = read_group(f, v, &blocks[b], cur, dst, ahead ? &g[i ^ 1] : NULL);
                else
                    rc = read_block_part(f, v, space, &blocks[b], start, count, s, rev, dst, 0);
                b += used;
            }
            GBP_FORWARD_IF_ERROR(ahead_end(f, rc));
        }
    }
    return GPUBP_OK;
}

int gbp_reader_get(gpubp_file *f, gpubp_variable *v, void *data, gpubp_launch mode)
{
    GBP_RETURN_ERROR_IF(v->file != f, GPUBP_ERR_INVALID_ARG,
                        "gpubp_get: variable '%s' belongs to another file", v->name);
    GBP_RETURN_ERROR_IF(gbp_is_write_mode(f), GPUBP_ERR_WRONG_MODE,
                        "gpubp_get: %s is open for writing", f->path);
    GBP_RETURN_ERROR_IF(f->mode == GPUBP_MODE_READ && !f->in_step, GPUBP_ERR_WRONG_MODE,
                        "gpubp_get: '%s': no step is open (call gpubp_begin_step)", v->name);
    GBP_RETURN_ERROR_IF(mode != GPUBP_SYNC && mode != GPUBP_DEFERRED, GPUBP_ERR_INVALID_ARG,
                        "gpubp_get: invalid launch mode %d", (int)mode);
    if (mode == GPUBP_SYNC) {
        int rc = do_get(f, v, &v->sel, data);
        return rc == GPUBP_ERR_IO ? gbp_error_with_path(rc, f->path) : rc;
    }
    /* deferred: check now what can be checked, read at perform_gets / end_step */
    size_t first, n, one;
    GBP_FORWARD_IF_ERROR(gbp_rvar_steps(v, &v->sel, &first, &n));
    int rev = gbp_space_reverses(f, gbp_rvar_space(v, GPUBP_MEM_DETECT));
    for (size_t t = 0; t < n && v->type != GPUBP_TYPE_STRING; t++)
        GBP_FORWARD_IF_ERROR(gbp_rvar_step_bytes(v, &v->sel, first + t, rev, &one));
    GBP_FORWARD_IF_ERROR(
        gbp_grow((void **)&f->rd.gets, &f->rd.cap_gets, f->rd.ngets + 1, sizeof *f->rd.gets));
    f->rd.gets[f->rd.ngets].var = v;
    f->rd.gets[f->rd.ngets].sel = v->sel;
    f->rd.gets[f->rd.ngets].data = data;
    f->rd.ngets++;
    return GPUBP_OK;
}

/* The deferred gets of a step: every transfer of every get is queued, then one wait for all of
 * them, so that the I/O threads read the pieces of several variables at once (a wait per get
 * drained the pipeline between variables). A get whose queueing failed part way still waits with
 * the others: nothing writes into the user's buffers once this returns. */
int gbp_reader_perform(gpubp_file *f)
{
    int rc = GPUBP_OK;
    gbp_saved_error e; /* the first failure's message, whatever the later gets say */
    for (size_t i = 0; i < f->rd.ngets; i++) {
        int r = do_get_queued(f, f->rd.gets[i].var, &f->rd.gets[i].sel, f->rd.gets[i].data);
        if (rc == GPUBP_OK && r != GPUBP_OK) gbp_error_save(&e, rc = r, sizeof e.msg);
    }
    int rc2 = f->rd.ngets ? gbp_mem_sync(f->mem) : GPUBP_OK;
    if (rc != GPUBP_OK) rc = gbp_error_restore(&e, rc2);
    else rc = rc2;
    f->rd.ngets = 0;
    return gbp_reader_get_failed(f, rc);
}
