/* The BP5 device cases of device_cases.h (TC_ALL_CASES), kept apart for length: ADIOS2's bzip2
 * operator, and golden datasets rewritten as a big-endian writer's (tests/format/bp5_to_be.c) and
 * as a 32-bit writer's (bp5_to_32.c), read into device memory. Included by device_cases.h after
 * its helpers (td, tc_params, tc_dev_fill, tc_host_from); not on its own. */
#ifndef GPUBP_TEST_DEVICE_BP5_H
#define GPUBP_TEST_DEVICE_BP5_H

#include "compress/bzip2_op.h"
#include "format/bp5_to_32.h"
#include "format/bp5_to_be.h"

/* ---- BP5: ADIOS2's bzip2 operator and a big-endian writer, into device memory ----------------- */

/* Every global array of `path`, each step whole and from the middle of its first dimension on,
 * read into device memory equals the host read of `ref` (the same content, read on the host path
 * that test_interop_read_golden checks against bpls's dumps). Returns the arrays compared. */
static size_t tc_bp5_same(const char *ref, const char *path)
{
    gpubp_file *h, *g;
    TS_OK(gpubp_open(&h, ref, GPUBP_MODE_READ_RANDOM_ACCESS, NULL));
    TS_OK(gpubp_open(&g, path, GPUBP_MODE_READ_RANDOM_ACCESS, tc_params("gpu_layout=row_major")));
    size_t nv, done = 0;
    const char *const *names;
    TS_OK(gpubp_available_variables(h, &nv, &names));
    char **copy = calloc(nv + 1, sizeof *copy);
    for (size_t i = 0; i < nv; i++) copy[i] = strdup(names[i]);
    for (size_t i = 0; i < nv; i++) {
        gpubp_variable *vh, *vg;
        gpubp_shape_kind k;
        gpubp_type t;
        size_t nd, ns;
        TS_OK(gpubp_inquire_variable(&vh, h, copy[i]));
        TS_OK(gpubp_inquire_variable(&vg, g, copy[i]));
        TS_OK(gpubp_variable_shape_kind(vh, &k));
        TS_OK(gpubp_variable_type(vh, &t));
        TS_OK(gpubp_variable_ndims(vh, &nd));
        TS_OK(gpubp_variable_steps(vh, &ns));
        if (k != GPUBP_SHAPE_GLOBAL_ARRAY || t == GPUBP_TYPE_STRING || nd == 0 || nd > 8) continue;
        TS_OK(gpubp_set_memory_space(vg, GPUBP_MEM_GPU));
        for (size_t s = 0; s < ns; s++) {
            size_t dims[8], start[8] = {0}, count[8], bytes = 0, nb = 0;
            TS_OK(gpubp_set_step_selection(vh, s, 1));
            TS_OK(gpubp_set_step_selection(vg, s, 1));
            TS_OK(gpubp_variable_shape(vh, GPUBP_MEM_HOST, dims));
            for (int part = 0; part < 2; part++) {
                memcpy(count, dims, nd * sizeof *dims);
                start[0] = part ? dims[0] / 2 : 0;
                count[0] = dims[0] - start[0];
                TS_OK(gpubp_set_selection(vh, nd, start, count));
                TS_OK(gpubp_set_selection(vg, nd, start, count));
                TS_OK(gpubp_selection_size(vh, &bytes));
                TS_OK(gpubp_selection_size(vg, &nb));
                assert_int_equal(bytes, nb);
                if (!bytes) continue;
                /* both filled alike: a hole (a box no block of the step covers) is left as
                 * it was on both paths, as ADIOS2 leaves it */
                void *a = malloc(bytes), *d = tc_dev_fill(bytes, 0xA5);
                memset(a, 0xA5, bytes);
                TS_OK(gpubp_get(h, vh, a, GPUBP_SYNC));
                TS_OK(gpubp_get(g, vg, d, GPUBP_SYNC));
                unsigned char *b = tc_host_from(d, bytes);
                if (t != GPUBP_TYPE_LONG_DOUBLE) assert_memory_equal(a, b, bytes);
                for (size_t e = 0; t == GPUBP_TYPE_LONG_DOUBLE && e < bytes; e += 16)
                    assert_memory_equal((unsigned char *)a + e, b + e, 10); /* no padding */
                free(a);
                free(b);
                td->free(d);
            }
        }
        done++;
    }
    for (size_t i = 0; i < nv; i++) free(copy[i]);
    free(copy);
    TS_OK(gpubp_close(h));
    TS_OK(gpubp_close(g));
    return done;
}

