/* Datasets read through libgpubp compared with bpls -d / -D / -la output (bpls_dump.h). */
#include "interop/bpls_dump.h"

#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "support/pair_walk.h"
#include "support/values.h"

/* ---- formatting as bpls does ---------------------------------------------------------------- */

void dump_format(gpubp_type type, const void *e, char *out, size_t outsz)
{
    switch (type) {
#if LDBL_MANT_DIG == 64
    case GPUBP_TYPE_LONG_DOUBLE: {
        long double x;
        memcpy(&x, e, sizeof x);
        snprintf(out, outsz, "%Lg", x);
        break;
    }
#endif
    case GPUBP_TYPE_INT8: { int8_t x; memcpy(&x, e, 1); snprintf(out, outsz, "%d", (int)x); break; }
    case GPUBP_TYPE_CHAR: { char x; memcpy(&x, e, 1); snprintf(out, outsz, "%c", x); break; }
    case GPUBP_TYPE_UINT8: { uint8_t x; memcpy(&x, e, 1); snprintf(out, outsz, "%u", (unsigned)x); break; }
    case GPUBP_TYPE_INT16: { int16_t x; memcpy(&x, e, 2); snprintf(out, outsz, "%d", (int)x); break; }
    case GPUBP_TYPE_UINT16: { uint16_t x; memcpy(&x, e, 2); snprintf(out, outsz, "%u", (unsigned)x); break; }
    case GPUBP_TYPE_INT32: { int32_t x; memcpy(&x, e, 4); snprintf(out, outsz, "%d", (int)x); break; }
    case GPUBP_TYPE_UINT32: { uint32_t x; memcpy(&x, e, 4); snprintf(out, outsz, "%u", (unsigned)x); break; }
    case GPUBP_TYPE_INT64: { int64_t x; memcpy(&x, e, 8); snprintf(out, outsz, "%lld", (long long)x); break; }
    case GPUBP_TYPE_UINT64: { uint64_t x; memcpy(&x, e, 8); snprintf(out, outsz, "%llu", (unsigned long long)x); break; }
    case GPUBP_TYPE_FLOAT: { float x; memcpy(&x, e, 4); snprintf(out, outsz, "%g", (double)x); break; }
    case GPUBP_TYPE_DOUBLE: { double x; memcpy(&x, e, 8); snprintf(out, outsz, "%g", x); break; }
    case GPUBP_TYPE_FLOAT_COMPLEX: {
        float x[2];
        memcpy(x, e, 8);
        snprintf(out, outsz, "(%g,i%g)", (double)x[0], (double)x[1]);
        break;
    }
    case GPUBP_TYPE_DOUBLE_COMPLEX: {
        double x[2];
        memcpy(x, e, 16);
        snprintf(out, outsz, "(%g,i%g)", x[0], x[1]);
        break;
    }
    case GPUBP_TYPE_STRING: snprintf(out, outsz, "\"%s\"", (const char *)e); break;
    default: snprintf(out, outsz, "?"); break;
    }
}

static int close_enough(double a, double b)
{
    if (a == b) return 1;
    double m = fabs(a) > fabs(b) ? fabs(a) : fabs(b);
    return fabs(a - b) <= 1e-5 * m + 1e-300;
}

int dump_match(gpubp_type type, const void *got, const char *tok)
{
    char buf[4200];
    dump_format(type, got, buf, sizeof buf);
    if (!strcmp(buf, tok)) return 1;
    switch (type) {
    case GPUBP_TYPE_FLOAT: {
        float x;
        memcpy(&x, got, 4);
        return close_enough(x, strtod(tok, NULL));
    }
    case GPUBP_TYPE_DOUBLE: {
        double x;
        memcpy(&x, got, 8);
        return close_enough(x, strtod(tok, NULL));
    }
#if LDBL_MANT_DIG == 64
    case GPUBP_TYPE_LONG_DOUBLE: {
        long double x, y = strtold(tok, NULL);
        memcpy(&x, got, sizeof x);
        if (x == y) return 1;
        long double m = fabsl(x) > fabsl(y) ? fabsl(x) : fabsl(y);
        return fabsl(x - y) <= 1e-5L * m;
    }
#endif
    case GPUBP_TYPE_FLOAT_COMPLEX:
    case GPUBP_TYPE_DOUBLE_COMPLEX: {
        double re, im;
        if (sscanf(tok, "(%lf,i%lf)", &re, &im) != 2) return 0;
        double x[2];
        if (type == GPUBP_TYPE_FLOAT_COMPLEX) {
            float f[2];
            memcpy(f, got, 8);
            x[0] = f[0];
            x[1] = f[1];
        } else {
            memcpy(x, got, 16);
        }
        return close_enough(x[0], re) && close_enough(x[1], im);
    }
    default:
        return 0;
    }
}

