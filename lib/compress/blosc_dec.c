/* Reading the ADIOS2 blosc operator buffer and its Blosc2 chunks (docs/format/blosc-zlib.md).
 *
 * Reading validates the chunk header and the bstarts serially, then decodes the blocks in
 * parallel, each block reading only inside its own chunk and writing only its own output range.
 * A failing block records its message; the lowest failing block's message is reported, so the
 * error does not depend on the thread count either. */
#include "compress/blosc_dec.h"

#include "compress/blosc_codec.h"
#include "compress/blosc_frame.h"
#include "compress/shuffle.h"
#include "compress/pool.h"

#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdarg.h>
#include <stdio.h>

/* ---- decompression --------------------------------------------------------------------------- */

typedef struct dchunk {
    const uint8_t *c;     /* the chunk */
    size_t cbytes;        /* validated: within the buffer */
    size_t ov;            /* header length: 16 or 32 */
    size_t base;          /* offset of the chunk in the operator buffer (messages) */
    uint8_t *out;         /* the window's bytes: uncompressed bytes [lo, hi) of the chunk */
    size_t lo, hi;
    size_t nbytes, bsz, nblocks, ts;
    int version, codec, dont_split;
    int filters[6];
    int nfilters;         /* shuffle / bitshuffle filters to undo */
    int partial_any;      /* the window cuts a block: a worker may need a block's scratch */
    size_t first, last;   /* first and last block of the window */
    gbp_codec_ws **ws;    /* per worker: codec contexts and scratch (taken on first use) */
    pthread_mutex_t mu;
    atomic_size_t err_block; /* lowest failing block; SIZE_MAX if none (written under mu) */
    size_t per;           /* blocks per task */
    int err_rc;
    char err_msg[256];
} dchunk;

#if defined(__GNUC__)
__attribute__((format(printf, 4, 5)))
#endif
static void block_error(dchunk *d, size_t j, int rc, const char *fmt, ...)
{
    char msg[256];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    pthread_mutex_lock(&d->mu);
    if (j < atomic_load(&d->err_block)) {
        atomic_store(&d->err_block, j);
        d->err_rc = rc;
        memcpy(d->err_msg, msg, sizeof msg);
    }
    pthread_mutex_unlock(&d->mu);
}

/* Worker `worker`'s codec state, taken on first use; NULL (block j's error recorded) when out of
 * memory. */
static gbp_codec_ws *worker_ws(dchunk *d, size_t j, int worker)
{
    if (!d->ws[worker] && !(d->ws[worker] = gbp_codec_ws_take()))
        block_error(d, j, GPUBP_ERR_NOMEM, "blosc: out of memory (codec state)");
    return d->ws[worker];
}

/* Worker `worker`'s scratch in its codec state's buffer, kept between calls with the state (no
 * allocation per call): a block only partly in the window (when the window cuts one), then one
 * or two filtered blocks (the filters to undo), bsz bytes each. NULL (block j's error recorded)
 * when out of memory. */
static uint8_t *worker_scratch(dchunk *d, size_t j, int worker)
{
    gbp_codec_ws *ws = worker_ws(d, j, worker);
    if (!ws) return NULL;
    size_t n = (size_t)d->partial_any + (size_t)(d->nfilters > 1 ? 2 : d->nfilters);
    uint8_t *b = gbp_codec_ws_buf(ws, n * d->bsz);
    if (!b) block_error(d, j, GPUBP_ERR_NOMEM, "blosc: out of memory (%zu bytes of scratch)",
                        n * d->bsz);
    return b;
}

