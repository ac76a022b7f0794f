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

enum { BLK_RUN, BLK_ZLIB, BLK_RAW, BLK_NOMEM, BLK_SKIP };
enum { STORE_NONE, STORE_ZLIB, STORE_FILTERED, STORE_PLAIN };
enum { CK_NORMAL, CK_MEMCPY, CK_ABANDONED };

#define NO_CHUNK SIZE_MAX /* a unit of an input under the threshold: stored raw after the prefix */

typedef struct unit {
    const uint8_t *src; /* the block's input bytes: in the piece, or in a carry buffer */
    size_t len;
    size_t chunk, block; /* its chunk and its index there (NO_CHUNK: raw input) */
    size_t in_off;       /* offset of its first byte in the whole input */
    int kind;            /* BLK_* (what a worker found) */
    uint8_t run;         /* BLK_RUN: the byte value */
    size_t clen;         /* BLK_ZLIB: deflated length, in the scratch slot */
    int store;           /* STORE_*: what the copy phase writes */
    uint8_t *dst;        /* where */
} unit;

typedef struct chunk_rec {
    uint64_t base; /* offset of the chunk in the operator buffer */
    size_t len;    /* header bytes (header + block starts, or the header alone) */
    size_t hoff;   /* where they are in e->hdrs */
} chunk_rec;

struct gbp_blosc_enc {
    size_t n, ts, m; /* input size, typesize, chunk size */
    int level, filter, threads;
    uint8_t *direct; /* whole-buffer mode: everything goes to its final place here */
    size_t bsz_max;
    /* put */
    size_t taken;         /* input bytes taken so far */
    int put_pending;      /* a put waits for its emit */
    uint8_t *carry[2];    /* a partial block; the other buffer may back a unit of this put */
    int cur;
    size_t carry_len;
    unit *u;
    size_t nu, cap_u;
    uint8_t *scratch;     /* per unit, bsz_max bytes */
    size_t scratch_units;
    int nw;               /* workers at most */
    uint8_t **fbuf;       /* per worker: the filtered block */
    z_stream *zs;
    int *zs_ready;
    /* walk */
    int started;          /* a chunk is being walked */
    size_t ck, ck_in0, ck_n, ck_bsz, ck_nb;
    uint64_t ck_base, nt;
    int ck_mode;
    int all_zero;
    size_t zpend;         /* zero runs not written yet (the chunk may be a special-zero one) */
    uint64_t zpend_at;
    size_t bst;           /* offset of the current chunk's block starts in hdrs */
    uint64_t out_end;     /* end of the last finished chunk */
    uint8_t *hdrs;
    size_t hdrs_len, hdrs_cap;
    chunk_rec *ch;
    size_t nch, cap_ch;
    uint8_t prefix[GBP_BLOSC_PREFIX];
    /* emit */
    uint8_t *out;
    size_t o, ocap;
    gbp_blosc_extent *ext;
    size_t next, cap_ext;
    gbp_blosc_redo *redo;
    size_t nredo, cap_redo;
    size_t ck_u0, ck_ext0, ck_o0; /* this emit: first unit, extent and out byte of the chunk */
};

static size_t chunk_bytes(const gbp_blosc_enc *e, size_t k)
{
    size_t start = k * e->m;
    return e->n - start < e->m ? e->n - start : e->m;
}

static int grow(void **p, size_t *cap, size_t need, size_t el)
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

