/* The ADIOS2 blosc operator buffer with Blosc2 zlib chunks (../shared/docs/blosc-zlib.md).
 *
 * Writing mirrors ADIOS2 CompressBlosc::Operate + blosc2_compress (one thread, automatic block
 * size, default split mode) so that the bytes equal ADIOS2's: the decisions of blosc_c (runs,
 * "store raw", "abandon the chunk") depend on the running size of the chunk, so they are taken in
 * block order. The expensive part, filtering and deflating each block, does not depend on them:
 * workers do it for a batch of blocks in parallel (each deflate into a scratch slot of
 * neblock - 1 bytes: a stream that does not fit there would be stored raw anyway), then the
 * calling thread walks the batch in order, applies blosc_c's rules and writes the block starts
 * and stream sizes, then the workers copy the streams into place. The result is the same for
 * any number of threads.
 *
 * Reading validates the chunk header and the bstarts serially, then decodes the blocks in
 * parallel, each block reading only inside its own chunk and writing only its own output range.
 * A failing block records its message; the lowest failing block's message is reported, so the
 * error does not depend on the thread count either. */
#include "blosczlib.h"
#include "pool.h"

#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <zlib.h>

#define HDR_MIN 16
#define HDR_EXT 32
#define MIN_BUFFERSIZE 32          /* BLOSC_MIN_BUFFERSIZE: smaller pieces are memcpyed */
#define MAX_BLOCKSIZE 536866816    /* BLOSC2_MAXBLOCKSIZE */
#define CHUNK_VERSION 5            /* BLOSC2_VERSION_FORMAT_STABLE */
#define ZLIB_VERSIONLZ 1
#define ZLIB_FORMAT 3              /* codec number in flags bits 5-7 */
#define ZLIB_COMPCODE 4            /* BLOSC_ZLIB, header byte 22 */

#define F_SHUFFLE 0x01
#define F_MEMCPYED 0x02
#define F_BITSHUFFLE 0x04
#define F_DELTA 0x08
#define F_DONTSPLIT 0x10

#define FILTER_NONE 0
#define FILTER_SHUFFLE 1
#define FILTER_BITSHUFFLE 2
#define FILTER_DELTA 3
#define FILTER_TRUNC 4

#define SPECIAL_ZERO 1
#define SPECIAL_NAN 2
#define SPECIAL_VALUE 3
#define SPECIAL_UNINIT 4

#define BATCH_BYTES ((size_t)16 << 20) /* scratch for one batch of compressed blocks: small
                                        * enough for malloc to reuse it from call to call */

static atomic_size_t max_chunk_hook = 0;

void gbp_blosc_set_max_chunk(size_t bytes) { atomic_store(&max_chunk_hook, bytes); }

static size_t max_chunk(void)
{
    size_t m = atomic_load(&max_chunk_hook);
    return m ? m : GBP_BLOSC_MAX_CHUNK;
}

const char *gbp_blosc_codec_name(int format)
{
    static const char *const names[8] = {"blosclz", "lz4", "reserved codec 2", "zlib",
                                         "zstd", "reserved codec 5", "user-defined codec",
                                         "super-chunk"};
    return format >= 0 && format < 8 ? names[format] : "unknown codec";
}

/* zlib allocates through the library's wrapper (failure injection, one allocator). */
static voidpf z_alloc(voidpf opaque, uInt items, uInt size)
{
    (void)opaque;
    size_t n;
    if (!gbp_mul_ok(items, size, &n)) return Z_NULL;
    return gbp_malloc(n);
}
static void z_free(voidpf opaque, voidpf p)
{
    (void)opaque;
    gbp_free(p);
}

static void st32(uint8_t *p, uint32_t v) { memcpy(p, &v, 4); }
static void st64(uint8_t *p, uint64_t v) { memcpy(p, &v, 8); }
static int32_t ldi32(const uint8_t *p) { return (int32_t)gbp_ld32(p); }

static int all_equal(const uint8_t *p, size_t n)
{
    for (size_t i = 1; i < n; i++)
        if (p[i] != p[0]) return 0;
    return 1;
}

/* ---- sizes ------------------------------------------------------------------------------- */