static void decompress_block(dchunk *d, size_t j, int worker)
{
    /* a lower block failed: its error is the one reported (a hint read without the lock: the
     * blocks before the lowest failure are all decoded, so it only saves work) */
    if (atomic_load_explicit(&d->err_block, memory_order_relaxed) < j) return;

    const uint8_t *c = d->c;
    const size_t end = d->cbytes, at = d->base;
    int last = j == d->nblocks - 1 && d->nbytes % d->bsz != 0;
    size_t len = block_len(d->nbytes, d->bsz, j);
    size_t nstreams = (!d->dont_split && !last) ? d->ts : 1, neblock = len / nstreams;
    int32_t bstart = ldi32(c + d->ov + 4 * j);
    if (bstart <= 0 || (size_t)bstart >= end) {
        block_error(d, j, GPUBP_ERR_FORMAT,
                    "blosc buffer: offset %zu: block %zu starts at %d, outside its chunk of %zu "
                    "bytes", at + d->ov + 4 * j, j, bstart, end);
        return;
    }
    if (neblock == 0 || neblock * nstreams != len) {
        block_error(d, j, GPUBP_ERR_FORMAT,
                    "blosc buffer: offset %zu: block %zu of %zu bytes cannot be split into %zu "
                    "streams", at, j, len, nstreams);
        return;
    }
    size_t blo = j * d->bsz, bhi = blo + len;
    int partial = blo < d->lo || bhi > d->hi;
    uint8_t *s2 = NULL, *s0 = NULL, *s1 = NULL; /* this worker's scratch */
    if (partial || d->nfilters) {
        uint8_t *b = worker_scratch(d, j, worker);
        if (!b) return;
        s2 = b;
        if (d->nfilters) s0 = b + (d->partial_any ? d->bsz : 0);
        if (d->nfilters > 1) s1 = s0 + d->bsz;
    }
    uint8_t *out = partial ? s2 : d->out + (blo - d->lo);
    uint8_t *target = d->nfilters ? s0 : out;
    /* streams stored raw are read where they are when what follows takes streams anywhere:
     * one stream and a filter, or the byte shuffle alone of a split block */
    int only = -1; /* the filter, when there is one */
    for (int f = 0; f < 6 && d->nfilters == 1; f++)
        if (d->filters[f] == FILTER_SHUFFLE || d->filters[f] == FILTER_BITSHUFFLE)
            only = d->filters[f];
    int in_place = (nstreams == 1 && d->nfilters > 0) ||
                   (only == FILTER_SHUFFLE && nstreams == d->ts && nstreams > 1);
    const uint8_t *st[256];
    size_t p = (size_t)bstart;
    for (size_t s = 0; s < nstreams; s++) {
        uint8_t *t = target + s * neblock;
        st[s] = t;
        if (end - p < 4) {
            block_error(d, j, GPUBP_ERR_FORMAT,
                        "blosc buffer: offset %zu: block %zu stream %zu: the chunk ends before "
                        "its size", at + p, j, s);
            return;
        }
        int32_t csize = ldi32(c + p);
        p += 4;
        if (csize == 0) {
            memset(t, 0, neblock);
        } else if (csize < 0) {
            if (p >= end || !(c[p] & 1) || csize < -255) {
                block_error(d, j, GPUBP_ERR_FORMAT,
                            "blosc buffer: offset %zu: block %zu stream %zu: bad run (csize %d)",
                            at + p - 4, j, s, csize);
                return;
            }
            p++;
            memset(t, -csize, neblock);
        } else if ((size_t)csize > end - p) {
            block_error(d, j, GPUBP_ERR_FORMAT,
                        "blosc buffer: offset %zu: block %zu stream %zu: %d bytes, only %zu left "
                        "in the chunk", at + p - 4, j, s, csize, end - p);
            return;
        } else if ((size_t)csize == neblock) { /* stored raw */
            if (in_place) st[s] = c + p;
            else memcpy(t, c + p, neblock);
            p += neblock;
        } else if (gbp_codec_unavailable(d->codec)) {
            block_error(d, j, GPUBP_ERR_CODEC,
                        "blosc buffer: offset %zu: chunk compressed with the %s codec: %s",
                        d->base, gbp_blosc_codec_name(d->codec),
                        gbp_codec_unavailable(d->codec));
            return;
        } else {
            if (!worker_ws(d, j, worker)) return;
            int zr = gbp_codec_decode(d->ws[worker], d->codec, c + p, (size_t)csize, t, neblock);
            if (zr != GPUBP_OK) {
                block_error(d, j, zr,
                            "blosc buffer: offset %zu: block %zu stream %zu: %s%s%s", at + p, j, s,
                            zr == GPUBP_ERR_NOMEM ? "out of memory for " : "damaged ",
                            gbp_blosc_codec_name(d->codec),
                            zr == GPUBP_ERR_NOMEM ? "" : " stream (does not decode to the "
                                                         "block's size)");
                return;
            }
            p += (size_t)csize;
        }
    }
    /* undo the filters, slot 5 first */
    const uint8_t *cur = nstreams == 1 ? st[0] : target;
    int left = d->nfilters;
    if (in_place && nstreams > 1) {
        gbp_byte_unshuffle_streams(st, out, len, d->ts);
        left = 0;
    }
    for (int f = 5; f >= 0 && left > 0; f--) {
        int id = d->filters[f];
        if (id != FILTER_SHUFFLE && id != FILTER_BITSHUFFLE) continue;
        uint8_t *to = --left == 0 ? out : (cur == s0 ? s1 : s0);
        if (id == FILTER_SHUFFLE) gbp_byte_unshuffle(cur, to, len, d->ts);
        else gbp_bit_unshuffle(cur, to, len, d->ts, d->version == 2);
        cur = to;
    }
    if (partial) { /* the part of the block inside the window */
        size_t a = blo > d->lo ? blo : d->lo, b = bhi < d->hi ? bhi : d->hi;
        memcpy(d->out + (a - d->lo), out + (a - blo), b - a);
    }
}