int gbp_blosc_enc_open(gbp_blosc_enc **out, size_t n, size_t typesize, int level, int shuffle,
                       int threads)
{
    GBP_CHECK_ARG(out);
    *out = NULL;
    GBP_RETURN_ERROR_IF(typesize == 0, GPUBP_ERR_INVALID_ARG, "blosc: typesize 0");
    GBP_RETURN_ERROR_IF(level < 0 || level > 9, GPUBP_ERR_INVALID_ARG,
                        "blosc: level %d outside 0..9", level);
    GBP_RETURN_ERROR_IF(shuffle < 0 || shuffle > 2, GPUBP_ERR_INVALID_ARG,
                        "blosc: shuffle %d is not 0 (none), 1 (byte) or 2 (bit)", shuffle);
    GBP_RETURN_ERROR_IF(threads < 0, GPUBP_ERR_INVALID_ARG, "blosc: threads %d < 0", threads);
    GBP_RETURN_ERROR_IF(gbp_blosc_bound(n) == 0, GPUBP_ERR_INVALID_ARG,
                        "blosc: %zu input bytes is too many", n);
    gbp_blosc_enc *e = gbp_calloc(1, sizeof *e);
    if (!e) return gbp_error(GPUBP_ERR_NOMEM, 0, "blosc: out of memory (encoder)");
    if (typesize > 255) typesize = 1;
    e->n = n;
    e->ts = typesize;
    e->m = max_chunk();
    e->level = level;
    e->threads = threads;
    e->filter = FILTER_NONE;
    if (shuffle == GBP_BLOSC_SHUFFLE && typesize > 1) e->filter = FILTER_SHUFFLE;
    else if (shuffle == GBP_BLOSC_BITSHUFFLE) e->filter = FILTER_BITSHUFFLE;
    e->bsz_max = n ? gbp_blosc_blocksize(chunk_bytes(e, 0), typesize, level) : 1;
    e->carry[0] = gbp_malloc(e->bsz_max);
    e->carry[1] = gbp_malloc(e->bsz_max);
    /* per worker state, never moved (a z_stream must stay where deflateInit saw it) */
    e->nw = gbp_pool_workers(threads, SIZE_MAX);
    e->fbuf = gbp_calloc((size_t)e->nw, sizeof *e->fbuf);
    e->zs = gbp_calloc((size_t)e->nw, sizeof *e->zs);
    e->zs_ready = gbp_calloc((size_t)e->nw, sizeof *e->zs_ready);
    uint8_t *p = e->prefix;
    p[0] = 0; /* core::Operator::COMPRESS_BLOSC */
    p[1] = 1; /* buffer version */
    st64(p + 4, (uint64_t)n);
    p[12] = 2; /* Blosc2 2.19.1, as in ADIOS2's files */
    p[13] = 19;
    p[14] = 1;
    e->out_end = GBP_BLOSC_PREFIX;
    if (!e->carry[0] || !e->carry[1] || !e->fbuf || !e->zs || !e->zs_ready) {
        gbp_blosc_enc_close(e);
        return gbp_error(GPUBP_ERR_NOMEM, 0, "blosc: out of memory (encoder)");
    }
    *out = e;
    return GPUBP_OK;
}

void gbp_blosc_enc_close(gbp_blosc_enc *e)
{
    if (!e) return;
    for (int w = 0; e->fbuf && e->zs_ready && w < e->nw; w++) {
        gbp_free(e->fbuf[w]);
        if (e->zs_ready[w]) deflateEnd(&e->zs[w]);
    }
    gbp_free(e->fbuf);
    gbp_free(e->zs);
    gbp_free(e->zs_ready);
    gbp_free(e->carry[0]);
    gbp_free(e->carry[1]);
    gbp_free(e->u);
    gbp_free(e->scratch);
    gbp_free(e->hdrs);
    gbp_free(e->ch);
    gbp_free(e->ext);
    gbp_free(e->redo);
    gbp_free(e);
}

size_t gbp_blosc_enc_out_bound(const gbp_blosc_enc *e, size_t len)
{
    /* the units of a put: its bytes and a carried partial block, at most 5 bytes of fields each;
     * a block holds at least 16 KiB except in chunks under 32 KiB, which have 2 blocks at most */
    return len + e->bsz_max + 5 * (len / 16384 + 2 * (len / e->m) + 10) + 64;
}

