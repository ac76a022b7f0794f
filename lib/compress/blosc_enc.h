/* lib/compress/blosc_enc.h: see blosc_enc.c: the encoder, whole and staged (sizes: blosc_size.h). */
#ifndef GBP_COMPRESS_BLOSC_ENC_H
#define GBP_COMPRESS_BLOSC_ENC_H

#include <stddef.h>
#include <stdint.h>

#include "common/dzops.h"
#include "compress/blosc_params.h"
#include "compress/blosc_size.h" /* gbp_blosc_bound, _blocksize, _split */

/* Compresses n bytes at src (n may be 0; src may then be NULL) into an ADIOS2 blosc operator
 * buffer at dst, whose length goes to *outlen (the characteristic-11 "output size"; n is the
 * "input size").
 *   typesize: element size in bytes (1 .. any; above 255 Blosc2 uses 1), the shuffle unit.
 *   codec:    GBP_BLOSC_BLOSCLZ, _LZ4, _LZ4HC, _ZLIB or _ZSTD (gbp_blosc_check_codec).
 *   level:    0 .. 9 (Blosc2's clevel; 0 stores memcpyed chunks).
 *   shuffle:  GBP_BLOSC_NOSHUFFLE, GBP_BLOSC_SHUFFLE or GBP_BLOSC_BITSHUFFLE.
 *   threads:  worker threads, 0 = all online cores.
 * Layouts written (as ADIOS2): n < 128 -> DataHeader count 0 and the raw bytes (23 + n); else one
 * Blosc2 chunk per 2 147 483 615 bytes: normal zlib chunks, special-zero chunks for all-zero data,
 * memcpyed chunks for level 0, pieces under 32 bytes and data that does not shrink.
 * cap must be at least gbp_blosc_bound(n). Returns GPUBP_OK, GPUBP_ERR_INVALID_ARG (NULL pointer,
 * typesize 0, level or shuffle out of range, negative threads, cap too small) or GPUBP_ERR_NOMEM. */
int gbp_blosc_compress(const void *src, size_t n, size_t typesize, int codec, int level,
                       int shuffle, int threads, void *dst, size_t cap, size_t *outlen);

/* ---- staged compression ------------------------------------------------------------------------
 * The same operator buffer, byte for byte, from input that arrives in pieces (for example device
 * memory landing chunk by chunk in a pinned staging pool), with bounded memory and the output
 * written as it is produced:
 *
 *   gbp_blosc_enc_open(&e, n, ...);
 *   for each piece, in input order:  gbp_blosc_enc_put(e, piece, len);      compresses, in parallel
 *                                    gbp_blosc_enc_emit(e, out, cap, &x, &nx);  places, in order
 *                                    write x[0..nx) (x[i].p NULL: x[i].len zero bytes)
 *   gbp_blosc_enc_finish(e, &x, &nx, &redo, &nredo, &total);
 *   write x[0..nx) (the 23-byte prefix, the chunk headers and block starts), then for each redo
 *   range the input bytes [in_off, in_off + len) at out_off; the buffer is `total` bytes.
 *   gbp_blosc_enc_close(e);
 *
 * Extents are byte ranges of the operator buffer (off) with their bytes (p). Between put and emit
 * the piece must stay valid and unchanged; after emit it may be reused. The bytes of emit's
 * extents live in `out` (or are zeros) until `out` is reused; finish's extents and redo list live
 * in the encoder until close. Extents never overlap within one call; a later call may overwrite
 * bytes an earlier call placed (a chunk that turns out not to shrink is rewritten raw), so the
 * caller applies calls in order, redo ranges last. Any cut of the input into pieces and any
 * thread count give the same buffer as gbp_blosc_compress. Errors: GPUBP_ERR_INVALID_ARG (misuse,
 * more input than announced, out smaller than gbp_blosc_enc_out_bound), GPUBP_ERR_NOMEM; after
 * an error the encoder can only be closed. */
