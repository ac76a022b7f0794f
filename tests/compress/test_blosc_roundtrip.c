/* lib/compress round trips: every element size with each shuffle and level, sizes around every
 * threshold (128-byte raw fallback, 32-byte memcpy chunks, the 32 KiB block-size switch, block
 * multiples), data that does not shrink, thread-count independence, the multi-chunk layout and
 * the parameter parser (the filters: test_shuffle.c). */
#include "support/test_support.h"
#include "support/values.h"
#include "compress/blosczlib.h"

#include <stdio.h>
#include <stdlib.h>

/* Compresses, checks the framing, decompresses with 1 and 3 threads, compares. Returns the
 * compressed size. */
static size_t roundtrip(const uint8_t *src, size_t n, size_t ts, int level, int shuffle,
                        int threads)
{
    size_t cap = gbp_blosc_bound(n), len = 0;
    assert_true(cap >= n + 23);
    uint8_t *buf = malloc(cap);
    uint8_t *back = malloc(n + 1);
    assert_non_null(buf);
    assert_non_null(back);
    int rc = gbp_blosc_compress(src, n, ts, GBP_BLOSC_ZLIB, level, shuffle, threads, buf, cap, &len);
    if (rc) print_error("compress n=%zu ts=%zu level=%d shuffle=%d: %s\n", n, ts, level, shuffle,
                        gbp_error_message());
    assert_int_equal(rc, GPUBP_OK);
    assert_true(len <= cap);
    assert_int_equal(buf[0], 0);
    assert_int_equal(buf[1], 1);
    assert_int_equal(gbp_ld64(buf + 4), n);
    assert_int_equal(gbp_ld32(buf + 15), 0);
    if (n < 128) {
        assert_int_equal(gbp_ld32(buf + 19), 0);
        assert_int_equal(len, 23 + n);
    } else {
        assert_true(gbp_ld32(buf + 19) >= 1);
        assert_true(len <= cap);
    }
    for (int th = 1; th <= 3; th += 2) {
        memset(back, 0xEE, n + 1);
        rc = gbp_blosc_decompress(buf, len, back, n, th);
        if (rc) print_error("decompress n=%zu ts=%zu level=%d shuffle=%d: %s\n", n, ts, level,
                            shuffle, gbp_error_message());
        assert_int_equal(rc, GPUBP_OK);
        assert_memory_equal(back, src, n);
        assert_int_equal(back[n], 0xEE);
    }
    free(buf);
    free(back);
    return len;
}

static void all_sizes_shuffles_levels(void **state)
{
    (void)state;
    static const size_t ts_list[] = {1, 2, 4, 8, 16};
    static const size_t sizes[] = {0, 1, 7, 31, 32, 33, 127, 128, 129, 1000, 4001};
    uint8_t *src = malloc(5000);
    for (size_t t = 0; t < 5; t++)
        for (size_t s = 0; s < sizeof sizes / sizeof *sizes; s++)
            for (int pat = 0; pat < NPAT; pat++) {
                ts_fill_bytes(src, sizes[s], ts_list[t], pat);
                for (int sh = 0; sh < 3; sh++)
                    for (int lv = 0; lv <= 9; lv++)
                        roundtrip(src, sizes[s], ts_list[t], lv, sh, 1);
            }
    free(src);
}

static void block_boundaries(void **state)
{
    (void)state;
    /* around the 32 KiB switch and multiples of the clevel-1 (32 KiB) and clevel-9 (1 MiB)
     * block sizes, odd sizes that are not multiples of the element size */
    static const size_t sizes[] = {32767, 32768, 32769, 65536 + 3, 3 * 32768 + 5,
                                   (1u << 20) + 17, 2 * (1u << 20) + 8};
    static const int levels[] = {0, 1, 2, 3, 5, 6, 9};
    uint8_t *src = malloc(3u << 20);
    for (size_t s = 0; s < sizeof sizes / sizeof *sizes; s++)
        for (int pat = 0; pat < NPAT; pat++) {
            size_t ts = (size_t)1 << (pat % 5);
            ts_fill_bytes(src, sizes[s], ts, pat);
            for (int sh = 0; sh < 3; sh++)
                for (size_t l = 0; l < sizeof levels / sizeof *levels; l++) {
                    if (sizes[s] > 100000 && levels[l] != 1 && levels[l] != 9) continue;
                    roundtrip(src, sizes[s], ts, levels[l], sh, 2);
                }
        }
    free(src);
}

