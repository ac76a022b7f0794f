/* The Blosc2 codecs behind one interface (blosc_codec.h). */
#include "compress/blosc_codec.h"
#include "compress/blosc_config.h"
#include "compress/blosc_frame.h"
#include "compress/blosclz.h"
#include "compress/bzip2_op.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifdef GPUBP_HAVE_LZ4
#include <lz4.h>
#include <lz4hc.h>
#endif
#ifdef GPUBP_HAVE_ZSTD
#include <zstd.h>
#include <zstd_errors.h>
#endif

void gbp_codec_ws_free(gbp_codec_ws *w)
{
    if (w->zmode == 1) inflateEnd(&w->zs);
    else if (w->zmode == 2) deflateEnd(&w->zs);
    w->zmode = 0;
#ifdef GPUBP_HAVE_ZSTD
    ZSTD_freeDCtx(w->zdctx);
    ZSTD_freeCCtx(w->zcctx);
#endif
    w->zdctx = w->zcctx = NULL;
    gbp_free(w->lz4);
    w->lz4 = NULL;
    w->lz4hc = 0;
    gbp_free(w->buf_mem);
    w->buf_mem = NULL;
    w->buf = NULL;
    w->bufcap = 0;
}

uint8_t *gbp_codec_ws_buf(gbp_codec_ws *w, size_t n)
{
    if (w->bufcap < n) {
        gbp_free(w->buf_mem);
        w->buf = gbp_malloc_line(n, &w->buf_mem);
        w->bufcap = w->buf ? n : 0;
    }
    return w->buf;
}

/* The memory a state holds, roughly (what the keep limit counts). */
static size_t ws_bytes(const gbp_codec_ws *w)
{
    size_t b = sizeof *w + w->bufcap + (w->zmode ? (size_t)320 << 10 : 0);
#ifdef GPUBP_HAVE_ZSTD
    b += ZSTD_sizeof_CCtx(w->zcctx) + ZSTD_sizeof_DCtx(w->zdctx);
#endif
#ifdef GPUBP_HAVE_LZ4
    if (w->lz4) b += (size_t)(w->lz4hc ? LZ4_sizeofStateHC() : LZ4_sizeofState());
#endif
    return b;
}

static pthread_mutex_t kept_mu = PTHREAD_MUTEX_INITIALIZER;
static gbp_codec_ws *kept;  /* a list through next */
static size_t kept_n, kept_bytes;
static pthread_once_t kept_once = PTHREAD_ONCE_INIT;

static void kept_at_exit(void)
{
    pthread_mutex_lock(&kept_mu);
    gbp_codec_ws *w = kept;
    kept = NULL;
    kept_n = kept_bytes = 0;
    pthread_mutex_unlock(&kept_mu);
    while (w) {
        gbp_codec_ws *next = w->next;
        gbp_codec_ws_free(w);
        gbp_free(w);
        w = next;
    }
}

static void kept_register(void) { (void)atexit(kept_at_exit); }

size_t gbp_codec_ws_kept(size_t *bytes)
{
    pthread_mutex_lock(&kept_mu);
    size_t n = kept_n;
    if (bytes) *bytes = kept_bytes;
    pthread_mutex_unlock(&kept_mu);
    return n;
}

gbp_codec_ws *gbp_codec_ws_take(void)
{
    pthread_mutex_lock(&kept_mu);
    gbp_codec_ws *w = kept;
    if (w) {
        kept = w->next;
        kept_n--;
        kept_bytes -= w->kept_size;
    }
    pthread_mutex_unlock(&kept_mu);
    if (!w) return gbp_calloc(1, sizeof *w);
    w->next = NULL;
    return w;
}

void gbp_codec_ws_give(gbp_codec_ws *w)
{
    if (!w) return;
    size_t b = ws_bytes(w);
    int keep = 0;
    if (b <= GBP_CODEC_WS_KEEP_BYTES / 4) {
        pthread_once(&kept_once, kept_register);
        pthread_mutex_lock(&kept_mu);
        if (kept_n < GBP_CODEC_WS_KEEP && kept_bytes + b <= GBP_CODEC_WS_KEEP_BYTES) {
            w->next = kept;
            w->kept_size = b;
            kept = w;
            kept_n++;
            kept_bytes += b;
            keep = 1;
        }
        pthread_mutex_unlock(&kept_mu);
    }
    if (!keep) {
        gbp_codec_ws_free(w);
        gbp_free(w);
    }
}

static char lib_versions[192];
static pthread_once_t lib_versions_once = PTHREAD_ONCE_INIT;

