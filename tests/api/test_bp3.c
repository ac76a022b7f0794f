/* ADIOS2's BP3 files (its engine "BP3": NAME.bp, the index of every step, and the data in
 * NAME.bp.dir/NAME.bp.K): tests/golden/bp3, written by tests/golden/generators/make_bp3.cpp with
 * ADIOS2 2.12.1. Every value is computed here from the generator's formulas, in both read modes;
 * then damaged and foreign files: never a crash, always a status with a message, and the data of
 * an intact index still read. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "support/api_util.h"

static const char *gold(const char *name)
{
    static char p[2][4300];
    static int k;
    k ^= 1;
    snprintf(p[k], sizeof p[k], "%s/bp3/%s", ts_golden_dir(), name);
    return p[k];
}

/* reads v's step s (random access: a step selection; READ: the current step) into buf */
static void get_step(gpubp_file *f, gpubp_variable *v, int ra, size_t s, void *buf)
{
    if (ra) TS_OK(gpubp_set_step_selection(v, s, 1));
    TS_OK(gpubp_get(f, v, buf, GPUBP_SYNC));
}

static void check_basic_step(gpubp_file *f, int ra, size_t s)
{
    /* a2d {4, 5}: two blocks of two rows, 100 s + 10 blk + k + 0.5 */
    gpubp_variable *v = au_inq(f, "a2d");
    size_t all0[2] = {0, 0}, all[2] = {4, 5};
    TS_OK(gpubp_set_selection(v, 2, all0, all));
    double a[20];
    get_step(f, v, ra, s, a);
    for (int i = 0; i < 20; i++) assert_true(a[i] == 100.0 * s + 10 * (i / 10) + i % 10 + 0.5);
    size_t start[2] = {1, 2}, count[2] = {2, 3}; /* a box across both blocks */
    TS_OK(gpubp_set_selection(v, 2, start, count));
    double b[6];
    get_step(f, v, ra, s, b);
    for (int r = 0; r < 2; r++)
        for (int c = 0; c < 3; c++) {
            int i = (1 + r) * 5 + 2 + c;
            assert_true(b[3 * r + c] == 100.0 * s + 10 * (i / 10) + i % 10 + 0.5);
        }
    size_t nb = 0;
    TS_OK(gpubp_variable_blocks(v, ra ? s : 0, &nb));
    assert_int_equal(nb, 2);
    size_t bs[2], bc[2];
    double mn, mx;
    TS_OK(gpubp_variable_block_info(v, ra ? s : 0, 1, bs, bc, &mn, &mx));
    assert_true(bs[0] == 2 && bs[1] == 0 && bc[0] == 2 && bc[1] == 5);
    assert_true(mn == 100.0 * s + 10.5 && mx == 100.0 * s + 19.5);
    /* i1d {6}: 1000 s - 7 k */
    int32_t iv[6];
    get_step(f, au_inq(f, "i1d"), ra, s, iv);
    for (int k = 0; k < 6; k++) assert_int_equal(iv[k], 1000 * (int)s - 7 * k);
    /* gval: (s - 1) 10^10 */
    int64_t g = 0;
    get_step(f, au_inq(f, "gval"), ra, s, &g);
    assert_true(g == ((int64_t)s - 1) * 10000000000LL);
    /* local_f: one block of 3 floats, 0.25 k - s */
    gpubp_variable *lf = au_inq(f, "local_f");
    gpubp_shape_kind kind;
    TS_OK(gpubp_variable_shape_kind(lf, &kind));
    assert_int_equal(kind, GPUBP_SHAPE_LOCAL_ARRAY);
    TS_OK(gpubp_set_block_selection(lf, 0));
    float lv[3];
    get_step(f, lf, ra, s, lv);
    for (int k = 0; k < 3; k++) assert_true(lv[k] == 0.25f * k - (float)s);
    /* local_v: 42 + s */
    int32_t l = 0;
    gpubp_variable *lvv = au_inq(f, "local_v");
    TS_OK(gpubp_variable_shape_kind(lvv, &kind));
    assert_int_equal(kind, GPUBP_SHAPE_LOCAL_VALUE);
    TS_OK(gpubp_set_block_selection(lvv, 0));
    get_step(f, lvv, ra, s, &l);
    assert_int_equal(l, 42 + (int)s);
    /* str: "step S" */
    gpubp_variable *sv = au_inq(f, "str");
    char str[32] = {0}, want[32];
    size_t n = 0;
    if (ra) TS_OK(gpubp_set_step_selection(sv, s, 1));
    TS_OK(gpubp_selection_size(sv, &n));
    assert_true(n > 0 && n <= sizeof str);
    get_step(f, sv, ra, s, str);
    snprintf(want, sizeof want, "step %zu", s);
    assert_string_equal(str, want);
    /* u8 {5}: 250 + k - s; cplx {3}: (k + 0.5 s, -k) */
    uint8_t u[5];
    get_step(f, au_inq(f, "u8"), ra, s, u);
    for (int k = 0; k < 5; k++) assert_int_equal(u[k], 250 + k - (int)s);
    double z[6];
    get_step(f, au_inq(f, "cplx"), ra, s, z);
    for (int k = 0; k < 3; k++) assert_true(z[2 * k] == k + 0.5 * s && z[2 * k + 1] == -1.0 * k);
}