static void compress_task(void *ctx, size_t task, int worker)
{
    gbp_blosc_enc *e = ctx;
    unit *r = &e->u[task];
    if (r->kind == BLK_SKIP) return;
    if (e->filter != FILTER_NONE && !e->fbuf[worker] && !(e->fbuf[worker] = gbp_malloc(e->bsz_max))) {
        r->kind = BLK_NOMEM;
        return;
    }
    const uint8_t *blk = filter_block(e->filter, r->src, e->fbuf[worker], r->len, e->ts);
    if (all_equal(blk, r->len)) {
        r->kind = BLK_RUN;
        r->run = blk[0];
        return;
    }
    z_stream *z = &e->zs[worker];
    if (!e->zs_ready[worker]) {
        z->zalloc = z_alloc;
        z->zfree = z_free;
        z->opaque = Z_NULL;
        if (deflateInit(z, e->level) != Z_OK) {
            r->kind = BLK_NOMEM;
            return;
        }
        e->zs_ready[worker] = 1;
    } else if (deflateReset(z) != Z_OK) {
        r->kind = BLK_NOMEM;
        return;
    }
    /* compress2() at this level, limited to len - 1 bytes: a longer stream is stored raw */
    z->next_in = (Bytef *)(uintptr_t)blk;
    z->avail_in = (uInt)r->len;
    z->next_out = e->scratch + task * e->bsz_max;
    z->avail_out = (uInt)(r->len - 1);
    int zr = deflate(z, Z_FINISH);
    if (zr == Z_STREAM_END) {
        r->kind = BLK_ZLIB;
        r->clen = r->len - 1 - z->avail_out;
    } else {
        r->kind = BLK_RAW;
    }
}

/* The copy phase: each unit's bytes go to their place, in parallel. */
static void store_task(void *ctx, size_t task, int worker)
{
    (void)worker;
    gbp_blosc_enc *e = ctx;
    const unit *r = &e->u[task];
    if (r->store == STORE_ZLIB) memcpy(r->dst, e->scratch + task * e->bsz_max, r->clen);
    else if (r->store == STORE_PLAIN) memcpy(r->dst, r->src, r->len);
    else if (r->store != STORE_FILTERED) return;
    else if (e->filter == FILTER_SHUFFLE) gbp_byte_shuffle(r->src, r->dst, r->len, e->ts);
    else if (e->filter == FILTER_BITSHUFFLE) gbp_bit_shuffle(r->src, r->dst, r->len, e->ts);
    else memcpy(r->dst, r->src, r->len);
}

static int add_unit(gbp_blosc_enc *e, const uint8_t *src, size_t len, size_t chunk, size_t block,
                    size_t in_off, int skip)
{
    GBP_FORWARD_IF_ERROR(grow((void **)&e->u, &e->cap_u, e->nu + 1, sizeof *e->u));
    unit *r = &e->u[e->nu++];
    memset(r, 0, sizeof *r);
    r->src = src;
    r->len = len;
    r->chunk = chunk;
    r->block = block;
    r->in_off = in_off;
    r->kind = skip ? BLK_SKIP : BLK_NOMEM;
    return GPUBP_OK;
}

/* Whether the blocks of chunk k need compressing: not for memcpyed chunks, nor for the rest of
 * a chunk already abandoned. */
static int chunk_skips(const gbp_blosc_enc *e, size_t k)
{
    if (e->level == 0 || chunk_bytes(e, k) < MIN_BUFFERSIZE) return 1;
    return e->started && e->ck == k && e->ck_mode == CK_ABANDONED;
}

