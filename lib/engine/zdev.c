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
 * shrink is rewritten raw from the source, as on the CPU path. The sub-blocks of a split put
 * that are one piece each are launched in groups, one batch of the codec per piece of input
 * (launch_group), and taken from the queue by their own gbp_zdev_write in turn. */
#include "engine/zdev.h"

#include "common/params.h"
#include "compress/blosczlib.h"
#include "engine/zblock.h"
#include "io/fileio.h"
#include "memspace/box.h"
#include "memspace/dz_stub.h"
#include "memspace/mem_dz.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <stdatomic.h>

#define GBP_ZDEV_PIECE ((size_t)64 << 20)

static atomic_size_t piece_hook;

void gbp_zdev_set_piece(size_t bytes) { atomic_store(&piece_hook, bytes); }

/* The piece: GBP_ZDEV_PIECE, or GPUBP_ZDEV_PIECE_MIB MiB (a tuning knob). */
static size_t zdev_piece(void)
{
    return gbp_env_mib("GPUBP_ZDEV_PIECE_MIB", GBP_ZDEV_ENV_MAX_MIB, GBP_ZDEV_PIECE);
}

static atomic_size_t n_written, n_read, n_grouped, n_prelaunched;

size_t gbp_zdev_grouped(void) { return atomic_load(&n_grouped); }

size_t gbp_zdev_prelaunched(void) { return atomic_load(&n_prelaunched); }

void gbp_zdev_counts(size_t *written, size_t *read)
{
    *written = atomic_load(&n_written);
    *read = atomic_load(&n_read);
}

void gbp_zdev_lap(gbp_mem *m, int phase, double *t)
{
    if (*t <= 0) return;
    double now = gbp_now_s();
    gbp_mem_dz_time(m, phase, now - *t);
    *t = now;
}

double gbp_zdev_lap_start(gbp_mem *m) { return gbp_mem_dz_timing(m) ? gbp_now_s() : 0; }

void gbp_zdev_count_read(void) { atomic_fetch_add(&n_read, 1); }

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
 * assembly of a piece goes into the next buffer once the writes out of it, queued a ring's length
 * of pieces ago, are done (a write fence each), so that the GPU codes and assembles the next
 * pieces, and the next blocks, while the I/O threads still copy and write the earlier ones. A
 * ring is as long as makes GBP_ZDEV_RING_BYTES of outputs, 4 to GBP_ZDEV_RING_MAX buffers: with
 * one piece per sub-block, each buffer in flight is one file being written, and four buffers
 * (the ring before 2026-12-05) kept small sub-blocks to four files at a time (an H200 trace, run
 * 50: sixteen 16 MiB sub-blocks written four by four). */
#define GBP_ZDEV_RING_MIN 4
#define GBP_ZDEV_RING_MAX 16
#define GBP_ZDEV_RING_BYTES ((size_t)256 << 20)

/* The ring's length for outputs of cap bytes. */
static int ring_len(size_t cap)
{
    size_t n = cap ? GBP_ZDEV_RING_BYTES / cap : GBP_ZDEV_RING_MAX;
    if (n < GBP_ZDEV_RING_MIN) return GBP_ZDEV_RING_MIN;
    return n > GBP_ZDEV_RING_MAX ? GBP_ZDEV_RING_MAX : (int)n;
}

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
 * into coded set `set`, where they are streams s0 ... of the batch and the filtered bytes start
 * at foff of the set's buffer (a group of sub-blocks shares one launch). */
typedef struct zfly {
    size_t po, len, nxs, s0, foff;
    int set;
} zfly;

/* Sub-blocks of a split put that fit in one piece are launched in groups (GBP_ZDEV_BATCH of input,
 * GBP_ZDEV_GROUP sub-blocks at most), as one batch of the codec: nvCOMP's throughput grows with
 * the batch (H200: lz4 with 16 KiB streams 76 GB/s in batches of 32 MiB, 226 in batches of 256
 * MiB), while the sub-blocks stay a file's share each (a file takes ~4.8 GB/s). The queue holds
 * the launched sub-blocks not yet taken by their gbp_zdev_write: at most two groups, one per coded
 * set. */