static void check_basic_attributes(const gpubp_file *f)
{
    double d = 0;
    TS_OK(gpubp_attribute_data(f, "att_double", &d));
    assert_true(d == 3.25);
    int32_t ia[4];
    gpubp_type t;
    size_t n;
    int is_array;
    TS_OK(gpubp_inquire_attribute(f, "att_ints", &t, &n, &is_array));
    assert_true(t == GPUBP_TYPE_INT32 && n == 4 && is_array);
    TS_OK(gpubp_attribute_data(f, "att_ints", ia));
    assert_true(ia[0] == -1 && ia[1] == 2 && ia[2] == -3 && ia[3] == 4);
    const char *s;
    TS_OK(gpubp_attribute_string(f, "att_str", 0, &s));
    assert_string_equal(s, "hello bp3");
    TS_OK(gpubp_inquire_attribute(f, "att_strs", &t, &n, &is_array));
    assert_true(t == GPUBP_TYPE_STRING && n == 3 && is_array);
    TS_OK(gpubp_attribute_string(f, "att_strs", 2, &s));
    assert_string_equal(s, "three");
    TS_OK(gpubp_attribute_string(f, "a2d/units", 0, &s));
    assert_string_equal(s, "m/s");
}

static void test_basic(void **state)
{
    (void)state;
    /* random access */
    gpubp_file *f = au_open(gold("bp3_basic.bp"), GPUBP_MODE_READ_RANDOM_ACCESS);
    size_t ns = 0, nv = 0;
    TS_OK(gpubp_steps(f, &ns));
    assert_int_equal(ns, 3);
    const char *const *names;
    TS_OK(gpubp_available_variables(f, &nv, &names));
    assert_int_equal(nv, 9);
    for (size_t s = 0; s < 3; s++) check_basic_step(f, 1, s);
    gpubp_variable *late = au_inq(f, "late");
    au_var_steps(late, 2); /* steps 1 and 2 only: its own steps 0 and 1 */
    double l[2];
    get_step(f, late, 1, 1, l);
    assert_true(l[0] == 3.0 && l[1] == -3.0);
    check_basic_attributes(f);
    TS_OK(gpubp_close(f));
    /* step by step */
    f = au_open(gold("bp3_basic.bp"), GPUBP_MODE_READ);
    for (size_t s = 0; s < 3; s++) {
        TS_OK(gpubp_begin_step(f));
        check_basic_step(f, 0, s);
        gpubp_variable *v = NULL;
        int rc = gpubp_inquire_variable(&v, f, "late");
        if (s == 0) {
            assert_int_equal(rc, GPUBP_ERR_NOT_FOUND);
        } else {
            TS_OK(rc);
            TS_OK(gpubp_get(f, v, l, GPUBP_SYNC));
            assert_true(l[0] == 1.5 * s && l[1] == -1.5 * s);
        }
        check_basic_attributes(f);
        TS_OK(gpubp_end_step(f));
    }
    assert_int_equal(gpubp_begin_step(f), GPUBP_END_OF_STREAM);
    TS_OK(gpubp_close(f));
}

