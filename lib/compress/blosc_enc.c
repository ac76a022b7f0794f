/* Writing the ADIOS2 blosc operator buffer with Blosc2 zlib chunks (docs/format/blosc-zlib.md).
 *
 * Writing mirrors ADIOS2 CompressBlosc::Operate + blosc2_compress (one thread, automatic block
 * size, default split mode) so that the bytes equal ADIOS2's: the decisions of blosc_c (runs,
 * "store raw", "abandon the chunk") depend on the running size of the chunk, so they are taken in
 * block order. The expensive part, filtering and deflating each block, does not depend on them:
 * workers do it for a batch of blocks in parallel (each deflate into a scratch slot of
 * neblock - 1 bytes: a stream that does not fit there would be stored raw anyway), then the
 * calling thread walks the batch in order, applies blosc_c's rules and writes the block starts
 * and stream sizes, then the workers copy the streams into place. With one thread the whole
 * buffer is coded in place instead: each stream is filtered and coded as its block is walked,
 * straight into its final place (as Blosc2's serial path writes), with no copy. With more, the
 * whole buffer is coded, walked and copied in batches of one pass each (fused_task): a worker
 * that has coded a block walks the blocks coded next in order unless another is walking (then
 * that one walks them: walk_ready, no worker waits), then copies its own block's streams while
 * in cache and claims the other walked blocks' copies, as Blosc2's threads copy each block from
 * their scratch when coded (Blosc2 places blocks in the order they finish; we keep block order)
 * and code the next into the scratch they just copied out of. The same bytes for any number of
 * threads. */
#include "compress/blosc_enc.h"

#include "common/params.h"
#include "compress/blosc_encx.h"
#include "compress/blosc_fused.h"
#include "compress/blosc_size.h"
#include "compress/shuffle.h"
#include "compress/pool.h"
#include "compress/spare.h"

#include <stdlib.h>

/* A batch of blocks. With threads and a filter, 4 MiB: the scratch slots are read back soon
 * after they are written (16 MiB: lz4, byte / bit shuffle at 0.77 of Blosc2 -> 0.85, 2 threads).
 * Else 16 MiB: a chunk that does not shrink is known so at its end, and what earlier batches
 * placed of it is copied again (4 MiB: blosclz without filter 1.3 -> 1.05, 1 or 2 threads).
 * With many threads, more (batch_bytes). */
#define BATCH_BYTES ((size_t)16 << 20)
#define BATCH_BYTES_FILTERED ((size_t)4 << 20)
#define BATCH_MAX GBP_SPARE_MAX

/* The encoder. gbp_blosc_enc_put cuts the input into Blosc2 blocks (a block that straddles two
 * puts is completed in a carry buffer) and filters and deflates them on the pool, each into a
 * scratch slot of block - 1 bytes (a longer stream would be stored raw anyway).
 * gbp_blosc_enc_emit then walks them in block order and applies blosc_c's rules, which depend on
 * the running size of the chunk ("store raw", "abandon the chunk", runs), writes the block starts
 * into the chunk's header and the small fields into the output, and the workers copy the streams
 * into place. Chunk headers are complete only when their chunk is: gbp_blosc_enc_finish gives
 * them last. A chunk that does not shrink becomes a memcpyed chunk: from the block where that is
 * known on, its bytes are emitted raw; the bytes of that chunk emitted by earlier calls are
 * listed as "redo" ranges for the caller to send again raw. The result is the same for any
 * number of threads and any cut of the input into puts. */

static const uint8_t *filter_block(int filter, const uint8_t *in, uint8_t *out, size_t len,
                                   size_t ts)
{
    if (filter == FILTER_SHUFFLE) gbp_byte_shuffle(in, out, len, ts);
    else if (filter == FILTER_BITSHUFFLE) gbp_bit_shuffle(in, out, len, ts);
    else return in;
    return out;
}

static void header(uint8_t *h, uint8_t flags, size_t ts, size_t nbytes, size_t bsz, size_t cbytes,
                   int filter, int codec, uint8_t b2flags)
{
    memset(h, 0, HDR_EXT);
    h[0] = CHUNK_VERSION;
    h[1] = CODEC_VERSIONLZ;
    h[2] = flags;
    h[3] = (uint8_t)ts;
    st32(h + 4, (uint32_t)nbytes);
    st32(h + 8, (uint32_t)bsz);
    st32(h + 12, (uint32_t)cbytes);
    h[21] = (uint8_t)filter; /* filter slot 5 */
    h[22] = (uint8_t)codec;
    h[31] = b2flags;
}

/* The block size and split mode of a chunk of cn bytes: Blosc2's, or the GPU blocks (unsplit). */
size_t gbp_blosc_enc_blocksize(const gbp_blosc_enc *e, size_t cn)
{
    return e->dbsz ? gbp_blosc_dev_blocksize(cn, e->ts, e->dbsz)
                   : gbp_blosc_blocksize(cn, e->ts, e->codec, e->level, e->shuffle);
}

static int enc_split(const gbp_blosc_enc *e, size_t cn)
{
    return !e->dbsz && gbp_blosc_split(cn, e->ts, e->codec, e->level, e->shuffle);
}

static size_t chunk_bytes(const gbp_blosc_enc *e, size_t k)
{
    size_t start = k * e->m;
    return e->n - start < e->m ? e->n - start : e->m;
}

int gbp_blosc_enc_grow(void **p, size_t *cap, size_t need, size_t el)
{
    if (need <= *cap) return GPUBP_OK;
    size_t c = *cap ? *cap : 16;
    while (c < need) c *= 2;
    void *q = gbp_realloc(*p, c * el);
    if (!q) return gbp_error(GPUBP_ERR_NOMEM, 0, "blosc: out of memory (encoder state)");
    *p = q;
    *cap = c;
    return GPUBP_OK;
}