static void layouts_written(void **state)
{
    (void)state;
    uint8_t src[70000], buf[70200];
    size_t len;
    /* all zeros: the special-zero chunk, 23 + 32 bytes */
    memset(src, 0, sizeof src);
    for (int sh = 0; sh < 3; sh++) {
        assert_int_equal(gbp_blosc_compress(src, 80 * 8, 8, GBP_BLOSC_ZLIB, 1, sh, 1, buf, sizeof buf, &len), 0);
        assert_int_equal(len, 55);
        assert_int_equal(buf[23 + 2], 0x75);
        assert_int_equal(buf[23 + 31], 0x10);
    }
    /* random: does not shrink, memcpyed chunk 0x77 */
    ts_fill_bytes(src, sizeof src, 4, PAT_RANDOM);
    assert_int_equal(gbp_blosc_compress(src, sizeof src, 4, GBP_BLOSC_ZLIB, 5, 1, 1, buf, sizeof buf, &len), 0);
    assert_int_equal(len, 23 + 32 + sizeof src);
    assert_int_equal(buf[23 + 2], 0x77);
    assert_memory_equal(buf + 55, src, sizeof src);
    /* level 0: memcpyed up front, 0x07 */
    assert_int_equal(gbp_blosc_compress(src, 1000, 4, GBP_BLOSC_ZLIB, 0, 1, 1, buf, sizeof buf, &len), 0);
    assert_int_equal(len, 23 + 32 + 1000);
    assert_int_equal(buf[23 + 2], 0x07);
    /* constant 0x41: runs (csize -65, token 1) */
    memset(src, 0x41, 40000);
    assert_int_equal(gbp_blosc_compress(src, 40000, 1, GBP_BLOSC_ZLIB, 1, 0, 1, buf, sizeof buf, &len), 0);
    assert_int_equal(buf[23 + 2], 0x75);
    assert_int_equal(gbp_ld32(buf + 23 + 8), 32768);  /* blocksize */
    assert_int_equal(gbp_ld32(buf + 23 + 12), 32 + 8 + 2 * 5); /* 2 bstarts, 2 runs */
    assert_int_equal((int32_t)gbp_ld32(buf + 23 + 40), -65);
    assert_int_equal(buf[23 + 44], 1);
    /* partly compressible: some streams raw, chunk kept */
    ts_fill_bytes(src, 65536, 4, PAT_HALF);
    size_t l2 = roundtrip(src, 65536, 4, 1, 0, 1);
    assert_true(l2 < 65536 / 2 + 2000);
}

static void block_sizes(void **state)
{
    (void)state;
    /* values confirmed with libblosc2 on an 800 000-byte int32 input (docs/format/blosc-zlib.md
     * 3.9) */
    static const size_t want[10] = {16384, 32768, 65536, 131072, 262144, 262144,
                                    524288, 524288, 524288, 800000};
    for (int l = 0; l <= 9; l++)
        assert_int_equal(gbp_blosc_blocksize(800000, 4, GBP_BLOSC_ZLIB, l, 1), want[l]);
    assert_int_equal(gbp_blosc_blocksize(25600, 8, GBP_BLOSC_ZLIB, 1, 1), 25600);
    assert_int_equal(gbp_blosc_blocksize(5, 8, GBP_BLOSC_ZLIB, 1, 1), 1);
    assert_int_equal(gbp_blosc_blocksize(40003, 3, GBP_BLOSC_ZLIB, 9, 1), 40002);
    assert_int_equal(gbp_blosc_blocksize(100000, 3, GBP_BLOSC_ZLIB, 1, 1), 32766);
}

static void threads_do_not_change_output(void **state)
{
    (void)state;
    size_t n = (3u << 20) + 12345;
    uint8_t *src = malloc(n);
    size_t cap = gbp_blosc_bound(n), l1, lt;
    uint8_t *a = malloc(cap), *b = malloc(cap), *back = malloc(n);
    ts_fill_bytes(src, n, 4, PAT_SMOOTH);
    for (size_t i = n / 3; i < n / 3 + 200000; i++) src[i] = (uint8_t)(ts_rand() >> 24);
    for (int sh = 0; sh < 3; sh++) {
        assert_int_equal(gbp_blosc_compress(src, n, 4, GBP_BLOSC_ZLIB, 1, sh, 1, a, cap, &l1), 0);
        for (int th = 0; th <= 5; th++) {
            assert_int_equal(gbp_blosc_compress(src, n, 4, GBP_BLOSC_ZLIB, 1, sh, th, b, cap, &lt), 0);
            assert_int_equal(l1, lt);
            assert_memory_equal(a, b, l1);
            memset(back, 0, n);
            assert_int_equal(gbp_blosc_decompress(b, lt, back, n, th), 0);
            assert_memory_equal(back, src, n);
        }
    }
    free(src);
    free(a);
    free(b);
    free(back);
}

/* n bytes of doubles at src compressed (level 1) with each of the nt thread counts give the la
 * bytes at ref (b: room for them), which decode to src (back: n bytes). */
static void threads_match(const uint8_t *src, size_t n, int codec, int sh, const int *thr,
                          size_t nt, const uint8_t *ref, size_t la, uint8_t *b, uint8_t *back)
{
    size_t lb = 0;
    for (size_t t = 0; t < nt; t++) {
        assert_int_equal(gbp_blosc_compress(src, n, 8, codec, 1, sh, thr[t], b,
                                            gbp_blosc_bound(n), &lb), 0);
        assert_int_equal(la, lb);
        assert_memory_equal(ref, b, la);
    }
    memset(back, 0, n);
    assert_int_equal(gbp_blosc_decompress(ref, la, back, n, 3), 0);
    assert_memory_equal(back, src, n);
}

