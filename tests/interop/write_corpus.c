/* Writes with libgpubp the content that tests/golden/generators/make_corpus.c writes with ADIOS2:
 * steps_2d.bp, local.bp, types.bp, changing_3d.bp and appended.bp (colmajor.bp needs a
 * column-major writer, which the API does not have).
 * Usage: gpubp_write_corpus OUTDIR SEED
 * A standalone program so that ADIOS2's bpls can be run on its output and diffed with the
 * golden text of ADIOS2's own files. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "gpubp.h"
#include "interop/writer_ck.h"

static const char *outdir;
static unsigned seed;
static int failures;

static gpubp_file *op(const char *name, gpubp_mode mode)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", outdir, name);
    gpubp_file *f = NULL;
    CK(gpubp_open(&f, path, mode, NULL));
    return f;
}

/* 1: global 2D float array in 2 blocks per step, scalars, strings, attributes, 3 steps */
static void steps_2d(void)
{
    gpubp_file *e = op("steps_2d.bp", GPUBP_MODE_WRITE);
    size_t shape[2] = {4, 6}, start[2] = {0, 0}, count[2] = {2, 6};
    gpubp_variable *T, *P, *N, *S;
    CK(gpubp_define_variable(&T, e, "temperature", GPUBP_TYPE_FLOAT, 2, shape, start, count));
    size_t s1[1] = {10}, st1[1] = {0}, c1[1] = {10};
    CK(gpubp_define_variable(&P, e, "physics/pressure", GPUBP_TYPE_DOUBLE, 1, s1, st1, c1));
    CK(gpubp_define_variable(&N, e, "step", GPUBP_TYPE_INT32, 0, NULL, NULL, NULL));
    CK(gpubp_define_variable(&S, e, "note", GPUBP_TYPE_STRING, 0, NULL, NULL, NULL));
    CK(gpubp_define_attribute(e, "unit", GPUBP_TYPE_STRING, "kelvin", 1));
    double dt = 0.25 * seed;
    CK(gpubp_define_attribute(e, "dt", GPUBP_TYPE_DOUBLE, &dt, 1));
    int32_t dims[3] = {4, 6, (int32_t)seed};
    CK(gpubp_define_attribute(e, "dims", GPUBP_TYPE_INT32, dims, 3));
    const char *names[2] = {"x", "y"};
    CK(gpubp_define_attribute(e, "axes", GPUBP_TYPE_STRING, names, 2));
    CK(gpubp_define_variable_attribute(e, "temperature", "description", GPUBP_TYPE_STRING,
                                       "surface temperature", 1));
    for (int step = 0; step < 3; step++) {
        CK(gpubp_begin_step(e));
        float blk[2][12];
        for (int b = 0; b < 2; b++) {
            for (int i = 0; i < 12; i++) blk[b][i] = (float)(100 * step + 12 * b + i) + 0.5f * seed;
            size_t stt[2] = {2 * (size_t)b, 0};
            CK(gpubp_set_selection(T, 2, stt, count));
            CK(gpubp_put(e, T, blk[b], GPUBP_SYNC));
        }
        double p[10];
        for (int i = 0; i < 10; i++) p[i] = step * 1.5 + i * 0.1 * seed;
        CK(gpubp_put(e, P, p, GPUBP_SYNC));
        int32_t n = step * 10 + (int32_t)seed;
        CK(gpubp_put(e, N, &n, GPUBP_SYNC));
        char note[64];
        snprintf(note, sizeof note, "step %d of seed %u", step, seed);
        CK(gpubp_put(e, S, note, GPUBP_SYNC));
        CK(gpubp_end_step(e));
    }
    CK(gpubp_close(e));
}

