/* Fuzz target: the data-record path, differentially. The input chooses a type, a 1-3-D shape,
 * blocks (slabs along the slowest dimension), steps, host or simulated-device memory, the GPU
 * layout, ghost-cell memory selections, deferred or sync puts and gets, subfiles; the harness
 * writes that dataset with libgpubp, reads a fuzzer-chosen box over a fuzzer-chosen step range
 * and compares every element with what it wrote. Then it damages data.K (bytes overwritten,
 * the file cut short) and reads again: any status is fine then, a crash is not. */
#include "common/common.h"
#include "fuzz/fuzz_util.h"
#include "gpubp.h"
#include "memspace/simdev.h"
#include "fuzz/fuzz_target.h"

static const gpubp_type types[] = {
    GPUBP_TYPE_INT8,   GPUBP_TYPE_INT16,  GPUBP_TYPE_INT32,  GPUBP_TYPE_INT64,
    GPUBP_TYPE_FLOAT,  GPUBP_TYPE_DOUBLE, GPUBP_TYPE_UINT8,  GPUBP_TYPE_UINT16,
    GPUBP_TYPE_UINT32, GPUBP_TYPE_UINT64, GPUBP_TYPE_FLOAT_COMPLEX, GPUBP_TYPE_DOUBLE_COMPLEX};

/* the value of element g (file-order linear index) at step s, as bytes of type t */
static void value(gpubp_type t, size_t g, size_t s, uint8_t *out)
{
    long v = (long)((g * 31 + s * 7 + 3) % 101) - 50;
    switch (t) {
    case GPUBP_TYPE_INT8: case GPUBP_TYPE_UINT8: { int8_t x = (int8_t)v; memcpy(out, &x, 1); break; }
    case GPUBP_TYPE_INT16: case GPUBP_TYPE_UINT16: { int16_t x = (int16_t)v; memcpy(out, &x, 2); break; }
    case GPUBP_TYPE_INT32: case GPUBP_TYPE_UINT32: { int32_t x = (int32_t)v; memcpy(out, &x, 4); break; }
    case GPUBP_TYPE_INT64: case GPUBP_TYPE_UINT64: { int64_t x = v; memcpy(out, &x, 8); break; }
    case GPUBP_TYPE_FLOAT: { float x = (float)v; memcpy(out, &x, 4); break; }
    case GPUBP_TYPE_DOUBLE: { double x = (double)v; memcpy(out, &x, 8); break; }
    case GPUBP_TYPE_FLOAT_COMPLEX: { float x[2] = {(float)v, (float)-v}; memcpy(out, x, 8); break; }
    default: { double x[2] = {(double)v, (double)(v + 1)}; memcpy(out, x, 16); break; }
    }
}

static void rev(size_t *d, size_t n)
{
    for (size_t i = 0; i < n / 2; i++) {
        size_t t = d[i];
        d[i] = d[n - 1 - i];
        d[n - 1 - i] = t;
    }
}

static void *buf_alloc(int dev, size_t n)
{
    void *p = dev ? gbp_sim_alloc(n ? n : 1) : malloc(n ? n : 1);
    if (p) memset(p, 0xEE, n ? n : 1);
    return p;
}
static void buf_free(int dev, void *p) { if (dev) gbp_sim_free(p); else free(p); }