/* The threaded pass over several batches (blosc_fused.c), on doubles whose mantissa streams do
 * not shrink under byte or bit shuffle (they stay in the worker's filtered block until placed:
 * own_copy) and on smooth ones, cut by runs of zeros (a chunk that shrinks late): 2-8 threads
 * write one thread's bytes for blosclz and lz4, each scratch slot reused across blocks. */
static void threads_raw_streams(void **state)
{
    (void)state;
    static const int codecs[] = {GBP_BLOSC_BLOSCLZ, GBP_BLOSC_LZ4};
    static const int nthr[] = {2, 3, 5, 8};
    size_t n = (size_t)9 << 20, cap = gbp_blosc_bound(n);
    uint8_t *src = malloc(n), *a = malloc(cap), *b = malloc(cap), *back = malloc(n);
    assert_true(src && a && b && back);
    ts_fill_bytes(src, n / 2, 8, PAT_RANDOM);
    ts_fill_bytes(src + n / 2, n - n / 2, 8, PAT_SMOOTH);
    for (size_t i = n / 8; i < n; i += n / 7) memset(src + i, 0, n - i < 300000 ? n - i : 300000);
    for (size_t c = 0; c < 2; c++) {
        if (gbp_blosc_check_codec(codecs[c]) != GPUBP_OK) continue;
        for (int sh = 1; sh < 3; sh++) {
            size_t la = 0;
            assert_int_equal(gbp_blosc_compress(src, n, 8, codecs[c], 1, sh, 1, a, cap, &la), 0);
            threads_match(src, n, codecs[c], sh, nthr, 4, a, la, b, back);
            /* larger batches (GPUBP_BLOSC_WORKER_MIB: at 8 threads one batch, not two) */
            setenv("GPUBP_BLOSC_WORKER_MIB", "2", 1);
            threads_match(src, n, codecs[c], sh, nthr, 4, a, la, b, back);
            unsetenv("GPUBP_BLOSC_WORKER_MIB");
            assert_true(la < n); /* it shrank: coded chunks, not memcpyed ones */
        }
    }
    free(src);
    free(a);
    free(b);
    free(back);
}

static void multi_chunk(void **state)
{
    (void)state;
    uint8_t src[40000];
    ts_fill_bytes(src, 20000, 4, PAT_INTS);
    ts_fill_bytes(src + 20000, 20000, 8, PAT_SMOOTH);
    gbp_blosc_set_max_chunk(10007);
    for (int sh = 0; sh < 3; sh++) {
        uint8_t buf[41000];
        size_t len;
        assert_true(gbp_blosc_bound(40000) == 23 + 40000 + 4 * 32);
        assert_int_equal(gbp_blosc_compress(src, 40000, 8, GBP_BLOSC_ZLIB, 1, sh, 2, buf, sizeof buf, &len), 0);
        assert_int_equal(gbp_ld32(buf + 19), 4);
        roundtrip(src, 40000, 8, 1, sh, 3);
        /* a last piece under 32 bytes becomes a memcpyed chunk */
        gbp_blosc_set_max_chunk(10000);
        assert_int_equal(gbp_blosc_compress(src, 20010, 4, GBP_BLOSC_ZLIB, 1, sh, 1, buf, sizeof buf, &len), 0);
        assert_int_equal(gbp_ld32(buf + 19), 3);
        assert_int_equal(buf[len - 10 - 32 + 2], 0x07);
        roundtrip(src, 20010, 4, 9, sh, 1);
        gbp_blosc_set_max_chunk(10007);
    }
    gbp_blosc_set_max_chunk(0);
}

static void params(void **state)
{
    (void)state;
    int lv = 1, sh = 1, th = 0;
    assert_int_equal(gbp_blosc_parse_params("level=5,shuffle=bit,threads=3", &lv, &sh, &th), 0);
    assert_int_equal(lv, 5);
    assert_int_equal(sh, 2);
    assert_int_equal(th, 3);
    assert_int_equal(gbp_blosc_parse_params(" shuffle = none , ", &lv, &sh, &th), 0);
    assert_int_equal(sh, 0);
    assert_int_equal(lv, 5);
    assert_int_equal(gbp_blosc_parse_params("shuffle=byte", &lv, &sh, &th), 0);
    assert_int_equal(sh, 1);
    assert_int_equal(gbp_blosc_parse_params(NULL, &lv, &sh, &th), 0);
    assert_int_equal(gbp_blosc_parse_params("", NULL, NULL, NULL), 0);
    assert_int_equal(gbp_blosc_parse_params("level=9", NULL, NULL, NULL), 0);
    assert_int_equal(gbp_blosc_parse_params("lvl=3", &lv, &sh, &th), GPUBP_ERR_PARAM);
    assert_non_null(strstr(gbp_error_message(), "'lvl'"));
    assert_int_equal(gbp_blosc_parse_params("level=10", &lv, &sh, &th), GPUBP_ERR_PARAM);
    assert_non_null(strstr(gbp_error_message(), "'level'"));
    assert_int_equal(gbp_blosc_parse_params("level=1x", &lv, &sh, &th), GPUBP_ERR_PARAM);
    assert_int_equal(gbp_blosc_parse_params("level=", &lv, &sh, &th), GPUBP_ERR_PARAM);
    assert_int_equal(gbp_blosc_parse_params("shuffle=bits", &lv, &sh, &th), GPUBP_ERR_PARAM);
    assert_non_null(strstr(gbp_error_message(), "'shuffle'"));
    assert_int_equal(gbp_blosc_parse_params("threads=-1", &lv, &sh, &th), GPUBP_ERR_PARAM);
    assert_int_equal(gbp_blosc_parse_params("level", &lv, &sh, &th), GPUBP_ERR_PARAM);
    assert_int_equal(gbp_blosc_parse_params("level=2,bogus=1", &lv, &sh, &th), GPUBP_ERR_PARAM);
    assert_non_null(strstr(gbp_error_message(), "'bogus'"));
    assert_int_equal(lv, 5); /* unchanged on error */
    assert_int_equal(sh, 1);
    assert_int_equal(th, 3);
}