size_t gbp_blosc_bound(size_t n)
{
    size_t m = max_chunk(), chunks = n / m + (n % m != 0), out;
    if (!gbp_add_ok(n, GBP_BLOSC_PREFIX, &out)) return 0;
    if (n < GBP_BLOSC_THRESHOLD) return out; /* stored raw */
    if (chunks > (SIZE_MAX - out) / HDR_EXT) return 0;
    return out + HDR_EXT * chunks;
}

size_t gbp_blosc_blocksize(size_t nbytes, size_t typesize, int level)
{
    /* stune for a high-ratio codec: 64 KiB scaled by clevel; in units of 16 KiB */
    static const unsigned units[10] = {1, 2, 4, 8, 16, 16, 32, 32, 32, 64};
    if (nbytes < typesize) return 1;
    size_t bs = nbytes;
    if (nbytes >= 32768) bs = (size_t)16384 * units[level < 0 ? 0 : level > 9 ? 9 : level];
    if (bs > nbytes) bs = nbytes;
    if (bs > typesize) bs = bs / typesize * typesize;
    return bs;
}

/* ---- parameters ------------------------------------------------------------------------------ */

static int parse_int(const char *key, const char *v, size_t n, long lo, long hi, int *out)
{
    char tmp[32];
    if (n == 0 || n >= sizeof tmp)
        return gbp_error(GPUBP_ERR_PARAM, 0, "compression parameter '%s': bad value '%.*s'", key,
                         (int)(n > 64 ? 64 : n), v);
    memcpy(tmp, v, n);
    tmp[n] = '\0';
    char *end;
    long x = strtol(tmp, &end, 10);
    if (*end != '\0' || x < lo || x > hi)
        return gbp_error(GPUBP_ERR_PARAM, 0,
                         "compression parameter '%s': bad value '%s' (expected %ld..%ld)", key,
                         tmp, lo, hi);
    *out = (int)x;
    return GPUBP_OK;
}

static int is_space(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }

int gbp_blosc_parse_params(const char *params, int *level, int *shuffle, int *threads)
{
    int lv = level ? *level : GBP_BLOSC_DEFAULT_LEVEL;
    int sh = shuffle ? *shuffle : GBP_BLOSC_DEFAULT_SHUFFLE;
    int th = threads ? *threads : 0;
    const char *p = params ? params : "";
    while (*p) {
        const char *item = p, *comma = strchr(p, ',');
        size_t len = comma ? (size_t)(comma - p) : strlen(p);
        p = comma ? comma + 1 : p + len;
        const char *e = item + len;
        while (item < e && is_space(*item)) item++;
        while (e > item && is_space(e[-1])) e--;
        if (item == e) continue; /* empty item: "a=1,,b=2" or a trailing comma */
        const char *eq = memchr(item, '=', (size_t)(e - item));
        const char *kend = eq ? eq : e, *v = eq ? eq + 1 : e;
        while (kend > item && is_space(kend[-1])) kend--;
        while (v < e && is_space(*v)) v++;
        size_t klen = (size_t)(kend - item), vlen = (size_t)(e - v);
        char key[32];
        if (klen >= sizeof key || klen == 0)
            return gbp_error(GPUBP_ERR_PARAM, 0, "compression parameter: unknown key '%.*s'",
                             (int)(klen > 64 ? 64 : klen), item);
        memcpy(key, item, klen);
        key[klen] = '\0';
        if (!eq)
            return gbp_error(GPUBP_ERR_PARAM, 0, "compression parameter '%s': missing '=value'",
                             key);
        if (!strcmp(key, "level")) {
            GBP_FORWARD_IF_ERROR(parse_int(key, v, vlen, 0, 9, &lv));
        } else if (!strcmp(key, "threads")) {
            GBP_FORWARD_IF_ERROR(parse_int(key, v, vlen, 0, 1024, &th));
        } else if (!strcmp(key, "shuffle")) {
            if (vlen == 4 && !memcmp(v, "byte", 4)) sh = GBP_BLOSC_SHUFFLE;
            else if (vlen == 3 && !memcmp(v, "bit", 3)) sh = GBP_BLOSC_BITSHUFFLE;
            else if (vlen == 4 && !memcmp(v, "none", 4)) sh = GBP_BLOSC_NOSHUFFLE;
            else
                return gbp_error(GPUBP_ERR_PARAM, 0,
                                 "compression parameter 'shuffle': bad value '%.*s' (expected "
                                 "byte, bit or none)", (int)(vlen > 64 ? 64 : vlen), v);
        } else {
            return gbp_error(GPUBP_ERR_PARAM, 0,
                             "compression parameter: unknown key '%s' (known: level, shuffle, "
                             "threads)", key);
        }
    }
    if (level) *level = lv;
    if (shuffle) *shuffle = sh;
    if (threads) *threads = th;
    return GPUBP_OK;
}

