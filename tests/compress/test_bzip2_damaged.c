/* lib/compress/bzip2_op.c on good, damaged and hostile ADIOS2 bzip2 operator buffers. With libbz2
 * (GPUBP_HAVE_BZIP2): buffers of one and of several batches, built here as the format document
 * lays them out, decode exactly; every truncation is GPUBP_ERR_FORMAT with an offset in the
 * message; every single-byte change gives FORMAT or the original bytes' size of output, never a
 * crash or an out-of-bounds access (run under ASan+UBSan); a wrong declared size, overlapping or
 * missing batches and streams outside the buffer are FORMAT. Without libbz2: a well-formed buffer
 * is GPUBP_ERR_CODEC naming bzip2 and libbz2. (The golden ADIOS2-written bzip2 datasets are read
 * value for value by the cli tests: cli_golden_bzip2bp4_*, cli_golden_bzip2bp5_*,
 * cli_golden_bp5oracle_compressed_*.) */
#include "support/test_support.h"
#include "support/values.h"
#include "compress/blosc_config.h"
#include "compress/bzip2_op.h"

#include <stdio.h>
#include <string.h>

#ifdef GPUBP_HAVE_BZIP2
#include <bzlib.h>
#endif

static void put32(uint8_t *p, uint32_t v) { memcpy(p, &v, 4); }
static void put64(uint8_t *p, uint64_t v) { memcpy(p, &v, 8); }

/* decodes a heap copy into an exactly sized heap buffer so that ASan sees any overflow */
static int decode(const uint8_t *buf, size_t len, size_t raw, const uint8_t *expect)
{
    uint8_t *copy = malloc(len ? len : 1), *out = malloc(raw ? raw : 1);
    memcpy(copy, buf, len);
    gbp_error_clear();
    int rc = gbp_bzip2_decompress(copy, len, out, raw);
    if (rc == GPUBP_OK && expect) assert_memory_equal(out, expect, raw);
    if (rc != GPUBP_OK) {
        assert_true(gbp_error_message()[0] != '\0');
        assert_non_null(strstr(gbp_error_message(), "bzip2"));
        /* FORMAT gives the offset in the buffer (the block is named by the reader: get.c) */
        if (rc == GPUBP_ERR_FORMAT) assert_non_null(strstr(gbp_error_message(), " at offset "));
    }
    free(copy);
    free(out);
    return rc;
}

#ifdef GPUBP_HAVE_BZIP2
/* An operator buffer of src[0, n) in batches of at most `batch` bytes (the layout of the format
 * document: header, u64 size, u64 count, the batch table, the streams). */
static uint8_t *make_buffer(const uint8_t *src, size_t n, size_t batch, size_t *len)
{
    size_t nb = n ? (n + batch - 1) / batch : 0, cap = 20 + 16 * nb + n + n / 50 + 700 * (nb + 1);
    uint8_t *b = calloc(1, cap);
    b[0] = GBP_BZIP2_OP_TYPE;
    b[1] = 1;
    put64(b + 4, n);
    put64(b + 12, nb);
    size_t at = 20 + 16 * nb;
    for (size_t i = 0; i < nb; i++) {
        size_t off = i * batch, ln = n - off < batch ? n - off : batch;
        unsigned int zl = (unsigned int)(cap - at);
        assert_int_equal(BZ2_bzBuffToBuffCompress((char *)b + at, &zl, (char *)(uintptr_t)(src + off),
                                                  (unsigned int)ln, 9, 0, 0), BZ_OK);
        put32(b + 20 + 16 * i, (uint32_t)off);
        put32(b + 24 + 16 * i, (uint32_t)ln);
        put32(b + 28 + 16 * i, (uint32_t)at);
        put32(b + 32 + 16 * i, zl);
        at += zl;
    }
    *len = at;
    return b;
}

typedef struct sample {
    uint8_t *src, *buf;
    size_t n, len;
} sample;

static size_t make_samples(sample *s)
{
    static const struct { size_t n, ts, batch; int pat; } def[] = {
        {4000, 8, 1 << 20, PAT_SMOOTH}, {6000, 4, 1000, PAT_INTS}, {1, 1, 10, PAT_RANDOM},
        {3000, 4, 3000, PAT_RANDOM},    {2048, 8, 700, PAT_ZEROS},
    };
    size_t k = sizeof def / sizeof *def;
    for (size_t i = 0; i < k; i++) {
        s[i].n = def[i].n;
        s[i].src = malloc(def[i].n);
        ts_fill_bytes(s[i].src, def[i].n, def[i].ts, def[i].pat);
        s[i].buf = make_buffer(s[i].src, def[i].n, def[i].batch, &s[i].len);
    }
    return k;
}

static void free_samples(sample *s, size_t k)
{
    for (size_t i = 0; i < k; i++) {
        free(s[i].src);
        free(s[i].buf);
    }
}

static void good_buffers(void **state)
{
    (void)state;
    sample s[8];
    size_t k = make_samples(s);
    for (size_t i = 0; i < k; i++) assert_int_equal(decode(s[i].buf, s[i].len, s[i].n, s[i].src), GPUBP_OK);
    /* an empty block: no batches */
    uint8_t empty[20] = {GBP_BZIP2_OP_TYPE, 1};
    assert_int_equal(decode(empty, sizeof empty, 0, NULL), GPUBP_OK);
    free_samples(s, k);
}