#define GBP_ZDEV_GROUP 16
/* 128 MiB: H200, 1 GiB steps split into 64 MiB sub-blocks, zstd 8.8 GB/s with one sub-block a
 * batch, 9.8-9.9 with two or four; the device holds two batches of filtered input and of coded
 * streams (about 4 x 128 MiB). */
#define GBP_ZDEV_BATCH ((size_t)128 << 20)
#define GBP_ZDEV_QUEUE (2 * GBP_ZDEV_GROUP)

/* Per coded set: the filtered piece (device), the stream arrays of its launch. */
typedef struct zset {
    uint8_t *filt;
    size_t fcap;
    size_t *off, *len, ncap;
    int16_t *run;
    size_t *clen;
} zset;

typedef struct zstate {
    zbuf dout[GBP_ZDEV_RING_MAX]; /* device: assembled outputs (ring_len of them in use) */
    zbuf hdr[GBP_ZDEV_RING_MAX];  /* host: the prefix and chunk headers of a block (all used) */
    int nd, nh;               /* the next of each */
    uint8_t *out;             /* host: the image of the output's fields (only fields written) */
    size_t ocap;
    zset set[2];              /* per coded set: a piece in flight */
    gbp_dz_seg *seg;
    size_t segcap;
    zblk qb[GBP_ZDEV_QUEUE];  /* launched sub-blocks waiting for their turn, in put order */
    zfly qf[GBP_ZDEV_QUEUE];
    int qh, qn;               /* the queue's head and length */
    uint8_t *zin[2]; /* reads: the operator buffers of a block and the next (gbp_zdev_inbuf) */
    size_t zincap[2];
} zstate;

static void zstate_free(gbp_mem *m, void *p)
{
    zstate *zs = p;
    for (int i = 0; i < GBP_ZDEV_RING_MAX; i++) {
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
    for (int i = 0; i < zs->qn; i++) gbp_blosc_enc_close(zs->qb[(zs->qh + i) % GBP_ZDEV_QUEUE].e);
    gbp_free(zs->seg);
    gbp_free(zs->zin[0]);
    gbp_free(zs->zin[1]);
}

/* A parked state taken by another file (memspace/dz_cache.c): the old file's fences are gone. */
static void zstate_reset(void *p)
{
    zstate *zs = p;
    for (int i = 0; i < GBP_ZDEV_RING_MAX; i++) zs->dout[i].fenced = zs->hdr[i].fenced = 0;
    for (int i = 0; i < zs->qn; i++) /* drained at the step's end: none */
        gbp_blosc_enc_close(zs->qb[(zs->qh + i) % GBP_ZDEV_QUEUE].e);
    zs->qh = zs->qn = 0;
}

/* The file's state of this path (made at the first call; NULL with an error recorded when out
 * of memory). */
static zstate *zstate_of(gpubp_file *f)
{
    zstate *zs = gbp_mem_dz_user(f->mem, sizeof *zs, zstate_free, zstate_reset);
    if (!zs) gbp_error(GPUBP_ERR_NOMEM, 0, "out of memory (device codec state)");
    return zs;
}

/* The next buffer of a ring of len buffers, of n bytes at least (device or host), once the
 * writes out of it are done. A ring made shorter skips its last buffers, whose writes run out
 * (they are waited for when taken again, and at the step's end). */
static int ring_take(gbp_mem *m, zbuf *ring, int *next, int len, size_t n, int dev, zbuf **out)
{
    int i = *next % len;
    zbuf *b = &ring[i];
    *next = (i + 1) % len;
    if (b->fenced) {
        double t = gbp_zdev_lap_start(m);
        b->fenced = 0;
        GBP_FORWARD_IF_ERROR(gbp_mem_dz_fence_wait(m, b->fence));
        gbp_zdev_lap(m, GBP_DZT_W_WAIT, &t);
    }
    if (n > b->cap) {
        double t = gbp_zdev_lap_start(m);
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
        gbp_zdev_lap(m, GBP_DZT_STATE, &t);
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

/* The set's stream arrays for n streams at least; the entries so far are kept (a group fills
 * them block by block). */
static int grow_arrays(zset *w, size_t n)
{
    if (n <= w->ncap) return GPUBP_OK;
    if (n < 2 * w->ncap) n = 2 * w->ncap;
    void *p[4] = {w->off, w->len, w->run, w->clen};
    size_t el[4] = {sizeof *w->off, sizeof *w->len, sizeof *w->run, sizeof *w->clen};
    for (int k = 0; k < 4; k++) {
        void *q = gbp_realloc(p[k], n * el[k]);
        if (!q) return gbp_error(GPUBP_ERR_NOMEM, 0, "out of memory (%zu streams)", n);
        p[k] = q;
        if (k == 0) w->off = q;
        else if (k == 1) w->len = q;
        else if (k == 2) w->run = q;
        else w->clen = q;
    }
    w->ncap = n;
    return GPUBP_OK;
}

/* The encoder's segments with device addresses: filtered input in filt (piece at po), raw
 * input at in. */
static int device_segments(zstate *w, const gbp_dz_seg *s, size_t n, const uint8_t *filt,
                           const uint8_t *in, size_t po, size_t s0)
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
        } else if (s[i].kind == GBP_SEG_CODED) {
            w->seg[i].src += s0; /* the block's streams within its group's batch */
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
            GBP_FORWARD_IF_ERROR(gbp_zblock_write_extents(w->mem, fd, base, &x[i], 1, 1));
            i++;
            continue;
        }
        size_t len = x[i].len, j = i + 1;
        for (; j < nx && x[j].p && x[j].off == x[i].off + len && x[j].p == x[i].p + len; j++)
            len += x[j].len;
        GBP_FORWARD_IF_ERROR(gbp_mem_write_owned(w->mem, GPUBP_MEM_GPU, fd, base + x[i].off,
                                                 dout + (x[i].p - out), len));
        i = j;
    }
    return GPUBP_OK;
}

