/* lib/compress: the ADIOS2 `bzip2` operator buffer (decoding only).
 *
 * A block that ADIOS2 compressed with its bzip2 operator (BP4 characteristic 11 naming "bzip2", or
 * a BP5 block whose operator buffer starts with type 1) is stored as: the 4-byte common header
 * (u8 operator type 1, u8 buffer version 1, u16 0), u64 uncompressed size, u64 batch count n,
 * n x (u32 offset in the uncompressed block, u32 its length, u32 offset of the batch's bzip2
 * stream from the start of the buffer, u32 the stream's length), then the streams; integers in
 * the writer's (little-endian) byte order. Decoding needs libbz2, found at build time (optional):
 * a build without it reports GPUBP_ERR_CODEC. Pure memory-to-memory; reentrant; errors in the
 * calling thread's last-error record. */
#ifndef GBP_BZIP2_OP_H
#define GBP_BZIP2_OP_H

#include <stddef.h>

#include "common/common.h"

#define GBP_BZIP2_OP_TYPE 1 /* byte 0 of the buffer (ADIOS2's OperatorType BZIP2) */

/* Whether this build decodes bzip2 (it found libbz2). */
int gbp_bzip2_available(void);
/* libbz2's version as the running library reports it ("1.0.8, 13-Jul-2019"); NULL without it. */
const char *gbp_bzip2_version(void);

/* Decodes the operator buffer src[0, n) into dst, which has room for exactly raw bytes (the
 * block's uncompressed size from the metadata); every byte of dst is written on success. The
 * messages do not name the block (the caller does). Errors: GPUBP_ERR_FORMAT (a damaged or
 * inconsistent buffer: the message gives the offset in the buffer), GPUBP_ERR_CODEC (no libbz2 in
 * this build), GPUBP_ERR_NOMEM. */
int gbp_bzip2_decompress(const void *src, size_t n, void *dst, size_t raw);

#endif /* GBP_BZIP2_OP_H */
