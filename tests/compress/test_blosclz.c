/* The BloscLZ decoder (lib/compress/blosclz.c) on hand-made streams: literal runs, near, long
 * (extension bytes) and far matches, overlapping copies of every short period, and every
 * malformed form (operands past the input, a match before the output's start, output past the
 * room, a stream ending on a far match, which Blosc2's reader does not copy). */
#include "support/test_support.h"

#include "compress/blosclz.h"

#include <stdlib.h>
#include <string.h>

/* decodes from an exactly sized heap copy (ASan sees any overread) */
static long dec(const uint8_t *s, size_t n, uint8_t *out, size_t cap)
{
    uint8_t *copy = malloc(n ? n : 1);
    memcpy(copy, s, n);
    long r = gbp_blosclz_decompress(copy, n, out, cap);
    free(copy);
    return r;
}

static void literals_and_near_matches(void **state)
{
    (void)state;
    uint8_t out[64];
    static const uint8_t lit[] = {0x20 | 2, 'a', 'b', 'c'}; /* first byte: marker bit 5 */
    assert_int_equal(dec(lit, sizeof lit, out, sizeof out), 3);
    assert_memory_equal(out, "abc", 3);
    /* 'x', a run of 5 from 1 back (L = 3), then literal 'y' */
    static const uint8_t run[] = {0x20, 'x', 0x60, 0x00, 0x00, 'y'};
    assert_int_equal(dec(run, sizeof run, out, sizeof out), 7);
    assert_memory_equal(out, "xxxxxxy", 7);
    /* "abcdef", copy 4 from 6 back (L = 2, d = 5), literal "!" */
    static const uint8_t near[] = {0x20 | 5, 'a', 'b', 'c', 'd', 'e', 'f', 0x40, 0x05, 0x00, '!'};
    assert_int_equal(dec(near, sizeof near, out, sizeof out), 11);
    assert_memory_equal(out, "abcdefabcd!", 11);
    assert_int_equal(dec(lit, 0, out, sizeof out), 0);
    /* exactly the room, and one byte short of it */
    assert_int_equal(dec(near, sizeof near, out, 11), 11);
    assert_int_equal(dec(near, sizeof near, out, 10), -1);
}

static void long_and_far_matches(void **state)
{
    (void)state;
    /* "abcd", then 300 bytes from 4 back: L = 298 = 7 + 255 + 36, d = 3; then 'z' */
    static const uint8_t lng[] = {0x20 | 3, 'a', 'b', 'c', 'd', 0xE0, 255, 36, 3, 0x00, 'z'};
    uint8_t *out = malloc(20000), *want = malloc(20000);
    assert_int_equal(dec(lng, sizeof lng, out, 20000), 305);
    for (size_t i = 0; i < 304; i++) assert_int_equal(out[i], "abcd"[i % 4]);
    assert_int_equal(out[304], 'z');
    /* 9000 literal bytes (runs of 32), then 3 bytes from 9000 back (far: 8192 + 808), then '!' */
    size_t n = 0, k = 0;
    uint8_t *s = malloc(20000);
    for (size_t i = 0; i < 9000; i++) want[i] = (uint8_t)(i * 131 + (i >> 7));
    while (k < 9000) {
        size_t run = 9000 - k < 32 ? 9000 - k : 32;
        s[n++] = (uint8_t)(run - 1) | (k == 0 ? 0x20 : 0);
        memcpy(s + n, want + k, run);
        n += run;
        k += run;
    }
    size_t far = n;
    s[n++] = (1 << 5) | 31;
    s[n++] = 255;
    s[n++] = 808 >> 8;
    s[n++] = 808 & 255;
    s[n++] = 0x00;
    s[n++] = '!';
    memcpy(want + 9000, want, 3);
    want[9003] = '!';
    assert_int_equal(dec(s, n, out, 20000), 9004);
    assert_memory_equal(out, want, 9004);
    /* a stream ending right after a far match's operands: the match is not copied (as in
     * Blosc2's reader; the caller then finds the block short) */
    assert_int_equal(dec(s, far + 4, out, 20000), 9000);
    /* far distance 8192 + 808 + 1 reaches before the start */
    s[far + 3] = 809 & 255;
    assert_int_equal(dec(s, n, out, 20000), -1);
    /* far operands cut off */
    assert_int_equal(dec(s, far + 3, out, 20000), -1);
    free(s);
    free(out);
    free(want);
}

/* A period of dist bytes (literals), then a match of len from dist back, then '!': every short
 * and long period, lengths around the copy strategies of copy_match, exact and short room. */
static void periods(void **state)
{
    (void)state;
    static const size_t lens[] = {3, 8, 9, 31, 32, 33, 64, 65, 200, 1000, 5003};
    uint8_t s[64], *out = malloc(6000), *want = malloc(6000);
    for (size_t dist = 1; dist <= 20; dist++)
        for (size_t l = 0; l < sizeof lens / sizeof *lens; l++) {
            size_t len = lens[l], n = 0;
            s[n++] = (uint8_t)(0x20 | (dist - 1));
            for (size_t i = 0; i < dist; i++) s[n++] = want[i] = (uint8_t)(0x41 + 7 * i);
            if (len < 9) {
                s[n++] = (uint8_t)((len - 2) << 5);
            } else {
                s[n++] = 0xE0;
                for (size_t x = len - 9; ; x -= 255) {
                    s[n++] = (uint8_t)(x < 255 ? x : 255);
                    if (x < 255) break;
                }
            }
            s[n++] = (uint8_t)(dist - 1);
            s[n++] = 0x00;
            s[n++] = '!';
            assert_true(n <= sizeof s);
            for (size_t i = dist; i < dist + len; i++) want[i] = want[i - dist];
            want[dist + len] = '!';
            size_t total = dist + len + 1;
            memset(out, 0xEE, 6000);
            assert_int_equal(dec(s, n, out, total), (long)total);
            assert_memory_equal(out, want, total);
            assert_int_equal(out[total], 0xEE);
            assert_int_equal(dec(s, n, out, 6000), (long)total);
            assert_memory_equal(out, want, total);
            assert_int_equal(dec(s, n, out, total - 1), -1);
        }
    free(out);
    free(want);
}

static void malformed(void **state)
{
    (void)state;
    uint8_t out[64];
    /* match reaching before the output: 2 bytes from 2 back after 1 literal */
    static const uint8_t before[] = {0x20, 'x', 0x20, 0x01, 0x00, 'y'};
    assert_int_equal(dec(before, sizeof before, out, sizeof out), -1);
    /* literal run longer than the input */
    static const uint8_t shortlit[] = {0x20 | 9, 'a', 'b'};
    assert_int_equal(dec(shortlit, sizeof shortlit, out, sizeof out), -1);
    /* extension bytes running to the end */
    static const uint8_t ext[] = {0x20, 'x', 0xE0, 255, 255};
    assert_int_equal(dec(ext, sizeof ext, out, sizeof out), -1);
    /* a match whose distance byte is the last byte: operands past the input */
    static const uint8_t cut[] = {0x20, 'x', 0x60, 0x00};
    assert_int_equal(dec(cut, sizeof cut, out, sizeof out), -1);
    /* a match longer than the room */
    static const uint8_t big[] = {0x20, 'x', 0xE0, 100, 0x00, 0x00, 'y'};
    assert_int_equal(dec(big, sizeof big, out, sizeof out), -1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(literals_and_near_matches),
        cmocka_unit_test(long_and_far_matches),
        cmocka_unit_test(periods),
        cmocka_unit_test(malformed),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
