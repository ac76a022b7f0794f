/* GPU memory-space cases through the public API, written once and run twice: against the
 * simulated device (tests/memspace/test_api_sim.c, every build, CI) and against a real CUDA
 * device (tests/gpu/test_gpu_api.c, label `gpu`, skipped without a device). The cases are
 * static functions compiled into each of the two tests, on purpose. A test file defines
 * the device helpers in `tdev` and includes this header. */
#ifndef GPUBP_TEST_DEVICE_CASES_H
#define GPUBP_TEST_DEVICE_CASES_H

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/common.h"
#include "memspace/simdev.h"
#include "support/api_util.h"
#include "support/test_support.h"
#include "support/values.h"

typedef struct tdev {
    const char *name;
    const char *params;                /* params every open adds ("device=simulated" or "") */
    void *(*alloc)(size_t n);          /* device memory, NULL on failure */
    void (*free)(void *p);
    void (*h2d)(void *d, const void *h, size_t n);
    void (*d2h)(void *h, const void *d, size_t n);
    int sim;                           /* the simulated device: failure hooks available */
} tdev;

extern const tdev *td; /* set by the test file's main */

static const char *tc_params(const char *extra)
{
    static char buf[8][512];
    static int next;
    char *b = buf[next++ % 8];
    snprintf(b, 512, "%s%s%s", td->params, (*td->params && extra && *extra) ? "," : "",
             extra ? extra : "");
    return b;
}

static void *tc_dev_from(const void *host, size_t n)
{
    void *d = td->alloc(n);
    assert_non_null(d);
    td->h2d(d, host, n);
    return d;
}

static void *tc_host_from(const void *dev, size_t n)
{
    void *h = malloc(n ? n : 1);
    assert_non_null(h);
    td->d2h(h, dev, n);
    return h;
}

static void *tc_dev_fill(size_t n, unsigned char byte)
{
    void *h = malloc(n);
    memset(h, byte, n);
    void *d = tc_dev_from(h, n);
    free(h);
    return d;
}

/* ---- the ADIOS2 CuPy/CUDA steps scenario ------------------------------------------------------- */
static void tc_steps_flip(void **state)
{
    (void)state;
    const char *path = ts_path("steps_flip.bp");
    gpubp_file *w;
    TS_OK(gpubp_open(&w, path, GPUBP_MODE_WRITE, tc_params(NULL)));
    size_t shape[2] = {2, 3}, zero[2] = {0, 0};
    gpubp_variable *g, *c;
    TS_OK(gpubp_define_variable(&g, w, "gpuArray", GPUBP_TYPE_FLOAT, 2, shape, zero, shape));
    TS_OK(gpubp_define_variable(&c, w, "cpuArray", GPUBP_TYPE_FLOAT, 2, shape, zero, shape));
    TS_OK(gpubp_set_memory_space(g, GPUBP_MEM_GPU));
    float gh[6] = {0, 1, 2, 3, 4, 5}, ch[6] = {0, 1, 2, 3, 4, 5};
    float *gd = tc_dev_from(gh, sizeof gh);
    for (int step = 0; step < 2; step++) {
        TS_OK(gpubp_begin_step(w));
        TS_OK(gpubp_put(w, g, gd, GPUBP_DEFERRED));
        TS_OK(gpubp_put(w, c, ch, GPUBP_DEFERRED));
        TS_OK(gpubp_end_step(w));
        for (int i = 0; i < 6; i++) {
            gh[i] *= 2;
            ch[i] += 1;
        }
        td->h2d(gd, gh, sizeof gh);
    }
    TS_OK(gpubp_close(w));
    assert_int_equal(ts_bp4check(path), 0);

    /* GPU reader: Shape(GPU) = (2,3), a bit-identical round trip */
    gpubp_file *r;
    TS_OK(gpubp_open(&r, path, GPUBP_MODE_READ, tc_params(NULL)));
    float *back = tc_dev_fill(sizeof gh, 0xFF);
    int step = 0;
    while (gpubp_begin_step(r) == GPUBP_OK) {
        gpubp_variable *v;
        TS_OK(gpubp_inquire_variable(&v, r, "gpuArray"));
        size_t dims[2], hdims[2];
        TS_OK(gpubp_variable_shape(v, GPUBP_MEM_GPU, dims));
        TS_OK(gpubp_variable_shape(v, GPUBP_MEM_HOST, hdims));
        assert_int_equal(dims[0], 2);
        assert_int_equal(dims[1], 3);
        assert_int_equal(hdims[0], 3);
        assert_int_equal(hdims[1], 2);
        TS_OK(gpubp_set_memory_space(v, GPUBP_MEM_GPU));
        TS_OK(gpubp_set_selection(v, 2, zero, dims));
        TS_OK(gpubp_get(r, v, back, GPUBP_SYNC));
        float got[6];
        td->d2h(got, back, sizeof got);
        for (int i = 0; i < 6; i++) assert_true(got[i] == (float)(i * (step ? 2 : 1)));
        float mn, mx;
        TS_OK(gpubp_variable_minmax(v, &mn, &mx));
        assert_true(mn == 0.0f && mx == (step ? 10.0f : 5.0f));
        /* the host array reads the same as before */
        gpubp_variable *cv;
        TS_OK(gpubp_inquire_variable(&cv, r, "cpuArray"));
        float cpu[6];
        TS_OK(gpubp_get(r, cv, cpu, GPUBP_SYNC));
        for (int i = 0; i < 6; i++) assert_true(cpu[i] == (float)(i + step));
        TS_OK(gpubp_end_step(r));
        step++;
    }
    assert_int_equal(step, 2);
    TS_OK(gpubp_close(r));

    /* a host reader sees (3,2) and the bytes verbatim */
    TS_OK(gpubp_open(&r, path, GPUBP_MODE_READ_RANDOM_ACCESS, tc_params(NULL)));
    gpubp_variable *v;
    TS_OK(gpubp_inquire_variable(&v, r, "gpuArray"));
    TS_OK(gpubp_set_step_selection(v, 1, 1));
    float host[6];
    TS_OK(gpubp_get(r, v, host, GPUBP_SYNC));
    for (int i = 0; i < 6; i++) assert_true(host[i] == (float)(2 * i));
    TS_OK(gpubp_close(r));
    td->free(gd);
    td->free(back);
}

