/* lib/compress reading damaged, foreign and hand-made buffers: every truncation of a buffer is a
 * format error; bit flips and garbage give an error or data, never a crash or an out-of-bounds
 * access (run under ASan+UBSan); other codecs and filters are "codec not supported" naming them;
 * the chunk forms a reader must accept that our writer does not produce (16-byte headers, blocks
 * out of order, NaN / repeated-value / uninitialised special chunks, foreign codec bits on
 * memcpyed chunks, empty chunks) decode. Every codec x shuffle (blosclz, lz4, lz4hc, zlib, zstd
 * chunks, in the codecs this build has): each truncation and each change of a header byte or of
 * sampled stream bits is GPUBP_OK, GPUBP_ERR_FORMAT with an offset in its message, or
 * GPUBP_ERR_CODEC naming a codec; the codecs the build lacks are GPUBP_ERR_CODEC naming the codec
 * and its library (other_codecs). */
#include "support/test_support.h"
#include "support/values.h"
#include "compress/blosczlib.h"

#include <stdio.h>

static uint8_t *encode_codec(const uint8_t *src, size_t n, size_t ts, int codec, int level, int sh,
                             size_t *len)
{
    uint8_t *buf = malloc(gbp_blosc_bound(n));
    assert_int_equal(gbp_blosc_compress(src, n, ts, codec, level, sh, 1, buf, gbp_blosc_bound(n), len),
                     0);
    return buf;
}

static uint8_t *encode(const uint8_t *src, size_t n, size_t ts, int level, int sh, size_t *len)
{
    return encode_codec(src, n, ts, GBP_BLOSC_ZLIB, level, sh, len);
}

/* decodes into an exactly sized heap buffer so that ASan sees any overflow */
static int decode(const uint8_t *buf, size_t len, size_t n, int threads, uint8_t *expect)
{
    uint8_t *copy = malloc(len ? len : 1), *out = malloc(n ? n : 1);
    memcpy(copy, buf, len);
    int rc = gbp_blosc_decompress(copy, len, out, n, threads);
    if (rc == GPUBP_OK && expect) assert_memory_equal(out, expect, n);
    if (rc != GPUBP_OK) assert_true(gbp_error_message()[0] != '\0');
    free(copy);
    free(out);
    return rc;
}

/* small buffers of every layout */
typedef struct sample {
    uint8_t *src, *buf;
    size_t n, len;
} sample;

static size_t make_samples(sample *s)
{
    size_t k = 0;
    static const struct { size_t n, ts; int pat, level, sh; size_t maxchunk; } def[] = {
        {3000, 4, PAT_SMOOTH, 1, 1, 0},  {3000, 8, PAT_SMOOTH, 9, 2, 0},
        {3000, 4, PAT_INTS, 1, 0, 0},    {100, 4, PAT_SMOOTH, 1, 1, 0},
        {640, 8, PAT_ZEROS, 1, 1, 0},    {700, 4, PAT_RANDOM, 5, 2, 0},
        {900, 4, PAT_SMOOTH, 0, 1, 0},   {2500, 4, PAT_HALF, 1, 1, 0},
        {2600, 4, PAT_SMOOTH, 1, 2, 1000}, {2010, 4, PAT_INTS, 1, 1, 1000},
        {3000, 1, PAT_CONST, 1, 0, 0},
    };
    for (size_t i = 0; i < sizeof def / sizeof *def; i++, k++) {
        gbp_blosc_set_max_chunk(def[i].maxchunk);
        s[k].n = def[i].n;
        s[k].src = malloc(def[i].n);
        ts_fill_bytes(s[k].src, def[i].n, def[i].ts, def[i].pat);
        s[k].buf = encode(s[k].src, def[i].n, def[i].ts, def[i].level, def[i].sh, &s[k].len);
    }
    gbp_blosc_set_max_chunk(0);
    return k;
}

static void free_samples(sample *s, size_t k)
{
    for (size_t i = 0; i < k; i++) {
        free(s[i].src);
        free(s[i].buf);
    }
}