static void bad_arguments(void **state)
{
    (void)state;
    uint8_t src[300] = {0}, buf[400];
    size_t len;
    assert_int_equal(gbp_blosc_compress(src, 300, 0, GBP_BLOSC_ZLIB, 1, 1, 1, buf, sizeof buf, &len),
                     GPUBP_ERR_INVALID_ARG);
    assert_int_equal(gbp_blosc_compress(src, 300, 4, GBP_BLOSC_ZLIB, 10, 1, 1, buf, sizeof buf, &len),
                     GPUBP_ERR_INVALID_ARG);
    assert_int_equal(gbp_blosc_compress(src, 300, 4, GBP_BLOSC_ZLIB, 1, 3, 1, buf, sizeof buf, &len),
                     GPUBP_ERR_INVALID_ARG);
    assert_int_equal(gbp_blosc_compress(src, 300, 4, GBP_BLOSC_ZLIB, 1, 1, -1, buf, sizeof buf, &len),
                     GPUBP_ERR_INVALID_ARG);
    assert_int_equal(gbp_blosc_compress(src, 300, 4, GBP_BLOSC_ZLIB, 1, 1, 1, buf, 354, &len),
                     GPUBP_ERR_INVALID_ARG);
    assert_int_equal(gbp_blosc_compress(NULL, 300, 4, GBP_BLOSC_ZLIB, 1, 1, 1, buf, sizeof buf, &len),
                     GPUBP_ERR_INVALID_ARG);
    assert_int_equal(gbp_blosc_compress(src, 300, 4, GBP_BLOSC_ZLIB, 1, 1, 1, NULL, sizeof buf, &len),
                     GPUBP_ERR_INVALID_ARG);
    assert_int_equal(gbp_blosc_compress(src, 300, 4, GBP_BLOSC_ZLIB, 1, 1, 1, buf, 355, &len), 0);
    assert_int_equal(gbp_blosc_compress(NULL, 0, 4, GBP_BLOSC_ZLIB, 1, 1, 1, buf, 23, &len), 0);
    assert_int_equal(len, 23);
    assert_int_equal(gbp_blosc_decompress(buf, len, NULL, 0, 1), 0);
    assert_int_equal(gbp_blosc_bound(SIZE_MAX - 10), 0);
    /* typesize above 255 is typesize 1, as in Blosc2 */
    uint8_t big[3000];
    ts_fill_bytes(big, sizeof big, 4, PAT_SMOOTH);
    roundtrip(big, sizeof big, 1000, 1, 1, 1);
}

static void allocation_failures(void **state)
{
    (void)state;
    size_t n = 200000, cap = gbp_blosc_bound(n), len;
    uint8_t *src = malloc(n), *buf = malloc(cap), *back = malloc(n);
    ts_fill_bytes(src, n, 4, PAT_SMOOTH);
    assert_int_equal(gbp_blosc_compress(src, n, 4, GBP_BLOSC_ZLIB, 1, 2, 2, buf, cap, &len), 0);
    int seen_fail = 0;
    for (long k = 0; k < 40; k++) {
        size_t l2;
        gbp_alloc_fail_after(k);
        int rc = gbp_blosc_compress(src, n, 4, GBP_BLOSC_ZLIB, 1, 2, 2, buf, cap, &l2);
        gbp_alloc_fail_after(-1);
        assert_true(rc == GPUBP_OK || rc == GPUBP_ERR_NOMEM);
        if (rc == GPUBP_OK) assert_int_equal(l2, len);
        seen_fail |= rc != GPUBP_OK;
    }
    assert_true(seen_fail);
    assert_int_equal(gbp_blosc_compress(src, n, 4, GBP_BLOSC_ZLIB, 1, 2, 2, buf, cap, &len), 0);
    for (long k = 0; k < 40; k++) {
        gbp_alloc_fail_after(k);
        int rc = gbp_blosc_decompress(buf, len, back, n, 2);
        gbp_alloc_fail_after(-1);
        assert_true(rc == GPUBP_OK || rc == GPUBP_ERR_NOMEM);
        if (rc == GPUBP_OK) assert_memory_equal(back, src, n);
    }
    free(src);
    free(buf);
    free(back);
}

