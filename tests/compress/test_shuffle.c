/* lib/compress/shuffle.c: every path (the loops, the SSE2 tiles, the AVX2 tiles and the AVX-512
 * + GFNI bit tiles when the CPU has them; gbp_shuffle_set_isa) gives the bytes of the loops, for
 * byte and bit shuffle and their inverses (the byte one also from scattered streams), typesize
 * 1 .. 17, lengths around the tile and slab sizes with odd leftovers, buffers at odd addresses;
 * the loops' bit shuffle equals its bit-by-bit definition and each shuffle inverts. The top level
 * is the one the CPU has (asked here independently), so that a CPU with AVX-512 and GFNI cannot
 * pass without running level 3, nor one without it run level 3. */
#include "support/test_support.h"
#include "support/values.h"
#include "compress/shuffle.h"
#include "common/params.h"

#define MAXN (17 * 4100 + 64)
#define SKEW 4 /* the buffers start 0 .. SKEW - 1 bytes past malloc's alignment */

/* elements: around the 128-byte tiles, pairs of tiles, the 512-element bit slabs */
static const size_t elems[] = {0, 1, 7, 8, 9, 15, 33, 63, 64, 65, 127, 128, 129, 255, 256, 257,
                               511, 512, 513, 519, 1023, 1024, 1031, 1536, 2055, 4096, 4099};

/* Bit shuffle by its definition: plane 8j + k holds bit k of byte j of element i at bit i % 8 of
 * byte i / 8, for the m = whole elements rounded down to 8; the rest copied. */
static void bit_reference(const uint8_t *in, uint8_t *ref, size_t n, size_t ts)
{
    size_t ne = n / ts, m = ne - ne % 8;
    memset(ref, 0, n);
    for (size_t j = 0; j < ts; j++)
        for (size_t bit = 0; bit < 8; bit++)
            for (size_t i = 0; i < m; i++)
                if ((in[i * ts + j] >> bit) & 1)
                    ref[(8 * j + bit) * (m / 8) + i / 8] |= (uint8_t)(1u << (i % 8));
    memcpy(ref + m * ts, in + m * ts, n - m * ts);
}

/* The level the CPU has: 1 SSE2 (every x86-64), 2 AVX2, 3 AVX-512 F, BW, VBMI and GFNI; at most
 * the cap GPUBP_SHUFFLE_ISA puts on the whole process (one digit 0-3). */
static int cpu_level(void)
{
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
    int l = 2;
    if (!__builtin_cpu_supports("avx2")) l = 1;
#if GBP_SHUFFLE_LEVEL3
    else if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
             __builtin_cpu_supports("avx512vbmi") && __builtin_cpu_supports("gfni"))
        l = 3; /* built only by the compilers shuffle.h names */
#endif
    long cap = gbp_env_long("GPUBP_SHUFFLE_ISA", 0, 3, 3);
    return l < cap ? l : (int)cap;
#else
    return -1; /* not known here */
#endif
}

