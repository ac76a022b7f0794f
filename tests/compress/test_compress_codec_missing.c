/* A build without liblz4 or libzstd (issue 22 item 1; CI builds one: -DGPUBP_USE_LZ4=OFF
 * -DGPUBP_USE_ZSTD=OFF): the codec it lacks is refused where it is asked for, at gpubp_open
 * (compress=CODEC) and at gpubp_variable_add_operation, with GPUBP_ERR_CODEC and a message naming
 * the codec and the missing library, never at a later write; reading a chunk of that codec
 * (tests/golden/ours-codecs) is GPUBP_ERR_CODEC naming both too. In a build that has the library
 * the same calls succeed and the file reads back. gpubp_features() says which case applies. */
#include "support/api_util.h"

#include <stdio.h>
#include <string.h>

static const struct {
    const char *codec, *lib;
    unsigned feature;
} cases[] = {{"lz4", "liblz4", GPUBP_FEATURE_LZ4},
             {"lz4hc", "liblz4", GPUBP_FEATURE_LZ4},
             {"zstd", "libzstd", GPUBP_FEATURE_ZSTD}};
#define NCASES (sizeof cases / sizeof *cases)

static void expect_codec_error(int rc, const char *codec, const char *lib, const char *where)
{
    if (rc != GPUBP_ERR_CODEC)
        fail_msg("%s with %s: status %d (%s), expected GPUBP_ERR_CODEC", where, codec, rc,
                 gpubp_strerror(rc));
    const char *msg = gpubp_last_error();
    char quoted[32];
    snprintf(quoted, sizeof quoted, "%s codec", codec);
    if (!strstr(msg, quoted) || !strstr(msg, lib))
        fail_msg("%s with %s: message '%s' does not name the codec and %s", where, codec, msg,
                 lib);
}

static void test_open_param(void **state)
{
    (void)state;
    unsigned feat = gpubp_features();
    for (size_t i = 0; i < NCASES; i++) {
        char params[64];
        snprintf(params, sizeof params, "compress=%s,compress_shuffle=byte", cases[i].codec);
        const char *path = ts_path("missing_open.bp");
        gpubp_file *w = NULL;
        int rc = gpubp_open(&w, path, GPUBP_MODE_WRITE, params);
        if (!(feat & cases[i].feature)) {
            expect_codec_error(rc, cases[i].codec, cases[i].lib, "gpubp_open");
            continue;
        }
        TS_OK(rc);
        gpubp_variable *v;
        size_t n = 4096, z = 0;
        TS_OK(gpubp_define_variable(&v, w, "x", GPUBP_TYPE_DOUBLE, 1, &n, &z, &n));
        static double d[4096], back[4096];
        for (size_t k = 0; k < n; k++) d[k] = 0.5 * (double)(k % 100);
        ts_put_step(w, v, d, GPUBP_SYNC);
        gpubp_variable *x;
        gpubp_file *r = au_close_inq(w, path, "x", &x);
        TS_OK(gpubp_get(r, x, back, GPUBP_SYNC));
        assert_memory_equal(back, d, sizeof d);
        TS_OK(gpubp_close(r));
    }
}

static void test_add_operation(void **state)
{
    (void)state;
    unsigned feat = gpubp_features();
    gpubp_file *w;
    TS_OK(gpubp_open(&w, ts_path("missing_op.bp"), GPUBP_MODE_WRITE, NULL));
    for (size_t i = 0; i < NCASES; i++) {
        gpubp_variable *v;
        char name[16];
        snprintf(name, sizeof name, "v%zu", i);
        size_t n = 100, z = 0;
        TS_OK(gpubp_define_variable(&v, w, name, GPUBP_TYPE_FLOAT, 1, &n, &z, &n));
        int rc = gpubp_variable_add_operation(v, cases[i].codec, "level=1");
        if (feat & cases[i].feature) TS_OK(rc);
        else expect_codec_error(rc, cases[i].codec, cases[i].lib, "gpubp_variable_add_operation");
    }
    TS_OK(gpubp_close(w));
}

static void test_read_chunk(void **state)
{
    (void)state;
    unsigned feat = gpubp_features();
    for (size_t i = 0; i < NCASES; i++) {
        char name[64];
        snprintf(name, sizeof name, "ours-codecs/%s_byte.bp", cases[i].codec);
        gpubp_file *r;
        TS_OK(gpubp_open(&r, ts_join(ts_golden_dir(), name), GPUBP_MODE_READ_RANDOM_ACCESS,
                         NULL));
        gpubp_variable *x;
        TS_OK(gpubp_inquire_variable(&x, r, "ints"));
        TS_OK(gpubp_set_step_selection(x, 0, 1));
        int32_t got[1000];
        int rc = gpubp_get(r, x, got, GPUBP_SYNC);
        if (feat & cases[i].feature) {
            TS_OK(rc);
            for (int k = 0; k < 1000; k++) assert_int_equal(got[k], (k * 7) % 97 - 40);
        } else {
            /* the reader names the chunk's codec format: lz4hc chunks are lz4 streams */
            expect_codec_error(rc, strcmp(cases[i].codec, "zstd") ? "lz4" : "zstd",
                               cases[i].lib, "gpubp_get");
        }
        TS_OK(gpubp_close(r));
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_open_param),
        cmocka_unit_test(test_add_operation),
        cmocka_unit_test(test_read_chunk),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