/* ---- every numeric type, min/max from the device reduction ------------------------------------- */
static void tc_all_types(void **state)
{
    (void)state;
    static const gpubp_type types[] = {
        GPUBP_TYPE_INT8, GPUBP_TYPE_INT16, GPUBP_TYPE_INT32, GPUBP_TYPE_INT64,
        GPUBP_TYPE_UINT8, GPUBP_TYPE_UINT16, GPUBP_TYPE_UINT32, GPUBP_TYPE_UINT64,
        GPUBP_TYPE_FLOAT, GPUBP_TYPE_DOUBLE, GPUBP_TYPE_FLOAT_COMPLEX, GPUBP_TYPE_DOUBLE_COMPLEX};
    const size_t nt = sizeof types / sizeof *types;
    const char *path = ts_path("types.bp");
    size_t gshape[3] = {3, 4, 30011}; /* GPU order: 30011 fastest; blocks of several 1 MiB
                                         chunks for the wide types */
    size_t zero[3] = {0, 0, 0}, n = gshape[0] * gshape[1] * gshape[2];
    void *host[12], *dev[12];
    gpubp_file *w;
    TS_OK(gpubp_open(&w, path, GPUBP_MODE_WRITE, tc_params("chunk_mib=1,pool_slots=3")));
    gpubp_variable *vars[12];
    TS_OK(gpubp_begin_step(w));
    for (size_t t = 0; t < nt; t++) {
        size_t es = gpubp_type_size(types[t]);
        host[t] = malloc(n * es);
        ts_fill_spread(types[t], host[t], n, (int)t);
        dev[t] = tc_dev_from(host[t], n * es);
        char name[32];
        snprintf(name, sizeof name, "v%zu", t);
        TS_OK(gpubp_define_variable(&vars[t], w, name, types[t], 3, gshape, zero, gshape));
        TS_OK(gpubp_set_memory_space(vars[t], GPUBP_MEM_GPU));
        TS_OK(gpubp_put(w, vars[t], dev[t], GPUBP_DEFERRED));
    }
    TS_OK(gpubp_end_step(w));
    TS_OK(gpubp_close(w));
    assert_int_equal(ts_bp4check(path), 0);

    gpubp_file *r;
    TS_OK(gpubp_open(&r, path, GPUBP_MODE_READ_RANDOM_ACCESS, tc_params("chunk_mib=1")));
    for (size_t t = 0; t < nt; t++) {
        size_t es = gpubp_type_size(types[t]);
        char name[32];
        snprintf(name, sizeof name, "v%zu", t);
        gpubp_variable *v;
        TS_OK(gpubp_inquire_variable(&v, r, name));
        size_t fshape[3];
        TS_OK(gpubp_variable_shape(v, GPUBP_MEM_HOST, fshape));
        assert_int_equal(fshape[0], gshape[2]);
        assert_int_equal(fshape[2], gshape[0]);
        /* min/max of the device reduction == the host loop's */
        unsigned char mn[16], mx[16], rmn[16], rmx[16];
        TS_OK(gpubp_variable_minmax(v, mn, mx));
        gbp_minmax(types[t], host[t], n, rmn, rmx, 0);
        assert_memory_equal(mn, rmn, es);
        assert_memory_equal(mx, rmx, es);
        /* GPU read: bit-identical */
        TS_OK(gpubp_set_memory_space(v, GPUBP_MEM_GPU));
        void *back = tc_dev_fill(n * es, 0xEE);
        TS_OK(gpubp_get(r, v, back, GPUBP_SYNC));
        void *got = tc_host_from(back, n * es);
        assert_memory_equal(got, host[t], n * es);
        free(got);
        td->free(back);
        td->free(dev[t]);
        free(host[t]);
    }
    TS_OK(gpubp_close(r));
}

