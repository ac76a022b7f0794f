/* lib/compress/shuffle.h: see shuffle.c. */
#ifndef GBP_COMPRESS_SHUFFLE_H
#define GBP_COMPRESS_SHUFFLE_H

#include <stddef.h>
#include <stdint.h>

/* Byte and bit shuffle of one block of n bytes (docs/format/blosc-zlib.md 4.1, 4.2); src and
 * dst must not overlap. bit_unshuffle's `blosc1` selects the Blosc1 (chunk version 2) leftover
 * rule. */
void gbp_byte_shuffle(const uint8_t *src, uint8_t *dst, size_t n, size_t ts);
void gbp_byte_unshuffle(const uint8_t *src, uint8_t *dst, size_t n, size_t ts);
void gbp_bit_shuffle(const uint8_t *src, uint8_t *dst, size_t n, size_t ts);
/* gbp_byte_unshuffle of n bytes (a multiple of ts, ts <= 255) whose ts streams of n / ts bytes
 * lie anywhere: stream j at st[j] (a decoder's streams, raw ones read where they are). */
void gbp_byte_unshuffle_streams(const uint8_t *const *st, uint8_t *dst, size_t n, size_t ts);
void gbp_bit_unshuffle(const uint8_t *src, uint8_t *dst, size_t n, size_t ts, int blosc1);

/* The tiles in use: 0 the loops, 1 SSE2, 2 AVX2, 3 AVX-512 F/BW/VBMI + GFNI for the bit shuffle
 * (the byte shuffle as at 2); 2 and 3 chosen at run time when the CPU has them.
 * gbp_shuffle_set_isa caps it (tests: each path against the loops; -1 or above 3 lifts the cap);
 * call it only while no shuffle runs. */
int gbp_shuffle_isa(void);
/* Whether this build has level 3: x86-64 and a compiler with the GFNI intrinsics and "gfni" in
 * __builtin_cpu_supports (GCC 11, clang 12). */
#if defined(__x86_64__) && ((defined(__clang__) && __clang_major__ >= 12) ||                    \
                            (!defined(__clang__) && defined(__GNUC__) && __GNUC__ >= 11))
#define GBP_SHUFFLE_LEVEL3 1
#else
#define GBP_SHUFFLE_LEVEL3 0
#endif
void gbp_shuffle_set_isa(int level);

#endif /* GBP_COMPRESS_SHUFFLE_H */