static void truncations(void **state)
{
    (void)state;
    sample s[16];
    size_t k = make_samples(s);
    for (size_t i = 0; i < k; i++) {
        assert_int_equal(decode(s[i].buf, s[i].len, s[i].n, 1, s[i].src), GPUBP_OK);
        for (size_t cut = 0; cut < s[i].len; cut++) {
            int rc = decode(s[i].buf, cut, s[i].n, 1 + (int)(cut % 3), NULL);
            if (rc != GPUBP_ERR_FORMAT)
                fail_msg("sample %zu cut at %zu of %zu: rc %d (%s)", i, cut, s[i].len, rc,
                         gbp_error_message());
        }
        /* trailing bytes are no better */
        uint8_t *longer = malloc(s[i].len + 5);
        memcpy(longer, s[i].buf, s[i].len);
        memset(longer + s[i].len, 0, 5);
        assert_int_equal(decode(longer, s[i].len + 5, s[i].n, 1, NULL), GPUBP_ERR_FORMAT);
        free(longer);
        /* wrong expected size */
        assert_int_equal(decode(s[i].buf, s[i].len, s[i].n + 1, 1, NULL), GPUBP_ERR_FORMAT);
        if (s[i].n) assert_int_equal(decode(s[i].buf, s[i].len, s[i].n - 1, 1, NULL),
                                     GPUBP_ERR_FORMAT);
    }
    free_samples(s, k);
}

static void bit_flips(void **state)
{
    (void)state;
    sample s[16];
    size_t k = make_samples(s);
    size_t nok = 0, nerr = 0;
    for (size_t i = 0; i < k; i++) {
        uint8_t *b = malloc(s[i].len);
        for (size_t bit = 0; bit < 8 * s[i].len; bit++) {
            memcpy(b, s[i].buf, s[i].len);
            b[bit / 8] ^= (uint8_t)(1u << (bit % 8));
            int rc = decode(b, s[i].len, s[i].n, 1 + (int)(bit % 2), NULL);
            assert_true(rc == GPUBP_OK || rc == GPUBP_ERR_FORMAT || rc == GPUBP_ERR_CODEC);
            if (rc == GPUBP_OK) nok++;
            else nerr++;
        }
        /* bytes of garbage */
        for (int r = 0; r < 2000; r++) {
            memcpy(b, s[i].buf, s[i].len);
            for (int m = 0; m < 1 + r % 4; m++) b[ts_rand() % s[i].len] = (uint8_t)ts_rand();
            if (r % 5 == 0) { /* plausible header fields: large or negative sizes */
                size_t at = 23 + 4 * (ts_rand() % 4);
                if (at + 4 <= s[i].len) {
                    uint32_t v = (uint32_t)ts_rand();
                    memcpy(b + at, &v, 4);
                }
            }
            int rc = decode(b, s[i].len, s[i].n, 2, NULL);
            assert_true(rc == GPUBP_OK || rc == GPUBP_ERR_FORMAT || rc == GPUBP_ERR_CODEC);
        }
        free(b);
    }
    print_message("bit flips: %zu decoded (flips in raw data or ignored fields), %zu errors\n",
                  nok, nerr);
    free_samples(s, k);
}

/* ---- every codec x shuffle ------------------------------------------------------------------ */

/* rc of a damaged buffer: OK, FORMAT naming an offset, or CODEC naming the codec */
static void check_damaged(int rc, const char *what, size_t at)
{
    const char *m = gbp_error_message();
    if (rc == GPUBP_OK) return;
    if (rc == GPUBP_ERR_FORMAT && strstr(m, "offset")) return;
    if (rc == GPUBP_ERR_CODEC && (strstr(m, "codec") || strstr(m, "filter") || strstr(m, "not supported")))
        return;
    fail_msg("%s, at %zu: rc %d (%s)", what, at, rc, m);
}

