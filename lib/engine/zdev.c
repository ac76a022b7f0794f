/* The GPU compression path: compressed blocks in device memory are filtered, coded and framed on
 * the device, so that only the operator buffer's bytes cross to the host (docs/compression.md,
 * "The GPU path").
 *
 * Write, piece by piece (GBP_ZDEV_PIECE of input, whole Blosc2 blocks of one chunk): the filter
 * kernel shuffles the piece's blocks into device scratch; the staged encoder (lib/compress, with
 * an outside codec) cuts them into streams; the device codec (nvCOMP, or the CPU stand-in on the
 * simulated device) codes the batch and reports per stream a run or a coded length; the encoder
 * applies Blosc2's rules in block order and lists the segments (small fields, coded streams,
 * filtered or raw input) of its extents; the device assembles them into a device buffer, whose
 * extents the I/O threads write through the pinned pool while the next piece is coded. Chunk
 * headers, block starts and the prefix (host, small) are written last; a chunk that did not
 * shrink is rewritten raw from the source, as on the CPU path. */
#include "engine/zdev.h"

#include "compress/blosczlib.h"
#include "engine/zblock.h"
#include "memspace/box.h"
#include "memspace/memdev.h"

#include <stdio.h>
#include <string.h>

#include <stdatomic.h>

#define GBP_ZDEV_PIECE ((size_t)64 << 20)

static atomic_size_t piece_hook;

void gbp_zdev_set_piece(size_t bytes) { atomic_store(&piece_hook, bytes); }

int gbp_zdev_choose(gpubp_file *f, int codec, int contiguous, int quiet, const char *what,
                    const gbp_dzops **ops, void **dctx)
{
    int mode = f->params.compress_device, sim = 0;
    if (mode < 0) return 0;
    const char *why = NULL;
    char buf[200];
    *ops = NULL;
    if (!contiguous) {
        why = "the block is not one contiguous run of device memory (a memory selection or "
              "sub-box)";
    } else if (gbp_mem_dev_ctx(f->mem, dctx, &sim) != GPUBP_OK) {
        snprintf(buf, sizeof buf, "no device: %s", gbp_error_message());
        gbp_error_clear();
        why = buf;
    } else {
        *ops = sim ? gbp_blosc_cpu_dzops() : gbp_cuda_dzops();
        if (!*ops) why = "this libgpubp was built without CUDA";
        else why = (*ops)->unavailable(codec);
    }
    if (!why) return 1;
    if (mode > 0)
        return gbp_error(GPUBP_ERR_NOT_SUPPORTED, 0,
                         "compress_device=on: %s (codec %s) cannot be compressed or "
                         "decompressed on the device: %s", what, gbp_blosc_codec_str(codec), why);
    if (!quiet) {
        char note[320];
        snprintf(note, sizeof note, "%s: %.290s", gbp_blosc_codec_str(codec), why);
        gbp_mem_dz_note(f->mem, 0, 0, 0, note);
    }
    return 0;
}

/* ---- write ---------------------------------------------------------------------------------- */

typedef struct zw {
    gbp_mem *mem;
    const gbp_dzops *ops;
    void *z;
    uint8_t *filt, *dout; /* device: the filtered piece, the assembled output */
    uint8_t *out;         /* host: the fields of the output (its image; only fields written) */
    size_t cap;
    size_t *off, *len, ncap;
    int16_t *run;
    size_t *clen;
    gbp_dz_seg *seg;
    size_t segcap;
} zw;

static int grow_arrays(zw *w, size_t n)
{
    if (n <= w->ncap) return GPUBP_OK;
    gbp_free(w->off);
    gbp_free(w->len);
    gbp_free(w->run);
    gbp_free(w->clen);
    w->off = gbp_malloc(n * sizeof *w->off);
    w->len = gbp_malloc(n * sizeof *w->len);
    w->run = gbp_malloc(n * sizeof *w->run);
    w->clen = gbp_malloc(n * sizeof *w->clen);
    w->ncap = w->off && w->len && w->run && w->clen ? n : 0;
    return w->ncap ? GPUBP_OK : gbp_error(GPUBP_ERR_NOMEM, 0, "out of memory (%zu streams)", n);
}

