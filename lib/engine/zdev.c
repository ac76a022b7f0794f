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
#include "io/fileio.h"
#include "memspace/box.h"
#include "memspace/dz_stub.h"
#include "memspace/mem_dz.h"

#include <stdio.h>
#include <string.h>

#include <stdatomic.h>

#define GBP_ZDEV_PIECE ((size_t)64 << 20)

static atomic_size_t piece_hook;

void gbp_zdev_set_piece(size_t bytes) { atomic_store(&piece_hook, bytes); }

static atomic_size_t n_written, n_read;

void gbp_zdev_counts(size_t *written, size_t *read)
{
    *written = atomic_load(&n_written);
    *read = atomic_load(&n_read);
}

/* GPUBP_MEM_STATS: the time since *t goes to `phase` and *t restarts (t 0: not timing). */
static void lap(gbp_mem *m, int phase, double *t)
{
    if (*t <= 0) return;
    double now = gbp_now_s();
    gbp_mem_dz_time(m, phase, now - *t);
    *t = now;
}

static double lap_start(gbp_mem *m) { return gbp_mem_dz_timing(m) ? gbp_now_s() : 0; }

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

/* Device output buffers (and host header buffers) in rings, kept per file until close: the
 * assembly of a piece goes into the next buffer once the writes out of it queued GBP_ZDEV_RING
 * pieces ago are done (a write fence each), so that the GPU codes and assembles the next pieces,
 * and the next blocks, while the I/O threads still copy and write the earlier ones. */
#define GBP_ZDEV_RING 4

typedef struct zbuf {
    void *p;
    size_t cap;
    unsigned fence; /* writes out of it were queued in this fence (when fenced) */
    int fenced;
} zbuf;

/* A block being written: its encoder, input, geometry; po: its next input byte to launch. */
typedef struct zblk {
    gbp_blosc_enc *e;
    const gbp_wblock *wb;
    const uint8_t *in;
    size_t raw, es, ts, piece, cap, po;
    int codec, level, filter;
} zblk;

/* A piece in flight: input [po, po + len) of its block, filtered and its nxs streams launched
 * into coded set `set`. */
typedef struct zfly {
    size_t po, len, nxs;
    int set;
} zfly;

/* Per coded set: the filtered piece (device), the stream arrays of its launch. */
typedef struct zset {
    uint8_t *filt;
    size_t fcap;
    size_t *off, *len, ncap;
    int16_t *run;
    size_t *clen;
} zset;

typedef struct zstate {
    zbuf dout[GBP_ZDEV_RING]; /* device: assembled outputs */
    zbuf hdr[GBP_ZDEV_RING];  /* host: the prefix and chunk headers of a block */
    int nd, nh;               /* the next of each */
    uint8_t *out;             /* host: the image of the output's fields (only fields written) */
    size_t ocap;
    zset set[2];              /* per coded set: a piece in flight */
    gbp_dz_seg *seg;
    size_t segcap;
    zblk nb;                  /* the next sub-block of a split put, its first piece in flight */
    zfly nf;
    int has_next;
    uint8_t *zin; /* reads: the operator buffer of a block (gbp_zdev_inbuf) */
    size_t zincap;
} zstate;

static void zstate_free(gbp_mem *m, void *p)
{
    zstate *zs = p;
    for (int i = 0; i < GBP_ZDEV_RING; i++) {
        gbp_mem_dev_free(m, zs->dout[i].p);
        gbp_free(zs->hdr[i].p);
    }
    gbp_free(zs->out);
    for (int k = 0; k < 2; k++) {
        zset *q = &zs->set[k];
        gbp_mem_dev_free(m, q->filt);
        gbp_free(q->off);
        gbp_free(q->len);
        gbp_free(q->run);
        gbp_free(q->clen);
    }
    gbp_blosc_enc_close(zs->nb.e); /* a failed step's */
    gbp_free(zs->seg);
    gbp_free(zs->zin);
}

/* A parked state taken by another file (memspace/dz_cache.c): the old file's fences are gone. */
static void zstate_reset(void *p)
{
    zstate *zs = p;
    for (int i = 0; i < GBP_ZDEV_RING; i++) zs->dout[i].fenced = zs->hdr[i].fenced = 0;
    gbp_blosc_enc_close(zs->nb.e); /* drained at the step's end: none */
    memset(&zs->nb, 0, sizeof zs->nb);
    zs->has_next = 0;
}

/* The next buffer of a ring, of n bytes at least (device or host), once the writes out of it
 * are done. */