/* ---- blocks much larger than the pool, a sub-box read across blocks into a ghosted buffer ------ */
static void tc_big_blocks_subbox(void **state)
{
    (void)state;
    const char *path = ts_path("big.bp");
    /* host (file) order: (NY, NX) doubles, two blocks of (NY/2, NX) written from the GPU */
    const size_t NY = 600, NX = 1500; /* 7.2 MB, blocks of 3.6 MB, pool 2 x 1 MiB */
    double *h = malloc(NY * NX * sizeof(double));
    for (size_t i = 0; i < NY * NX; i++) h[i] = (double)i * 0.5 - 7.0;
    double *d = tc_dev_from(h, NY * NX * sizeof(double));
    gpubp_file *w;
    TS_OK(gpubp_open(&w, path, GPUBP_MODE_WRITE, tc_params("pool_slots=2,chunk_mib=1,piece_kib=256")));
    gpubp_variable *v;
    size_t gshape[2] = {NX, NY}, gstart[2] = {0, 0}, gcount[2] = {NX, NY / 2}; /* GPU order */
    TS_OK(gpubp_define_variable(&v, w, "field", GPUBP_TYPE_DOUBLE, 2, gshape, gstart, gcount));
    TS_OK(gpubp_set_memory_space(v, GPUBP_MEM_GPU));
    for (int step = 0; step < 2; step++) {
        TS_OK(gpubp_begin_step(w));
        for (size_t b = 0; b < 2; b++) {
            gstart[1] = b * (NY / 2);
            TS_OK(gpubp_set_selection(v, 2, gstart, gcount));
            TS_OK(gpubp_put(w, v, d + b * (NY / 2) * NX, GPUBP_SYNC));
        }
        TS_OK(gpubp_end_step(w));
    }
    TS_OK(gpubp_close(w));
    assert_int_equal(ts_bp4check(path), 0);

    gpubp_file *r;
    TS_OK(gpubp_open(&r, path, GPUBP_MODE_READ_RANDOM_ACCESS, tc_params("pool_slots=2,chunk_mib=1,piece_kib=256")));
    gpubp_variable *rv;
    TS_OK(gpubp_inquire_variable(&rv, r, "field"));
    TS_OK(gpubp_set_memory_space(rv, GPUBP_MEM_GPU));
    TS_OK(gpubp_set_step_selection(rv, 1, 1));
    /* GPU order box: x in [100, 1300), y in [250, 350) crosses the block boundary at y = 300 */
    size_t sstart[2] = {100, 250}, scount[2] = {1200, 100};
    TS_OK(gpubp_set_selection(rv, 2, sstart, scount));
    /* into a ghosted buffer of (1204, 103) GPU order at (2, 1) */
    size_t mstart[2] = {2, 1}, mcount[2] = {1204, 103};
    TS_OK(gpubp_set_memory_selection(rv, 2, mstart, mcount));
    size_t mbytes = 1204 * 103 * sizeof(double);
    double *dd = tc_dev_fill(mbytes, 0x7F);
    TS_OK(gpubp_get(r, rv, dd, GPUBP_SYNC));
    double *got = tc_host_from(dd, mbytes);
    unsigned char ghost[8];
    memset(ghost, 0x7F, 8);
    /* host order of the buffer: (103 rows of y, 1204 of x) */
    for (size_t y = 0; y < 103; y++) {
        for (size_t x = 0; x < 1204; x++) {
            double g = got[y * 1204 + x];
            int inside = y >= 1 && y < 101 && x >= 2 && x < 1202;
            if (inside) {
                size_t fy = 250 + (y - 1), fx = 100 + (x - 2);
                assert_true(g == h[fy * NX + fx]);
            } else {
                assert_memory_equal(&g, ghost, 8);
            }
        }
    }
    free(got);
    td->free(dd);
    TS_OK(gpubp_close(r));
    td->free(d);
    free(h);
}

/* ---- ghost cells on the write side, on the device ---------------------------------------------- */
/* split_mib: one large put from device memory (column-major GPU layout, inside a ghosted buffer)
 * is cut into one sub-block per subfile; readers that number blocks by put see the one block,
 * block_view=stored sees the sub-blocks with their own min/max; box and block reads into device
 * memory return the put's values. */
