/* The BP5 parser (lib/format/bp5*.c) over every golden BP5 dataset: md.idx, mmd.0 and every
 * step's metadata and attribute blocks are decoded, a small model of what a reader presents is
 * built from the decoded records (relative steps, blocks across writers, local values as 1-D
 * arrays, joined offsets, flattened steps), and it is compared with ADIOS2's bpls dumps beside each
 * dataset: NAME.bp.la.txt (types, names, step counts, shapes, min/max, attributes with their
 * values) and NAME.bp.laD.txt or NAME.bp.blocks.txt (per step: each block's box and min/max, each
 * value). Every uncompressed block is also located in its data.K (flush pieces, sub-files) and the
 * min/max of the bytes found there must equal the block's recorded min/max.
 * Datasets: $GPUBP_GOLDEN_DIR (default tests/golden) / BP5, gpu/BP5, bp5/..., codecs/BP5. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "format/bp5_ffs.h"
#include "format/bp5_idx.h"
#include "format/bp5_index.h"
#include "format/bp5_meta.h"
#include "support/test_support.h"


/* ---- the model ------------------------------------------------------------------------------- */

typedef struct mblock {
    uint64_t count[GBP_MAX_DIMS], start[GBP_MAX_DIMS];
    int has_mm;
    uint8_t mm[32];          /* min [0,16), max [16,32); values: the value in [0,16) */
    char *str;
    uint64_t writer, loc, stored;
} mblock;

typedef struct mstep {
    size_t abs;              /* the dataset step */
    uint64_t shape[GBP_MAX_DIMS];
    int has_shape;
    mblock *b;
    size_t nb;
    uint64_t joined;         /* running sum along the joined dimension */
} mstep;

typedef struct mvar {
    char *name;
    int type, kind, unsupported, has_mm_field, has_op;
    uint32_t esize;
    size_t ndims;
    mstep *s;
    size_t ns;
    int jdim;
    uint64_t last_joined;
} mvar;

typedef struct model {
    mvar *v;
    size_t nv;
    gbp_attr *a;
    size_t na;
    size_t step;             /* step being decoded */
    uint64_t nwriters;       /* of that step */
    int flatten;
    int failed;
} model;

static mvar *find_var(model *m, const char *name)
{
    for (size_t i = 0; i < m->nv; i++)
        if (strcmp(m->v[i].name, name) == 0) return &m->v[i];
    return NULL;
}

static int sink_var(void *ctx, uint64_t w, const bp5_var_field *f, const bp5_array_rec *a,
                    const bp5_value_rec *val)
{
    model *m = ctx;
    mvar *v = find_var(m, f->name);
    if (!v) {
        m->v = realloc(m->v, (m->nv + 1) * sizeof *m->v);
        v = &m->v[m->nv++];
        memset(v, 0, sizeof *v);
        v->name = strdup(f->name);
        v->type = f->type;
        v->kind = f->kind;
        v->esize = f->esize;
        v->unsupported = f->unsupported;
        v->has_mm_field = f->has_mm;
        v->has_op = f->has_op;
        v->ndims = a ? (size_t)a->ndims : f->kind == GPUBP_SHAPE_LOCAL_VALUE ? 1 : 0;
        v->jdim = -1;
    }
    if (v->type != f->type || v->kind != f->kind) {
        print_error("variable %s changes type or kind\n", f->name);
        m->failed = 1;
        return GPUBP_OK;
    }
    size_t rs = m->flatten ? 0 : m->step;
    if (v->ns == 0 || v->s[v->ns - 1].abs != rs) {
        v->s = realloc(v->s, (v->ns + 1) * sizeof *v->s);
        memset(&v->s[v->ns], 0, sizeof v->s[v->ns]);
        v->s[v->ns].abs = rs;
        v->ns++;
    }
    mstep *st = &v->s[v->ns - 1];
    if (f->unsupported) return GPUBP_OK;
    if (val) {
        st->b = realloc(st->b, (st->nb + 1) * sizeof *st->b);
        mblock *b = &st->b[st->nb++];
        memset(b, 0, sizeof *b);
        b->writer = w;
        memcpy(b->mm, val->bytes, 16);
        b->str = val->str ? strndup(val->str, val->str_len) : NULL;
        b->count[0] = 1;
        b->start[0] = w;
        if (f->kind == GPUBP_SHAPE_LOCAL_VALUE) {
            st->shape[0] = m->nwriters;
            st->has_shape = 1;
        }
        return GPUBP_OK;
    }
    if (a->ndims != v->ndims) {
        print_error("variable %s changes its dimension count\n", f->name);
        m->failed = 1;
        return GPUBP_OK;
    }
    size_t D = (size_t)a->ndims;
    if (a->shape && !st->has_shape) {
        memcpy(st->shape, a->shape, D * sizeof *a->shape);
        st->has_shape = 1;
    }
    for (size_t k = 0; k < D && a->shape; k++)
        if (a->shape[k] == BP5_JOINED_DIM) v->jdim = (int)k;
    for (uint64_t i = 0; i < a->nblocks; i++) {
        st->b = realloc(st->b, (st->nb + 1) * sizeof *st->b);
        mblock *b = &st->b[st->nb++];
        memset(b, 0, sizeof *b);
        b->writer = w;
        memcpy(b->count, a->count + i * D, D * sizeof(uint64_t));
        if (a->start) memcpy(b->start, a->start + i * D, D * sizeof(uint64_t));
        if (f->kind == GPUBP_SHAPE_JOINED_ARRAY) {
            b->start[v->jdim] = st->joined;
            st->joined += b->count[v->jdim];
            v->last_joined = st->joined;
        }
        b->loc = a->location[i];
        b->stored = a->stored ? a->stored[i] : BP5_NO_DATA;
        if (a->minmax) {
            b->has_mm = 1;
            memcpy(b->mm, a->minmax + 2 * i * v->esize, v->esize);
            memcpy(b->mm + 16, a->minmax + (2 * i + 1) * v->esize, v->esize);
        }
    }
    return GPUBP_OK;
}