static void every_codec_damaged(void **state)
{
    (void)state;
    static const struct { int codec; const char *name; } codecs[] = {
        {GBP_BLOSC_BLOSCLZ, "blosclz"}, {GBP_BLOSC_LZ4, "lz4"}, {GBP_BLOSC_LZ4HC, "lz4hc"},
        {GBP_BLOSC_ZLIB, "zlib"}, {GBP_BLOSC_ZSTD, "zstd"}};
    static const struct { size_t n, ts; int pat, level; size_t maxchunk; } def[] = {
        {6000, 8, PAT_SMOOTH, 5, 0}, {4000, 4, PAT_INTS, 9, 0}, {2600, 4, PAT_HALF, 1, 1000}};
    size_t tested = 0;
    for (size_t c = 0; c < sizeof codecs / sizeof *codecs; c++) {
        if (gbp_blosc_check_codec(codecs[c].codec) != GPUBP_OK) {
            print_message("%s: not in this build (other_codecs checks its CODEC status)\n",
                          codecs[c].name);
            continue;
        }
        for (int sh = 0; sh < 3; sh++)
            for (size_t d = 0; d < sizeof def / sizeof *def; d++) {
                char what[96];
                uint8_t *src = malloc(def[d].n);
                size_t len;
                ts_fill_bytes(src, def[d].n, def[d].ts, def[d].pat);
                gbp_blosc_set_max_chunk(def[d].maxchunk);
                uint8_t *buf = encode_codec(src, def[d].n, def[d].ts, codecs[c].codec,
                                            def[d].level, sh, &len);
                gbp_blosc_set_max_chunk(0);
                snprintf(what, sizeof what, "%s, shuffle %d, sample %zu", codecs[c].name, sh, d);
                assert_int_equal(decode(buf, len, def[d].n, 1, src), GPUBP_OK);
                /* every truncation */
                for (size_t cut = 0; cut < len; cut++) {
                    int rc = decode(buf, cut, def[d].n, 1 + (int)(cut % 2), NULL);
                    if (rc != GPUBP_ERR_FORMAT) fail_msg("%s cut at %zu of %zu: rc %d", what, cut, len, rc);
                    check_damaged(rc, what, cut);
                }
                /* every byte of the prefix and the first chunk header, then sampled bits */
                uint8_t *b = malloc(len);
                for (size_t t = 0; t < 64 + 1500; t++) {
                    memcpy(b, buf, len);
                    size_t at = t < 64 ? t % len : ts_rand() % len;
                    if (t < 64) b[at] = (uint8_t)(b[at] ^ (t % 2 ? 0xFF : 0x01 << (t % 8)));
                    else b[at] ^= (uint8_t)(1u << (ts_rand() % 8));
                    check_damaged(decode(b, len, def[d].n, 1 + (int)(t % 2), NULL), what, at);
                }
                free(b);
                free(buf);
                free(src);
                tested++;
            }
    }
    assert_true(tested >= 6); /* blosclz and zlib are always there */
}

/* ---- hand-made chunks ---------------------------------------------------------------------- */

/* Our buffer for n bytes of a pattern; chunk at offset 23. */
static uint8_t *chunk_sample(size_t n, size_t ts, int pat, int level, int sh, uint8_t **src,
                             size_t *len)
{
    *src = malloc(n);
    ts_fill_bytes(*src, n, ts, pat);
    return encode(*src, n, ts, level, sh, len);
}

