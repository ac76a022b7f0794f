/* lib/engine/zdev_read.h: see zdev_read.c. */
#ifndef GBP_ENGINE_ZDEV_READ_H
#define GBP_ENGINE_ZDEV_READ_H

#include "engine/engine_internal.h"

/* Reads a compressed block into device memory on the device: the operator buffer z (zlen bytes,
 * host memory; raw bytes uncompressed) goes up through the pinned pool, the device codec decodes
 * its Blosc2 streams as a batch, the unshuffle kernel writes the whole block into the device
 * buffer dst (dense, contiguous). Returns 1 when done; 0 when the CPU decoder is to do it (off,
 * a codec or chunk layout the device does not decode — blosclz, Blosc1 chunks, special NaN or
 * value chunks, damaged input — or no device codec under auto; dst unchanged or partly
 * written); < 0 on a failure (compress_device=on without a usable device codec, a device or
 * stream error). Synchronous. */
int gbp_zdev_read(gpubp_file *f, const uint8_t *z, size_t zlen, size_t raw, uint8_t *dst);

/* gbp_zdev_read of a block whose operator buffer (zlen bytes at off of the local file fd) is
 * not in host memory yet: the I/O threads read it into the pinned slots, from which it goes up
 * to the device and into z (zlen bytes, host: the parse, and the CPU decoder) at once. Returns
 * as gbp_zdev_read; on 0, z holds the operator buffer. */
int gbp_zdev_read_file(gpubp_file *f, int fd, uint64_t off, size_t zlen, size_t raw, uint8_t *dst,
                       uint8_t *z);

/* Reads n bytes of fd at off into z (host memory: gbp_zdev_inbuf's buffer, or anywhere) by the
 * I/O threads in parallel pieces, and waits for them. */
int gbp_zdev_fetch(gpubp_file *f, int fd, uint64_t off, size_t n, uint8_t *z);

#endif /* GBP_ENGINE_ZDEV_READ_H */