/* Applies the staged encoder to src cut into pieces of `piece` bytes (the last one shorter) and
 * returns the operator buffer it describes (in *len); extents are applied in call order, redo
 * ranges last, as a caller writing a file does. */
static uint8_t *staged_codec(int codec, const uint8_t *src, size_t n, size_t ts, int level,
                             int sh, int threads, size_t piece, size_t *len)
{
    gbp_blosc_enc *e;
    assert_int_equal(gbp_blosc_enc_open(&e, n, ts, codec, level, sh, threads), GPUBP_OK);
    size_t cap = gbp_blosc_bound(n) + 64;
    uint8_t *buf = malloc(cap), *out = malloc(gbp_blosc_enc_out_bound(e, piece));
    assert_non_null(buf);
    assert_non_null(out);
    memset(buf, 0xCD, cap); /* bytes nobody wrote show */
    const gbp_blosc_extent *x;
    size_t nx, off = 0;
    do {
        size_t l = n - off < piece ? n - off : piece;
        int rc = gbp_blosc_enc_put(e, src + off, l);
        if (rc) print_error("put of %zu at %zu: %s\n", l, off, gbp_error_message());
        assert_int_equal(rc, GPUBP_OK);
        memset(out, 0xAB, gbp_blosc_enc_out_bound(e, piece));
        rc = gbp_blosc_enc_emit(e, out, gbp_blosc_enc_out_bound(e, piece), &x, &nx);
        if (rc) print_error("emit of %zu at %zu: %s\n", l, off, gbp_error_message());
        assert_int_equal(rc, GPUBP_OK);
        for (size_t i = 0; i < nx; i++) {
            assert_true(x[i].off + x[i].len <= cap);
            if (x[i].p) memcpy(buf + x[i].off, x[i].p, x[i].len);
            else memset(buf + x[i].off, 0, x[i].len);
        }
        off += l;
    } while (off < n);
    const gbp_blosc_redo *r;
    size_t nr;
    assert_int_equal(gbp_blosc_enc_finish(e, &x, &nx, &r, &nr, len), GPUBP_OK);
    for (size_t i = 0; i < nx; i++) memcpy(buf + x[i].off, x[i].p, x[i].len);
    for (size_t i = 0; i < nr; i++) memcpy(buf + r[i].out_off, src + r[i].in_off, r[i].len);
    gbp_blosc_enc_close(e);
    free(out);
    return buf;
}

static uint8_t *staged(const uint8_t *src, size_t n, size_t ts, int level, int sh, int threads,
                       size_t piece, size_t *len)
{
    return staged_codec(GBP_BLOSC_ZLIB, src, n, ts, level, sh, threads, piece, len);
}

/* Whole buffer, no filter, a chunk over several batches (16 MiB with one thread): the raw streams
 * of the chunk still open at a batch's end are parked, then placed when it shrinks (random
 * blocks among zero runs) or dropped when it is abandoned a batch later (random after 12 KiB of
 * zeros: the chunk stays under its room for about 24 MiB). The staged encoder, which never
 * parks, writes the same bytes; so do 2 and 4 threads. */
static void parked_raw_streams(void **state)
{
    (void)state;
    static const int codecs[] = {GBP_BLOSC_BLOSCLZ, GBP_BLOSC_LZ4};
    size_t n = (size_t)32 << 20, cap = gbp_blosc_bound(n);
    uint8_t *src = malloc(n), *a = malloc(cap), *b = malloc(cap), *back = malloc(n);
    assert_true(src && a && b && back);
    for (int drop = 0; drop < 2; drop++) {
        ts_fill_bytes(src, n, 8, PAT_RANDOM);
        if (drop) memset(src, 0, 12 << 10);
        else
            for (size_t i = 0; i < n; i += 64 << 10) memset(src + i + (48 << 10), 0, 16 << 10);
        for (size_t c = 0; c < 2; c++) {
            if (gbp_blosc_check_codec(codecs[c]) != GPUBP_OK) continue;
            size_t la = 0, lb = 0;
            assert_int_equal(gbp_blosc_compress(src, n, 8, codecs[c], 1, 0, 1, a, cap, &la), 0);
            assert_int_equal(!!(a[23 + 2] & 0x02), drop); /* memcpyed: abandoned */
            uint8_t *s1 = staged_codec(codecs[c], src, n, 8, 1, 0, 1, (size_t)5 << 20, &lb);
            assert_int_equal(la, lb);
            assert_memory_equal(a, s1, la);
            free(s1);
            static const int thr[] = {2, 4};
            threads_match(src, n, codecs[c], 0, thr, 2, a, la, b, back);
        }
    }
    free(src);
    free(a);
    free(b);
    free(back);
}

/* The staged encoder gives gbp_blosc_compress's bytes for any cut of the input: every pattern
 * (abandoned chunks, special-zero chunks, zero runs written late), levels 0/1/9, each shuffle,
 * several chunks (the split hook), inputs under the threshold. */