static int ring_take(gbp_mem *m, zbuf *ring, int *next, size_t n, int dev, zbuf **out)
{
    zbuf *b = &ring[*next];
    *next = (*next + 1) % GBP_ZDEV_RING;
    if (b->fenced) {
        double t = lap_start(m);
        b->fenced = 0;
        GBP_FORWARD_IF_ERROR(gbp_mem_dz_fence_wait(m, b->fence));
        lap(m, GBP_DZT_W_WAIT, &t);
    }
    if (n > b->cap) {
        double t = lap_start(m);
        if (dev) gbp_mem_dev_free(m, b->p);
        else gbp_free(b->p);
        b->p = NULL;
        b->cap = 0;
        if (dev) {
            GBP_FORWARD_IF_ERROR(gbp_mem_dev_alloc(m, &b->p, n));
        } else if (!(b->p = gbp_malloc(n))) {
            return gbp_error(GPUBP_ERR_NOMEM, 0, "out of memory (%zu bytes)", n);
        }
        b->cap = n;
        lap(m, GBP_DZT_STATE, &t);
    }
    *out = b;
    return GPUBP_OK;
}

/* Closes the write fence of what was queued out of b since it was taken. */
static void ring_fence(gbp_mem *m, zbuf *b)
{
    b->fence = gbp_mem_dz_fence(m);
    b->fenced = 1;
}

typedef struct zw {
    gbp_mem *mem;
    const gbp_dzops *ops;
    void *z;
    zstate *zs;
} zw;

static int grow_arrays(zset *w, size_t n)
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

/* The encoder's segments with device addresses: filtered input in filt (piece at po), raw
 * input at in. */
static int device_segments(zstate *w, const gbp_dz_seg *s, size_t n, const uint8_t *filt,
                           const uint8_t *in, size_t po)
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
            w->seg[i].src = (uint64_t)(uintptr_t)(filt + (s[i].src - po));
        } else if (s[i].kind == GBP_XSEG_INPUT) {
            w->seg[i].kind = GBP_SEG_DEV;
            w->seg[i].src = (uint64_t)(uintptr_t)(in + s[i].src);
        }
    }
    return GPUBP_OK;
}

/* Queues the extents of one emit: device bytes of dout (the image of out), zeros from the host;
 * runs of extents that follow each other in the file and in dout go as one write. */
static int write_piece(zw *w, int fd, uint64_t base, const uint8_t *dout,
                       const gbp_blosc_extent *x, size_t nx)
{
    const uint8_t *out = w->zs->out;
    for (size_t i = 0; i < nx;) {
        if (!x[i].p) {
            GBP_FORWARD_IF_ERROR(gbp_zblock_write_extents(w->mem, fd, base, &x[i], 1));
            i++;
            continue;
        }
        size_t len = x[i].len, j = i + 1;
        for (; j < nx && x[j].p && x[j].off == x[i].off + len && x[j].p == x[i].p + len; j++)
            len += x[j].len;
        gbp_box b;
        gbp_box_dense(&b, 1, &len);
        GBP_FORWARD_IF_ERROR(gbp_mem_write(w->mem, GPUBP_MEM_GPU, fd, base + x[i].off,
                                           dout + (x[i].p - out), GPUBP_TYPE_UINT8, &b, NULL,
                                           NULL));
        i = j;
    }
    return GPUBP_OK;
}

/* Launches the next piece of block b (whole Blosc2 blocks of one chunk, up to b->piece bytes)
 * into coded set `set`: the filter into the set's buffer, the stream cut, the coding. */
static int launch(zw *w, zblk *b, int set, zfly *fl)
{
    zset *q = &w->zs->set[set];
    size_t csz = gbp_blosc_max_chunk(), po = b->po;
    size_t c0 = po / csz * csz, cend = b->raw - c0 < csz ? b->raw : c0 + csz;
    size_t bsz = gbp_blosc_enc_blocksize(b->e, cend - c0);
    size_t len = b->piece / bsz * bsz;
    if (len == 0) len = bsz;
    if (len > cend - po) len = cend - po;
    const uint8_t *src = b->in + po, *filt = src; /* unfiltered: the input */
    double t = lap_start(w->mem);
    if (b->filter) {
        if (q->fcap < b->piece) { /* nothing in flight reads this set's buffer */
            gbp_mem_dev_free(w->mem, q->filt);
            q->filt = NULL;
            q->fcap = 0;
            GBP_FORWARD_IF_ERROR(gbp_mem_dev_alloc(w->mem, (void **)&q->filt, b->piece));
            q->fcap = b->piece;
            lap(w->mem, GBP_DZT_STATE, &t);
        }
        GBP_FORWARD_IF_ERROR(w->ops->filter(w->z, b->filter, 0, src, q->filt, len, bsz, b->ts));
        filt = q->filt;
    }
    lap(w->mem, GBP_DZT_W_FILTER_CODE, &t);
    const gbp_blosc_xstream *xs;
    size_t nxs;
    GBP_FORWARD_IF_ERROR(gbp_blosc_enc_put_ext(b->e, len, &xs, &nxs));
    GBP_FORWARD_IF_ERROR(grow_arrays(q, nxs + 1));
    for (size_t i = 0; i < nxs; i++) {
        q->off[i] = xs[i].in_off - po;
        q->len[i] = xs[i].len;
    }
    lap(w->mem, GBP_DZT_W_FRAME, &t);
    GBP_FORWARD_IF_ERROR(w->ops->encode_launch(w->z, set, b->codec, b->level, filt, nxs, q->off,
                                               q->len, q->run, q->clen));
    lap(w->mem, GBP_DZT_W_FILTER_CODE, &t);
    *fl = (zfly){po, len, nxs, set};
    b->po = po + len;
    return GPUBP_OK;
}

