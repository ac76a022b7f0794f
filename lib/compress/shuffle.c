/* Blosc's byte shuffle and bit shuffle of one block (docs/format/blosc-zlib.md section 4).
 *
 * Byte shuffle: with n = bytes / ts whole elements, byte j of element i goes to j*n + i; the
 * bytes / ts remainder is copied unchanged. Bit shuffle: only m = whole elements rounded down to
 * a multiple of 8 are transposed, into 8*ts bit-planes of m/8 bytes (plane 8j+k holds bit k of
 * byte j of every element, element i at bit i%8 of byte i/8); the rest is copied unchanged. It is
 * done per (byte j, group of 8 elements): gather the 8 bytes into a 64-bit word, transpose the
 * 8x8 bit matrix, scatter its 8 bytes to the 8 planes of byte j.
 *
 * Those loops define the bytes; the faster paths give the same ones (test_compress_shuffle): SSE2
 * tiles on every x86-64, AVX2 tiles and, for the bit shuffle, AVX-512 with GFNI (a bit transpose
 * of 8 groups in one instruction), each chosen at run time when the CPU has it
 * (gbp_shuffle_isa: level 1, 2, 3). */
#include "compress/shuffle.h"

#include "common/params.h"

#include <stdatomic.h>
#include <string.h>

#if defined(__SSE2__)
#include <emmintrin.h>
#define GBP_SHUF_SSE2 1
#else
#define GBP_SHUF_SSE2 0
#endif
#if defined(__GNUC__) || defined(__clang__)
#define GBP_INLINE static inline __attribute__((always_inline)) /* constants fold per size */
/* the tile loops unrolled at any optimisation level (-O2, the default RelWithDebInfo build,
 * would keep them as loops with the registers on the stack) */
#define GBP_UNROLL _Pragma("GCC unroll 8")
#else
#define GBP_INLINE static inline
#define GBP_UNROLL
#endif
/* AVX2 versions of the same tiles, compiled for AVX2 alone (GCC and clang's target attribute)
 * and chosen at run time when the CPU has it; likewise the AVX-512 bit tiles (level 3), which
 * need F (512-bit registers, 64-bit lane shuffles), BW and VBMI (vpermb, byte elements) and GFNI
 * (the bit transposes). */
#if GBP_SHUF_SSE2 && defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#include <immintrin.h>
#define GBP_SHUF_AVX2 1
#define GBP_SHUF_AVX512 GBP_SHUFFLE_LEVEL3 /* shuffle.h: the compilers that can */
#define GBP_AVX2 __attribute__((target("avx2")))
#define GBP_AVX512 __attribute__((target("avx512f,avx512bw,avx512vbmi,gfni")))
static int have_avx2(void) { return __builtin_cpu_supports("avx2"); }
#if GBP_SHUF_AVX512
static int have_avx512(void)
{
    return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
           __builtin_cpu_supports("avx512vbmi") && __builtin_cpu_supports("gfni");
}
#endif
#else
#define GBP_SHUF_AVX2 0
#define GBP_SHUF_AVX512 0
#endif

/* The widest tiles used: 0 scalar loops, 1 SSE2, 2 AVX2, 3 AVX-512 with GFNI for the bit
 * shuffle (the byte tiles stay AVX2's) when the CPU has them; the tests lower the cap
 * (gbp_shuffle_set_isa) to check each path against the loops. */
static int isa_cap = 3;

/* GPUBP_SHUFFLE_ISA=N (0-3): a cap on the level for the whole process, read once, so that one
 * run can time a level against the one below it (a tuning knob, docs/parameters.md). */
static int env_cap(void)
{
    static atomic_int cap = -1; /* -1: not read yet (every thread that reads it finds the same) */
    int c = atomic_load(&cap);
    if (c < 0) {
        c = (int)gbp_env_long("GPUBP_SHUFFLE_ISA", 0, 3, 3);
        atomic_store(&cap, c);
    }
    return c;
}

void gbp_shuffle_set_isa(int level) { isa_cap = level < 0 || level > 3 ? 3 : level; }

int gbp_shuffle_isa(void)
{
    int l = GBP_SHUF_SSE2;
#if GBP_SHUF_AVX2
    if (have_avx2()) l = 2;
#endif
#if GBP_SHUF_AVX512
    if (l == 2 && have_avx512()) l = 3;
#endif
    if (l > env_cap()) l = env_cap();
    return l < isa_cap ? l : isa_cap;
}

/* ---- SSE2 (every x86-64): 128-byte tiles ----------------------------------------------------
 * A tile is 8 registers of 16 bytes: E = 128 / ts elements of ts in {2, 4, 8, 16}. Byte p of the
 * tile (7 bits: register, byte) is byte p % ts of element p / ts; in the shuffled layout byte
 * q = j * E + e is byte j of element e. The second index is the first rotated left by log2(E)
 * bits, and one round of unpacks (register r with register r + 4, low halves to 2r, high halves
 * to 2r + 1) rotates the index left by one bit: log2(E) rounds shuffle a tile, 7 - log2(E)
 * unshuffle it. The streams are then written (read) 16 or 8 bytes at a time. */
#if GBP_SHUF_SSE2
GBP_INLINE void sse_round(__m128i x[8])
{
    __m128i y0 = _mm_unpacklo_epi8(x[0], x[4]), y1 = _mm_unpackhi_epi8(x[0], x[4]);
    __m128i y2 = _mm_unpacklo_epi8(x[1], x[5]), y3 = _mm_unpackhi_epi8(x[1], x[5]);
    __m128i y4 = _mm_unpacklo_epi8(x[2], x[6]), y5 = _mm_unpackhi_epi8(x[2], x[6]);
    __m128i y6 = _mm_unpacklo_epi8(x[3], x[7]), y7 = _mm_unpackhi_epi8(x[3], x[7]);
    x[0] = y0, x[1] = y1, x[2] = y2, x[3] = y3, x[4] = y4, x[5] = y5, x[6] = y6, x[7] = y7;
}