static void test_types(void **state)
{
    (void)state;
    gpubp_file *f = au_open(gold("bp3_types.bp"), GPUBP_MODE_READ_RANDOM_ACCESS);
    int8_t i8[5];
    TS_OK(gpubp_get(f, au_inq(f, "i8"), i8, GPUBP_SYNC));
    assert_true(i8[0] == -128 && i8[1] == -1 && i8[4] == 127);
    int64_t i64[5];
    TS_OK(gpubp_get(f, au_inq(f, "i64"), i64, GPUBP_SYNC));
    assert_true(i64[0] == INT64_MIN && i64[4] == INT64_MAX);
    uint64_t u64[5];
    TS_OK(gpubp_get(f, au_inq(f, "u64"), u64, GPUBP_SYNC));
    assert_true(u64[2] == 9223372036854775807ull && u64[4] == UINT64_MAX);
    uint16_t u16[5];
    TS_OK(gpubp_get(f, au_inq(f, "u16"), u16, GPUBP_SYNC));
    assert_true(u16[3] == 32768 && u16[4] == 65535);
    float f32[5];
    TS_OK(gpubp_get(f, au_inq(f, "f32"), f32, GPUBP_SYNC));
    assert_true(f32[0] == -1.5f && f32[3] == 3.0e10f && f32[4] == -1.0e-10f);
    double f64[5];
    TS_OK(gpubp_get(f, au_inq(f, "f64"), f64, GPUBP_SYNC));
    assert_true(f64[3] == 3.0e100 && f64[4] == -1.0e-100);
    double mn, mx;
    TS_OK(gpubp_variable_minmax(au_inq(f, "f64"), &mn, &mx));
    assert_true(mn == -1.5 && mx == 3.0e100);
    long double f128[5];
    gpubp_type t;
    TS_OK(gpubp_variable_type(au_inq(f, "f128"), &t));
    assert_int_equal(t, GPUBP_TYPE_LONG_DOUBLE);
    TS_OK(gpubp_get(f, au_inq(f, "f128"), f128, GPUBP_SYNC));
    assert_true(f128[0] == -1.5L && f128[2] == 0.25L && f128[3] == 3.0e100L);
    float c64[6];
    TS_OK(gpubp_get(f, au_inq(f, "c64"), c64, GPUBP_SYNC));
    assert_true(c64[0] == 1.0f && c64[1] == -1.0f && c64[3] == 2.0f && c64[4] == -3.0f);
    double c128[6];
    TS_OK(gpubp_get(f, au_inq(f, "c128"), c128, GPUBP_SYNC));
    assert_true(c128[2] == 0.5 && c128[3] == 2.0);
    char ch[5];
    TS_OK(gpubp_get(f, au_inq(f, "ch"), ch, GPUBP_SYNC));
    assert_memory_equal(ch, "BP3 z", 5);
    TS_OK(gpubp_close(f));
}

/* the blosc files: round(1024 sin(k / 1000 + s)) / 1024, whole steps and a box */
static void test_compressed(void **state)
{
    (void)state;
    static const char *files[] = {"bp3_zlib.bp", "bp3_lz4.bp", "bp3_zstd.bp"};
    static const unsigned need[] = {0, GPUBP_FEATURE_LZ4, GPUBP_FEATURE_ZSTD};
    double *d = malloc(100000 * sizeof *d);
    assert_non_null(d);
    int read = 0;
    for (int c = 0; c < 3; c++) {
        if ((gpubp_features() & need[c]) != need[c]) continue;
        gpubp_file *f = au_open(gold(files[c]), GPUBP_MODE_READ_RANDOM_ACCESS);
        gpubp_variable *v = au_inq(f, "sin");
        for (size_t s = 0; s < 2; s++) {
            get_step(f, v, 1, s, d);
            for (size_t k = 0; k < 100000; k++)
                if (d[k] != round(1024 * sin((double)k * 1e-3 + (double)s)) / 1024)
                    fail_msg("%s step %zu value %zu: %.17g", files[c], s, k, d[k]);
        }
        size_t start = 49990, count = 20;
        TS_OK(gpubp_set_selection(v, 1, &start, &count));
        get_step(f, v, 1, 1, d);
        for (size_t k = 0; k < count; k++)
            assert_true(d[k] == round(1024 * sin((double)(start + k) * 1e-3 + 1.0)) / 1024);
        TS_OK(gpubp_close(f));
        read++;
    }
    assert_true(read >= 1); /* zlib is always there */
    free(d);
}

