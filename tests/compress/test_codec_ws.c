/* The codec states kept between calls (lib/compress/blosc_codec.c gbp_codec_ws_take / _give): a
 * state given back is taken again with its contexts; a kept lz4 state is replaced when lz4hc
 * takes it (their sizes differ: ASan sees an overflow otherwise) and the other way round; a kept
 * deflate stream serves another level and then inflation; the keep limits hold; threads taking
 * and giving at once round-trip every block; the block buffer grows; the chunk decoder's scratch
 * (filtered and partly wanted blocks) lives in the states' buffers, kept between calls. */
#include "support/test_support.h"

#include "compress/blosc_codec.h"
#include "compress/blosc_dec.h"
#include "compress/blosc_enc.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#define N 65536

static void fill(uint8_t *p, size_t n, unsigned seed)
{
    for (size_t i = 0; i < n; i++) p[i] = (uint8_t)((i / 7) * 3 + seed + ((i * seed) >> 9));
}

/* codec's stream of in decodes back to in through a (maybe other) state */
static void round_trip(gbp_codec_ws *we, gbp_codec_ws *wd, int codec, int level, unsigned seed)
{
    uint8_t *in = malloc(N), *c = malloc(N), *back = malloc(N);
    assert_non_null(in);
    assert_non_null(c);
    assert_non_null(back);
    fill(in, N, seed);
    size_t n = gbp_codec_encode(we, codec, level, in, N, c, N - 1);
    assert_true(n > 0 && n < N); /* the pattern shrinks with every codec */
    memset(back, 0xA5, N);
    assert_int_equal(gbp_codec_decode(wd, gbp_codec_format(codec), c, n, back, N), GPUBP_OK);
    assert_memory_equal(back, in, N);
    free(in);
    free(c);
    free(back);
}

static void kept_and_taken_again(void **state)
{
    (void)state;
    gbp_codec_ws *w = gbp_codec_ws_take();
    assert_non_null(w);
    round_trip(w, w, GBP_BLOSC_ZSTD, 1, 1);
    size_t before = gbp_codec_ws_kept(NULL);
    gbp_codec_ws_give(w);
    size_t bytes = 0;
    assert_int_equal(gbp_codec_ws_kept(&bytes), before + 1);
    assert_true(bytes > 0);
    gbp_codec_ws *again = gbp_codec_ws_take();
    assert_ptr_equal(again, w); /* the last one given */
    assert_int_equal(gbp_codec_ws_kept(NULL), before);
    round_trip(again, again, GBP_BLOSC_ZSTD, 5, 2);
    gbp_codec_ws_give(again);
}

static void lz4_then_lz4hc(void **state)
{
    (void)state;
    if (gbp_codec_unavailable(GBP_FMT_LZ4)) skip();
    gbp_codec_ws *w = gbp_codec_ws_take();
    assert_non_null(w);
    round_trip(w, w, GBP_BLOSC_LZ4, 1, 3);
    gbp_codec_ws_give(w);
    w = gbp_codec_ws_take();
    round_trip(w, w, GBP_BLOSC_LZ4HC, 9, 4); /* needs the larger state */
    assert_int_equal(w->lz4hc, 1);
    round_trip(w, w, GBP_BLOSC_LZ4, 1, 5);
    assert_int_equal(w->lz4hc, 0);
    gbp_codec_ws_give(w);
}

static void deflate_levels_then_inflate(void **state)
{
    (void)state;
    gbp_codec_ws *w = gbp_codec_ws_take(), *d = gbp_codec_ws_take();
    assert_non_null(w);
    assert_non_null(d);
    round_trip(w, d, GBP_BLOSC_ZLIB, 1, 6);
    gbp_codec_ws_give(w);
    gbp_codec_ws_give(d);
    w = gbp_codec_ws_take(); /* d: kept in deflate mode's stead, now inflating */
    d = gbp_codec_ws_take();
    round_trip(w, d, GBP_BLOSC_ZLIB, 9, 7);
    round_trip(d, w, GBP_BLOSC_ZLIB, 5, 8); /* each state switches mode */
    gbp_codec_ws_give(w);
    gbp_codec_ws_give(d);
}

static void limits(void **state)
{
    (void)state;
    enum { MANY = GBP_CODEC_WS_KEEP + 16 };
    gbp_codec_ws *w[MANY];
    for (int i = 0; i < MANY; i++) {
        w[i] = gbp_codec_ws_take();
        assert_non_null(w[i]);
        assert_non_null(gbp_codec_ws_buf(w[i], 4096));
    }
    for (int i = 0; i < MANY; i++) gbp_codec_ws_give(w[i]);
    size_t bytes = 0;
    assert_int_equal(gbp_codec_ws_kept(&bytes), GBP_CODEC_WS_KEEP);
    assert_true(bytes <= GBP_CODEC_WS_KEEP_BYTES);
    /* a state holding more than a quarter of the byte limit is freed, not kept */
    gbp_codec_ws *big = gbp_codec_ws_take();
    assert_non_null(gbp_codec_ws_buf(big, GBP_CODEC_WS_KEEP_BYTES / 2));
    size_t n = gbp_codec_ws_kept(NULL);
    gbp_codec_ws_give(big);
    assert_int_equal(gbp_codec_ws_kept(NULL), n);
    /* by bytes: buffers of 3 MiB fill the 32 MiB before the count does */
    for (int i = 0; i < MANY; i++) w[i] = gbp_codec_ws_take();
    assert_int_equal(gbp_codec_ws_kept(NULL), 0);
    for (int i = 0; i < MANY; i++) {
        assert_non_null(gbp_codec_ws_buf(w[i], (size_t)3 << 20));
        gbp_codec_ws_give(w[i]);
    }
    n = gbp_codec_ws_kept(&bytes);
    assert_true(n >= 9 && n <= 10);
    assert_true(bytes <= GBP_CODEC_WS_KEEP_BYTES);
}