/* 2: local arrays (no shape), varying block counts and sizes */
static void local_arrays(void)
{
    gpubp_file *e = op("local.bp", GPUBP_MODE_WRITE);
    size_t c[1] = {1}, c2[2] = {1, 3};
    gpubp_variable *L, *L2;
    CK(gpubp_define_variable(&L, e, "particles", GPUBP_TYPE_INT64, 1, NULL, NULL, c));
    CK(gpubp_define_variable(&L2, e, "pos", GPUBP_TYPE_UINT16, 2, NULL, NULL, c2));
    for (int step = 0; step < 2; step++) {
        CK(gpubp_begin_step(e));
        for (int b = 0; b < 3; b++) {
            size_t n = (size_t)(b + 1 + step + seed % 3);
            int64_t *v = malloc(n * sizeof *v);
            for (size_t i = 0; i < n; i++) v[i] = -1000 * (int64_t)b + (int64_t)i * (step + 1) + seed;
            size_t cc[1] = {n};
            CK(gpubp_set_selection(L, 1, NULL, cc));
            CK(gpubp_put(e, L, v, GPUBP_SYNC));
            free(v);
            uint16_t *u = malloc(n * 3 * sizeof *u);
            for (size_t i = 0; i < n * 3; i++) u[i] = (uint16_t)(i + 7 * b + step + seed);
            size_t cc2[2] = {n, 3};
            CK(gpubp_set_selection(L2, 2, NULL, cc2));
            CK(gpubp_put(e, L2, u, GPUBP_SYNC));
            free(u);
        }
        CK(gpubp_end_step(e));
    }
    CK(gpubp_close(e));
}

/* 3: one 1D array of every numeric type + scalars of every type */
static void types(void)
{
    struct {
        const char *n;
        gpubp_type t;
        size_t sz;
    } ty[] = {
        {"i8", GPUBP_TYPE_INT8, 1},    {"i16", GPUBP_TYPE_INT16, 2},
        {"i32", GPUBP_TYPE_INT32, 4},  {"i64", GPUBP_TYPE_INT64, 8},
        {"u8", GPUBP_TYPE_UINT8, 1},   {"u16", GPUBP_TYPE_UINT16, 2},
        {"u32", GPUBP_TYPE_UINT32, 4}, {"u64", GPUBP_TYPE_UINT64, 8},
        {"f32", GPUBP_TYPE_FLOAT, 4},  {"f64", GPUBP_TYPE_DOUBLE, 8},
        {"c64", GPUBP_TYPE_FLOAT_COMPLEX, 8}, {"c128", GPUBP_TYPE_DOUBLE_COMPLEX, 16},
    };
    enum { NT = sizeof ty / sizeof ty[0], LEN = 5 };
    gpubp_file *e = op("types.bp", GPUBP_MODE_WRITE);
    gpubp_variable *arr[NT], *sc[NT];
    size_t sh[1] = {LEN}, st0[1] = {0};
    for (int k = 0; k < NT; k++) {
        char nm[64];
        snprintf(nm, sizeof nm, "array/%s", ty[k].n);
        CK(gpubp_define_variable(&arr[k], e, nm, ty[k].t, 1, sh, st0, sh));
        snprintf(nm, sizeof nm, "scalar/%s", ty[k].n);
        CK(gpubp_define_variable(&sc[k], e, nm, ty[k].t, 0, NULL, NULL, NULL));
    }
    CK(gpubp_begin_step(e));
    for (int k = 0; k < NT; k++) {
        unsigned char buf[LEN * 16];
        for (int i = 0; i < LEN; i++) {
            long long iv = (long long)(i * 3 + seed) * ((k % 2) ? 1 : -1);
            unsigned long long uv = (unsigned long long)(i * 3 + seed) * 1000003ull;
            double dv = i * 0.125 - 1.0 * seed;
            unsigned char *p = buf + i * ty[k].sz;
            switch (ty[k].t) {
            case GPUBP_TYPE_INT8: { int8_t x = (int8_t)iv; memcpy(p, &x, 1); break; }
            case GPUBP_TYPE_INT16: { int16_t x = (int16_t)(iv * 100); memcpy(p, &x, 2); break; }
            case GPUBP_TYPE_INT32: { int32_t x = (int32_t)(iv * 100000); memcpy(p, &x, 4); break; }
            case GPUBP_TYPE_INT64: { int64_t x = iv * 10000000000ll; memcpy(p, &x, 8); break; }
            case GPUBP_TYPE_UINT8: { uint8_t x = (uint8_t)uv; memcpy(p, &x, 1); break; }
            case GPUBP_TYPE_UINT16: { uint16_t x = (uint16_t)uv; memcpy(p, &x, 2); break; }
            case GPUBP_TYPE_UINT32: { uint32_t x = (uint32_t)uv; memcpy(p, &x, 4); break; }
            case GPUBP_TYPE_UINT64: { uint64_t x = uv * 1000000007ull; memcpy(p, &x, 8); break; }
            case GPUBP_TYPE_FLOAT: { float x = (float)dv; memcpy(p, &x, 4); break; }
            case GPUBP_TYPE_DOUBLE: { double x = dv / 3.0; memcpy(p, &x, 8); break; }
            case GPUBP_TYPE_FLOAT_COMPLEX: {
                float x[2] = {(float)dv, (float)-i};
                memcpy(p, x, 8);
                break;
            }
            case GPUBP_TYPE_DOUBLE_COMPLEX: {
                double x[2] = {dv, i + 0.5};
                memcpy(p, x, 16);
                break;
            }
            default: break;
            }
        }
        CK(gpubp_put(e, arr[k], buf, GPUBP_SYNC));
        CK(gpubp_put(e, sc[k], buf + 2 * ty[k].sz, GPUBP_SYNC));
    }
    CK(gpubp_end_step(e));
    CK(gpubp_close(e));
}