static void other_codecs(void **state)
{
    (void)state;
    uint8_t *src;
    size_t len;
    uint8_t *buf = chunk_sample(3000, 4, PAT_SMOOTH, 1, 1, &src, &len);
    assert_int_equal(buf[23 + 2], 0x75);
    /* a zlib stream relabelled: a damaged stream for the codecs this build has (the message
     * names the codec), "not supported" for the others and for codecs no library provides */
    unsigned have = gbp_blosc_features();
    static const struct { int code; const char *name; unsigned feature; } codecs[] = {
        {0, "blosclz", GPUBP_FEATURE_BLOSCLZ}, {1, "lz4", GPUBP_FEATURE_LZ4},
        {4, "zstd", GPUBP_FEATURE_ZSTD}, {6, "user-defined", 0}, {2, "reserved", 0}};
    for (size_t i = 0; i < 5; i++) {
        buf[23 + 2] = (uint8_t)(0x15 | codecs[i].code << 5);
        int want = have & codecs[i].feature ? GPUBP_ERR_FORMAT : GPUBP_ERR_CODEC;
        assert_int_equal(decode(buf, len, 3000, 1, NULL), want);
        if (want == GPUBP_ERR_CODEC && codecs[i].feature &&
            !strstr(gbp_error_message(), codecs[i].code == 1 ? "liblz4" : "libzstd"))
            fail_msg("message '%s' does not name the missing library", gbp_error_message());
        if (!strstr(gbp_error_message(), codecs[i].name))
            fail_msg("message '%s' does not name %s", gbp_error_message(), codecs[i].name);
    }
    buf[23 + 2] = 0x75;
    assert_int_equal(decode(buf, len, 3000, 1, src), GPUBP_OK);
    buf[23 + 20] = 3; /* delta in slot 4 */
    assert_int_equal(decode(buf, len, 3000, 1, NULL), GPUBP_ERR_CODEC);
    assert_non_null(strstr(gbp_error_message(), "delta"));
    buf[23 + 20] = 9; /* a user filter */
    assert_int_equal(decode(buf, len, 3000, 1, NULL), GPUBP_ERR_CODEC);
    buf[23 + 20] = 4; /* truncate precision: nothing to undo */
    assert_int_equal(decode(buf, len, 3000, 1, src), GPUBP_OK);
    buf[23 + 20] = 0;
    buf[23 + 31] = 0x01; /* dictionary */
    assert_int_equal(decode(buf, len, 3000, 1, NULL), GPUBP_ERR_CODEC);
    buf[23 + 31] = 0x80; /* instrumented */
    assert_int_equal(decode(buf, len, 3000, 1, NULL), GPUBP_ERR_CODEC);
    buf[23 + 31] = 0x08; /* lazy */
    assert_int_equal(decode(buf, len, 3000, 1, NULL), GPUBP_ERR_FORMAT);
    buf[23 + 31] = 0x50; /* special kind 5 */
    assert_int_equal(decode(buf, len, 3000, 1, NULL), GPUBP_ERR_FORMAT);
    buf[23 + 31] = 0x02; /* big-endian writer bit: ignored */
    assert_int_equal(decode(buf, len, 3000, 1, src), GPUBP_OK);
    buf[0] = 1;
    assert_int_equal(decode(buf, len, 3000, 1, NULL), GPUBP_ERR_FORMAT);
    buf[0] = 0;
    buf[1] = 2;
    assert_int_equal(decode(buf, len, 3000, 1, NULL), GPUBP_ERR_FORMAT);
    free(buf);
    free(src);
    /* a memcpyed chunk whatever its codec bits say */
    buf = chunk_sample(3000, 4, PAT_SMOOTH, 0, 1, &src, &len);
    buf[23 + 2] = 0x07 | 1 << 5;
    assert_int_equal(decode(buf, len, 3000, 1, src), GPUBP_OK);
    free(buf);
    free(src);
}

static void sixteen_byte_headers(void **state)
{
    (void)state;
    for (int sh = 0; sh < 3; sh++)
        for (int ver = 2; ver <= 4; ver += 2) {
            uint8_t *src;
            size_t len, n = ver == 2 ? 3200 : 3004; /* version 2: whole groups of 8 elements */
            uint8_t *buf = chunk_sample(n, 4, PAT_SMOOTH, 1, sh, &src, &len);
            uint8_t *c = buf + 23;
            assert_int_equal(c[2], 0x75);
            int32_t cb = (int32_t)gbp_ld32(c + 12), bs0 = (int32_t)gbp_ld32(c + 32);
            uint8_t *o = malloc(len);
            memcpy(o, buf, 23);
            uint8_t *h = o + 23;
            memcpy(h, c, 16);
            h[0] = (uint8_t)ver;
            h[2] = (uint8_t)((sh == 1 ? 0x01 : sh == 2 ? 0x04 : 0) | 0x10 | 3 << 5);
            int32_t ncb = cb - 16, nbs = bs0 - 16;
            memcpy(h + 12, &ncb, 4);
            memcpy(h + 16, &nbs, 4);
            memcpy(h + 20, c + 36, (size_t)cb - 36);
            assert_int_equal(decode(o, len - 16, n, 1, src), GPUBP_OK);
            h[2] |= 0x08; /* Blosc1 delta flag */
            assert_int_equal(decode(o, len - 16, n, 1, NULL), GPUBP_ERR_CODEC);
            free(o);
            free(buf);
            free(src);
        }
}

