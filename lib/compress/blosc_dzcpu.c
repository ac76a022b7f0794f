/* The CPU stand-in of the batched device codec interface (common/dzops.h): the filter and the
 * codecs of this layer (shuffle.c, blosc_codec.c) run on host memory, one stream per pool task.
 * It serves the simulated device, whose "device memory" is host memory, so that the GPU
 * compression path of lib/engine/zdev.c (its chunking, framing and assembly) runs in CI and
 * gives exactly the bytes of the CPU path: the streams are coded as blosc_enc.c codes them. */
#include "compress/blosc_dzcpu.h"

#include "compress/blosc_codec.h"
#include "compress/blosc_enc.h"
#include "compress/blosc_frame.h"
#include "compress/pool.h"
#include "compress/shuffle.h"

#include <stdatomic.h>
#include <stdio.h>

typedef struct cpu_dz {
    int nw;
    gbp_codec_ws *ws; /* per worker */
    /* per coded set (encode_launch): the coded streams, where stream i's bytes are in them */
    uint8_t *coded[2];
    size_t cap[2];
    size_t *at[2];
    size_t cap_at[2];
    int cur;  /* the set of the last encode_wait (assembly) */
    int lset; /* the set of the encode_launch in progress */
    /* the call in progress */
    int codec, level, filter, inverse;
    const uint8_t *in;
    uint8_t *out;
    size_t len, bsz, ts;
    const size_t *off, *slen;
    int16_t *run;
    size_t *clen;
    const gbp_dz_seg *seg;
    const gbp_dz_dstream *ds;
    atomic_int rc;
    atomic_size_t bad; /* decode: the first stream that failed + 1 */
} cpu_dz;

static const char *cpu_unavailable(int codec)
{
    if (codec == GBP_BLOSC_BLOSCLZ) return "blosclz has no device codec";
    int fmt = gbp_codec_format(codec);
    return fmt < 0 ? "unknown codec" : gbp_codec_unavailable(fmt);
}

static int cpu_open(void *dctx, void **out)
{
    (void)dctx;
    cpu_dz *z = gbp_calloc(1, sizeof *z);
    if (z) {
        z->nw = gbp_pool_workers(0, SIZE_MAX);
        z->ws = gbp_calloc((size_t)z->nw, sizeof *z->ws);
    }
    if (!z || !z->ws) {
        gbp_free(z);
        return gbp_error(GPUBP_ERR_NOMEM, 0, "out of memory (device codec state)");
    }
    *out = z;
    return GPUBP_OK;
}

static void cpu_close(void *vz)
{
    cpu_dz *z = vz;
    if (!z) return;
    for (int w = 0; w < z->nw; w++) gbp_codec_ws_free(&z->ws[w]);
    gbp_free(z->ws);
    for (int k = 0; k < 2; k++) {
        gbp_free(z->coded[k]);
        gbp_free(z->at[k]);
    }
    gbp_free(z);
}

static int cpu_begin(void *vz)
{
    (void)vz; /* the simulated device's host memory: nothing is queued */
    return GPUBP_OK;
}

static void filter_task(void *ctx, size_t t, int worker)
{
    (void)worker;
    cpu_dz *z = ctx;
    size_t o = t * z->bsz, n = z->len - o < z->bsz ? z->len - o : z->bsz;
    const uint8_t *in = z->in + o;
    uint8_t *out = z->out + o;
    if (z->filter == FILTER_SHUFFLE) {
        if (z->inverse) gbp_byte_unshuffle(in, out, n, z->ts);
        else gbp_byte_shuffle(in, out, n, z->ts);
    } else if (z->inverse) {
        gbp_bit_unshuffle(in, out, n, z->ts, 0);
    } else {
        gbp_bit_shuffle(in, out, n, z->ts);
    }
}

static int cpu_filter(void *vz, int filter, int inverse, const void *in, void *out, size_t len,
                      size_t bsz, size_t ts)
{
    cpu_dz *z = vz;
    GBP_RETURN_ERROR_IF(bsz == 0 || (filter != FILTER_SHUFFLE && filter != FILTER_BITSHUFFLE),
                        GPUBP_ERR_INVALID_ARG, "device filter %d, block size %zu", filter, bsz);
    z->filter = filter;
    z->inverse = inverse;
    z->in = in;
    z->out = out;
    z->len = len;
    z->bsz = bsz;
    z->ts = ts;
    size_t nb = len / bsz + (len % bsz != 0);
    gbp_pool_run(gbp_pool_workers(0, nb), nb, filter_task, z);
    return GPUBP_OK;
}

static void encode_task(void *ctx, size_t i, int worker)
{
    cpu_dz *z = ctx;
    const uint8_t *s = z->in + z->off[i];
    size_t n = z->slen[i];
    z->clen[i] = 0;
    z->run[i] = -1;
    if (n == 0) return;
    if (all_same(s, n)) {
        z->run[i] = s[0];
        return;
    }
    /* at most n - 1 bytes, as blosc_enc.c asks: a longer stream is stored raw */
    size_t c = gbp_codec_encode(&z->ws[worker], z->codec, z->level, s, n,
                                z->coded[z->lset] + z->at[z->lset][i], n - 1);
    if (c == SIZE_MAX) atomic_store(&z->rc, GPUBP_ERR_NOMEM);
    else z->clen[i] = c;
}