int gbp_blosc_enc_put(gbp_blosc_enc *e, const void *in, size_t len)
{
    GBP_CHECK_ARG(e);
    GBP_RETURN_ERROR_IF(in == NULL && len > 0, GPUBP_ERR_INVALID_ARG,
                        "blosc: NULL input for %zu bytes", len);
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
        if (left) GBP_FORWARD_IF_ERROR(add_unit(e, p, left, NO_CHUNK, 0, e->taken, 1));
        e->taken += left;
        return GPUBP_OK;
    }
    while (left > 0) {
        size_t pos = e->taken - e->carry_len, k = pos / e->m, c0 = k * e->m;
        size_t cn = chunk_bytes(e, k), bsz = gbp_blosc_blocksize(cn, e->ts, e->level);
        size_t j = (pos - c0) / bsz, blen = c0 + cn - (c0 + j * bsz);
        if (blen > bsz) blen = bsz;
        size_t need = blen - e->carry_len;
        if (e->carry_len > 0 || left < blen) {
            size_t t = need < left ? need : left;
            memcpy(e->carry[e->cur] + e->carry_len, p, t);
            e->carry_len += t;
            p += t;
            left -= t;
            e->taken += t;
            if (e->carry_len < blen) break; /* the rest comes with the next put */
            GBP_FORWARD_IF_ERROR(add_unit(e, e->carry[e->cur], blen, k, j, pos, chunk_skips(e, k)));
            e->cur ^= 1;
            e->carry_len = 0;
            continue;
        }
        GBP_FORWARD_IF_ERROR(add_unit(e, p, blen, k, j, pos, chunk_skips(e, k)));
        p += blen;
        left -= blen;
        e->taken += blen;
    }
    if (e->nu == 0) return GPUBP_OK;
    if (e->scratch_units < e->nu) {
        gbp_free(e->scratch);
        e->scratch = gbp_malloc(e->nu * e->bsz_max);
        e->scratch_units = e->scratch ? e->nu : 0;
        if (!e->scratch) return gbp_error(GPUBP_ERR_NOMEM, 0, "blosc: out of memory (scratch)");
    }
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
    e->ck_bsz = gbp_blosc_blocksize(e->ck_n, e->ts, e->level);
    e->ck_nb = e->ck_n / e->ck_bsz + (e->ck_n % e->ck_bsz != 0);
    e->ck_base = e->out_end;
    e->ck_mode = (e->level == 0 || e->ck_n < MIN_BUFFERSIZE) ? CK_MEMCPY : CK_NORMAL;
    e->nt = HDR_EXT + 4 * e->ck_nb;
    e->all_zero = 1;
    e->zpend = 0;
    e->ck_u0 = first_unit;
    e->ck_ext0 = e->next;
    e->ck_o0 = e->o;
    size_t hb = e->ck_mode == CK_NORMAL ? HDR_EXT + 4 * e->ck_nb : HDR_EXT;
    GBP_FORWARD_IF_ERROR(grow((void **)&e->hdrs, &e->hdrs_cap, e->hdrs_len + hb, 1));
    GBP_FORWARD_IF_ERROR(grow((void **)&e->ch, &e->cap_ch, e->nch + 1, sizeof *e->ch));
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
    e->next = e->ck_ext0;
    e->o = e->ck_o0;
    e->zpend = 0;
    size_t from = e->u[e->ck_u0].in_off;
    if (from > e->ck_in0) {
        GBP_FORWARD_IF_ERROR(grow((void **)&e->redo, &e->cap_redo, e->nredo + 1, sizeof *e->redo));
        e->redo[e->nredo++] = (gbp_blosc_redo){e->ck_in0, from - e->ck_in0, e->ck_base + HDR_EXT};
    }
    for (size_t t = e->ck_u0; t <= upto; t++) place_plain(e, &e->u[t]);
    return GPUBP_OK;
}