/* 5: shape that changes every step, 3D blocks on a 2x2x1 decomposition */
static void changing_3d(void)
{
    gpubp_file *e = op("changing_3d.bp", GPUBP_MODE_WRITE);
    size_t shape[3] = {2, 2, 4}, start[3] = {0, 0, 0}, count[3] = {1, 1, 4};
    gpubp_variable *V;
    CK(gpubp_define_variable(&V, e, "v3", GPUBP_TYPE_FLOAT, 3, shape, start, count));
    for (int step = 0; step < 4; step++) {
        CK(gpubp_begin_step(e));
        size_t nz = (size_t)(step + 1 + seed % 2);
        size_t sh[3] = {2, 2, nz};
        CK(gpubp_set_shape(V, 3, sh));
        for (size_t bi = 0; bi < 2; bi++)
            for (size_t bj = 0; bj < 2; bj++) {
                float *b = malloc(nz * sizeof *b);
                for (size_t k = 0; k < nz; k++) b[k] = (float)(1000 * step + 100 * bi + 10 * bj + k + seed);
                size_t stt[3] = {bi, bj, 0}, cnt[3] = {1, 1, nz};
                CK(gpubp_set_selection(V, 3, stt, cnt));
                CK(gpubp_put(e, V, b, GPUBP_SYNC));
                free(b);
            }
        CK(gpubp_end_step(e));
    }
    CK(gpubp_close(e));
}

/* 6: appended in a second open, plus a larger array for throughput reading */
static void appended(void)
{
    for (int pass = 0; pass < 2; pass++) {
        gpubp_file *e = op("appended.bp", pass ? GPUBP_MODE_APPEND : GPUBP_MODE_WRITE);
        size_t shape[2] = {64, 128}, start[2] = {0, 0};
        gpubp_variable *A;
        CK(gpubp_define_variable(&A, e, "grid", GPUBP_TYPE_DOUBLE, 2, shape, start, shape));
        for (int step = 0; step < 3; step++) {
            CK(gpubp_begin_step(e));
            double *v = malloc(64 * 128 * sizeof *v);
            for (int i = 0; i < 64 * 128; i++) v[i] = (pass * 3 + step) * 1e4 + i + 0.5 * seed;
            CK(gpubp_put(e, A, v, GPUBP_SYNC));
            free(v);
            CK(gpubp_end_step(e));
        }
        CK(gpubp_close(e));
    }
}

int main(int argc, char **argv)
{
    if (argc != 3) {
        fprintf(stderr, "usage: %s OUTDIR SEED\n", argv[0]);
        return 2;
    }
    outdir = argv[1];
    seed = (unsigned)atoi(argv[2]);
    mkdir(outdir, 0777);
    steps_2d();
    local_arrays();
    types();
    changing_3d();
    appended();
    return failures ? 1 : 0;
}