static int sink_attr(void *ctx, gbp_attr *a)
{
    model *m = ctx;
    for (size_t i = 0; i < m->na; i++)
        if (strcmp(m->a[i].name, a->name) == 0) {
            gbp_attr_free(&m->a[i]);
            m->a[i] = *a;
            return GPUBP_OK;
        }
    m->a = realloc(m->a, (m->na + 1) * sizeof *m->a);
    m->a[m->na++] = *a;
    return GPUBP_OK;
}

static void model_free(model *m)
{
    for (size_t i = 0; i < m->nv; i++) {
        for (size_t s = 0; s < m->v[i].ns; s++) {
            for (size_t b = 0; b < m->v[i].s[s].nb; b++) free(m->v[i].s[s].b[b].str);
            free(m->v[i].s[s].b);
        }
        free(m->v[i].s);
        free(m->v[i].name);
    }
    for (size_t i = 0; i < m->na; i++) gbp_attr_free(&m->a[i]);
    free(m->v);
    free(m->a);
}

/* ---- loading ---------------------------------------------------------------------------------- */

typedef struct dataset {
    char dir[8300];
    unsigned char *md0;
    size_t md0_len, mmd_len;
    bp5_idx ix;
    bp5_formats ft;
    model m;
} dataset;

static unsigned char *load(const char *dir, const char *name, size_t *n)
{
    unsigned char *p = ts_read_file(ts_join(dir, name), n);
    if (!p) print_error("cannot read %s/%s\n", dir, name);
    return p;
}

/* Parses everything; returns the first parser status. */
static int load_dataset(dataset *d)
{
    size_t ni, nm, n0;
    unsigned char *idx = load(d->dir, "md.idx", &ni), *mmd = load(d->dir, "mmd.0", &nm),
                  *md0 = load(d->dir, "md.0", &n0);
    assert_non_null(idx);
    assert_non_null(mmd);
    assert_non_null(md0);
    bp5_idx_init(&d->ix);
    bp5_formats_init(&d->ft);
    int rc = bp5_idx_parse(&d->ix, idx, ni, n0, 0, "md.idx");
    d->ft.big_endian = d->ix.big_endian;
    if (!rc) rc = bp5_formats_parse(&d->ft, mmd, nm, 0, "mmd.0");
    bp5_scratch scr = {0};
    bp5_md_sink sink = {&d->m, sink_var, sink_attr, NULL, NULL};
    d->m.flatten = d->ix.flatten;
    for (size_t s = 0; !rc && s < d->ix.nsteps; s++) {
        const bp5_step_rec *r = &d->ix.steps[s];
        d->m.step = s;
        d->m.nwriters = d->ix.maps[r->map].nwriters;
        rc = bp5_decode_step(&d->ix, &d->ft, s, md0 + r->md_pos, (size_t)r->md_size, &scr, &sink,
                             "md.0");
        for (size_t i = 0; i < d->m.nv; i++) {
            mvar *v = &d->m.v[i];
            mstep *st = v->ns ? &v->s[v->ns - 1] : NULL;
            if (st && v->jdim >= 0 && st->has_shape) st->shape[v->jdim] = st->joined;
        }
    }
    if (rc) print_error("%s: %s\n", d->dir, gpubp_last_error());
    bp5_scratch_free(&scr);
    free(idx);
    free(mmd);
    d->md0 = md0;
    d->md0_len = n0;
    return rc;
}

/* ---- printing numbers as text to compare with -------------------------------------------------- */

static const char *type_name(int t)
{
    return t == BP5_GPUBP_LONG_DOUBLE ? "long double" : gbp_type_name(t);
}

static int is_complex(int t)
{
    return t == GPUBP_TYPE_FLOAT_COMPLEX || t == GPUBP_TYPE_DOUBLE_COMPLEX;
}