/* ---- checks -------------------------------------------------------------------------------- */

#define MAX_BYTES ((size_t)256 << 20)

/* gets the current selection of v into a new buffer; NULL (and a diff) on failure */
static unsigned char *get_sel(ts_pair *c, gpubp_file *f, gpubp_variable *v, const char *name,
                              size_t want_bytes, size_t *bytes_out)
{
    size_t bytes = 0;
    int rc = gpubp_selection_size(v, &bytes);
    if (rc != GPUBP_OK) {
        ts_pair_diff(c, name, "selection_size -> %d", rc);
        return NULL;
    }
    if (want_bytes && bytes != want_bytes) {
        ts_pair_diff(c, name, "selection_size %zu, expected %zu", bytes, want_bytes);
        return NULL;
    }
    if (bytes > MAX_BYTES) {
        ts_pair_diff(c, name, "selection_size %zu too large", bytes);
        return NULL;
    }
    unsigned char *buf = calloc(bytes + 16, 1);
    rc = gpubp_get(f, v, buf, GPUBP_SYNC);
    if (rc != GPUBP_OK) {
        ts_pair_diff(c, name, "get -> %d (%s)", rc, gpubp_strerror(rc));
        free(buf);
        return NULL;
    }
    if (bytes_out) *bytes_out = bytes;
    return buf;
}

static void compare_values(ts_pair *c, const char *name, gpubp_type t, const unsigned char *buf,
                           char *const *tok, size_t n, const char *where)
{
    size_t es = gpubp_type_size(t);
    int shown = 0;
    const unsigned char *e = buf;
    for (size_t i = 0; i < n; i++, e += t == GPUBP_TYPE_STRING ? strlen((const char *)e) + 1 : es) {
        /* strings (local values): one NUL-terminated value after the other */
        if (!dump_match(t, e, tok[i])) {
            char got[4200];
            dump_format(t, e, got, sizeof got);
            if (shown++ < 5) ts_pair_diff(c, name, "%s element %zu: got %s, dump says %s", where, i, got, tok[i]);
            else c->diffs++;
        }
    }
}

static size_t blocks_in_step(const dump_block *b, size_t nb, size_t step, const dump_block **first)
{
    size_t n = 0;
    *first = NULL;
    for (size_t i = 0; i < nb; i++)
        if (b[i].step == step) {
            if (!n) *first = &b[i];
            n++;
        }
    return n;
}

static gpubp_shape_kind kind_of(dump_kind k)
{
    return k == DV_SCALAR ? GPUBP_SHAPE_GLOBAL_VALUE
           : k == DV_LOCAL_ARRAY ? GPUBP_SHAPE_LOCAL_ARRAY : GPUBP_SHAPE_GLOBAL_ARRAY;
}

/* the global shape of step s: the dump's, with "__" taken from the blocks' extent */
static void step_shape(const dump_var *dv, size_t s, size_t *shape)
{
    for (size_t d = 0; d < dv->ndims; d++) shape[d] = dv->shape[d];
    if (!dv->changing) return;
    for (size_t d = 0; d < dv->ndims; d++)
        if (dv->shape[d] == 0)
            for (size_t i = 0; i < dv->nblocks; i++)
                if (dv->blocks[i].step == s && dv->blocks[i].ndims == dv->ndims &&
                    dv->blocks[i].start[d] + dv->blocks[i].count[d] > shape[d])
                    shape[d] = dv->blocks[i].start[d] + dv->blocks[i].count[d];
}