static void tc_split(void **state)
{
    (void)state;
    const char *path = ts_path("split_dev.bp");
    /* file (host) order (NY, NX) floats, put from a buffer of (NY + 2, NX + 4) at (1, 2) */
    const size_t NY = 2100, NX = 2500, MY = NY + 2, MX = NX + 4; /* 21 MB: 4 sub-blocks */
    float *h = malloc(MY * MX * sizeof *h);
    assert_non_null(h);
    for (size_t y = 0; y < MY; y++)
        for (size_t x = 0; x < MX; x++)
            h[y * MX + x] = (y >= 1 && y <= NY && x >= 2 && x < NX + 2)
                                ? (float)((y - 1) * NX + (x - 2)) : -1e30f;
    float *d = tc_dev_from(h, MY * MX * sizeof *h);
    gpubp_file *w;
    TS_OK(gpubp_open(&w, path, GPUBP_MODE_WRITE, tc_params("io_threads=4,piece_kib=1024")));
    gpubp_variable *v;
    size_t gshape[2] = {NX, NY}, zero[2] = {0, 0}; /* GPU (column-major) order */
    size_t ms[2] = {2, 1}, mc[2] = {MX, MY};
    TS_OK(gpubp_define_variable(&v, w, "f", GPUBP_TYPE_FLOAT, 2, gshape, zero, gshape));
    TS_OK(gpubp_set_memory_space(v, GPUBP_MEM_GPU));
    TS_OK(gpubp_set_memory_selection(v, 2, ms, mc));
    for (int step = 0; step < 2; step++) {
        TS_OK(gpubp_begin_step(w));
        TS_OK(gpubp_put(w, v, d, step ? GPUBP_DEFERRED : GPUBP_SYNC));
        TS_OK(gpubp_end_step(w));
    }
    TS_OK(gpubp_close(w));
    assert_int_equal(ts_bp4check(path), 0);
    free(h);
    td->free(d);

    const char *views[2] = {NULL, "block_view=stored"};
    for (int view = 0; view < 2; view++) {
        gpubp_file *r;
        TS_OK(gpubp_open(&r, path, GPUBP_MODE_READ_RANDOM_ACCESS, tc_params(views[view])));
        gpubp_variable *rv;
        TS_OK(gpubp_inquire_variable(&rv, r, "f"));
        TS_OK(gpubp_set_memory_space(rv, GPUBP_MEM_GPU));
        size_t nb = 0, rows = 0;
        TS_OK(gpubp_variable_blocks(rv, 1, &nb));
        assert_int_equal(nb, view ? 4 : 1);
        for (size_t b = 0; b < nb; b++) {
            size_t st[2], ct[2]; /* GPU order: (x, y) */
            float mn, mx;
            TS_OK(gpubp_variable_block_info(rv, 1, b, st, ct, &mn, &mx));
            assert_int_equal(st[0], 0);
            assert_int_equal(ct[0], NX);
            assert_int_equal(st[1], rows);
            assert_true(mn == (float)(st[1] * NX));
            assert_true(mx == (float)((st[1] + ct[1]) * NX - 1));
            rows += ct[1];
        }
        assert_int_equal(rows, NY);
        /* block 0 read into device memory: the put (view 0) or the first sub-block's rows */
        size_t st0[2], ct0[2];
        TS_OK(gpubp_variable_block_info(rv, 0, 0, st0, ct0, NULL, NULL));
        size_t n0 = ct0[0] * ct0[1];
        float *dd = tc_dev_fill(n0 * sizeof(float), 0);
        TS_OK(gpubp_set_step_selection(rv, 0, 1));
        TS_OK(gpubp_set_block_selection(rv, 0));
        TS_OK(gpubp_get(r, rv, dd, GPUBP_SYNC));
        float *got = tc_host_from(dd, n0 * sizeof(float));
        for (size_t i = 0; i < n0; i++)
            if (got[i] != (float)i) {
                print_error("view %d: block 0 element %zu: %g\n", view, i, got[i]);
                fail();
            }
        free(got);
        td->free(dd);
        /* a box across the sub-block boundaries: y in [400, 1700), x in [7, 2007) */
        size_t bs[2] = {7, 400}, bc[2] = {2000, 1300};
        dd = tc_dev_fill(bc[0] * bc[1] * sizeof(float), 0);
        TS_OK(gpubp_set_step_selection(rv, 1, 1));
        TS_OK(gpubp_set_selection(rv, 2, bs, bc));
        TS_OK(gpubp_get(r, rv, dd, GPUBP_SYNC));
        got = tc_host_from(dd, bc[0] * bc[1] * sizeof(float));
        for (size_t y = 0; y < bc[1]; y++)
            for (size_t x = 0; x < bc[0]; x++)
                if (got[y * bc[0] + x] != (float)((y + bs[1]) * NX + x + bs[0])) {
                    print_error("view %d: box (%zu, %zu): %g\n", view, y, x, got[y * bc[0] + x]);
                    fail();
                }
        free(got);
        td->free(dd);
        TS_OK(gpubp_close(r));
    }
}

static void tc_memory_selection_put(void **state)
{
    (void)state;
    const char *path = ts_path("ghost.bp");
    size_t count[3] = {5, 6, 7}, mcount[3] = {9, 10, 11}, mstart[3] = {2, 2, 2}, zero[3] = {0};
    size_t mn = mcount[0] * mcount[1] * mcount[2];
    int32_t *h = malloc(mn * 4);
    for (size_t i = 0; i < mn; i++) h[i] = (int32_t)(i * 7 % 1000) - 400;
    /* ghosts: a huge value that must not show up in the file nor in min/max */
    for (size_t a = 0; a < mcount[0]; a++)
        for (size_t b = 0; b < mcount[1]; b++)
            for (size_t c = 0; c < mcount[2]; c++) {
                int in = a >= 2 && a < 7 && b >= 2 && b < 8 && c >= 2 && c < 9;
                if (!in) h[(a * mcount[1] + b) * mcount[2] + c] = 999999;
            }
    int32_t *d = tc_dev_from(h, mn * 4);
    gpubp_file *w;
    TS_OK(gpubp_open(&w, path, GPUBP_MODE_WRITE, tc_params("gpu_layout=row_major")));
    gpubp_variable *v;
    TS_OK(gpubp_define_variable(&v, w, "g", GPUBP_TYPE_INT32, 3, count, zero, count));
    TS_OK(gpubp_set_memory_space(v, GPUBP_MEM_GPU));
    TS_OK(gpubp_set_memory_selection(v, 3, mstart, mcount));
    ts_put_step(w, v, d, GPUBP_SYNC);
    gpubp_variable *rv;
    gpubp_file *r = au_close_inq(w, path, "g", &rv);
    size_t fs[3];
    TS_OK(gpubp_variable_shape(rv, GPUBP_MEM_HOST, fs)); /* row_major GPU layout: no flip */
    assert_int_equal(fs[0], 5);
    assert_int_equal(fs[2], 7);
    int32_t got[5 * 6 * 7];
    TS_OK(gpubp_get(r, rv, got, GPUBP_SYNC));
    int32_t emin = 1 << 30, emax = -(1 << 30);
    for (size_t a = 0; a < 5; a++)
        for (size_t b = 0; b < 6; b++)
            for (size_t c = 0; c < 7; c++) {
                int32_t e = h[((a + 2) * mcount[1] + b + 2) * mcount[2] + c + 2];
                assert_int_equal(got[(a * 6 + b) * 7 + c], e);
                if (e < emin) emin = e;
                if (e > emax) emax = e;
            }
    int32_t mn32, mx32;
    TS_OK(gpubp_variable_minmax(rv, &mn32, &mx32));
    assert_int_equal(mn32, emin);
    assert_int_equal(mx32, emax);
    TS_OK(gpubp_close(r));
    td->free(d);
    free(h);
}