/* An element as a long double (complex: its real part in *re, imaginary in *im). */
static void elem_value(int t, const uint8_t *p, long double *re, long double *im)
{
    *im = 0;
    switch (t) {
#define C(T, TY) case T: { TY x; memcpy(&x, p, sizeof x); *re = (long double)x; } break
    C(GPUBP_TYPE_INT8, int8_t); C(GPUBP_TYPE_INT16, int16_t); C(GPUBP_TYPE_INT32, int32_t);
    C(GPUBP_TYPE_INT64, int64_t); C(GPUBP_TYPE_UINT8, uint8_t); C(GPUBP_TYPE_UINT16, uint16_t);
    C(GPUBP_TYPE_UINT32, uint32_t); C(GPUBP_TYPE_UINT64, uint64_t); C(GPUBP_TYPE_FLOAT, float);
    C(GPUBP_TYPE_DOUBLE, double); C(GPUBP_TYPE_CHAR, int8_t);
#undef C
    case GPUBP_TYPE_FLOAT_COMPLEX: { float x[2]; memcpy(x, p, sizeof x); *re = x[0]; *im = x[1]; } break;
    case GPUBP_TYPE_DOUBLE_COMPLEX: { double x[2]; memcpy(x, p, sizeof x); *re = x[0]; *im = x[1]; } break;
    default:
        if (t == BP5_GPUBP_LONG_DOUBLE && sizeof(long double) == 16) memcpy(re, p, 16);
        else *re = NAN;
    }
}

/* Does the bpls text s (a number, or "(re,iim)") equal the element at p? */
static int num_eq(int t, const uint8_t *p, const char *s)
{
    long double re, im;
    elem_value(t, p, &re, &im);
    char *e;
    if (is_complex(t)) {
        if (*s != '(') return 0;
        long double r = strtold(s + 1, &e);
        if (strncmp(e, ",i", 2) != 0) return 0;
        long double i = strtold(e + 2, &e);
        return fabsl(r - re) <= 1e-5L * fabsl(re) + 1e-30L && fabsl(i - im) <= 1e-5L * fabsl(im) + 1e-30L;
    }
    long double x = strtold(s, &e);
    if (e == s) return 0;
    return fabsl(x - re) <= 1e-5L * fabsl(re) + 1e-30L;
}

/* ---- the comparison ----------------------------------------------------------------------------- */

static int diffs;

#define DIFF(...) do { print_error(__VA_ARGS__); diffs++; } while (0)

static int elem_cmp(int t, const uint8_t *a, const uint8_t *b)
{
    if (t == BP5_GPUBP_LONG_DOUBLE) {
        long double x, y, i;
        elem_value(t, a, &x, &i);
        elem_value(t, b, &y, &i);
        return x < y ? -1 : y < x;
    }
    return gbp_value_cmp(t, a, b);
}

/* min/max over a var's blocks, fed both of each block's values, as ADIOS2 does (§13); blocks of
 * writers beyond the last step's writer count are left out, as ADIOS2 does. */
static int var_minmax(const mvar *v, uint64_t last_w, uint8_t *mn, uint8_t *mx)
{
    int have = 0;
    int value = v->kind == GPUBP_SHAPE_GLOBAL_VALUE || v->kind == GPUBP_SHAPE_LOCAL_VALUE;
    for (size_t s = 0; s < v->ns; s++)
        for (size_t b = 0; b < v->s[s].nb; b++) {
            const mblock *k = &v->s[s].b[b];
            if (v->kind == GPUBP_SHAPE_GLOBAL_VALUE && b > 0) break; /* the first writer's */
            if ((!value && !k->has_mm) || k->writer >= last_w) continue;
            for (int h = 0; h < (value ? 1 : 2); h++) {
                const uint8_t *x = k->mm + 16 * h;
                if (!have || elem_cmp(v->type, x, mn) < 0) memcpy(mn, x, 16);
                if (!have || elem_cmp(v->type, x, mx) > 0) memcpy(mx, x, 16);
                have = 1;
            }
        }
    return have;
}