static const char *tc_gold(const char *rel)
{
    static char p[4][4300];
    static int k;
    k = (k + 1) % 4;
    snprintf(p[k], sizeof p[k], "%s/%s", ts_golden_dir(), rel);
    return p[k];
}

/* bzip2/BP5/bzip2.bp (ADIOS2's bzip2 operator): into the device as on the host; `ints` step 0
 * starts -27 -20 (bpls -d) */
static void tc_bp5_bzip2(void **state)
{
    (void)state;
    if (!gbp_bzip2_available()) skip();
    const char *ds = tc_gold("bzip2/BP5/bzip2.bp");
    assert_int_equal(tc_bp5_same(ds, ds), 2);
    gpubp_file *f;
    gpubp_variable *v;
    TS_OK(gpubp_open(&f, ds, GPUBP_MODE_READ, tc_params(NULL)));
    TS_OK(gpubp_begin_step(f));
    TS_OK(gpubp_inquire_variable(&v, f, "ints"));
    TS_OK(gpubp_set_memory_space(v, GPUBP_MEM_GPU));
    int32_t *d = tc_dev_fill(1000 * sizeof(int32_t), 0xFF);
    TS_OK(gpubp_get(f, v, d, GPUBP_SYNC));
    int32_t *got = tc_host_from(d, 1000 * sizeof(int32_t));
    assert_int_equal(got[0], -27);
    assert_int_equal(got[1], -20);
    free(got);
    td->free(d);
    TS_OK(gpubp_end_step(f));
    TS_OK(gpubp_close(f));
}

/* bp3/ (ADIOS2's BP3 files, read as the BP4 dataset their index describes): every global array,
 * the blosc blocks of zlib, lz4 and zstd included, read into the device as on the host (which
 * cli_golden_bp3_* and test_api_bp3 check against bpls's dumps and the generator's formulas) */
static void tc_bp3(void **state)
{
    (void)state;
    static const char *sets[] = {"bp3/bp3_basic.bp", "bp3/bp3_types.bp", "bp3/bp3_zlib.bp",
                                 "bp3/bp3_lz4.bp", "bp3/bp3_zstd.bp",
                                 "bp3mpi/bp3mpi_n4_aggN.bp"};
    size_t arrays = 0, want = 0;
    for (size_t i = 0; i < sizeof sets / sizeof *sets; i++) {
        if ((strstr(sets[i], "lz4") && !(gpubp_features() & GPUBP_FEATURE_LZ4)) ||
            (strstr(sets[i], "zstd") && !(gpubp_features() & GPUBP_FEATURE_ZSTD)))
            continue;
        const char *ds = tc_gold(sets[i]);
        arrays += tc_bp5_same(ds, ds);
        /* a2d i1d u8 cplx late; one per type; sin; g2d i1d some z (4 writers, 4 subfiles) */
        want += i == 0 ? 5 : i == 1 ? 14 : i == 5 ? 4 : 1;
    }
    assert_int_equal(arrays, want);
}

/* Gets n doubles of v into device memory: element j must be a * j + b */
static void tc_get_linear(gpubp_file *f, gpubp_variable *v, size_t n, double a, double b)
{
    double *d = tc_dev_fill(n * sizeof(double), 0xFF);
    TS_OK(gpubp_get(f, v, d, GPUBP_SYNC));
    double *h = tc_host_from(d, n * sizeof(double));
    for (size_t j = 0; j < n; j++) assert_true(h[j] == a * (double)j + b);
    free(h);
    td->free(d);
}

/* selsteps/ (ADIOS2 2.12.1: g {4, 6} = 100 step + i, z {64} blosc zstd = i / 4 + step) opened with
 * select_steps=3 1, BP5 and BP4: the steps read into the device, in both read modes, are dataset
 * steps 1 and 3 */