int gbp_blosc_enc_open(gbp_blosc_enc **out, size_t n, size_t typesize, int codec, int level,
                       int shuffle, int threads)
{
    GBP_CHECK_ARG(out);
    *out = NULL;
    GBP_RETURN_ERROR_IF(typesize == 0, GPUBP_ERR_INVALID_ARG, "blosc: typesize 0");
    GBP_RETURN_ERROR_IF(level < 0 || level > 9, GPUBP_ERR_INVALID_ARG,
                        "blosc: level %d outside 0..9", level);
    GBP_RETURN_ERROR_IF(shuffle < 0 || shuffle > 2, GPUBP_ERR_INVALID_ARG,
                        "blosc: shuffle %d is not 0 (none), 1 (byte) or 2 (bit)", shuffle);
    GBP_RETURN_ERROR_IF(threads < 0, GPUBP_ERR_INVALID_ARG, "blosc: threads %d < 0", threads);
    GBP_FORWARD_IF_ERROR(gbp_blosc_check_codec(codec));
    GBP_RETURN_ERROR_IF(gbp_blosc_bound(n) == 0, GPUBP_ERR_INVALID_ARG,
                        "blosc: %zu input bytes is too many", n);
    gbp_blosc_enc *e = gbp_calloc(1, sizeof *e);
    if (!e) return gbp_error(GPUBP_ERR_NOMEM, 0, "blosc: out of memory (encoder)");
    if (typesize > 255) typesize = 1;
    e->n = n;
    e->ts = typesize;
    e->m = gbp_blosc_max_chunk();
    e->level = level;
    e->codec = codec;
    e->fmt = gbp_codec_format(codec);
    e->shuffle = shuffle;
    e->threads = threads;
    e->filter = FILTER_NONE;
    atomic_init(&e->dead_ck, NO_CHUNK); /* NO_CHUNK's units are not coded anyway (BLK_SKIP) */
    if (shuffle == GBP_BLOSC_SHUFFLE && typesize > 1) e->filter = FILTER_SHUFFLE;
    else if (shuffle == GBP_BLOSC_BITSHUFFLE) e->filter = FILTER_BITSHUFFLE;
    e->bsz_max = n ? gbp_blosc_blocksize(chunk_bytes(e, 0), typesize, codec, level, shuffle) : 1;
    /* the carry buffers (a block straddling two puts) are allocated at their first use: a
     * whole-buffer call never needs them (three 256 KiB allocations a call made glibc grow and
     * trim its heap each time: 1 MiB calls 15-20 % slower) */
    /* per worker state (pointers: a z_stream must stay where deflateInit saw it) */
    e->nw = gbp_pool_workers(threads, SIZE_MAX);
    e->fbuf = gbp_calloc((size_t)e->nw, sizeof *e->fbuf);
    e->ws = gbp_calloc((size_t)e->nw, sizeof *e->ws);
    uint8_t *p = e->prefix;
    p[0] = 0; /* core::Operator::COMPRESS_BLOSC */
    p[1] = 1; /* buffer version */
    st64(p + 4, (uint64_t)n);
    p[12] = 2; /* Blosc2 2.19.1, as in ADIOS2's files */
    p[13] = 19;
    p[14] = 1;
    e->out_end = GBP_BLOSC_PREFIX;
    if (!e->fbuf || !e->ws) {
        gbp_blosc_enc_close(e);
        return gbp_error(GPUBP_ERR_NOMEM, 0, "blosc: out of memory (encoder)");
    }
    *out = e;
    return GPUBP_OK;
}

void gbp_blosc_enc_close(gbp_blosc_enc *e)
{
    if (!e) return;
    for (int w = 0; e->ws && w < e->nw; w++) gbp_codec_ws_give(e->ws[w]);
    gbp_free(e->fbuf);
    gbp_free(e->hot_mem);
    gbp_free(e->ws);
    gbp_free(e->carry[0]);
    gbp_free(e->carry[1]);
    gbp_free(e->u);
    if (e->scratch_spare) gbp_spare_give(e->scratch, e->scratch_spare);
    else gbp_free(e->scratch);
    gbp_free(e->hdrs);
    gbp_free(e->pend);
    gbp_free(e->ch);
    gbp_free(e->ext);
    gbp_free(e->redo);
    gbp_free(e->xs);
    gbp_free(e->hu);
    gbp_free(e->hxs);
    gbp_free(e->seg);
    gbp_free(e);
}

int gbp_blosc_enc_set_blocks(gbp_blosc_enc *e, size_t bsz)
{
    GBP_CHECK_ARG(e);
    GBP_RETURN_ERROR_IF(e->taken > 0 || e->direct, GPUBP_ERR_INVALID_ARG,
                        "blosc: the block size is set before the first put");
    e->dbsz = bsz;
    if (e->n) e->bsz_max = gbp_blosc_enc_blocksize(e, chunk_bytes(e, 0));
    return GPUBP_OK;
}

size_t gbp_blosc_enc_out_bound(const gbp_blosc_enc *e, size_t len)
{
    /* the units of a put: its bytes and a carried partial block, at most 5 bytes of fields each;
     * a block holds at least 16 KiB except in chunks under 32 KiB, which have 2 blocks at most */
    return len + e->bsz_max + 5 * GBP_MAX_STREAMS * (len / 8192 + 2 * (len / e->m) + 10) + 64;
}

/* The worker's codec state, taken on its first use by this encoder; NULL when out of memory. */
static gbp_codec_ws *worker_ws(gbp_blosc_enc *e, int worker)
{
    if (!e->ws[worker]) e->ws[worker] = gbp_codec_ws_take();
    return e->ws[worker];
}

static uint8_t *worker_fbuf(gbp_blosc_enc *e, int worker)
{
    if (!e->fbuf[worker]) {
        gbp_codec_ws *w = worker_ws(e, worker);
        e->fbuf[worker] = w ? gbp_codec_ws_buf(w, e->bsz_max) : NULL;
    }
    return e->fbuf[worker];
}

/* Stream s of unit r, its filtered bytes at in: a run, or coded into out, at most neblock - 1
 * bytes (a longer stream is stored raw). Returns GPUBP_OK or GPUBP_ERR_NOMEM. */