/* ---- compression ------------------------------------------------------------------------------ */

/* What a worker found for one block (one stream: zlib chunks are never split). */
enum { BLK_RUN, BLK_ZLIB, BLK_RAW, BLK_NOMEM };

typedef struct cblock {
    int kind;
    uint8_t run;   /* BLK_RUN: the byte value */
    int store;     /* after the in-order walk: STORE_* (what the copy phase writes) */
    size_t clen;   /* BLK_ZLIB: deflated length (< neblock), in the batch scratch */
    size_t at;     /* offset of the stream's data in the chunk */
} cblock;

enum { STORE_NONE, STORE_ZLIB, STORE_RAW };

typedef struct cjob {
    const uint8_t *src;  /* the piece */
    size_t nbytes, bsz, nblocks, ts;
    int filter, level;
    size_t first;        /* first block of the batch */
    uint8_t *scratch;    /* batch: block i - first at (i - first) * bsz */
    cblock *res;         /* per block of the batch */
    uint8_t **fbuf;      /* per worker: the filtered block */
    z_stream *zs;        /* per worker */
    int *zs_ready;
    uint8_t *dst;        /* the chunk being written */
} cjob;

static size_t block_len(size_t nbytes, size_t bsz, size_t j)
{
    size_t start = j * bsz;
    return nbytes - start < bsz ? nbytes - start : bsz;
}

static const uint8_t *filter_block(int filter, const uint8_t *in, uint8_t *out, size_t len,
                                   size_t ts)
{
    if (filter == FILTER_SHUFFLE) gbp_byte_shuffle(in, out, len, ts);
    else if (filter == FILTER_BITSHUFFLE) gbp_bit_shuffle(in, out, len, ts);
    else return in;
    return out;
}

static void compress_task(void *ctx, size_t task, int worker)
{
    cjob *c = ctx;
    size_t j = c->first + task, len = block_len(c->nbytes, c->bsz, j);
    cblock *r = &c->res[task];
    const uint8_t *blk = filter_block(c->filter, c->src + j * c->bsz, c->fbuf[worker], len, c->ts);
    if (all_equal(blk, len)) {
        r->kind = BLK_RUN;
        r->run = blk[0];
        return;
    }
    z_stream *z = &c->zs[worker];
    if (!c->zs_ready[worker]) {
        z->zalloc = z_alloc;
        z->zfree = z_free;
        z->opaque = Z_NULL;
        if (deflateInit(z, c->level) != Z_OK) {
            r->kind = BLK_NOMEM;
            return;
        }
        c->zs_ready[worker] = 1;
    } else if (deflateReset(z) != Z_OK) {
        r->kind = BLK_NOMEM;
        return;
    }
    /* compress2() at this level, limited to len - 1 bytes: a longer stream is stored raw */
    z->next_in = (Bytef *)(uintptr_t)blk;
    z->avail_in = (uInt)len;
    z->next_out = c->scratch + task * c->bsz;
    z->avail_out = (uInt)(len - 1);
    int zr = deflate(z, Z_FINISH);
    if (zr == Z_STREAM_END) {
        r->kind = BLK_ZLIB;
        r->clen = len - 1 - z->avail_out;
    } else {
        r->kind = BLK_RAW;
    }
}

/* The copy phase: each block's stream data goes to its place, in parallel. */
static void store_task(void *ctx, size_t task, int worker)
{
    (void)worker;
    cjob *c = ctx;
    const cblock *r = &c->res[task];
    size_t j = c->first + task, len = block_len(c->nbytes, c->bsz, j);
    const uint8_t *in = c->src + j * c->bsz;
    uint8_t *out = c->dst + r->at;
    if (r->store == STORE_ZLIB) memcpy(out, c->scratch + task * c->bsz, r->clen);
    else if (r->store != STORE_RAW) return;
    else if (c->filter == FILTER_SHUFFLE) gbp_byte_shuffle(in, out, len, c->ts);
    else if (c->filter == FILTER_BITSHUFFLE) gbp_bit_shuffle(in, out, len, c->ts);
    else memcpy(out, in, len);
}