static void staged_equals_whole(void **state)
{
    (void)state;
    const size_t n = 150001;
    uint8_t *src = malloc(n), *ref = malloc(gbp_blosc_bound(n) + 4096); /* more chunks: hook */
    static const size_t pieces[] = {1, 1000, 32768, 65537, 150001};
    static const size_t sizes[] = {0, 100, 5000, 150001};
    for (int mc = 0; mc < 2; mc++) {
        gbp_blosc_set_max_chunk(mc ? 50007 : 0);
        for (int pat = 0; pat <= NPAT; pat++) {
            if (pat < NPAT) {
                ts_fill_bytes(src, n, 4, pat);
            } else { /* zeros, then random: zero runs held back, then written */
                ts_fill_bytes(src, n, 4, PAT_RANDOM);
                memset(src, 0, n / 2);
            }
            for (size_t s = 0; s < sizeof sizes / sizeof *sizes; s++)
                for (int lv = 0; lv < 3; lv++)
                    for (int sh = 0; sh < 3; sh++) {
                        int level = lv == 0 ? 1 : lv == 1 ? 0 : 9;
                        if ((lv == 1 || lv == 2) && (sh != 1 || s != 3)) continue;
                        size_t m = sizes[s], rl = 0, sl = 0;
                        assert_int_equal(gbp_blosc_compress(src, m, 4, GBP_BLOSC_ZLIB, level, sh, 2, ref,
                                                            gbp_blosc_bound(m), &rl), GPUBP_OK);
                        for (size_t p = 0; p < sizeof pieces / sizeof *pieces; p++) {
                            if (pieces[p] == 1 && m > 5000) continue;
                            uint8_t *b = staged(src, m, 4, level, sh, 1 + (int)(p % 3), pieces[p], &sl);
                            if (sl != rl || memcmp(b, ref, rl))
                                print_error("staged differs: n=%zu pat=%d level=%d sh=%d piece=%zu "
                                            "chunks=%d: %zu vs %zu bytes\n", m, pat, level, sh,
                                            pieces[p], mc, sl, rl);
                            assert_int_equal(sl, rl);
                            assert_memory_equal(b, ref, rl);
                            free(b);
                        }
                    }
        }
    }
    gbp_blosc_set_max_chunk(0);
    free(src);
    free(ref);
}

/* Misuse of the staged encoder: a second put before emit, more input than announced, an output
 * buffer that is too small, finish before all the input came. Nothing is written then. */
static void staged_misuse(void **state)
{
    (void)state;
    static uint8_t src[100000], out[120000];
    const gbp_blosc_extent *x;
    size_t nx, total;
    gbp_blosc_enc *e;
    assert_int_equal(gbp_blosc_enc_open(&e, 0, 0, GBP_BLOSC_ZLIB, 1, 1, 1), GPUBP_ERR_INVALID_ARG);
    assert_null(e);
    assert_int_equal(gbp_blosc_enc_open(&e, 100000, 4, GBP_BLOSC_ZLIB, 1, 1, 1), GPUBP_OK);
    assert_int_equal(gbp_blosc_enc_finish(e, &x, &nx, NULL, NULL, &total), GPUBP_ERR_INVALID_ARG);
    assert_int_equal(gbp_blosc_enc_put(e, src, 100001), GPUBP_ERR_INVALID_ARG);
    assert_int_equal(gbp_blosc_enc_put(e, src, 40000), GPUBP_OK);
    assert_int_equal(gbp_blosc_enc_put(e, src, 400), GPUBP_ERR_INVALID_ARG);
    assert_int_equal(gbp_blosc_enc_emit(e, out, 10, &x, &nx), GPUBP_ERR_INVALID_ARG);
    assert_int_equal(gbp_blosc_enc_emit(e, out, sizeof out, &x, &nx), GPUBP_OK);
    assert_int_equal(gbp_blosc_enc_put(e, src + 40000, 60000), GPUBP_OK);
    assert_int_equal(gbp_blosc_enc_emit(e, out, sizeof out, &x, &nx), GPUBP_OK);
    assert_int_equal(gbp_blosc_enc_finish(e, &x, &nx, NULL, NULL, &total), GPUBP_OK);
    assert_true(total == 23 + 32); /* zero bytes: the special-zero chunk */
    gbp_blosc_enc_close(e);
    gbp_blosc_enc_close(NULL);
}

/* Decoding a byte range gives the same bytes as the whole decode, for every layout: normal
 * chunks (windows inside one block, across blocks and across chunks), memcpyed, special-zero,
 * raw (under the threshold); a range outside the buffer is refused. */
