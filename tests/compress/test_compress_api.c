/* The zlib operator through the public API (issue 7 acceptance): every numeric type, each
 * shuffle, shapes that are not multiples of the Blosc2 block, empty and tiny blocks, several
 * blocks and steps, sub-box selections across compressed blocks, min/max from the uncompressed
 * values (scanned by the compression threads: the bytes of one pass), the file-wide default, and
 * the errors. */
#include "support/test_support.h"

#include <ctype.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

static const gpubp_type types[] = {
    GPUBP_TYPE_INT8, GPUBP_TYPE_INT16, GPUBP_TYPE_INT32, GPUBP_TYPE_INT64,
    GPUBP_TYPE_UINT8, GPUBP_TYPE_UINT16, GPUBP_TYPE_UINT32, GPUBP_TYPE_UINT64,
    GPUBP_TYPE_FLOAT, GPUBP_TYPE_DOUBLE, GPUBP_TYPE_FLOAT_COMPLEX, GPUBP_TYPE_DOUBLE_COMPLEX};
#define NTYPES (sizeof types / sizeof types[0])

/* deterministic smooth-ish bytes for element i of a type */
static void fill(gpubp_type t, void *buf, size_t n, unsigned seed)
{
    size_t es = gpubp_type_size(t);
    unsigned char *p = buf;
    for (size_t i = 0; i < n; i++) {
        double x = sin(0.01 * (double)(i + seed)) * 100.0 + (double)(i % 7);
        switch (t) {
        case GPUBP_TYPE_INT8: { int8_t v = (int8_t)x; memcpy(p + i * es, &v, es); break; }
        case GPUBP_TYPE_INT16: { int16_t v = (int16_t)(x * 10); memcpy(p + i * es, &v, es); break; }
        case GPUBP_TYPE_INT32: { int32_t v = (int32_t)(x * 1000); memcpy(p + i * es, &v, es); break; }
        case GPUBP_TYPE_INT64: { int64_t v = (int64_t)(x * 1e6); memcpy(p + i * es, &v, es); break; }
        case GPUBP_TYPE_UINT8: { uint8_t v = (uint8_t)(i + seed); memcpy(p + i * es, &v, es); break; }
        case GPUBP_TYPE_UINT16: { uint16_t v = (uint16_t)(i * 3 + seed); memcpy(p + i * es, &v, es); break; }
        case GPUBP_TYPE_UINT32: { uint32_t v = (uint32_t)(i * 7 + seed); memcpy(p + i * es, &v, es); break; }
        case GPUBP_TYPE_UINT64: { uint64_t v = (uint64_t)i * 1000003u + seed; memcpy(p + i * es, &v, es); break; }
        case GPUBP_TYPE_FLOAT: { float v = (float)x; memcpy(p + i * es, &v, es); break; }
        case GPUBP_TYPE_DOUBLE: memcpy(p + i * es, &x, es); break;
        case GPUBP_TYPE_FLOAT_COMPLEX: { float v[2] = {(float)x, (float)-x}; memcpy(p + i * es, v, es); break; }
        case GPUBP_TYPE_DOUBLE_COMPLEX: { double v[2] = {x, x / 3}; memcpy(p + i * es, v, es); break; }
        default: break;
        }
    }
}

/* Every type x shuffle: a 1-D array of 1000 (not a multiple of any block) in 3 blocks over
 * 2 steps, one empty block, read whole and as a sub-box crossing blocks. */