static void check_attribute(ts_pair *c, gpubp_file *f, const dump_var *dv)
{
    gpubp_type t;
    size_t n = 0;
    int is_array = -1;
    int rc = gpubp_inquire_attribute(f, dv->name, &t, &n, &is_array);
    if (rc != GPUBP_OK) {
        ts_pair_diff(c, dv->name, "inquire_attribute -> %d", rc);
        return;
    }
    if (strcmp(gpubp_type_name(t), dv->type)) ts_pair_diff(c, dv->name, "type %s, dump says %s", gpubp_type_name(t), dv->type);
    if (n != dv->nattr) {
        ts_pair_diff(c, dv->name, "%zu elements, dump has %zu", n, dv->nattr);
        return;
    }
    if (is_array != dv->attr_is_list) ts_pair_diff(c, dv->name, "is_array %d, dump prints %s", is_array, dv->attr_is_list ? "a list" : "a value");
    if (t == GPUBP_TYPE_STRING) {
        for (size_t i = 0; i < n; i++) {
            const char *s = NULL;
            rc = gpubp_attribute_string(f, dv->name, i, &s);
            if (rc != GPUBP_OK || !s) {
                ts_pair_diff(c, dv->name, "attribute_string(%zu) -> %d", i, rc);
                continue;
            }
            if (!dump_match(t, s, dv->attr[i])) ts_pair_diff(c, dv->name, "element %zu \"%s\", dump says %s", i, s, dv->attr[i]);
        }
        return;
    }
    size_t es = gpubp_type_size(t);
    unsigned char *buf = calloc(n * es + 16, 1);
    rc = gpubp_attribute_data(f, dv->name, buf);
    if (rc != GPUBP_OK) ts_pair_diff(c, dv->name, "attribute_data -> %d", rc);
    else compare_values(c, dv->name, t, buf, dv->attr, n, "attribute");
    free(buf);
}

static void check_minmax(ts_pair *c, gpubp_variable *v, const dump_var *dv, gpubp_type t)
{
    if (!dv->min || t == GPUBP_TYPE_STRING) return;
    unsigned char mn[32], mx[32];
    int rc = gpubp_variable_minmax(v, mn, mx);
    if (rc != GPUBP_OK) {
        ts_pair_diff(c, dv->name, "minmax -> %d", rc);
        return;
    }
    char a[128], b[128];
    dump_format(t, mn, a, sizeof a);
    dump_format(t, mx, b, sizeof b);
    if (!dump_match(t, mn, dv->min) || !dump_match(t, mx, dv->max))
        ts_pair_diff(c, dv->name, "min/max %s / %s, dump says %s / %s", a, b, dv->min, dv->max);
}

/* blocks of step s against the -D dump, through block_info; each global-array block read back
 * must agree with its own min/max */
/* index of element `i` of a box (start, count) within an array of `shape`, row-major */
static size_t box_to_linear(size_t nd, const size_t *shape, const size_t *start,
                            const size_t *count, size_t i)
{
    size_t lin = 0, rem = i, idx[DUMP_MAXDIMS];
    for (size_t d = nd; d-- > 0;) {
        idx[d] = start[d] + rem % count[d];
        rem /= count[d];
    }
    for (size_t d = 0; d < nd; d++) lin = lin * shape[d] + idx[d];
    return lin;
}