/* The piece in flight fl of block b, once coded: framed on the host (emit_ext), assembled on
 * the device and queued for the I/O threads; `next` queues the coding of what follows into the
 * other set meanwhile. */
typedef int (*zdev_next_fn)(zw *w, void *ctx);

static int complete(zw *w, zblk *b, const zfly *fl, int fd, zdev_next_fn next, void *ctx)
{
    zstate *zs = w->zs;
    zset *q = &zs->set[fl->set];
    /* what follows (this block's next piece: the encoder holds a second put; else the next
     * sub-block's first piece) is queued before the wait, into the other set */
    int rc = next ? next(w, ctx) : GPUBP_OK;
    if (rc != GPUBP_OK) { /* nothing may still read the user's buffer */
        (void)w->ops->encode_wait(w->z, fl->set);
        return rc;
    }
    double t = lap_start(w->mem);
    GBP_FORWARD_IF_ERROR(w->ops->encode_wait(w->z, fl->set));
    lap(w->mem, GBP_DZT_W_FILTER_CODE, &t);
    const gbp_blosc_extent *x;
    const gbp_dz_seg *seg;
    size_t nx, nseg;
    GBP_FORWARD_IF_ERROR(
        gbp_blosc_enc_emit_ext(b->e, q->run, q->clen, zs->out, b->cap, &x, &nx, &seg, &nseg));
    const uint8_t *filt = b->filter ? q->filt : b->in + fl->po;
    GBP_FORWARD_IF_ERROR(device_segments(zs, seg, nseg, filt, b->in, fl->po));
    lap(w->mem, GBP_DZT_W_FRAME, &t);
    zbuf *d;
    GBP_FORWARD_IF_ERROR(ring_take(w->mem, zs->dout, &zs->nd, b->cap, 1, &d));
    t = lap_start(w->mem);
    if (nseg) GBP_FORWARD_IF_ERROR(w->ops->assemble(w->z, d->p, zs->seg, nseg));
    lap(w->mem, GBP_DZT_W_ASSEMBLE, &t);
    rc = write_piece(w, fd, b->wb->meta.payload_offset, d->p, x, nx);
    ring_fence(w->mem, d);
    lap(w->mem, GBP_DZT_W_SUBMIT, &t);
    return rc;
}

/* The prefix and chunk headers (finish's extents) copied into a host buffer of the ring and
 * queued. */
static int write_headers(zw *w, int fd, uint64_t base, const gbp_blosc_extent *x, size_t nx)
{
    size_t bytes = 0;
    for (size_t i = 0; i < nx; i++) bytes += x[i].p ? x[i].len : 0;
    zbuf *h;
    GBP_FORWARD_IF_ERROR(ring_take(w->mem, w->zs->hdr, &w->zs->nh, bytes ? bytes : 1, 0, &h));
    int rc = GPUBP_OK;
    uint8_t *p = h->p;
    for (size_t i = 0; rc == GPUBP_OK && i < nx; i++) {
        gbp_blosc_extent c = x[i];
        if (c.p) {
            memcpy(p, c.p, c.len);
            c.p = p;
            p += c.len;
        }
        rc = gbp_zblock_write_extents(w->mem, fd, base, &c, 1);
    }
    ring_fence(w->mem, h);
    return rc;
}

/* Opens block wb for writing: its geometry and encoder. */
static int block_open(gpubp_file *f, const gbp_wblock *wb, zblk *b)
{
    const gpubp_variable *v = wb->var;
    memset(b, 0, sizeof *b);
    b->wb = wb;
    b->es = gbp_type_size(v->type);
    b->raw = (size_t)wb->payload_len;
    b->ts = b->es > 255 ? 1 : b->es;
    b->codec = v->op_codec;
    b->level = v->op_level;
    int shuffle = v->op_shuffle;
    b->filter = shuffle == GBP_BLOSC_SHUFFLE && b->ts > 1 ? 1 : shuffle == GBP_BLOSC_BITSHUFFLE ? 2 : 0;
    int threads = v->op_threads ? v->op_threads : f->params.compress_threads;
    b->in = (const uint8_t *)wb->data + gbp_box_offset(&wb->box) * b->es;
    GBP_FORWARD_IF_ERROR(gbp_blosc_enc_open(&b->e, b->raw, b->es, b->codec, b->level, shuffle, threads));
    if (f->params.compress_device_block_kib > 0) /* the GPU blocks (docs/compression.md) */
        GBP_FORWARD_IF_ERROR(
            gbp_blosc_enc_set_blocks(b->e, (size_t)f->params.compress_device_block_kib << 10));
    size_t piece = atomic_load(&piece_hook) ? atomic_load(&piece_hook) : GBP_ZDEV_PIECE;
    size_t bsz0 = gbp_blosc_enc_blocksize(
        b->e, b->raw < gbp_blosc_max_chunk() ? b->raw : gbp_blosc_max_chunk()); /* the largest */
    if (piece < bsz0) piece = bsz0;
    if (piece > b->raw) piece = b->raw;
    b->piece = piece;
    b->cap = gbp_blosc_enc_out_bound(b->e, piece);
    return GPUBP_OK;
}