/* The next piece of block b: whole Blosc2 blocks (bsz bytes) of one chunk, up to b->piece, or
 * the rest of the chunk when it fits. */
static size_t piece_len(const zblk *b, size_t *bsz)
{
    size_t csz = gbp_blosc_max_chunk(), po = b->po;
    size_t c0 = po / csz * csz, cend = b->raw - c0 < csz ? b->raw : c0 + csz;
    *bsz = gbp_blosc_enc_blocksize(b->e, cend - c0);
    if (b->piece >= cend - po) return cend - po; /* the rest of the chunk, a partial block too */
    size_t len = b->piece / *bsz * *bsz;
    if (len == 0) len = *bsz;
    return len > cend - po ? cend - po : len;
}

/* The set's filtered buffer, of n bytes at least: grown only when no launch of the set is in
 * flight (its assemblies may still run: cudaFree waits for the device). */
static int set_room(zw *w, zset *q, size_t n)
{
    if (q->fcap >= n) return GPUBP_OK;
    double t = gbp_zdev_lap_start(w->mem);
    gbp_mem_dev_free(w->mem, q->filt);
    q->filt = NULL;
    q->fcap = 0;
    GBP_FORWARD_IF_ERROR(gbp_mem_dev_alloc(w->mem, (void **)&q->filt, n));
    q->fcap = n;
    gbp_zdev_lap(w->mem, GBP_DZT_STATE, &t);
    return GPUBP_OK;
}

/* Stages the next piece of block b in coded set `set`: filtered into the set's buffer at foff
 * (unfiltered: read where it is), its streams cut and listed from index s0 of the set's arrays,
 * as offsets from `base` (the batch's input: the set's buffer, or the first block's input). */
