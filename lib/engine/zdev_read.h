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

/* The bytes of input a group of blocks read into device memory holds at most: one batch of the
 * device codec for all their streams (GPUBP_ZDEV_READ_GROUP_MIB MiB); 0, the default until a
 * GPU has run the groups: one block a group. */
size_t gbp_zdev_read_group_bytes(void);

/* gbp_zdev_read of the n blocks g (1 <= n <= GBP_ZGROUP_MAX) of one get, whose destinations
 * follow each other in the device buffer (block k at dst + g[k].doff, dense, g[k].raw bytes, and
 * g[k + 1].doff == g[k].doff + g[k].raw) and whose operator buffers are not in host memory yet
 * (g[k].fd: a local data file): the I/O threads read them into the pinned slots, from which they
 * go up to the device and into the file's host buffer at once — unless the previous call read
 * them ahead —, the device codec decodes the streams of all of them as one batch (its throughput
 * grows with the batch), the unshuffle kernel writes each. Before decoding, it queues the reads
 * of the buffers of next, the get's next group (NULL or n 0: none), on the I/O threads, which the next call takes; those reads
 * stay pending when this returns, and the caller waits for them with gbp_zdev_read_ahead_wait
 * before the get ends (also when it fails part way). Returns 1 when all are done; 0 when the
 * CPU decoder is to do them (as gbp_zdev_read: *zp then holds the n operator buffers back to
 * back, block k's after those of blocks 0 ... k-1; dst unchanged or partly written); < 0 on a
 * failure. *zp is valid until the next call. */
int gbp_zdev_read_group(gpubp_file *f, const gbp_zblk *g, size_t n, uint8_t *dst, uint8_t **zp,
                        const gbp_zahead *next);

/* Groups decoded as one batch of more than one block, since the process started (tests). */
size_t gbp_zdev_read_groups(void);

/* Waits for the read ahead that gbp_zdev_read_group left pending (none: returns at once) and
 * forgets it; returns the wait's status (gbp_mem_sync's: any failed transfer of the file's I/O
 * threads). */
int gbp_zdev_read_ahead_wait(gpubp_file *f);

/* The blocks read ahead and then used by their own group's read, since the process started
 * (tests). */
size_t gbp_zdev_read_ahead_count(void);

/* Reads n bytes of fd at off into z (host memory: gbp_zdev_inbuf's buffer, or anywhere) by the
 * I/O threads in parallel pieces, and waits for them. */
int gbp_zdev_fetch(gpubp_file *f, int fd, uint64_t off, size_t n, uint8_t *z);

#endif /* GBP_ENGINE_ZDEV_READ_H */