/* The sub-block after wb of the same split put, still to be performed (NULL: none). */
static const gbp_wblock *next_sub(const gpubp_file *f, const gbp_wblock *wb)
{
    uint32_t j = GBP_SPLIT_INDEX(wb->meta.split), n = GBP_SPLIT_COUNT(wb->meta.split);
    if (n < 2 || j + 1 >= n || wb < f->wr.blocks || wb + 1 >= f->wr.blocks + f->wr.nblocks) return NULL;
    const gbp_wblock *nx = wb + 1;
    if (nx->var != wb->var || nx->data != wb->data || nx->space != wb->space || nx->performed ||
        nx->zahead || GBP_SPLIT_INDEX(nx->meta.split) != j + 1 ||
        GBP_SPLIT_COUNT(nx->meta.split) != n || !gbp_box_is_contiguous(&nx->box) ||
        nx->payload_len == 0)
        return NULL;
    return nx;
}

/* Waits for what the next sub-block has in flight and forgets it. */
static void drop_next(zw *w)
{
    zstate *zs = w->zs;
    if (!zs || !zs->has_next) return;
    (void)w->ops->encode_wait(w->z, zs->nf.set);
    gbp_error_clear();
    gbp_blosc_enc_close(zs->nb.e);
    memset(&zs->nb, 0, sizeof zs->nb);
    zs->has_next = 0;
}

typedef struct znext {
    gpubp_file *f;
    zblk *b;          /* the block being written */
    const zfly *cur;  /* its piece being completed */
    zfly *fl;         /* out: the next piece of the block, if launched */
    int launched;
} znext;

/* Queues the coding of what comes after the piece being completed: the block's next piece, or
 * the first piece of the next sub-block of a split put (kept in the state until its turn). */
static int queue_next(zw *w, void *ctx)
{
    znext *n = ctx;
    int set = 1 - n->cur->set;
    if (n->b->po < n->b->raw) {
        GBP_FORWARD_IF_ERROR(launch(w, n->b, set, n->fl));
        n->launched = 1;
        return GPUBP_OK;
    }
    const gbp_wblock *nx = next_sub(n->f, n->b->wb);
    if (!nx || w->zs->has_next) return GPUBP_OK;
    double t = lap_start(w->mem);
    int rc = block_open(n->f, nx, &w->zs->nb);
    lap(w->mem, GBP_DZT_W_FINISH, &t);
    if (rc == GPUBP_OK) rc = launch(w, &w->zs->nb, set, &w->zs->nf);
    if (rc == GPUBP_OK) {
        w->zs->has_next = 1;
    } else {
        gbp_blosc_enc_close(w->zs->nb.e);
        memset(&w->zs->nb, 0, sizeof w->zs->nb);
    }
    return rc;
}