static void check_blocks(ts_pair *c, gpubp_file *f, gpubp_variable *v, const dump_var *dv,
                         gpubp_type t, size_t s, size_t vstep, const unsigned char *whole,
                         const size_t *wshape)
{
    const dump_block *first;
    size_t nb = blocks_in_step(dv->blocks, dv->nblocks, s, &first);
    size_t got = 0;
    int rc = gpubp_variable_blocks(v, vstep, &got);
    if (rc != GPUBP_OK) {
        ts_pair_diff(c, dv->name, "variable_blocks(step %zu) -> %d", s, rc);
        return;
    }
    if (got != nb) {
        ts_pair_diff(c, dv->name, "step %zu: %zu blocks, dump has %zu", s, got, nb);
        return;
    }
    size_t es = gpubp_type_size(t);
    const dump_block *db = first;
    for (size_t b = 0; b < nb; b++, db++) {
        while (db->step != s) db++;
        size_t st[DUMP_MAXDIMS], ct[DUMP_MAXDIMS];
        unsigned char mn[32], mx[32];
        int str = t == GPUBP_TYPE_STRING;
        rc = gpubp_variable_block_info(v, vstep, b, st, ct, str ? NULL : mn, str ? NULL : mx);
        if (rc != GPUBP_OK) {
            ts_pair_diff(c, dv->name, "block_info(step %zu, block %zu) -> %d", s, b, rc);
            continue;
        }
        if (dv->kind == DV_SCALAR) {
            if (db->value && !str && (!dump_match(t, mn, db->value) || !dump_match(t, mx, db->value)))
                ts_pair_diff(c, dv->name, "step %zu: block min/max is not the value %s", s, db->value);
            continue;
        }
        if (db->null_box) {
            for (size_t d = 0; d < dv->ndims; d++)
                if (ct[d] != 0) {
                    ts_pair_diff(c, dv->name, "step %zu block %zu: count %zu, dump says [null]", s, b, ct[d]);
                    break;
                }
            continue;
        }
        if (db->ndims != dv->ndims) {
            ts_pair_diff(c, dv->name, "dump block has %zu dims", db->ndims);
            continue;
        }
        int bad = 0;
        for (size_t d = 0; d < dv->ndims && !bad; d++) {
            size_t wst = dv->kind == DV_LOCAL_ARRAY ? 0 : db->start[d];
            if (st[d] != wst || ct[d] != db->count[d]) {
                ts_pair_diff(c, dv->name, "step %zu block %zu dim %zu: start %zu count %zu, dump says %zu:%zu",
                     s, b, d, st[d], ct[d], db->start[d], db->start[d] + db->count[d] - 1);
                bad = 1;
            }
        }
        if (bad || str) continue;
        size_t n = ts_prod(dv->ndims, ct);
        if (dv->kind == DV_GLOBAL_ARRAY) {
            if (gpubp_set_selection(v, dv->ndims, st, ct) != GPUBP_OK) {
                ts_pair_diff(c, dv->name, "set_selection of block %zu", b);
                continue;
            }
        } else {
            gpubp_set_block_selection(v, b);
        }
        unsigned char *buf = get_sel(c, f, v, dv->name, n * es, NULL);
        if (!buf) continue;
        /* the block read alone equals its region of the whole step */
        if (whole && dv->kind == DV_GLOBAL_ARRAY) {
            for (size_t i = 0; i < n; i++) {
                size_t at = box_to_linear(dv->ndims, wshape, st, ct, i);
                if (ts_elems_differ(t, buf + i * es, whole + at * es, es)) {
                    ts_pair_diff(c, dv->name, "step %zu block %zu: element %zu read alone differs from the whole-step read", s, b, i);
                    break;
                }
            }
        }
        unsigned char dmn[32], dmx[32];
        ts_minmax(t, es, buf, n, dmn, dmx);
        if (dv->no_minmax) { /* the file has no statistics: block_info gives zeros */
            static const unsigned char zero[32];
            if (memcmp(mn, zero, es) || memcmp(mx, zero, es))
                ts_pair_diff(c, dv->name, "step %zu block %zu: min/max not zeros without statistics", s, b);
        } else if (ts_cmp(t, dmn, mn) != 0 || ts_cmp(t, dmx, mx) != 0) {
            char a[128], b2[128], x[128], y[128];
            dump_format(t, mn, a, sizeof a);
            dump_format(t, mx, b2, sizeof b2);
            dump_format(t, dmn, x, sizeof x);
            dump_format(t, dmx, y, sizeof y);
            ts_pair_diff(c, dv->name, "step %zu block %zu: block_info min/max %s / %s, its data has %s / %s",
                 s, b, a, b2, x, y);
        }
        free(buf);
    }
}

/* A local value: bpls presents it as a 1-D global array of one value per block. */
static int is_local_value(gpubp_shape_kind k, const dump_var *dv)
{
    return k == GPUBP_SHAPE_LOCAL_VALUE && dv->kind == DV_GLOBAL_ARRAY && dv->ndims == 1;
}

/* The k-th step of a local value (vstep: the step argument of the block queries): as many
 * elements as -D lists blocks (bpls prints every step with the last step's count, so the values
 * of -d are compared where both have them), each block's value alone and in a box. */