static void lib_versions_init(void)
{
    const char *lz4 = NULL, *zstd = NULL, *bz = gbp_bzip2_version();
#ifdef GPUBP_HAVE_LZ4
    lz4 = LZ4_versionString();
#endif
#ifdef GPUBP_HAVE_ZSTD
    zstd = ZSTD_versionString();
#endif
    /* libbz2 says "1.0.8, 13-Jul-2019": its version is what comes before the comma */
    snprintf(lib_versions, sizeof lib_versions, "zlib %s%s%s%s%s%s%.*s", zlibVersion(),
             lz4 ? ", liblz4 " : "", lz4 ? lz4 : "", zstd ? ", libzstd " : "", zstd ? zstd : "",
             bz ? ", libbz2 " : "", bz ? (int)strcspn(bz, ",") : 0, bz ? bz : "");
}

const char *gbp_codec_lib_versions(void)
{
    pthread_once(&lib_versions_once, lib_versions_init);
    return lib_versions;
}

unsigned gbp_blosc_features(void)
{
    unsigned f = GPUBP_FEATURE_ZLIB | GPUBP_FEATURE_BLOSCLZ;
#ifdef GPUBP_HAVE_LZ4
    f |= GPUBP_FEATURE_LZ4;
#endif
#ifdef GPUBP_HAVE_ZSTD
    f |= GPUBP_FEATURE_ZSTD;
#endif
    return f;
}

const char *gbp_codec_unavailable(int format)
{
    switch (format) {
    case GBP_FMT_BLOSCLZ:
    case GBP_FMT_ZLIB: return NULL;
#ifdef GPUBP_HAVE_LZ4
    case GBP_FMT_LZ4: return NULL;
#else
    case GBP_FMT_LZ4: return "this build of libgpubp has no liblz4";
#endif
#ifdef GPUBP_HAVE_ZSTD
    case GBP_FMT_ZSTD: return NULL;
#else
    case GBP_FMT_ZSTD: return "this build of libgpubp has no libzstd";
#endif
    default: return "not supported";
    }
}

/* One zlib-format stream (RFC 1950) into exactly `want` bytes. */
static int inflate_exact(gbp_codec_ws *w, const uint8_t *in, size_t n, uint8_t *out, size_t want)
{
    z_stream *z = &w->zs;
    if (w->zmode != 1) {
        if (w->zmode == 2) deflateEnd(z); /* the workspace compressed before */
        memset(z, 0, sizeof *z);
        z->zalloc = gbp_blosc_zalloc;
        z->zfree = gbp_blosc_zfree;
        z->opaque = Z_NULL;
        z->next_in = Z_NULL;
        z->avail_in = 0;
        if (inflateInit(z) != Z_OK) return GPUBP_ERR_NOMEM;
        w->zmode = 1;
    } else if (inflateReset(z) != Z_OK) {
        return GPUBP_ERR_FORMAT;
    }
    z->next_in = (Bytef *)(uintptr_t)in;
    z->avail_in = (uInt)n;
    z->next_out = out;
    z->avail_out = (uInt)want;
    int zr = inflate(z, Z_FINISH);
    if (zr == Z_STREAM_END) return z->avail_out == 0 ? GPUBP_OK : GPUBP_ERR_FORMAT;
    return zr == Z_MEM_ERROR ? GPUBP_ERR_NOMEM : GPUBP_ERR_FORMAT;
}

int gbp_codec_decode(gbp_codec_ws *w, int format, const uint8_t *in, size_t n, uint8_t *out,
                     size_t want)
{
    switch (format) {
    case GBP_FMT_BLOSCLZ: {
        long got = gbp_blosclz_decompress(in, n, out, want);
        return got >= 0 && (size_t)got == want ? GPUBP_OK : GPUBP_ERR_FORMAT;
    }
    case GBP_FMT_ZLIB: return inflate_exact(w, in, n, out, want);
#ifdef GPUBP_HAVE_LZ4
    case GBP_FMT_LZ4: {
        if (n > INT32_MAX || want > INT32_MAX) return GPUBP_ERR_FORMAT;
        int got = LZ4_decompress_safe((const char *)in, (char *)out, (int)n, (int)want);
        return got >= 0 && (size_t)got == want ? GPUBP_OK : GPUBP_ERR_FORMAT;
    }
#endif
#ifdef GPUBP_HAVE_ZSTD
    case GBP_FMT_ZSTD: {
        if (!w->zdctx && !(w->zdctx = ZSTD_createDCtx())) return GPUBP_ERR_NOMEM;
        /* a frame may not ask for a window larger than the block (hostile input) */
        int wlog = 10;
        while (wlog < 31 && ((size_t)1 << wlog) < want) wlog++;
        if (ZSTD_isError(ZSTD_DCtx_setParameter(w->zdctx, ZSTD_d_windowLogMax, wlog)))
            return GPUBP_ERR_FORMAT;
        size_t got = ZSTD_decompressDCtx(w->zdctx, out, want, in, n);
        if (ZSTD_isError(got))
            return ZSTD_getErrorCode(got) == ZSTD_error_memory_allocation ? GPUBP_ERR_NOMEM
                                                                         : GPUBP_ERR_FORMAT;
        return got == want ? GPUBP_OK : GPUBP_ERR_FORMAT;
    }
#endif
    default: return GPUBP_ERR_CODEC;
    }
}