static int code_stream(gbp_blosc_enc *e, int worker, unit *r, unsigned s, const uint8_t *in,
                       size_t neblock, uint8_t *out)
{
    if (all_same(in, neblock)) {
        r->sk[s] = S_RUN;
        r->run[s] = in[0];
        return GPUBP_OK;
    }
    gbp_codec_ws *w = worker_ws(e, worker);
    if (!w) return GPUBP_ERR_NOMEM;
    size_t c = gbp_codec_encode(w, e->codec, e->level, in, neblock, out, neblock - 1);
    if (c == SIZE_MAX) return GPUBP_ERR_NOMEM;
    r->sk[s] = c ? S_CODED : S_RAW;
    r->clen[s] = (uint32_t)c;
    return GPUBP_OK;
}

/* Unit t's filtered streams that did not shrink, from its filtered block blk into its scratch
 * (stored raw as filtered: STORE_KEPT). */
void gbp_blosc_enc_keep_raw(gbp_blosc_enc *e, size_t t, const uint8_t *blk)
{
    unit *r = &e->u[t];
    size_t neblock = r->len / r->nst;
    uint8_t *scratch = gbp_blosc_enc_unit_scr(e, t);
    for (unsigned s = 0; s < r->nst; s++)
        if (r->sk[s] == S_RAW) memcpy(scratch + s * neblock, blk + s * neblock, neblock);
    r->raw_fbuf = 0;
}

void gbp_blosc_enc_code(gbp_blosc_enc *e, size_t task, int worker)
{
    unit *r = &e->u[task];
    if (r->kind == BLK_SKIP) return;
    if (e->filter != FILTER_NONE && !worker_fbuf(e, worker)) {
        r->kind = BLK_NOMEM;
        return;
    }
    const uint8_t *blk = filter_block(e->filter, r->src, e->fbuf[worker], r->len, e->ts);
    size_t neblock = r->len / r->nst;
    uint8_t *scratch = gbp_blosc_enc_unit_scr(e, task);
    for (unsigned s = 0; s < r->nst; s++) {
        const uint8_t *in = blk + s * neblock;
        if (code_stream(e, worker, r, s, in, neblock, scratch + s * neblock)) {
            r->kind = BLK_NOMEM;
            r->raw_fbuf = 0;
            return;
        }
        r->raw_fbuf |= r->sk[s] == S_RAW && e->filter != FILTER_NONE;
    }
    /* a filtered stream that does not shrink is kept as filtered; the threaded pass of the whole
     * buffer (direct) leaves it in this worker's filtered block for now (blosc_fused.c own_copy) */
    if (r->raw_fbuf && !e->direct) gbp_blosc_enc_keep_raw(e, task, blk);
    r->kind = BLK_DONE;
}

/* A unit's streams to their places (not a whole block stored plain: store_task). part: all
 * (0); all but unfiltered raw streams (1: fused_task); those only (2: after it, so that a chunk
 * found not to shrink copies their input once, as a plain block, not twice). */
void gbp_blosc_enc_store_streams(gbp_blosc_enc *e, size_t task, int worker, int part)
{
    const unit *r = &e->u[task];
    size_t neblock = r->len / (r->nst ? r->nst : 1);
    const uint8_t *scratch = gbp_blosc_enc_unit_scr(e, task), *filtered = NULL;
    /* its coder's filtered block holds its raw streams (copied by that worker: own_copy) */
    const uint8_t *kept = r->raw_fbuf ? e->fbuf[worker] : scratch;
    if (r->raw_fbuf) filtered = e->fbuf[worker];
    for (unsigned s = 0; s < r->nst; s++) {
        if (part && (part == 2) != (r->sstore[s] == STORE_FILTERED && e->filter == FILTER_NONE))
            continue;
        if (r->sstore[s] == STORE_CODED) {
            memcpy(r->sdst[s], scratch + s * neblock, r->clen[s]);
        } else if (r->sstore[s] == STORE_KEPT) {
            memcpy(r->sdst[s], kept + s * neblock, neblock);
        } else if (r->sstore[s] == STORE_FILTERED) {
            if (r->nst == 1) { /* the whole block: filtered straight into place */
                if (filter_block(e->filter, r->src, r->sdst[s], r->len, e->ts) == r->src)
                    memcpy(r->sdst[s], r->src, r->len);
                continue;
            }
            if (!filtered) {
                uint8_t *f = e->filter != FILTER_NONE ? worker_fbuf(e, worker) : NULL;
                if (e->filter != FILTER_NONE && !f) {
                    atomic_store(&e->store_nomem, 1);
                    return;
                }
                filtered = filter_block(e->filter, r->src, f, r->len, e->ts);
            }
            memcpy(r->sdst[s], filtered + s * neblock, neblock);
        }
    }
}

static void compress_task(void *ctx, size_t task, int worker)
{
    gbp_blosc_enc_code(ctx, task, worker);
}

/* The copy phase: each unit's bytes go to their place, in parallel. */
static void store_task(void *ctx, size_t task, int worker)
{
    gbp_blosc_enc *e = ctx;
    const unit *r = &e->u[task];
    if (r->store == STORE_PLAIN) memcpy(r->dst, r->src, r->len);
    else gbp_blosc_enc_store_streams(e, task, worker,
                       e->plain_only && !r->late && atomic_load(&r->claimed) ? 2 : 0);
}

static int add_unit(gbp_blosc_enc *e, const uint8_t *src, size_t len, size_t chunk, size_t block,
                    size_t in_off, int skip, unsigned nst)
{
    GBP_FORWARD_IF_ERROR(gbp_blosc_enc_grow((void **)&e->u, &e->cap_u, e->nu + 1, sizeof *e->u));
    unit *r = &e->u[e->nu++];
    /* the fields before the stream arrays: a memset of constant size (inline stores; one
     * thread cuts while the workers wait); the arrays too unless the threaded pass's coder
     * zeroes them (fused_task) */
    memset(r, 0, UNIT_STREAMS_AT);
    if (!gbp_blosc_enc_fused(e)) gbp_blosc_unit_zero_streams(r);
    r->src = src;
    r->len = len;
    r->chunk = chunk;
    r->block = block;
    r->in_off = in_off;
    r->kind = skip ? BLK_SKIP : BLK_NOMEM;
    r->nst = nst;
    atomic_init(&r->claimed, 0);
    atomic_init(&r->ready, 0);
    return GPUBP_OK;
}