typedef struct copy_job {
    uint8_t *dst;
    const uint8_t *src;
    size_t n, part;
} copy_job;

static void copy_task(void *ctx, size_t task, int worker)
{
    (void)worker;
    copy_job *c = ctx;
    size_t off = task * c->part, len = c->n - off < c->part ? c->n - off : c->part;
    memcpy(c->dst + off, c->src + off, len);
}

#define COPY_PART ((size_t)4 << 20)

/* memcpy on `workers` threads in parts of 4 MiB */
static void parallel_copy(uint8_t *dst, const uint8_t *src, size_t n, int workers)
{
    copy_job c = {dst, src, n, COPY_PART};
    size_t parts = n / COPY_PART + (n % COPY_PART != 0);
    if (parts <= 1 || workers <= 1) {
        if (n) memcpy(dst, src, n);
        return;
    }
    gbp_pool_run(workers < (int)parts ? workers : (int)parts, parts, copy_task, &c);
}

static void header(uint8_t *h, uint8_t flags, size_t ts, size_t nbytes, size_t bsz, size_t cbytes,
                   int filter, uint8_t b2flags)
{
    memset(h, 0, HDR_EXT);
    h[0] = CHUNK_VERSION;
    h[1] = ZLIB_VERSIONLZ;
    h[2] = flags;
    h[3] = (uint8_t)ts;
    st32(h + 4, (uint32_t)nbytes);
    st32(h + 8, (uint32_t)bsz);
    st32(h + 12, (uint32_t)cbytes);
    h[21] = (uint8_t)filter; /* filter slot 5 */
    h[22] = ZLIB_COMPCODE;
    h[31] = b2flags;
}

/* One Blosc2 chunk of the nbytes at src (0 < nbytes <= 2 147 483 615), written at dst, which has
 * room for nbytes + 32. *clen gets its length. */