static void test_types_and_shuffles(void **state)
{
    (void)state;
    const char *shuffles[] = {"shuffle=byte", "shuffle=bit", "shuffle=none,level=9"};
    for (size_t sh = 0; sh < 3; sh++) {
        char name[64];
        snprintf(name, sizeof name, "z%zu.bp", sh);
        const char *path = ts_path(name);
        gpubp_file *w;
        TS_OK(gpubp_open(&w, path, GPUBP_MODE_WRITE, NULL));
        gpubp_variable *v[NTYPES];
        size_t shape[1] = {1000}, start[1] = {0}, count[1] = {400};
        for (size_t k = 0; k < NTYPES; k++) {
            snprintf(name, sizeof name, "v%zu", k);
            TS_OK(gpubp_define_variable(&v[k], w, name, types[k], 1, shape, start, count));
            TS_OK(gpubp_variable_add_operation(v[k], "zlib", shuffles[sh]));
        }
        static unsigned char data[2][NTYPES][1000 * 16];
        for (unsigned s = 0; s < 2; s++) {
            TS_OK(gpubp_begin_step(w));
            for (size_t k = 0; k < NTYPES; k++) {
                size_t es = gpubp_type_size(types[k]);
                fill(types[k], data[s][k], 1000, s * 13 + (unsigned)k);
                size_t b0[1] = {0}, c0[1] = {400}, b1[1] = {400}, c1[1] = {0}, c2[1] = {600};
                TS_OK(gpubp_set_selection(v[k], 1, b0, c0));
                TS_OK(gpubp_put(w, v[k], data[s][k], GPUBP_SYNC));
                TS_OK(gpubp_set_selection(v[k], 1, b1, c1)); /* empty block: not compressed */
                TS_OK(gpubp_put(w, v[k], data[s][k] + 400 * es, GPUBP_SYNC));
                TS_OK(gpubp_set_selection(v[k], 1, b1, c2));
                TS_OK(gpubp_put(w, v[k], data[s][k] + 400 * es, GPUBP_DEFERRED));
            }
            TS_OK(gpubp_end_step(w));
        }
        TS_OK(gpubp_close(w));
        assert_int_equal(ts_bp4check(path), 0);
        gpubp_file *r;
        TS_OK(gpubp_open(&r, path, GPUBP_MODE_READ_RANDOM_ACCESS, NULL));
        for (size_t k = 0; k < NTYPES; k++) {
            gpubp_variable *x;
            snprintf(name, sizeof name, "v%zu", k);
            TS_OK(gpubp_inquire_variable(&x, r, name));
            size_t es = gpubp_type_size(types[k]);
            unsigned char got[2 * 1000 * 16];
            TS_OK(gpubp_set_step_selection(x, 0, 2));
            TS_OK(gpubp_get(r, x, got, GPUBP_SYNC));
            assert_memory_equal(got, data[0][k], 1000 * es);
            assert_memory_equal(got + 1000 * es, data[1][k], 1000 * es);
            /* a sub-box across the two compressed blocks, step 1 */
            size_t st[1] = {350}, ct[1] = {100};
            TS_OK(gpubp_set_step_selection(x, 1, 1));
            TS_OK(gpubp_set_selection(x, 1, st, ct));
            TS_OK(gpubp_get(r, x, got, GPUBP_SYNC));
            assert_memory_equal(got, data[1][k] + 350 * es, 100 * es);
            /* per-block min/max come from the uncompressed values */
            unsigned char mn[16], mx[16];
            TS_OK(gpubp_variable_block_info(x, 0, 2, NULL, NULL, mn, mx));
            int has_lt = 0;
            for (size_t i = 0; i < 600; i++)
                if (!memcmp(data[0][k] + (400 + i) * es, mn, es)) has_lt = 1;
            assert_true(has_lt); /* the min is one of the block's values */
        }
        TS_OK(gpubp_close(r));
    }
}

/* Boxes of a 3-D compressed block of 1 MiB (several Blosc2 blocks) read into host memory, where
 * only the span that holds a box is decoded: boxes with one index in the outer dimensions, ranges
 * in the middle, one element, the last rows, and the whole block; for each codec this build has. */