/* Task t: blocks first + t * per onwards, per of them (fewer at the end). Several blocks a task:
 * one take from the pool's counter for them, which all workers share (16 KiB blocks copied at
 * 48 GB/s are 2048 takes in 0.7 ms). */
static void decompress_task(void *ctx, size_t task, int worker)
{
    dchunk *d = ctx;
    size_t j0 = d->first + task * d->per, n = d->last + 1 - j0;
    if (n > d->per) n = d->per;
    for (size_t j = j0; j < j0 + n; j++) decompress_block(d, j, worker);
}

/* Bytes [lo, hi) of a repeating pattern of `period` bytes. */
static void fill_pattern(uint8_t *out, size_t lo, size_t hi, const uint8_t *pat, size_t period)
{
    for (size_t i = lo; i < hi; i++) out[i - lo] = pat[i % period];
}

/* Decodes the chunk at src (avail bytes to the end of the buffer; `base` = its offset there) into
 * out, which has `room` bytes. *nbytes and *cbytes get the chunk's sizes. */
static int decode_chunk(const uint8_t *src, size_t avail, size_t base, uint8_t *out, size_t room,
                        size_t lo, size_t hi, int threads, size_t *nbytes_out, size_t *cbytes_out)
{
    GBP_RETURN_ERROR_IF(avail < HDR_MIN, GPUBP_ERR_FORMAT,
                        "blosc buffer: offset %zu: %zu bytes left, a chunk header needs 16", base,
                        avail);
    int version = src[0], flags = src[2];
    size_t ts = src[3];
    int32_t nb = ldi32(src + 4), bs = ldi32(src + 8), cb = ldi32(src + 12);
    int extended = (flags & (F_SHUFFLE | F_BITSHUFFLE)) == (F_SHUFFLE | F_BITSHUFFLE);
    size_t ov = extended ? HDR_EXT : HDR_MIN;
    GBP_RETURN_ERROR_IF(version == 0 || version > CHUNK_VERSION, GPUBP_ERR_FORMAT,
                        "blosc buffer: offset %zu: chunk format version %d (1..5 supported)", base,
                        version);
    GBP_RETURN_ERROR_IF(cb < (int32_t)ov || (size_t)cb > avail, GPUBP_ERR_FORMAT,
                        "blosc buffer: offset %zu: chunk of %d bytes, %zu left in the buffer", base,
                        cb, avail);
    GBP_RETURN_ERROR_IF(nb < 0 || (size_t)nb > room, GPUBP_ERR_FORMAT,
                        "blosc buffer: offset %zu: chunk of %d uncompressed bytes, %zu expected at "
                        "most", base, nb, room);
    GBP_RETURN_ERROR_IF(bs <= 0 || (nb > 0 && bs > nb) || bs > MAX_BLOCKSIZE, GPUBP_ERR_FORMAT,
                        "blosc buffer: offset %zu: bad blocksize %d for %d bytes", base, bs, nb);
    GBP_RETURN_ERROR_IF(ts == 0, GPUBP_ERR_FORMAT, "blosc buffer: offset %zu: typesize 0", base);
    size_t nbytes = (size_t)nb, cbytes = (size_t)cb, bsz = (size_t)bs;
    *nbytes_out = nbytes;
    *cbytes_out = cbytes;
    if (hi > nbytes) hi = nbytes;
    if (lo > hi) lo = hi;

    int filters[6] = {0, 0, 0, 0, 0, 0}, special = 0;
    if (extended) {
        int b2 = src[31];
        for (int f = 0; f < 6; f++) filters[f] = src[16 + f];
        GBP_RETURN_ERROR_IF(b2 & 0x01, GPUBP_ERR_CODEC,
                            "blosc buffer: offset %zu: chunk with a zstd dictionary, not supported",
                            base);
        GBP_RETURN_ERROR_IF(b2 & 0x80, GPUBP_ERR_CODEC,
                            "blosc buffer: offset %zu: instrumented chunk, not supported", base);
        special = (b2 >> 4) & 7;
        GBP_RETURN_ERROR_IF(special > SPECIAL_UNINIT, GPUBP_ERR_FORMAT,
                            "blosc buffer: offset %zu: unknown special chunk kind %d", base,
                            special);
        GBP_RETURN_ERROR_IF((b2 & 0x08) && !special, GPUBP_ERR_FORMAT,
                            "blosc buffer: offset %zu: lazy chunk outside a super-chunk", base);
    } else {
        if (flags & F_SHUFFLE) filters[5] = FILTER_SHUFFLE;
        if (flags & F_BITSHUFFLE) filters[5] = FILTER_BITSHUFFLE;
        if (flags & F_DELTA) filters[4] = FILTER_DELTA;
    }

    if (special == SPECIAL_VALUE) {
        size_t vts = cbytes - HDR_EXT;
        GBP_RETURN_ERROR_IF(vts == 0 || vts > nbytes || nbytes % vts != 0, GPUBP_ERR_FORMAT,
                            "blosc buffer: offset %zu: repeated-value chunk with a %zu-byte value "
                            "for %zu bytes", base, vts, nbytes);
        fill_pattern(out, lo, hi, src + HDR_EXT, vts);
        return GPUBP_OK;
    }
    if (special) {
        /* Blosc2 2.19 also wants zero chunks to hold whole elements; 3.x accepts any size, and
         * 2.19 writes such chunks (a zero piece of an odd-sized > 2 GiB split): accept them */
        GBP_RETURN_ERROR_IF(special == SPECIAL_NAN && nbytes % ts != 0, GPUBP_ERR_FORMAT,
                            "blosc buffer: offset %zu: special chunk of %zu bytes, typesize %zu",
                            base, nbytes, ts);
        if (special == SPECIAL_NAN) {
            GBP_RETURN_ERROR_IF(ts != 4 && ts != 8, GPUBP_ERR_FORMAT,
                                "blosc buffer: offset %zu: NaN chunk with typesize %zu", base, ts);
            static const float fnan = NAN;
            static const double dnan = NAN;
            fill_pattern(out, lo, hi, ts == 4 ? (const uint8_t *)&fnan : (const uint8_t *)&dnan, ts);
        } else {
            memset(out, 0, hi - lo); /* zeros; uninitialised also reads as zeros */
        }
        return GPUBP_OK;
    }
    if (flags & F_MEMCPYED) {
        GBP_RETURN_ERROR_IF(cbytes != nbytes + ov, GPUBP_ERR_FORMAT,
                            "blosc buffer: offset %zu: memcpyed chunk of %zu bytes holds %zu", base,
                            cbytes, nbytes);
        gbp_pool_copy(out, src + ov + lo, hi - lo, threads);
        return GPUBP_OK;
    }
    if (nbytes == 0) {
        GBP_RETURN_ERROR_IF(cbytes != ov, GPUBP_ERR_FORMAT,
                            "blosc buffer: offset %zu: empty chunk with %zu bytes of payload", base,
                            cbytes - ov);
        return GPUBP_OK;
    }
    int nfilters = 0;
    for (int f = 0; f < 6; f++) {
        int id = filters[f];
        if (id == FILTER_SHUFFLE || id == FILTER_BITSHUFFLE) nfilters++;
        else if (id == FILTER_DELTA)
            return gbp_error(GPUBP_ERR_CODEC, 0,
                             "blosc buffer: offset %zu: the delta filter is not supported", base);
        else if (id != FILTER_NONE && id != FILTER_TRUNC)
            return gbp_error(GPUBP_ERR_CODEC, 0,
                             "blosc buffer: offset %zu: filter %d is not supported", base, id);
    }
    size_t nblocks = nbytes / bsz + (nbytes % bsz != 0);
    GBP_RETURN_ERROR_IF(nblocks > (cbytes - ov) / 4, GPUBP_ERR_FORMAT,
                        "blosc buffer: offset %zu: %zu block starts do not fit in a chunk of %zu "
                        "bytes", base, nblocks, cbytes);

    dchunk d;
    memset(&d, 0, sizeof d);
    d.c = src;
    d.cbytes = cbytes;
    d.ov = ov;
    d.base = base;
    d.out = out;
    d.lo = lo;
    d.hi = hi;
    d.nbytes = nbytes;
    d.bsz = bsz;
    d.nblocks = nblocks;
    d.ts = ts;
    d.version = version;
    d.codec = flags >> 5;
    d.dont_split = (flags & F_DONTSPLIT) != 0;
    memcpy(d.filters, filters, sizeof filters);
    d.nfilters = nfilters;
    atomic_init(&d.err_block, SIZE_MAX);
    if (lo == hi) return GPUBP_OK; /* nothing of this chunk is wanted */
    size_t jfirst = lo / bsz, jlast = (hi - 1) / bsz, nwin = jlast - jfirst + 1;
    int partial = lo % bsz != 0 || (hi % bsz != 0 && hi != nbytes);
    int workers = gbp_pool_workers(threads, nwin), rc = GPUBP_OK;
    /* up to 256 KiB of blocks a task, while each worker still gets 8 tasks or more */
    d.per = ((size_t)256 << 10) / bsz;
    if (d.per > nwin / (8 * (size_t)workers)) d.per = nwin / (8 * (size_t)workers);
    if (d.per == 0) d.per = 1;
    size_t ntasks = (nwin + d.per - 1) / d.per;
    d.first = jfirst;
    d.last = jlast;
    d.partial_any = partial;
    d.ws = gbp_calloc((size_t)workers, sizeof *d.ws);
    if (!d.ws) rc = GPUBP_ERR_NOMEM;
    if (rc == GPUBP_OK && pthread_mutex_init(&d.mu, NULL) != 0) rc = GPUBP_ERR_NOMEM;
    if (rc == GPUBP_OK) {
        gbp_pool_run(workers, ntasks, decompress_task, &d);
        pthread_mutex_destroy(&d.mu);
        if (atomic_load(&d.err_block) != SIZE_MAX) rc = gbp_error(d.err_rc, 0, "%s", d.err_msg);
    } else {
        rc = gbp_error(rc, 0, "blosc: out of memory decoding a chunk of %zu bytes", nbytes);
    }
    for (int w = 0; d.ws && w < workers; w++) gbp_codec_ws_give(d.ws[w]);
    gbp_free(d.ws);
    return rc;
}