static void check_local_value(ts_pair *c, gpubp_file *f, gpubp_variable *v, const dump_var *dv,
                              gpubp_type t, size_t k, size_t vstep, const char *mode)
{
    size_t got = 0, nb = 0, es = gpubp_type_size(t), zero[1] = {0};
    const dump_block *first;
    gpubp_variable_shape(v, GPUBP_MEM_HOST, &got);
    if (dv->nblocks) {
        nb = blocks_in_step(dv->blocks, dv->nblocks, k, &first);
        if (got != nb) ts_pair_diff(c, dv->name, "%sstep %zu: %zu values, -D lists %zu blocks", mode, k, got, nb);
    }
    gpubp_variable_blocks(v, vstep, &nb);
    if (nb != got) ts_pair_diff(c, dv->name, "%sstep %zu: shape %zu, %zu blocks", mode, k, got, nb);
    size_t n = got < dv->shape[0] ? got : dv->shape[0];
    char where[64];
    snprintf(where, sizeof where, "%sstep %zu", mode, k);
    gpubp_set_selection(v, 1, zero, &n);
    unsigned char *buf = get_sel(c, f, v, dv->name, n * es, NULL);
    if (buf && dv->have_values) compare_values(c, dv->name, t, buf, dv->vals + k * dv->shape[0], n, where);
    /* each block alone: its value, through a block selection and through a box */
    const unsigned char *e = buf;
    for (size_t b = 0; buf && b < n; b++) {
        size_t one = 1;
        for (int how = 0; how < 2; how++) {
            if (how) gpubp_set_selection(v, 1, &b, &one);
            else gpubp_set_block_selection(v, b);
            size_t bytes = t == GPUBP_TYPE_STRING ? strlen((const char *)e) + 1 : es;
            unsigned char *x = get_sel(c, f, v, dv->name, bytes, NULL);
            if (x && (t == GPUBP_TYPE_STRING ? strcmp((char *)x, (const char *)e)
                                             : ts_elems_differ(t, x, e, es)))
                ts_pair_diff(c, dv->name, "%s: block %zu read alone (%s) differs", where, b,
                     how ? "box" : "block selection");
            free(x);
        }
        e += t == GPUBP_TYPE_STRING ? strlen((const char *)e) + 1 : es;
    }
    free(buf);
}

