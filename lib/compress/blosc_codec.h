/* lib/compress, internal to the module: the Blosc2 codecs behind one interface, for the chunk
 * encoder (blosc_enc.c) and decoder (blosc_dec.c). blosclz is ours (blosclz.c); zlib, lz4/lz4hc
 * and zstd call their libraries, the last two only when the build found them (blosc_config.h).
 * Each worker of a call uses one gbp_codec_ws, which keeps the library contexts (and a block
 * buffer) between its blocks; gbp_codec_ws_take / _give keep them between calls too. */
#ifndef GBP_BLOSC_CODEC_H
#define GBP_BLOSC_CODEC_H

#include "compress/blosc_params.h"

#include <zlib.h>

/* Codec format numbers (chunk flags bits 5-7) */
#define GBP_FMT_BLOSCLZ 0
#define GBP_FMT_LZ4 1 /* lz4 and lz4hc */
#define GBP_FMT_ZLIB 3
#define GBP_FMT_ZSTD 4

typedef struct gbp_codec_ws {
    z_stream zs;
    int zmode;  /* 0: zs unused, 1: inflate, 2: deflate */
    void *zdctx; /* ZSTD_DCtx */
    void *zcctx; /* ZSTD_CCtx */
    void *lz4;  /* lz4 or lz4hc compression state */
    int lz4hc;  /* lz4 is an lz4hc state (1) or an lz4 one (0) */
    int zlevel; /* deflate: the level zs was set up for */
    uint8_t *buf; /* a block buffer of bufcap bytes, 64-byte aligned (gbp_codec_ws_buf) */
    size_t bufcap;
    void *buf_mem; /* what was allocated for buf */
    struct gbp_codec_ws *next; /* in the list of kept states */
    size_t kept_size;          /* what it counted for when it was kept (ws_bytes) */
} gbp_codec_ws;

/* Frees what w holds (not w itself); w is then as if zeroed, ready for use again. */
void gbp_codec_ws_free(gbp_codec_ws *w);

/* A worker's codec state for one call: one kept from an earlier call, with its library contexts
 * and buffer already made (a new zstd context costs 40-270 us and its first pages, against 16 us
 * for a 32 KiB block: per call and worker, that was a tenth of a 32 MiB chunk at 16 threads), or a
 * new one. NULL when out of memory. The caller owns it until gbp_codec_ws_give. Thread-safe. */
gbp_codec_ws *gbp_codec_ws_take(void);

/* Done with w (NULL is fine): kept for the next take while the kept states hold at most
 * GBP_CODEC_WS_KEEP_BYTES (their contexts and buffers) and number at most GBP_CODEC_WS_KEEP,
 * else freed. Kept states are freed at exit. Thread-safe. */
void gbp_codec_ws_give(gbp_codec_ws *w);

/* How many states are kept now; *bytes (optional) gets what they hold (tests). */
size_t gbp_codec_ws_kept(size_t *bytes);

#define GBP_CODEC_WS_KEEP 64
#define GBP_CODEC_WS_KEEP_BYTES ((size_t)32 << 20)

/* w's block buffer with at least n bytes, aligned to 64 bytes (the shuffle kernels' 32-byte
 * stores into a block that malloc aligned to 16 split cache lines: 0.7x), grown when smaller
 * (its contents are not kept then). NULL when out of memory. */
uint8_t *gbp_codec_ws_buf(gbp_codec_ws *w, size_t n);

/* NULL when this build decodes streams of codec format `format`; else why not, for a message
 * ("this build has no liblz4", "not supported"). */
const char *gbp_codec_unavailable(int format);

/* Decodes one stream of n bytes with codec format `format` into exactly `want` bytes at out.
 * Returns GPUBP_OK, GPUBP_ERR_FORMAT (damaged: not exactly `want` bytes), GPUBP_ERR_NOMEM or
 * GPUBP_ERR_CODEC (gbp_codec_unavailable); records no error message. */
int gbp_codec_decode(gbp_codec_ws *w, int format, const uint8_t *in, size_t n, uint8_t *out,
                     size_t want);

/* Codec format (flags bits 5-7) of a codec code (GBP_BLOSC_BLOSCLZ ...); -1 for an unknown one. */
int gbp_codec_format(int codec);

/* Compresses n bytes with codec `codec` (a GBP_BLOSC_* code) at Blosc2 level `level` (1..9;
 * mapped per codec as Blosc2 does: zstd 2 * level - 1, 22 at 9; lz4 ignores it) into at most
 * maxout bytes at out. Returns the length; 0 when the result does not fit (the caller stores the
 * stream raw); SIZE_MAX when out of memory. */
size_t gbp_codec_encode(gbp_codec_ws *w, int codec, int level, const uint8_t *in, size_t n,
                        uint8_t *out, size_t maxout);

/* ---- what this build has (part of the module API, blosczlib.h) ---- */

/* The codecs this build reads and writes, as GPUBP_FEATURE_* bits: ZLIB and BLOSCLZ always, LZ4
 * (lz4 and lz4hc) and ZSTD when the build found liblz4 / libzstd. */
unsigned gbp_blosc_features(void);

/* The versions of the codec libraries this process runs with (found at run time: they may differ
 * from the build's), e.g. "zlib 1.2.13, liblz4 1.9.4, libzstd 1.5.4, libbz2 1.0.8": zlib always,
 * liblz4, libzstd and libbz2 when the build has them (gpubp_codec_versions). Static storage;
 * thread-safe. */
const char *gbp_codec_lib_versions(void);

/* GPUBP_OK when this build writes codec `codec`; GPUBP_ERR_CODEC naming the codec and the missing
 * library (or GPUBP_ERR_INVALID_ARG for an unknown code) otherwise. */
int gbp_blosc_check_codec(int codec);


#endif /* GBP_BLOSC_CODEC_H */