static int stage(zw *w, zblk *b, int set, size_t foff, size_t s0, const uint8_t *base, zfly *fl)
{
    zset *q = &w->zs->set[set];
    size_t bsz, po = b->po, len = piece_len(b, &bsz);
    const uint8_t *src = b->in + po;
    double t = gbp_zdev_lap_start(w->mem);
    if (b->filter)
        GBP_FORWARD_IF_ERROR(w->ops->filter(w->z, b->filter, 0, src, q->filt + foff, len, bsz, b->ts));
    gbp_zdev_lap(w->mem, GBP_DZT_W_FILTER_CODE, &t);
    const gbp_blosc_xstream *xs;
    size_t nxs;
    GBP_FORWARD_IF_ERROR(gbp_blosc_enc_put_ext(b->e, len, &xs, &nxs));
    GBP_FORWARD_IF_ERROR(grow_arrays(q, s0 + nxs + 1));
    size_t at = b->filter ? foff : (size_t)(src - base);
    for (size_t i = 0; i < nxs; i++) {
        q->off[s0 + i] = xs[i].in_off - po + at;
        q->len[s0 + i] = xs[i].len;
    }
    gbp_zdev_lap(w->mem, GBP_DZT_W_FRAME, &t);
    *fl = (zfly){po, len, nxs, s0, foff, set};
    b->po = po + len;
    return GPUBP_OK;
}

static int code(zw *w, const zblk *b, int set, const uint8_t *base, size_t n)
{
    zset *q = &w->zs->set[set];
    double t = gbp_zdev_lap_start(w->mem);
    GBP_FORWARD_IF_ERROR(w->ops->encode_launch(w->z, set, b->codec, b->level, base, n, q->off,
                                               q->len, q->run, q->clen));
    gbp_zdev_lap(w->mem, GBP_DZT_W_FILTER_CODE, &t);
    return GPUBP_OK;
}

/* Launches the next piece of block b into coded set `set`: the filter into the set's buffer,
 * the stream cut, the coding. */
static int launch(zw *w, zblk *b, int set, zfly *fl)
{
    zset *q = &w->zs->set[set];
    if (b->filter) GBP_FORWARD_IF_ERROR(set_room(w, q, b->piece));
    const uint8_t *base = b->filter ? q->filt : b->in + b->po;
    GBP_FORWARD_IF_ERROR(stage(w, b, set, 0, 0, base, fl));
    return code(w, b, set, base, fl->nxs);
}

static size_t piece_bytes(void)
{
    return atomic_load(&piece_hook) ? atomic_load(&piece_hook) : zdev_piece();
}

/* The input of a group's batch at most: GBP_ZDEV_BATCH, GPUBP_ZDEV_BATCH_MIB MiB, or the test
 * hook's piece. */
static size_t batch_bytes(void)
{
    if (atomic_load(&piece_hook)) return atomic_load(&piece_hook);
    return gbp_env_mib("GPUBP_ZDEV_BATCH_MIB", GBP_ZDEV_ENV_MAX_MIB, GBP_ZDEV_BATCH);
}

static const gbp_wblock *next_sub(const gpubp_file *f, const gbp_wblock *wb);
static int block_open(gpubp_file *f, const gbp_wblock *wb, zblk *b);

/* Launches into `set` the first piece of block b0 (opened, nothing launched) and, when it is
 * its only piece, the first pieces of the sub-blocks after it in its put that are single pieces
 * too, up to batch_bytes() of input in all, as one batch (GBP_ZDEV_GROUP); every block launched is
 * queued (b0 first, the others opened here). On failure nothing is queued and the blocks opened
 * here are closed (b0 stays the caller's). */