/* random access: every variable of the dump */
static void check_var_random(ts_pair *c, gpubp_file *f, const dump_var *dv)
{
    gpubp_variable *v = NULL;
    int rc = gpubp_inquire_variable(&v, f, dv->name);
    if (rc != GPUBP_OK) {
        ts_pair_diff(c, dv->name, "inquire -> %d", rc);
        return;
    }
    gpubp_type t;
    gpubp_shape_kind k;
    size_t nd = 99, ns = 0;
    gpubp_variable_type(v, &t);
    if (strcmp(gpubp_type_name(t), dv->type)) {
        ts_pair_diff(c, dv->name, "type %s, dump says %s", gpubp_type_name(t), dv->type);
        return;
    }
    gpubp_variable_shape_kind(v, &k);
    if (k != kind_of(dv->kind) && !is_local_value(k, dv))
        ts_pair_diff(c, dv->name, "shape kind %d, expected %d", (int)k, (int)kind_of(dv->kind));
    gpubp_variable_ndims(v, &nd);
    if (nd != dv->ndims) {
        ts_pair_diff(c, dv->name, "ndims %zu, dump says %zu", nd, dv->ndims);
        return;
    }
    gpubp_variable_steps(v, &ns);
    if (ns != dv->nsteps) {
        ts_pair_diff(c, dv->name, "%zu steps, dump says %zu", ns, dv->nsteps);
        return;
    }
    size_t es = gpubp_type_size(t);
    /* min/max over all steps */
    if (gpubp_set_step_selection(v, 0, ns) != GPUBP_OK) ts_pair_diff(c, dv->name, "step selection 0..%zu", ns);
    check_minmax(c, v, dv, t);

    for (size_t s = 0; s < ns; s++) {
        rc = gpubp_set_step_selection(v, s, 1);
        if (rc != GPUBP_OK) {
            ts_pair_diff(c, dv->name, "set_step_selection(%zu) -> %d", s, rc);
            continue;
        }
        unsigned char *whole = NULL;
        size_t shape[DUMP_MAXDIMS] = {0};
        if (is_local_value(k, dv)) {
            check_local_value(c, f, v, dv, t, s, s, "");
        } else if (dv->kind == DV_GLOBAL_ARRAY) {
            size_t got[DUMP_MAXDIMS], zero[DUMP_MAXDIMS] = {0};
            step_shape(dv, s, shape);
            gpubp_variable_shape(v, GPUBP_MEM_HOST, got);
            if (memcmp(shape, got, nd * sizeof *got)) {
                ts_pair_diff(c, dv->name, "step %zu: shape differs from the dump", s);
                continue;
            }
            size_t n = ts_prod(nd, shape);
            gpubp_set_selection(v, nd, zero, shape);
            whole = get_sel(c, f, v, dv->name, n * es, NULL);
            if (whole && dv->have_values) {
                char where[64];
                snprintf(where, sizeof where, "step %zu", s);
                compare_values(c, dv->name, t, whole, dv->vals + s * n, n, where);
                /* an inner box, crossing block boundaries where there are several blocks */
                size_t bst[DUMP_MAXDIMS], bct[DUMP_MAXDIMS];
                for (size_t d = 0; d < nd; d++) {
                    bst[d] = shape[d] / 3;
                    bct[d] = shape[d] - bst[d] - shape[d] / 4;
                    if (bct[d] == 0) bct[d] = 1;
                }
                size_t bn = ts_prod(nd, bct);
                if (gpubp_set_selection(v, nd, bst, bct) != GPUBP_OK) {
                    ts_pair_diff(c, dv->name, "step %zu: set_selection of an inner box", s);
                } else {
                    unsigned char *box = get_sel(c, f, v, dv->name, bn * es, NULL);
                    for (size_t i = 0; box && i < bn; i++) {
                        size_t at = box_to_linear(nd, shape, bst, bct, i);
                        if (!dump_match(t, box + i * es, dv->vals[s * n + at])) {
                            ts_pair_diff(c, dv->name, "step %zu: inner box element %zu differs from the dump's %s", s, i, dv->vals[s * n + at]);
                            break;
                        }
                    }
                    free(box);
                }
            }
        } else if (dv->kind == DV_SCALAR) {
            if (dv->have_values || dv->nblocks) {
                const char *want = dv->have_values ? dv->vals[s] : NULL;
                const dump_block *db = NULL;
                if (!want && blocks_in_step(dv->blocks, dv->nblocks, s, &db) && db) want = db->value;
                size_t bytes = 0;
                unsigned char *buf = get_sel(c, f, v, dv->name, t == GPUBP_TYPE_STRING ? 0 : es, &bytes);
                if (buf && want && !dump_match(t, buf, want)) {
                    char g[4200];
                    dump_format(t, buf, g, sizeof g);
                    ts_pair_diff(c, dv->name, "step %zu: value %s, dump says %s", s, g, want);
                }
                if (buf && t == GPUBP_TYPE_STRING && strlen((char *)buf) + 1 != bytes)
                    ts_pair_diff(c, dv->name, "step %zu: selection_size %zu for a string of %zu", s, bytes, strlen((char *)buf));
                free(buf);
            }
        } else if (dv->kind == DV_LOCAL_ARRAY) {
            size_t b = 0;
            for (size_t i = 0; i < dv->ndblocks; i++) {
                const dump_block *db = &dv->dblocks[i];
                if (db->step != s) continue;
                gpubp_set_block_selection(v, b);
                size_t dims[DUMP_MAXDIMS];
                gpubp_variable_shape(v, GPUBP_MEM_HOST, dims);
                if (memcmp(dims, db->count, nd * sizeof *dims))
                    ts_pair_diff(c, dv->name, "step %zu block %zu: shape differs from the dump", s, b);
                else {
                    unsigned char *buf = get_sel(c, f, v, dv->name, db->ntok * es, NULL);
                    char where[64];
                    snprintf(where, sizeof where, "step %zu block %zu", s, b);
                    if (buf) compare_values(c, dv->name, t, buf, db->tok, db->ntok, where);
                    free(buf);
                }
                b++;
            }
        }
        if (dv->nblocks) check_blocks(c, f, v, dv, t, s, s, whole, shape);
        free(whole);
    }
    /* the step as the slowest dimension: all steps in one get */
    if (ns > 1 && dv->have_values && t != GPUBP_TYPE_STRING &&
        (dv->kind == DV_SCALAR || (dv->kind == DV_GLOBAL_ARRAY && !dv->changing))) {
        size_t zero[DUMP_MAXDIMS] = {0};
        if (gpubp_set_step_selection(v, 0, ns) != GPUBP_OK) ts_pair_diff(c, dv->name, "step selection 0..%zu", ns);
        if (dv->kind == DV_GLOBAL_ARRAY) gpubp_set_selection(v, nd, zero, dv->shape);
        unsigned char *buf = get_sel(c, f, v, dv->name, dv->nvals * es, NULL);
        if (buf) compare_values(c, dv->name, t, buf, dv->vals, dv->nvals, "all steps");
        free(buf);
    }
}