/* Whether the blocks of chunk k need compressing: not for memcpyed chunks, nor for the rest of
 * a chunk already abandoned. */
static int chunk_skips(const gbp_blosc_enc *e, size_t k)
{
    if (e->level == 0 || chunk_bytes(e, k) < MIN_BUFFERSIZE) return 1;
    return e->started && e->ck == k && e->ck_mode == CK_ABANDONED;
}

/* Cuts the next len input bytes into units. in NULL: the outside codec's put (put_ext), which
 * reads nothing and must end on a block boundary or at the end of the input. */
int gbp_blosc_enc_cut(gbp_blosc_enc *e, const void *in, size_t len)
{
    GBP_CHECK_ARG(e);
    GBP_RETURN_ERROR_IF(e->put_pending, GPUBP_ERR_INVALID_ARG,
                        "blosc: put before the previous put was emitted");
    GBP_RETURN_ERROR_IF(len > e->n - e->taken, GPUBP_ERR_INVALID_ARG,
                        "blosc: %zu more input bytes, %zu announced, %zu taken", len, e->n,
                        e->taken);
    e->nu = 0;
    e->put_pending = 1;
    const uint8_t *p = in;
    size_t left = len;
    if (e->n < GBP_BLOSC_THRESHOLD) { /* stored raw after the prefix */
        if (left) GBP_FORWARD_IF_ERROR(add_unit(e, p, left, NO_CHUNK, 0, e->taken, 1, 1));
        e->taken += left;
        return GPUBP_OK;
    }
    /* the chunk of the last unit and what depends on it alone (a division or more each) */
    size_t k = SIZE_MAX, c0 = 0, cn = 0, bsz = 1;
    int split = 0, skips = 0;
    while (left > 0) {
        size_t pos = e->taken - e->carry_len;
        if (k == SIZE_MAX || pos < c0 || pos - c0 >= cn) {
            k = pos / e->m;
            c0 = k * e->m;
            cn = chunk_bytes(e, k);
            bsz = gbp_blosc_enc_blocksize(e, cn);
            split = enc_split(e, cn);
            skips = chunk_skips(e, k);
        }
        size_t j = (pos - c0) / bsz, blen = c0 + cn - (c0 + j * bsz);
        if (blen > bsz) blen = bsz;
        /* split chunks: a whole block is cut into typesize streams, the leftover block not */
        unsigned nst = blen == bsz && split ? (unsigned)e->ts : 1;
        size_t need = blen - e->carry_len;
        GBP_RETURN_ERROR_IF(e->xmode && left < blen, GPUBP_ERR_INVALID_ARG,
                            "blosc: an outside codec's put of %zu bytes ends inside a block", len);
        if (e->carry_len > 0 || left < blen) {
            if (!e->carry[e->cur] && !(e->carry[e->cur] = gbp_malloc(e->bsz_max)))
                return gbp_error(GPUBP_ERR_NOMEM, 0, "blosc: out of memory (encoder)");
            size_t t = need < left ? need : left;
            memcpy(e->carry[e->cur] + e->carry_len, p, t);
            e->carry_len += t;
            p += t;
            left -= t;
            e->taken += t;
            if (e->carry_len < blen) break; /* the rest comes with the next put */
            GBP_FORWARD_IF_ERROR(add_unit(e, e->carry[e->cur], blen, k, j, pos, skips, nst));
            e->cur ^= 1;
            e->carry_len = 0;
            continue;
        }
        GBP_FORWARD_IF_ERROR(add_unit(e, p, blen, k, j, pos, skips, nst));
        if (p) p += blen;
        left -= blen;
        e->taken += blen;
    }
    return GPUBP_OK;
}

/* spare: the whole-buffer threaded path, whose scratch is kept between calls (spare.c) */
int gbp_blosc_enc_unit_scratch(gbp_blosc_enc *e, int spare)
{
    if (e->scratch_units >= e->nu) return GPUBP_OK;
    if (e->scratch_spare) gbp_spare_give(e->scratch, e->scratch_spare);
    else gbp_free(e->scratch);
    size_t n = e->nu * e->bsz_max;
    e->scratch_spare = 0;
    e->scratch = spare ? gbp_spare_take(n, &e->scratch_spare) : gbp_malloc(n);
    e->scratch_units = !e->scratch ? 0 : spare ? e->scratch_spare / e->bsz_max : e->nu;
    if (!e->scratch) return gbp_error(GPUBP_ERR_NOMEM, 0, "blosc: out of memory (scratch)");
    return GPUBP_OK;
}

int gbp_blosc_enc_put(gbp_blosc_enc *e, const void *in, size_t len)
{
    GBP_CHECK_ARG(e);
    GBP_RETURN_ERROR_IF(in == NULL && len > 0, GPUBP_ERR_INVALID_ARG,
                        "blosc: NULL input for %zu bytes", len);
    GBP_RETURN_ERROR_IF(e->xmode, GPUBP_ERR_INVALID_ARG, "blosc: put after put_ext");
    GBP_FORWARD_IF_ERROR(gbp_blosc_enc_cut(e, in, len));
    if (e->nu == 0) return GPUBP_OK;
    GBP_FORWARD_IF_ERROR(gbp_blosc_enc_unit_scratch(e, 0));
    int workers = gbp_pool_workers(e->threads, e->nu); /* <= e->nw */
    gbp_pool_run(workers, e->nu, compress_task, e);
    return GPUBP_OK;
}

/* Room for len bytes at offset `at` of the operator buffer: their place in the output, and an
 * extent for them (merged with the last one when both are contiguous). */
