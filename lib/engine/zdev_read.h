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

/* The next block of a get to read whole into device memory, whose operator buffer (len bytes
 * at off of the data file fd) gbp_zdev_read_file may read ahead while this block decodes; len 0:
 * none. */
typedef struct gbp_zahead {
    int fd;
    uint64_t off;
    size_t len;
} gbp_zahead;

/* gbp_zdev_read of a block whose operator buffer (zlen bytes at off of the local file fd) is
 * not in host memory yet: the I/O threads read it into the pinned slots, from which it goes up
 * to the device and into the file's host buffer (the parse, and the CPU decoder) at once —
 * unless the previous call read it ahead. Before decoding, it queues the read of next's buffer
 * (NULL or len 0: none) on the I/O threads, which the next call takes; that read stays pending
 * when this returns, and the caller waits for it with gbp_zdev_read_ahead_wait before the get
 * ends (also when it fails part way). Returns as gbp_zdev_read; *zp receives the host buffer
 * (valid until the next call), which on 0 holds the operator buffer. */
int gbp_zdev_read_file(gpubp_file *f, int fd, uint64_t off, size_t zlen, size_t raw, uint8_t *dst,
                       uint8_t **zp, const gbp_zahead *next);

/* Waits for the read ahead that gbp_zdev_read_file left pending (none: returns at once) and
 * forgets it; returns the wait's status (gbp_mem_sync's: any failed transfer of the file's I/O
 * threads). */
int gbp_zdev_read_ahead_wait(gpubp_file *f);

/* The blocks read ahead and then used by their own read, since the process started (tests). */
size_t gbp_zdev_read_ahead_count(void);

/* Reads n bytes of fd at off into z (host memory: gbp_zdev_inbuf's buffer, or anywhere) by the
 * I/O threads in parallel pieces, and waits for them. */
int gbp_zdev_fetch(gpubp_file *f, int fd, uint64_t off, size_t n, uint8_t *z);

#endif /* GBP_ENGINE_ZDEV_READ_H */