static void every_path(void **state)
{
    (void)state;
    uint8_t *inb = malloc(MAXN + SKEW), *ref[4], *gotb = malloc(MAXN + SKEW);
    uint8_t *backb = malloc(MAXN + SKEW), *scat = malloc(MAXN + 17 * 8);
    for (int k = 0; k < 4; k++) ref[k] = malloc(MAXN);
    gbp_shuffle_set_isa(-1);
    int top = gbp_shuffle_isa();
    if (cpu_level() >= 0) assert_int_equal(top, cpu_level());
    assert_true(top <= 3);
    /* a cap above the top, or out of range, leaves the top */
    for (int cap = top; cap <= 4; cap++) {
        gbp_shuffle_set_isa(cap);
        assert_int_equal(gbp_shuffle_isa(), top);
    }
    size_t checked[4] = {0, 0, 0, 0};
    for (size_t ts = 1; ts <= 17; ts++)
        for (size_t e = 0; e < sizeof elems / sizeof *elems; e++)
            for (size_t extra = 0; extra < 2; extra++) {
                size_t n = elems[e] * ts + (extra ? (ts > 1 ? ts - 1 : 0) + (e % 3) : 0);
                assert_true(n <= MAXN);
                /* odd addresses, not the same skew for input and output */
                uint8_t *in = inb + (e + extra) % SKEW, *got = gotb + (ts + e) % SKEW;
                uint8_t *back = backb + (ts + extra) % SKEW;
                ts_fill_bytes(in, n, ts, (e + ts) % 2 ? PAT_RANDOM : PAT_SMOOTH);
                /* the loops: the reference */
                gbp_shuffle_set_isa(0);
                assert_int_equal(gbp_shuffle_isa(), 0);
                gbp_byte_shuffle(in, ref[0], n, ts);
                for (size_t i = 0; i < n / ts; i++)
                    for (size_t j = 0; j < ts && ts > 1; j++)
                        assert_int_equal(ref[0][j * (n / ts) + i], in[i * ts + j]);
                gbp_byte_unshuffle(ref[0], ref[1], n, ts);
                assert_memory_equal(ref[1], in, n);
                gbp_bit_shuffle(in, ref[2], n, ts);
                bit_reference(in, ref[3], n, ts);
                assert_memory_equal(ref[2], ref[3], n);
                gbp_bit_unshuffle(ref[2], ref[3], n, ts, 0);
                assert_memory_equal(ref[3], in, n);
                for (int isa = 1; isa <= top; isa++) {
                    gbp_shuffle_set_isa(isa);
                    assert_int_equal(gbp_shuffle_isa(), isa);
                    memset(got, 0xA5, MAXN);
                    gbp_byte_shuffle(in, got, n, ts);
                    assert_memory_equal(got, ref[0], n);
                    assert_int_equal(got[n], 0xA5);
                    gbp_byte_unshuffle(ref[0], back, n, ts);
                    assert_memory_equal(back, in, n);
                    /* the same from streams scattered in reverse order, whole elements */
                    size_t ne = n / ts, whole = ne * ts;
                    const uint8_t *st[17];
                    for (size_t j = 0; j < ts; j++) {
                        uint8_t *at = scat + (ts - 1 - j) * (ne + 7);
                        memcpy(at, ref[0] + j * ne, ne);
                        st[j] = at;
                    }
                    memset(back, 0x5A, MAXN);
                    gbp_byte_unshuffle_streams(st, back, whole, ts);
                    assert_memory_equal(back, in, whole);
                    assert_int_equal(back[whole], 0x5A);
                    memset(got, 0xA5, MAXN);
                    gbp_bit_shuffle(in, got, n, ts);
                    assert_memory_equal(got, ref[2], n);
                    assert_int_equal(got[n], 0xA5);
                    memset(back, 0x5A, MAXN);
                    gbp_bit_unshuffle(ref[2], back, n, ts, 0);
                    assert_memory_equal(back, in, n);
                    assert_int_equal(back[n], 0x5A);
                    /* Blosc1's rule: a leftover of elements -> the block was copied */
                    gbp_bit_unshuffle(in, back, n, ts, 1);
                    gbp_bit_unshuffle(in, got, n, ts, 0);
                    assert_memory_equal(back, (n / ts) % 8 ? in : got, n);
                    checked[isa]++;
                }
            }
    gbp_shuffle_set_isa(-1);
    print_message("paths: loops + %d SIMD level(s); SSE2 %zu cases, AVX2 %zu cases, "
                  "AVX-512 + GFNI %zu cases%s\n", top, checked[1], checked[2], checked[3],
                  top < 3 ? " (not on this CPU)" : "");
    for (int isa = 1; isa <= 3; isa++) assert_true(isa <= top ? checked[isa] > 0 : !checked[isa]);
    for (int k = 0; k < 4; k++) free(ref[k]);
    free(inb);
    free(gotb);
    free(backb);
    free(scat);
}

int main(void)
{
    const struct CMUnitTest tests[] = {cmocka_unit_test(every_path)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}