static void buffer_grows(void **state)
{
    (void)state;
    gbp_codec_ws *w = gbp_codec_ws_take();
    uint8_t *a = gbp_codec_ws_buf(w, 100);
    assert_non_null(a);
    assert_int_equal((uintptr_t)a % 64, 0); /* the shuffle kernels' stores stay in cache lines */
    assert_ptr_equal(gbp_codec_ws_buf(w, 50), a); /* large enough: the same */
    uint8_t *b = gbp_codec_ws_buf(w, (size_t)1 << 20);
    assert_non_null(b);
    assert_int_equal((uintptr_t)b % 64, 0);
    assert_true(w->bufcap >= ((size_t)1 << 20));
    memset(b, 1, (size_t)1 << 20); /* ASan: all of it is there */
    gbp_codec_ws_give(w);
}

static void *churn(void *arg)
{
    unsigned seed = (unsigned)(uintptr_t)arg;
    for (int i = 0; i < 40; i++) {
        gbp_codec_ws *w = gbp_codec_ws_take();
        if (!w) return (void *)1;
        int codec = (i % 3 == 0) ? GBP_BLOSC_ZLIB : GBP_BLOSC_ZSTD;
        if (gbp_codec_unavailable(gbp_codec_format(codec))) codec = GBP_BLOSC_ZLIB;
        uint8_t in[4096], c[4096], back[4096];
        fill(in, sizeof in, seed + (unsigned)i);
        size_t n = gbp_codec_encode(w, codec, 1 + i % 9, in, sizeof in, c, sizeof c - 1);
        if (n == 0 || n == SIZE_MAX) return (void *)2;
        if (gbp_codec_decode(w, gbp_codec_format(codec), c, n, back, sizeof back) != GPUBP_OK ||
            memcmp(in, back, sizeof in))
            return (void *)3;
        gbp_codec_ws_give(w);
    }
    return NULL;
}

static void threads_take_and_give(void **state)
{
    (void)state;
    pthread_t t[8];
    for (int i = 0; i < 8; i++)
        assert_int_equal(pthread_create(&t[i], NULL, churn, (void *)(uintptr_t)(i + 1)), 0);
    for (int i = 0; i < 8; i++) {
        void *r = (void *)9;
        assert_int_equal(pthread_join(t[i], &r), 0);
        assert_null(r);
    }
    size_t bytes = 0;
    assert_true(gbp_codec_ws_kept(&bytes) <= GBP_CODEC_WS_KEEP);
    assert_true(bytes <= GBP_CODEC_WS_KEEP_BYTES);
}

/* Frees every kept state: the next takes make new ones. */
static void drain_kept(void)
{
    while (gbp_codec_ws_kept(NULL) > 0) {
        gbp_codec_ws *w = gbp_codec_ws_take();
        assert_non_null(w);
        gbp_codec_ws_free(w);
        gbp_free(w);
    }
}

/* A window of a byte- and bit-shuffled blosclz buffer (no library context: what a kept state
 * holds is its buffer) cut inside blocks: decoded right, at 1 and 3 threads; after a call at one
 * thread the one kept state holds the scratch of a partly wanted block and a filtered one, and a
 * second call takes it again without growing anything. */
static void decoder_scratch_kept(void **state)
{
    (void)state;
    const size_t n = (size_t)1 << 20, lo = 40000 + 4, hi = n - 70000 - 12;
    float *in = malloc(n);
    uint8_t *c = malloc(gbp_blosc_bound(n)), *back = malloc(hi - lo);
    assert_non_null(in);
    assert_non_null(c);
    assert_non_null(back);
    for (size_t i = 0; i < n / sizeof *in; i++) in[i] = (float)(i % 977) * 0.25f + (float)(i / 977);
    for (int shuffle = GBP_BLOSC_SHUFFLE; shuffle <= GBP_BLOSC_BITSHUFFLE; shuffle++) {
        size_t cn = 0;
        assert_int_equal(gbp_blosc_compress(in, n, sizeof *in, GBP_BLOSC_BLOSCLZ, 1, shuffle, 1,
                                            c, gbp_blosc_bound(n), &cn), GPUBP_OK);
        for (int threads = 3; threads >= 1; threads -= 2) {
            memset(back, 0x5A, hi - lo);
            assert_int_equal(gbp_blosc_decompress_range(c, cn, n, lo, hi, back, threads),
                             GPUBP_OK);
            assert_memory_equal(back, (const uint8_t *)in + lo, hi - lo);
        }
        drain_kept();
        assert_int_equal(gbp_blosc_decompress_range(c, cn, n, lo, hi, back, 1), GPUBP_OK);
        size_t bytes = 0, again = 0;
        assert_int_equal(gbp_codec_ws_kept(&bytes), 1);
        assert_true(bytes >= sizeof(gbp_codec_ws) + 2 * 16384); /* two blocks of 16 KiB or more */
        assert_int_equal(gbp_blosc_decompress_range(c, cn, n, lo, hi, back, 1), GPUBP_OK);
        assert_int_equal(gbp_codec_ws_kept(&again), 1);
        assert_int_equal(again, bytes);
        assert_memory_equal(back, (const uint8_t *)in + lo, hi - lo);
    }
    free(in);
    free(c);
    free(back);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(kept_and_taken_again),
        cmocka_unit_test(lz4_then_lz4hc),
        cmocka_unit_test(deflate_levels_then_inflate),
        cmocka_unit_test(limits),
        cmocka_unit_test(buffer_grows),
        cmocka_unit_test(threads_take_and_give),
        cmocka_unit_test(decoder_scratch_kept),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
