/* gpubp_write_openpmd OUTDIR: writes through libgpubp's public C API the openPMD series of
 * tests/golden/generators/gen_openpmd.py (openpmd-api 0.17.1, file-based, BP4): OUTDIR/x_0.bp and
 * OUTDIR/x_1.bp, with every attribute openpmd-api writes (same names, types and element counts,
 * `long double` positions, string arrays) and the same variables (names, types, shapes, values).
 * Only /software, /softwareVersion and /date say who wrote it and when. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "gpubp.h"

static int failed;

static void ck(int rc, const char *what)
{
    if (rc != GPUBP_OK && !failed) {
        fprintf(stderr, "%s -> %d (%s): %s\n", what, rc, gpubp_strerror(rc), gpubp_last_error());
        failed = 1;
    }
}

static gpubp_file *f;
static char it[64]; /* "/data/N" */

static const char *path(const char *rel)
{
    static char p[4][512];
    static int k;
    k = (k + 1) & 3;
    snprintf(p[k], sizeof p[k], "%s/%s", it, rel);
    return p[k];
}

static void a_str(const char *name, const char *s) { ck(gpubp_define_attribute(f, name, GPUBP_TYPE_STRING, s, 1), name); }
static void a_strs(const char *name, const char *const *s, size_t n) { ck(gpubp_define_attribute(f, name, GPUBP_TYPE_STRING_ARRAY, s, n), name); }
static void a_f64(const char *name, const double *x, size_t n) { ck(gpubp_define_attribute(f, name, GPUBP_TYPE_DOUBLE, x, n), name); }
static void a_d(const char *name, double x) { a_f64(name, &x, 1); }
static void a_f32(const char *name, float x) { ck(gpubp_define_attribute(f, name, GPUBP_TYPE_FLOAT, &x, 1), name); }
static void a_u64(const char *name, uint64_t x) { ck(gpubp_define_attribute(f, name, GPUBP_TYPE_UINT64, &x, 1), name); }

static const double zero7[7] = {0, 0, 0, 0, 0, 0, 0};

/* a record's unitDimension and timeOffset, "<rec>/..." below the iteration */
static void record(const char *rec, const double *unit)
{
    char p[256];
    snprintf(p, sizeof p, "%s/unitDimension", rec);
    a_f64(path(p), unit, 7);
    snprintf(p, sizeof p, "%s/timeOffset", rec);
    a_f32(path(p), 0.0f);
}

static void array(const char *rel, gpubp_type type, size_t ndims, const size_t *shape, const void *data)
{
    gpubp_variable *v = NULL;
    size_t start[3] = {0, 0, 0};
    ck(gpubp_define_variable(&v, f, path(rel), type, ndims, shape, start, shape), rel);
    if (v) ck(gpubp_put(f, v, data, GPUBP_SYNC), rel);
}

static void mesh_attrs(const char *m, size_t nd, const char *const *labels, const double *spacing)
{
    char p[256];
    static const double off[3] = {0, 0, 0};
#define MP(leaf) (snprintf(p, sizeof p, "meshes/%s/%s", m, leaf), path(p))
    a_strs(MP("axisLabels"), labels, nd);
    a_str(MP("dataOrder"), "C");
    a_str(MP("geometry"), "cartesian");
    a_f64(MP("gridGlobalOffset"), off, nd);
    a_f64(MP("gridSpacing"), spacing, nd);
    a_d(MP("gridUnitSI"), 1.0);
    a_f32(MP("timeOffset"), 0.0f);
#undef MP
}