static int launch_group(zw *w, gpubp_file *f, const zblk *b0, int set)
{
    zstate *zs = w->zs;
    zset *q = &zs->set[set];
    zblk g[GBP_ZDEV_GROUP];
    zfly fl[GBP_ZDEV_GROUP];
    size_t bsz, cap = batch_bytes(), bytes = piece_len(b0, &bsz);
    int ng = 1, rc = GPUBP_OK, single = bytes == b0->raw; /* b0 is one piece: a group */
    g[0] = *b0;
    const gbp_wblock *wb = b0->wb;
    while (single && ng < GBP_ZDEV_GROUP && zs->qn + ng < GBP_ZDEV_QUEUE &&
           (wb = next_sub(f, wb)) != NULL) {
        zblk *nb = &g[ng];
        double t = gbp_zdev_lap_start(w->mem);
        rc = block_open(f, wb, nb);
        gbp_zdev_lap(w->mem, GBP_DZT_W_FINISH, &t);
        if (rc != GPUBP_OK) break;
        size_t n = piece_len(nb, &bsz);
        if (n != nb->raw || bytes + n > cap || nb->filter != b0->filter ||
            nb->in != b0->in + bytes) { /* one batch of single pieces, one after the other */
            gbp_blosc_enc_close(nb->e);
            break;
        }
        bytes += n;
        ng++;
    }
    if (rc == GPUBP_OK && b0->filter) rc = set_room(w, q, bytes > b0->piece ? bytes : b0->piece);
    const uint8_t *base = b0->filter ? q->filt : b0->in + b0->po;
    size_t s0 = 0, foff = 0;
    for (int k = 0; rc == GPUBP_OK && k < ng; k++) {
        rc = stage(w, &g[k], set, foff, s0, base, &fl[k]);
        s0 += fl[k].nxs;
        foff += fl[k].len;
    }
    if (rc == GPUBP_OK) rc = code(w, b0, set, base, s0);
    if (rc != GPUBP_OK) {
        for (int k = 1; k < ng; k++) gbp_blosc_enc_close(g[k].e);
        return rc;
    }
    atomic_fetch_add(&n_grouped, (size_t)(ng - 1));
    for (int k = 0; k < ng; k++) {
        int at = (zs->qh + zs->qn++) % GBP_ZDEV_QUEUE;
        zs->qb[at] = g[k];
        zs->qf[at] = fl[k];
    }
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
    double t = gbp_zdev_lap_start(w->mem);
    GBP_FORWARD_IF_ERROR(w->ops->encode_wait(w->z, fl->set));
    gbp_zdev_lap(w->mem, GBP_DZT_W_FILTER_CODE, &t);
    const gbp_blosc_extent *x;
    const gbp_dz_seg *seg;
    size_t nx, nseg;
    GBP_FORWARD_IF_ERROR(
        gbp_blosc_enc_emit_ext(b->e, q->run + fl->s0, q->clen + fl->s0, zs->out, b->cap, &x, &nx,
                               &seg, &nseg));
    const uint8_t *filt = b->filter ? q->filt + fl->foff : b->in + fl->po;
    GBP_FORWARD_IF_ERROR(device_segments(zs, seg, nseg, filt, b->in, fl->po, fl->s0));
    gbp_zdev_lap(w->mem, GBP_DZT_W_FRAME, &t);
    zbuf *d;
    GBP_FORWARD_IF_ERROR(ring_take(w->mem, zs->dout, &zs->nd, ring_len(b->cap), b->cap, 1, &d));
    t = gbp_zdev_lap_start(w->mem);
    if (nseg) GBP_FORWARD_IF_ERROR(w->ops->assemble(w->z, d->p, zs->seg, nseg));
    gbp_zdev_lap(w->mem, GBP_DZT_W_ASSEMBLE, &t);
    rc = write_piece(w, fd, b->wb->meta.payload_offset, d->p, x, nx);
    ring_fence(w->mem, d);
    gbp_zdev_lap(w->mem, GBP_DZT_W_SUBMIT, &t);
    return rc;
}

/* The prefix and chunk headers (finish's extents) copied into a host buffer of the ring and
 * queued. */
static int write_headers(zw *w, int fd, uint64_t base, const gbp_blosc_extent *x, size_t nx)
{
    size_t bytes = 0;
    for (size_t i = 0; i < nx; i++) bytes += x[i].p ? x[i].len : 0;
    zbuf *h;
    /* small host buffers: a block's headers, the longest ring (a block ends one piece or more) */
    GBP_FORWARD_IF_ERROR(
        ring_take(w->mem, w->zs->hdr, &w->zs->nh, GBP_ZDEV_RING_MAX, bytes ? bytes : 1, 0, &h));
    int rc = GPUBP_OK;
    uint8_t *p = h->p;
    for (size_t i = 0; rc == GPUBP_OK && i < nx; i++) {
        gbp_blosc_extent c = x[i];
        if (c.p) {
            memcpy(p, c.p, c.len);
            c.p = p;
            p += c.len;
        }
        rc = gbp_zblock_write_extents(w->mem, fd, base, &c, 1, 1);
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
    size_t piece = piece_bytes();
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
        nx->zahead || nx->cpu_lane || GBP_SPLIT_INDEX(nx->meta.split) != j + 1 ||
        GBP_SPLIT_COUNT(nx->meta.split) != n || !gbp_box_is_contiguous(&nx->box) ||
        nx->payload_len == 0)
        return NULL;
    return nx;
}