/* `rounds` rounds (a constant once inlined: the tests fold, x stays in registers) */
GBP_INLINE void sse_rounds(__m128i x[8], unsigned rounds)
{
    GBP_UNROLL
    for (unsigned k = 0; k < 7; k++)
        if (k < rounds) sse_round(x);
}

/* Byte shuffle of the tiles of elements [0, ne) (ne a multiple of E) of n; lg = log2(E). Inlined
 * per element size (sse_shuffle), so that the rounds unroll into registers. */
GBP_INLINE void sse_shuffle_lg(const uint8_t *src, uint8_t *dst, size_t n, size_t ne,
                                  size_t ts, unsigned lg)
{
    size_t e = (size_t)1 << lg;
    for (size_t i = 0; i < ne; i += e) {
        __m128i x[8];
        GBP_UNROLL
        for (unsigned r = 0; r < 8; r++)
            x[r] = _mm_loadu_si128((const __m128i *)(const void *)(src + i * ts + 16 * r));
        sse_rounds(x, lg);
        GBP_UNROLL
        for (unsigned r = 0; r < 8; r++) {
            size_t q = 16 * r;
            uint8_t *o = dst + q / e * n + i + q % e;
            if (e >= 16) {
                _mm_storeu_si128((__m128i *)(void *)o, x[r]);
            } else { /* ts 16: two streams per register */
                _mm_storel_epi64((__m128i *)(void *)o, x[r]);
                _mm_storel_epi64((__m128i *)(void *)(o + n), _mm_unpackhi_epi64(x[r], x[r]));
            }
        }
    }
}

/* The inverse, from the streams st[0 .. ts) (each n bytes, anywhere), elements [i0, ne). */
GBP_INLINE void sse_unshuffle_lg(const uint8_t *const *st, uint8_t *dst, size_t i0, size_t ne,
                                 size_t ts, unsigned lg)
{
    size_t e = (size_t)1 << lg;
    const uint8_t *sp[16]; /* read once (the stores into dst may alias st[]) */
    for (size_t k = 0; k < ts; k++) sp[k] = st[k];
    for (size_t i = i0; i < ne; i += e) {
        __m128i x[8];
        GBP_UNROLL
        for (unsigned r = 0; r < 8; r++) {
            size_t q = 16 * r;
            const uint8_t *p = sp[q / e] + i + q % e;
            if (e >= 16)
                x[r] = _mm_loadu_si128((const __m128i *)(const void *)p);
            else /* ts 16: two streams per register */
                x[r] = _mm_unpacklo_epi64(
                    _mm_loadl_epi64((const __m128i *)(const void *)p),
                    _mm_loadl_epi64((const __m128i *)(const void *)(sp[q / e + 1] + i)));
        }
        sse_rounds(x, 7 - lg);
        GBP_UNROLL
        for (unsigned r = 0; r < 8; r++)
            _mm_storeu_si128((__m128i *)(void *)(dst + i * ts + 16 * r), x[r]);
    }
}

#if GBP_SHUF_AVX2
/* Two tiles at once: lane 0 of each 256-bit register holds a tile, lane 1 the next one (the
 * unpacks work lane by lane, so the rounds are those of one tile). ne: a multiple of 2E. */
GBP_AVX2 GBP_INLINE void avx_round(__m256i x[8])
{
    __m256i y0 = _mm256_unpacklo_epi8(x[0], x[4]), y1 = _mm256_unpackhi_epi8(x[0], x[4]);
    __m256i y2 = _mm256_unpacklo_epi8(x[1], x[5]), y3 = _mm256_unpackhi_epi8(x[1], x[5]);
    __m256i y4 = _mm256_unpacklo_epi8(x[2], x[6]), y5 = _mm256_unpackhi_epi8(x[2], x[6]);
    __m256i y6 = _mm256_unpacklo_epi8(x[3], x[7]), y7 = _mm256_unpackhi_epi8(x[3], x[7]);
    x[0] = y0, x[1] = y1, x[2] = y2, x[3] = y3, x[4] = y4, x[5] = y5, x[6] = y6, x[7] = y7;
}

GBP_AVX2 GBP_INLINE void avx_rounds(__m256i x[8], unsigned rounds)
{
    GBP_UNROLL
    for (unsigned k = 0; k < 7; k++)
        if (k < rounds) avx_round(x);
}

GBP_AVX2 GBP_INLINE __m256i avx_load2(const uint8_t *a, const uint8_t *b)
{
    return _mm256_inserti128_si256(
        _mm256_castsi128_si256(_mm_loadu_si128((const __m128i *)(const void *)a)),
        _mm_loadu_si128((const __m128i *)(const void *)b), 1);
}

GBP_AVX2 GBP_INLINE void avx_store2(uint8_t *a, uint8_t *b, __m256i x)
{
    _mm_storeu_si128((__m128i *)(void *)a, _mm256_castsi256_si128(x));
    _mm_storeu_si128((__m128i *)(void *)b, _mm256_extracti128_si256(x, 1));
}

/* The two tiles at p (256 bytes) into x, tile A in lane 0, tile B in lane 1: 32-byte loads
 * [A_2q A_2q+1] and [B_2q B_2q+1] recombined lane by lane; avx_store_tiles is the inverse, with
 * 32-byte stores of lane-permuted pairs. (It stored 16-byte halves from fa95132 to the eleventh
 * session: with the stream pointers reloaded in every iteration, halves measured faster; with
 * them read once, permutes are: byte unshuffle in cache, typesizes 2 / 4 / 8 / 16, 21.7 / 22.7 /
 * 22.6 / 20.0 GB/s with halves, 29.1 / 26.4 / 29.5 / 23.1 with permutes, on the development
 * machine's AVX-512 Xeon.) */