/* The shape part of a long listing line: "scalar", "{4, 6}", "[3]*{__, 3}"; with "N*" before. */
static void shape_text(const mvar *v, char *out, size_t cap)
{
    size_t n = 0;
    if (v->ns > 1) n += (size_t)snprintf(out + n, cap - n, "%zu*", v->ns);
    if (v->kind == GPUBP_SHAPE_GLOBAL_VALUE) {
        snprintf(out + n, cap - n, "scalar");
        return;
    }
    if (v->kind == GPUBP_SHAPE_LOCAL_ARRAY) {
        size_t nb = v->s[0].nb;
        int same = 1;
        for (size_t s = 0; s < v->ns; s++) same &= v->s[s].nb == nb;
        if (same) n += (size_t)snprintf(out + n, cap - n, "[%zu]*", nb);
        else n += (size_t)snprintf(out + n, cap - n, "[__]*");
    }
    n += (size_t)snprintf(out + n, cap - n, "{");
    for (size_t k = 0; k < v->ndims; k++) {
        uint64_t d0 = 0;
        int same = 1, first = 1;
        for (size_t s = 0; s < v->ns; s++) {
            if (v->kind == GPUBP_SHAPE_LOCAL_ARRAY) {
                for (size_t b = 0; b < v->s[s].nb; b++) {
                    uint64_t d = v->s[s].b[b].count[k];
                    if (first) d0 = d;
                    same &= d == d0;
                    first = 0;
                }
            } else {
                uint64_t d = v->jdim == (int)k ? v->last_joined : v->s[s].shape[k];
                if (first) d0 = d;
                same &= d == d0;
                first = 0;
            }
        }
        if (same) n += (size_t)snprintf(out + n, cap - n, "%s%llu", k ? ", " : "", (unsigned long long)d0);
        else n += (size_t)snprintf(out + n, cap - n, "%s__", k ? ", " : "");
    }
    snprintf(out + n, cap - n, "}");
}

static const char *const type_names[] = {
    "double complex", "float complex", "long double", "int8_t", "int16_t", "int32_t", "int64_t",
    "uint8_t", "uint16_t", "uint32_t", "uint64_t", "float", "double", "string", "char"};

/* Splits "  TYPE  NAME  REST" (TYPE may hold a space). Returns 0 when the line is none of these. */
static int split_line(char *line, const char **type, char **name, char **rest)
{
    char *p = line;
    while (*p == ' ') p++;
    for (size_t i = 0; i < sizeof type_names / sizeof *type_names; i++) {
        size_t l = strlen(type_names[i]);
        if (strncmp(p, type_names[i], l) == 0 && p[l] == ' ') {
            *type = type_names[i];
            p += l;
            while (*p == ' ') p++;
            *name = p;
            while (*p && *p != ' ') p++;
            if (*p) *p++ = 0;
            while (*p == ' ') p++;
            *rest = p;
            return 1;
        }
    }
    return 0;
}

/* Values of an attribute "= X" / "= {X, Y}" compared with the decoded attribute. */
static void check_attr_values(const gbp_attr *a, const char *txt)
{
    if (a->type == GPUBP_TYPE_CHAR) return; /* bpls prints raw bytes as %c */
    const char *p = txt;
    int braces = *p == '{';
    if (braces) p++;
    size_t i = 0;
    while (*p && *p != '}') {
        if (i >= a->n) {
            DIFF("attribute %s: more values in bpls than %zu\n", a->name, a->n);
            return;
        }
        if (a->type == GPUBP_TYPE_STRING) {
            size_t l = strlen(a->strings[i]);
            if (*p != '"' || strncmp(p + 1, a->strings[i], l) != 0 || p[1 + l] != '"')
                DIFF("attribute %s: value %zu \"%s\", bpls %s\n", a->name, i, a->strings[i], p);
            p += l + 2;
        } else {
            size_t es = a->type == BP5_GPUBP_LONG_DOUBLE ? 16 : gbp_type_size(a->type);
            if (!num_eq(a->type, a->data + i * es, p)) DIFF("attribute %s: value %zu, bpls %s\n", a->name, i, p);
            const char *q = strstr(p, ", ");
            const char *e = strchr(p, '}');
            p = q && (!e || q < e) ? q : (e ? e : p + strlen(p));
        }
        if (strncmp(p, ", ", 2) == 0) p += 2;
        i++;
    }
    if (i != a->n && !(a->n == 0 && i == 0)) DIFF("attribute %s: %zu values, bpls %zu\n", a->name, a->n, i);
    if (!braces && a->is_array) DIFF("attribute %s: bpls shows a single value\n", a->name);
}