int gbp_zdev_write(gpubp_file *f, gbp_wblock *wb, int fd, const gbp_dzops *ops, void *dctx,
                   size_t *total)
{
    gpubp_variable *v = wb->var;
    zw w;
    memset(&w, 0, sizeof w);
    w.mem = f->mem;
    w.ops = ops;
    zblk b;
    memset(&b, 0, sizeof b);
    zfly cur;
    int have = 0;
    double t = lap_start(f->mem);
    int rc = gbp_mem_dz_state(f->mem, ops, dctx, &w.z);
    if (rc == GPUBP_OK) {
        w.zs = gbp_mem_dz_user(f->mem, sizeof *w.zs, zstate_free, zstate_reset);
        if (!w.zs) rc = gbp_error(GPUBP_ERR_NOMEM, 0, "out of memory (device codec state)");
    }
    /* the first piece launched already, while the sub-block before this one was completed */
    if (rc == GPUBP_OK && w.zs->has_next) {
        if (w.zs->nb.wb == wb && w.zs->nb.in == (const uint8_t *)wb->data +
                                                      gbp_box_offset(&wb->box) * w.zs->nb.es) {
            b = w.zs->nb;
            cur = w.zs->nf;
            have = 1;
            memset(&w.zs->nb, 0, sizeof w.zs->nb);
            w.zs->has_next = 0;
        } else {
            drop_next(&w);
        }
    }
    if (rc == GPUBP_OK && !have) rc = block_open(f, wb, &b);
    /* the codec's stream after the user's data (and the library stream's work so far, copies
     * of earlier outputs included); the later sub-blocks of a split put are coded in the same
     * perform as the first, with no user work in between: ordered already */
    if (rc == GPUBP_OK && !have && GBP_SPLIT_INDEX(wb->meta.split) == 0) rc = ops->begin(w.z);
    if (rc == GPUBP_OK && b.cap > w.zs->ocap) {
        gbp_free(w.zs->out);
        w.zs->out = gbp_malloc(b.cap);
        w.zs->ocap = w.zs->out ? b.cap : 0;
        if (!w.zs->out) rc = gbp_error(GPUBP_ERR_NOMEM, 0, "out of memory (%zu bytes)", b.cap);
    }
    if (rc == GPUBP_OK)
        rc = gbp_mem_dev_minmax(f->mem, b.in, v->type, b.raw / b.es, wb->meta.mm, wb->meta.mm + 16);
    lap(f->mem, GBP_DZT_W_FINISH, &t);
    if (rc == GPUBP_OK && !have) {
        rc = launch(&w, &b, 0, &cur);
        have = rc == GPUBP_OK;
    }
    while (rc == GPUBP_OK && have) {
        zfly nxt = cur;
        znext n = {f, &b, &cur, &nxt, 0};
        rc = complete(&w, &b, &cur, fd, queue_next, &n);
        have = n.launched;
        cur = nxt;
    }
    if (rc != GPUBP_OK && have) (void)ops->encode_wait(w.z, cur.set);
    t = lap_start(f->mem);
    const gbp_blosc_extent *x = NULL;
    const gbp_blosc_redo *r = NULL;
    size_t nx = 0, nr = 0;
    if (rc == GPUBP_OK) rc = gbp_blosc_enc_finish(b.e, &x, &nx, &r, &nr, total);
    /* a chunk that did not shrink is rewritten raw over what its pieces wrote: after them */
    if (rc == GPUBP_OK && nr) rc = gbp_mem_wait_writes(f->mem);
    if (rc == GPUBP_OK) rc = write_headers(&w, fd, wb->meta.payload_offset, x, nx);
    for (size_t i = 0; rc == GPUBP_OK && i < nr; i++) rc = gbp_zblock_write_redo(f, wb, fd, &r[i]);
    /* the writes go on: the writer waits for them (gbp_mem_sync) before the step's metadata;
     * after a failure nothing may still read the user's buffer */
    if (rc != GPUBP_OK) {
        drop_next(&w);
        (void)gbp_mem_sync(f->mem);
    }
    lap(f->mem, GBP_DZT_W_FINISH, &t);
    if (rc == GPUBP_OK) {
        gbp_mem_dz_note(f->mem, 0, b.raw, *total, NULL);
        atomic_fetch_add(&n_written, 1);
    }
    gbp_blosc_enc_close(b.e);
    return rc;
}

void gbp_zdev_drain(gpubp_file *f)
{
    zw w;
    memset(&w, 0, sizeof w);
    w.mem = f->mem;
    w.zs = gbp_mem_dz_peek(f->mem, &w.ops, &w.z);
    drop_next(&w);
}

/* ---- read ------------------------------------------------------------------------------------ */

typedef struct zchunk {
    size_t out, nbytes, bsz, ts;
    int filter; /* 0: the chunk's bytes are final once decoded */
} zchunk;

typedef struct zparse {
    gbp_dz_dstream *s;
    size_t ns, cap;
    zchunk *c;
    size_t nc, capc;
    int codec; /* the device codec code of the coded streams (-1: none yet) */
} zparse;

static int add_stream(zparse *p, int kind, uint64_t src, uint64_t dst, size_t clen, size_t len,
                      int run)
{
    if (p->ns == p->cap) {
        size_t c = p->cap ? 2 * p->cap : 256;
        gbp_dz_dstream *q = gbp_realloc(p->s, c * sizeof *q);
        if (!q) return gbp_error(GPUBP_ERR_NOMEM, 0, "out of memory (%zu streams)", c);
        p->s = q;
        p->cap = c;
    }
    gbp_dz_dstream *d = &p->s[p->ns++];
    memset(d, 0, sizeof *d);
    d->kind = (uint8_t)kind;
    d->src = src;
    d->dst = dst;
    d->clen = (uint32_t)clen;
    d->len = (uint32_t)len;
    d->run = (uint8_t)run;
    return GPUBP_OK;
}

/* A run of len bytes of value v, in pieces a stream length holds. */
static int add_run(zparse *p, uint64_t dst, size_t len, int v)
{
    for (size_t done = 0; done < len; done += (size_t)1 << 30) {
        size_t k = len - done < ((size_t)1 << 30) ? len - done : (size_t)1 << 30;
        GBP_FORWARD_IF_ERROR(add_stream(p, GBP_DSTREAM_RUN, 0, dst + done, 0, k, v));
    }
    return GPUBP_OK;
}

#define NOT_HERE GPUBP_ERR_CODEC /* the device does not decode this: the CPU decoder does */

/* The device codec code of a chunk's codec format (flags bits 5-7), -1 for others. */
static int device_codec(int fmt)
{
    return fmt == 1 ? GBP_BLOSC_LZ4 : fmt == 3 ? GBP_BLOSC_ZLIB : fmt == 4 ? GBP_BLOSC_ZSTD : -1;
}