static void finish_chunk(gbp_blosc_enc *e)
{
    const uint8_t flags = F_SHUFFLE | F_BITSHUFFLE | F_DONTSPLIT | (ZLIB_FORMAT << 5);
    chunk_rec *c = &e->ch[e->nch];
    uint8_t *h = e->hdrs + c->hoff;
    size_t cbytes;
    if (e->ck_mode == CK_MEMCPY) {
        header(h, F_SHUFFLE | F_BITSHUFFLE | F_MEMCPYED, e->ts, e->ck_n, e->ck_bsz,
               e->ck_n + HDR_EXT, e->filter, 0);
        cbytes = e->ck_n + HDR_EXT;
        c->len = HDR_EXT;
    } else if (e->ck_mode == CK_ABANDONED) { /* did not shrink: flags 0x77 */
        header(h, flags | F_MEMCPYED, e->ts, e->ck_n, e->ck_bsz, e->ck_n + HDR_EXT, e->filter, 0);
        cbytes = e->ck_n + HDR_EXT;
        c->len = HDR_EXT;
    } else if (e->all_zero && e->ck_n % e->ts == 0) {
        /* every stream a zero run: the special-zero chunk. Blosc2 2.19 writes it for any size
         * but reads it back only when nbytes is a multiple of typesize (a piece of an odd split
         * may not be); then the chunk of zero runs, which decodes to the same bytes, is kept. */
        header(h, flags, e->ts, e->ck_n, e->ck_bsz, HDR_EXT, e->filter, SPECIAL_ZERO << 4);
        cbytes = HDR_EXT;
        c->len = HDR_EXT;
    } else {
        emit_zeros(e, e->zpend_at, 4 * e->zpend);
        header(h, flags, e->ts, e->ck_n, e->ck_bsz, (size_t)e->nt, e->filter, 0);
        cbytes = (size_t)e->nt;
    }
    e->zpend = 0;
    e->out_end = e->ck_base + cbytes;
    e->nch++;
    e->started = 0;
}

/* blosc_c's bookkeeping for one compressed block, in block order: nt = bytes used so far, the
 * chunk is abandoned past room = nbytes + 32 (what ADIOS2 gives blosc2_compress). */
static int walk_block(gbp_blosc_enc *e, size_t t)
{
    unit *r = &e->u[t];
    uint64_t room = e->ck_n + HDR_EXT;
    if (r->kind == BLK_NOMEM)
        return gbp_error(GPUBP_ERR_NOMEM, 0, "blosc: out of memory compressing a block");
    st32(e->hdrs + e->bst + 4 * r->block, (uint32_t)e->nt);
    uint64_t at = e->ck_base + e->nt; /* nt counts from the chunk's start */
    e->nt += 4;
    if (r->kind == BLK_RUN) {
        if (e->nt > room) return abandon(e, t);
        if (r->run) {
            if (++e->nt > room) return abandon(e, t);
        } else if (e->all_zero) { /* written once the chunk is known not to be special */
            if (e->zpend++ == 0) e->zpend_at = at;
            return GPUBP_OK;
        }
        if (e->all_zero) emit_zeros(e, e->zpend_at, 4 * e->zpend);
        e->all_zero = 0;
        e->zpend = 0;
        uint8_t *p = emit_bytes(e, at, r->run ? 5 : 4);
        st32(p, (uint32_t)-(int32_t)r->run);
        if (r->run) p[4] = 0x01;
        return GPUBP_OK;
    }
    size_t maxout = r->len;
    if (e->nt + maxout > room) {
        if (e->nt >= room) return abandon(e, t);
        maxout = (size_t)(room - e->nt);
    }
    size_t slen;
    if (r->kind == BLK_ZLIB && r->clen <= maxout) {
        r->store = STORE_ZLIB;
        slen = r->clen;
    } else {
        if (e->nt + r->len > room) return abandon(e, t); /* stored raw does not fit */
        r->store = STORE_FILTERED;
        slen = r->len;
    }
    if (e->all_zero) emit_zeros(e, e->zpend_at, 4 * e->zpend);
    e->all_zero = 0;
    e->zpend = 0;
    uint8_t *p = emit_bytes(e, at, 4 + slen);
    st32(p, (uint32_t)slen);
    r->dst = p + 4;
    e->nt += slen;
    return GPUBP_OK;
}

static int emit_units(gbp_blosc_enc *e)
{
    e->ck_u0 = 0;
    e->ck_ext0 = e->next;
    e->ck_o0 = e->o;
    for (size_t t = 0; t < e->nu; t++) {
        unit *r = &e->u[t];
        r->store = STORE_NONE;
        if (r->chunk == NO_CHUNK) {
            r->store = STORE_PLAIN;
            r->dst = emit_bytes(e, GBP_BLOSC_PREFIX + r->in_off, r->len);
            continue;
        }
        if (r->block == 0) GBP_FORWARD_IF_ERROR(start_chunk(e, r->chunk, t));
        if (e->ck_mode != CK_NORMAL) place_plain(e, r);
        else GBP_FORWARD_IF_ERROR(walk_block(e, t));
        if (r->block == e->ck_nb - 1) finish_chunk(e);
    }
    gbp_pool_run(gbp_pool_workers(e->threads, e->nu), e->nu, store_task, e);
    return GPUBP_OK;
}