static void check_listing(dataset *d, char *la)
{
    size_t nvars_seen = 0, nattrs_seen = 0;
    for (char *line = strtok(la, "\n"); line; line = strtok(NULL, "\n")) {
        const char *type;
        char *name, *rest;
        if (!split_line(line, &type, &name, &rest)) {
            DIFF("%s: unexpected listing line '%s'\n", d->dir, line);
            continue;
        }
        if (strncmp(rest, "attr", 4) == 0) {
            nattrs_seen++;
            const gbp_attr *a = NULL;
            for (size_t i = 0; i < d->m.na; i++)
                if (strcmp(d->m.a[i].name, name) == 0) a = &d->m.a[i];
            if (!a) {
                DIFF("%s: attribute %s missing\n", d->dir, name);
                continue;
            }
            if (strcmp(type_name(a->type), type) != 0)
                DIFF("%s: attribute %s is %s, bpls %s\n", d->dir, name, type_name(a->type), type);
            const char *eq = strstr(rest, "= ");
            if (eq) check_attr_values(a, eq + 2);
            continue;
        }
        nvars_seen++;
        mvar *v = find_var(&d->m, name);
        if (!v) {
            DIFF("%s: variable %s missing\n", d->dir, name);
            continue;
        }
        if (strcmp(type_name(v->type), type) != 0)
            DIFF("%s: variable %s is %s, bpls %s\n", d->dir, name, type_name(v->type), type);
        char sh[512];
        shape_text(v, sh, sizeof sh);
        size_t sl = strlen(sh);
        if (strncmp(rest, sh, sl) != 0 || (rest[sl] != 0 && rest[sl] != ' '))
            DIFF("%s: variable %s: shape %s, bpls '%s'\n", d->dir, name, sh, rest);
        const char *eq = strstr(rest, " = ");
        uint8_t mn[16], mx[16];
        int have = var_minmax(v, d->ix.maps[d->ix.nmaps - 1].nwriters, mn, mx);
        if (!eq) {
            if (have && v->type != GPUBP_TYPE_STRING && v->type != GPUBP_TYPE_CHAR && !is_complex(v->type))
                DIFF("%s: variable %s has min/max, bpls none\n", d->dir, name);
            continue;
        }
        eq += 3;
        if (strncmp(eq, "N/A / N/A", 9) == 0) {
            if (v->has_mm_field) DIFF("%s: variable %s has statistics, bpls N/A\n", d->dir, name);
            continue;
        }
        const char *sl2 = strstr(eq, " / ");
        if (v->kind == GPUBP_SHAPE_GLOBAL_VALUE && !sl2) {
            /* one step: the value itself */
            if (!have || !num_eq(v->type, mn, eq)) DIFF("%s: variable %s value, bpls %s\n", d->dir, name, eq);
            continue;
        }
        if (!have || !sl2 || !num_eq(v->type, mn, eq) || !num_eq(v->type, mx, sl2 + 3))
            DIFF("%s: variable %s min/max, bpls %s\n", d->dir, name, eq);
    }
    size_t listed = 0;
    for (size_t i = 0; i < d->m.nv; i++) listed += !d->m.v[i].unsupported;
    if (nvars_seen != listed) DIFF("%s: %zu variables, bpls %zu\n", d->dir, listed, nvars_seen);
    if (nattrs_seen != d->m.na) DIFF("%s: %zu attributes, bpls %zu\n", d->dir, d->m.na, nattrs_seen);
}

/* Per-block dump (-D or -laD): "step k:" then "block b: [a:b, c:d] = min / max" or "  = value". */
static void check_blocks(dataset *d, char *txt)
{
    mvar *v = NULL;
    size_t step = 0, nb = 0;
    mstep *st = NULL;
    for (char *line = strtok(txt, "\n"); line; line = strtok(NULL, "\n")) {
        const char *type;
        char *name, *rest, *p = line;
        while (*p == ' ') p++;
        if (strncmp(p, "step ", 5) == 0) {
            step = strtoul(p + 5, &p, 10);
            nb = 0;
            st = v && step < v->ns ? &v->s[step] : NULL;
            if (v && !st) DIFF("%s: %s has no step %zu\n", d->dir, v->name, step);
            const char *eq = strstr(p, " = ");
            if (st && eq) {
                eq += 3;
                const mblock *k = &st->b[0];
                if (v->type == GPUBP_TYPE_STRING) {
                    size_t l = strlen(k->str);
                    if (eq[0] != '"' || strncmp(eq + 1, k->str, l) || eq[1 + l] != '"')
                        DIFF("%s: %s step %zu: \"%s\", bpls %s\n", d->dir, v->name, step, k->str, eq);
                } else if (!num_eq(v->type, k->mm, eq)) {
                    DIFF("%s: %s step %zu: value, bpls %s\n", d->dir, v->name, step, eq);
                }
            }
            continue;
        }
        if (strncmp(p, "block ", 6) == 0) {
            if (!st) continue;
            size_t b = strtoul(p + 6, &p, 10);
            if (b != nb || b >= st->nb) {
                DIFF("%s: %s step %zu: block %zu of %zu\n", d->dir, v->name, step, b, st->nb);
                continue;
            }
            nb++;
            const mblock *k = &st->b[b];
            char *q = strchr(p, '[');
            if (!q) continue;
            int local = v->kind == GPUBP_SHAPE_LOCAL_ARRAY;
            if (strncmp(q, "[null]", 6) == 0) {
                uint64_t prod = 1;
                for (size_t i = 0; i < v->ndims; i++) prod *= k->count[i];
                if (prod) DIFF("%s: %s step %zu block %zu is not empty\n", d->dir, v->name, step, b);
            } else {
                q++;
                for (size_t i = 0; i < v->ndims; i++) {
                    unsigned long long a0 = strtoull(q, &q, 10), a1;
                    if (*q != ':') break;
                    a1 = strtoull(q + 1, &q, 10);
                    uint64_t s0 = local ? 0 : k->start[i];
                    if (a0 != s0 || a1 + 1 != s0 + k->count[i])
                        DIFF("%s: %s step %zu block %zu dim %zu: start %llu count %llu, bpls %llu:%llu\n",
                             d->dir, v->name, step, b, i, (unsigned long long)s0,
                             (unsigned long long)k->count[i], a0, a1);
                    if (*q == ',') q++;
                }
            }
            const char *eq = strstr(p, "] = ");
            if (eq && v->kind != GPUBP_SHAPE_LOCAL_VALUE) {
                eq += 4;
                const char *sl = strstr(eq, " / ");
                if (strncmp(eq, "N/A", 3) == 0 || is_complex(v->type)) {
                    if (k->has_mm && !is_complex(v->type)) DIFF("%s: %s block has min/max\n", d->dir, v->name);
                } else if (!k->has_mm || !sl ||
                           !num_eq(v->type, k->mm + 16 * (elem_cmp(v->type, k->mm, k->mm + 16) > 0), eq) ||
                           !num_eq(v->type, k->mm + 16 * (elem_cmp(v->type, k->mm, k->mm + 16) <= 0), sl + 3)) {
                    /* bpls feeds both of a block's values to a running min/max: a block of no
                     * elements (min = the type's largest value, max = its smallest) shows them
                     * swapped */
                    DIFF("%s: %s step %zu block %zu: min/max, bpls %s\n", d->dir, v->name, step, b, eq);
                }
            } else if (eq) {
                if (!num_eq(v->type, k->mm, eq + 4)) DIFF("%s: %s step %zu block %zu: value\n", d->dir, v->name, step, b);
            }
            continue;
        }
        if (split_line(line, &type, &name, &rest)) {
            if (v && st && nb != st->nb && v->kind != GPUBP_SHAPE_GLOBAL_VALUE) DIFF("%s: %s step %zu: %zu blocks, bpls %zu\n", d->dir, v->name, step, st->nb, nb);
            v = strncmp(rest, "attr", 4) == 0 ? NULL : find_var(&d->m, name);
            st = NULL;
            if (!v && strncmp(rest, "attr", 4) != 0) DIFF("%s: variable %s missing\n", d->dir, name);
        }
    }
}