static void iteration(int step, const char *dir, const char *date)
{
    char file[4200];
    snprintf(file, sizeof file, "%s/x_%d.bp", dir, step);
    ck(gpubp_open(&f, file, GPUBP_MODE_WRITE, NULL), file);
    if (!f) return;
    snprintf(it, sizeof it, "/data/%d", step);
    ck(gpubp_begin_step(f), "begin_step");

    a_str("/basePath", "/data/%T/");
    a_str("/date", date);
    a_str("/iterationEncoding", "fileBased");
    a_str("/iterationFormat", "x_%T");
    a_str("/meshesPath", "meshes/");
    a_str("/openPMD", "1.1.0");
    uint32_t ext = 0;
    ck(gpubp_define_attribute(f, "/openPMDextension", GPUBP_TYPE_UINT32, &ext, 1), "openPMDextension");
    a_str("/particlesPath", "particles/");
    a_str("/software", "libgpubp");
    a_str("/softwareVersion", gpubp_version());
    a_u64("__openPMD_internal/openPMD2_adios2_schema", 0);
    uint8_t mod = 0;
    ck(gpubp_define_attribute(f, "__openPMD_internal/useModifiableAttributes", GPUBP_TYPE_UINT8, &mod, 1), "useModifiableAttributes");
    a_d(path("dt"), 0.5);
    a_d(path("time"), 0.5 * step);
    a_d(path("timeUnitSI"), 1.0);

    /* meshes E and B: x, y, z of 2x3x4 float64, positions long double */
    static const char *const xyz[3] = {"x", "y", "z"};
    static const double spacing3[3] = {1.0, 0.5, 0.25};
    static const double unit_e[7] = {1, 1, -3, -1, 0, 0, 0}, unit_b[7] = {0, 1, -2, -1, 0, 0, 0};
    for (int m = 0; m < 2; m++) {
        const char *name = m ? "B" : "E";
        char p[256];
        mesh_attrs(name, 3, xyz, spacing3);
        snprintf(p, sizeof p, "meshes/%s/unitDimension", name);
        a_f64(path(p), m ? unit_b : unit_e, 7);
        for (int k = 0; k < 3; k++) {
            double d[24];
            for (int i = 0; i < 24; i++) d[i] = (i - 7.5) * (k + 1) + 100 * step;
            size_t shape[3] = {2, 3, 4};
            snprintf(p, sizeof p, "meshes/%s/%s", name, xyz[k]);
            array(p, GPUBP_TYPE_DOUBLE, 3, shape, d);
            unsigned char pos[3][16];
            for (int j = 0; j < 3; j++) ck(gpubp_long_double_from_double(pos[j], j == k ? 0.5 : 0.0), "long double");
            snprintf(p, sizeof p, "meshes/%s/%s/position", name, xyz[k]);
            ck(gpubp_define_attribute(f, path(p), GPUBP_TYPE_LONG_DOUBLE, pos, 3), p);
            snprintf(p, sizeof p, "meshes/%s/%s/unitSI", name, xyz[k]);
            a_d(path(p), 1.0);
        }
    }
    /* mesh rho: a scalar 2x3 float32 */
    static const double spacing2[2] = {1.0, 1.0};
    float rho[6];
    for (int i = 0; i < 6; i++) rho[i] = (float)(i * 0.5 + step);
    size_t shape2[2] = {2, 3};
    array("meshes/rho", GPUBP_TYPE_FLOAT, 2, shape2, rho);
    mesh_attrs("rho", 2, xyz, spacing2);
    a_d(path("meshes/rho/position"), 0.0);
    a_f64(path("meshes/rho/unitDimension"), zero7, 7);
    a_d(path("meshes/rho/unitSI"), 1.0);

    /* particles e: 5 particles */
    static const double unit_l[7] = {1, 0, 0, 0, 0, 0, 0};
    size_t n5 = 5;
    record("particles/e/position", unit_l);
    record("particles/e/positionOffset", unit_l);
    record("particles/e/momentum", zero7);
    for (int k = 0; k < 3; k++) {
        char p[256];
        double pos[5];
        float mom[5];
        for (int i = 0; i < 5; i++) {
            pos[i] = i / 4.0 + k + step; /* numpy.linspace(0, 1, 5) + k + step */
            mom[i] = (float)((i - 2) * (k + 1)) * 1e-3f;
        }
        snprintf(p, sizeof p, "particles/e/position/%s", xyz[k]);
        array(p, GPUBP_TYPE_DOUBLE, 1, &n5, pos);
        snprintf(p, sizeof p, "particles/e/position/%s/unitSI", xyz[k]);
        a_d(path(p), 1.0);
        snprintf(p, sizeof p, "particles/e/momentum/%s", xyz[k]);
        array(p, GPUBP_TYPE_FLOAT, 1, &n5, mom);
        snprintf(p, sizeof p, "particles/e/momentum/%s/unitSI", xyz[k]);
        a_d(path(p), 1.0);
        /* a constant record component: value and shape attributes, no variable */
        int64_t zero = 0;
        snprintf(p, sizeof p, "particles/e/positionOffset/%s/value", xyz[k]);
        ck(gpubp_define_attribute(f, path(p), GPUBP_TYPE_INT64, &zero, 1), p);
        snprintf(p, sizeof p, "particles/e/positionOffset/%s/shape", xyz[k]);
        a_u64(path(p), 5);
        snprintf(p, sizeof p, "particles/e/positionOffset/%s/unitSI", xyz[k]);
        a_d(path(p), 1.0);
    }
    double w[5] = {2.5, 2.5, 2.5, 2.5, 2.5};
    array("particles/e/weighting", GPUBP_TYPE_DOUBLE, 1, &n5, w);
    record("particles/e/weighting", zero7);
    a_d(path("particles/e/weighting/unitSI"), 1.0);
    static const char *const consts[2] = {"charge", "mass"};
    static const double cval[2] = {-1.602176634e-19, 9.1093837e-31};
    for (int c = 0; c < 2; c++) {
        char p[256];
        snprintf(p, sizeof p, "particles/e/%s", consts[c]);
        record(p, zero7);
        snprintf(p, sizeof p, "particles/e/%s/value", consts[c]);
        a_d(path(p), cval[c]);
        snprintf(p, sizeof p, "particles/e/%s/shape", consts[c]);
        a_u64(path(p), 5);
        snprintf(p, sizeof p, "particles/e/%s/unitSI", consts[c]);
        a_d(path(p), 1.0);
    }
    ck(gpubp_end_step(f), "end_step");
    ck(gpubp_close(f), "close");
    f = NULL;
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: %s OUTDIR\n", argv[0]);
        return 2;
    }
    char date[64];
    time_t now = time(NULL);
    strftime(date, sizeof date, "%Y-%m-%d %H:%M:%S +0000", gmtime(&now));
    for (int step = 0; step < 2; step++) iteration(step, argv[1], date);
    return failed;
}