static void tc_select_steps(void **state)
{
    (void)state;
    static const char *sets[] = {"selsteps/steps5.bp", "selsteps/steps4.bp"};
    int zstd = (gpubp_features() & GPUBP_FEATURE_ZSTD) != 0;
    for (size_t i = 0; i < 2; i++) {
        for (int ra = 1; ra >= 0; ra--) {
            gpubp_file *f;
            TS_OK(gpubp_open(&f, tc_gold(sets[i]),
                             ra ? GPUBP_MODE_READ_RANDOM_ACCESS : GPUBP_MODE_READ,
                             tc_params("select_steps=3 1")));
            for (size_t s = 0; s < 2; s++) {
                double k = s ? 3.0 : 1.0;
                if (!ra) TS_OK(gpubp_begin_step(f));
                gpubp_variable *g, *z;
                TS_OK(gpubp_inquire_variable(&g, f, "g"));
                TS_OK(gpubp_inquire_variable(&z, f, "z"));
                TS_OK(gpubp_set_memory_space(g, GPUBP_MEM_GPU));
                TS_OK(gpubp_set_memory_space(z, GPUBP_MEM_GPU));
                if (ra) {
                    TS_OK(gpubp_set_step_selection(g, s, 1));
                    TS_OK(gpubp_set_step_selection(z, s, 1));
                }
                tc_get_linear(f, g, 24, 1.0, 100.0 * k);
                if (zstd) tc_get_linear(f, z, 64, 0.25, k);
                if (!ra) TS_OK(gpubp_end_step(f));
            }
            if (!ra) assert_int_equal(gpubp_begin_step(f), GPUBP_END_OF_STREAM);
            TS_OK(gpubp_close(f));
        }
    }
}

/* structs/structs.bp (ADIOS2 BP5 struct variables): every global array, struct records
 * included (particles, grp/pairs, cplx), read into the device as on the host */
static void tc_bp5_structs(void **state)
{
    (void)state;
    const char *ds = tc_gold("structs/structs.bp");
    assert_int_equal(tc_bp5_same(ds, ds), 4);
}

/* One golden dataset per kind of content rewritten by `conv` into the scratch folder and read into
 * the device as the original on the host; returns the arrays compared. */
static size_t tc_bp5_converted(int (*conv)(const char *, const char *, char *, size_t),
                               const char *tag, const char *const *sets, size_t nsets)
{
    size_t arrays = 0;
    for (size_t i = 0; i < nsets; i++) {
        if (strstr(sets[i], "bzip2") && !gbp_bzip2_available()) continue;
        char dst[4200], why[512];
        snprintf(dst, sizeof dst, "%s/%s_%zu.bp", ts_tmpdir(), tag, i);
        if (conv(tc_gold(sets[i]), dst, why, sizeof why) != 0)
            fail_msg("%s: not converted: %s", sets[i], why);
        size_t n = tc_bp5_same(tc_gold(sets[i]), dst);
        assert_true(n >= 1);
        arrays += n;
    }
    return arrays;
}

/* Golden datasets rewritten as a big-endian writer's (tests/format/bp5_to_be.c: payloads, blosc
 * and bzip2 operator buffers, long double as binary128, struct records field by field) read into the device as the originals
 * on the host: values swapped (and decoded) on the way. */
static void tc_bp5_bigendian(void **state)
{
    (void)state;
    static const char *sets[] = {"BP5/steps_2d.bp", "BP5/types.bp", "codecs/BP5/zlib_shuffle.bp",
                                 "bp5/oracle/longdouble.bp", "bzip2/BP5/bzip2.bp",
                                 "structs/structs.bp"};
    size_t arrays = tc_bp5_converted(bp5_to_be, "be", sets, sizeof sets / sizeof *sets);
    assert_int_equal(ts_file_byte(ts_join(ts_path("be_0.bp"), "md.idx"), 36), 1);
    assert_true(arrays >= 8);
}

/* The same with a 32-bit writer's rewrites (tests/format/bp5_to_32.c: 4-byte pointers, i386
 * structure layouts, operator headers with 4-byte size_t fields): the blosc blocks take the
 * device decoding path once their header is in the 64-bit layout. */
static void tc_bp5_32bit(void **state)
{
    (void)state;
    static const char *sets[] = {"BP5/steps_2d.bp", "BP5/types.bp", "codecs/BP5/zlib_shuffle.bp",
                                 "bzip2/BP5/bzip2.bp", "structs/structs.bp"};
    assert_true(tc_bp5_converted(bp5_to_32, "w32", sets, sizeof sets / sizeof *sets) >= 10);
}

#endif
