/* Writes with libgpubp the content that tests/golden/localvals/README.md's ADIOS2 program wrote
 * with ADIOS2 2.12.1 (localvals.bp, longdouble.bp, strattrs.bp): local values of seven types
 * (strings and long double included) with four blocks per step, one absent from a step and with a
 * changing block count; long double arrays, values, local arrays and attributes; single strings
 * and one-element string arrays.
 * Usage: gpubp_write_localvals OUTDIR [PARAMS]
 * A standalone program, so that ADIOS2's bpls and Python bindings can read its output; the
 * interop test compares it with ADIOS2's files through libgpubp. Long double values are x86-64
 * `long double`: on other platforms it exits 77 (skipped). */
#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gpubp.h"
#include "interop/writer_ck.h"

static const char *outdir, *params;

static gpubp_file *op(const char *name)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", outdir, name);
    gpubp_file *f = NULL;
    CK(gpubp_open(&f, path, GPUBP_MODE_WRITE, params));
    return f;
}

static gpubp_variable *local_value(gpubp_file *f, const char *name, gpubp_type t)
{
    const size_t lv[1] = {GPUBP_LOCAL_VALUE_DIM};
    gpubp_variable *v;
    CK(gpubp_define_variable(&v, f, name, t, 1, lv, NULL, NULL));
    return v;
}

static void localvals(void)
{
    gpubp_file *f = op("localvals.bp");
    gpubp_variable *vi = local_value(f, "lv_i32", GPUBP_TYPE_INT32);
    gpubp_variable *vd = local_value(f, "lv_f64", GPUBP_TYPE_DOUBLE);
    gpubp_variable *vu = local_value(f, "lv_u8", GPUBP_TYPE_UINT8);
    gpubp_variable *vc = local_value(f, "lv_c128", GPUBP_TYPE_DOUBLE_COMPLEX);
    gpubp_variable *vs = local_value(f, "lv_str", GPUBP_TYPE_STRING);
    gpubp_variable *vp = local_value(f, "lv_sparse", GPUBP_TYPE_INT64);
    gpubp_variable *vl = local_value(f, "lv_ld", GPUBP_TYPE_LONG_DOUBLE);
    gpubp_variable *g;
    CK(gpubp_define_variable(&g, f, "step", GPUBP_TYPE_INT32, 0, NULL, NULL, NULL));
    for (int s = 0; s < 3; s++) {
        CK(gpubp_begin_step(f));
        int32_t gs = s;
        CK(gpubp_put(f, g, &gs, GPUBP_SYNC));
        for (int b = 0; b < 4; b++) {
            int32_t i = 100 * (s + 1) + 7 * b - 13;
            double d = 0.5 * s - 1.25 * b + 1e-3;
            uint8_t u = (uint8_t)(250 + b - s);
            double c[2] = {s + b, -b};
            char str[32];
            snprintf(str, sizeof str, "w%ds%d", b, s);
            long double l = (long double)(s * 4 + b) / 3.0L;
            CK(gpubp_put(f, vi, &i, GPUBP_SYNC));
            CK(gpubp_put(f, vd, &d, GPUBP_SYNC));
            CK(gpubp_put(f, vu, &u, GPUBP_SYNC));
            CK(gpubp_put(f, vc, c, GPUBP_SYNC));
            CK(gpubp_put(f, vs, str, GPUBP_SYNC));
            CK(gpubp_put(f, vl, &l, GPUBP_SYNC));
        }
        if (s != 1)
            for (int b = 0; b < (s == 0 ? 3 : 2); b++) {
                int64_t p = -1000000000000LL * (b + 1) + s;
                CK(gpubp_put(f, vp, &p, GPUBP_SYNC));
            }
        CK(gpubp_end_step(f));
    }
    CK(gpubp_close(f));
}