static int compress_chunk(const uint8_t *src, size_t nbytes, size_t ts, int level, int filter,
                          int threads, uint8_t *dst, size_t *clen)
{
    size_t bsz = gbp_blosc_blocksize(nbytes, ts, level);
    size_t nblocks = nbytes / bsz + (nbytes % bsz != 0);
    size_t room = nbytes + HDR_EXT; /* ADIOS2 gives blosc2_compress piece + 32 */
    if (level == 0 || nbytes < MIN_BUFFERSIZE) {
        header(dst, F_SHUFFLE | F_BITSHUFFLE | F_MEMCPYED, ts, nbytes, bsz, nbytes + HDR_EXT,
               filter, 0);
        parallel_copy(dst + HDR_EXT, src, nbytes, gbp_pool_workers(threads, nbytes / COPY_PART + 1));
        *clen = nbytes + HDR_EXT;
        return GPUBP_OK;
    }
    const uint8_t flags = F_SHUFFLE | F_BITSHUFFLE | F_DONTSPLIT | (ZLIB_FORMAT << 5);
    size_t batch = BATCH_BYTES / bsz;
    int workers = gbp_pool_workers(threads, nblocks);
    if (batch < 4 * (size_t)workers) batch = 4 * (size_t)workers;
    if (batch > nblocks) batch = nblocks;

    cjob c;
    memset(&c, 0, sizeof c);
    c.src = src;
    c.nbytes = nbytes;
    c.bsz = bsz;
    c.nblocks = nblocks;
    c.ts = ts;
    c.filter = filter;
    c.level = level;
    int rc = GPUBP_OK;
    c.scratch = gbp_malloc(batch * bsz);
    c.res = gbp_calloc(batch, sizeof *c.res);
    c.fbuf = gbp_calloc((size_t)workers, sizeof *c.fbuf);
    c.zs = gbp_calloc((size_t)workers, sizeof *c.zs);
    c.zs_ready = gbp_calloc((size_t)workers, sizeof *c.zs_ready);
    if (!c.scratch || !c.res || !c.fbuf || !c.zs || !c.zs_ready) rc = GPUBP_ERR_NOMEM;
    for (int w = 0; rc == GPUBP_OK && w < workers; w++)
        if (filter != FILTER_NONE && !(c.fbuf[w] = gbp_malloc(bsz))) rc = GPUBP_ERR_NOMEM;

    /* blosc_c's bookkeeping, in block order: nt = bytes used so far, the chunk is abandoned
     * past `room`. The walk only decides and writes the small fields; the stream data is copied
     * by the workers afterwards. */
    size_t nt = HDR_EXT + 4 * nblocks;
    int abandoned = 0, all_zero_runs = 1;
    uint8_t *bstarts = dst + HDR_EXT;
    c.dst = dst;
    for (size_t first = 0; rc == GPUBP_OK && !abandoned && first < nblocks; first += batch) {
        size_t nb = nblocks - first < batch ? nblocks - first : batch;
        c.first = first;
        gbp_pool_run(workers, nb, compress_task, &c);
        for (size_t t = 0; t < nb && !abandoned; t++) {
            size_t j = first + t, len = block_len(nbytes, bsz, j);
            cblock *r = &c.res[t];
            r->store = STORE_NONE;
            if (r->kind == BLK_NOMEM) {
                rc = GPUBP_ERR_NOMEM;
                break;
            }
            st32(bstarts + 4 * j, (uint32_t)nt);
            size_t at = nt;
            nt += 4;
            if (r->kind == BLK_RUN) {
                if (nt > room) { abandoned = 1; break; }
                st32(dst + at, (uint32_t)-(int32_t)r->run);
                if (r->run) {
                    if (++nt > room) { abandoned = 1; break; }
                    dst[at + 4] = 0x01;
                    all_zero_runs = 0;
                }
                continue;
            }
            all_zero_runs = 0;
            size_t maxout = len;
            if (nt + maxout > room) {
                if (nt >= room) { abandoned = 1; break; }
                maxout = room - nt;
            }
            r->at = nt;
            if (r->kind == BLK_ZLIB && r->clen <= maxout) {
                st32(dst + at, (uint32_t)r->clen);
                r->store = STORE_ZLIB;
                nt += r->clen;
                continue;
            }
            if (nt + len > room) { abandoned = 1; break; } /* stored raw does not fit */
            st32(dst + at, (uint32_t)len);
            r->store = STORE_RAW;
            nt += len;
        }
        if (rc == GPUBP_OK && !abandoned) gbp_pool_run(workers, nb, store_task, &c);
    }
    for (int w = 0; c.fbuf && w < workers; w++) gbp_free(c.fbuf[w]);
    for (int w = 0; c.zs_ready && w < workers; w++)
        if (c.zs_ready[w]) deflateEnd(&c.zs[w]);
    gbp_free(c.scratch);
    gbp_free(c.res);
    gbp_free(c.fbuf);
    gbp_free(c.zs);
    gbp_free(c.zs_ready);
    if (rc != GPUBP_OK)
        return gbp_error(rc, 0, "blosc: out of memory compressing a chunk of %zu bytes", nbytes);

    if (abandoned) { /* did not shrink: a memcpyed chunk, flags 0x77 */
        header(dst, flags | F_MEMCPYED, ts, nbytes, bsz, nbytes + HDR_EXT, filter, 0);
        parallel_copy(dst + HDR_EXT, src, nbytes, workers);
        *clen = nbytes + HDR_EXT;
    } else if (all_zero_runs && nbytes % ts == 0) {
        /* every stream a zero run: the special-zero chunk. Blosc2 2.19 writes it for any size
         * but reads it back only when nbytes is a multiple of typesize (a piece of an odd split
         * may not be); then the chunk of zero runs, which decodes to the same bytes, is kept. */
        header(dst, flags, ts, nbytes, bsz, HDR_EXT, filter, SPECIAL_ZERO << 4);
        *clen = HDR_EXT;
    } else {
        header(dst, flags, ts, nbytes, bsz, nt, filter, 0);
        *clen = nt;
    }
    return GPUBP_OK;
}