/* Waits for what the queued sub-blocks have in flight and forgets them. */
static void drop_next(zw *w)
{
    zstate *zs = w->zs;
    if (!zs || !zs->qn) return;
    int waited[2] = {0, 0};
    for (int i = 0; i < zs->qn; i++) {
        int at = (zs->qh + i) % GBP_ZDEV_QUEUE, set = zs->qf[at].set;
        if (!waited[set]) (void)w->ops->encode_wait(w->z, set);
        waited[set] = 1;
        gbp_blosc_enc_close(zs->qb[at].e);
    }
    gbp_error_clear();
    zs->qh = zs->qn = 0;
}

/* The file's write state of this path for ops (w: its fields set). */
static int zw_open(gpubp_file *f, const gbp_dzops *ops, void *dctx, zw *w)
{
    memset(w, 0, sizeof *w);
    w->mem = f->mem;
    w->ops = ops;
    GBP_FORWARD_IF_ERROR(gbp_mem_dz_state(f->mem, ops, dctx, &w->z));
    if (!(w->zs = zstate_of(f))) return GPUBP_ERR_NOMEM;
    return GPUBP_OK;
}

/* Opens sub-block wb and launches it, with the sub-blocks that join its batch, into `set`
 * (launch_group: all queued); on failure nothing is queued or left open. */
static int launch_sub(zw *w, gpubp_file *f, const gbp_wblock *wb, int set)
{
    zblk nb;
    double t = gbp_zdev_lap_start(w->mem);
    int rc = block_open(f, wb, &nb);
    gbp_zdev_lap(w->mem, GBP_DZT_W_FINISH, &t);
    if (rc == GPUBP_OK) rc = launch_group(w, f, &nb, set);
    if (rc != GPUBP_OK) gbp_blosc_enc_close(nb.e);
    return rc;
}

typedef struct znext {
    gpubp_file *f;
    zblk *b;          /* the block being written */
    const zfly *cur;  /* its piece being completed */
    zfly *fl;         /* out: the next piece of the block, if launched */
    int launched;
} znext;

/* Queues the coding of what comes after the piece being completed into the other set: the
 * block's next piece, or (its last piece) the next group of sub-blocks of a split put, kept in
 * the queue until their turn — once nothing queued is in the other set. */
static int queue_next(zw *w, void *ctx)
{
    znext *n = ctx;
    zstate *zs = w->zs;
    int set = 1 - n->cur->set;
    if (n->b->po < n->b->raw) {
        GBP_FORWARD_IF_ERROR(launch(w, n->b, set, n->fl));
        n->launched = 1;
        return GPUBP_OK;
    }
    for (int i = 0; i < zs->qn; i++)
        if (zs->qf[(zs->qh + i) % GBP_ZDEV_QUEUE].set == set) return GPUBP_OK;
    const gbp_wblock *after = zs->qn ? zs->qb[(zs->qh + zs->qn - 1) % GBP_ZDEV_QUEUE].wb : n->b->wb;
    const gbp_wblock *nx = next_sub(n->f, after);
    return nx ? launch_sub(w, n->f, nx, set) : GPUBP_OK;
}

/* Takes the queue's first block into b and its piece in flight into cur. */
static void take(zstate *zs, zblk *b, zfly *cur)
{
    *b = zs->qb[zs->qh];
    *cur = zs->qf[zs->qh];
    memset(&zs->qb[zs->qh], 0, sizeof zs->qb[zs->qh]);
    zs->qh = (zs->qh + 1) % GBP_ZDEV_QUEUE;
    zs->qn--;
}