/* ---- deferred puts read the device buffer at end_step / perform_puts --------------------------- */
static void tc_deferred(void **state)
{
    (void)state;
    const char *path = ts_path("deferred.bp");
    size_t n = 1000, zero = 0;
    double a[1000], b[1000];
    for (size_t i = 0; i < n; i++) {
        a[i] = (double)i;
        b[i] = -(double)i;
    }
    double *d = tc_dev_from(a, sizeof a);
    gpubp_file *w;
    TS_OK(gpubp_open(&w, path, GPUBP_MODE_WRITE, tc_params(NULL)));
    gpubp_variable *v;
    TS_OK(gpubp_define_variable(&v, w, "x", GPUBP_TYPE_DOUBLE, 1, &n, &zero, &n));
    TS_OK(gpubp_set_memory_space(v, GPUBP_MEM_GPU));
    /* step 0: deferred, then the buffer changes before end_step: the file has the new values */
    TS_OK(gpubp_begin_step(w));
    TS_OK(gpubp_put(w, v, d, GPUBP_DEFERRED));
    td->h2d(d, b, sizeof b);
    TS_OK(gpubp_end_step(w));
    /* step 1: perform_puts consumes it; changing the buffer afterwards changes nothing */
    TS_OK(gpubp_begin_step(w));
    TS_OK(gpubp_put(w, v, d, GPUBP_DEFERRED));
    TS_OK(gpubp_perform_puts(w));
    td->h2d(d, a, sizeof a);
    TS_OK(gpubp_end_step(w));
    gpubp_variable *rv;
    gpubp_file *r = au_close_inq(w, path, "x", &rv);
    double got[2000];
    TS_OK(gpubp_set_step_selection(rv, 0, 2));
    TS_OK(gpubp_get(r, rv, got, GPUBP_SYNC));
    assert_memory_equal(got, b, sizeof b);
    assert_memory_equal(got + 1000, b, sizeof b);
    TS_OK(gpubp_close(r));
    td->free(d);
}

/* ---- wrong memory spaces are errors, never crashes ---------------------------------------------- */
static void tc_wrong_space(void **state)
{
    (void)state;
    const char *path = ts_path("wrong.bp");
    size_t n = 16, zero = 0;
    float host[16] = {0};
    float *d = tc_dev_from(host, sizeof host);
    gpubp_file *w;
    TS_OK(gpubp_open(&w, path, GPUBP_MODE_WRITE, tc_params(NULL)));
    gpubp_variable *g, *h, *det;
    TS_OK(gpubp_define_variable(&g, w, "g", GPUBP_TYPE_FLOAT, 1, &n, &zero, &n));
    TS_OK(gpubp_define_variable(&h, w, "h", GPUBP_TYPE_FLOAT, 1, &n, &zero, &n));
    TS_OK(gpubp_define_variable(&det, w, "det", GPUBP_TYPE_FLOAT, 1, &n, &zero, &n));
    TS_OK(gpubp_set_memory_space(g, GPUBP_MEM_GPU));
    TS_OK(gpubp_set_memory_space(h, GPUBP_MEM_HOST));
    assert_int_equal(gpubp_set_memory_space(g, GPUBP_MEM_HOST), GPUBP_ERR_MEMORY_SPACE);
    TS_OK(gpubp_begin_step(w));
    assert_int_equal(gpubp_put(w, g, host, GPUBP_SYNC), GPUBP_ERR_MEMORY_SPACE);
    assert_true(strlen(gpubp_last_error()) > 0);
    assert_int_equal(gpubp_put(w, h, d, GPUBP_SYNC), GPUBP_ERR_MEMORY_SPACE);
    /* DETECT resolves from the pointer */
    TS_OK(gpubp_put(w, det, d, GPUBP_SYNC));
    gpubp_memory_space sp;
    TS_OK(gpubp_variable_memory_space(det, &sp));
    assert_int_equal(sp, GPUBP_MEM_GPU);
    TS_OK(gpubp_end_step(w));
    TS_OK(gpubp_close(w));
    td->free(d);
}

/* ---- the ADIOS2-written GPU file, read into device memory -------------------------------------- */
static void tc_adios2_file(void **state)
{
    (void)state;
    char path[4096];
    snprintf(path, sizeof path, "%s/gpu/BP4/StepsWriteReadCuPy.bp", ts_golden_dir());
    gpubp_file *r;
    TS_OK(gpubp_open(&r, path, GPUBP_MODE_READ, tc_params(NULL)));
    float *d = tc_dev_fill(6 * sizeof(float), 0xFF);
    int step = 0;
    while (gpubp_begin_step(r) == GPUBP_OK) {
        gpubp_variable *v;
        TS_OK(gpubp_inquire_variable(&v, r, "gpuArray"));
        TS_OK(gpubp_set_memory_space(v, GPUBP_MEM_GPU));
        size_t dims[2], zero[2] = {0, 0};
        TS_OK(gpubp_variable_shape(v, GPUBP_MEM_GPU, dims));
        assert_int_equal(dims[0], 2);
        assert_int_equal(dims[1], 3);
        TS_OK(gpubp_set_selection(v, 2, zero, dims));
        TS_OK(gpubp_get(r, v, d, GPUBP_SYNC));
        float got[6];
        td->d2h(got, d, sizeof got);
        for (int i = 0; i < 6; i++) assert_true(got[i] == (float)(i * (step ? 2 : 1)));
        TS_OK(gpubp_end_step(r));
        step++;
    }
    assert_int_equal(step, 2);
    TS_OK(gpubp_close(r));
    td->free(d);
}