GBP_AVX2 GBP_INLINE void avx_load_tiles(const uint8_t *p, __m256i x[8])
{
    GBP_UNROLL
    for (unsigned q = 0; q < 4; q++) {
        __m256i a = _mm256_loadu_si256((const __m256i *)(const void *)(p + 32 * q));
        __m256i b = _mm256_loadu_si256((const __m256i *)(const void *)(p + 128 + 32 * q));
        x[2 * q] = _mm256_permute2x128_si256(a, b, 0x20);
        x[2 * q + 1] = _mm256_permute2x128_si256(a, b, 0x31);
    }
}

GBP_AVX2 GBP_INLINE void avx_store_tiles(uint8_t *p, const __m256i x[8])
{
    GBP_UNROLL
    for (unsigned q = 0; q < 4; q++) {
        _mm256_storeu_si256((__m256i *)(void *)(p + 32 * q),
                            _mm256_permute2x128_si256(x[2 * q], x[2 * q + 1], 0x20));
        _mm256_storeu_si256((__m256i *)(void *)(p + 128 + 32 * q),
                            _mm256_permute2x128_si256(x[2 * q], x[2 * q + 1], 0x31));
    }
}

/* Typesizes 4 and 8, and 16 where avx_shuffle16 does not gather (2 has a kernel of its own). */
GBP_AVX2 GBP_INLINE void avx_shuffle_lg(const uint8_t *src, uint8_t *dst, size_t n,
                                           size_t ne, size_t ts, unsigned lg)
{
    size_t e = (size_t)1 << lg;
    for (size_t i = 0; i < ne; i += 2 * e) {
        __m256i x[8];
        avx_load_tiles(src + i * ts, x);
        avx_rounds(x, lg);
        GBP_UNROLL
        for (unsigned r = 0; r < 8; r++) {
            size_t q = 16 * r;
            uint8_t *o = dst + q / e * n + i + q % e;
            if (e == 16) { /* the two tiles' pieces of a stream are adjacent */
                _mm256_storeu_si256((__m256i *)(void *)o, x[r]);
            } else if (e > 16) {
                avx_store2(o, o + e, x[r]);
            } else { /* ts 16: [A.lo B.lo] to stream 2r, [A.hi B.hi] to stream 2r + 1 */
                avx_store2(o, o + n, _mm256_permute4x64_epi64(x[r], 0xD8));
            }
        }
    }
}

/* Typesizes 8 and 16 (2 and 4 have kernels of their own below). */
GBP_AVX2 GBP_INLINE void avx_unshuffle_lg(const uint8_t *const *st, uint8_t *dst, size_t ne,
                                          size_t ts, unsigned lg)
{
    size_t e = (size_t)1 << lg;
    const uint8_t *sp[16]; /* read once: the stores into dst may alias st[], which the compiler
                            * then reloads in every iteration (byte unshuffle of doubles in
                            * cache 22.6 -> 29.5 GB/s with the stores below) */
    for (size_t k = 0; k < ts; k++) sp[k] = st[k];
    for (size_t i = 0; i < ne; i += 2 * e) {
        __m256i x[8];
        GBP_UNROLL
        for (unsigned r = 0; r < 8; r++) {
            size_t q = 16 * r;
            const uint8_t *p = sp[q / e] + i + q % e;
            if (e == 16)
                x[r] = _mm256_loadu_si256((const __m256i *)(const void *)p);
            else /* ts 16: two streams per register */
                x[r] = _mm256_permute4x64_epi64(avx_load2(p, sp[q / e + 1] + i), 0xD8);
        }
        avx_rounds(x, 7 - lg);
        avx_store_tiles(dst + i * ts, x);
    }
}

/* Typesize 16 with streams n bytes long, n a multiple of 4 KiB (blocks of 64 KiB, 128, 256 ...),
 * 64 elements at a time: the tiles' 16-byte pieces gathered in a 1 KiB buffer on the stack, then
 * each stream's 64 bytes stored as one cache line. Stored straight into the 16 streams, the
 * pieces' 16 write fronts n bytes apart all fall into one set of the L1 cache, more than its
 * ways, and each line was fetched again for each of its four pieces: 3.8 GB/s in cache (Blosc2,
 * 32 bytes a store, 8.5), 16.4-16.7 now. Other n keep the direct stores, faster there (a 257 KiB
 * block 25.0 against 22.1 through the buffer, 32 KiB 20.1 against 17.0). ne: a multiple of 16;
 * the last ne % 64 go as before. */
GBP_AVX2 static void avx_shuffle16(const uint8_t *src, uint8_t *dst, size_t n, size_t ne)
{
    _Alignas(64) uint8_t tmp[16 * 64];
    size_t whole = n % 4096 ? 0 : ne - ne % 64;
    for (size_t i = 0; i < whole; i += 64) {
        for (size_t k = 0; k < 4; k++) {
            __m256i x[8];
            avx_load_tiles(src + (i + 16 * k) * 16, x);
            avx_rounds(x, 3);
            GBP_UNROLL
            for (unsigned r = 0; r < 8; r++) /* streams 2r and 2r + 1 */
                avx_store2(tmp + 2 * r * 64 + 16 * k, tmp + (2 * r + 1) * 64 + 16 * k,
                           _mm256_permute4x64_epi64(x[r], 0xD8));
        }
        GBP_UNROLL
        for (unsigned j = 0; j < 16; j++) {
            uint8_t *o = dst + j * n + i;
            const __m256i *t = (const __m256i *)(const void *)(tmp + 64 * j);
            _mm256_storeu_si256((__m256i *)(void *)o, _mm256_load_si256(t));
            _mm256_storeu_si256((__m256i *)(void *)(o + 32), _mm256_load_si256(t + 1));
        }
    }
    if (whole < ne) avx_shuffle_lg(src + whole * 16, dst + whole, n, ne - whole, 16, 3);
}

