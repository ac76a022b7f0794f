/* Blosc's byte shuffle and bit shuffle of one block (docs/format/blosc-zlib.md section 4).
 *
 * Byte shuffle: with n = bytes / ts whole elements, byte j of element i goes to j*n + i; the
 * bytes / ts remainder is copied unchanged. Bit shuffle: only m = whole elements rounded down to
 * a multiple of 8 are transposed, into 8*ts bit-planes of m/8 bytes (plane 8j+k holds bit k of
 * byte j of every element, element i at bit i%8 of byte i/8); the rest is copied unchanged. It is
 * done per (byte j, group of 8 elements): gather the 8 bytes into a 64-bit word, transpose the
 * 8x8 bit matrix, scatter its 8 bytes to the 8 planes of byte j. */
#include "blosczlib.h"

/* ---- byte shuffle ------------------------------------------------------------------------- */

#define GBP_SHUF_LOOP(TS)                                                    \
    for (size_t i = 0; i < n; i++)                                           \
        for (size_t j = 0; j < (TS); j++) dst[j * n + i] = src[i * (TS) + j]
#define GBP_UNSHUF_LOOP(TS)                                                  \
    for (size_t i = 0; i < n; i++)                                           \
        for (size_t j = 0; j < (TS); j++) dst[i * (TS) + j] = src[j * n + i]

void gbp_byte_shuffle(const uint8_t *src, uint8_t *dst, size_t bytes, size_t ts)
{
    size_t n = ts ? bytes / ts : 0;
    if (ts <= 1 || n == 0) {
        memcpy(dst, src, bytes);
        return;
    }
    switch (ts) { /* constant strides let the compiler unroll and vectorise */
    case 2: GBP_SHUF_LOOP(2); break;
    case 4: GBP_SHUF_LOOP(4); break;
    case 8: GBP_SHUF_LOOP(8); break;
    case 16: GBP_SHUF_LOOP(16); break;
    default: GBP_SHUF_LOOP(ts); break;
    }
    memcpy(dst + n * ts, src + n * ts, bytes - n * ts);
}

void gbp_byte_unshuffle(const uint8_t *src, uint8_t *dst, size_t bytes, size_t ts)
{
    size_t n = ts ? bytes / ts : 0;
    if (ts <= 1 || n == 0) {
        memcpy(dst, src, bytes);
        return;
    }
    switch (ts) {
    case 2: GBP_UNSHUF_LOOP(2); break;
    case 4: GBP_UNSHUF_LOOP(4); break;
    case 8: GBP_UNSHUF_LOOP(8); break;
    case 16: GBP_UNSHUF_LOOP(16); break;
    default: GBP_UNSHUF_LOOP(ts); break;
    }
    memcpy(dst + n * ts, src + n * ts, bytes - n * ts);
}

/* ---- bit shuffle --------------------------------------------------------------------------- */

/* Transposes the 8x8 bit matrix in x (bit b of byte m <-> bit m of byte b); its own inverse. */
static inline uint64_t transpose8(uint64_t x)
{
    uint64_t t;
    t = (x ^ (x >> 7)) & 0x00AA00AA00AA00AAull;
    x = x ^ t ^ (t << 7);
    t = (x ^ (x >> 14)) & 0x0000CCCC0000CCCCull;
    x = x ^ t ^ (t << 14);
    t = (x ^ (x >> 28)) & 0x00000000F0F0F0F0ull;
    x = x ^ t ^ (t << 28);
    return x;
}

void gbp_bit_shuffle(const uint8_t *src, uint8_t *dst, size_t bytes, size_t ts)
{
    size_t nelem = ts ? bytes / ts : 0;
    size_t m = nelem - nelem % 8, row = m / 8;
    if (ts == 0 || m == 0) {
        memcpy(dst, src, bytes);
        return;
    }
    for (size_t j = 0; j < ts; j++) {
        uint8_t *plane = dst + 8 * j * row;
        for (size_t g = 0; g < row; g++) {
            const uint8_t *e = src + 8 * g * ts + j;
            uint64_t x = 0;
            for (unsigned r = 0; r < 8; r++) x |= (uint64_t)e[r * ts] << (8 * r);
            x = transpose8(x);
            for (unsigned k = 0; k < 8; k++) plane[k * row + g] = (uint8_t)(x >> (8 * k));
        }
    }
    memcpy(dst + m * ts, src + m * ts, bytes - m * ts);
}

void gbp_bit_unshuffle(const uint8_t *src, uint8_t *dst, size_t bytes, size_t ts, int blosc1)
{
    size_t nelem = ts ? bytes / ts : 0;
    size_t m = nelem - nelem % 8, row = m / 8;
    if (ts == 0 || m == 0 || (blosc1 && nelem % 8 != 0)) {
        memcpy(dst, src, bytes);
        return;
    }
    for (size_t j = 0; j < ts; j++) {
        const uint8_t *plane = src + 8 * j * row;
        for (size_t g = 0; g < row; g++) {
            uint64_t x = 0;
            for (unsigned k = 0; k < 8; k++) x |= (uint64_t)plane[k * row + g] << (8 * k);
            x = transpose8(x);
            uint8_t *e = dst + 8 * g * ts + j;
            for (unsigned r = 0; r < 8; r++) e[r * ts] = (uint8_t)(x >> (8 * r));
        }
    }
    memcpy(dst + m * ts, src + m * ts, bytes - m * ts);
}