/* ---- a failure mid-write leaves the committed steps readable, and the next step works -------- */
static void tc_failure_keeps_committed(void **state)
{
    (void)state;
    const char *path = ts_path("fail.bp");
    size_t n = 300000, zero = 0; /* 2.4 MB a step: 3 chunks of 1 MiB */
    double *h = malloc(n * sizeof(double));
    double *d = td->alloc(n * sizeof(double));
    assert_non_null(d);
    gpubp_file *w;
    TS_OK(gpubp_open(&w, path, GPUBP_MODE_WRITE, tc_params("chunk_mib=1,pool_slots=2")));
    gpubp_variable *v;
    TS_OK(gpubp_define_variable(&v, w, "x", GPUBP_TYPE_DOUBLE, 1, &n, &zero, &n));
    TS_OK(gpubp_set_memory_space(v, GPUBP_MEM_GPU));
    /* step 2: the second chunk's pwrite fails; step 4 (simulated device): the third copy fails */
    size_t committed[5], nc = 0;
    for (int step = 0; step < 5; step++) {
        for (size_t i = 0; i < n; i++) h[i] = (double)i + 1000.0 * step;
        td->h2d(d, h, n * sizeof(double));
        TS_OK(gpubp_begin_step(w));
        TS_OK(gpubp_put(w, v, d, GPUBP_DEFERRED));
        if (step == 2) gbp_sim_fail_io_after(1);
        if (step == 4 && td->sim) gbp_sim_fail_copy_after(2);
        int rc = gpubp_end_step(w);
        if (step == 2) {
            assert_int_equal(rc, GPUBP_ERR_IO);
            assert_int_equal(gpubp_last_errno(), EIO);
        } else if (step == 4 && td->sim) {
            assert_int_equal(rc, GPUBP_ERR_DEVICE);
            assert_non_null(strstr(gpubp_last_error(), "injected"));
        } else {
            assert_int_equal(rc, GPUBP_OK);
            committed[nc++] = (size_t)step;
        }
        gbp_sim_fail_io_after(-1);
        gbp_sim_fail_copy_after(-1);
    }
    (void)gpubp_close(w);
    gpubp_file *r;
    TS_OK(gpubp_open(&r, path, GPUBP_MODE_READ_RANDOM_ACCESS, NULL));
    size_t nsteps;
    TS_OK(gpubp_steps(r, &nsteps));
    assert_int_equal(nsteps, nc); /* 0, 1, 3 (and 4 on a real device) */
    gpubp_variable *rv;
    TS_OK(gpubp_inquire_variable(&rv, r, "x"));
    for (size_t s = 0; s < nsteps; s++) {
        TS_OK(gpubp_set_step_selection(rv, s, 1));
        TS_OK(gpubp_get(r, rv, h, GPUBP_SYNC));
        double base = 1000.0 * (double)committed[s];
        for (size_t i = 0; i < n; i += 997) assert_true(h[i] == (double)i + base);
        assert_true(h[n - 1] == (double)(n - 1) + base);
    }
    TS_OK(gpubp_close(r));
    td->free(d);
    free(h);
}

/* ---- async_commit=1 ------------------------------------------------------------------------------
 * end_step returns once the step's device data is in the pinned pool; its writes and its commit
 * finish on the I/O threads while the next step goes on. The device buffer is overwritten as
 * soon as end_step returns: every step must still read back as it was put. */
static double tc_async_value(size_t i, int step) { return (double)i * 0.5 + 100000.0 * step; }

static void tc_async_write(const char *path, double *h, double *d, size_t n, int steps,
                           int fail_step, int *ok, int *lost)
{
    size_t zero = 0;
    gpubp_file *w;
    TS_OK(gpubp_open(&w, path, GPUBP_MODE_WRITE,
                     tc_params("async_commit=1,chunk_mib=1,piece_kib=192,pool_slots=4,io_threads=2,subfiles=2")));
    gpubp_variable *v, *sv;
    TS_OK(gpubp_define_variable(&v, w, "x", GPUBP_TYPE_DOUBLE, 1, &n, &zero, &n));
    TS_OK(gpubp_set_memory_space(v, GPUBP_MEM_GPU));
    TS_OK(gpubp_define_variable(&sv, w, "step", GPUBP_TYPE_INT32, 0, NULL, NULL, NULL));
    *lost = -1;
    for (int step = 0; step < steps; step++) ok[step] = 0;
    for (int step = 0; step < steps; step++) {
        int rc = gpubp_begin_step(w);
        if (rc != GPUBP_OK) { /* only after the writer stopped */
            assert_true(*lost >= 0);
            assert_non_null(strstr(gpubp_last_error(), "async_commit"));
            break;
        }
        for (size_t i = 0; i < n; i++) h[i] = tc_async_value(i, step);
        td->h2d(d, h, n * sizeof(double));
        int32_t s32 = step;
        TS_OK(gpubp_put(w, v, d, GPUBP_DEFERRED));
        /* a SYNC put waits for the pipeline: it may report an earlier step's failed write */
        rc = gpubp_put(w, sv, &s32, GPUBP_SYNC);
        if (fail_step < 0 || step <= fail_step) TS_OK(rc);
        /* 8 chunks a step over 2 subfiles: the last ones are written after end_step returns */
        if (step == fail_step) gbp_sim_fail_io_after(7);
        rc = gpubp_end_step(w);
        ok[step] = rc == GPUBP_OK;
        if (rc != GPUBP_OK && strstr(gpubp_last_error(), "(async_commit)")) {
            unsigned u;
            const char *at = strstr(gpubp_last_error(), "step ");
            assert_non_null(at);
            assert_int_equal(sscanf(at, "step %u was not committed", &u), 1);
            *lost = (int)u;
        }
        /* the buffer is the caller's again */
        memset(h, 0xAB, n * sizeof(double));
        td->h2d(d, h, n * sizeof(double));
    }
    int rc = gpubp_close(w);
    gbp_sim_fail_io_after(-1);
    if (rc != GPUBP_OK && *lost < 0) {
        unsigned u;
        const char *at = strstr(gpubp_last_error(), "step ");
        assert_non_null(strstr(gpubp_last_error(), "(async_commit)"));
        assert_int_equal(sscanf(at, "step %u was not committed", &u), 1);
        *lost = (int)u;
    }
    if (fail_step < 0) TS_OK(rc);
}