typedef struct gbp_blosc_enc gbp_blosc_enc;
typedef struct gbp_blosc_extent {
    uint64_t off;     /* where in the operator buffer */
    size_t len;
    const uint8_t *p; /* the bytes; NULL: zeros */
} gbp_blosc_extent;
typedef struct gbp_blosc_redo {
    size_t in_off, len; /* input bytes ... */
    uint64_t out_off;   /* ... to be written raw here */
} gbp_blosc_redo;

int gbp_blosc_enc_open(gbp_blosc_enc **e, size_t n, size_t typesize, int codec, int level,
                       int shuffle, int threads);
/* The GPU path's own blocks (compress_device_block_kib): blocks of bsz bytes
 * (gbp_blosc_dev_blocksize), streams unsplit; 0: Blosc2's choice (the default). Before the
 * first put. gbp_blosc_enc_blocksize: the encoder's block size for a chunk of cn bytes. */
int gbp_blosc_enc_set_blocks(gbp_blosc_enc *e, size_t bsz);
size_t gbp_blosc_enc_blocksize(const gbp_blosc_enc *e, size_t cn);
/* Room `out` needs for the emit that follows a put of len bytes. */
size_t gbp_blosc_enc_out_bound(const gbp_blosc_enc *e, size_t len);
int gbp_blosc_enc_put(gbp_blosc_enc *e, const void *in, size_t len);
int gbp_blosc_enc_emit(gbp_blosc_enc *e, uint8_t *out, size_t cap, const gbp_blosc_extent **ext,
                       size_t *next);
int gbp_blosc_enc_finish(gbp_blosc_enc *e, const gbp_blosc_extent **ext, size_t *next,
                         const gbp_blosc_redo **redo, size_t *nredo, size_t *total);
void gbp_blosc_enc_close(gbp_blosc_enc *e); /* NULL is fine */

/* ---- the staged encoder with an outside codec (compression on a device) -----------------------
 * The same buffer as gbp_blosc_enc_put / emit give, but the filter and the codec run elsewhere
 * (lib/engine/zdev.c: CUDA kernels and nvCOMP, or the CPU stand-in on the simulated device):
 *
 *   gbp_blosc_enc_put_ext(e, len, &xs, &nxs);   the next len input bytes, which end on a Blosc2
 *                                               block boundary (gbp_blosc_blocksize) or the input;
 *                                               xs[i]: the filtered bytes [in_off, + len) of
 *                                               stream i (offsets in the whole input)
 *   the caller filters the blocks and codes each stream: run[i] (every byte that value, else -1)
 *   and clen[i] (its coded length; kept only when shorter than the stream)
 *   gbp_blosc_enc_emit_ext(e, run, clen, out, cap, &x, &nx, &seg, &nseg);
 *
 * emit_ext places as emit does; the bytes of extent x[i] with p set are out[p - out, + len)
 * once the segments seg[0..nseg) are applied to out (seg[j].dst: offsets in out): small fields
 * inline, GBP_SEG_CODED the coded stream number src of this put, GBP_XSEG_FILTERED the filtered
 * input bytes at offset src of the whole input, GBP_XSEG_INPUT the unfiltered input bytes there.
 * Only the fields are written into out on the host, so out may be the host image of a device
 * buffer the caller assembles. Extents with p NULL are zeros. The lists live until the next
 * call; finish and the redo ranges as above. An encoder takes put or put_ext, not both. */
#define GBP_XSEG_FILTERED 8
#define GBP_XSEG_INPUT 9
typedef struct gbp_blosc_xstream {
    size_t in_off, len;
} gbp_blosc_xstream;
int gbp_blosc_enc_put_ext(gbp_blosc_enc *e, size_t len, const gbp_blosc_xstream **xs,
                          size_t *nxs);
int gbp_blosc_enc_emit_ext(gbp_blosc_enc *e, const int16_t *run, const size_t *clen, uint8_t *out,
                           size_t cap, const gbp_blosc_extent **ext, size_t *next,
                           const gbp_dz_seg **seg, size_t *nseg);

#endif /* GBP_COMPRESS_BLOSC_ENC_H */