/* The streams of one normal chunk at c (cb bytes, at offset base of the buffer). */
static int parse_blocks(zparse *p, const uint8_t *c, size_t cb, size_t base, size_t out,
                        size_t nb, size_t bs, size_t ts, int split)
{
    size_t nblocks = nb / bs + (nb % bs != 0);
    if (nblocks > (cb - 32) / 4) return NOT_HERE;
    for (size_t j = 0; j < nblocks; j++) {
        int32_t bstart = (int32_t)gbp_ld32(c + 32 + 4 * j);
        if (bstart <= 0 || (size_t)bstart >= cb) return NOT_HERE;
        size_t len = nb - j * bs < bs ? nb - j * bs : bs;
        size_t nst = split && len == bs ? ts : 1, neblock = len / nst;
        if (neblock == 0 || neblock * nst != len) return NOT_HERE;
        size_t q = (size_t)bstart;
        for (size_t s = 0; s < nst; s++) {
            uint64_t dst = out + j * bs + s * neblock;
            if (cb - q < 4) return NOT_HERE;
            int32_t cs = (int32_t)gbp_ld32(c + q);
            q += 4;
            if (cs <= 0) {
                if (cs < 0 && (q >= cb || !(c[q] & 1) || cs < -255)) return NOT_HERE;
                if (cs < 0) q++;
                GBP_FORWARD_IF_ERROR(add_run(p, dst, neblock, -cs));
                continue;
            }
            if ((size_t)cs > cb - q) return NOT_HERE;
            if ((size_t)cs == neblock) {
                GBP_FORWARD_IF_ERROR(
                    add_stream(p, GBP_DSTREAM_COPY, base + q, dst, neblock, neblock, 0));
            } else {
                /* zlib: an RFC 1950 header without a dictionary, and room for the Adler-32 */
                if (p->codec == GBP_BLOSC_ZLIB &&
                    (cs <= 6 || (c[q] & 0x0f) != 8 || (c[q] >> 4) > 7 || (c[q + 1] & 0x20) ||
                     ((unsigned)c[q] * 256 + c[q + 1]) % 31 != 0))
                    return NOT_HERE;
                GBP_FORWARD_IF_ERROR(
                    add_stream(p, GBP_DSTREAM_CODEC, base + q, dst, (size_t)cs, neblock, 0));
            }
            q += (size_t)cs;
        }
    }
    return GPUBP_OK;
}

/* Cuts the operator buffer into streams for the device; NOT_HERE (no message) for anything the
 * device path does not take, damaged input included: the CPU decoder then reports it. */
static int parse(zparse *p, const uint8_t *z, size_t zlen, size_t raw)
{
    if (zlen < GBP_BLOSC_PREFIX || z[0] != 0 || z[1] != 1 || gbp_ld64(z + 4) != raw ||
        gbp_ld32(z + 15) != 0)
        return NOT_HERE;
    size_t count = gbp_ld32(z + 19), at = GBP_BLOSC_PREFIX, out = 0;
    if (count == 0) {
        if (zlen != GBP_BLOSC_PREFIX + raw || raw > UINT32_MAX) return NOT_HERE;
        return raw ? add_stream(p, GBP_DSTREAM_COPY, at, 0, raw, raw, 0) : GPUBP_OK;
    }
    for (size_t k = 0; k < count; k++) {
        const uint8_t *c = z + at;
        if (zlen - at < 32) return NOT_HERE;
        int version = c[0], flags = c[2], b2 = c[31];
        size_t ts = c[3];
        int32_t nb = (int32_t)gbp_ld32(c + 4), bs = (int32_t)gbp_ld32(c + 8),
                cb = (int32_t)gbp_ld32(c + 12);
        /* Blosc2 chunks (3..5) with the 32-byte header; no dictionary, lazy or instrumented */
        if (version < 3 || version > 5 || (flags & 0x05) != 0x05 || ts == 0 || cb < 32 ||
            (size_t)cb > zlen - at || nb < 0 || (size_t)nb > raw - out || bs <= 0 ||
            (nb > 0 && bs > nb) || (b2 & 0x89))
            return NOT_HERE;
        int special = (b2 >> 4) & 7;
        if (special == 1 || special == 4) { /* zeros (uninitialised reads as zeros) */
            GBP_FORWARD_IF_ERROR(add_run(p, out, (size_t)nb, 0));
        } else if (special) {
            return NOT_HERE; /* NaN, repeated value */
        } else if (flags & 0x02) { /* memcpyed */
            if (cb != nb + 32) return NOT_HERE;
            if (nb) GBP_FORWARD_IF_ERROR(add_stream(p, GBP_DSTREAM_COPY, at + 32, out, (size_t)nb, (size_t)nb, 0));
        } else if (nb == 0) {
            if (cb != 32) return NOT_HERE;
        } else {
            for (int f = 0; f < 5; f++)
                if (c[16 + f] != 0 && c[16 + f] != 4) return NOT_HERE;
            int filter = c[21];
            if (filter > 2) return NOT_HERE;
            if (filter == 1 && ts == 1) filter = 0; /* byte shuffle of bytes: nothing */
            if (filter == 1 && bs % (int32_t)ts != 0) return NOT_HERE; /* the kernel's rule */
            int codec = device_codec(flags >> 5);
            if (codec < 0 || (p->codec >= 0 && codec != p->codec)) return NOT_HERE;
            p->codec = codec;
            GBP_FORWARD_IF_ERROR(parse_blocks(p, c, (size_t)cb, at, out, (size_t)nb, (size_t)bs,
                                              ts, !(flags & 0x10)));
            if (filter) {
                if (p->nc == p->capc) {
                    size_t n2 = p->capc ? 2 * p->capc : 8;
                    zchunk *q = gbp_realloc(p->c, n2 * sizeof *q);
                    if (!q) return gbp_error(GPUBP_ERR_NOMEM, 0, "out of memory (chunks)");
                    p->c = q;
                    p->capc = n2;
                }
                p->c[p->nc++] = (zchunk){out, (size_t)nb, (size_t)bs, ts, filter};
            }
        }
        at += (size_t)cb;
        out += (size_t)nb;
    }
    return at == zlen && out == raw ? GPUBP_OK : NOT_HERE;
}