static void tc_async_check(const char *path, double *h, size_t n, const int *ok, int steps,
                           int lost)
{
    gpubp_file *r;
    TS_OK(gpubp_open(&r, path, GPUBP_MODE_READ_RANDOM_ACCESS, NULL));
    size_t nsteps, k = 0;
    TS_OK(gpubp_steps(r, &nsteps));
    gpubp_variable *rv, *rs;
    TS_OK(gpubp_inquire_variable(&rv, r, "x"));
    TS_OK(gpubp_inquire_variable(&rs, r, "step"));
    for (int step = 0; step < steps; step++) {
        if (!ok[step] || step == lost) continue;
        assert_true(k < nsteps);
        int32_t s32 = -1;
        TS_OK(gpubp_set_step_selection(rv, k, 1));
        TS_OK(gpubp_set_step_selection(rs, k, 1));
        TS_OK(gpubp_get(r, rs, &s32, GPUBP_SYNC));
        assert_int_equal(s32, step);
        TS_OK(gpubp_get(r, rv, h, GPUBP_SYNC));
        for (size_t i = 0; i < n; i++)
            if (h[i] != tc_async_value(i, step)) fail_msg("step %d element %zu", step, i);
        k++;
    }
    assert_int_equal(nsteps, k);
    TS_OK(gpubp_close(r));
}

static void tc_async_commit(void **state)
{
    (void)state;
    size_t n = (size_t)1 << 20; /* 8 MiB a step */
    double *h = malloc(n * sizeof(double));
    double *d = td->alloc(n * sizeof(double));
    assert_non_null(h);
    assert_non_null(d);
    int ok[8], lost;
    const char *path = ts_path("async.bp");
    tc_async_write(path, h, d, n, 6, -1, ok, &lost);
    for (int s = 0; s < 6; s++) assert_true(ok[s]);
    assert_int_equal(lost, -1);
    assert_int_equal(ts_bp4check(path), 0);
    tc_async_check(path, h, n, ok, 6, -1);
    /* the 8th pipeline write from the end_step of step 2 on fails (step 2's or, while step 1's
     * last chunks are still being written, step 3's): that step either fails in its own end_step
     * (the failure came early) and the steps after it commit, or, found behind it, stops the
     * writer with a message naming it; either way every step reported committed reads back
     * exactly and the lost one is not there */
    path = ts_path("async-fail.bp");
    tc_async_write(path, h, d, n, 8, 2, ok, &lost);
    int failed = 0;
    for (int s = 2; s < 8; s++) failed += !ok[s];
    printf("async failure: lost %d, ok %d%d%d%d%d%d%d%d\n", lost, ok[0], ok[1], ok[2], ok[3], ok[4],
           ok[5], ok[6], ok[7]);
    assert_true(failed > 0 || lost >= 0);
    if (lost >= 0) {
        assert_true(lost >= 2 && lost <= 3);
        assert_true(ok[lost]); /* reported committed by its end_step, lost behind it */
        for (int s = lost + 1; s < 8; s++) assert_false(ok[s]); /* the writer stopped */
    }
    assert_int_equal(ts_bp4check(path), 0);
    tc_async_check(path, h, n, ok, 8, lost);
    td->free(d);
    free(h);
}

/* ---- compression of device blocks (issue 7) ------------------------------------------------------
 * A smooth field, random bits (chunks that do not shrink: rewritten raw) and many small blocks
 * after an uncompressed block,
 * put from device memory with zlib through 1 MiB slots (many pieces per block) and from host
 * memory: data.0 is identical byte for byte; read back into device memory whole and as a
 * sub-box that starts and ends inside Blosc2 blocks. */