/* Every uncompressed block with statistics lies in its data.K where the index says: the bytes
 * there have the block's min/max. Returns the number of blocks checked. */
static size_t check_data(dataset *d)
{
    size_t checked = 0;
    unsigned char *data[64] = {0};
    size_t dlen[64] = {0};
    for (size_t i = 0; i < d->m.nv; i++) {
        mvar *v = &d->m.v[i];
        if (v->has_op || v->kind == GPUBP_SHAPE_GLOBAL_VALUE || v->kind == GPUBP_SHAPE_LOCAL_VALUE ||
            v->unsupported || is_complex(v->type) || v->type == BP5_GPUBP_LONG_DOUBLE || d->ix.flatten)
            continue;
        for (size_t s = 0; s < v->ns; s++)
            for (size_t b = 0; b < v->s[s].nb; b++) {
                const mblock *k = &v->s[s].b[b];
                uint64_t n = 1, sf, off;
                for (size_t j = 0; j < v->ndims; j++) n *= k->count[j];
                if (!k->has_mm || n == 0 || k->loc == BP5_NO_DATA) continue;
                TS_OK(bp5_locate(&d->ix, v->s[s].abs, k->writer, k->loc, &sf, &off, d->dir));
                assert_true(sf < 64);
                if (!data[sf]) {
                    char nm[32];
                    snprintf(nm, sizeof nm, "data.%llu", (unsigned long long)sf);
                    data[sf] = load(d->dir, nm, &dlen[sf]);
                    assert_non_null(data[sf]);
                }
                size_t bytes = (size_t)n * v->esize;
                if (off > dlen[sf] || bytes > dlen[sf] - off) {
                    DIFF("%s: %s step %zu block %zu: [%llu, +%zu) beyond data.%llu\n", d->dir, v->name, s, b,
                         (unsigned long long)off, bytes, (unsigned long long)sf);
                    continue;
                }
                uint8_t mn[16] = {0}, mx[16] = {0};
                gbp_minmax(v->type, data[sf] + off, (size_t)n, mn, mx, 0);
                if (memcmp(mn, k->mm, v->esize) || memcmp(mx, k->mm + 16, v->esize))
                    DIFF("%s: %s step %zu block %zu: data min/max differs from the metadata\n", d->dir,
                         v->name, s, b);
                checked++;
            }
    }
    for (size_t i = 0; i < 64; i++) free(data[i]);
    return checked;
}

/* ---- the reader's index filled from the same files (bp5_index.c) ------------------------------ */

static int md0_read(void *ctx, uint64_t off, size_t n, uint8_t *buf)
{
    const dataset *d = ctx;
    if (off > d->md0_len || n > d->md0_len - off) return GPUBP_ERR_FORMAT;
    memcpy(buf, d->md0 + off, n);
    return GPUBP_OK;
}

/* The index presents what the model holds: variables, steps, blocks (boxes, statistics, values,
 * where they are). Returns the number of blocks compared. */