static void test_boxes_of_rows(void **state)
{
    (void)state;
    const char *codecs[] = {"zlib", "blosclz", "lz4", "zstd"};
    const size_t dims[3] = {64, 50, 40}, n = 64 * 50 * 40, zero[3] = {0, 0, 0};
    const size_t boxes[][6] = {{2, 1, 0, 1, 3, 40}, {2, 3, 5, 1, 1, 30}, {1, 1, 1, 3, 3, 3},
                               {63, 49, 39, 1, 1, 1}, {60, 0, 0, 4, 50, 40}, {0, 2, 3, 64, 2, 2},
                               {0, 0, 0, 64, 50, 40}, {31, 0, 0, 1, 50, 40}};
    double *d = malloc(n * sizeof *d), *got = malloc(n * sizeof *got);
    assert_true(d && got);
    for (size_t i = 0; i < n; i++) d[i] = 0.5 * (double)i + sin(0.001 * (double)i);
    int ran = 0;
    for (size_t c = 0; c < sizeof codecs / sizeof codecs[0]; c++) {
        char name[32];
        snprintf(name, sizeof name, "rows-%s.bp", codecs[c]);
        const char *path = ts_path(name);
        gpubp_file *w;
        TS_OK(gpubp_open(&w, path, GPUBP_MODE_WRITE, NULL));
        gpubp_variable *v;
        TS_OK(gpubp_define_variable(&v, w, "f", GPUBP_TYPE_DOUBLE, 3, dims, zero, dims));
        int rc = gpubp_variable_add_operation(v, codecs[c], "shuffle=byte");
        if (rc == GPUBP_ERR_CODEC && c >= 2) { /* lz4 and zstd are optional */
            TS_OK(gpubp_close(w));
            continue;
        }
        TS_OK(rc);
        TS_OK(gpubp_begin_step(w));
        TS_OK(gpubp_put(w, v, d, GPUBP_SYNC));
        TS_OK(gpubp_end_step(w));
        TS_OK(gpubp_close(w));
        gpubp_file *r;
        TS_OK(gpubp_open(&r, path, GPUBP_MODE_READ, NULL));
        TS_OK(gpubp_begin_step(r));
        gpubp_variable *x;
        TS_OK(gpubp_inquire_variable(&x, r, "f"));
        for (size_t b = 0; b < sizeof boxes / sizeof boxes[0]; b++) {
            const size_t *st = boxes[b], *ct = boxes[b] + 3;
            TS_OK(gpubp_set_selection(x, 3, st, ct));
            memset(got, 0xff, n * sizeof *got);
            TS_OK(gpubp_get(r, x, got, GPUBP_SYNC));
            size_t k = 0;
            for (size_t i = 0; i < ct[0]; i++)
                for (size_t j = 0; j < ct[1]; j++)
                    for (size_t l = 0; l < ct[2]; l++, k++) {
                        size_t at = ((st[0] + i) * dims[1] + st[1] + j) * dims[2] + st[2] + l;
                        if (memcmp(&got[k], &d[at], sizeof *d) != 0)
                            fail_msg("%s box %zu: element (%zu, %zu, %zu) differs", codecs[c], b,
                                     i, j, l);
                    }
        }
        /* rows 10..13 into a buffer with ghost cells (one run per row there: copied run by run) */
        const size_t st[3] = {10, 0, 0}, ct[3] = {4, 50, 40}, ms[3] = {1, 1, 1},
                     mc[3] = {6, 52, 42};
        TS_OK(gpubp_set_selection(x, 3, st, ct));
        TS_OK(gpubp_set_memory_selection(x, 3, ms, mc));
        memset(got, 0xff, n * sizeof *got);
        TS_OK(gpubp_get(r, x, got, GPUBP_SYNC));
        for (size_t i = 0; i < mc[0]; i++)
            for (size_t j = 0; j < mc[1]; j++)
                for (size_t l = 0; l < mc[2]; l++) {
                    const double *g = &got[(i * mc[1] + j) * mc[2] + l];
                    int in = i >= 1 && i < 5 && j >= 1 && j < 51 && l >= 1 && l < 41;
                    size_t at = ((st[0] + i - 1) * dims[1] + j - 1) * dims[2] + l - 1;
                    uint64_t ff = UINT64_MAX;
                    if (in ? memcmp(g, &d[at], sizeof *d) != 0 : memcmp(g, &ff, sizeof ff) != 0)
                        fail_msg("%s ghost box: element (%zu, %zu, %zu) wrong", codecs[c], i, j,
                                 l);
                }
        TS_OK(gpubp_set_memory_selection(x, 0, NULL, NULL));
        TS_OK(gpubp_end_step(r));
        TS_OK(gpubp_close(r));
        ran++;
    }
    assert_true(ran >= 2);
    free(d);
    free(got);
}