static uint8_t *emit_bytes(gbp_blosc_enc *e, uint64_t at, size_t len)
{
    if (e->direct) return e->direct + at;
    uint8_t *p = e->out + e->o;
    gbp_blosc_extent *x = e->next ? &e->ext[e->next - 1] : NULL;
    if (x && x->p && x->off + x->len == at && x->p + x->len == p) {
        x->len += len;
    } else { /* room was reserved by the caller of emit_bytes */
        e->ext[e->next++] = (gbp_blosc_extent){at, len, p};
    }
    e->o += len;
    return p;
}

static void emit_zeros(gbp_blosc_enc *e, uint64_t at, size_t len)
{
    if (len == 0) return;
    if (e->direct) memset(e->direct + at, 0, len);
    else e->ext[e->next++] = (gbp_blosc_extent){at, len, NULL};
}

static int start_chunk(gbp_blosc_enc *e, size_t k, size_t first_unit)
{
    e->started = 1;
    e->ck = k;
    e->ck_in0 = k * e->m;
    e->ck_n = chunk_bytes(e, k);
    e->ck_bsz = gbp_blosc_enc_blocksize(e, e->ck_n);
    e->ck_split = enc_split(e, e->ck_n);
    e->ck_nb = e->ck_n / e->ck_bsz + (e->ck_n % e->ck_bsz != 0);
    e->ck_base = e->out_end;
    e->ck_mode = (e->level == 0 || e->ck_n < MIN_BUFFERSIZE) ? CK_MEMCPY : CK_NORMAL;
    e->nt = HDR_EXT + 4 * e->ck_nb;
    e->all_zero = 1;
    e->zpend = 0;
    e->ck_u0 = first_unit;
    e->ck_ext0 = e->next;
    e->ck_o0 = e->o;
    e->ck_seg0 = e->nseg;
    size_t hb = e->ck_mode == CK_NORMAL ? HDR_EXT + 4 * e->ck_nb : HDR_EXT;
    GBP_FORWARD_IF_ERROR(gbp_blosc_enc_grow((void **)&e->hdrs, &e->hdrs_cap, e->hdrs_len + hb, 1));
    GBP_FORWARD_IF_ERROR(gbp_blosc_enc_grow((void **)&e->ch, &e->cap_ch, e->nch + 1, sizeof *e->ch));
    e->bst = e->hdrs_len + HDR_EXT;
    e->ch[e->nch] = (chunk_rec){e->ck_base, hb, e->hdrs_len};
    e->hdrs_len += hb;
    return GPUBP_OK;
}

static void place_plain(gbp_blosc_enc *e, unit *r)
{
    r->store = STORE_PLAIN;
    r->dst = emit_bytes(e, e->ck_base + HDR_EXT + r->block * e->ck_bsz, r->len);
}

/* The chunk does not shrink: it becomes a memcpyed chunk. What this emit placed of it is taken
 * back and placed raw; what earlier emits placed is to be sent again (a redo range). */
static int abandon(gbp_blosc_enc *e, size_t upto)
{
    e->ck_mode = CK_ABANDONED;
    atomic_store(&e->dead_ck, e->ck);
    if (e->pend_ck == e->ck) e->npend = 0; /* parked streams: its redo range covers them */
    e->next = e->ck_ext0;
    e->o = e->ck_o0;
    e->nseg = e->ck_seg0;
    e->zpend = 0;
    size_t from = e->u[e->ck_u0].in_off;
    if (from > e->ck_in0) {
        GBP_FORWARD_IF_ERROR(gbp_blosc_enc_grow((void **)&e->redo, &e->cap_redo, e->nredo + 1, sizeof *e->redo));
        e->redo[e->nredo++] = (gbp_blosc_redo){e->ck_in0, from - e->ck_in0, e->ck_base + HDR_EXT};
    }
    for (size_t t = e->ck_u0; t <= upto; t++) place_plain(e, &e->u[t]);
    return GPUBP_OK;
}

static void finish_chunk(gbp_blosc_enc *e)
{
    const uint8_t flags = (uint8_t)(F_SHUFFLE | F_BITSHUFFLE | (e->ck_split ? 0 : F_DONTSPLIT) |
                                    e->fmt << 5);
    chunk_rec *c = &e->ch[e->nch];
    uint8_t *h = e->hdrs + c->hoff;
    size_t cbytes;
    if (e->ck_mode == CK_MEMCPY) {
        header(h, F_SHUFFLE | F_BITSHUFFLE | F_MEMCPYED, e->ts, e->ck_n, e->ck_bsz,
               e->ck_n + HDR_EXT, e->filter, e->codec, 0);
        cbytes = e->ck_n + HDR_EXT;
        c->len = HDR_EXT;
    } else if (e->ck_mode == CK_ABANDONED) { /* did not shrink: flags 0x77 */
        header(h, flags | F_MEMCPYED, e->ts, e->ck_n, e->ck_bsz, e->ck_n + HDR_EXT, e->filter, e->codec, 0);
        cbytes = e->ck_n + HDR_EXT;
        c->len = HDR_EXT;
    } else if (e->all_zero && e->ck_n % e->ts == 0) {
        /* every stream a zero run: the special-zero chunk. Blosc2 2.19 writes it for any size
         * but reads it back only when nbytes is a multiple of typesize (a piece of an odd split
         * may not be); then the chunk of zero runs, which decodes to the same bytes, is kept. */
        header(h, flags, e->ts, e->ck_n, e->ck_bsz, HDR_EXT, e->filter, e->codec,
               SPECIAL_ZERO << 4);
        cbytes = HDR_EXT;
        c->len = HDR_EXT;
    } else {
        emit_zeros(e, e->zpend_at, 4 * e->zpend);
        header(h, flags, e->ts, e->ck_n, e->ck_bsz, (size_t)e->nt, e->filter, e->codec, 0);
        cbytes = (size_t)e->nt;
    }
    e->zpend = 0;
    e->out_end = e->ck_base + cbytes;
    e->nch++;
    e->started = 0;
    e->pend_place = e->npend && e->pend_ck == e->ck; /* shrank: what was parked is placed */
}