/* The DataHeader at src + at and what follows, to the end of the buffer (n bytes), which holds
 * dstlen uncompressed bytes; the bytes [lo, hi) of them go to dst. */
static int decode_body(const uint8_t *src, size_t n, size_t at, uint8_t *dst, size_t dstlen,
                       size_t lo, size_t hi, int threads)
{
    GBP_RETURN_ERROR_IF(n - at < 8, GPUBP_ERR_FORMAT,
                        "blosc buffer: offset %zu: %zu bytes left, the DataHeader needs 8", at,
                        n - at);
    uint32_t format = gbp_ld32(src + at), count = gbp_ld32(src + at + 4);
    size_t nbytes, cbytes;
    if (format != 0) { /* legacy: a single chunk where the DataHeader would be */
        GBP_FORWARD_IF_ERROR(decode_chunk(src + at, n - at, at, dst, dstlen, lo, hi, threads,
                                          &nbytes, &cbytes));
        GBP_RETURN_ERROR_IF(nbytes != dstlen, GPUBP_ERR_FORMAT,
                            "blosc buffer: offset %zu: the chunk holds %zu bytes, %zu expected", at,
                            nbytes, dstlen);
        return GPUBP_OK;
    }
    size_t p = at + 8;
    if (count == 0) { /* not compressed: the raw bytes */
        GBP_RETURN_ERROR_IF(n - p != dstlen, GPUBP_ERR_FORMAT,
                            "blosc buffer: offset %zu: %zu raw bytes, %zu expected", p, n - p,
                            dstlen);
        if (hi > lo) gbp_pool_copy(dst, src + p + lo, hi - lo, threads);
        return GPUBP_OK;
    }
    size_t produced = 0, found = 0;
    while (p < n) {
        size_t room = dstlen - produced;
        if (room > GBP_BLOSC_MAX_CHUNK) room = GBP_BLOSC_MAX_CHUNK;
        /* the window in this chunk's bytes (clipped to its size by decode_chunk) */
        size_t clo = lo > produced ? lo - produced : 0, chi = hi > produced ? hi - produced : 0;
        uint8_t *out = chi > clo ? dst + (produced + clo - lo) : dst;
        GBP_FORWARD_IF_ERROR(decode_chunk(src + p, n - p, p, out, room, clo, chi, threads,
                                          &nbytes, &cbytes));
        produced += nbytes;
        p += cbytes;
        found++;
    }
    GBP_RETURN_ERROR_IF(produced != dstlen, GPUBP_ERR_FORMAT,
                        "blosc buffer: offset %zu: the chunks hold %zu bytes, %zu expected", n,
                        produced, dstlen);
    GBP_RETURN_ERROR_IF(found != count, GPUBP_ERR_FORMAT,
                        "blosc buffer: offset %zu: the DataHeader says %u chunks, %zu found",
                        at + 4, count, found);
    return GPUBP_OK;
}