/* A 2-D field with the file-wide default (compress=zlib), tiny and odd shapes, READ mode. */
static void test_file_default_2d(void **state)
{
    (void)state;
    const char *path = ts_path("z2d.bp");
    gpubp_file *w;
    TS_OK(gpubp_open(&w, path, GPUBP_MODE_WRITE, "compress=zlib,compress_shuffle=bit,compress_level=5"));
    gpubp_variable *f, *tiny;
    size_t shape[2] = {37, 129}, start[2] = {0, 0};
    TS_OK(gpubp_define_variable(&f, w, "field", GPUBP_TYPE_DOUBLE, 2, shape, start, shape));
    size_t one = 3, z = 0;
    TS_OK(gpubp_define_variable(&tiny, w, "tiny", GPUBP_TYPE_FLOAT, 1, &one, &z, &one));
    static double d[37 * 129];
    float t[3] = {1, -2, 3};
    for (size_t i = 0; i < 37 * 129; i++) d[i] = cos(0.001 * (double)i);
    for (int s = 0; s < 3; s++) {
        TS_OK(gpubp_begin_step(w));
        TS_OK(gpubp_put(w, f, d, GPUBP_SYNC));
        TS_OK(gpubp_put(w, tiny, t, GPUBP_SYNC));
        TS_OK(gpubp_end_step(w));
    }
    TS_OK(gpubp_close(w));
    assert_int_equal(ts_bp4check(path), 0);
    gpubp_file *r;
    TS_OK(gpubp_open(&r, path, GPUBP_MODE_READ, NULL));
    int steps = 0;
    while (gpubp_begin_step(r) == GPUBP_OK) {
        gpubp_variable *x;
        TS_OK(gpubp_inquire_variable(&x, r, "field"));
        size_t st[2] = {5, 100}, ct[2] = {20, 29};
        TS_OK(gpubp_set_selection(x, 2, st, ct));
        double box[20 * 29];
        TS_OK(gpubp_get(r, x, box, GPUBP_SYNC));
        for (size_t i = 0; i < 20; i++)
            for (size_t j = 0; j < 29; j++)
                assert_true(box[i * 29 + j] == d[(5 + i) * 129 + 100 + j]);
        double mn, mx;
        TS_OK(gpubp_variable_minmax(x, &mn, &mx));
        assert_true(mx == 1.0);
        TS_OK(gpubp_inquire_variable(&x, r, "tiny"));
        float tt[3];
        TS_OK(gpubp_get(r, x, tt, GPUBP_SYNC));
        assert_memory_equal(tt, t, sizeof t);
        TS_OK(gpubp_end_step(r));
        steps++;
    }
    assert_int_equal(steps, 3);
    TS_OK(gpubp_close(r));
}