static void truncations(void **state)
{
    (void)state;
    sample s[8];
    size_t k = make_samples(s);
    for (size_t i = 0; i < k; i++)
        for (size_t cut = 0; cut < s[i].len; cut++) {
            int rc = decode(s[i].buf, cut, s[i].n, NULL);
            if (rc != GPUBP_ERR_FORMAT)
                fail_msg("sample %zu cut at %zu of %zu: rc %d (%s)", i, cut, s[i].len, rc,
                         gbp_error_message());
            assert_non_null(strstr(gbp_error_message(), "offset"));
        }
    free_samples(s, k);
}

static void byte_changes(void **state)
{
    (void)state;
    sample s[8];
    size_t k = make_samples(s);
    uint32_t r = 12345;
    for (size_t i = 0; i < k; i++) {
        uint8_t *b = malloc(s[i].len);
        /* every byte of the header and table, then 300 positions of the streams */
        size_t table = 20 + 16 * (size_t)((s[i].n + 999) / 1000);
        for (size_t t = 0; t < table + 300; t++) {
            memcpy(b, s[i].buf, s[i].len);
            r = r * 1103515245u + 12345u;
            size_t at = t < table && t < s[i].len ? t : (r >> 8) % s[i].len;
            b[at] ^= (uint8_t)(1u << (r % 8));
            int rc = decode(b, s[i].len, s[i].n, NULL);
            if (rc != GPUBP_OK && rc != GPUBP_ERR_FORMAT)
                fail_msg("sample %zu byte %zu: rc %d (%s)", i, at, rc, gbp_error_message());
            if (rc == GPUBP_ERR_FORMAT) assert_non_null(strstr(gbp_error_message(), "offset"));
        }
        free(b);
    }
    free_samples(s, k);
}

static void inconsistent_tables(void **state)
{
    (void)state;
    sample s[8];
    size_t k = make_samples(s);
    sample *m = &s[1]; /* 6 batches of 1000 bytes */
    uint8_t *b = malloc(m->len);
    /* the metadata's size differs from the buffer's */
    assert_int_equal(decode(m->buf, m->len, m->n - 1, NULL), GPUBP_ERR_FORMAT);
    assert_int_equal(decode(m->buf, m->len, m->n + 1, NULL), GPUBP_ERR_FORMAT);
    static const struct { size_t field; uint32_t value; } bad[] = {
        {20 + 0, 1},           /* batch 0 does not start at 0 */
        {20 + 16 + 0, 999},    /* batch 1 overlaps batch 0 */
        {20 + 16 + 0, 1001},   /* a gap after batch 0 */
        {20 + 4, 1001},        /* batch 0 longer than its stream decodes to */
        {20 + 8, 0},           /* a stream inside the header */
        {20 + 8, 0xFFFFFFF0u}, /* a stream past the end */
        {20 + 12, 0xFFFFFFF0u},
        {20 + 16 * 5 + 4, 0},  /* the last batch empty: the block is not covered */
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        memcpy(b, m->buf, m->len);
        put32(b + bad[i].field, bad[i].value);
        assert_int_equal(decode(b, m->len, m->n, NULL), GPUBP_ERR_FORMAT);
    }
    /* batch counts: none for data, more than the buffer holds, a huge one */
    const uint64_t counts[3] = {0, 1000, UINT64_MAX};
    for (size_t i = 0; i < 3; i++) {
        memcpy(b, m->buf, m->len);
        put64(b + 12, counts[i]);
        assert_int_equal(decode(b, m->len, m->n, NULL), GPUBP_ERR_FORMAT);
    }
    /* another operator's or version's header */
    const size_t hdr[3] = {0, 1, 3};
    for (size_t i = 0; i < 3; i++) {
        memcpy(b, m->buf, m->len);
        b[hdr[i]] ^= 0x40;
        assert_int_equal(decode(b, m->len, m->n, NULL), GPUBP_ERR_FORMAT);
    }
    free(b);
    free_samples(s, k);
}
#else
static void without_libbz2(void **state)
{
    (void)state;
    /* a well-formed header and table: the codec is what is missing */
    uint8_t b[64] = {GBP_BZIP2_OP_TYPE, 1};
    put64(b + 4, 100);
    put64(b + 12, 1);
    put32(b + 24, 100);
    put32(b + 28, 36);
    put32(b + 32, 28);
    assert_int_equal(gbp_bzip2_available(), 0);
    assert_int_equal(decode(b, sizeof b, 100, NULL), GPUBP_ERR_CODEC);
    assert_non_null(strstr(gbp_error_message(), "bzip2"));
    assert_non_null(strstr(gbp_error_message(), "libbz2"));
    /* a damaged buffer is still FORMAT */
    assert_int_equal(decode(b, 10, 100, NULL), GPUBP_ERR_FORMAT);
}
#endif

int main(void)
{
    const struct CMUnitTest tests[] = {
#ifdef GPUBP_HAVE_BZIP2
        cmocka_unit_test(good_buffers),
        cmocka_unit_test(truncations),
        cmocka_unit_test(byte_changes),
        cmocka_unit_test(inconsistent_tables),
#else
        cmocka_unit_test(without_libbz2),
#endif
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