/* steps without puts (ADIOS2's BP3 writer leaves them out of the PG index; the blocks of later
 * steps count them): presented as empty steps, as BP4 and BP5 writers keep them */
static void test_empty_steps(void **state)
{
    (void)state;
    gpubp_file *f = au_open(gold("bp3_gap0011.bp"), GPUBP_MODE_READ_RANDOM_ACCESS);
    size_t ns = 0;
    TS_OK(gpubp_steps(f, &ns));
    assert_int_equal(ns, 4);
    gpubp_variable *v = au_inq(f, "a");
    au_var_steps(v, 2);
    double d[2];
    for (size_t s = 0; s < 2; s++) {
        get_step(f, v, 1, s, d);
        assert_true(d[0] == s + 2.5 && d[1] == -(s + 2.5));
    }
    TS_OK(gpubp_close(f));
    f = au_open(gold("bp3_gap101.bp"), GPUBP_MODE_READ);
    for (size_t s = 0; s < 3; s++) {
        TS_OK(gpubp_begin_step(f));
        size_t nv = 0;
        const char *const *names;
        TS_OK(gpubp_available_variables(f, &nv, &names));
        assert_int_equal(nv, s == 1 ? 0 : 1);
        if (s != 1) {
            TS_OK(gpubp_get(f, au_inq(f, "a"), d, GPUBP_SYNC));
            assert_true(d[0] == s + 0.5 && d[1] == -(s + 0.5));
        }
        TS_OK(gpubp_end_step(f));
    }
    assert_int_equal(gpubp_begin_step(f), GPUBP_END_OF_STREAM);
    TS_OK(gpubp_close(f));
}

/* ---- damaged and foreign files --------------------------------------------------------------- */

static void copy_file(const char *from, const char *to)
{
    size_t n = 0;
    unsigned char *b = ts_read_file(from, &n);
    assert_non_null(b);
    assert_int_equal(ts_write_file(to, b, n), 0);
    free(b);
}

static void put_file(const char *to, const void *b, size_t n)
{
    assert_int_equal(ts_write_file(to, b, n), 0);
}

/* a copy of bp3_basic (the index file and its data subfile) in the scratch folder */
static const char *copy_basic(const char *name, int with_data)
{
    static char p[4300];
    char dir[4400], sub[4500];
    snprintf(p, sizeof p, "%s/%s.bp", ts_tmpdir(), name);
    copy_file(gold("bp3_basic.bp"), p);
    if (with_data) {
        snprintf(dir, sizeof dir, "%s.dir", p);
        assert_int_equal(mkdir(dir, 0755) == 0 || ts_exists(dir), 1);
        snprintf(sub, sizeof sub, "%s/%s.bp.0", dir, name);
        copy_file(gold("bp3_basic.bp.dir/bp3_basic.bp.0"), sub);
    }
    return p;
}

/* opens path and, if that works, lists and reads every variable of every step: any status, no
 * crash; returns the open's status */
static int open_and_read_all(const char *path)
{
    gpubp_file *f = NULL;
    int rc = gpubp_open(&f, path, GPUBP_MODE_READ_RANDOM_ACCESS, NULL);
    if (rc != GPUBP_OK) {
        assert_null(f);
        assert_true(strlen(gpubp_last_error()) > 0);
        return rc;
    }
    size_t nv = 0;
    const char *const *names;
    if (gpubp_available_variables(f, &nv, &names) == GPUBP_OK) {
        char **copy = calloc(nv + 1, sizeof *copy);
        for (size_t i = 0; i < nv; i++) copy[i] = strdup(names[i]);
        for (size_t i = 0; i < nv; i++) {
            gpubp_variable *v;
            size_t ns = 0, bytes = 0;
            if (gpubp_inquire_variable(&v, f, copy[i]) != GPUBP_OK) continue;
            if (gpubp_variable_steps(v, &ns) != GPUBP_OK) continue;
            for (size_t s = 0; s < ns && s < 8; s++) {
                if (gpubp_set_step_selection(v, s, 1) != GPUBP_OK) continue;
                if (gpubp_selection_size(v, &bytes) != GPUBP_OK || bytes > (1u << 20)) continue;
                void *buf = malloc(bytes ? bytes : 1);
                (void)gpubp_get(f, v, buf, GPUBP_SYNC);
                free(buf);
            }
        }
        for (size_t i = 0; i < nv; i++) free(copy[i]);
        free(copy);
    }
    TS_OK(gpubp_close(f));
    return GPUBP_OK;
}