static void check_names(ts_pair *c, gpubp_file *f, dump_set *ds, int attrs)
{
    size_t n = 0, want = 0;
    const char *const *names = NULL;
    int rc = attrs ? gpubp_available_attributes(f, &n, &names) : gpubp_available_variables(f, &n, &names);
    if (rc != GPUBP_OK) {
        ts_pair_diff(c, "-", "available_%s -> %d", attrs ? "attributes" : "variables", rc);
        return;
    }
    for (size_t i = 0; i < ds->n; i++)
        if ((ds->vars[i].kind == DV_ATTRIBUTE) == attrs) want++;
    if (n != want) ts_pair_diff(c, "-", "%zu %s, the dump lists %zu", n, attrs ? "attributes" : "variables", want);
    for (size_t i = 0; i < n; i++) {
        dump_var *dv = dump_find(ds, names[i]);
        if (!dv || (dv->kind == DV_ATTRIBUTE) != attrs) ts_pair_diff(c, names[i], "not in the dump");
        if (i && strcmp(names[i - 1], names[i]) >= 0) ts_pair_diff(c, names[i], "names not sorted");
    }
}

static void check_read_mode(ts_pair *c, gpubp_file *f, dump_set *ds)
{
    size_t *seen = calloc(ds->n + 1, sizeof *seen);
    size_t maxsteps = 0, s = 0;
    for (size_t i = 0; i < ds->n; i++)
        if (ds->vars[i].kind != DV_ATTRIBUTE && ds->vars[i].nsteps > maxsteps) maxsteps = ds->vars[i].nsteps;
    int rc;
    while ((rc = gpubp_begin_step(f)) == GPUBP_OK) {
        for (size_t i = 0; i < ds->n; i++) {
            const dump_var *dv = &ds->vars[i];
            if (dv->kind == DV_ATTRIBUTE) continue;
            gpubp_variable *v = NULL;
            if (gpubp_inquire_variable(&v, f, dv->name) != GPUBP_OK) continue;
            size_t k = seen[i]++;
            if (k >= dv->nsteps) {
                ts_pair_diff(c, dv->name, "present in more steps than the dump's %zu", dv->nsteps);
                continue;
            }
            gpubp_type t;
            gpubp_variable_type(v, &t);
            size_t es = gpubp_type_size(t), nd = dv->ndims;
            char where[64];
            snprintf(where, sizeof where, "READ step %zu", s);
            gpubp_shape_kind kd = GPUBP_SHAPE_GLOBAL_VALUE;
            gpubp_variable_shape_kind(v, &kd);
            if (is_local_value(kd, dv)) {
                check_local_value(c, f, v, dv, t, k, 0, "READ ");
            } else if (dv->kind == DV_GLOBAL_ARRAY) {
                size_t shape[DUMP_MAXDIMS], got[DUMP_MAXDIMS], zero[DUMP_MAXDIMS] = {0};
                step_shape(dv, k, shape);
                gpubp_variable_shape(v, GPUBP_MEM_HOST, got);
                if (memcmp(shape, got, nd * sizeof *got)) {
                    ts_pair_diff(c, dv->name, "%s: shape differs from the dump", where);
                    continue;
                }
                if (!dv->have_values) continue;
                size_t n = ts_prod(nd, shape);
                gpubp_set_selection(v, nd, zero, shape);
                unsigned char *buf = get_sel(c, f, v, dv->name, n * es, NULL);
                if (buf) compare_values(c, dv->name, t, buf, dv->vals + k * n, n, where);
                free(buf);
            } else if (dv->kind == DV_SCALAR && dv->have_values) {
                unsigned char *buf = get_sel(c, f, v, dv->name, t == GPUBP_TYPE_STRING ? 0 : es, NULL);
                if (buf && !dump_match(t, buf, dv->vals[k])) ts_pair_diff(c, dv->name, "%s: value differs from %s", where, dv->vals[k]);
                free(buf);
            } else if (dv->kind == DV_LOCAL_ARRAY) {
                size_t b = 0, nb = 0;
                gpubp_variable_blocks(v, 0, &nb);
                for (size_t j = 0; j < dv->ndblocks; j++) {
                    const dump_block *db = &dv->dblocks[j];
                    if (db->step != k) continue;
                    gpubp_set_block_selection(v, b);
                    unsigned char *buf = get_sel(c, f, v, dv->name, db->ntok * es, NULL);
                    if (buf) compare_values(c, dv->name, t, buf, db->tok, db->ntok, where);
                    free(buf);
                    b++;
                }
                if (dv->ndblocks && nb != b) ts_pair_diff(c, dv->name, "%s: %zu blocks, dump has %zu", where, nb, b);
            }
        }
        if (gpubp_end_step(f) != GPUBP_OK) ts_pair_diff(c, "-", "end_step");
        s++;
        if (s > 100000) break;
    }
    if (rc != GPUBP_END_OF_STREAM) ts_pair_diff(c, "-", "begin_step ended with %d, not END_OF_STREAM", rc);
    if (s < maxsteps) ts_pair_diff(c, "-", "READ mode gave %zu steps, the dump has %zu", s, maxsteps);
    for (size_t i = 0; i < ds->n; i++)
        if (ds->vars[i].kind != DV_ATTRIBUTE && seen[i] != ds->vars[i].nsteps)
            ts_pair_diff(c, ds->vars[i].name, "seen in %zu steps in READ mode, dump says %zu", seen[i], ds->vars[i].nsteps);
    free(seen);
}