/* The encoder's segments with device addresses: filtered input in w->filt (piece at po), raw
 * input at in. */
static int device_segments(zw *w, const gbp_dz_seg *s, size_t n, const uint8_t *in, size_t po)
{
    if (n > w->segcap) {
        gbp_free(w->seg);
        w->seg = gbp_malloc(n * sizeof *w->seg);
        w->segcap = w->seg ? n : 0;
        if (!w->seg) return gbp_error(GPUBP_ERR_NOMEM, 0, "out of memory (%zu segments)", n);
    }
    for (size_t i = 0; i < n; i++) {
        w->seg[i] = s[i];
        if (s[i].kind == GBP_XSEG_FILTERED) {
            w->seg[i].kind = GBP_SEG_DEV;
            w->seg[i].src = (uint64_t)(uintptr_t)(w->filt + (s[i].src - po));
        } else if (s[i].kind == GBP_XSEG_INPUT) {
            w->seg[i].kind = GBP_SEG_DEV;
            w->seg[i].src = (uint64_t)(uintptr_t)(in + s[i].src);
        }
    }
    return GPUBP_OK;
}

/* Queues the extents of one emit: device bytes of w->dout, zeros from the host. */
static int write_piece(zw *w, int fd, uint64_t base, const gbp_blosc_extent *x, size_t nx)
{
    for (size_t i = 0; i < nx; i++) {
        if (!x[i].p) {
            GBP_FORWARD_IF_ERROR(gbp_zblock_write_extents(w->mem, fd, base, &x[i], 1));
            continue;
        }
        gbp_box b;
        size_t len = x[i].len;
        gbp_box_dense(&b, 1, &len);
        GBP_FORWARD_IF_ERROR(gbp_mem_write(w->mem, GPUBP_MEM_GPU, fd, base + x[i].off,
                                           w->dout + (x[i].p - w->out), GPUBP_TYPE_UINT8, &b,
                                           NULL, NULL));
    }
    return GPUBP_OK;
}

static void zw_free(zw *w)
{
    gbp_mem_dev_free(w->mem, w->filt);
    gbp_mem_dev_free(w->mem, w->dout);
    gbp_free(w->out);
    gbp_free(w->off);
    gbp_free(w->len);
    gbp_free(w->run);
    gbp_free(w->clen);
    gbp_free(w->seg);
    if (w->z) w->ops->close(w->z);
}

/* Codes and writes the input bytes [po, po + len) (whole blocks of one chunk, block size bsz). */
static int zdev_piece(zw *w, gbp_blosc_enc *e, const uint8_t *in, size_t po, size_t len,
                      size_t bsz, int filter, size_t ts, int codec, int level, int fd,
                      uint64_t base)
{
    const uint8_t *src = in + po;
    if (filter) GBP_FORWARD_IF_ERROR(w->ops->filter(w->z, filter, 0, src, w->filt, len, bsz, ts));
    else w->filt = (uint8_t *)(uintptr_t)src; /* the input is its own filtered bytes */
    const gbp_blosc_xstream *xs;
    size_t nxs;
    GBP_FORWARD_IF_ERROR(gbp_blosc_enc_put_ext(e, len, &xs, &nxs));
    GBP_FORWARD_IF_ERROR(grow_arrays(w, nxs + 1));
    for (size_t i = 0; i < nxs; i++) {
        w->off[i] = xs[i].in_off - po;
        w->len[i] = xs[i].len;
    }
    if (nxs)
        GBP_FORWARD_IF_ERROR(w->ops->encode(w->z, codec, level, w->filt, nxs, w->off, w->len,
                                            w->run, w->clen));
    /* the previous piece's output may still be on its way to the file */
    GBP_FORWARD_IF_ERROR(gbp_mem_wait_writes(w->mem));
    const gbp_blosc_extent *x;
    const gbp_dz_seg *seg;
    size_t nx, nseg;
    GBP_FORWARD_IF_ERROR(
        gbp_blosc_enc_emit_ext(e, w->run, w->clen, w->out, w->cap, &x, &nx, &seg, &nseg));
    GBP_FORWARD_IF_ERROR(device_segments(w, seg, nseg, in, po));
    if (nseg) GBP_FORWARD_IF_ERROR(w->ops->assemble(w->z, w->dout, w->seg, nseg));
    return write_piece(w, fd, base, x, nx);
}

