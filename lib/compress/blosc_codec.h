/* lib/compress, internal to the module: the Blosc2 codecs behind one interface, for the chunk
 * encoder (blosc_enc.c) and decoder (blosc_dec.c). blosclz is ours (blosclz.c); zlib, lz4/lz4hc
 * and zstd call their libraries, the last two only when the build found them (blosc_config.h).
 * Each worker thread owns one gbp_codec_ws, which keeps the library contexts between calls. */
#ifndef GBP_BLOSC_CODEC_H
#define GBP_BLOSC_CODEC_H

#include "blosczlib.h"

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
} gbp_codec_ws;

void gbp_codec_ws_free(gbp_codec_ws *w);

/* NULL when this build decodes streams of codec format `format`; else why not, for a message
 * ("this build has no liblz4", "not supported"). */
const char *gbp_codec_unavailable(int format);

/* Decodes one stream of n bytes with codec format `format` into exactly `want` bytes at out.
 * Returns GPUBP_OK, GPUBP_ERR_FORMAT (damaged: not exactly `want` bytes), GPUBP_ERR_NOMEM or
 * GPUBP_ERR_CODEC (gbp_codec_unavailable); records no error message. */
int gbp_codec_decode(gbp_codec_ws *w, int format, const uint8_t *in, size_t n, uint8_t *out,
                     size_t want);

#endif /* GBP_BLOSC_CODEC_H */