static void tc_compressed(void **state)
{
    (void)state;
    const size_t n = 700001, small = 40, nsmall = 2000, zero = 0;
    float *h = malloc(n * sizeof *h), *r = malloc(n * sizeof *r), *sm = malloc(nsmall * sizeof *sm);
    uint32_t x = 2463534242u;
    for (size_t i = 0; i < n; i++) {
        x ^= x << 13;
        x ^= x >> 17;
        x ^= x << 5;
        h[i] = (float)(i % 1000) * 0.25f;
        r[i] = (float)(x >> 8);
    }
    for (size_t i = 0; i < nsmall; i++) sm[i] = (float)(i % 7);
    void *dh = tc_dev_from(h, n * sizeof *h), *dr = tc_dev_from(r, n * sizeof *r);
    void *ds = tc_dev_from(sm, nsmall * sizeof *sm);
    for (int dev = 0; dev < 2; dev++) {
        gpubp_file *w;
        /* compress_device=off: this case checks the staged CPU codec path, whose bytes equal the
         * host path's; the device codec (nvCOMP) writes other streams (test_gpu_compress) */
        TS_OK(gpubp_open(&w, ts_path(dev ? "zdev.bp" : "zhost.bp"), GPUBP_MODE_WRITE,
                         tc_params("gpu_layout=row_major,chunk_mib=1,pool_slots=3,"
                                   "compress_device=off")));
        gpubp_variable *a, *b, *c, *u;
        size_t ns = nsmall;
        /* an uncompressed device block first: its chunks are still queued when compression
         * starts staging (the staging must not starve them of slots) */
        TS_OK(gpubp_define_variable(&u, w, "plain", GPUBP_TYPE_FLOAT, 1, &n, &zero, &n));
        TS_OK(gpubp_set_memory_space(u, dev ? GPUBP_MEM_GPU : GPUBP_MEM_HOST));
        TS_OK(gpubp_define_variable(&a, w, "smooth", GPUBP_TYPE_FLOAT, 1, &n, &zero, &n));
        TS_OK(gpubp_define_variable(&b, w, "random", GPUBP_TYPE_FLOAT, 1, &n, &zero, &n));
        TS_OK(gpubp_define_variable(&c, w, "small", GPUBP_TYPE_FLOAT, 1, &ns, &zero, &ns));
        gpubp_variable *vs[3] = {a, b, c};
        for (int k = 0; k < 3; k++) {
            TS_OK(gpubp_set_memory_space(vs[k], dev ? GPUBP_MEM_GPU : GPUBP_MEM_HOST));
            TS_OK(gpubp_variable_add_operation(vs[k], "zlib", k == 1 ? "shuffle=none" : NULL));
        }
        TS_OK(gpubp_begin_step(w));
        TS_OK(gpubp_put(w, u, dev ? dr : (void *)r, GPUBP_DEFERRED));
        TS_OK(gpubp_put(w, a, dev ? dh : (void *)h, GPUBP_DEFERRED));
        TS_OK(gpubp_put(w, b, dev ? dr : (void *)r, GPUBP_DEFERRED));
        for (size_t i = 0; i < nsmall / small; i++) {
            size_t st = i * small, ct = small;
            TS_OK(gpubp_set_selection(c, 1, &st, &ct));
            TS_OK(gpubp_put(w, c, (float *)(dev ? ds : (void *)sm) + st, GPUBP_DEFERRED));
        }
        TS_OK(gpubp_end_step(w));
        TS_OK(gpubp_close(w));
    }
    size_t la, lb;
    unsigned char *fa = ts_read_file(ts_join(ts_path("zhost.bp"), "data.0"), &la);
    unsigned char *fb = ts_read_file(ts_join(ts_path("zdev.bp"), "data.0"), &lb);
    assert_non_null(fa);
    assert_non_null(fb);
    assert_int_equal(la, lb);
    assert_memory_equal(fa, fb, la);
    free(fa);
    free(fb);
    gpubp_file *rd;
    TS_OK(gpubp_open(&rd, ts_path("zdev.bp"), GPUBP_MODE_READ,
                     tc_params("gpu_layout=row_major,chunk_mib=1,pool_slots=3")));
    TS_OK(gpubp_begin_step(rd));
    const char *names[2] = {"smooth", "random"};
    const float *want[2] = {h, r};
    void *back = td->alloc(n * sizeof *h);
    assert_non_null(back);
    for (int k = 0; k < 2; k++) {
        gpubp_variable *v;
        TS_OK(gpubp_inquire_variable(&v, rd, names[k]));
        TS_OK(gpubp_set_memory_space(v, GPUBP_MEM_GPU));
        TS_OK(gpubp_get(rd, v, back, GPUBP_SYNC));
        float *got = tc_host_from(back, n * sizeof *h);
        assert_memory_equal(got, want[k], n * sizeof *h);
        free(got);
        size_t st = 100003, ct = 333333;
        TS_OK(gpubp_set_selection(v, 1, &st, &ct));
        TS_OK(gpubp_get(rd, v, back, GPUBP_SYNC));
        got = tc_host_from(back, ct * sizeof *h);
        assert_memory_equal(got, want[k] + st, ct * sizeof *h);
        free(got);
    }
    TS_OK(gpubp_end_step(rd));
    TS_OK(gpubp_close(rd));
    td->free(back);
    td->free(dh);
    td->free(dr);
    td->free(ds);
    free(h);
    free(r);
    free(sm);
}

#define TC_ALL_CASES                                   \
    cmocka_unit_test(tc_steps_flip),                   \
    cmocka_unit_test(tc_all_types),                    \
    cmocka_unit_test(tc_big_blocks_subbox),            \
    cmocka_unit_test(tc_memory_selection_put),         \
    cmocka_unit_test(tc_split),                        \
    cmocka_unit_test(tc_deferred),                     \
    cmocka_unit_test(tc_wrong_space),                  \
    cmocka_unit_test(tc_adios2_file),                  \
    cmocka_unit_test(tc_failure_keeps_committed),      \
    cmocka_unit_test(tc_async_commit),                 \
    cmocka_unit_test(tc_compressed),                   \
    cmocka_unit_test(tc_bp5_bzip2),                    \
    cmocka_unit_test(tc_bp5_structs),                  \
    cmocka_unit_test(tc_bp5_bigendian),                \
    cmocka_unit_test(tc_bp5_32bit),                    \
    cmocka_unit_test(tc_bp3),                          \
    cmocka_unit_test(tc_select_steps)

/* the BP5 cases (tc_bp5_*), which use the helpers above */
#include "support/device_bp5.h"

#endif