/* blosc_c's bookkeeping for one compressed block, in block order: nt = bytes used so far, the
 * chunk is abandoned past room = nbytes + 32 (what ADIOS2 gives blosc2_compress). */
/* Outside codec: the small field just written at p (in out) becomes an inline segment. */
static int ext_field(gbp_blosc_enc *e, const uint8_t *p, size_t n)
{
    if (!e->xmode) return GPUBP_OK;
    GBP_FORWARD_IF_ERROR(gbp_blosc_enc_grow((void **)&e->seg, &e->cap_seg, e->nseg + 1, sizeof *e->seg));
    gbp_dz_seg *g = &e->seg[e->nseg++];
    memset(g, 0, sizeof *g);
    g->dst = (uint64_t)(p - e->out);
    g->len = (uint32_t)n;
    g->kind = GBP_SEG_INLINE;
    memcpy(g->inl, p, n);
    return GPUBP_OK;
}

static int walk_block(gbp_blosc_enc *e, size_t t)
{
    unit *r = &e->u[t];
    uint64_t room = e->ck_n + HDR_EXT;
    const uint8_t *blk = NULL; /* in place: the filtered block, coded stream by stream below */
    if (e->inplace && (e->filter == FILTER_NONE || worker_fbuf(e, 0))) {
        blk = filter_block(e->filter, r->src, e->fbuf[0], r->len, e->ts);
        r->kind = BLK_DONE;
    }
    if (r->kind == BLK_NOMEM)
        return gbp_error(GPUBP_ERR_NOMEM, 0, "blosc: out of memory compressing a block");
    st32(e->hdrs + e->bst + 4 * r->block, (uint32_t)e->nt);
    size_t neblock = r->len / r->nst;
    for (unsigned s = 0; s < r->nst; s++) {
        r->sstore[s] = STORE_NONE;
        uint64_t at = e->ck_base + e->nt; /* nt counts from the chunk's start */
        e->nt += 4;
        /* in place: coded straight to its place when the chunk has room there for neblock - 1
         * bytes (what compress_task allows), else into the scratch: the same bytes */
        int direct = e->nt + neblock - 1 <= room;
        if (blk && code_stream(e, 0, r, s, blk + s * neblock, neblock,
                               direct ? e->direct + e->ck_base + e->nt : e->scratch))
            return gbp_error(GPUBP_ERR_NOMEM, 0, "blosc: out of memory compressing a block");
        if (r->sk[s] == S_RUN) {
            if (e->nt > room) return abandon(e, t);
            if (r->run[s]) {
                if (++e->nt > room) return abandon(e, t);
            } else if (e->all_zero) { /* written once the chunk is known not to be special */
                if (e->zpend++ == 0) e->zpend_at = at;
                continue;
            }
            if (e->all_zero) emit_zeros(e, e->zpend_at, 4 * e->zpend);
            e->all_zero = 0;
            e->zpend = 0;
            uint8_t *p = emit_bytes(e, at, r->run[s] ? 5 : 4);
            st32(p, (uint32_t)-(int32_t)r->run[s]);
            if (r->run[s]) p[4] = 0x01;
            GBP_FORWARD_IF_ERROR(ext_field(e, p, r->run[s] ? 5 : 4));
            continue;
        }
        size_t maxout = neblock;
        if (e->nt + maxout > room) {
            if (e->nt >= room) return abandon(e, t);
            maxout = (size_t)(room - e->nt);
        }
        size_t slen;
        if (r->sk[s] == S_CODED && r->clen[s] <= maxout) {
            r->sstore[s] = STORE_CODED;
            slen = r->clen[s];
        } else {
            if (e->nt + neblock > room) return abandon(e, t); /* stored raw does not fit */
            r->sstore[s] =
                r->sk[s] == S_RAW && e->filter != FILTER_NONE ? STORE_KEPT : STORE_FILTERED;
            slen = neblock;
        }
        if (e->all_zero) emit_zeros(e, e->zpend_at, 4 * e->zpend);
        e->all_zero = 0;
        e->zpend = 0;
        uint8_t *p = emit_bytes(e, at, 4 + slen);
        st32(p, (uint32_t)slen);
        GBP_FORWARD_IF_ERROR(ext_field(e, p, 4));
        r->sdst[s] = p + 4;
        e->nt += slen;
        if (!blk) continue;
        if (r->sstore[s] != STORE_CODED) { /* stored raw */
            /* unfiltered: left to store_task, which a chunk found not to shrink replaces by
             * its plain copy (no copy twice); filtered: from the filtered block, now */
            if (e->filter == FILTER_NONE) continue;
            memcpy(r->sdst[s], blk + s * neblock, neblock);
        } else if (!direct) {
            memcpy(r->sdst[s], e->scratch, slen);
        }
        r->sstore[s] = STORE_NONE; /* in place already */
    }
    return GPUBP_OK;
}

/* Outside codec: the units' bytes become segments (what store_task copies on the host). */
static int ext_segments(gbp_blosc_enc *e)
{
    for (size_t t = 0; t < e->nu; t++) {
        const unit *r = &e->u[t];
        size_t need = r->store == STORE_PLAIN ? 1 : r->nst;
        GBP_FORWARD_IF_ERROR(gbp_blosc_enc_grow((void **)&e->seg, &e->cap_seg, e->nseg + need, sizeof *e->seg));
        if (r->store == STORE_PLAIN) {
            e->seg[e->nseg++] = (gbp_dz_seg){.dst = (uint64_t)(r->dst - e->out),
                                             .src = r->in_off, .len = (uint32_t)r->len,
                                             .kind = GBP_XSEG_INPUT};
            continue;
        }
        size_t neblock = r->len / (r->nst ? r->nst : 1);
        for (unsigned s = 0; s < r->nst; s++) {
            if (r->sstore[s] == STORE_NONE) continue;
            int coded = r->sstore[s] == STORE_CODED;
            e->seg[e->nseg++] = (gbp_dz_seg){
                .dst = (uint64_t)(r->sdst[s] - e->out),
                .src = coded ? r->sidx + s : r->in_off + s * neblock,
                .len = (uint32_t)(coded ? r->clen[s] : neblock),
                .kind = (uint8_t)(coded ? GBP_SEG_CODED : GBP_XSEG_FILTERED)};
        }
    }
    return GPUBP_OK;
}

