/* lib/compress, internal to the module: what the Blosc2 chunk encoder (blosc_enc.c) and decoder
 * (blosc_dec.c) share: the chunk header and flag constants (docs/format/blosc-zlib.md section 3),
 * the filter and special-chunk ids, zlib's allocator hooks, little-endian stores and the
 * max-chunk test hook. blosczlib.h is the module's API. */
#ifndef GBP_BLOSC_FRAME_H
#define GBP_BLOSC_FRAME_H

#include "compress/blosc_params.h"

#include <string.h>
#include <zlib.h>

#define HDR_MIN 16
#define HDR_EXT 32
#define MIN_BUFFERSIZE 32          /* BLOSC_MIN_BUFFERSIZE: smaller pieces are memcpyed */
#define MAX_BLOCKSIZE 536866816    /* BLOSC2_MAXBLOCKSIZE */
#define CHUNK_VERSION 5            /* BLOSC2_VERSION_FORMAT_STABLE */
#define CODEC_VERSIONLZ 1          /* every codec's format version (byte 1) */
#define GBP_MAX_STREAMS 16         /* split blocks: at most this many streams (typesize) */
#define ZLIB_FORMAT 3              /* codec number in flags bits 5-7 */

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

/* zlib allocates through the library's wrapper (failure injection, one allocator). */
voidpf gbp_blosc_zalloc(voidpf opaque, uInt items, uInt size);
void gbp_blosc_zfree(voidpf opaque, voidpf p);

static inline void st32(uint8_t *p, uint32_t v) { memcpy(p, &v, 4); }
static inline void st64(uint8_t *p, uint64_t v) { memcpy(p, &v, 8); }
static inline int32_t ldi32(const uint8_t *p) { return (int32_t)gbp_ld32(p); }
/* Whether the n bytes at p are one value repeated (a stream written as a run): memcmp of the
 * bytes with their successors, SIMD in the C library (a byte loop was 10 % of lz4 compression
 * time on doubles, whose exponent streams are nearly constant) */
static inline int all_same(const uint8_t *p, size_t n)
{
    return n < 2 || !memcmp(p, p + 1, n - 1);
}

/* Size of block j of a chunk of nbytes cut into blocks of bsz bytes. */
static inline size_t block_len(size_t nbytes, size_t bsz, size_t j)
{
    size_t start = j * bsz;
    return nbytes - start < bsz ? nbytes - start : bsz;
}

#endif /* GBP_BLOSC_FRAME_H */