/* Typesize 2, 32 elements at a time: a byte shuffle within each lane puts its even bytes before
 * its odd ones, a 64-bit permute joins each register's halves, and a lane permute pairs two
 * registers into each stream's 32 bytes (6 rounds of unpacks a tile before: 18.2 -> 21.3 GB/s in
 * cache on the development machine, Blosc2 22.0; its bit shuffle 9.0 -> 13.1). ne: a multiple
 * of 32. */
GBP_AVX2 static void avx_shuffle2(const uint8_t *src, uint8_t *dst, size_t n, size_t ne)
{
    const __m256i even_odd = _mm256_setr_epi8(0, 2, 4, 6, 8, 10, 12, 14, 1, 3, 5, 7, 9, 11, 13, 15,
                                              0, 2, 4, 6, 8, 10, 12, 14, 1, 3, 5, 7, 9, 11, 13, 15);
    for (size_t i = 0; i < ne; i += 32) {
        __m256i u = _mm256_loadu_si256((const __m256i *)(const void *)(src + 2 * i));
        __m256i v = _mm256_loadu_si256((const __m256i *)(const void *)(src + 2 * i + 32));
        /* [bytes 0 of elements 0-15 | bytes 1 of them], the same for elements 16-31 */
        u = _mm256_permute4x64_epi64(_mm256_shuffle_epi8(u, even_odd), 0xD8);
        v = _mm256_permute4x64_epi64(_mm256_shuffle_epi8(v, even_odd), 0xD8);
        _mm256_storeu_si256((__m256i *)(void *)(dst + i), _mm256_permute2x128_si256(u, v, 0x20));
        _mm256_storeu_si256((__m256i *)(void *)(dst + n + i),
                            _mm256_permute2x128_si256(u, v, 0x31));
    }
}

GBP_AVX2 static void avx_bytes(const uint8_t *src, uint8_t *dst, size_t n, size_t ne, size_t ts)
{
    switch (ts) {
    case 2: avx_shuffle2(src, dst, n, ne); break;
    case 4: avx_shuffle_lg(src, dst, n, ne, 4, 5); break;
    case 8: avx_shuffle_lg(src, dst, n, ne, 8, 4); break;
    default: avx_shuffle16(src, dst, n, ne); break;
    }
}

/* Typesizes 2 and 4: 32 elements at a time from one 32-byte load per stream, byte (and 16-bit)
 * unpacks within lanes, then lane-permuted 32-byte stores: half the loads of the tiles above,
 * which gather each register from two 16-byte pieces (in cache 28.8 -> 37 and 26.0 -> 35 GB/s
 * on the development machine). ne: a multiple of 32. */
GBP_AVX2 static void avx_unshuffle2(const uint8_t *const *st, uint8_t *dst, size_t ne)
{
    const uint8_t *s0 = st[0], *s1 = st[1];
    for (size_t i = 0; i < ne; i += 32) {
        __m256i a = _mm256_loadu_si256((const __m256i *)(const void *)(s0 + i));
        __m256i b = _mm256_loadu_si256((const __m256i *)(const void *)(s1 + i));
        __m256i lo = _mm256_unpacklo_epi8(a, b), hi = _mm256_unpackhi_epi8(a, b);
        uint8_t *o = dst + 2 * i; /* lo: elements 0-7 | 16-23, hi: 8-15 | 24-31 */
        _mm256_storeu_si256((__m256i *)(void *)o, _mm256_permute2x128_si256(lo, hi, 0x20));
        _mm256_storeu_si256((__m256i *)(void *)(o + 32), _mm256_permute2x128_si256(lo, hi, 0x31));
    }
}

GBP_AVX2 static void avx_unshuffle4(const uint8_t *const *st, uint8_t *dst, size_t ne)
{
    const uint8_t *s0 = st[0], *s1 = st[1], *s2 = st[2], *s3 = st[3];
    for (size_t i = 0; i < ne; i += 32) {
        __m256i a = _mm256_loadu_si256((const __m256i *)(const void *)(s0 + i));
        __m256i b = _mm256_loadu_si256((const __m256i *)(const void *)(s1 + i));
        __m256i c = _mm256_loadu_si256((const __m256i *)(const void *)(s2 + i));
        __m256i d = _mm256_loadu_si256((const __m256i *)(const void *)(s3 + i));
        __m256i ablo = _mm256_unpacklo_epi8(a, b), abhi = _mm256_unpackhi_epi8(a, b);
        __m256i cdlo = _mm256_unpacklo_epi8(c, d), cdhi = _mm256_unpackhi_epi8(c, d);
        /* elements 0-3 | 16-19, 4-7 | 20-23, 8-11 | 24-27, 12-15 | 28-31 */
        __m256i r0 = _mm256_unpacklo_epi16(ablo, cdlo), r1 = _mm256_unpackhi_epi16(ablo, cdlo);
        __m256i r2 = _mm256_unpacklo_epi16(abhi, cdhi), r3 = _mm256_unpackhi_epi16(abhi, cdhi);
        uint8_t *o = dst + 4 * i;
        _mm256_storeu_si256((__m256i *)(void *)o, _mm256_permute2x128_si256(r0, r1, 0x20));
        _mm256_storeu_si256((__m256i *)(void *)(o + 32), _mm256_permute2x128_si256(r2, r3, 0x20));
        _mm256_storeu_si256((__m256i *)(void *)(o + 64), _mm256_permute2x128_si256(r0, r1, 0x31));
        _mm256_storeu_si256((__m256i *)(void *)(o + 96), _mm256_permute2x128_si256(r2, r3, 0x31));
    }
}