static size_t check_index(dataset *d)
{
    bp5_reader r;
    gbp_index ix;
    size_t compared = 0;
    bp5_reader_init(&r, md0_read, d);
    gbp_index_init(&ix, bp5_index_load, &r);
    size_t ni;
    unsigned char *idx = load(d->dir, "md.idx", &ni), *mmd = load(d->dir, "mmd.0", &d->mmd_len);
    TS_OK(bp5_idx_parse(&r.idx, idx, ni, d->md0_len, 0, "md.idx"));
    r.ft.big_endian = r.idx.big_endian;
    TS_OK(bp5_formats_parse(&r.ft, mmd, d->mmd_len, 0, "mmd.0"));
    ix.steps_hint = r.idx.nsteps;
    for (size_t s = 0; s < r.idx.nsteps; s++)
        TS_OK(bp5_index_add_step(&ix, &r, d->md0 + r.idx.steps[s].md_pos, (size_t)r.idx.steps[s].md_size, "md.0"));
    bp5_index_finish(&ix);
    assert_int_equal(ix.nsteps, d->ix.flatten ? 1 : d->ix.nsteps);
    size_t presented = 0;
    for (size_t i = 0; i < d->m.nv; i++) {
        const mvar *mv = &d->m.v[i];
        gbp_var *v = gbp_index_find(&ix, mv->name);
        if (mv->unsupported) {
            assert_null(v);
            assert_non_null(bp5_unsupported(&r, mv->name));
            continue;
        }
        presented++;
        assert_non_null(v);
        assert_int_equal(v->type, mv->type);
        assert_int_equal(v->nsteps, mv->ns);
        int lv = mv->kind == GPUBP_SHAPE_LOCAL_VALUE && mv->type != GPUBP_TYPE_STRING;
        assert_int_equal(v->kind, lv ? GPUBP_SHAPE_GLOBAL_ARRAY : mv->kind);
        for (size_t s = 0; s < v->nsteps; s++) {
            const mstep *ms = &mv->s[s];
            const gbp_block *b = NULL;
            assert_int_equal(v->steps[s].step, s); /* relative, as ADIOS2 presents them */
            assert_int_equal(v->steps[s].entry_off, ms->abs);
            assert_int_equal(v->steps[s].nblocks, ms->nb);
            TS_OK(gbp_index_blocks(&ix, v, s, &b, "md.0"));
            if (mv->kind == GPUBP_SHAPE_GLOBAL_ARRAY || mv->kind == GPUBP_SHAPE_JOINED_ARRAY || lv) {
                const uint64_t *sh = gbp_var_shape(v, s);
                for (size_t k = 0; k < v->ndims; k++)
                    assert_int_equal(sh[k], mv->jdim == (int)k ? mv->last_joined : ms->shape[k]);
            }
            for (size_t j = 0; j < ms->nb; j++) {
                const mblock *k = &ms->b[j];
                if (mv->kind == GPUBP_SHAPE_GLOBAL_VALUE) {
                    assert_int_equal(b[j].ndims, 0);
                } else {
                    assert_int_equal(b[j].ndims, v->ndims);
                    for (size_t q = 0; q < v->ndims; q++) {
                        assert_int_equal(GBP_COUNT(&b[j])[q], k->count[q]);
                        if (mv->kind != GPUBP_SHAPE_LOCAL_ARRAY) assert_int_equal(GBP_START(&b[j])[q], k->start[q]);
                    }
                }
                if (mv->type == GPUBP_TYPE_STRING) {
                    assert_int_equal(b[j].str_len, strlen(k->str));
                    assert_memory_equal(b[j].str, k->str, b[j].str_len);
                } else if (b[j].has_value) {
                    assert_memory_equal(b[j].mm, k->mm, 16);
                } else {
                    assert_int_equal(b[j].has_minmax, k->has_mm);
                    if (k->has_mm) assert_memory_equal(b[j].mm, k->mm, 32);
                    assert_int_equal(b[j].op != NULL, mv->has_op && k->loc != BP5_NO_DATA);
                    if (b[j].op) assert_int_equal(b[j].op->size, k->stored);
                    if (k->loc == BP5_NO_DATA) assert_int_equal(b[j].payload_offset, BP5_NO_DATA);
                }
                compared++;
            }
        }
    }
    assert_int_equal(ix.nvars, presented);
    assert_int_equal(ix.nattrs, d->m.na);
    for (size_t i = 0; i < d->m.na; i++) {
        const gbp_attr *a = gbp_index_find_attr(&ix, d->m.a[i].name);
        assert_non_null(a);
        assert_int_equal(a->type, d->m.a[i].type);
        assert_int_equal(a->n, d->m.a[i].n);
    }
    gbp_index_free(&ix);
    bp5_reader_free(&r);
    free(idx);
    free(mmd);
    return compared;
}

typedef struct golden {
    char path[8300];
} golden;

