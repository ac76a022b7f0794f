/* lib/compress/blosc_params.h: see blosc_params.c: the module's constants, the operator parameters, codec
 * names, the chunk-size test hook. */
#ifndef GBP_COMPRESS_BLOSC_PARAMS_H
#define GBP_COMPRESS_BLOSC_PARAMS_H

#include <stddef.h>

#include "common/common.h"

/* Shuffle modes (the values of ADIOS2's `doshuffle`). */
#define GBP_BLOSC_NOSHUFFLE 0
#define GBP_BLOSC_SHUFFLE 1    /* byte shuffle */
#define GBP_BLOSC_BITSHUFFLE 2

/* Codecs (Blosc2 codec codes, chunk header byte 22). */
#define GBP_BLOSC_BLOSCLZ 0
#define GBP_BLOSC_LZ4 1
#define GBP_BLOSC_LZ4HC 2
#define GBP_BLOSC_ZLIB 4
#define GBP_BLOSC_ZSTD 5

#define GBP_BLOSC_DEFAULT_LEVEL 1 /* ADIOS2's default clevel */
#define GBP_BLOSC_DEFAULT_SHUFFLE GBP_BLOSC_SHUFFLE
#define GBP_BLOSC_THRESHOLD 128   /* blocks below this many bytes are stored raw (count 0) */
#define GBP_BLOSC_PREFIX 23       /* common header + size + Blosc2 version + DataHeader */
#define GBP_BLOSC_MAX_CHUNK ((size_t)2147483615) /* BLOSC2_MAX_BUFFERSIZE: bytes per chunk */

/* Parses "level=1,shuffle=byte,threads=4" (keys level 0..9, shuffle byte|bit|none, threads
 * 0..1024; spaces around keys and values are ignored; NULL or "" is empty). Keys absent from the
 * string leave their out-value unchanged, so the caller presets defaults (GBP_BLOSC_DEFAULT_*,
 * threads 0) or a file-level setting. Any out-pointer may be NULL (its key is then still checked).
 * GPUBP_ERR_PARAM naming the key for an unknown key or a bad value; nothing is changed then. */
int gbp_blosc_parse_params(const char *params, int *level, int *shuffle, int *threads);

/* The codec named "blosclz", "lz4", "lz4hc", "zlib" or "zstd" -> *codec (GBP_BLOSC_*);
 * GPUBP_ERR_CODEC naming it for any other name. */
int gbp_blosc_codec_from_name(const char *name, int *codec);
/* The name of a codec code ("lz4hc"); "unknown codec" for others. */
const char *gbp_blosc_codec_str(int codec);
/* Name of a Blosc codec format number (chunk flags bits 5-7): "blosclz", "lz4", "zlib", ... */
const char *gbp_blosc_codec_name(int format);

/* Test hook: cut pieces of at most `bytes` instead of 2 147 483 615 (0 restores the default), to
 * exercise the multi-chunk layout with small inputs. Process-wide; not for production use. */
void gbp_blosc_set_max_chunk(size_t bytes);

/* Bytes per Blosc2 chunk: GBP_BLOSC_MAX_CHUNK, or what gbp_blosc_set_max_chunk set. */
size_t gbp_blosc_max_chunk(void);

#endif /* GBP_COMPRESS_BLOSC_PARAMS_H */