void gbp_blosc_enc_emit_start(gbp_blosc_enc *e)
{
    e->ck_u0 = 0;
    e->ck_ext0 = e->next;
    e->ck_o0 = e->o;
    e->ck_seg0 = e->nseg;
}

/* Unit t in block order: blosc_c's rules, its places. */
int gbp_blosc_enc_emit_one(gbp_blosc_enc *e, size_t t)
{
    unit *r = &e->u[t];
    r->store = STORE_NONE;
    if (r->chunk == NO_CHUNK) {
        r->store = STORE_PLAIN;
        r->dst = emit_bytes(e, GBP_BLOSC_PREFIX + r->in_off, r->len);
        return GPUBP_OK;
    }
    if (r->block == 0) GBP_FORWARD_IF_ERROR(start_chunk(e, r->chunk, t));
    if (e->ck_mode != CK_NORMAL) place_plain(e, r);
    else GBP_FORWARD_IF_ERROR(walk_block(e, t));
    if (r->block == e->ck_nb - 1) finish_chunk(e);
    return GPUBP_OK;
}

int gbp_blosc_enc_store_all(gbp_blosc_enc *e)
{
    if (!e->plain_only) atomic_store(&e->store_nomem, 0);
    gbp_pool_run(gbp_pool_workers(e->threads, e->nu), e->nu, store_task, e);
    GBP_RETURN_ERROR_IF(atomic_load(&e->store_nomem), GPUBP_ERR_NOMEM, "blosc: out of memory placing streams");
    return GPUBP_OK;
}

static void pend_task(void *ctx, size_t i, int worker)
{
    const pend_copy *c = &((gbp_blosc_enc *)ctx)->pend[i];
    (void)worker;
    memcpy(c->dst, c->src, c->len);
}

/* Whole buffer: the unfiltered raw streams of the chunk still open when a batch ends are not
 * copied then but parked until the chunk ends: placed if it shrank, dropped if it was abandoned
 * (its redo range copies it whole), so that a chunk found not to shrink a batch later does not
 * copy them twice, cold (smooth doubles, lz4 without shuffle, one thread: 0.85 of Blosc2's
 * speed; Blosc2 copies each such stream while it is in cache, then the whole chunk). */
int gbp_blosc_enc_settle(gbp_blosc_enc *e)
{
    if (e->pend_place) {
        gbp_pool_run(gbp_pool_workers(e->threads, e->npend), e->npend, pend_task, e);
        e->npend = 0;
        e->pend_place = 0;
    }
    if (!e->in_base || !e->started || e->ck_mode != CK_NORMAL || e->filter != FILTER_NONE)
        return GPUBP_OK;
    e->pend_ck = e->ck;
    for (size_t t = 0; t < e->nu; t++) {
        unit *r = &e->u[t];
        if (r->chunk != e->ck || r->store == STORE_PLAIN) continue;
        size_t neblock = r->len / (r->nst ? r->nst : 1);
        for (unsigned s = 0; s < r->nst; s++) {
            if (r->sstore[s] != STORE_FILTERED) continue;
            GBP_FORWARD_IF_ERROR(gbp_blosc_enc_grow((void **)&e->pend, &e->cap_pend, e->npend + 1,
                                                    sizeof *e->pend));
            /* from the input (a carry buffer that held the block is reused) */
            e->pend[e->npend++] = (pend_copy){r->sdst[s], e->in_base + r->in_off + s * neblock,
                                              neblock};
            r->sstore[s] = STORE_NONE;
        }
    }
    return GPUBP_OK;
}

static int emit_units(gbp_blosc_enc *e)
{
    gbp_blosc_enc_emit_start(e);
    for (size_t t = 0; t < e->nu; t++) GBP_FORWARD_IF_ERROR(gbp_blosc_enc_emit_one(e, t));
    if (e->xmode) return ext_segments(e);
    GBP_FORWARD_IF_ERROR(gbp_blosc_enc_settle(e));
    return gbp_blosc_enc_store_all(e);
}

int gbp_blosc_enc_emit(gbp_blosc_enc *e, uint8_t *out, size_t cap, const gbp_blosc_extent **ext,
                       size_t *next)
{
    GBP_CHECK_ARG(e);
    GBP_CHECK_ARG(ext);
    GBP_CHECK_ARG(next);
    size_t bytes = 0;
    for (size_t t = 0; t < e->nu; t++) bytes += e->u[t].len;
    GBP_RETURN_ERROR_IF(out == NULL || cap < bytes + 5 * GBP_MAX_STREAMS * e->nu + 8, GPUBP_ERR_INVALID_ARG,
                        "blosc: output room of %zu bytes for %zu units of %zu bytes", cap, e->nu,
                        bytes);
    /* extents: one per unit at most, plus zero runs written late (one per chunk) */
    GBP_FORWARD_IF_ERROR(gbp_blosc_enc_grow((void **)&e->ext, &e->cap_ext, 2 * GBP_MAX_STREAMS * e->nu + 2,
                              sizeof *e->ext));
    e->out = out;
    e->ocap = cap;
    e->o = 0;
    e->next = 0;
    int rc = emit_units(e);
    e->nu = 0;
    e->put_pending = 0;
    *ext = e->ext;
    *next = rc == GPUBP_OK ? e->next : 0;
    return rc;
}