static void blocks_out_of_order(void **state)
{
    (void)state;
    uint8_t *src;
    size_t len, n = 70001;
    uint8_t *buf = chunk_sample(n, 4, PAT_SMOOTH, 1, 2, &src, &len);
    uint8_t *c = buf + 23;
    size_t cb = gbp_ld32(c + 12), nb = 3, start[3], size[3];
    assert_int_equal(gbp_ld32(c + 8), 32768);
    for (size_t j = 0; j < nb; j++) {
        start[j] = gbp_ld32(c + 32 + 4 * j);
        int32_t cs = (int32_t)gbp_ld32(c + start[j]);
        size[j] = 4 + (cs > 0 ? (size_t)cs : (size_t)(cs < 0));
    }
    assert_int_equal(start[2] + size[2], cb);
    uint8_t *o = malloc(len);
    memcpy(o, buf, 23 + 32);
    size_t at = 32 + 4 * nb;
    static const size_t order[3] = {2, 0, 1};
    for (size_t k = 0; k < nb; k++) {
        size_t j = order[k];
        uint32_t v = (uint32_t)at;
        memcpy(o + 23 + 32 + 4 * j, &v, 4);
        memcpy(o + 23 + at, c + start[j], size[j]);
        at += size[j];
    }
    assert_int_equal(at, cb);
    for (int th = 1; th <= 3; th++) assert_int_equal(decode(o, len, n, th, src), GPUBP_OK);
    /* a block start outside the chunk, and one pointing into the header */
    uint32_t bad = (uint32_t)cb;
    memcpy(o + 23 + 32 + 4, &bad, 4);
    assert_int_equal(decode(o, len, n, 2, NULL), GPUBP_ERR_FORMAT);
    bad = 0;
    memcpy(o + 23 + 32 + 4, &bad, 4);
    assert_int_equal(decode(o, len, n, 2, NULL), GPUBP_ERR_FORMAT);
    free(o);
    free(buf);
    free(src);
}

/* A buffer with one hand-made chunk: header fields, then `extra` bytes. */
static size_t one_chunk(uint8_t *o, size_t n, uint8_t ts, uint8_t flags, uint8_t b2flags,
                        const void *extra, size_t elen)
{
    memset(o, 0, 23 + 32);
    o[1] = 1;
    uint64_t n64 = n;
    memcpy(o + 4, &n64, 8);
    o[19] = 1;
    uint8_t *h = o + 23;
    h[0] = 5;
    h[1] = 1;
    h[2] = flags;
    h[3] = ts;
    int32_t nb = (int32_t)n, bs = n ? (int32_t)n : 1, cb = (int32_t)(32 + elen);
    memcpy(h + 4, &nb, 4);
    memcpy(h + 8, &bs, 4);
    memcpy(h + 12, &cb, 4);
    h[22] = 4;
    h[31] = b2flags;
    if (elen) memcpy(h + 32, extra, elen);
    return 23 + 32 + elen;
}