/* The operator buffer up to the device through the pinned slots: out of z (host memory), or
 * (fd >= 0) read from the file into the slot, then copied into z. */
typedef struct zup {
    uint8_t *z;
    int fd;
    uint64_t off;
} zup;

static int upload_fill(void *ctx, uint8_t *slot, size_t off, size_t len)
{
    const zup *u = ctx;
    if (u->fd < 0) {
        memcpy(slot, u->z + off, len);
        return GPUBP_OK;
    }
    GBP_FORWARD_IF_ERROR(gbp_pread_all(u->fd, slot, len, u->off + off, "data file"));
    memcpy(u->z + off, slot, len);
    return GPUBP_OK;
}

/* In pieces of GBP_ZDEV_UPLOAD bytes, each a job of its own, so that several I/O threads read
 * (and copy) one block at once. */
#define GBP_ZDEV_UPLOAD ((size_t)4 << 20)

static int upload(gbp_mem *m, const zup *u, size_t zlen, uint8_t *din)
{
    size_t np = zlen / GBP_ZDEV_UPLOAD + 1;
    zup *pc = gbp_malloc(np * sizeof *pc);
    if (!pc) return gbp_error(GPUBP_ERR_NOMEM, 0, "out of memory (%zu pieces)", np);
    int rc = GPUBP_OK;
    for (size_t i = 0, o = 0; rc == GPUBP_OK && o < zlen; i++, o += GBP_ZDEV_UPLOAD) {
        size_t n = zlen - o < GBP_ZDEV_UPLOAD ? zlen - o : GBP_ZDEV_UPLOAD;
        pc[i] = (zup){u->z + o, u->fd, u->off + o};
        gbp_box b;
        gbp_box_dense(&b, 1, &n);
        rc = gbp_mem_read_fill(m, upload_fill, &pc[i], 1, &b, din + o, &b);
    }
    int rc2 = gbp_mem_sync(m); /* pc is read until every fill is done */
    gbp_free(pc);
    return rc != GPUBP_OK ? rc : rc2;
}

/* Decodes the parsed buffer on the device into dst; din: the buffer on the device already
 * (scratch 0), else NULL: uploaded here out of z. */
static int zdev_decode(gpubp_file *f, const gbp_dzops *ops, void *dctx, const zparse *p,
                       uint8_t *z, size_t zlen, size_t raw, uint8_t *dst, uint8_t *din)
{
    void *zc = NULL;
    uint8_t *scratch = NULL;
    double t = lap_start(f->mem);
    int rc = gbp_mem_dz_state(f->mem, ops, dctx, &zc);
    if (rc == GPUBP_OK) rc = ops->begin(zc);
    if (rc == GPUBP_OK && p->nc) rc = gbp_mem_dz_scratch(f->mem, 1, raw, (void **)&scratch);
    if (rc == GPUBP_OK && !din) { /* the compressed bytes up through the pinned pool */
        zup u = {z, -1, 0};
        rc = gbp_mem_dz_scratch(f->mem, 0, zlen, (void **)&din);
        if (rc == GPUBP_OK) rc = upload(f->mem, &u, zlen, din);
    }
    lap(f->mem, GBP_DZT_R_UPLOAD, &t);
    uint8_t *to = p->nc ? scratch : dst;
    if (rc == GPUBP_OK) rc = ops->decode(zc, p->codec < 0 ? GBP_BLOSC_LZ4 : p->codec, din, to, p->s, p->ns);
    lap(f->mem, GBP_DZT_R_DECODE, &t);
    if (rc == GPUBP_OK && p->nc) { /* unshuffle the filtered chunks, copy the others */
        size_t out = 0;
        for (size_t k = 0; rc == GPUBP_OK && k <= p->nc; k++) {
            size_t end = k < p->nc ? p->c[k].out : raw;
            for (size_t done = out; rc == GPUBP_OK && done < end; done += (size_t)1 << 30) {
                size_t n = end - done < ((size_t)1 << 30) ? end - done : (size_t)1 << 30;
                gbp_dz_seg g = {.dst = done, .src = (uint64_t)(uintptr_t)(scratch + done),
                                .len = (uint32_t)n, .kind = GBP_SEG_DEV};
                rc = ops->assemble(zc, dst, &g, 1);
            }
            if (k == p->nc || rc != GPUBP_OK) break;
            const zchunk *c = &p->c[k];
            rc = ops->filter(zc, c->filter, 1, scratch + c->out, dst + c->out, c->nbytes, c->bsz, c->ts);
            out = c->out + c->nbytes;
        }
    }
    int rc2 = gbp_mem_dev_sync(f->mem); /* nothing may still use the scratch */
    lap(f->mem, GBP_DZT_R_PLACE, &t);
    return rc == GPUBP_OK ? rc2 : rc;
}