static void test_errors(void **state)
{
    (void)state;
    const char *path = ts_path("zerr.bp");
    gpubp_file *w;
    TS_OK(gpubp_open(&w, path, GPUBP_MODE_WRITE, NULL));
    gpubp_variable *v, *s;
    size_t n = 8, z = 0;
    TS_OK(gpubp_define_variable(&v, w, "v", GPUBP_TYPE_INT32, 1, &n, &z, &n));
    TS_OK(gpubp_define_variable(&s, w, "s", GPUBP_TYPE_INT32, 0, NULL, NULL, NULL));
    assert_int_equal(gpubp_variable_add_operation(v, "bzip2", NULL), GPUBP_ERR_CODEC);
    assert_non_null(strstr(gpubp_last_error(), "bzip2"));
    /* lz4 is there exactly when the build found liblz4 */
    int lz4 = gpubp_variable_add_operation(v, "lz4", NULL);
    assert_int_equal(lz4, gpubp_features() & GPUBP_FEATURE_LZ4 ? GPUBP_OK : GPUBP_ERR_CODEC);
    if (lz4) assert_non_null(strstr(gpubp_last_error(), "liblz4"));
    assert_int_equal(gpubp_variable_add_operation(v, "zlib", "level=12"), GPUBP_ERR_PARAM);
    assert_int_equal(gpubp_variable_add_operation(v, "zlib", "speed=1"), GPUBP_ERR_PARAM);
    assert_non_null(strstr(gpubp_last_error(), "speed"));
    assert_int_equal(gpubp_variable_add_operation(s, "zlib", NULL), GPUBP_ERR_NOT_SUPPORTED);
    TS_OK(gpubp_variable_add_operation(v, "zlib", "level=1,shuffle=byte,threads=2"));
    int32_t d[8] = {1, 2, 3, 4, 5, 6, 7, 8};
    TS_OK(gpubp_begin_step(w));
    TS_OK(gpubp_put(w, v, d, GPUBP_SYNC));
    /* after the first put the operator is fixed */
    assert_int_equal(gpubp_variable_add_operation(v, "zlib", NULL), GPUBP_ERR_WRONG_MODE);
    TS_OK(gpubp_end_step(w));
    TS_OK(gpubp_close(w));
    assert_int_equal(gpubp_open(&w, path, GPUBP_MODE_WRITE, "compress=bzip2"), GPUBP_ERR_PARAM);
}

/* Replaces every 8-byte `from` in buf (md.0, little-endian like the host) by `to`; returns how
 * many. */
static int patch_u64(unsigned char *buf, size_t n, uint64_t from, uint64_t to)
{
    int k = 0;
    for (size_t i = 0; i + 8 <= n; i++) {
        uint64_t x;
        memcpy(&x, buf + i, 8);
        if (x != from) continue;
        memcpy(buf + i, &to, 8);
        k++;
        i += 7;
    }
    return k;
}

/* A block whose metadata claims far more elements than its operator buffer holds (a damaged
 * md.0, found by fuzz_open on a BP5 dataset): reading a small box of it fails with FORMAT, and
 * the claimed size (1 TiB here) is never allocated, which AddressSanitizer would report. With
 * `buffer` the operator buffer's own size says the same 1 TiB: the box's bytes alone are decoded,
 * so the framing's damage is found without that allocation either. */