static void special_chunks(void **state)
{
    (void)state;
    uint8_t o[300], out[200], want[200];
    size_t len;
    /* NaN, typesize 4 and 8 */
    len = one_chunk(o, 160, 4, 0x05, 0x20, NULL, 0);
    assert_int_equal(gbp_blosc_decompress(o, len, out, 160, 1), 0);
    for (size_t i = 0; i < 40; i++) {
        float f;
        memcpy(&f, out + 4 * i, 4);
        assert_true(isnan(f));
    }
    len = one_chunk(o, 160, 8, 0x05, 0x20, NULL, 0);
    assert_int_equal(gbp_blosc_decompress(o, len, out, 160, 1), 0);
    double d;
    memcpy(&d, out + 152, 8);
    assert_true(isnan(d));
    len = one_chunk(o, 160, 2, 0x05, 0x20, NULL, 0);
    assert_int_equal(gbp_blosc_decompress(o, len, out, 160, 1), GPUBP_ERR_FORMAT);
    /* repeated value */
    const uint8_t val[8] = {1, 2, 3, 4, 5, 6, 7, 8};
    for (size_t i = 0; i < 160; i++) want[i] = val[i % 8];
    len = one_chunk(o, 160, 8, 0x75, 0x30, val, 8);
    assert_int_equal(gbp_blosc_decompress(o, len, out, 160, 1), 0);
    assert_memory_equal(out, want, 160);
    len = one_chunk(o, 160, 8, 0x75, 0x30, val, 7); /* 160 not a multiple of 7 */
    assert_int_equal(gbp_blosc_decompress(o, len, out, 160, 1), GPUBP_ERR_FORMAT);
    /* uninitialised and zeros */
    memset(want, 0, sizeof want);
    len = one_chunk(o, 160, 4, 0x75, 0x40, NULL, 0);
    memset(out, 0x55, sizeof out);
    assert_int_equal(gbp_blosc_decompress(o, len, out, 160, 1), 0);
    assert_memory_equal(out, want, 160);
    len = one_chunk(o, 160, 4, 0x75, 0x10, NULL, 0);
    memset(out, 0x55, sizeof out);
    assert_int_equal(gbp_blosc_decompress(o, len, out, 160, 1), 0);
    assert_memory_equal(out, want, 160);
    len = one_chunk(o, 162, 4, 0x75, 0x10, NULL, 0); /* zeros: any size (Blosc2 3.x) */
    assert_int_equal(gbp_blosc_decompress(o, len, out, 162, 1), 0);
    len = one_chunk(o, 162, 4, 0x75, 0x20, NULL, 0); /* NaN: whole elements only */
    assert_int_equal(gbp_blosc_decompress(o, len, out, 162, 1), GPUBP_ERR_FORMAT);
    /* an empty chunk */
    len = one_chunk(o, 0, 4, 0x75, 0, NULL, 0);
    assert_int_equal(gbp_blosc_decompress(o, len, out, 0, 1), 0);
    len = one_chunk(o, 0, 4, 0x75, 0, val, 4);
    assert_int_equal(gbp_blosc_decompress(o, len, out, 0, 1), GPUBP_ERR_FORMAT);
    /* nbytes larger than the output, huge blocksize, typesize 0, version 6 */
    len = one_chunk(o, 160, 4, 0x75, 0x10, NULL, 0);
    assert_int_equal(gbp_blosc_decompress(o, len, out, 159, 1), GPUBP_ERR_FORMAT);
    int32_t big = 0x7fffffff;
    memcpy(o + 23 + 8, &big, 4);
    assert_int_equal(gbp_blosc_decompress(o, len, out, 160, 1), GPUBP_ERR_FORMAT);
    len = one_chunk(o, 160, 0, 0x75, 0x10, NULL, 0);
    assert_int_equal(gbp_blosc_decompress(o, len, out, 160, 1), GPUBP_ERR_FORMAT);
    len = one_chunk(o, 160, 4, 0x75, 0x10, NULL, 0);
    o[23] = 6;
    assert_int_equal(gbp_blosc_decompress(o, len, out, 160, 1), GPUBP_ERR_FORMAT);
    /* a chunk count that disagrees with the chunks */
    len = one_chunk(o, 160, 4, 0x75, 0x10, NULL, 0);
    o[19] = 2;
    assert_int_equal(gbp_blosc_decompress(o, len, out, 160, 1), GPUBP_ERR_FORMAT);
    /* the raw fallback with the wrong length; the legacy single chunk */
    len = one_chunk(o, 160, 4, 0x75, 0x10, NULL, 0);
    memmove(o + 15, o + 23, 32);
    assert_int_equal(gbp_blosc_decompress(o, 15 + 32, out, 160, 1), 0);
    assert_memory_equal(out, want, 160);
}

static void runs_and_raw_streams(void **state)
{
    (void)state;
    /* one block of 64 bytes: csize 0 (zeros), then runs of 0x41 and raw, by hand */
    uint8_t o[300], out[64], want[64];
    for (int kind = 0; kind < 4; kind++) {
        uint8_t body[80];
        size_t el;
        int32_t bst = 36;
        memcpy(body, &bst, 4);
        int32_t cs = kind == 0 ? 0 : kind == 1 ? -0x41 : kind == 2 ? 64 : -300;
        memcpy(body + 4, &cs, 4);
        if (kind == 0) { memset(want, 0, 64); el = 8; }
        else if (kind == 1) { memset(want, 0x41, 64); body[8] = 1; el = 9; }
        else if (kind == 2) {
            for (int i = 0; i < 64; i++) want[i] = (uint8_t)(i * 3);
            memcpy(body + 8, want, 64);
            el = 72;
        } else { body[8] = 1; el = 9; }
        size_t len = one_chunk(o, 64, 1, 0x75, 0, body, el);
        int rc = gbp_blosc_decompress(o, len, out, 64, 1);
        if (kind == 3) {
            assert_int_equal(rc, GPUBP_ERR_FORMAT);
            continue;
        }
        assert_int_equal(rc, 0);
        assert_memory_equal(out, want, 64);
        if (kind == 1) { /* token without bit 0 */
            o[23 + 32 + 8] = 2;
            assert_int_equal(gbp_blosc_decompress(o, len, out, 64, 1), GPUBP_ERR_FORMAT);
        }
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(truncations),
        cmocka_unit_test(bit_flips),
        cmocka_unit_test(every_codec_damaged),
        cmocka_unit_test(other_codecs),
        cmocka_unit_test(sixteen_byte_headers),
        cmocka_unit_test(blocks_out_of_order),
        cmocka_unit_test(special_chunks),
        cmocka_unit_test(runs_and_raw_streams),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