int gbp_blosc_enc_emit(gbp_blosc_enc *e, uint8_t *out, size_t cap, const gbp_blosc_extent **ext,
                       size_t *next)
{
    GBP_CHECK_ARG(e);
    GBP_CHECK_ARG(ext);
    GBP_CHECK_ARG(next);
    size_t bytes = 0;
    for (size_t t = 0; t < e->nu; t++) bytes += e->u[t].len;
    GBP_RETURN_ERROR_IF(out == NULL || cap < bytes + 5 * e->nu + 8, GPUBP_ERR_INVALID_ARG,
                        "blosc: output room of %zu bytes for %zu units of %zu bytes", cap, e->nu,
                        bytes);
    /* extents: one per unit at most, plus zero runs written late (one per chunk) */
    GBP_FORWARD_IF_ERROR(grow((void **)&e->ext, &e->cap_ext, 2 * e->nu + 2, sizeof *e->ext));
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
    GBP_FORWARD_IF_ERROR(grow((void **)&e->ext, &e->cap_ext, e->nch + 1, sizeof *e->ext));
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

int gbp_blosc_compress(const void *src, size_t n, size_t typesize, int level, int shuffle,
                       int threads, void *dst, size_t cap, size_t *outlen)
{
    GBP_CHECK_ARG(dst);
    GBP_CHECK_ARG(outlen);
    GBP_RETURN_ERROR_IF(src == NULL && n > 0, GPUBP_ERR_INVALID_ARG,
                        "blosc: NULL source for %zu bytes", n);
    gbp_blosc_enc *e;
    GBP_FORWARD_IF_ERROR(gbp_blosc_enc_open(&e, n, typesize, level, shuffle, threads));
    size_t bound = gbp_blosc_bound(n);
    if (cap < bound) {
        gbp_blosc_enc_close(e);
        return gbp_error(GPUBP_ERR_INVALID_ARG, 0,
                         "blosc: destination of %zu bytes, %zu needed for %zu input bytes", cap,
                         bound, n);
    }
    e->direct = dst;
    /* batches of blocks: at least 4 per worker, scratch small enough to be reused by malloc */
    size_t piece = BATCH_BYTES, w = (size_t)gbp_pool_workers(threads, SIZE_MAX);
    if (piece < 4 * w * e->bsz_max) piece = 4 * w * e->bsz_max;
    const uint8_t *in = src;
    int rc = GPUBP_OK;
    for (size_t off = 0; rc == GPUBP_OK && off < n; off += piece) {
        size_t len = n - off < piece ? n - off : piece;
        rc = gbp_blosc_enc_put(e, in + off, len);
        if (rc == GPUBP_OK) rc = emit_units(e); /* direct: in place, no extents */
        e->nu = 0;
        e->put_pending = 0;
    }
    const gbp_blosc_extent *x = NULL;
    const gbp_blosc_redo *r = NULL;
    size_t nx = 0, nr = 0, total = 0;
    if (rc == GPUBP_OK) rc = gbp_blosc_enc_finish(e, &x, &nx, &r, &nr, &total);
    if (rc == GPUBP_OK) {
        uint8_t *out = dst;
        for (size_t i = 0; i < nx; i++) memcpy(out + x[i].off, x[i].p, x[i].len);
        for (size_t i = 0; i < nr; i++)
            parallel_copy(out + r[i].out_off, in + r[i].in_off, r[i].len, (int)w);
        *outlen = total;
    }
    gbp_blosc_enc_close(e);
    return rc;
}

/* ---- decompression --------------------------------------------------------------------------- */


typedef struct dchunk {
    const uint8_t *c;     /* the chunk */
    size_t cbytes;        /* validated: within the buffer */
    size_t ov;            /* header length: 16 or 32 */
    size_t base;          /* offset of the chunk in the operator buffer (messages) */
    uint8_t *out;         /* the window's bytes: uncompressed bytes [lo, hi) of the chunk */
    size_t lo, hi;
    uint8_t **s2;         /* per worker: a block only partly in the window */
    size_t nbytes, bsz, nblocks, ts;
    int version, codec, dont_split;
    int filters[6];
    int nfilters;         /* shuffle / bitshuffle filters to undo */
    uint8_t **s0, **s1;   /* per worker: scratch for the filtered block */
    size_t first;         /* first block of the window */
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

static void decompress_task(void *ctx, size_t task, int worker)
{
    dchunk *d = ctx;
    size_t j = d->first + task;
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
    size_t blo = j * d->bsz, bhi = blo + len;
    int partial = blo < d->lo || bhi > d->hi;
    uint8_t *out = partial ? d->s2[worker] : d->out + (blo - d->lo);
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
    if (partial) { /* the part of the block inside the window */
        size_t a = blo > d->lo ? blo : d->lo, b = bhi < d->hi ? bhi : d->hi;
        memcpy(d->out + (a - d->lo), out + (a - blo), b - a);
    }
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
        memcpy(out, src + ov + lo, hi - lo);
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
    d.err_block = SIZE_MAX;
    if (lo == hi) return GPUBP_OK; /* nothing of this chunk is wanted */
    size_t jfirst = lo / bsz, jlast = (hi - 1) / bsz, ntasks = jlast - jfirst + 1;
    int partial = lo % bsz != 0 || (hi % bsz != 0 && hi != nbytes);
    int workers = gbp_pool_workers(threads, ntasks), rc = GPUBP_OK;
    d.first = jfirst;
    d.s0 = gbp_calloc((size_t)workers, sizeof *d.s0);
    d.s1 = gbp_calloc((size_t)workers, sizeof *d.s1);
    d.s2 = gbp_calloc((size_t)workers, sizeof *d.s2);
    d.zs = gbp_calloc((size_t)workers, sizeof *d.zs);
    d.zs_ready = gbp_calloc((size_t)workers, sizeof *d.zs_ready);
    if (!d.s0 || !d.s1 || !d.s2 || !d.zs || !d.zs_ready) rc = GPUBP_ERR_NOMEM;
    for (int w = 0; rc == GPUBP_OK && w < workers && partial; w++)
        if (!(d.s2[w] = gbp_malloc(bsz))) rc = GPUBP_ERR_NOMEM;
    for (int w = 0; rc == GPUBP_OK && w < workers && nfilters > 0; w++) {
        if (!(d.s0[w] = gbp_malloc(bsz))) rc = GPUBP_ERR_NOMEM;
        else if (nfilters > 1 && !(d.s1[w] = gbp_malloc(bsz))) rc = GPUBP_ERR_NOMEM;
    }
    if (rc == GPUBP_OK && pthread_mutex_init(&d.mu, NULL) != 0) rc = GPUBP_ERR_NOMEM;
    if (rc == GPUBP_OK) {
        gbp_pool_run(workers, ntasks, decompress_task, &d);
        pthread_mutex_destroy(&d.mu);
        if (d.err_block != SIZE_MAX) rc = gbp_error(d.err_rc, 0, "%s", d.err_msg);
    } else {
        rc = gbp_error(rc, 0, "blosc: out of memory decoding a chunk of %zu bytes", nbytes);
    }
    for (int w = 0; w < workers; w++) {
        if (d.s0) gbp_free(d.s0[w]);
        if (d.s1) gbp_free(d.s1[w]);
        if (d.s2) gbp_free(d.s2[w]);
        if (d.zs_ready && d.zs_ready[w]) inflateEnd(&d.zs[w]);
    }
    gbp_free(d.s0);
    gbp_free(d.s1);
    gbp_free(d.s2);
    gbp_free(d.zs);
    gbp_free(d.zs_ready);
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
        if (hi > lo) memcpy(dst, src + p + lo, hi - lo);
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
