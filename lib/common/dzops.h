/* The batched device codec interface: what the GPU compression path (lib/engine/zdev.c) asks of
 * a device to compress or decompress the Blosc2 blocks of a block in device memory. Two
 * implementations: nvCOMP on CUDA (cuda/cuda_dz.cu, libnvcomp.so.6 loaded at run time) and the
 * CPU stand-in (lib/compress/blosc_dzcpu.c: liblz4 / libzstd / zlib on host memory), which serves
 * the simulated device, so that CI runs the same chunking and framing code. Types only (no
 * dependency): cuda/ and lib/compress both implement it; the engine picks one per file.
 *
 * Pointers named "dev" are device memory of the file's backend (host memory for the simulated
 * device); arrays named "host" live in host memory. Work is queued on the device context's stream
 * in order; decode waits for its result, encode_wait for encode_launch's. Errors are a
 * gpubp status with the message recorded (gbp_error). */
#ifndef GBP_DZOPS_H
#define GBP_DZOPS_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* One piece of an output buffer assembled on the device: len bytes at dst (offset in the
 * output) come from `inl` (GBP_SEG_INLINE: len <= 8), from the device address src (GBP_SEG_DEV),
 * from the coded stream number src of the last waited encode (GBP_SEG_CODED: len is the stream's
 * coded length, which encode reported), or are zeros (GBP_SEG_ZERO). */
enum { GBP_SEG_INLINE = 0, GBP_SEG_DEV = 1, GBP_SEG_CODED = 2, GBP_SEG_ZERO = 3 };
typedef struct gbp_dz_seg {
    uint64_t dst;
    uint64_t src;
    uint32_t len;
    uint8_t kind;
    uint8_t inl[8];
    uint8_t pad[3];
} gbp_dz_seg;

/* One stream to decode: the coded bytes [src, src + clen) of the input buffer become
 * [dst, dst + len) of the output; kind GBP_DSTREAM_CODEC decodes with the codec, _COPY copies
 * (clen == len), _RUN fills len bytes of value `run`. */
enum { GBP_DSTREAM_CODEC = 0, GBP_DSTREAM_COPY = 1, GBP_DSTREAM_RUN = 2 };
typedef struct gbp_dz_dstream {
    uint64_t src, dst;
    uint32_t clen, len;
    uint8_t kind, run;
    uint8_t pad[6];
} gbp_dz_dstream;

typedef struct gbp_dzops {
    const char *name; /* "nvcomp", "cpu stand-in" */
    /* NULL when this implementation compresses and decompresses Blosc2 codec `codec` (a
     * GBP_BLOSC_* code) now (nvCOMP: loaded); else why not, for a message. Thread-safe. */
    const char *(*unavailable)(int codec);
    /* Per-file state on the device context dctx (the backend's, gbp_mem_dev_ctx); scratch grows
     * on demand and is kept until close. */
    int (*open)(void *dctx, void **z);
    void (*close)(void *z);
    /* Orders the work that follows after the work queued so far on dctx's stream (the user's
     * data is ready there: gbp_mem_dev_ctx fenced the user's stream). Called before each block. */
    int (*begin)(void *z);
    /* Blosc2 filter of the blocks of `len` bytes at in into out (no overlap): blocks of bsz
     * bytes (the last one may be shorter), elements of ts bytes; filter 1 byte shuffle, 2 bit
     * shuffle (docs/format/blosc-zlib.md 4); inverse: the unshuffle (bit: Blosc2 rule, not
     * Blosc1). */
    int (*filter)(void *z, int filter, int inverse, const void *in, void *out, size_t len,
                  size_t bsz, size_t ts);
    /* Queues the compression of the n streams [in + off[i], + len[i]) (off: read during the call) with codec at Blosc2 `level` into coded set `set` (0 or 1: two batches may be in
     * flight, so that the next one is coded while the host frames the current one). For each,
     * once encode_wait(set) returned: run[i] = the byte value when every byte of the stream is
     * that value (the stream is then not coded), else -1 and clen[i] = the coded length (a
     * complete stream of the codec, as a Blosc2 block stream holds it: zlib with its header and
     * Adler-32), 0 when it is not shorter than len[i] (the caller stores it raw). run and clen
     * (host arrays) must stay valid until then; `in` until the assembly that reads the set. An
     * implementation may do the work here (the CPU stand-in). */
    int (*encode_launch)(void *z, int set, int codec, int level, const uint8_t *in, size_t n,
                         const size_t *off, const size_t *len, int16_t *run, size_t *clen);
    /* Waits for the results of the last encode_launch into set; the coded bytes stay in z, for
     * the assemblies that follow, until the next encode_launch into that set. */
    int (*encode_wait)(void *z, int set);
    /* Writes the nseg segments (host array) into the device buffer out; GBP_SEG_CODED: the coded
     * streams of the set of the last encode_wait. */
    int (*assemble)(void *z, uint8_t *out, const gbp_dz_seg *seg, size_t nseg);
    /* Decodes the n streams (host array) of the device buffer in into out (codec streams with
     * `codec`); GPUBP_ERR_FORMAT naming the stream when one does not decode to exactly its len
     * bytes. Waits for the result. */
    int (*decode)(void *z, int codec, const uint8_t *in, uint8_t *out, const gbp_dz_dstream *s,
                  size_t n);
    /* A state parked at a file's close (memspace/dz_cache.c) taken by another file: re-bound to
     * its device context dctx once its own work is done; an error (no message needed) when it
     * cannot serve dctx (another device). */
    int (*adopt)(void *z, void *dctx);
} gbp_dzops;

#ifdef __cplusplus
}
#endif

#endif /* GBP_DZOPS_H */