int gbp_blosc_check_codec(int codec)
{
    int fmt = gbp_codec_format(codec);
    GBP_RETURN_ERROR_IF(fmt < 0, GPUBP_ERR_INVALID_ARG, "blosc: unknown codec %d", codec);
    const char *why = gbp_codec_unavailable(fmt);
    GBP_RETURN_ERROR_IF(why, GPUBP_ERR_CODEC, "blosc: cannot compress with the %s codec: %s",
                        gbp_blosc_codec_str(codec), why);
    return GPUBP_OK;
}

int gbp_codec_format(int codec)
{
    switch (codec) {
    case GBP_BLOSC_BLOSCLZ: return GBP_FMT_BLOSCLZ;
    case GBP_BLOSC_LZ4:
    case GBP_BLOSC_LZ4HC: return GBP_FMT_LZ4;
    case GBP_BLOSC_ZLIB: return GBP_FMT_ZLIB;
    case GBP_BLOSC_ZSTD: return GBP_FMT_ZSTD;
    default: return -1;
    }
}

/* compress2() at the level, limited to maxout bytes */
static size_t deflate_limited(gbp_codec_ws *w, int level, const uint8_t *in, size_t n,
                              uint8_t *out, size_t maxout)
{
    z_stream *z = &w->zs;
    if (w->zmode != 2 || w->zlevel != level) {
        if (w->zmode == 2) deflateEnd(z);
        else if (w->zmode == 1) inflateEnd(z); /* the workspace decompressed before */
        w->zmode = 0;
        memset(z, 0, sizeof *z);
        z->zalloc = gbp_blosc_zalloc;
        z->zfree = gbp_blosc_zfree;
        z->opaque = Z_NULL;
        if (deflateInit(z, level) != Z_OK) return SIZE_MAX;
        w->zmode = 2;
        w->zlevel = level;
    } else if (deflateReset(z) != Z_OK) {
        return SIZE_MAX;
    }
    z->next_in = (Bytef *)(uintptr_t)in;
    z->avail_in = (uInt)n;
    z->next_out = out;
    z->avail_out = (uInt)maxout;
    return deflate(z, Z_FINISH) == Z_STREAM_END ? maxout - z->avail_out : 0;
}

#ifdef GPUBP_HAVE_LZ4
/* w's lz4 (hc = 0) or lz4hc (hc = 1) compression state; NULL when out of memory. A state kept
 * from a call of the other kind is replaced (their sizes differ). */
static void *lz4_state(gbp_codec_ws *w, int hc)
{
    if (w->lz4 && w->lz4hc != hc) {
        gbp_free(w->lz4);
        w->lz4 = NULL;
    }
    if (!w->lz4) {
        w->lz4 = gbp_malloc((size_t)(hc ? LZ4_sizeofStateHC() : LZ4_sizeofState()));
        w->lz4hc = hc;
    }
    return w->lz4;
}
#endif

size_t gbp_codec_encode(gbp_codec_ws *w, int codec, int level, const uint8_t *in, size_t n,
                        uint8_t *out, size_t maxout)
{
    if (n > INT32_MAX) return 0;
    if (maxout > INT32_MAX) maxout = INT32_MAX;
    switch (codec) {
    case GBP_BLOSC_BLOSCLZ: return gbp_blosclz_compress(level, in, n, out, maxout);
    case GBP_BLOSC_ZLIB: return deflate_limited(w, level, in, n, out, maxout);
#ifdef GPUBP_HAVE_LZ4
    case GBP_BLOSC_LZ4: {
        if (!lz4_state(w, 0)) return SIZE_MAX;
        int r = LZ4_compress_fast_extState(w->lz4, (const char *)in, (char *)out, (int)n,
                                           (int)maxout, 1);
        return r > 0 ? (size_t)r : 0;
    }
    case GBP_BLOSC_LZ4HC: {
        if (!lz4_state(w, 1)) return SIZE_MAX;
        int r = LZ4_compress_HC_extStateHC(w->lz4, (const char *)in, (char *)out, (int)n,
                                           (int)maxout, level);
        return r > 0 ? (size_t)r : 0;
    }
#endif
#ifdef GPUBP_HAVE_ZSTD
    case GBP_BLOSC_ZSTD: {
        if (!w->zcctx && !(w->zcctx = ZSTD_createCCtx())) return SIZE_MAX;
        int zl = level < 9 ? 2 * level - 1 : ZSTD_maxCLevel();
        size_t r = ZSTD_compressCCtx(w->zcctx, out, maxout, in, n, zl);
        if (ZSTD_isError(r))
            return ZSTD_getErrorCode(r) == ZSTD_error_memory_allocation ? SIZE_MAX : 0;
        return r;
    }
#endif
    default: return 0;
    }
}