GBP_AVX2 static void avx_unbytes(const uint8_t *const *st, uint8_t *dst, size_t ne, size_t ts)
{
    switch (ts) {
    case 2: avx_unshuffle2(st, dst, ne); break;
    case 4: avx_unshuffle4(st, dst, ne); break;
    case 8: avx_unshuffle_lg(st, dst, ne, 8, 4); break;
    default: avx_unshuffle_lg(st, dst, ne, 16, 3); break;
    }
}

/* transpose8 (below) on the four 64-bit lanes of x */
GBP_AVX2 GBP_INLINE __m256i avx_transpose8(__m256i x)
{
    __m256i t;
    t = _mm256_and_si256(_mm256_xor_si256(x, _mm256_srli_epi64(x, 7)), _mm256_set1_epi64x(0x00AA00AA00AA00AAll));
    x = _mm256_xor_si256(_mm256_xor_si256(x, t), _mm256_slli_epi64(t, 7));
    t = _mm256_and_si256(_mm256_xor_si256(x, _mm256_srli_epi64(x, 14)), _mm256_set1_epi64x(0x0000CCCC0000CCCCll));
    x = _mm256_xor_si256(_mm256_xor_si256(x, t), _mm256_slli_epi64(t, 14));
    t = _mm256_and_si256(_mm256_xor_si256(x, _mm256_srli_epi64(x, 28)), _mm256_set1_epi64x(0x00000000F0F0F0F0ll));
    x = _mm256_xor_si256(_mm256_xor_si256(x, t), _mm256_slli_epi64(t, 28));
    return x;
}

/* The bit planes of one slab (sse_bit_shuffle below) 32 groups of 8 elements at a time: lane 0
 * of each register does groups g..g+15 as the SSE2 tile does, lane 1 groups g+16..g+31, so that
 * plane k's 32 bytes end up contiguous in register k. */
GBP_AVX2 static void avx_bit_planes(const uint8_t *tmp, uint8_t *dst, size_t row, size_t ts,
                                    size_t slab)
{
    for (size_t j = 0; j < ts; j++)
        for (size_t g = 0; g < slab / 8; g += 32) {
            __m256i x[8];
            const uint8_t *p = tmp + j * slab + g * 8;
            avx_load_tiles(p, x);
            GBP_UNROLL
            for (unsigned t = 0; t < 8; t++) x[t] = avx_transpose8(x[t]);
            avx_rounds(x, 4);
            GBP_UNROLL
            for (unsigned k = 0; k < 8; k++)
                _mm256_storeu_si256((__m256i *)(void *)(dst + (8 * j + k) * row + g), x[k]);
        }
}

/* The inverse: 32 groups of each plane at a time, two 16-group tiles, one per lane. */
GBP_AVX2 static void avx_bit_rows(const uint8_t *src, uint8_t *tmp, size_t row, size_t ts,
                                  size_t slab)
{
    for (size_t j = 0; j < ts; j++)
        for (size_t g = 0; g < slab / 8; g += 32) {
            __m256i x[8];
            GBP_UNROLL
            for (unsigned k = 0; k < 8; k++)
                x[k] = _mm256_loadu_si256(
                    (const __m256i *)(const void *)(src + (8 * j + k) * row + g));
            avx_rounds(x, 3);
            uint8_t *o = tmp + j * slab + g * 8;
            GBP_UNROLL
            for (unsigned t = 0; t < 8; t++) x[t] = avx_transpose8(x[t]);
            avx_store_tiles(o, x);
        }
}

#if GBP_SHUF_AVX512
/* ---- AVX-512 with GFNI (level 3): the bit tiles of 64 groups --------------------------------
 * The 64 groups of 8 elements of a slab's stream (512 bytes) lie in 8 registers, group 8t + q
 * in 64-bit lane q of register t. GF2P8AFFINEQB(x, A, 0) gives in each lane byte b, bit i =
 * parity(A.byte[7 - i] AND x.byte[b]) (Intel's definition); with x.byte[b] = 1 << b (GBP_DIAG)
 * that is A.byte[7 - i].bit[b]: transpose8 of the lane read with its bytes in reverse order, 8
 * groups in one instruction. The other way round (A = GBP_DIAG) it reverses the bits of each byte
 * of x, which puts the order right: two affines instead of a byte reversal before the first, as
 * on Intel cores the byte permutes and the lane shuffles below all run on port 5, the affine on
 * port 0. Byte k of each lane is then the group's byte of plane k; a vpermb gathers the 8 lanes'
 * bytes k into lane k, and the 8 x 8 transpose of lanes across registers (avx512_lanes_t) brings
 * lane k of every register into register k: plane k's 64 bytes, in group order. The inverse reads
 * 8 planes, transposes the lanes, gathers each group's 8 plane bytes into its lane in reverse
 * order with one vpermb, and transposes the bits with one affine. */
#define GBP_DIAG 0x8040201008040201ll /* byte b: 1 << b */
#define GBP_BYTE1 0x0101010101010101ll