/* The checks of the operator header (buffer version 1) shared by the decoders. */
static int check_prefix(const uint8_t *s, size_t n, size_t dstlen)
{
    GBP_RETURN_ERROR_IF(n < 4, GPUBP_ERR_FORMAT,
                        "blosc buffer: offset 0: %zu bytes, shorter than the operator header", n);
    GBP_RETURN_ERROR_IF(s[0] != 0, GPUBP_ERR_FORMAT,
                        "blosc buffer: offset 0: operator type %u, not blosc (0)", s[0]);
    GBP_RETURN_ERROR_IF(s[1] != 1, GPUBP_ERR_FORMAT,
                        "blosc buffer: offset 1: buffer version %u, only 1 is supported", s[1]);
    GBP_RETURN_ERROR_IF(n < GBP_BLOSC_PREFIX, GPUBP_ERR_FORMAT,
                        "blosc buffer: offset 0: %zu bytes, shorter than the 23-byte prefix", n);
    uint64_t size = gbp_ld64(s + 4);
    GBP_RETURN_ERROR_IF(size != (uint64_t)dstlen, GPUBP_ERR_FORMAT,
                        "blosc buffer: offset 4: %llu uncompressed bytes, the metadata says %zu",
                        (unsigned long long)size, dstlen);
    return GPUBP_OK;
}

