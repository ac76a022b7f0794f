/* tests/golden/ours-codecs: files libgpubp wrote with every codec x shuffle, and their
 * uncompressed twin, kept with ADIOS2 2.12.1's bpls outputs (tests/golden/README.md).
 *
 *   test_compress_ours_golden            the tests below (the data in GPUBP_GOLDEN_DIR)
 *   test_compress_ours_golden --write D  writes the 16 datasets into D (how the golden files
 *                                        were made; bpls then ran on them)
 *
 * Each dataset: 3 steps of 11 variables: several types, a block of three Blosc2 chunks (the
 * chunk cut of gbp_blosc_set_max_chunk, as a block over 2 GiB is cut), blocks that do not
 * compress (random 64-bit words), an all-zero block, a block under 128 bytes, a global array
 * in two blocks, a local array, and a shape that changes from step to step. Codec from
 * {blosclz, lz4, lz4hc, zlib, zstd}, shuffle {byte, bit, none}; level 1, level 9 with bit
 * shuffle (as tests/golden/codecs); plain.bp: the same without compression.
 *
 * Tests: (a) our reader reads every value of every file exactly (the values are computed here
 * again); (b) is the cli suite (cli_golden_ourscodecs_*: gpubpls vs the kept bpls outputs);
 * (c) the kept `bpls -d` and `bpls -D` outputs of each compressed file equal those of plain.bp,
 * that is, ADIOS2 reads our compressed files as the uncompressed one. */
#include "support/test_support.h"

#include "compress/blosczlib.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NSTEPS 3
#define MAX_CHUNK 64000 /* bytes per Blosc2 chunk in these files: `big` is 3 chunks */

static const char *const codecs[] = {"blosclz", "lz4", "lz4hc", "zlib", "zstd"};
static const char *const shuffles[] = {"byte", "bit", "none"};
#define NCODECS (sizeof codecs / sizeof *codecs)
#define NSHUF (sizeof shuffles / sizeof *shuffles)

typedef enum { K_GLOBAL, K_LOCAL } kind;
typedef struct {
    const char *name;
    gpubp_type type;
    kind kind;
    size_t ndims;
    size_t shape[2][NSTEPS]; /* per dimension, per step (global); count of a block (local) */
    size_t blocks;          /* blocks per step, cut along dimension 0 */
} var_def;

static const var_def vars[] = {
    {"smooth", GPUBP_TYPE_DOUBLE, K_GLOBAL, 2, {{64, 64, 64}, {100, 100, 100}}, 2},
    {"big", GPUBP_TYPE_DOUBLE, K_GLOBAL, 1, {{20000, 20000, 20000}}, 1},
    {"noise", GPUBP_TYPE_UINT64, K_GLOBAL, 1, {{2000, 2000, 2000}}, 1},
    {"ints", GPUBP_TYPE_INT32, K_GLOBAL, 1, {{1000, 1000, 1000}}, 1},
    {"shorts", GPUBP_TYPE_INT16, K_GLOBAL, 1, {{777, 777, 777}}, 1},
    {"bytes", GPUBP_TYPE_UINT8, K_GLOBAL, 1, {{500, 500, 500}}, 1},
    {"tiny", GPUBP_TYPE_FLOAT, K_GLOBAL, 1, {{7, 7, 7}}, 1},
    {"cplx", GPUBP_TYPE_FLOAT_COMPLEX, K_GLOBAL, 1, {{300, 300, 300}}, 1},
    {"zeros", GPUBP_TYPE_INT64, K_GLOBAL, 1, {{1000, 1000, 1000}}, 1},
    {"changing", GPUBP_TYPE_FLOAT, K_GLOBAL, 1, {{300, 450, 200}}, 1},
    {"loc", GPUBP_TYPE_DOUBLE, K_LOCAL, 1, {{500, 500, 500}}, 2},
};
#define NVARS (sizeof vars / sizeof *vars)

static size_t elems(const var_def *d, unsigned s)
{
    size_t n = 1;
    for (size_t k = 0; k < d->ndims; k++) n *= d->shape[k][s];
    return n * (d->kind == K_LOCAL ? d->blocks : 1);
}