/* the vpermb index whose lane q holds base + q in every byte */
GBP_AVX512 GBP_INLINE __m512i avx512_index(long long base)
{
    return _mm512_set_epi64(base + 7 * GBP_BYTE1, base + 6 * GBP_BYTE1, base + 5 * GBP_BYTE1,
                            base + 4 * GBP_BYTE1, base + 3 * GBP_BYTE1, base + 2 * GBP_BYTE1,
                            base + GBP_BYTE1, base);
}

/* Lane q of register r <-> lane r of register q (its own inverse), in three rounds of 8: 64-bit
 * unpacks of registers r and r + 1, then 128-bit block shuffles of r and r + 2, then of r and
 * r + 4 (0x88: blocks 0 and 2 of both, 0xDD: blocks 1 and 3). */
GBP_AVX512 GBP_INLINE void avx512_lanes_t(__m512i x[8])
{
    __m512i y[8];
    GBP_UNROLL
    for (unsigned r = 0; r < 8; r += 2) {
        y[r] = _mm512_unpacklo_epi64(x[r], x[r + 1]);
        y[r + 1] = _mm512_unpackhi_epi64(x[r], x[r + 1]);
    }
    GBP_UNROLL
    for (unsigned r = 0; r < 8; r += 4) {
        x[r] = _mm512_shuffle_i64x2(y[r], y[r + 2], 0x88);
        x[r + 1] = _mm512_shuffle_i64x2(y[r + 1], y[r + 3], 0x88);
        x[r + 2] = _mm512_shuffle_i64x2(y[r], y[r + 2], 0xDD);
        x[r + 3] = _mm512_shuffle_i64x2(y[r + 1], y[r + 3], 0xDD);
    }
    GBP_UNROLL
    for (unsigned r = 0; r < 4; r++) {
        y[r] = _mm512_shuffle_i64x2(x[r], x[r + 4], 0x88);
        y[r + 4] = _mm512_shuffle_i64x2(x[r], x[r + 4], 0xDD);
    }
    GBP_UNROLL
    for (unsigned r = 0; r < 8; r++) x[r] = y[r];
}

/* avx_bit_planes with AVX-512 and GFNI: 64 groups at a time. */
GBP_AVX512 static void avx512_bit_planes(const uint8_t *tmp, uint8_t *dst, size_t row, size_t ts,
                                         size_t slab)
{
    const __m512i diag = _mm512_set1_epi64(GBP_DIAG);
    const __m512i gather = avx512_index(0x3830282018100800ll); /* lane k: byte k of each lane */
    for (size_t j = 0; j < ts; j++)
        for (size_t g = 0; g < slab / 8; g += 64) {
            __m512i x[8];
            const uint8_t *p = tmp + j * slab + g * 8;
            GBP_UNROLL
            for (unsigned t = 0; t < 8; t++) {
                __m512i v = _mm512_loadu_si512(p + 64 * t);
                v = _mm512_gf2p8affine_epi64_epi8(diag, v, 0); /* b, i: bit b of byte 7 - i */
                v = _mm512_gf2p8affine_epi64_epi8(v, diag, 0); /* b, i: bit b of byte i */
                x[t] = _mm512_permutexvar_epi8(gather, v);
            }
            avx512_lanes_t(x);
            GBP_UNROLL
            for (unsigned k = 0; k < 8; k++)
                _mm512_storeu_si512(dst + (8 * j + k) * row + g, x[k]);
        }
}

/* The inverse (avx_bit_rows), 64 groups of each plane at a time. */
GBP_AVX512 static void avx512_bit_rows(const uint8_t *src, uint8_t *tmp, size_t row, size_t ts,
                                       size_t slab)
{
    const __m512i diag = _mm512_set1_epi64(GBP_DIAG);
    /* lane q, byte r: byte q of lane 7 - r (after avx512_lanes_t: that group's plane 7 - r) */
    const __m512i scatter = avx512_index(0x0008101820283038ll);
    for (size_t j = 0; j < ts; j++)
        for (size_t g = 0; g < slab / 8; g += 64) {
            __m512i x[8];
            GBP_UNROLL
            for (unsigned k = 0; k < 8; k++)
                x[k] = _mm512_loadu_si512(src + (8 * j + k) * row + g);
            avx512_lanes_t(x);
            uint8_t *o = tmp + j * slab + g * 8;
            GBP_UNROLL
            for (unsigned t = 0; t < 8; t++) {
                __m512i v = _mm512_permutexvar_epi8(scatter, x[t]);
                _mm512_storeu_si512(o + 64 * t, _mm512_gf2p8affine_epi64_epi8(diag, v, 0));
            }
        }
}
#endif
#endif

/* The tiles of [0, ne): pairs with AVX2 when the CPU has it, the rest with SSE2. Returns the
 * elements the AVX2 pairs did. */
static size_t avx_pairs(size_t ne, size_t ts)
{
#if GBP_SHUF_AVX2
    size_t pair = 2 * (128 / ts), m = ne - ne % pair;
    if (m && gbp_shuffle_isa() >= 2) return m;
#endif
    (void)ne, (void)ts;
    return 0;
}

static void sse_shuffle(const uint8_t *src, uint8_t *dst, size_t n, size_t ne, size_t ts)
{
    size_t done = avx_pairs(ne, ts);
#if GBP_SHUF_AVX2
    if (done) avx_bytes(src, dst, n, done, ts);
#endif
    src += done * ts;
    dst += done;
    ne -= done;
    switch (ts) {
    case 2: sse_shuffle_lg(src, dst, n, ne, 2, 6); break;
    case 4: sse_shuffle_lg(src, dst, n, ne, 4, 5); break;
    case 8: sse_shuffle_lg(src, dst, n, ne, 8, 4); break;
    default: sse_shuffle_lg(src, dst, n, ne, 16, 3); break;
    }
}

