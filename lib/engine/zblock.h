/* lib/engine/zblock.h: see zblock.c. */
#ifndef GBP_ENGINE_ZBLOCK_H
#define GBP_ENGINE_ZBLOCK_H

#include "compress/blosczlib.h"
#include "engine/engine_internal.h"

/* writes the compressed payload of block wb (a blosc-framed zlib operator buffer
 * of its values, which may be in device memory or strided) to fd at wb->meta.payload_offset; sets
 * wb->payload_len to the bytes written, wb->meta.op and the min/max of the uncompressed values.
 * fname names fd in errors. */
int gbp_write_compressed(gpubp_file *f, gbp_wblock *wb, int fd, const char *fname);
/* The uncompressed bytes [off, off + len) of a blosc operator buffer, decoded into `to` (a
 * gbp_fill_fn whose ctx is a gbp_zspan): only the Blosc2 blocks that hold them are decoded.
 * Reentrant (device reads call it from several I/O threads at once). */
typedef struct gbp_zspan {
    const uint8_t *z; /* the operator buffer, zlen bytes, raw bytes uncompressed */
    size_t zlen, raw;
    int threads;
} gbp_zspan;
int gbp_zspan_fill(void *ctx, uint8_t *to, size_t off, size_t len);

/* decodes the compressed block z (zlen bytes; raw bytes uncompressed, elements of
 * es bytes) into the box dbox of the device array dst (the box fbox of the block) span by span
 * through the pinned pool, the host-to-device copies overlapped with the decoding. Synchronous:
 * z may be freed when it returns. */
int gbp_read_compressed_device(gpubp_file *f, const uint8_t *z, size_t zlen, size_t raw,
                               size_t es, const gbp_box *fbox, void *dst, const gbp_box *dbox);

/* The operator a variable takes (gpubp_variable_add_operation): the codec of operator name `op`
 * (GPUBP_ERR_CODEC naming it for an unknown name, then gbp_blosc_check_codec's status for a codec
 * this build lacks), and the operator's parameters (gbp_blosc_parse_params: level, shuffle,
 * threads; absent keys leave their out-value unchanged). */
int gbp_zblock_codec(const char *op, int *codec);
int gbp_zblock_params(const char *params, int *level, int *shuffle, int *threads);

/* What the GPU path (zdev.c) shares: queues the encoder extents x[0..nx) (host bytes; p NULL:
 * zeros) for writing at base + their offsets, as the library's own bytes when `owned`
 * (gbp_mem_write_owned); writes a redo range raw from the block's source. */
int gbp_zblock_write_extents(gbp_mem *mem, int fd, uint64_t base, const gbp_blosc_extent *x,
                             size_t nx, int owned);
int gbp_zblock_write_redo(gpubp_file *f, const gbp_wblock *wb, int fd, const gbp_blosc_redo *r);

#endif /* GBP_ENGINE_ZBLOCK_H */