static void test_damaged(void **state)
{
    (void)state;
    size_t n = 0;
    unsigned char *orig = ts_read_file(gold("bp3_basic.bp"), &n);
    assert_non_null(orig);
    const char *p = copy_basic("dmg", 1);
    /* cut short at every length: the footer is gone or points past the end */
    for (size_t len = 0; len < n; len++) {
        put_file(p, orig, len);
        int rc = open_and_read_all(p);
        /* cut inside the index, the last 56 bytes may read as a footer of another kind */
        assert_true(rc == GPUBP_ERR_NOT_BP4 || rc == GPUBP_ERR_FORMAT ||
                    rc == GPUBP_ERR_NOT_SUPPORTED);
    }
    /* every byte of the index changed: a status or the data, never a crash */
    unsigned char *b = malloc(n);
    for (size_t i = 0; i < n; i++) {
        memcpy(b, orig, n);
        b[i] ^= (unsigned char)(i % 3 == 0 ? 0xFF : i % 3 == 1 ? 0x01 : 0x80);
        put_file(p, b, n);
        (void)open_and_read_all(p);
    }
    /* the footer's version byte: ADIOS 1.x's versions 1 and 2 are named, others foreign */
    memcpy(b, orig, n);
    b[n - 1] = 2;
    put_file(p, b, n);
    assert_int_equal(open_and_read_all(p), GPUBP_ERR_NOT_SUPPORTED);
    assert_non_null(strstr(gpubp_last_error(), "ADIOS 1.x"));
    b[n - 1] = 4;
    put_file(p, b, n);
    assert_int_equal(open_and_read_all(p), GPUBP_ERR_NOT_BP4);
    /* big-endian writers */
    memcpy(b, orig, n);
    b[n - 4] = 1;
    put_file(p, b, n);
    assert_int_equal(open_and_read_all(p), GPUBP_ERR_NOT_SUPPORTED);
    assert_non_null(strstr(gpubp_last_error(), "big-endian"));
    /* index offsets out of order */
    memcpy(b, orig, n);
    memcpy(b + n - 20, b + n - 28, 8); /* the variable index where the PG index is */
    put_file(p, b, n);
    assert_int_equal(open_and_read_all(p), GPUBP_ERR_FORMAT);
    assert_non_null(strstr(gpubp_last_error(), "mini-footer"));
    /* a block of a time step that no process group has: the first variable entry's first set
     * (u32 entry length, u32 member id, group and name as u16 + bytes, path, type, u64 set
     * count; the set's u8 count and u32 length, then its time index: id 8, u32) */
    memcpy(b, orig, n);
    uint64_t var;
    memcpy(&var, b + n - 20, 8);
    size_t at = (size_t)var + 12 + 8;
    at += 2 + (size_t)(b[at] | b[at + 1] << 8);
    at += 2 + (size_t)(b[at] | b[at + 1] << 8);
    at += 2 + 1 + 8 + 1 + 4;
    assert_int_equal(b[at], 8);
    assert_int_equal(b[at + 1], 1); /* step 1 */
    b[at + 1] = 9;
    put_file(p, b, n);
    assert_int_equal(open_and_read_all(p), GPUBP_ERR_FORMAT);
    assert_non_null(strstr(gpubp_last_error(), "time step 9"));
    put_file(p, orig, n);
    assert_int_equal(open_and_read_all(p), GPUBP_OK);
    free(b);
    free(orig);
}