static int zdev_read(gpubp_file *f, uint8_t *z, size_t zlen, size_t raw, uint8_t *dst,
                     uint8_t *din)
{
    zparse p;
    memset(&p, 0, sizeof p);
    p.codec = -1;
    double t = lap_start(f->mem);
    int rc = parse(&p, z, zlen, raw);
    lap(f->mem, GBP_DZT_R_PARSE, &t);
    if (rc == NOT_HERE) {
        gbp_error_clear();
        gbp_mem_dz_note(f->mem, 1, 0, 0, "a compressed block the device does not decode "
                        "(its codec or chunk layout): the CPU decoder");
        rc = 0;
    } else if (rc == GPUBP_OK) {
        const gbp_dzops *ops;
        void *dctx;
        rc = gbp_zdev_choose(f, p.codec < 0 ? GBP_BLOSC_LZ4 : p.codec, 1, 0,
                             "a compressed block read", &ops, &dctx);
        if (rc == 1) {
            rc = zdev_decode(f, ops, dctx, &p, z, zlen, raw, dst, din);
            if (rc == GPUBP_OK) {
                gbp_mem_dz_note(f->mem, 1, raw, zlen, NULL);
                atomic_fetch_add(&n_read, 1);
                rc = 1;
            } else if (rc == GPUBP_ERR_FORMAT) { /* damaged: the CPU decoder says where */
                gbp_error_clear();
                rc = 0;
            }
        }
    }
    gbp_free(p.s);
    gbp_free(p.c);
    return rc;
}

int gbp_zdev_read(gpubp_file *f, const uint8_t *z, size_t zlen, size_t raw, uint8_t *dst)
{
    if (f->params.compress_device < 0) return 0;
    return zdev_read(f, (uint8_t *)(uintptr_t)z, zlen, raw, dst, NULL);
}

int gbp_zdev_read_file(gpubp_file *f, int fd, uint64_t off, size_t zlen, size_t raw, uint8_t *dst,
                       uint8_t *z)
{
    void *dctx;
    uint8_t *din = NULL;
    double t = lap_start(f->mem);
    if (f->params.compress_device < 0 || gbp_mem_dev_ctx(f->mem, &dctx, NULL) != GPUBP_OK) {
        gbp_error_clear(); /* no device: the CPU decoder says so if it matters */
        return gbp_zdev_fetch(f, fd, off, zlen, z);
    }
    zup u = {z, fd, off};
    int rc = gbp_mem_dz_scratch(f->mem, 0, zlen, (void **)&din);
    if (rc == GPUBP_OK) rc = upload(f->mem, &u, zlen, din);
    lap(f->mem, GBP_DZT_R_FILE, &t);
    return rc == GPUBP_OK ? zdev_read(f, z, zlen, raw, dst, din) : rc;
}

uint8_t *gbp_zdev_inbuf(gpubp_file *f, size_t n)
{
    zstate *zs = gbp_mem_dz_user(f->mem, sizeof *zs, zstate_free, zstate_reset);
    if (!zs) {
        gbp_error(GPUBP_ERR_NOMEM, 0, "out of memory (device codec state)");
        return NULL;
    }
    if (n > zs->zincap || !zs->zin) {
        gbp_free(zs->zin);
        zs->zincap = 0;
        zs->zin = gbp_malloc(n ? n : 1);
        if (!zs->zin) {
            gbp_error(GPUBP_ERR_NOMEM, 0, "out of memory (%zu bytes of compressed block)", n);
            return NULL;
        }
        zs->zincap = n ? n : 1;
    }
    return zs->zin;
}

int gbp_zdev_fetch(gpubp_file *f, int fd, uint64_t off, size_t n, uint8_t *z)
{
    gbp_box b;
    gbp_box_dense(&b, 1, &n);
    int rc = gbp_mem_read(f->mem, GPUBP_MEM_HOST, fd, off, 1, &b, z, &b);
    int rc2 = gbp_mem_sync(f->mem);
    return rc != GPUBP_OK ? rc : rc2;
}