int gbp_zdev_write(gpubp_file *f, gbp_wblock *wb, int fd, const gbp_dzops *ops, void *dctx,
                   size_t *total)
{
    gpubp_variable *v = wb->var;
    size_t es = gbp_type_size(v->type), raw = (size_t)wb->payload_len;
    size_t ts = es > 255 ? 1 : es;
    int codec = v->op_codec, level = v->op_level, shuffle = v->op_shuffle;
    int filter = shuffle == GBP_BLOSC_SHUFFLE && ts > 1 ? 1 : shuffle == GBP_BLOSC_BITSHUFFLE ? 2 : 0;
    int threads = v->op_threads ? v->op_threads : f->params.compress_threads;
    const uint8_t *in = (const uint8_t *)wb->data + gbp_box_offset(&wb->box) * es;
    uint64_t base = wb->meta.payload_offset;
    zw w;
    memset(&w, 0, sizeof w);
    w.mem = f->mem;
    w.ops = ops;
    gbp_blosc_enc *e = NULL;
    size_t piece = atomic_load(&piece_hook) ? atomic_load(&piece_hook) : GBP_ZDEV_PIECE;
    size_t bsz0 = gbp_blosc_blocksize(raw < gbp_blosc_max_chunk() ? raw : gbp_blosc_max_chunk(),
                                      es, codec, level, shuffle); /* the largest block */
    if (piece < bsz0) piece = bsz0;
    if (piece > raw) piece = raw;
    int rc = gbp_blosc_enc_open(&e, raw, es, codec, level, shuffle, threads);
    if (rc == GPUBP_OK) rc = ops->open(dctx, &w.z);
    if (rc == GPUBP_OK) {
        w.cap = gbp_blosc_enc_out_bound(e, piece);
        w.out = gbp_malloc(w.cap);
        rc = w.out ? GPUBP_OK : gbp_error(GPUBP_ERR_NOMEM, 0, "out of memory (%zu bytes)", w.cap);
    }
    if (rc == GPUBP_OK) rc = gbp_mem_dev_alloc(f->mem, (void **)&w.dout, w.cap);
    if (rc == GPUBP_OK && filter) rc = gbp_mem_dev_alloc(f->mem, (void **)&w.filt, piece);
    if (rc == GPUBP_OK)
        rc = gbp_mem_dev_minmax(f->mem, in, v->type, raw / es, wb->meta.mm, wb->meta.mm + 16);
    uint8_t *filt = w.filt;
    size_t csz = gbp_blosc_max_chunk();
    for (size_t po = 0; rc == GPUBP_OK && po < raw;) {
        size_t c0 = po / csz * csz, cend = raw - c0 < csz ? raw : c0 + csz;
        size_t bsz = gbp_blosc_blocksize(cend - c0, es, codec, level, shuffle);
        size_t len = piece / bsz * bsz;
        if (len == 0) len = bsz;
        if (len > cend - po) len = cend - po;
        rc = zdev_piece(&w, e, in, po, len, bsz, filter, ts, codec, level, fd, base);
        if (!filter) w.filt = NULL;
        po += len;
    }
    w.filt = filt;
    if (rc == GPUBP_OK) rc = gbp_mem_wait_writes(f->mem);
    const gbp_blosc_extent *x = NULL;
    const gbp_blosc_redo *r = NULL;
    size_t nx = 0, nr = 0;
    if (rc == GPUBP_OK) rc = gbp_blosc_enc_finish(e, &x, &nx, &r, &nr, total);
    if (rc == GPUBP_OK) rc = gbp_zblock_write_extents(f->mem, fd, base, x, nx);
    for (size_t i = 0; rc == GPUBP_OK && i < nr; i++) rc = gbp_zblock_write_redo(f, wb, fd, &r[i]);
    int rc2 = gbp_mem_sync(f->mem); /* the device buffers are read until the writes are done */
    if (rc == GPUBP_OK) rc = rc2;
    if (rc == GPUBP_OK) gbp_mem_dz_note(f->mem, 0, raw, *total, NULL);
    zw_free(&w);
    gbp_blosc_enc_close(e);
    return rc;
}