/* The work is done here, into set `set` (the simulated device has no queue). */
static int cpu_encode_launch(void *vz, int set, int codec, int level, const uint8_t *in, size_t n,
                             const size_t *off, const size_t *len, int16_t *run, size_t *clen)
{
    cpu_dz *z = vz;
    GBP_RETURN_ERROR_IF(set < 0 || set > 1, GPUBP_ERR_INVALID_ARG, "coded set %d", set);
    if (n > z->cap_at[set]) {
        gbp_free(z->at[set]);
        z->at[set] = gbp_malloc(n * sizeof *z->at[set]);
        z->cap_at[set] = z->at[set] ? n : 0;
        if (!z->at[set]) return gbp_error(GPUBP_ERR_NOMEM, 0, "out of memory (device codec state)");
    }
    size_t total = 0;
    for (size_t i = 0; i < n; i++) {
        z->at[set][i] = total;
        total += len[i];
    }
    if (total > z->cap[set]) {
        gbp_free(z->coded[set]);
        z->coded[set] = gbp_malloc(total);
        z->cap[set] = z->coded[set] ? total : 0;
        if (!z->coded[set])
            return gbp_error(GPUBP_ERR_NOMEM, 0, "out of memory (%zu bytes of coded streams)", total);
    }
    z->lset = set;
    z->codec = codec;
    z->level = level;
    z->in = in;
    z->off = off;
    z->slen = len;
    z->run = run;
    z->clen = clen;
    atomic_store(&z->rc, GPUBP_OK);
    gbp_pool_run(gbp_pool_workers(0, n), n, encode_task, z);
    GBP_RETURN_ERROR_IF(atomic_load(&z->rc), GPUBP_ERR_NOMEM, "out of memory coding %zu streams (%s)",
                        n, gbp_blosc_codec_str(codec));
    return GPUBP_OK;
}

static int cpu_encode_wait(void *vz, int set)
{
    cpu_dz *z = vz;
    GBP_RETURN_ERROR_IF(set < 0 || set > 1, GPUBP_ERR_INVALID_ARG, "coded set %d", set);
    z->cur = set;
    return GPUBP_OK;
}

static void assemble_task(void *ctx, size_t i, int worker)
{
    (void)worker;
    cpu_dz *z = ctx;
    const gbp_dz_seg *g = &z->seg[i];
    uint8_t *d = z->out + g->dst;
    switch (g->kind) {
    case GBP_SEG_INLINE: memcpy(d, g->inl, g->len); break;
    case GBP_SEG_DEV: memcpy(d, (const uint8_t *)(uintptr_t)g->src, g->len); break;
    case GBP_SEG_CODED: memcpy(d, z->coded[z->cur] + z->at[z->cur][g->src], g->len); break;
    default: memset(d, 0, g->len); break;
    }
}

static int cpu_assemble(void *vz, uint8_t *out, const gbp_dz_seg *seg, size_t nseg)
{
    cpu_dz *z = vz;
    z->out = out;
    z->seg = seg;
    gbp_pool_run(gbp_pool_workers(0, nseg), nseg, assemble_task, z);
    return GPUBP_OK;
}

static void decode_task(void *ctx, size_t i, int worker)
{
    cpu_dz *z = ctx;
    const gbp_dz_dstream *s = &z->ds[i];
    int rc = GPUBP_OK;
    if (s->kind == GBP_DSTREAM_RUN) memset(z->out + s->dst, s->run, s->len);
    else if (s->kind == GBP_DSTREAM_COPY) memcpy(z->out + s->dst, z->in + s->src, s->len);
    else rc = gbp_codec_decode(&z->ws[worker], gbp_codec_format(z->codec), z->in + s->src,
                               s->clen, z->out + s->dst, s->len);
    if (rc != GPUBP_OK) {
        atomic_store(&z->rc, rc);
        size_t none = 0;
        atomic_compare_exchange_strong(&z->bad, &none, i + 1);
    }
}

static int cpu_decode(void *vz, int codec, const uint8_t *in, uint8_t *out,
                      const gbp_dz_dstream *s, size_t n)
{
    cpu_dz *z = vz;
    z->codec = codec;
    z->in = in;
    z->out = out;
    z->ds = s;
    atomic_store(&z->rc, GPUBP_OK);
    atomic_store(&z->bad, 0);
    gbp_pool_run(gbp_pool_workers(0, n), n, decode_task, z);
    int rc = atomic_load(&z->rc);
    size_t bad = atomic_load(&z->bad);
    GBP_RETURN_ERROR_IF(rc == GPUBP_ERR_NOMEM, rc, "out of memory decoding %zu streams", n);
    GBP_RETURN_ERROR_IF(rc != GPUBP_OK, rc,
                        "blosc: the %s stream at byte %llu does not decode to its %u bytes",
                        gbp_blosc_codec_str(codec), bad ? (unsigned long long)s[bad - 1].src : 0ull,
                        bad ? s[bad - 1].len : 0u);
    return GPUBP_OK;
}

static int cpu_adopt(void *vz, void *dctx)
{
    (void)vz;
    (void)dctx; /* host memory, the pool: nothing refers to the old file */
    return GPUBP_OK;
}

static const gbp_dzops cpu_ops = {"cpu stand-in",   cpu_unavailable, cpu_open,
                                  cpu_close,        cpu_begin,       cpu_filter,
                                  cpu_encode_launch, cpu_encode_wait, cpu_assemble,
                                  cpu_decode,       cpu_adopt};

const gbp_dzops *gbp_blosc_cpu_dzops(void) { return &cpu_ops; }