static void test_foreign_and_missing(void **state)
{
    (void)state;
    /* a file that is no BP file at all, and an empty one */
    char p[4300];
    snprintf(p, sizeof p, "%s/foreign.bp", ts_tmpdir());
    unsigned char junk[200];
    for (int i = 0; i < 200; i++) junk[i] = (unsigned char)(i * 37 + 11);
    put_file(p, junk, sizeof junk);
    gpubp_file *f = NULL;
    TS_ERR(gpubp_open(&f, p, GPUBP_MODE_READ_RANDOM_ACCESS, NULL), GPUBP_ERR_NOT_BP4);
    assert_non_null(strstr(gpubp_last_error(), "BP3"));
    put_file(p, junk, 0);
    TS_ERR(gpubp_open(&f, p, GPUBP_MODE_READ, NULL), GPUBP_ERR_NOT_BP4);
    /* the data subfile missing: the index opens, the reads fail naming the missing file */
    const char *q = copy_basic("nodata", 0);
    f = au_open(q, GPUBP_MODE_READ_RANDOM_ACCESS);
    double a[20];
    TS_ERR(gpubp_get(f, au_inq(f, "a2d"), a, GPUBP_SYNC), GPUBP_ERR_FORMAT);
    assert_non_null(strstr(gpubp_last_error(), "nodata.bp.dir/nodata.bp.0"));
    TS_OK(gpubp_close(f));
    /* BP3 files are read only: writers refuse the path and leave the file as it was */
    size_t n0 = 0, n1 = 0;
    unsigned char *before = ts_read_file(q, &n0);
    TS_ERR(gpubp_open(&f, q, GPUBP_MODE_APPEND, NULL), GPUBP_ERR_NOT_BP4);
    TS_ERR(gpubp_open(&f, q, GPUBP_MODE_WRITE, NULL), GPUBP_ERR_NOT_BP4);
    unsigned char *after = ts_read_file(q, &n1);
    assert_true(before && after && n0 == n1 && n0 > 56);
    assert_memory_equal(before, after, n0);
    free(before);
    free(after);
    /* a damaged compressed block: FORMAT naming the subfile, the variable and the block */
    char zdir[4400], zsub[4500], zp[4300];
    snprintf(zp, sizeof zp, "%s/zdmg.bp", ts_tmpdir());
    copy_file(gold("bp3_zlib.bp"), zp);
    snprintf(zdir, sizeof zdir, "%s.dir", zp);
    assert_int_equal(mkdir(zdir, 0755) == 0 || ts_exists(zdir), 1);
    snprintf(zsub, sizeof zsub, "%s/zdmg.bp.0", zdir);
    size_t zn = 0;
    unsigned char *z = ts_read_file(gold("bp3_zlib.bp.dir/bp3_zlib.bp.0"), &zn);
    assert_true(z && zn > 20000);
    memset(z + 2000, 0xEE, 4000); /* inside the first step's operator buffer */
    put_file(zsub, z, zn);
    free(z);
    f = au_open(zp, GPUBP_MODE_READ_RANDOM_ACCESS);
    double *d = malloc(100000 * sizeof *d);
    TS_ERR(gpubp_get(f, au_inq(f, "sin"), d, GPUBP_SYNC), GPUBP_ERR_FORMAT);
    assert_non_null(strstr(gpubp_last_error(), "zdmg.bp.dir/zdmg.bp.0: 'sin': block at offset"));
    free(d);
    TS_OK(gpubp_close(f));
    /* NAME for NAME.bp, as ADIOS2's BP3 reader opens it */
    char noext[4300];
    snprintf(noext, sizeof noext, "%s/bp3/bp3_basic", ts_golden_dir());
    f = au_open(noext, GPUBP_MODE_READ_RANDOM_ACCESS);
    check_basic_step(f, 1, 2);
    TS_OK(gpubp_close(f));
    /* the subfile itself is a BP3 file without subfiles (its footer's flag 0): its index
     * locates the data in the file itself */
    f = au_open(gold("bp3_basic.bp.dir/bp3_basic.bp.0"), GPUBP_MODE_READ_RANDOM_ACCESS);
    for (size_t s = 0; s < 3; s++) check_basic_step(f, 1, s);
    TS_OK(gpubp_close(f));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_basic),
        cmocka_unit_test(test_types),
        cmocka_unit_test(test_compressed),
        cmocka_unit_test(test_empty_steps),
        cmocka_unit_test(test_damaged),
        cmocka_unit_test(test_foreign_and_missing),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