static void sse_unshuffle(const uint8_t *const *st, uint8_t *dst, size_t ne, size_t ts)
{
    size_t done = avx_pairs(ne, ts);
#if GBP_SHUF_AVX2
    if (done) avx_unbytes(st, dst, done, ts);
#endif
    switch (ts) {
    case 2: sse_unshuffle_lg(st, dst, done, ne, 2, 6); break;
    case 4: sse_unshuffle_lg(st, dst, done, ne, 4, 5); break;
    case 8: sse_unshuffle_lg(st, dst, done, ne, 8, 4); break;
    default: sse_unshuffle_lg(st, dst, done, ne, 16, 3); break;
    }
}

/* transpose8 (below) on both 64-bit lanes of x */
GBP_INLINE __m128i sse_transpose8(__m128i x)
{
    __m128i t;
    t = _mm_and_si128(_mm_xor_si128(x, _mm_srli_epi64(x, 7)), _mm_set1_epi64x(0x00AA00AA00AA00AAll));
    x = _mm_xor_si128(_mm_xor_si128(x, t), _mm_slli_epi64(t, 7));
    t = _mm_and_si128(_mm_xor_si128(x, _mm_srli_epi64(x, 14)), _mm_set1_epi64x(0x0000CCCC0000CCCCll));
    x = _mm_xor_si128(_mm_xor_si128(x, t), _mm_slli_epi64(t, 14));
    t = _mm_and_si128(_mm_xor_si128(x, _mm_srli_epi64(x, 28)), _mm_set1_epi64x(0x00000000F0F0F0F0ll));
    x = _mm_xor_si128(_mm_xor_si128(x, t), _mm_slli_epi64(t, 28));
    return x;
}

/* Bit shuffle of elements [0, m) (m a multiple of 512) of a block whose planes are row bytes
 * long, typesize 1..16, 512 elements at a time: the slab is byte-shuffled into streams of 512
 * bytes (typesize 1: the input is the stream); for each stream and 16 groups of 8 elements, the
 * 8 x 8 bit matrix of each group is transposed (two groups per register: byte k of a lane is
 * then plane k's byte of that group), and 4 unpack rounds gather each plane's 16 bytes into one
 * register (with AVX2: 32 groups, avx_bit_planes; with AVX-512 and GFNI: 64, avx512_bit_planes). */
#define GBP_BIT_SLAB 512
static void sse_bit_shuffle(const uint8_t *src, uint8_t *dst, size_t m, size_t row, size_t ts)
{
    uint8_t tmp[16 * GBP_BIT_SLAB];
    int isa = gbp_shuffle_isa();
    for (size_t i = 0; i < m; i += GBP_BIT_SLAB) {
        const uint8_t *st = src + i;
        if (ts > 1) {
            gbp_byte_shuffle(src + i * ts, tmp, GBP_BIT_SLAB * ts, ts);
            st = tmp;
        }
#if GBP_SHUF_AVX512
        if (isa >= 3) {
            avx512_bit_planes(st, dst + i / 8, row, ts, GBP_BIT_SLAB);
            continue;
        }
#endif
#if GBP_SHUF_AVX2
        if (isa >= 2) {
            avx_bit_planes(st, dst + i / 8, row, ts, GBP_BIT_SLAB);
            continue;
        }
#endif
        for (size_t j = 0; j < ts; j++)
            for (size_t g = 0; g < GBP_BIT_SLAB / 8; g += 16) {
                __m128i x[8];
                const uint8_t *p = st + j * GBP_BIT_SLAB + g * 8;
                GBP_UNROLL
                for (unsigned t = 0; t < 8; t++)
                    x[t] = sse_transpose8(_mm_loadu_si128((const __m128i *)(const void *)(p + 16 * t)));
                sse_rounds(x, 4);
                GBP_UNROLL
                for (unsigned k = 0; k < 8; k++)
                    _mm_storeu_si128((__m128i *)(void *)(dst + (8 * j + k) * row + i / 8 + g), x[k]);
            }
    }
}

/* The inverse, 512 elements at a time: for each stream and 16 groups of 8 elements, 16 bytes of
 * each of its 8 planes (register k, byte g) are rearranged by 3 unpack rounds into 8 registers
 * of 2 groups each (byte 8 * (g % 2) + k), whose 8 x 8 bit matrices are transposed in both
 * lanes: the stream's bytes of those 16 groups (with AVX2: 32 groups, avx_bit_rows; with AVX-512
 * and GFNI: 64, avx512_bit_rows); the streams are then byte-unshuffled (typesize 1: written in
 * place). */
static void sse_bit_unshuffle(const uint8_t *src, uint8_t *dst, size_t m, size_t row, size_t ts)
{
    uint8_t tmp[16 * GBP_BIT_SLAB];
    int isa = gbp_shuffle_isa();
    for (size_t i = 0; i < m; i += GBP_BIT_SLAB) {
        uint8_t *st = ts > 1 ? tmp : dst + i;
#if GBP_SHUF_AVX512
        if (isa >= 3) avx512_bit_rows(src + i / 8, st, row, ts, GBP_BIT_SLAB);
#endif
#if GBP_SHUF_AVX2
        if (isa == 2) avx_bit_rows(src + i / 8, st, row, ts, GBP_BIT_SLAB);
#endif
        for (size_t j = 0; j < ts && isa < 2; j++)
            for (size_t g = 0; g < GBP_BIT_SLAB / 8; g += 16) {
                __m128i x[8];
                GBP_UNROLL
                for (unsigned k = 0; k < 8; k++)
                    x[k] = _mm_loadu_si128(
                        (const __m128i *)(const void *)(src + (8 * j + k) * row + i / 8 + g));
                sse_rounds(x, 3);
                uint8_t *o = st + j * GBP_BIT_SLAB + g * 8;
                GBP_UNROLL
                for (unsigned t = 0; t < 8; t++)
                    _mm_storeu_si128((__m128i *)(void *)(o + 16 * t), sse_transpose8(x[t]));
            }
        if (ts > 1) gbp_byte_unshuffle(tmp, dst + i * ts, GBP_BIT_SLAB * ts, ts);
    }
}
#endif

