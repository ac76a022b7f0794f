/* lib/compress, internal to the module: BloscLZ, Blosc2's own LZ77 codec (codec format 0), written
 * from the stream format that c-blosc2 2.19 defines (blosc/blosclz.c; docs/compression.md
 * "BloscLZ streams").
 *
 * A stream is a sequence of instructions, each starting with a control byte c:
 *   c < 32   literal run: the next c + 1 bytes are copied to the output;
 *   c >= 32  match: L = c >> 5 (1..7); for L = 7 extension bytes follow, each added to L, the
 *            last one below 255; then a byte d; the match copies L + 2 bytes from `dist` bytes
 *            back in the output, dist = (c & 31) * 256 + d + 1; when c & 31 = 31 and d = 255 two
 *            more bytes, big endian, give dist = 8192 + their value ("far" match).
 * The first byte of a stream is always a literal control byte, with bit 5 set as a marker (a
 * reader masks it with 31). Blosc2's reader stops when the input ends after a literal run, or
 * right after a match's control bytes, without copying that match: a writer ends every stream
 * with a literal run. */
#ifndef GBP_BLOSCLZ_H
#define GBP_BLOSCLZ_H

#include <stddef.h>
#include <stdint.h>

/* Decodes the n-byte stream at in into out (cap bytes of room). Returns the number of bytes
 * produced, or -1 for a damaged stream: a control byte whose operands run past the end of the
 * input, a match reaching before the start of the output, or output past cap. Blosc2 accepts a
 * stream only when it produces exactly the block's size; the caller checks that. */
long gbp_blosclz_decompress(const uint8_t *in, size_t n, uint8_t *out, size_t cap);

/* Compresses n bytes at in (level 1..9, as Blosc2's clevel) into out, at most maxout bytes.
 * Returns the stream's length, or 0 when the stream would not fit in maxout or when a sample of
 * the input predicts too small a ratio for the level (Blosc2 then stores the block raw; the
 * thresholds are Blosc2's: ratio 2 at level 1, 1.5 at 2, 1.2 at 3-6, 1.15 at 7, 1.1 at 8, none at
 * 9). n under 16 bytes or maxout under 66 bytes: 0. Reentrant: the hash table is on the stack. */
size_t gbp_blosclz_compress(int level, const uint8_t *in, size_t n, uint8_t *out, size_t maxout);

#endif /* GBP_BLOSCLZ_H */