int gbp_blosc_enc_finish(gbp_blosc_enc *e, const gbp_blosc_extent **ext, size_t *next,
                         const gbp_blosc_redo **redo, size_t *nredo, size_t *total)
{
    GBP_CHECK_ARG(e);
    GBP_RETURN_ERROR_IF(e->taken != e->n || e->carry_len != 0 || e->started || e->put_pending,
                        GPUBP_ERR_INVALID_ARG,
                        "blosc: finish after %zu of %zu input bytes", e->taken, e->n);
    st32(e->prefix + 19, (uint32_t)e->nch);
    GBP_FORWARD_IF_ERROR(gbp_blosc_enc_grow((void **)&e->ext, &e->cap_ext, e->nch + 1, sizeof *e->ext));
    e->next = 0;
    e->ext[e->next++] = (gbp_blosc_extent){0, GBP_BLOSC_PREFIX, e->prefix};
    for (size_t k = 0; k < e->nch; k++)
        e->ext[e->next++] = (gbp_blosc_extent){e->ch[k].base, e->ch[k].len, e->hdrs + e->ch[k].hoff};
    if (ext) *ext = e->ext;
    if (next) *next = e->next;
    if (redo) *redo = e->redo;
    if (nredo) *nredo = e->nredo;
    if (total) *total = e->n < GBP_BLOSC_THRESHOLD ? GBP_BLOSC_PREFIX + e->n : (size_t)e->out_end;
    return GPUBP_OK;
}

/* A filtered batch's bytes per worker at least: 1 MiB, or GPUBP_BLOSC_WORKER_MIB (1-64; a tuning
 * knob for the H200 runs: each batch ends in a join and starts with a wake of the pool, which
 * cost more with 16 workers; 2 MiB makes 32 MiB of 16 KiB blocks one batch at 16 workers
 * instead of two; the bytes do not change). */
static size_t worker_bytes(void)
{
    return gbp_env_mib("GPUBP_BLOSC_WORKER_MIB", 64, (size_t)1 << 20);
}

/* The whole buffer's batches with w workers. A batch ends in a join, where workers wait for its
 * slowest block and the copies left: at least 8 blocks and 1 MiB (2 MiB unfiltered: see
 * BATCH_BYTES) per worker, so that this is a small part of a batch (16 workers, 256 KiB blocks,
 * 4 per worker: lz4 at 0.5 of Blosc2); at most BATCH_MAX of scratch (kept between calls:
 * spare.c). The input is then cut into equal batches of whole blocks, so that the last one is
 * not a small one that few workers run. */
static size_t batch_bytes(const gbp_blosc_enc *e, size_t w)
{
    size_t piece = w > 1 && e->filter != FILTER_NONE ? BATCH_BYTES_FILTERED : BATCH_BYTES;
    if (w == 1) return piece;
    size_t per = e->filter != FILTER_NONE ? worker_bytes() : (size_t)2 << 20;
    if (per < 8 * e->bsz_max) per = 8 * e->bsz_max;
    if (piece < w * per) piece = w * per;
    if (piece > BATCH_MAX) piece = BATCH_MAX;
    size_t nb = (e->n + piece - 1) / piece; /* batches */
    if (nb < 1) nb = 1;
    size_t blocks = ((e->n + nb - 1) / nb + e->bsz_max - 1) / e->bsz_max;
    return (blocks ? blocks : 1) * e->bsz_max;
}

int gbp_blosc_compress(const void *src, size_t n, size_t typesize, int codec, int level,
                       int shuffle, int threads, void *dst, size_t cap, size_t *outlen)
{
    GBP_CHECK_ARG(dst);
    GBP_CHECK_ARG(outlen);
    GBP_RETURN_ERROR_IF(src == NULL && n > 0, GPUBP_ERR_INVALID_ARG,
                        "blosc: NULL source for %zu bytes", n);
    gbp_blosc_enc *e;
    GBP_FORWARD_IF_ERROR(gbp_blosc_enc_open(&e, n, typesize, codec, level, shuffle, threads));
    size_t bound = gbp_blosc_bound(n);
    if (cap < bound) {
        gbp_blosc_enc_close(e);
        return gbp_error(GPUBP_ERR_INVALID_ARG, 0,
                         "blosc: destination of %zu bytes, %zu needed for %zu input bytes", cap,
                         bound, n);
    }
    e->direct = dst;
    e->in_base = src;
    size_t w = (size_t)gbp_pool_workers(threads, SIZE_MAX), piece = batch_bytes(e, w);
    /* one thread: each stream is coded as its block is walked, straight into its place (as
     * Blosc2's serial path does), instead of into a scratch slot copied into place after */
    e->inplace = w == 1;
    /* kept between calls (spare.c), as the threaded path's scratch */
    if (e->inplace && !(e->scratch = gbp_spare_take(e->bsz_max, &e->scratch_spare))) {
        gbp_blosc_enc_close(e);
        return gbp_error(GPUBP_ERR_NOMEM, 0, "blosc: out of memory (scratch)");
    }
    const uint8_t *in = src;
    int rc = GPUBP_OK;
    for (size_t off = 0; rc == GPUBP_OK && off < n; off += piece) {
        size_t len = n - off < piece ? n - off : piece;
        if (e->inplace) rc = gbp_blosc_enc_cut(e, in + off, len);
        else rc = gbp_blosc_enc_fused_batch(e, in + off, len);
        if (rc == GPUBP_OK && e->inplace) rc = emit_units(e); /* in place, no extents */
        e->nu = 0;
        e->put_pending = 0;
    }
    const gbp_blosc_extent *x = NULL;
    const gbp_blosc_redo *r = NULL;
    size_t nx = 0, nr = 0, total = 0;
    if (rc == GPUBP_OK && e->npend) /* the last chunk ended in the last batch: none left */
        rc = gbp_error(GPUBP_ERR_INTERNAL, 0, "blosc: %zu raw streams left parked", e->npend);
    if (rc == GPUBP_OK) rc = gbp_blosc_enc_finish(e, &x, &nx, &r, &nr, &total);
    if (rc == GPUBP_OK) {
        uint8_t *out = dst;
        for (size_t i = 0; i < nx; i++) memcpy(out + x[i].off, x[i].p, x[i].len);
        for (size_t i = 0; i < nr; i++)
            gbp_pool_copy(out + r[i].out_off, in + r[i].in_off, r[i].len, (int)w);
        *outlen = total;
    }
    gbp_blosc_enc_close(e);
    return rc;
}