/* The values of variable d in step s (all blocks, in order), into buf. */
static void values(const var_def *d, unsigned s, void *buf)
{
    size_t n = elems(d, s);
    uint64_t x = 0x9E3779B97F4A7C15ull * (s + 1);
    for (size_t i = 0; i < n; i++) {
        double k = (double)i;
        if (!strcmp(d->name, "smooth")) {
            size_t r = i / 100, c = i % 100;
            ((double *)buf)[i] = sin(0.05 * (double)r) * cos(0.03 * (double)c) + s;
        } else if (!strcmp(d->name, "big")) {
            ((double *)buf)[i] = round(sin(1e-4 * k) * 64e3) / 64 + s; /* 1/64 steps */
        } else if (!strcmp(d->name, "noise")) {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            ((uint64_t *)buf)[i] = x;
        } else if (!strcmp(d->name, "ints")) {
            ((int32_t *)buf)[i] = (int32_t)((i * 7 + s) % 97) - 40;
        } else if (!strcmp(d->name, "shorts")) {
            ((int16_t *)buf)[i] = (int16_t)((int)i * 3 - 1000 + (int)s);
        } else if (!strcmp(d->name, "bytes")) {
            ((uint8_t *)buf)[i] = (uint8_t)(i * i + s);
        } else if (!strcmp(d->name, "tiny")) {
            ((float *)buf)[i] = (float)(k + s + 0.5);
        } else if (!strcmp(d->name, "cplx")) {
            ((float *)buf)[2 * i] = (float)cos(0.1 * k);
            ((float *)buf)[2 * i + 1] = (float)(sin(0.1 * k) * s);
        } else if (!strcmp(d->name, "zeros")) {
            ((int64_t *)buf)[i] = 0;
        } else if (!strcmp(d->name, "changing")) {
            ((float *)buf)[i] = (float)(0.25 * k - s);
        } else { /* loc */
            ((double *)buf)[i] = (double)(i / 500) * 1000 + 0.001 * (double)(i % 500) + s;
        }
    }
}

static void *alloc_values(const var_def *d, unsigned s)
{
    void *p = malloc(elems(d, s) * gpubp_type_size(d->type));
    assert_non_null(p);
    values(d, s, p);
    return p;
}

/* Writes one dataset: codec NULL = plain.bp */
static int write_one(const char *dir, const char *codec, const char *shuffle)
{
    char path[4096], params[128] = "";
    if (codec) {
        snprintf(path, sizeof path, "%s/%s_%s.bp", dir, codec, shuffle);
        snprintf(params, sizeof params, "compress=%s,compress_shuffle=%s,compress_level=%d",
                 codec, shuffle, strcmp(shuffle, "bit") ? 1 : 9);
    } else {
        snprintf(path, sizeof path, "%s/plain.bp", dir);
    }
    gpubp_file *w;
    if (gpubp_open(&w, path, GPUBP_MODE_WRITE, params) != GPUBP_OK) return -1;
    gpubp_variable *v[NVARS];
    for (size_t k = 0; k < NVARS; k++) {
        const var_def *d = &vars[k];
        size_t shape[2], start[2] = {0, 0}, count[2];
        for (size_t j = 0; j < d->ndims; j++) shape[j] = count[j] = d->shape[j][0];
        count[0] /= d->kind == K_GLOBAL ? d->blocks : 1;
        if (gpubp_define_variable(&v[k], w, d->name, d->type, d->ndims,
                                  d->kind == K_GLOBAL ? shape : NULL, start, count) != GPUBP_OK)
            return -1;
    }
    for (unsigned s = 0; s < NSTEPS; s++) {
        if (gpubp_begin_step(w) != GPUBP_OK) return -1;
        void *data[NVARS];
        for (size_t k = 0; k < NVARS; k++) {
            const var_def *d = &vars[k];
            data[k] = alloc_values(d, s);
            size_t shape[2], start[2] = {0, 0}, count[2];
            for (size_t j = 0; j < d->ndims; j++) shape[j] = count[j] = d->shape[j][s];
            if (d->kind == K_GLOBAL && gpubp_set_shape(v[k], d->ndims, shape) != GPUBP_OK)
                return -1;
            if (d->kind == K_GLOBAL) count[0] /= d->blocks;
            size_t bbytes = elems(d, s) / d->blocks * gpubp_type_size(d->type);
            for (size_t b = 0; b < d->blocks; b++) {
                start[0] = d->kind == K_GLOBAL ? b * count[0] : 0;
                if (gpubp_set_selection(v[k], d->ndims, start, count) != GPUBP_OK ||
                    gpubp_put(w, v[k], (char *)data[k] + b * bbytes, GPUBP_SYNC) != GPUBP_OK)
                    return -1;
            }
        }
        int rc = gpubp_end_step(w);
        for (size_t k = 0; k < NVARS; k++) free(data[k]);
        if (rc != GPUBP_OK) return -1;
    }
    return gpubp_close(w) == GPUBP_OK ? 0 : -1;
}

static int write_all(const char *dir)
{
    gbp_blosc_set_max_chunk(MAX_CHUNK);
    int rc = write_one(dir, NULL, NULL);
    for (size_t c = 0; c < NCODECS && !rc; c++)
        for (size_t m = 0; m < NSHUF && !rc; m++) rc = write_one(dir, codecs[c], shuffles[m]);
    gbp_blosc_set_max_chunk(0);
    if (rc) fprintf(stderr, "write: %s\n", gpubp_last_error());
    return rc ? 1 : 0;
}

static const char *dataset(const char *codec, const char *shuffle)
{
    char name[64];
    if (codec) snprintf(name, sizeof name, "ours-codecs/%s_%s.bp", codec, shuffle);
    else snprintf(name, sizeof name, "ours-codecs/plain.bp");
    return ts_join(ts_golden_dir(), name);
}