int gbp_zdev_prelaunch(gpubp_file *f, const gbp_wblock *wb, const gbp_dzops *ops, void *dctx)
{
    zw w;
    GBP_FORWARD_IF_ERROR(zw_open(f, ops, dctx, &w));
    drop_next(&w); /* nothing is queued between puts */
    /* the codec's stream after the user's data, as gbp_zdev_write orders a put's first block */
    int rc = ops->begin(w.z);
    if (rc == GPUBP_OK) rc = launch_sub(&w, f, wb, 0);
    if (rc != GPUBP_OK) return rc;
    /* the next batch into set 1 when the first ends with a whole sub-block (a block of several
     * pieces launches its next piece there itself: queue_next) */
    int last = (w.zs->qh + w.zs->qn - 1) % GBP_ZDEV_QUEUE;
    const zfly *lf = &w.zs->qf[last];
    const gbp_wblock *nx = lf->po + lf->len == w.zs->qb[last].raw ? next_sub(f, w.zs->qb[last].wb) : NULL;
    if (nx && (rc = launch_sub(&w, f, nx, 1)) != GPUBP_OK) {
        drop_next(&w);
        return rc;
    }
    atomic_fetch_add(&n_prelaunched, 1);
    return GPUBP_OK;
}

int gbp_zdev_write(gpubp_file *f, gbp_wblock *wb, int fd, const gbp_dzops *ops, void *dctx,
                   size_t *total)
{
    gpubp_variable *v = wb->var;
    zw w;
    zblk b;
    memset(&b, 0, sizeof b);
    zfly cur;
    int have = 0;
    double t = gbp_zdev_lap_start(f->mem);
    int rc = zw_open(f, ops, dctx, &w);
    /* the first piece launched already, with an earlier sub-block of the put */
    if (rc == GPUBP_OK && w.zs->qn) {
        const zblk *h = &w.zs->qb[w.zs->qh];
        if (h->wb == wb && h->in == (const uint8_t *)wb->data + gbp_box_offset(&wb->box) * h->es) {
            take(w.zs, &b, &cur);
            have = 1;
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
    gbp_zdev_lap(f->mem, GBP_DZT_W_FINISH, &t);
    if (rc == GPUBP_OK && !have) { /* b and the sub-blocks after it that join its batch */
        rc = launch_group(&w, f, &b, 0);
        if (rc == GPUBP_OK) {
            take(w.zs, &b, &cur);
            have = 1;
        }
    }
    while (rc == GPUBP_OK && have) {
        zfly nxt = cur;
        znext n = {f, &b, &cur, &nxt, 0};
        rc = complete(&w, &b, &cur, fd, queue_next, &n);
        have = n.launched;
        cur = nxt;
    }
    if (rc != GPUBP_OK && have) (void)ops->encode_wait(w.z, cur.set);
    t = gbp_zdev_lap_start(f->mem);
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
    gbp_zdev_lap(f->mem, GBP_DZT_W_FINISH, &t);
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

uint8_t *gbp_zdev_inbuf(gpubp_file *f, size_t n, int which)
{
    zstate *zs = zstate_of(f);
    if (!zs) return NULL;
    which = which != 0;
    if (n > zs->zincap[which] || !zs->zin[which]) {
        gbp_free(zs->zin[which]);
        zs->zincap[which] = 0;
        zs->zin[which] = gbp_malloc(n ? n : 1);
        if (!zs->zin[which]) {
            gbp_error(GPUBP_ERR_NOMEM, 0, "out of memory (%zu bytes of compressed block)", n);
            return NULL;
        }
        zs->zincap[which] = n ? n : 1;
    }
    return zs->zin[which];
}

void gbp_zdev_inbuf_swap(gpubp_file *f)
{
    zstate *zs = zstate_of(f);
    if (!zs) return;
    uint8_t *p = zs->zin[0];
    size_t c = zs->zincap[0];
    zs->zin[0] = zs->zin[1];
    zs->zincap[0] = zs->zincap[1];
    zs->zin[1] = p;
    zs->zincap[1] = c;
}