static void test_dataset(void **state)
{
    golden *g = *state;
    dataset *d = calloc(1, sizeof *d);
    snprintf(d->dir, sizeof d->dir, "%s", g->path);
    diffs = 0;
    int rc = load_dataset(d);
    assert_int_equal(rc, GPUBP_OK);
    assert_false(d->m.failed);
    assert_true(d->ix.nsteps > 0);
    char p[8400];
    snprintf(p, sizeof p, "%s.la.txt", g->path);
    char *la = ts_read_text(p);
    assert_non_null(la);
    check_listing(d, la);
    free(la);
    snprintf(p, sizeof p, "%s.laD.txt", g->path);
    char *bl = ts_read_text(p);
    if (!bl) {
        snprintf(p, sizeof p, "%s.blocks.txt", g->path);
        bl = ts_read_text(p);
    }
    assert_non_null(bl);
    check_blocks(d, bl);
    free(bl);
    check_data(d);
    assert_true(check_index(d) > 0);
    free(d->md0);
    model_free(&d->m);
    bp5_idx_free(&d->ix);
    bp5_formats_free(&d->ft);
    free(d);
    if (diffs) print_error("%s: %d differences from the bpls dumps\n", g->path, diffs);
    assert_int_equal(diffs, 0);
}

/* The worked example of colmajor.bp (§14): exact records. */
static void test_colmajor_records(void **state)
{
    (void)state;
    dataset *d = calloc(1, sizeof *d);
    snprintf(d->dir, sizeof d->dir, "%s/BP5/colmajor.bp", ts_golden_dir());
    TS_OK(load_dataset(d));
    assert_true(d->ix.column_major);
    assert_int_equal(d->ix.nsteps, 2);
    assert_int_equal(d->ix.nmaps, 1);
    assert_int_equal(d->ix.steps[1].md_pos, 256);
    assert_int_equal(d->ix.steps[1].md_size, 256);
    assert_int_equal(d->ix.steps[1].pieces[0], 4096);
    assert_int_equal(d->ft.n, 1);
    const bp5_format *f = d->ft.v[0];
    assert_int_equal(f->kind, BP5_FMT_METADATA);
    assert_int_equal(f->desc_len, 592);
    assert_int_equal(f->nstructs, 2);
    assert_int_equal(f->structs[0].record_length, 128);
    assert_int_equal(f->nvars, 1);
    assert_string_equal(f->vars[0].name, "field");
    assert_int_equal(f->vars[0].type, GPUBP_TYPE_DOUBLE);
    assert_true(f->vars[0].has_mm);
    assert_false(f->vars[0].has_op);
    mvar *v = find_var(&d->m, "field");
    assert_non_null(v);
    assert_int_equal(v->ns, 2);
    /* written {3, 2} by a Fortran-order writer, presented {2, 3} */
    assert_int_equal(v->s[0].shape[0], 2);
    assert_int_equal(v->s[0].shape[1], 3);
    double mx;
    memcpy(&mx, v->s[1].b[0].mm + 16, 8);
    assert_true(mx == 10.001);
    uint64_t sf, off;
    TS_OK(bp5_locate(&d->ix, 1, 0, 0, &sf, &off, "colmajor"));
    assert_int_equal(sf, 0);
    assert_int_equal(off, 4096);
    free(d->md0);
    model_free(&d->m);
    bp5_idx_free(&d->ix);
    bp5_formats_free(&d->ft);
    free(d);
}

int main(void)
{
    static const char *const dirs[] = {"BP5", "gpu/BP5", "bp5/wheel", "bp5/wheel2",
                                       "bp5/oracle", "bp5/mpi", "codecs/BP5"};
    const char *root = ts_golden_dir();
    struct CMUnitTest *tests = calloc(1, sizeof *tests);
    size_t n = 0;
    tests[n++] = (struct CMUnitTest){"colmajor_records", test_colmajor_records, NULL, NULL, NULL};
    for (size_t k = 0; k < sizeof dirs / sizeof *dirs; k++) {
        char dir[4096];
        snprintf(dir, sizeof dir, "%s/%s", root, dirs[k]);
        size_t nn = 0;
        char **names = ts_list_datasets(dir, &nn);
        if (!names && !ts_exists(dir)) {
            fprintf(stderr, "cannot open %s\n", dir);
            return 1;
        }
        for (size_t i = 0; i < nn; i++) {
            golden *g = calloc(1, sizeof *g);
            snprintf(g->path, sizeof g->path, "%s/%s", dir, names[i]);
            char *tname = malloc(8300);
            snprintf(tname, 8300, "%s/%s", dirs[k], names[i]);
            tests = realloc(tests, (n + 1) * sizeof *tests);
            tests[n++] = (struct CMUnitTest){tname, test_dataset, NULL, NULL, g};
            free(names[i]);
        }
        free(names);
    }
    if (n < 40) {
        fprintf(stderr, "only %zu golden BP5 datasets under %s\n", n - 1, root);
        return 1;
    }
    return _cmocka_run_group_tests("bp5_parse", tests, n, NULL, NULL);
}
