/* lib/compress/blosc_dec.h: see blosc_dec.c: the decoder. */
#ifndef GBP_COMPRESS_BLOSC_DEC_H
#define GBP_COMPRESS_BLOSC_DEC_H

#include <stddef.h>

#include "compress/blosc_params.h"

/* Decodes an ADIOS2 blosc operator buffer of n bytes (exactly the characteristic-11 output size)
 * into dst, which must be exactly dstlen = the uncompressed size recorded in the buffer (the
 * characteristic-11 input size). Accepts: chunked layout (any chunk sizes), the legacy single
 * chunk (DataHeader format != 0), the raw fallback (count 0); chunks with 16- or 32-byte headers,
 * versions 1-5, memcpyed, special (zeros, NaN, repeated value, uninitialised -> zeros), split or
 * unsplit blocks in any order, zero/byte runs, raw and zlib streams, byte shuffle, bit shuffle,
 * no filter. Returns GPUBP_OK; GPUBP_ERR_CODEC naming the codec or feature when a stream needs a
 * codec other than zlib (blosclz, lz4, zstd, ...) or the delta / a user filter, a dictionary or an
 * instrumented chunk; GPUBP_ERR_FORMAT with the byte offset for anything damaged, truncated or
 * inconsistent (dst contents are then unspecified); GPUBP_ERR_INVALID_ARG; GPUBP_ERR_NOMEM.
 * Every length is checked against n and dstlen before use: it never reads outside src, writes
 * outside dst, or allocates more than about twice dstlen. */
int gbp_blosc_decompress(const void *src, size_t n, void *dst, size_t dstlen, int threads);

/* Decodes only the uncompressed bytes [lo, hi) of the buffer (which holds dstlen) into dst
 * (hi - lo bytes): the framing and every chunk header are checked as by gbp_blosc_decompress,
 * but only the Blosc2 blocks that hold those bytes are decoded (damage elsewhere goes unseen).
 * The same statuses; GPUBP_ERR_INVALID_ARG for a range outside [0, dstlen]. Reentrant: several
 * threads may decode ranges of one buffer at once (reading from a device read's I/O threads). */
int gbp_blosc_decompress_range(const void *src, size_t n, size_t dstlen, size_t lo, size_t hi,
                               void *dst, int threads);

/* The payload of a blosc block in a BP4 file written by ADIOS2 before 2.8.0 (header version in
 * md.idx): no 15-byte prefix, it starts at the DataHeader; dstlen comes from characteristic 11. */
int gbp_blosc_decompress_pre28(const void *src, size_t n, void *dst, size_t dstlen, int threads);

#endif /* GBP_COMPRESS_BLOSC_DEC_H */