static void ranges(void **state)
{
    (void)state;
    const size_t n = 120001;
    uint8_t *src = malloc(n), *buf = malloc(gbp_blosc_bound(n) + 4096), *win = malloc(n);
    for (int mc = 0; mc < 2; mc++) {
        gbp_blosc_set_max_chunk(mc ? 50007 : 0);
        for (int pat = 0; pat < NPAT; pat++)
            for (int level = 0; level <= 1; level++) {
                size_t m = pat == PAT_CONST ? 100 : n, len = 0; /* PAT_CONST: stored raw */
                ts_fill_bytes(src, m, 4, pat);
                assert_int_equal(gbp_blosc_compress(src, m, 4, GBP_BLOSC_ZLIB, level, 1, 2, buf,
                                                    gbp_blosc_bound(m) + 4096, &len), GPUBP_OK);
                const size_t los[] = {0, 1, 32767, 32768, 50000, m - 1, m};
                for (size_t a = 0; a < sizeof los / sizeof *los; a++)
                    for (size_t span = 0; span < 70000; span = span * 3 + 1) {
                        size_t lo = los[a] < m ? los[a] : m, hi = lo + span < m ? lo + span : m;
                        memset(win, 0xEE, n);
                        assert_int_equal(gbp_blosc_decompress_range(buf, len, m, lo, hi, win, 1 + mc),
                                         GPUBP_OK);
                        assert_memory_equal(win, src + lo, hi - lo);
                        assert_int_equal(win[hi - lo], 0xEE);
                    }
                assert_int_equal(gbp_blosc_decompress_range(buf, len, m, 5, 4, win, 1),
                                 GPUBP_ERR_INVALID_ARG);
                assert_int_equal(gbp_blosc_decompress_range(buf, len, m, 0, m + 1, win, 1),
                                 GPUBP_ERR_INVALID_ARG);
            }
    }
    gbp_blosc_set_max_chunk(0);
    free(src);
    free(buf);
    free(win);
}

/* Every codec this build has x shuffle x typesize x pattern x level: the buffer decodes to the
 * input, whole and staged in pieces, and its chunks carry the codec (header byte 22, flags bits
 * 5-7) and Blosc2's split decision; the smooth data shrinks. */
static void codecs_roundtrip(void **state)
{
    (void)state;
    static const int codecs[] = {GBP_BLOSC_BLOSCLZ, GBP_BLOSC_LZ4, GBP_BLOSC_LZ4HC,
                                 GBP_BLOSC_ZLIB, GBP_BLOSC_ZSTD};
    static const int fmt[] = {0, 1, 1, 3, 4};
    static const size_t tss[] = {1, 2, 4, 8, 16, 3};
    static const int levels[] = {1, 5, 9};
    size_t n = 300007, cap = gbp_blosc_bound(n), tested = 0;
    uint8_t *src = malloc(n), *buf = malloc(cap), *back = malloc(n), *buf1 = malloc(cap);
    for (size_t c = 0; c < 5; c++) {
        if (gbp_blosc_check_codec(codecs[c]) != GPUBP_OK) {
            assert_non_null(strstr(gbp_error_message(), "this build"));
            continue;
        }
        for (size_t t = 0; t < 6; t++)
            for (int pat = 0; pat < NPAT; pat++)
                for (int sh = 0; sh < 3; sh++)
                    for (size_t l = 0; l < 3; l++) {
                        if (pat != PAT_SMOOTH && (l != 0 || t % 2)) continue;
                        ts_fill_bytes(src, n, tss[t], pat);
                        size_t len = 0;
                        assert_int_equal(gbp_blosc_compress(src, n, tss[t], codecs[c], levels[l],
                                                            sh, 2, buf, cap, &len), GPUBP_OK);
                        const uint8_t *h = buf + 23;
                        if ((h[2] & 0x02) == 0 && h[31] == 0) { /* a normal chunk */
                            assert_int_equal(h[22], codecs[c]);
                            assert_int_equal(h[2] >> 5, fmt[c]);
                            int split = gbp_blosc_split(n, tss[t], codecs[c], levels[l], sh);
                            assert_int_equal(!(h[2] & 0x10), split);
                            assert_int_equal(gbp_ld32(h + 8),
                                             gbp_blosc_blocksize(n, tss[t], codecs[c],
                                                                 levels[l], sh));
                        }
                        /* one thread codes in place (blosc_enc.c walk_block): the same bytes */
                        size_t len1 = 0;
                        assert_int_equal(gbp_blosc_compress(src, n, tss[t], codecs[c], levels[l],
                                                            sh, 1, buf1, cap, &len1), GPUBP_OK);
                        assert_int_equal(len1, len);
                        assert_memory_equal(buf1, buf, len);
                        if (pat == PAT_SMOOTH && sh == 1 && tss[t] >= 4 && len >= n * 9 / 10)
                            fail_msg("%s ts %zu level %d: smooth data %zu -> %zu bytes",
                                     gbp_blosc_codec_str(codecs[c]), tss[t], levels[l], n, len);
                        memset(back, 0xAA, n);
                        int rc = gbp_blosc_decompress(buf, len, back, n, 2);
                        if (rc) print_error("%s ts %zu pat %d sh %d: %s\n",
                                            gbp_blosc_codec_str(codecs[c]), tss[t], pat, sh,
                                            gbp_error_message());
                        assert_int_equal(rc, GPUBP_OK);
                        assert_memory_equal(back, src, n);
                        tested++;
                    }
        /* staged in odd pieces: the same bytes */
        ts_fill_bytes(src, n, 8, PAT_SMOOTH);
        size_t len = 0;
        assert_int_equal(gbp_blosc_compress(src, n, 8, codecs[c], 1, 1, 1, buf, cap, &len), 0);
        gbp_blosc_enc *e;
        assert_int_equal(gbp_blosc_enc_open(&e, n, 8, codecs[c], 1, 1, 2), GPUBP_OK);
        uint8_t *out = malloc(gbp_blosc_enc_out_bound(e, 70001)), *st = calloc(1, cap);
        for (size_t off = 0; off < n; off += 70001) {
            size_t m = n - off < 70001 ? n - off : 70001, nx;
            const gbp_blosc_extent *x;
            assert_int_equal(gbp_blosc_enc_put(e, src + off, m), GPUBP_OK);
            assert_int_equal(gbp_blosc_enc_emit(e, out, gbp_blosc_enc_out_bound(e, 70001), &x,
                                                &nx), GPUBP_OK);
            for (size_t i = 0; i < nx; i++)
                if (x[i].p) memcpy(st + x[i].off, x[i].p, x[i].len);
                else memset(st + x[i].off, 0, x[i].len);
        }
        const gbp_blosc_extent *x;
        const gbp_blosc_redo *r;
        size_t nx, nr, total;
        assert_int_equal(gbp_blosc_enc_finish(e, &x, &nx, &r, &nr, &total), GPUBP_OK);
        for (size_t i = 0; i < nx; i++) memcpy(st + x[i].off, x[i].p, x[i].len);
        for (size_t i = 0; i < nr; i++) memcpy(st + r[i].out_off, src + r[i].in_off, r[i].len);
        assert_int_equal(total, len);
        assert_memory_equal(st, buf, len);
        gbp_blosc_enc_close(e);
        free(out);
        free(st);
    }
    print_message("codecs: %zu round trips\n", tested);
    assert_true(tested > 0);
    free(buf1);
    free(src);
    free(buf);
    free(back);
}