int gbp_blosc_compress(const void *src, size_t n, size_t typesize, int level, int shuffle,
                       int threads, void *dst, size_t cap, size_t *outlen)
{
    GBP_CHECK_ARG(dst);
    GBP_CHECK_ARG(outlen);
    GBP_RETURN_ERROR_IF(src == NULL && n > 0, GPUBP_ERR_INVALID_ARG,
                        "blosc: NULL source for %zu bytes", n);
    GBP_RETURN_ERROR_IF(typesize == 0, GPUBP_ERR_INVALID_ARG, "blosc: typesize 0");
    GBP_RETURN_ERROR_IF(level < 0 || level > 9, GPUBP_ERR_INVALID_ARG,
                        "blosc: level %d outside 0..9", level);
    GBP_RETURN_ERROR_IF(shuffle < 0 || shuffle > 2, GPUBP_ERR_INVALID_ARG,
                        "blosc: shuffle %d is not 0 (none), 1 (byte) or 2 (bit)", shuffle);
    GBP_RETURN_ERROR_IF(threads < 0, GPUBP_ERR_INVALID_ARG, "blosc: threads %d < 0", threads);
    size_t bound = gbp_blosc_bound(n);
    GBP_RETURN_ERROR_IF(bound == 0 || cap < bound, GPUBP_ERR_INVALID_ARG,
                        "blosc: destination of %zu bytes, %zu needed for %zu input bytes", cap,
                        bound, n);
    if (typesize > 255) typesize = 1;
    int filter = FILTER_NONE;
    if (shuffle == GBP_BLOSC_SHUFFLE && typesize > 1) filter = FILTER_SHUFFLE;
    else if (shuffle == GBP_BLOSC_BITSHUFFLE) filter = FILTER_BITSHUFFLE;

    uint8_t *out = dst;
    const uint8_t *in = src;
    memset(out, 0, GBP_BLOSC_PREFIX);
    out[0] = 0; /* core::Operator::COMPRESS_BLOSC */
    out[1] = 1; /* buffer version */
    st64(out + 4, (uint64_t)n);
    out[12] = 2; /* Blosc2 2.19.1, as in ADIOS2's files */
    out[13] = 19;
    out[14] = 1;
    size_t pos = GBP_BLOSC_PREFIX;
    uint32_t nchunks = 0;
    if (n >= GBP_BLOSC_THRESHOLD) {
        size_t m = max_chunk();
        for (size_t off = 0; off < n; off += m) {
            size_t piece = n - off < m ? n - off : m, clen = 0;
            GBP_FORWARD_IF_ERROR(compress_chunk(in + off, piece, typesize, level, filter,
                                                threads, out + pos, &clen));
            pos += clen;
            nchunks++;
        }
    } else if (n > 0) {
        memcpy(out + pos, in, n); /* under the threshold: count 0, the raw bytes */
        pos += n;
    }
    st32(out + 19, nchunks);
    *outlen = pos;
    return GPUBP_OK;
}

/* ---- decompression --------------------------------------------------------------------------- */


typedef struct dchunk {
    const uint8_t *c;     /* the chunk */
    size_t cbytes;        /* validated: within the buffer */
    size_t ov;            /* header length: 16 or 32 */
    size_t base;          /* offset of the chunk in the operator buffer (messages) */
    uint8_t *out;         /* nbytes */
    size_t nbytes, bsz, nblocks, ts;
    int version, codec, dont_split;
    int filters[6];
    int nfilters;         /* shuffle / bitshuffle filters to undo */
    uint8_t **s0, **s1;   /* per worker: scratch for the filtered block */
    z_stream *zs;         /* per worker */
    int *zs_ready;
    pthread_mutex_t mu;
    size_t err_block;     /* lowest failing block; SIZE_MAX if none */
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
    if (j < d->err_block) {
        d->err_block = j;
        d->err_rc = rc;
        memcpy(d->err_msg, msg, sizeof msg);
    }
    pthread_mutex_unlock(&d->mu);
}

/* Inflates one zlib-format stream (RFC 1950) of n bytes into exactly `want` bytes. */
static int inflate_exact(dchunk *d, int worker, const uint8_t *in, size_t n, uint8_t *out,
                         size_t want)
{
    z_stream *z = &d->zs[worker];
    if (!d->zs_ready[worker]) {
        z->zalloc = z_alloc;
        z->zfree = z_free;
        z->opaque = Z_NULL;
        z->next_in = Z_NULL;
        z->avail_in = 0;
        if (inflateInit(z) != Z_OK) return Z_MEM_ERROR;
        d->zs_ready[worker] = 1;
    } else if (inflateReset(z) != Z_OK) {
        return Z_STREAM_ERROR;
    }
    z->next_in = (Bytef *)(uintptr_t)in;
    z->avail_in = (uInt)n;
    z->next_out = out;
    z->avail_out = (uInt)want;
    int zr = inflate(z, Z_FINISH);
    if (zr == Z_STREAM_END) return z->avail_out == 0 ? Z_OK : Z_DATA_ERROR;
    return zr == Z_MEM_ERROR ? Z_MEM_ERROR : Z_DATA_ERROR;
}