static void longdouble(void)
{
    gpubp_file *f = op("longdouble.bp");
    const size_t n = 6, zero = 0, three = 3;
    gpubp_variable *va, *vv, *vloc;
    CK(gpubp_define_variable(&va, f, "ld_arr", GPUBP_TYPE_LONG_DOUBLE, 1, &n, &zero, &n));
    CK(gpubp_define_variable(&vv, f, "ld_value", GPUBP_TYPE_LONG_DOUBLE, 0, NULL, NULL, NULL));
    CK(gpubp_define_variable(&vloc, f, "ld_local", GPUBP_TYPE_LONG_DOUBLE, 1, NULL, NULL, &three));
    long double a1 = 0.1L, pos[3] = {0.0L, 0.5L, 1.0L / 3.0L}, half = 0.5L;
    CK(gpubp_define_attribute(f, "ld_attr", GPUBP_TYPE_LONG_DOUBLE, &a1, 1));
    CK(gpubp_define_attribute(f, "ld_attr_arr", GPUBP_TYPE_LONG_DOUBLE, pos, 3));
    CK(gpubp_define_variable_attribute(f, "ld_arr", "position", GPUBP_TYPE_LONG_DOUBLE, &half, 1));
    for (int s = 0; s < 2; s++) {
        CK(gpubp_begin_step(f));
        long double a[6] = {1.0L / 3.0L + s, -0.0L, HUGE_VALL, -LDBL_TRUE_MIN, 1e4000L, -2.5L * s};
        CK(gpubp_put(f, va, a, GPUBP_SYNC));
        long double v = (long double)(s + 1) / 7.0L;
        CK(gpubp_put(f, vv, &v, GPUBP_SYNC));
        long double l[3] = {1.0L + s, 2.0L, 3.0L};
        CK(gpubp_put(f, vloc, l, GPUBP_SYNC));
        CK(gpubp_end_step(f));
    }
    CK(gpubp_close(f));
}

static void strattrs(void)
{
    gpubp_file *f = op("strattrs.bp");
    const char *one[1] = {"only element"}, *two[2] = {"first", "second"}, *empty1[1] = {""};
    int32_t i42 = 42;
    CK(gpubp_define_attribute(f, "single", GPUBP_TYPE_STRING, "one string", 1));
    CK(gpubp_define_attribute(f, "array1", GPUBP_TYPE_STRING_ARRAY, one, 1));
    CK(gpubp_define_attribute(f, "array2", GPUBP_TYPE_STRING, two, 2));
    CK(gpubp_define_attribute(f, "array1_empty", GPUBP_TYPE_STRING_ARRAY, empty1, 1));
    CK(gpubp_define_attribute(f, "single_empty", GPUBP_TYPE_STRING, "", 1));
    CK(gpubp_define_attribute(f, "int_array1", GPUBP_TYPE_INT32, &i42, 1));
    CK(gpubp_define_attribute(f, "int_single", GPUBP_TYPE_INT32, &i42, 1));
    const size_t two_n = 2, zero = 0;
    gpubp_variable *x;
    CK(gpubp_define_variable(&x, f, "x", GPUBP_TYPE_DOUBLE, 1, &two_n, &zero, &two_n));
    CK(gpubp_define_variable_attribute(f, "x", "unitSI_names", GPUBP_TYPE_STRING_ARRAY, one, 1));
    CK(gpubp_begin_step(f));
    double xv[2] = {1, 2};
    CK(gpubp_put(f, x, xv, GPUBP_SYNC));
    CK(gpubp_end_step(f));
    CK(gpubp_close(f));
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: %s OUTDIR [PARAMS]\n", argv[0]);
        return 2;
    }
#if LDBL_MANT_DIG != 64
    fprintf(stderr, "%s: long double is not the x87 80-bit format here\n", argv[0]);
    return 77;
#endif
    outdir = argv[1];
    params = argc > 2 ? argv[2] : NULL;
    localvals();
    longdouble();
    strattrs();
    return 0;
}
