/* lib/compress: the ADIOS2 `blosc` operator buffer with the Blosc2 zlib codec.
 *
 * The payload of a compressed BP4 block (characteristic 11, operator name "blosc") is an ADIOS2
 * blosc operator buffer, buffer version 1: a 4-byte common header, the uncompressed size, the Blosc2
 * version, a DataHeader, then Blosc2 chunks (docs/format/blosc-zlib.md). This layer writes that
 * buffer exactly as ADIOS2 2.12 + Blosc2 2.19.1 lay it out for the zlib codec (same block sizes,
 * same fallbacks; with zlib 1.2.13 the bytes are identical) and reads every layout that document
 * lists for a reader. Pure memory-to-memory: no I/O, no CUDA; depends on lib/common and zlib.
 *
 * Threads: compression and decompression split each chunk's blocks over a pool of `threads` worker
 * threads (0 = all online cores, 1 = the calling thread only). The output does not depend on the
 * thread count. All functions are reentrant; errors are recorded in the calling thread's
 * last-error record (gbp_error). */
#ifndef GBP_BLOSCZLIB_H
#define GBP_BLOSCZLIB_H

#include <stddef.h>

#include "common.h"
#include "dzops.h"

/* Shuffle modes (the values of ADIOS2's `doshuffle`). */
#define GBP_BLOSC_NOSHUFFLE 0
#define GBP_BLOSC_SHUFFLE 1    /* byte shuffle */
#define GBP_BLOSC_BITSHUFFLE 2

/* Codecs (Blosc2 codec codes, chunk header byte 22). */
#define GBP_BLOSC_BLOSCLZ 0
#define GBP_BLOSC_LZ4 1
#define GBP_BLOSC_LZ4HC 2
#define GBP_BLOSC_ZLIB 4
#define GBP_BLOSC_ZSTD 5

#define GBP_BLOSC_DEFAULT_LEVEL 1 /* ADIOS2's default clevel */
#define GBP_BLOSC_DEFAULT_SHUFFLE GBP_BLOSC_SHUFFLE
#define GBP_BLOSC_THRESHOLD 128   /* blocks below this many bytes are stored raw (count 0) */
#define GBP_BLOSC_PREFIX 23       /* common header + size + Blosc2 version + DataHeader */
#define GBP_BLOSC_MAX_CHUNK ((size_t)2147483615) /* BLOSC2_MAX_BUFFERSIZE: bytes per chunk */

/* Worst-case size of the operator buffer for n input bytes: 23 + n, plus 32 per chunk when
 * n >= 128. Every buffer gbp_blosc_compress writes fits. Returns 0 if the value does not fit in a
 * size_t. */
size_t gbp_blosc_bound(size_t n);

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
/* The CPU stand-in of the batched device codec (blosc_dzcpu.c): this layer's filters and codecs
 * on host memory (the simulated device's). blosclz is refused, as on a real device. */
const gbp_dzops *gbp_blosc_cpu_dzops(void);
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

/* Parses "level=1,shuffle=byte,threads=4" (keys level 0..9, shuffle byte|bit|none, threads
 * 0..1024; spaces around keys and values are ignored; NULL or "" is empty). Keys absent from the
 * string leave their out-value unchanged, so the caller presets defaults (GBP_BLOSC_DEFAULT_*,
 * threads 0) or a file-level setting. Any out-pointer may be NULL (its key is then still checked).
 * GPUBP_ERR_PARAM naming the key for an unknown key or a bad value; nothing is changed then. */
int gbp_blosc_parse_params(const char *params, int *level, int *shuffle, int *threads);

/* The codecs this build reads and writes, as GPUBP_FEATURE_* bits: ZLIB and BLOSCLZ always, LZ4
 * (lz4 and lz4hc) and ZSTD when the build found liblz4 / libzstd. */
unsigned gbp_blosc_features(void);

/* The codec named "blosclz", "lz4", "lz4hc", "zlib" or "zstd" -> *codec (GBP_BLOSC_*);
 * GPUBP_ERR_CODEC naming it for any other name. */
int gbp_blosc_codec_from_name(const char *name, int *codec);
/* The name of a codec code ("lz4hc"); "unknown codec" for others. */
const char *gbp_blosc_codec_str(int codec);
/* GPUBP_OK when this build writes codec `codec`; GPUBP_ERR_CODEC naming the codec and the missing
 * library (or GPUBP_ERR_INVALID_ARG for an unknown code) otherwise. */
int gbp_blosc_check_codec(int codec);

/* Name of a Blosc codec format number (chunk flags bits 5-7): "blosclz", "lz4", "zlib", ... */
const char *gbp_blosc_codec_name(int format);

/* Test hook: cut pieces of at most `bytes` instead of 2 147 483 615 (0 restores the default), to
 * exercise the multi-chunk layout with small inputs. Process-wide; not for production use. */
void gbp_blosc_set_max_chunk(size_t bytes);
/* Bytes per Blosc2 chunk: GBP_BLOSC_MAX_CHUNK, or what gbp_blosc_set_max_chunk set. */
size_t gbp_blosc_max_chunk(void);

/* ---- internal pieces, exposed for the tests ---------------------------------------------------- */

/* Blosc2's automatic block size of a chunk of nbytes (docs/format/blosc-zlib.md 3.9, and stune.c for the
 * fast codecs and split chunks), and whether the chunk's blocks are split into typesize streams
 * (Blosc2's default split mode: blosclz, lz4 and zstd up to level 5, with byte shuffle,
 * typesize 2..16, at least 32 elements a block). */
size_t gbp_blosc_blocksize(size_t nbytes, size_t typesize, int codec, int level, int shuffle);
int gbp_blosc_split(size_t nbytes, size_t typesize, int codec, int level, int shuffle);

/* Byte and bit shuffle of one block of n bytes (docs/format/blosc-zlib.md 4.1, 4.2); src and
 * dst must not overlap. bit_unshuffle's `blosc1` selects the Blosc1 (chunk version 2) leftover
 * rule. */
void gbp_byte_shuffle(const uint8_t *src, uint8_t *dst, size_t n, size_t ts);
void gbp_byte_unshuffle(const uint8_t *src, uint8_t *dst, size_t n, size_t ts);
void gbp_bit_shuffle(const uint8_t *src, uint8_t *dst, size_t n, size_t ts);
void gbp_bit_unshuffle(const uint8_t *src, uint8_t *dst, size_t n, size_t ts, int blosc1);

#endif /* GBP_BLOSCZLIB_H */