#define FAIL(...) do { fprintf(stderr, __VA_ARGS__); fprintf(stderr, ": %s\n", gpubp_last_error()); abort(); } while (0)

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    fz_reader in = {data, size, 0};
    gpubp_type t = types[fz_u8(&in) % (sizeof types / sizeof types[0])];
    size_t es = gpubp_type_size(t);
    size_t nd = 1 + fz_u8(&in) % 3, shape[3], total = 1;
    for (size_t i = 0; i < nd; i++) {
        shape[i] = 1 + fz_u8(&in) % 6;
        total *= shape[i];
    }
    size_t nblocks = 1 + fz_u8(&in) % (shape[0] < 4 ? shape[0] : 4);
    unsigned fl = fz_u8(&in);
    int dev = fl & 1, put_deferred = fl & 2, put_ghost = fl & 4, get_deferred = fl & 8;
    int colmajor = dev && (fl & 16), two_sub = fl & 32, get_ghost = fl & 64;
    size_t nsteps = 1 + fz_u8(&in) % 3;
    int r = colmajor; /* dims handed to the API are reversed */

    char ds[600], params[128];
    snprintf(ds, sizeof ds, "%s/d.bp", fz_tmpdir());
    snprintf(params, sizeof params, "%s%s%s", dev ? "device=simulated,chunk_mib=1,pool_slots=2," : "",
             colmajor ? "gpu_layout=column_major," : "gpu_layout=row_major,",
             two_sub ? "subfiles=2" : "subfiles=1");

    /* ---- write ---- */
    gpubp_file *w;
    gpubp_variable *v;
    if (gpubp_open(&w, ds, GPUBP_MODE_WRITE, params) != GPUBP_OK) FAIL("open for write");
    size_t zero[3] = {0, 0, 0}, ushape[3];
    memcpy(ushape, shape, sizeof ushape);
    if (r) rev(ushape, nd);
    if (gpubp_define_variable(&v, w, "a", t, nd, ushape, zero, ushape) != GPUBP_OK) FAIL("define");
    if (dev && gpubp_set_memory_space(v, GPUBP_MEM_GPU) != GPUBP_OK) FAIL("set_memory_space");
    void *bufs[3 * 4] = {0};
    size_t nbufs = 0;
    for (size_t s = 0; s < nsteps; s++) {
        if (gpubp_begin_step(w) != GPUBP_OK) FAIL("begin_step");
        for (size_t b = 0; b < nblocks; b++) {
            size_t r0 = shape[0] * b / nblocks, r1 = shape[0] * (b + 1) / nblocks;
            size_t st[3] = {r0, 0, 0}, ct[3], md[3], ms[3];
            size_t pad = put_ghost ? 1 : 0, n = 1;
            for (size_t i = 0; i < nd; i++) {
                ct[i] = i == 0 ? r1 - r0 : shape[i];
                md[i] = ct[i] + 2 * pad;
                ms[i] = pad;
                n *= md[i];
            }
            uint8_t *host = malloc(n * es), *p = buf_alloc(dev, n * es);
            if (!host || !p) abort();
            memset(host, 0xAB, n * es);
            /* element (file order) j inside the block -> buffer position */
            size_t cnt = 1;
            for (size_t i = 0; i < nd; i++) cnt *= ct[i];
            for (size_t j = 0; j < cnt; j++) {
                size_t rem = j, g = 0, m = 0, gm = 1, mm = 1, idx[3];
                for (size_t i = nd; i-- > 0;) {
                    idx[i] = rem % ct[i];
                    rem /= ct[i];
                }
                for (size_t i = nd; i-- > 0;) {
                    g += (st[i] + idx[i]) * gm;
                    gm *= shape[i];
                    m += (ms[i] + idx[i]) * mm;
                    mm *= md[i];
                }
                value(t, g, s, host + m * es);
            }
            memcpy(p, host, n * es);
            free(host);
            if (r) { rev(st, nd); rev(ct, nd); rev(md, nd); rev(ms, nd); }
            if (gpubp_set_selection(v, nd, st, ct) != GPUBP_OK) FAIL("set_selection (write)");
            if (put_ghost && gpubp_set_memory_selection(v, nd, ms, md) != GPUBP_OK)
                FAIL("set_memory_selection (write)");
            if (gpubp_put(w, v, p, put_deferred ? GPUBP_DEFERRED : GPUBP_SYNC) != GPUBP_OK)
                FAIL("put");
            bufs[nbufs++] = p;
        }
        if (gpubp_end_step(w) != GPUBP_OK) FAIL("end_step");
        for (size_t i = 0; i < nbufs; i++) buf_free(dev, bufs[i]);
        nbufs = 0;
    }
    if (gpubp_close(w) != GPUBP_OK) FAIL("close (write)");

    /* ---- the selection to read ---- */
    size_t st[3], ct[3], md[3], ms[3], n = 1;
    for (size_t i = 0; i < nd; i++) {
        st[i] = fz_u8(&in) % shape[i];
        ct[i] = 1 + fz_u8(&in) % (shape[i] - st[i]);
        ms[i] = get_ghost ? fz_u8(&in) % 3 : 0;
        md[i] = ct[i] + ms[i] + (get_ghost ? fz_u8(&in) % 3 : 0);
        n *= md[i];
    }
    size_t s0 = fz_u8(&in) % nsteps, sc = 1 + fz_u8(&in) % (nsteps - s0);
    size_t bytes = sc * n * es;
    size_t ust[3], uct[3], umd[3], ums[3];
    memcpy(ust, st, sizeof st); memcpy(uct, ct, sizeof ct);
    memcpy(umd, md, sizeof md); memcpy(ums, ms, sizeof ms);
    if (r) { rev(ust, nd); rev(uct, nd); rev(umd, nd); rev(ums, nd); }

    for (int pass = 0; pass < 2; pass++) {
        if (pass == 1) {
            /* damage data.K: overwrite bytes, maybe cut the file short */
            char p[700];
            snprintf(p, sizeof p, "%s/data.%u", ds, fz_u8(&in) & 1);
            FILE *f = fopen(p, "r+b");
            if (!f) break;
            unsigned edits = fz_u8(&in) % 8;
            for (unsigned e = 0; e < edits; e++) {
                fseek(f, (long)fz_u16(&in), SEEK_SET);
                fputc((int)fz_u8(&in), f);
            }
            fclose(f);
            unsigned cut = fz_u16(&in);
            if ((cut & 1) && truncate(p, (off_t)(cut >> 1)) != 0) { /* absent: fine */ }
        }
        gpubp_file *rd;
        int rc = gpubp_open(&rd, ds, GPUBP_MODE_READ_RANDOM_ACCESS, params);
        if (rc != GPUBP_OK) {
            if (pass == 0) FAIL("open for read");
            if (gpubp_last_error()[0] == '\0') abort();
            break;
        }
        gpubp_variable *rv;
        if (gpubp_inquire_variable(&rv, rd, "a") != GPUBP_OK) FAIL("inquire");
        if (dev && gpubp_set_memory_space(rv, GPUBP_MEM_GPU) != GPUBP_OK) FAIL("memory space (read)");
        size_t gshape[3];
        if (gpubp_variable_shape(rv, GPUBP_MEM_DETECT, gshape) != GPUBP_OK) FAIL("shape");
        for (size_t i = 0; i < nd; i++)
            if (gshape[i] != ushape[i]) FAIL("shape[%zu] %zu, wrote %zu", i, gshape[i], ushape[i]);
        if (gpubp_set_step_selection(rv, s0, sc) != GPUBP_OK) FAIL("step selection");
        if (gpubp_set_selection(rv, nd, ust, uct) != GPUBP_OK) FAIL("selection");
        if (get_ghost && gpubp_set_memory_selection(rv, nd, ums, umd) != GPUBP_OK)
            FAIL("memory selection (read)");
        uint8_t *out = buf_alloc(dev, bytes);
        if (!out) abort();
        rc = gpubp_get(rd, rv, out, get_deferred ? GPUBP_DEFERRED : GPUBP_SYNC);
        if (rc == GPUBP_OK && get_deferred) rc = gpubp_perform_gets(rd);
        if (pass == 0 && rc != GPUBP_OK) FAIL("get");
        if (rc != GPUBP_OK && gpubp_last_error()[0] == '\0') abort();
        if (pass == 0) {
            uint8_t want[16];
            for (size_t s = 0; s < sc; s++) {
                for (size_t j = 0; j < n; j++) {
                    size_t rem = j, idx[3], g = 0, gm = 1;
                    int inside = 1;
                    for (size_t i = nd; i-- > 0;) {
                        idx[i] = rem % md[i];
                        rem /= md[i];
                        if (idx[i] < ms[i] || idx[i] >= ms[i] + ct[i]) inside = 0;
                    }
                    const uint8_t *got = out + (s * n + j) * es;
                    if (!inside) {
                        for (size_t k = 0; k < es; k++)
                            if (got[k] != 0xEE) FAIL("wrote outside the memory box at %zu", j);
                        continue;
                    }
                    for (size_t i = nd; i-- > 0;) {
                        g += (st[i] + idx[i] - ms[i]) * gm;
                        gm *= shape[i];
                    }
                    value(t, g, s0 + s, want);
                    if (memcmp(got, want, es))
                        FAIL("step %zu element %zu (global %zu) differs", s0 + s, j, g);
                }
            }
        }
        buf_free(dev, out);
        gpubp_close(rd);
    }
    (void)total;
    return 0;
}