/* Data that barely shrinks (random bytes, 48 zeros every 4 KiB): the chunk's room left is under
 * a stream's size at most streams, where one thread codes into its scratch instead of in place.
 * One thread and three give the same bytes, for every codec and shuffle, several chunks. */
static void near_room(void **state)
{
    (void)state;
    static const int codecs[] = {GBP_BLOSC_BLOSCLZ, GBP_BLOSC_LZ4, GBP_BLOSC_LZ4HC,
                                 GBP_BLOSC_ZLIB, GBP_BLOSC_ZSTD};
    size_t n = 400003, cap = gbp_blosc_bound(n) + 4 * 32, normal = 0;
    uint8_t *src = malloc(n), *a = malloc(cap), *b = malloc(cap), *back = malloc(n);
    ts_fill_bytes(src, n, 1, PAT_RANDOM);
    for (size_t i = 0; i < n; i += 4096) memset(src + i, 0, n - i < 48 ? n - i : 48);
    for (int chunks = 0; chunks < 2; chunks++) {
        gbp_blosc_set_max_chunk(chunks ? 150001 : 0);
        for (size_t c = 0; c < 5; c++) {
            if (gbp_blosc_check_codec(codecs[c]) != GPUBP_OK) continue;
            for (int sh = 0; sh < 3; sh++)
                for (size_t ts = 1; ts <= 8; ts *= 8) {
                    size_t la = 0, lb = 0;
                    assert_int_equal(gbp_blosc_compress(src, n, ts, codecs[c], 1, sh, 1, a, cap,
                                                        &la), GPUBP_OK);
                    assert_int_equal(gbp_blosc_compress(src, n, ts, codecs[c], 1, sh, 3, b, cap,
                                                        &lb), GPUBP_OK);
                    assert_int_equal(la, lb);
                    assert_memory_equal(a, b, la);
                    assert_int_equal(gbp_blosc_decompress(a, la, back, n, 1), GPUBP_OK);
                    assert_memory_equal(back, src, n);
                    if (!(a[23 + 2] & 0x02) && la > n - n / 50) normal++; /* coded, tight */
                }
        }
    }
    gbp_blosc_set_max_chunk(0);
    assert_true(normal > 0);
    free(src);
    free(a);
    free(b);
    free(back);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(near_room),
        cmocka_unit_test(block_sizes),
        cmocka_unit_test(all_sizes_shuffles_levels),
        cmocka_unit_test(block_boundaries),
        cmocka_unit_test(layouts_written),
        cmocka_unit_test(threads_do_not_change_output),
        cmocka_unit_test(threads_raw_streams),
        cmocka_unit_test(parked_raw_streams),
        cmocka_unit_test(multi_chunk),
        cmocka_unit_test(params),
        cmocka_unit_test(bad_arguments),
        cmocka_unit_test(allocation_failures),
        cmocka_unit_test(staged_equals_whole),
        cmocka_unit_test(staged_misuse),
        cmocka_unit_test(ranges),
        cmocka_unit_test(codecs_roundtrip),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