static void decompress_task(void *ctx, size_t j, int worker)
{
    dchunk *d = ctx;
    pthread_mutex_lock(&d->mu);
    size_t eb = d->err_block;
    pthread_mutex_unlock(&d->mu);
    if (eb < j) return; /* a lower block failed: its error is the one reported */

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
    uint8_t *out = d->out + j * d->bsz;
    uint8_t *target = d->nfilters ? d->s0[worker] : out;
    size_t p = (size_t)bstart;
    for (size_t s = 0; s < nstreams; s++) {
        uint8_t *t = target + s * neblock;
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
        } else if ((size_t)csize == neblock) {
            memcpy(t, c + p, neblock); /* stored raw */
            p += neblock;
        } else if (d->codec != ZLIB_FORMAT) {
            block_error(d, j, GPUBP_ERR_CODEC,
                        "blosc buffer: offset %zu: chunk compressed with the %s codec, not "
                        "supported (zlib only)", d->base, gbp_blosc_codec_name(d->codec));
            return;
        } else {
            int zr = inflate_exact(d, worker, c + p, (size_t)csize, t, neblock);
            if (zr != Z_OK) {
                block_error(d, j, zr == Z_MEM_ERROR ? GPUBP_ERR_NOMEM : GPUBP_ERR_FORMAT,
                            "blosc buffer: offset %zu: block %zu stream %zu: %s", at + p, j, s,
                            zr == Z_MEM_ERROR ? "out of memory for zlib"
                                              : "damaged zlib stream (does not inflate to the "
                                                "block's size)");
                return;
            }
            p += (size_t)csize;
        }
    }
    /* undo the filters, slot 5 first */
    const uint8_t *cur = target;
    int left = d->nfilters;
    for (int f = 5; f >= 0; f--) {
        int id = d->filters[f];
        if (id != FILTER_SHUFFLE && id != FILTER_BITSHUFFLE) continue;
        uint8_t *to = --left == 0 ? out : (cur == d->s0[worker] ? d->s1[worker] : d->s0[worker]);
        if (id == FILTER_SHUFFLE) gbp_byte_unshuffle(cur, to, len, d->ts);
        else gbp_bit_unshuffle(cur, to, len, d->ts, d->version == 2);
        cur = to;
    }
}

/* Decodes the chunk at src (avail bytes to the end of the buffer; `base` = its offset there) into
 * out, which has `room` bytes. *nbytes and *cbytes get the chunk's sizes. */