static void damaged_count(const char *name, int buffer, const char *message)
{
    const char *path = ts_path(name);
    const size_t n = 74575; /* 0x1234f: a count no other field of md.0 equals */
    const uint64_t huge = (uint64_t)1 << 37;
    gpubp_file *w;
    TS_OK(gpubp_open(&w, path, GPUBP_MODE_WRITE, "compress=zlib"));
    gpubp_variable *v;
    size_t z = 0;
    TS_OK(gpubp_define_variable(&v, w, "v", GPUBP_TYPE_DOUBLE, 1, &n, &z, &n));
    double *d = malloc(n * sizeof *d);
    assert_non_null(d);
    for (size_t i = 0; i < n; i++) d[i] = (double)(i % 97);
    TS_OK(gpubp_begin_step(w));
    TS_OK(gpubp_put(w, v, d, GPUBP_SYNC));
    TS_OK(gpubp_end_step(w));
    TS_OK(gpubp_close(w));
    const char *md0 = ts_join(path, "md.0");
    size_t len = 0;
    unsigned char *md = ts_read_file(md0, &len);
    assert_non_null(md);
    assert_true(patch_u64(md, len, n, huge) >= 2);            /* the count and the shape */
    assert_true(patch_u64(md, len, n * 8, huge * 8) >= 1);    /* the operator's raw size */
    assert_int_equal(ts_write_file(md0, md, len), 0);
    free(md);
    if (buffer) { /* the operator buffer's uncompressed size at its offset 4 */
        const char *d0 = ts_join(path, "data.0");
        md = ts_read_file(d0, &len);
        assert_non_null(md);
        assert_int_equal(patch_u64(md, len, n * 8, huge * 8), 1);
        assert_int_equal(ts_write_file(d0, md, len), 0);
        free(md);
    }
    gpubp_file *r;
    TS_OK(gpubp_open(&r, path, GPUBP_MODE_READ, NULL));
    TS_OK(gpubp_begin_step(r));
    gpubp_variable *x;
    TS_OK(gpubp_inquire_variable(&x, r, "v"));
    size_t st = 0, ct = 10;
    TS_OK(gpubp_set_selection(x, 1, &st, &ct));
    double box[10];
    assert_int_equal(gpubp_get(r, x, box, GPUBP_SYNC), GPUBP_ERR_FORMAT);
    if (!strstr(gpubp_last_error(), message)) print_error("%s\n", gpubp_last_error());
    assert_non_null(strstr(gpubp_last_error(), message));
    TS_OK(gpubp_end_step(r));
    TS_OK(gpubp_close(r));
    free(d);
}

static void test_damaged_count(void **state)
{
    (void)state;
    damaged_count("zcount.bp", 0, "uncompressed bytes");
    damaged_count("zcount2.bp", 1, "the chunks hold");
}

/* "NAME X.Y.Z" in v when `has`, else no "NAME " at all */
static void lib_listed(const char *v, const char *name, int has)
{
    char key[32];
    snprintf(key, sizeof key, "%s ", name);
    const char *at = strstr(v, key);
    if (!has) {
        assert_null(at);
        return;
    }
    assert_non_null(at);
    const char *d = at + strlen(key);
    assert_true(isdigit((unsigned char)d[0]));
    assert_non_null(strchr(d, '.')); /* a dotted version */
}

static void *versions_thread(void *arg)
{
    (void)arg;
    return (void *)gpubp_codec_versions();
}

/* gpubp_codec_versions: the running libraries, the ones this build has and no others */
static void test_codec_versions(void **state)
{
    (void)state;
    pthread_t t[4];
    for (int i = 0; i < 4; i++)
        assert_int_equal(pthread_create(&t[i], NULL, versions_thread, NULL), 0);
    const char *v = gpubp_codec_versions();
    for (int i = 0; i < 4; i++) {
        void *r = NULL;
        assert_int_equal(pthread_join(t[i], &r), 0);
        assert_ptr_equal(r, v); /* one static string, made once */
    }
    char zl[64];
    snprintf(zl, sizeof zl, "zlib %s", zlibVersion());
    assert_int_equal(strncmp(v, zl, strlen(zl)), 0); /* zlib first, as the process runs it */
    unsigned f = gpubp_features();
    lib_listed(v, "liblz4", (f & GPUBP_FEATURE_LZ4) != 0);
    lib_listed(v, "libzstd", (f & GPUBP_FEATURE_ZSTD) != 0);
    lib_listed(v, "libbz2", (f & GPUBP_FEATURE_BZIP2) != 0);
    assert_null(strchr(v, '\n'));
}