int dump_check_dataset(const char *dataset, const char *prefix, gpubp_mode mode)
{
    dump_set ds;
    if (dump_load(&ds, prefix) != 0) {
        dump_free(&ds);
        fprintf(stderr, "cannot parse the dumps of %s\n", prefix);
        return 1;
    }
    int diffs = dump_check_loaded(dataset, &ds, mode);
    dump_free(&ds);
    return diffs;
}

int dump_check_loaded(const char *dataset, dump_set *dsp, gpubp_mode mode)
{
    ts_pair c = {dataset, 0, 0, 0};
    dump_set ds = *dsp;
    gpubp_file *f = NULL;
    int rc = gpubp_open(&f, dataset, mode, NULL);
    if (rc != GPUBP_OK) {
        fprintf(stderr, "open %s -> %d (%s): %s\n", dataset, rc, gpubp_strerror(rc), gpubp_last_error());
        return -1;
    }
    if (mode == GPUBP_MODE_READ) {
        check_read_mode(&c, f, &ds);
    } else {
        check_names(&c, f, &ds, 0);
        if (ds.have_la) check_names(&c, f, &ds, 1);
        for (size_t i = 0; i < ds.n; i++) {
            if (ds.vars[i].kind == DV_ATTRIBUTE) check_attribute(&c, f, &ds.vars[i]);
            else check_var_random(&c, f, &ds.vars[i]);
        }
    }
    rc = gpubp_close(f);
    if (rc != GPUBP_OK) ts_pair_diff(&c, "-", "close -> %d", rc);
    return c.diffs;
}

/* ---- dataset against dataset ----------------------------------------------------------------- */

int dump_compare_datasets(const char *a, const char *b)
{
    ts_pair c = {a, 0, 0, 0};
    return ts_pair_random(&c, a, b);
}