static int decode_chunk(const uint8_t *src, size_t avail, size_t base, uint8_t *out, size_t room,
                        int threads, size_t *nbytes_out, size_t *cbytes_out)
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
        for (size_t i = 0; i < nbytes; i += vts) memcpy(out + i, src + HDR_EXT, vts);
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
            for (size_t i = 0; i < nbytes; i += ts) memcpy(out + i, ts == 4 ? (const void *)&fnan
                                                                          : (const void *)&dnan, ts);
        } else {
            memset(out, 0, nbytes); /* zeros; uninitialised also reads as zeros */
        }
        return GPUBP_OK;
    }
    if (flags & F_MEMCPYED) {
        GBP_RETURN_ERROR_IF(cbytes != nbytes + ov, GPUBP_ERR_FORMAT,
                            "blosc buffer: offset %zu: memcpyed chunk of %zu bytes holds %zu", base,
                            cbytes, nbytes);
        memcpy(out, src + ov, nbytes);
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
    d.nbytes = nbytes;
    d.bsz = bsz;
    d.nblocks = nblocks;
    d.ts = ts;
    d.version = version;
    d.codec = flags >> 5;
    d.dont_split = (flags & F_DONTSPLIT) != 0;
    memcpy(d.filters, filters, sizeof filters);
    d.nfilters = nfilters;
    d.err_block = SIZE_MAX;
    int workers = gbp_pool_workers(threads, nblocks), rc = GPUBP_OK;
    d.s0 = gbp_calloc((size_t)workers, sizeof *d.s0);
    d.s1 = gbp_calloc((size_t)workers, sizeof *d.s1);
    d.zs = gbp_calloc((size_t)workers, sizeof *d.zs);
    d.zs_ready = gbp_calloc((size_t)workers, sizeof *d.zs_ready);
    if (!d.s0 || !d.s1 || !d.zs || !d.zs_ready) rc = GPUBP_ERR_NOMEM;
    for (int w = 0; rc == GPUBP_OK && w < workers && nfilters > 0; w++) {
        if (!(d.s0[w] = gbp_malloc(bsz))) rc = GPUBP_ERR_NOMEM;
        else if (nfilters > 1 && !(d.s1[w] = gbp_malloc(bsz))) rc = GPUBP_ERR_NOMEM;
    }
    if (rc == GPUBP_OK && pthread_mutex_init(&d.mu, NULL) != 0) rc = GPUBP_ERR_NOMEM;
    if (rc == GPUBP_OK) {
        gbp_pool_run(workers, nblocks, decompress_task, &d);
        pthread_mutex_destroy(&d.mu);
        if (d.err_block != SIZE_MAX) rc = gbp_error(d.err_rc, 0, "%s", d.err_msg);
    } else {
        rc = gbp_error(rc, 0, "blosc: out of memory decoding a chunk of %zu bytes", nbytes);
    }
    for (int w = 0; w < workers; w++) {
        if (d.s0) gbp_free(d.s0[w]);
        if (d.s1) gbp_free(d.s1[w]);
        if (d.zs_ready && d.zs_ready[w]) inflateEnd(&d.zs[w]);
    }
    gbp_free(d.s0);
    gbp_free(d.s1);
    gbp_free(d.zs);
    gbp_free(d.zs_ready);
    return rc;
}

/* The DataHeader at src + at and what follows, to the end of the buffer (n bytes). */
static int decode_body(const uint8_t *src, size_t n, size_t at, uint8_t *dst, size_t dstlen,
                       int threads)
{
    GBP_RETURN_ERROR_IF(n - at < 8, GPUBP_ERR_FORMAT,
                        "blosc buffer: offset %zu: %zu bytes left, the DataHeader needs 8", at,
                        n - at);
    uint32_t format = gbp_ld32(src + at), count = gbp_ld32(src + at + 4);
    size_t nbytes, cbytes;
    if (format != 0) { /* legacy: a single chunk where the DataHeader would be */
        GBP_FORWARD_IF_ERROR(decode_chunk(src + at, n - at, at, dst, dstlen, threads, &nbytes,
                                          &cbytes));
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
        if (dstlen) memcpy(dst, src + p, dstlen);
        return GPUBP_OK;
    }
    size_t produced = 0, found = 0;
    while (p < n) {
        size_t room = dstlen - produced;
        if (room > GBP_BLOSC_MAX_CHUNK) room = GBP_BLOSC_MAX_CHUNK;
        GBP_FORWARD_IF_ERROR(decode_chunk(src + p, n - p, p, dst + produced, room, threads,
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

int gbp_blosc_decompress(const void *src, size_t n, void *dst, size_t dstlen, int threads)
{
    GBP_CHECK_ARG(src);
    GBP_RETURN_ERROR_IF(dst == NULL && dstlen > 0, GPUBP_ERR_INVALID_ARG,
                        "blosc: NULL destination for %zu bytes", dstlen);
    GBP_RETURN_ERROR_IF(threads < 0, GPUBP_ERR_INVALID_ARG, "blosc: threads %d < 0", threads);
    const uint8_t *s = src;
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
    return decode_body(s, n, 15, dst, dstlen, threads);
}

int gbp_blosc_decompress_pre28(const void *src, size_t n, void *dst, size_t dstlen, int threads)
{
    GBP_CHECK_ARG(src);
    GBP_RETURN_ERROR_IF(dst == NULL && dstlen > 0, GPUBP_ERR_INVALID_ARG,
                        "blosc: NULL destination for %zu bytes", dstlen);
    GBP_RETURN_ERROR_IF(threads < 0, GPUBP_ERR_INVALID_ARG, "blosc: threads %d < 0", threads);
    return decode_body(src, n, 0, dst, dstlen, threads);
}