/* One block of t written with `op` ("none": uncompressed), its min/max bytes into mn, mx. */
static void block_minmax(gpubp_type t, const void *data, size_t n, const char *op, void *mn,
                         void *mx)
{
    const char *path = ts_path("zmm.bp");
    gpubp_file *w, *r;
    gpubp_variable *v;
    size_t shape[1] = {n}, start[1] = {0};
    TS_OK(gpubp_open(&w, path, GPUBP_MODE_WRITE, "split_mib=0"));
    TS_OK(gpubp_define_variable(&v, w, "x", t, 1, shape, start, shape));
    if (strcmp(op, "none")) TS_OK(gpubp_variable_add_operation(v, op, "threads=4"));
    TS_OK(gpubp_begin_step(w));
    TS_OK(gpubp_put(w, v, data, GPUBP_SYNC));
    TS_OK(gpubp_end_step(w));
    TS_OK(gpubp_close(w));
    TS_OK(gpubp_open(&r, path, GPUBP_MODE_READ_RANDOM_ACCESS, NULL));
    TS_OK(gpubp_inquire_variable(&v, r, "x"));
    TS_OK(gpubp_variable_block_info(v, 0, 0, NULL, NULL, mn, mx));
    TS_OK(gpubp_close(r));
}

/* The min/max of compressed host blocks is scanned by the compression threads in ranges, merged in
 * order: the bytes must be those of one pass (the uncompressed write's), the first smallest and
 * the last largest element, with signed zeros tied across ranges either way round, NaN first, in
 * the middle and last (one pass again), and for integers. */
static void test_minmax_threads(void **state)
{
    (void)state;
    size_t n = (size_t)3 << 20; /* 12 MiB of floats: ranges of 256 KiB on 4 threads */
    double *d = malloc(n * sizeof *d);
    float *f = malloc(n * sizeof *f);
    int32_t *k = malloc(n * sizeof *k);
    assert_non_null(d);
    assert_non_null(f);
    assert_non_null(k);
    for (int c = 0; c < 8; c++) {
        for (size_t i = 0; i < n; i++) {
            double x = -1.0 - sin(0.001 * (double)i); /* in [-2, 0] */
            d[i] = c >= 2 ? -x : x;
            k[i] = (int32_t)(x * 1e6) * (c % 2 ? -1 : 1);
        }
        /* ties of the extreme by signed zeros, in different ranges: the max of c 0/1 is 0 */
        d[100] = c % 2 ? -0.0 : 0.0;
        d[n / 2 + 7] = c % 2 ? 0.0 : -0.0;
        d[n - 3] = c % 2 ? -0.0 : 0.0;
        if (c >= 2) d[n / 3] = d[2 * n / 3] = 0.0 * (c % 2 ? -1 : 1); /* and the min of c 2, 3 */
        if (c == 4) d[0] = NAN;
        if (c == 5) d[n / 2] = NAN;
        if (c == 6) d[n - 1] = NAN;
        if (c == 7) d[n / 4] = d[3 * n / 4 + 1] = NAN;
        for (size_t i = 0; i < n; i++) f[i] = (float)d[i];
        static const gpubp_type ts[] = {GPUBP_TYPE_DOUBLE, GPUBP_TYPE_FLOAT, GPUBP_TYPE_INT32};
        const void *data[] = {d, f, k};
        for (int t = 0; t < 3; t++) {
            if (t == 2 && c >= 4) continue;
            uint8_t mn[2][16], mx[2][16];
            size_t es = gpubp_type_size(ts[t]);
            block_minmax(ts[t], data[t], n, "none", mn[0], mx[0]);
            block_minmax(ts[t], data[t], n, "blosclz", mn[1], mx[1]); /* in every build */
            if (memcmp(mn[0], mn[1], es) || memcmp(mx[0], mx[1], es))
                print_error("case %d type %d: min/max differ from one pass\n", c, (int)ts[t]);
            assert_memory_equal(mn[0], mn[1], es);
            assert_memory_equal(mx[0], mx[1], es);
        }
    }
    free(d);
    free(f);
    free(k);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_types_and_shuffles),
        cmocka_unit_test(test_file_default_2d),
        cmocka_unit_test(test_errors),
        cmocka_unit_test(test_damaged_count),
        cmocka_unit_test(test_boxes_of_rows),
        cmocka_unit_test(test_codec_versions),
        cmocka_unit_test(test_minmax_threads),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