/* 0: the build lacks the codec's library (the file is then refused: test_compress_codec_missing) */
static int have_codec(const char *codec)
{
    unsigned f = gpubp_features();
    if (!strncmp(codec, "lz4", 3)) return (f & GPUBP_FEATURE_LZ4) != 0;
    if (!strcmp(codec, "zstd")) return (f & GPUBP_FEATURE_ZSTD) != 0;
    return 1;
}

static void check_dataset(const char *path)
{
    gpubp_file *r;
    TS_OK(gpubp_open(&r, path, GPUBP_MODE_READ_RANDOM_ACCESS, NULL));
    size_t nsteps;
    TS_OK(gpubp_steps(r, &nsteps));
    assert_int_equal(nsteps, NSTEPS);
    for (size_t k = 0; k < NVARS; k++) {
        const var_def *d = &vars[k];
        gpubp_variable *x;
        TS_OK(gpubp_inquire_variable(&x, r, d->name));
        for (unsigned s = 0; s < NSTEPS; s++) {
            size_t es = gpubp_type_size(d->type), n = elems(d, s);
            void *want = alloc_values(d, s), *got = malloc(n * es);
            assert_non_null(got);
            memset(got, 0xA5, n * es);
            TS_OK(gpubp_set_step_selection(x, s, 1));
            if (d->kind == K_GLOBAL) {
                size_t start[2] = {0, 0}, count[2];
                for (size_t j = 0; j < d->ndims; j++) count[j] = d->shape[j][s];
                TS_OK(gpubp_set_selection(x, d->ndims, start, count));
                TS_OK(gpubp_get(r, x, got, GPUBP_SYNC));
            } else {
                for (size_t b = 0; b < d->blocks; b++) {
                    TS_OK(gpubp_set_block_selection(x, b));
                    TS_OK(gpubp_get(r, x, (char *)got + b * (n / d->blocks) * es, GPUBP_SYNC));
                }
            }
            if (memcmp(got, want, n * es)) fail_msg("%s: %s step %u differs", path, d->name, s);
            free(want);
            free(got);
        }
    }
    TS_OK(gpubp_close(r));
}

/* (a) every value of every file, exactly */
static void test_read_exact(void **state)
{
    (void)state;
    check_dataset(dataset(NULL, NULL));
    for (size_t c = 0; c < NCODECS; c++)
        for (size_t m = 0; m < NSHUF; m++)
            if (have_codec(codecs[c])) check_dataset(dataset(codecs[c], shuffles[m]));
}

static char *slurp(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f) fail_msg("cannot open %s", path);
    char *buf = NULL;
    size_t cap = 0, n = 0;
    for (;;) {
        if (n == cap) {
            cap = cap ? 2 * cap : 65536;
            buf = realloc(buf, cap);
            assert_non_null(buf);
        }
        size_t got = fread(buf + n, 1, cap - n, f);
        if (got == 0) break;
        n += got;
    }
    fclose(f);
    *len = n;
    return buf;
}

/* (c) ADIOS2's bpls prints the same values (-d) and blocks (-D) for each compressed file as for
 * the uncompressed one. The files differ only in the name bpls prints for -D's header, if any:
 * none does, so the outputs are compared whole. */
static void test_bpls_twins(void **state)
{
    (void)state;
    const char *modes[] = {"d", "blocks"};
    for (size_t md = 0; md < 2; md++) {
        char name[256];
        snprintf(name, sizeof name, "%s.%s.txt", dataset(NULL, NULL), modes[md]);
        size_t plen;
        char *plain = slurp(name, &plen);
        assert_true(plen > 1000); /* every variable's values or blocks */
        for (size_t c = 0; c < NCODECS; c++)
            for (size_t m = 0; m < NSHUF; m++) {
                snprintf(name, sizeof name, "%s.%s.txt", dataset(codecs[c], shuffles[m]),
                         modes[md]);
                size_t len;
                char *out = slurp(name, &len);
                if (len != plen || memcmp(out, plain, plen))
                    fail_msg("%s differs from plain.bp's bpls output", name);
                free(out);
            }
        free(plain);
    }
}

/* The compressed files are compressed: each is smaller than plain.bp (data.0), and larger than
 * the random words, which no codec shrinks. */
static void test_sizes(void **state)
{
    (void)state;
    char name[4096];
    snprintf(name, sizeof name, "%s/data.0", dataset(NULL, NULL));
    size_t plen;
    free(slurp(name, &plen));
    assert_string_equal(vars[2].name, "noise");
    size_t noise = 0;
    for (unsigned st = 0; st < NSTEPS; st++) noise += elems(&vars[2], st) * 8;
    for (size_t c = 0; c < NCODECS; c++)
        for (size_t m = 0; m < NSHUF; m++) {
            snprintf(name, sizeof name, "%s/data.0", dataset(codecs[c], shuffles[m]));
            size_t len;
            free(slurp(name, &len));
            if (!(len < plen && len > noise))
                fail_msg("%s: %zu bytes, plain.bp %zu", name, len, plen);
        }
}

int main(int argc, char **argv)
{
    if (argc == 3 && !strcmp(argv[1], "--write")) return write_all(argv[2]);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_read_exact),
        cmocka_unit_test(test_bpls_twins),
        cmocka_unit_test(test_sizes),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