int gbp_blosc_decompress_range(const void *src, size_t n, size_t dstlen, size_t lo, size_t hi,
                               void *dst, int threads)
{
    GBP_CHECK_ARG(src);
    GBP_RETURN_ERROR_IF(lo > hi || hi > dstlen, GPUBP_ERR_INVALID_ARG,
                        "blosc: range [%zu, %zu) of %zu bytes", lo, hi, dstlen);
    GBP_RETURN_ERROR_IF(dst == NULL && hi > lo, GPUBP_ERR_INVALID_ARG,
                        "blosc: NULL destination for %zu bytes", hi - lo);
    GBP_RETURN_ERROR_IF(threads < 0, GPUBP_ERR_INVALID_ARG, "blosc: threads %d < 0", threads);
    GBP_FORWARD_IF_ERROR(check_prefix(src, n, dstlen));
    return decode_body(src, n, 15, dst, dstlen, lo, hi, threads);
}

int gbp_blosc_decompress(const void *src, size_t n, void *dst, size_t dstlen, int threads)
{
    GBP_CHECK_ARG(src);
    GBP_RETURN_ERROR_IF(dst == NULL && dstlen > 0, GPUBP_ERR_INVALID_ARG,
                        "blosc: NULL destination for %zu bytes", dstlen);
    return gbp_blosc_decompress_range(src, n, dstlen, 0, dstlen, dst, threads);
}

int gbp_blosc_decompress_pre28(const void *src, size_t n, void *dst, size_t dstlen, int threads)
{
    GBP_CHECK_ARG(src);
    GBP_RETURN_ERROR_IF(dst == NULL && dstlen > 0, GPUBP_ERR_INVALID_ARG,
                        "blosc: NULL destination for %zu bytes", dstlen);
    GBP_RETURN_ERROR_IF(threads < 0, GPUBP_ERR_INVALID_ARG, "blosc: threads %d < 0", threads);
    return decode_body(src, n, 0, dst, dstlen, 0, dstlen, threads);
}