/* Elements [0, k) of n that the SSE2 tiles handle (0: none). */
static size_t sse_elems(size_t n, size_t ts)
{
#if GBP_SHUF_SSE2
    if ((ts == 2 || ts == 4 || ts == 8 || ts == 16) && gbp_shuffle_isa() >= 1) {
        size_t e = 128 / ts;
        return n - n % e;
    }
#endif
    (void)ts;
    (void)n;
    return 0;
}

/* ---- byte shuffle ------------------------------------------------------------------------- */

/* elements [k, n): those the SSE2 tiles left (all of them without SSE2) */
#define GBP_SHUF_LOOP(TS)                                                    \
    for (size_t i = k; i < n; i++)                                           \
        for (size_t j = 0; j < (TS); j++) dst[j * n + i] = src[i * (TS) + j]
#define GBP_UNSHUF_LOOP(TS)                                                  \
    for (size_t i = k; i < n; i++)                                           \
        for (size_t j = 0; j < (TS); j++) dst[i * (TS) + j] = st[j][i]

void gbp_byte_shuffle(const uint8_t *src, uint8_t *dst, size_t bytes, size_t ts)
{
    size_t n = ts ? bytes / ts : 0;
    if (ts <= 1 || n == 0) {
        memcpy(dst, src, bytes);
        return;
    }
    size_t k = sse_elems(n, ts);
#if GBP_SHUF_SSE2
    if (k) sse_shuffle(src, dst, n, k, ts);
#endif
    switch (ts) { /* constant strides let the compiler unroll and vectorise */
    case 2: GBP_SHUF_LOOP(2); break;
    case 4: GBP_SHUF_LOOP(4); break;
    case 8: GBP_SHUF_LOOP(8); break;
    case 16: GBP_SHUF_LOOP(16); break;
    default: GBP_SHUF_LOOP(ts); break;
    }
    memcpy(dst + n * ts, src + n * ts, bytes - n * ts);
}

/* The unshuffle of n whole elements of ts bytes from the streams st[0 .. ts). */
static void unshuffle_streams(const uint8_t *const *st, uint8_t *dst, size_t n, size_t ts)
{
    size_t k = sse_elems(n, ts);
#if GBP_SHUF_SSE2
    if (k) sse_unshuffle(st, dst, k, ts);
#endif
    switch (ts) {
    case 2: GBP_UNSHUF_LOOP(2); break;
    case 4: GBP_UNSHUF_LOOP(4); break;
    case 8: GBP_UNSHUF_LOOP(8); break;
    case 16: GBP_UNSHUF_LOOP(16); break;
    default: GBP_UNSHUF_LOOP(ts); break;
    }
}

void gbp_byte_unshuffle(const uint8_t *src, uint8_t *dst, size_t bytes, size_t ts)
{
    size_t n = ts ? bytes / ts : 0;
    if (ts <= 1 || n == 0 || ts > 255) {
        if (ts > 255 && n) { /* Blosc2 never shuffles such sizes; kept for the definition */
            for (size_t i = 0; i < n; i++)
                for (size_t j = 0; j < ts; j++) dst[i * ts + j] = src[j * n + i];
            memcpy(dst + n * ts, src + n * ts, bytes - n * ts);
            return;
        }
        memcpy(dst, src, bytes);
        return;
    }
    const uint8_t *st[255];
    for (size_t j = 0; j < ts; j++) st[j] = src + j * n;
    unshuffle_streams(st, dst, n, ts);
    memcpy(dst + n * ts, src + n * ts, bytes - n * ts);
}

void gbp_byte_unshuffle_streams(const uint8_t *const *st, uint8_t *dst, size_t bytes, size_t ts)
{
    if (ts <= 1) {
        if (bytes) memcpy(dst, st[0], bytes);
        return;
    }
    unshuffle_streams(st, dst, bytes / ts, ts);
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
    size_t g0 = 0;
#if GBP_SHUF_SSE2
    if (ts <= 16 && gbp_shuffle_isa() >= 1) { /* the tiles of whole 512-element slabs */
        size_t ms = m - m % GBP_BIT_SLAB;
        sse_bit_shuffle(src, dst, ms, row, ts);
        g0 = ms / 8;
    }
#endif
    for (size_t j = 0; j < ts; j++) {
        uint8_t *plane = dst + 8 * j * row;
        for (size_t g = g0; g < row; g++) {
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
    size_t g0 = 0;
#if GBP_SHUF_SSE2
    if (ts <= 16 && gbp_shuffle_isa() >= 1) {
        size_t ms = m - m % GBP_BIT_SLAB;
        sse_bit_unshuffle(src, dst, ms, row, ts);
        g0 = ms / 8;
    }
#endif
    for (size_t j = 0; j < ts; j++) {
        const uint8_t *plane = src + 8 * j * row;
        for (size_t g = g0; g < row; g++) {
            uint64_t x = 0;
            for (unsigned k = 0; k < 8; k++) x |= (uint64_t)plane[k * row + g] << (8 * k);
            x = transpose8(x);
            uint8_t *e = dst + 8 * g * ts + j;
            for (unsigned r = 0; r < 8; r++) e[r * ts] = (uint8_t)(x >> (8 * r));
        }
    }
    memcpy(dst + m * ts, src + m * ts, bytes - m * ts);
}
