/* lib/compress/blosc_size.h: see blosc_size.c: the sizes the encoder writes with. */
#ifndef GBP_COMPRESS_BLOSC_SIZE_H
#define GBP_COMPRESS_BLOSC_SIZE_H

#include <stddef.h>

/* Worst-case size of the operator buffer for n input bytes: 23 + n, plus 32 per chunk when
 * n >= 128. Every buffer gbp_blosc_compress writes fits. Returns 0 if the value does not fit in a
 * size_t. */
size_t gbp_blosc_bound(size_t n);

/* Blosc2's automatic block size of a chunk of nbytes (docs/format/blosc-zlib.md 3.9, and stune.c for the
 * fast codecs and split chunks), and whether the chunk's blocks are split into typesize streams
 * (Blosc2's default split mode: blosclz, lz4 and zstd up to level 5, with byte shuffle,
 * typesize 2..16, at least 32 elements a block). */
size_t gbp_blosc_blocksize(size_t nbytes, size_t typesize, int codec, int level, int shuffle);
int gbp_blosc_split(size_t nbytes, size_t typesize, int codec, int level, int shuffle);

/* The GPU path's blocks (compress_device_block_kib, docs/compression.md "GPU blocks"): want
 * bytes, at most the chunk, a multiple of the type size; their streams are not split (the chunk
 * says so: DONTSPLIT), so the device codes one stream a block. Blosc2 reads any block size up
 * to the chunk. */
size_t gbp_blosc_dev_blocksize(size_t nbytes, size_t typesize, size_t want);

#endif /* GBP_COMPRESS_BLOSC_SIZE_H */
