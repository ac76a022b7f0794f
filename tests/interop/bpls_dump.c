/* Parser of bpls -d / -D / -la output and comparison of datasets with it. See bpls_dump.h. */
#include "interop/bpls_dump.h"

#include <ctype.h>
#include <errno.h>
#include <float.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- small utilities ------------------------------------------------------------------------ */

static void *xrealloc(void *p, size_t n)
{
    void *q = realloc(p, n ? n : 1);
    if (!q) {
        fprintf(stderr, "out of memory\n");
        abort();
    }
    return q;
}

static char *xstrndup(const char *s, size_t n)
{
    char *d = xrealloc(NULL, n + 1);
    memcpy(d, s, n);
    d[n] = '\0';
    return d;
}

static char *read_all(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    size_t cap = 4096, len = 0;
    char *b = xrealloc(NULL, cap);
    size_t got;
    while ((got = fread(b + len, 1, cap - len - 1, f)) > 0) {
        len += got;
        if (cap - len < 2) b = xrealloc(b, cap *= 2);
    }
    fclose(f);
    b[len] = '\0';
    return b;
}

static const char *const known_types[] = {
    "int8_t", "int16_t", "int32_t", "int64_t", "uint8_t", "uint16_t", "uint32_t", "uint64_t",
    "float", "double", "float complex", "double complex", "string", "char", "long double",
};

/* Splits `s` into tokens: "quoted strings" (kept with their quotes), (parenthesised groups),
 * or runs without whitespace or commas. Separators: whitespace and commas. */
static size_t tokenize(const char *s, char ***out)
{
    size_t n = 0, cap = 0;
    char **t = NULL;
    const char *p = s;
    for (;;) {
        while (*p && (isspace((unsigned char)*p) || *p == ',')) p++;
        if (!*p) break;
        const char *b = p;
        if (*p == '"') {
            p++;
            while (*p && *p != '"') p++;
            if (*p) p++;
        } else if (*p == '(') {
            while (*p && *p != ')') p++;
            if (*p) p++;
        } else {
            while (*p && !isspace((unsigned char)*p) && *p != ',') p++;
        }
        if (n == cap) t = xrealloc(t, (cap = cap ? 2 * cap : 16) * sizeof *t);
        t[n++] = xstrndup(b, (size_t)(p - b));
    }
    *out = t;
    return n;
}

static void free_tokens(char **t, size_t n)
{
    for (size_t i = 0; i < n; i++) free(t[i]);
    free(t);
}

/* "  <type> <name> <rest>": fills type/name, returns rest (in line) or NULL if not a header */
static const char *parse_header(const char *line, char *type, size_t tsz, char *name, size_t nsz)
{
    if (line[0] != ' ' || line[1] != ' ' || !isalpha((unsigned char)line[2])) return NULL;
    const char *p = line + 2;
    const char *match = NULL;
    size_t mlen = 0;
    for (size_t i = 0; i < sizeof known_types / sizeof known_types[0]; i++) {
        size_t l = strlen(known_types[i]);
        if (!strncmp(p, known_types[i], l) && (p[l] == ' ' || p[l] == '\t') && l > mlen) {
            match = known_types[i];
            mlen = l;
        }
    }
    if (!match) return NULL;
    snprintf(type, tsz, "%s", match);
    p += mlen;
    while (*p == ' ') p++;
    const char *nb = p;
    while (*p && *p != ' ' && *p != '\n') p++;
    if (p == nb) return NULL;
    snprintf(name, nsz, "%.*s", (int)(p - nb), nb);
    while (*p == ' ') p++;
    return p;
}

/* dims text: "scalar", "N*scalar", "{a, b}", "N*{a, __}", "N*[B]*{__, 3}", "attr" */
static int parse_dims(const char *s, dump_var *v)
{
    v->nsteps = 1;
    const char *p = s;
    if (isdigit((unsigned char)*p)) {
        char *e;
        unsigned long long n = strtoull(p, &e, 10);
        if (*e == '*') {
            v->nsteps = (size_t)n;
            p = e + 1;
        }
    }
    if (!strncmp(p, "attr", 4)) {
        v->kind = DV_ATTRIBUTE;
        return 0;
    }
    if (!strncmp(p, "scalar", 6)) {
        v->kind = DV_SCALAR;
        v->ndims = 0;
        return 0;
    }
    v->kind = DV_GLOBAL_ARRAY;
    if (*p == '[') {
        v->kind = DV_LOCAL_ARRAY;
        p = strchr(p, '{');
        if (!p) return -1;
    }
    if (*p != '{') return -1;
    p++;
    v->ndims = 0;
    while (*p && *p != '}') {
        while (*p == ' ' || *p == ',') p++;
        if (*p == '}') break;
        if (v->ndims == DUMP_MAXDIMS) return -1;
        if (!strncmp(p, "__", 2)) {
            v->shape[v->ndims++] = 0;
            if (v->kind == DV_GLOBAL_ARRAY) v->changing = 1;
            p += 2;
        } else if (isdigit((unsigned char)*p)) {
            char *e;
            v->shape[v->ndims++] = (size_t)strtoull(p, &e, 10);
            p = e;
        } else {
            return -1;
        }
    }
    return *p == '}' ? 0 : -1;
}

static dump_var *get_var(dump_set *ds, const char *type, const char *name)
{
    dump_var *v = dump_find(ds, name);
    if (v) return v;
    ds->vars = xrealloc(ds->vars, (ds->n + 1) * sizeof *ds->vars);
    v = &ds->vars[ds->n++];
    memset(v, 0, sizeof *v);
    snprintf(v->type, sizeof v->type, "%s", type);
    snprintf(v->name, sizeof v->name, "%s", name);
    return v;
}

dump_var *dump_find(dump_set *ds, const char *name)
{
    for (size_t i = 0; i < ds->n; i++)
        if (!strcmp(ds->vars[i].name, name)) return &ds->vars[i];
    return NULL;
}

static size_t prod(size_t n, const size_t *d)
{
    size_t p = 1;
    for (size_t i = 0; i < n; i++) p *= d[i];
    return p;
}

/* "[ 0:63,   0:127]" */
static int parse_box(const char *p, dump_block *b)
{
    p = strchr(p, '[');
    if (!p) return -1;
    p++;
    b->ndims = 0;
    if (!strncmp(p, "null]", 5)) {
        b->null_box = 1;
        return 0;
    }
    while (*p && *p != ']') {
        while (*p == ' ' || *p == ',') p++;
        if (*p == ']') break;
        char *e;
        unsigned long long lo = strtoull(p, &e, 10);
        if (*e != ':' || b->ndims == DUMP_MAXDIMS) return -1;
        unsigned long long hi = strtoull(e + 1, &e, 10);
        b->start[b->ndims] = (size_t)lo;
        b->count[b->ndims] = (size_t)(hi - lo + 1);
        b->ndims++;
        p = e;
    }
    return 0;
}

/* "(i, j, k)" at p: fills idx, returns the position after ')' or NULL */
static const char *parse_index(const char *p, size_t *idx, size_t *n)
{
    if (*p != '(') return NULL;
    p++;
    *n = 0;
    while (*p && *p != ')') {
        while (*p == ' ' || *p == ',') p++;
        if (*p == ')') break;
        if (!isdigit((unsigned char)*p) || *n == DUMP_MAXDIMS + 1) return NULL;
        char *e;
        idx[(*n)++] = (size_t)strtoull(p, &e, 10);
        p = e;
    }
    return *p == ')' ? p + 1 : NULL;
}

static int store_tokens(char **vals, size_t nvals, size_t at, char **t, size_t nt, const char *what)
{
    for (size_t i = 0; i < nt; i++) {
        if (at + i >= nvals) {
            fprintf(stderr, "dump %s: more values than the shape holds\n", what);
            return -1;
        }
        free(vals[at + i]);
        vals[at + i] = t[i];
        t[i] = NULL;
    }
    return 0;
}

enum { F_D, F_BLOCKS, F_LA };

static int parse_file(dump_set *ds, const char *text, int which, const char *path)
{
    dump_var *cur = NULL;
    size_t cur_step = 0;
    dump_block *cur_dblock = NULL;
    const char *line = text;
    int lineno = 0;
    while (*line) {
        const char *eol = strchr(line, '\n');
        size_t len = eol ? (size_t)(eol - line) : strlen(line);
        char *l = xstrndup(line, len);
        line = eol ? eol + 1 : line + len;
        lineno++;
        char type[32], name[4096];
        const char *rest = parse_header(l, type, sizeof type, name, sizeof name);
        if (rest) {
            cur = get_var(ds, type, name);
            cur_dblock = NULL;
            if (which == F_LA) {
                const char *eq = strstr(rest, " = ");
                if (!eq && !strstr(rest, "attr")) { /* a variable without min/max (BP5: complex, */
                    cur->no_minmax = 1;               /* strings) */
                    free(l);
                    continue;
                }
                if (!eq) {
                    fprintf(stderr, "%s:%d: no ' = '\n", path, lineno);
                    free(l);
                    return -1;
                }
                char *dims = xstrndup(rest, (size_t)(eq - rest));
                dump_var tmp;
                memset(&tmp, 0, sizeof tmp);
                if (parse_dims(dims, &tmp) != 0) {
                    fprintf(stderr, "%s:%d: cannot parse dims '%s'\n", path, lineno, dims);
                    free(dims);
                    free(l);
                    return -1;
                }
                free(dims);
                if (tmp.kind == DV_ATTRIBUTE) cur->kind = DV_ATTRIBUTE;
                const char *val = eq + 3;
                while (*val == ' ') val++;
                char **t;
                size_t nt;
                if (cur->kind == DV_ATTRIBUTE) {
                    if (*val == '{') {
                        cur->attr_is_list = 1;
                        char *inner = xstrndup(val + 1, strlen(val + 1));
                        char *close = strrchr(inner, '}');
                        if (close) *close = '\0';
                        nt = tokenize(inner, &t);
                        free(inner);
                    } else {
                        nt = tokenize(val, &t);
                    }
                    cur->attr = t;
                    cur->nattr = nt;
                } else {
                    nt = tokenize(val, &t);
                    if (nt == 3 && !strcmp(t[1], "/")) {
                        cur->min = t[0];
                        cur->max = t[2];
                        free(t[1]);
                        free(t);
                    } else if (nt == 1) {
                        cur->min = t[0];
                        cur->max = xstrndup(t[0], strlen(t[0]));
                        free(t);
                    } else {
                        fprintf(stderr, "%s:%d: cannot parse min/max '%s'\n", path, lineno, val);
                        free_tokens(t, nt);
                        free(l);
                        return -1;
                    }
                }
            } else {
                if (parse_dims(rest, cur) != 0) {
                    fprintf(stderr, "%s:%d: cannot parse dims '%s'\n", path, lineno, rest);
                    free(l);
                    return -1;
                }
                if (which == F_D && !cur->vals &&
                    (cur->kind == DV_GLOBAL_ARRAY || cur->kind == DV_SCALAR) && !cur->changing) {
                    cur->nvals = cur->nsteps * prod(cur->ndims, cur->shape);
                    cur->vals = calloc(cur->nvals ? cur->nvals : 1, sizeof *cur->vals);
                }
            }
            free(l);
            continue;
        }
        if (!cur || which == F_LA) {
            free(l);
            continue;
        }
        const char *p = l;
        while (*p == ' ') p++;
        size_t indent = (size_t)(p - l);
        if (!strncmp(p, "step ", 5) && indent > 0) {
            cur_step = (size_t)strtoull(p + 5, NULL, 10);
            const char *eq = strstr(p, "= ");
            const char *inst = strstr(p, " instances available");
            if (which == F_BLOCKS && !eq && inst && cur->kind == DV_SCALAR) {
                /* "step N: K instances available": K blocks, values not printed */
                const char *q = inst;
                while (q > p && isdigit((unsigned char)q[-1])) q--;
                size_t k = (size_t)strtoull(q, NULL, 10);
                for (size_t i = 0; i < k && i < 100000; i++) {
                    cur->blocks = xrealloc(cur->blocks, (cur->nblocks + 1) * sizeof *cur->blocks);
                    dump_block *b = &cur->blocks[cur->nblocks++];
                    memset(b, 0, sizeof *b);
                    b->step = cur_step;
                }
            }
            if (which == F_BLOCKS && eq && cur->kind == DV_SCALAR) {
                char **t;
                size_t nt = tokenize(eq + 2, &t);
                cur->blocks = xrealloc(cur->blocks, (cur->nblocks + 1) * sizeof *cur->blocks);
                dump_block *b = &cur->blocks[cur->nblocks++];
                memset(b, 0, sizeof *b);
                b->step = cur_step;
                b->value = nt ? t[0] : NULL;
                for (size_t i = 1; i < nt; i++) free(t[i]);
                free(t);
            }
        } else if (!strncmp(p, "block ", 6) && indent > 0) {
            dump_block b;
            memset(&b, 0, sizeof b);
            b.step = cur_step;
            if (parse_box(p, &b) != 0) {
                fprintf(stderr, "%s:%d: cannot parse block '%s'\n", path, lineno, p);
                free(l);
                return -1;
            }
            if (which == F_BLOCKS) {
                cur->blocks = xrealloc(cur->blocks, (cur->nblocks + 1) * sizeof *cur->blocks);
                cur->blocks[cur->nblocks++] = b;
            } else if (cur->kind == DV_LOCAL_ARRAY) {
                cur->dblocks = xrealloc(cur->dblocks, (cur->ndblocks + 1) * sizeof *cur->dblocks);
                b.ntok = b.null_box ? 0 : prod(b.ndims, b.count);
                b.tok = calloc(b.ntok ? b.ntok : 1, sizeof *b.tok);
                cur->dblocks[cur->ndblocks++] = b;
                cur_dblock = &cur->dblocks[cur->ndblocks - 1];
            }
        } else if (which == F_D && *p == '(' && indent > 0) {
            size_t idx[DUMP_MAXDIMS + 1], ni = 0;
            const char *after = parse_index(p, idx, &ni);
            if (!after) {
                fprintf(stderr, "%s:%d: bad index '%s'\n", path, lineno, p);
                free(l);
                return -1;
            }
            char **t;
            size_t nt = tokenize(after, &t);
            int rc = 0;
            if (cur->kind == DV_LOCAL_ARRAY && cur_dblock) {
                if (ni != cur_dblock->ndims) rc = -1;
                size_t lin = 0;
                for (size_t d = 0; rc == 0 && d < ni; d++) lin = lin * cur_dblock->count[d] + idx[d];
                if (rc == 0)
                    rc = store_tokens(cur_dblock->tok, cur_dblock->ntok, lin, t, nt, cur->name);
            } else if (cur->vals) {
                size_t dims[DUMP_MAXDIMS + 1], nd = 0;
                if (cur->kind == DV_SCALAR) {
                    dims[nd++] = cur->nsteps;
                } else {
                    if (ni == cur->ndims + 1) dims[nd++] = cur->nsteps;
                    for (size_t d = 0; d < cur->ndims; d++) dims[nd++] = cur->shape[d];
                }
                if (nd != ni) rc = -1;
                size_t lin = 0;
                for (size_t d = 0; rc == 0 && d < ni; d++) lin = lin * dims[d] + idx[d];
                if (rc == 0) {
                    rc = store_tokens(cur->vals, cur->nvals, lin, t, nt, cur->name);
                    cur->have_values = 1;
                }
            }
            free_tokens(t, nt);
            if (rc != 0) {
                fprintf(stderr, "%s:%d: index does not fit the shape: '%s'\n", path, lineno, p);
                free(l);
                return -1;
            }
        } else if (which == F_D && indent == 0 && *p && cur->kind == DV_SCALAR && cur->vals &&
                   cur->nsteps == 1 && !cur->have_values) {
            char **t;
            size_t nt = tokenize(p, &t);
            int rc = store_tokens(cur->vals, cur->nvals, 0, t, nt, cur->name);
            free_tokens(t, nt);
            if (rc != 0) {
                free(l);
                return -1;
            }
            cur->have_values = 1;
        }
        free(l);
    }
    return 0;
}

int dump_load(dump_set *ds, const char *prefix)
{
    memset(ds, 0, sizeof *ds);
    static const char *const suffix[3] = {".d.txt", ".blocks.txt", ".la.txt"};
    for (int w = 0; w < 3; w++) {
        char path[4200];
        snprintf(path, sizeof path, "%s%s", prefix, suffix[w]);
        char *text = read_all(path);
        if (!text) continue;
        int rc = parse_file(ds, text, w, path);
        free(text);
        if (rc != 0) return -1;
        if (w == F_D) ds->have_d = 1;
        if (w == F_BLOCKS) ds->have_blocks = 1;
        if (w == F_LA) ds->have_la = 1;
    }
    /* bpls labels the blocks of a variable that is missing from some steps with the file's
     * step numbers; the API counts the steps in which the variable appears: renumber densely */
    for (size_t i = 0; i < ds->n; i++) {
        dump_var *v = &ds->vars[i];
        for (int which = 0; which < 2; which++) {
            dump_block *b = which ? v->dblocks : v->blocks;
            size_t nb = which ? v->ndblocks : v->nblocks, next = 0, last = (size_t)-1;
            for (size_t k = 0; k < nb; k++) {
                if (b[k].step != last) {
                    last = b[k].step;
                    next++;
                }
                b[k].step = next - 1;
            }
        }
    }
    /* a variable with values must have all of them */
    for (size_t i = 0; i < ds->n; i++) {
        dump_var *v = &ds->vars[i];
        for (size_t k = 0; v->have_values && k < v->nvals; k++)
            if (!v->vals[k]) {
                fprintf(stderr, "dump of %s: value %zu missing\n", v->name, k);
                return -1;
            }
    }
    return 0;
}

static void free_block(dump_block *b)
{
    free(b->value);
    for (size_t i = 0; i < b->ntok; i++) free(b->tok[i]);
    free(b->tok);
}

void dump_free(dump_set *ds)
{
    for (size_t i = 0; i < ds->n; i++) {
        dump_var *v = &ds->vars[i];
        for (size_t b = 0; b < v->nblocks; b++) free_block(&v->blocks[b]);
        for (size_t b = 0; b < v->ndblocks; b++) free_block(&v->dblocks[b]);
        free(v->blocks);
        free(v->dblocks);
        for (size_t k = 0; k < v->nvals; k++) free(v->vals[k]);
        free(v->vals);
        free(v->min);
        free(v->max);
        free_tokens(v->attr, v->nattr);
    }
    free(ds->vars);
    memset(ds, 0, sizeof *ds);
}

/* ---- formatting as bpls does ---------------------------------------------------------------- */

/* Whether n bytes of elements of `type` differ; long double elements by their 10 bytes of value
 * (the 6 padding bytes are whatever the writer's memory held, in ADIOS2's files as in ours). */
static int elems_differ(gpubp_type type, const void *a, const void *b, size_t n)
{
    if (type != GPUBP_TYPE_LONG_DOUBLE) return memcmp(a, b, n) != 0;
    for (size_t i = 0; i + 16 <= n; i += 16)
        if (memcmp((const char *)a + i, (const char *)b + i, 10)) return 1;
    return 0;
}

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

typedef struct ctx {
    const char *dataset;
    int diffs;
} ctx;

static void diff(ctx *c, const char *var, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "DIFF %s: %s: ", c->dataset, var);
    vfprintf(stderr, fmt, ap);
    fprintf(stderr, " [last error: %s]\n", gpubp_last_error());
    va_end(ap);
    c->diffs++;
}

#define MAX_BYTES ((size_t)256 << 20)

/* gets the current selection of v into a new buffer; NULL (and a diff) on failure */
static unsigned char *get_sel(ctx *c, gpubp_file *f, gpubp_variable *v, const char *name,
                              size_t want_bytes, size_t *bytes_out)
{
    size_t bytes = 0;
    int rc = gpubp_selection_size(v, &bytes);
    if (rc != GPUBP_OK) {
        diff(c, name, "selection_size -> %d", rc);
        return NULL;
    }
    if (want_bytes && bytes != want_bytes) {
        diff(c, name, "selection_size %zu, expected %zu", bytes, want_bytes);
        return NULL;
    }
    if (bytes > MAX_BYTES) {
        diff(c, name, "selection_size %zu too large", bytes);
        return NULL;
    }
    unsigned char *buf = calloc(bytes + 16, 1);
    rc = gpubp_get(f, v, buf, GPUBP_SYNC);
    if (rc != GPUBP_OK) {
        diff(c, name, "get -> %d (%s)", rc, gpubp_strerror(rc));
        free(buf);
        return NULL;
    }
    if (bytes_out) *bytes_out = bytes;
    return buf;
}

static void compare_values(ctx *c, const char *name, gpubp_type t, const unsigned char *buf,
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
            if (shown++ < 5) diff(c, name, "%s element %zu: got %s, dump says %s", where, i, got, tok[i]);
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

static void check_attribute(ctx *c, gpubp_file *f, const dump_var *dv)
{
    gpubp_type t;
    size_t n = 0;
    int is_array = -1;
    int rc = gpubp_inquire_attribute(f, dv->name, &t, &n, &is_array);
    if (rc != GPUBP_OK) {
        diff(c, dv->name, "inquire_attribute -> %d", rc);
        return;
    }
    if (strcmp(gpubp_type_name(t), dv->type)) diff(c, dv->name, "type %s, dump says %s", gpubp_type_name(t), dv->type);
    if (n != dv->nattr) {
        diff(c, dv->name, "%zu elements, dump has %zu", n, dv->nattr);
        return;
    }
    if (is_array != dv->attr_is_list) diff(c, dv->name, "is_array %d, dump prints %s", is_array, dv->attr_is_list ? "a list" : "a value");
    if (t == GPUBP_TYPE_STRING) {
        for (size_t i = 0; i < n; i++) {
            const char *s = NULL;
            rc = gpubp_attribute_string(f, dv->name, i, &s);
            if (rc != GPUBP_OK || !s) {
                diff(c, dv->name, "attribute_string(%zu) -> %d", i, rc);
                continue;
            }
            if (!dump_match(t, s, dv->attr[i])) diff(c, dv->name, "element %zu \"%s\", dump says %s", i, s, dv->attr[i]);
        }
        return;
    }
    size_t es = gpubp_type_size(t);
    unsigned char *buf = calloc(n * es + 16, 1);
    rc = gpubp_attribute_data(f, dv->name, buf);
    if (rc != GPUBP_OK) diff(c, dv->name, "attribute_data -> %d", rc);
    else compare_values(c, dv->name, t, buf, dv->attr, n, "attribute");
    free(buf);
}

static void check_minmax(ctx *c, gpubp_variable *v, const dump_var *dv, gpubp_type t)
{
    if (!dv->min || t == GPUBP_TYPE_STRING) return;
    unsigned char mn[32], mx[32];
    int rc = gpubp_variable_minmax(v, mn, mx);
    if (rc != GPUBP_OK) {
        diff(c, dv->name, "minmax -> %d", rc);
        return;
    }
    char a[128], b[128];
    dump_format(t, mn, a, sizeof a);
    dump_format(t, mx, b, sizeof b);
    if (!dump_match(t, mn, dv->min) || !dump_match(t, mx, dv->max))
        diff(c, dv->name, "min/max %s / %s, dump says %s / %s", a, b, dv->min, dv->max);
}

/* -1/0/1 comparing two elements; complex by modulus (the ADIOS2 min/max rule) */
static int elem_cmp(gpubp_type t, const void *a, const void *b)
{
#define EC(T) { T x, y; memcpy(&x, a, sizeof x); memcpy(&y, b, sizeof y); return x < y ? -1 : x > y; }
    switch (t) {
    case GPUBP_TYPE_INT8: EC(int8_t)
    case GPUBP_TYPE_INT16: EC(int16_t)
    case GPUBP_TYPE_INT32: EC(int32_t)
    case GPUBP_TYPE_INT64: EC(int64_t)
#if LDBL_MANT_DIG == 64
    case GPUBP_TYPE_LONG_DOUBLE: EC(long double)
#endif
    case GPUBP_TYPE_CHAR:
    case GPUBP_TYPE_UINT8: EC(uint8_t)
    case GPUBP_TYPE_UINT16: EC(uint16_t)
    case GPUBP_TYPE_UINT32: EC(uint32_t)
    case GPUBP_TYPE_UINT64: EC(uint64_t)
    case GPUBP_TYPE_FLOAT: EC(float)
    case GPUBP_TYPE_DOUBLE: EC(double)
    case GPUBP_TYPE_FLOAT_COMPLEX: {
        float x[2], y[2];
        memcpy(x, a, 8);
        memcpy(y, b, 8);
        double mx = hypot(x[0], x[1]), my = hypot(y[0], y[1]);
        return mx < my ? -1 : mx > my;
    }
    case GPUBP_TYPE_DOUBLE_COMPLEX: {
        double x[2], y[2];
        memcpy(x, a, 16);
        memcpy(y, b, 16);
        double mx = hypot(x[0], x[1]), my = hypot(y[0], y[1]);
        return mx < my ? -1 : mx > my;
    }
    default:
        return 0;
    }
#undef EC
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

static void check_blocks(ctx *c, gpubp_file *f, gpubp_variable *v, const dump_var *dv,
                         gpubp_type t, size_t s, size_t vstep, const unsigned char *whole,
                         const size_t *wshape)
{
    const dump_block *first;
    size_t nb = blocks_in_step(dv->blocks, dv->nblocks, s, &first);
    size_t got = 0;
    int rc = gpubp_variable_blocks(v, vstep, &got);
    if (rc != GPUBP_OK) {
        diff(c, dv->name, "variable_blocks(step %zu) -> %d", s, rc);
        return;
    }
    if (got != nb) {
        diff(c, dv->name, "step %zu: %zu blocks, dump has %zu", s, got, nb);
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
            diff(c, dv->name, "block_info(step %zu, block %zu) -> %d", s, b, rc);
            continue;
        }
        if (dv->kind == DV_SCALAR) {
            if (db->value && !str && (!dump_match(t, mn, db->value) || !dump_match(t, mx, db->value)))
                diff(c, dv->name, "step %zu: block min/max is not the value %s", s, db->value);
            continue;
        }
        if (db->null_box) {
            for (size_t d = 0; d < dv->ndims; d++)
                if (ct[d] != 0) {
                    diff(c, dv->name, "step %zu block %zu: count %zu, dump says [null]", s, b, ct[d]);
                    break;
                }
            continue;
        }
        if (db->ndims != dv->ndims) {
            diff(c, dv->name, "dump block has %zu dims", db->ndims);
            continue;
        }
        int bad = 0;
        for (size_t d = 0; d < dv->ndims && !bad; d++) {
            size_t wst = dv->kind == DV_LOCAL_ARRAY ? 0 : db->start[d];
            if (st[d] != wst || ct[d] != db->count[d]) {
                diff(c, dv->name, "step %zu block %zu dim %zu: start %zu count %zu, dump says %zu:%zu",
                     s, b, d, st[d], ct[d], db->start[d], db->start[d] + db->count[d] - 1);
                bad = 1;
            }
        }
        if (bad || str) continue;
        size_t n = prod(dv->ndims, ct);
        if (dv->kind == DV_GLOBAL_ARRAY) {
            if (gpubp_set_selection(v, dv->ndims, st, ct) != GPUBP_OK) {
                diff(c, dv->name, "set_selection of block %zu", b);
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
                if (elems_differ(t, buf + i * es, whole + at * es, es)) {
                    diff(c, dv->name, "step %zu block %zu: element %zu read alone differs from the whole-step read", s, b, i);
                    break;
                }
            }
        }
        unsigned char dmn[32], dmx[32];
        memcpy(dmn, buf, es);
        memcpy(dmx, buf, es);
        for (size_t i = 1; i < n; i++) {
            if (elem_cmp(t, buf + i * es, dmn) < 0) memcpy(dmn, buf + i * es, es);
            if (elem_cmp(t, buf + i * es, dmx) > 0) memcpy(dmx, buf + i * es, es);
        }
        if (dv->no_minmax) { /* the file has no statistics: block_info gives zeros */
            static const unsigned char zero[32];
            if (memcmp(mn, zero, es) || memcmp(mx, zero, es))
                diff(c, dv->name, "step %zu block %zu: min/max not zeros without statistics", s, b);
        } else if (elem_cmp(t, dmn, mn) != 0 || elem_cmp(t, dmx, mx) != 0) {
            char a[128], b2[128], x[128], y[128];
            dump_format(t, mn, a, sizeof a);
            dump_format(t, mx, b2, sizeof b2);
            dump_format(t, dmn, x, sizeof x);
            dump_format(t, dmx, y, sizeof y);
            diff(c, dv->name, "step %zu block %zu: block_info min/max %s / %s, its data has %s / %s",
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
static void check_local_value(ctx *c, gpubp_file *f, gpubp_variable *v, const dump_var *dv,
                              gpubp_type t, size_t k, size_t vstep, const char *mode)
{
    size_t got = 0, nb = 0, es = gpubp_type_size(t), zero[1] = {0};
    const dump_block *first;
    gpubp_variable_shape(v, GPUBP_MEM_HOST, &got);
    if (dv->nblocks) {
        nb = blocks_in_step(dv->blocks, dv->nblocks, k, &first);
        if (got != nb) diff(c, dv->name, "%sstep %zu: %zu values, -D lists %zu blocks", mode, k, got, nb);
    }
    gpubp_variable_blocks(v, vstep, &nb);
    if (nb != got) diff(c, dv->name, "%sstep %zu: shape %zu, %zu blocks", mode, k, got, nb);
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
                                             : elems_differ(t, x, e, es)))
                diff(c, dv->name, "%s: block %zu read alone (%s) differs", where, b,
                     how ? "box" : "block selection");
            free(x);
        }
        e += t == GPUBP_TYPE_STRING ? strlen((const char *)e) + 1 : es;
    }
    free(buf);
}

/* random access: every variable of the dump */
static void check_var_random(ctx *c, gpubp_file *f, const dump_var *dv)
{
    gpubp_variable *v = NULL;
    int rc = gpubp_inquire_variable(&v, f, dv->name);
    if (rc != GPUBP_OK) {
        diff(c, dv->name, "inquire -> %d", rc);
        return;
    }
    gpubp_type t;
    gpubp_shape_kind k;
    size_t nd = 99, ns = 0;
    gpubp_variable_type(v, &t);
    if (strcmp(gpubp_type_name(t), dv->type)) {
        diff(c, dv->name, "type %s, dump says %s", gpubp_type_name(t), dv->type);
        return;
    }
    gpubp_variable_shape_kind(v, &k);
    if (k != kind_of(dv->kind) && !is_local_value(k, dv))
        diff(c, dv->name, "shape kind %d, expected %d", (int)k, (int)kind_of(dv->kind));
    gpubp_variable_ndims(v, &nd);
    if (nd != dv->ndims) {
        diff(c, dv->name, "ndims %zu, dump says %zu", nd, dv->ndims);
        return;
    }
    gpubp_variable_steps(v, &ns);
    if (ns != dv->nsteps) {
        diff(c, dv->name, "%zu steps, dump says %zu", ns, dv->nsteps);
        return;
    }
    size_t es = gpubp_type_size(t);
    /* min/max over all steps */
    if (gpubp_set_step_selection(v, 0, ns) != GPUBP_OK) diff(c, dv->name, "step selection 0..%zu", ns);
    check_minmax(c, v, dv, t);

    for (size_t s = 0; s < ns; s++) {
        rc = gpubp_set_step_selection(v, s, 1);
        if (rc != GPUBP_OK) {
            diff(c, dv->name, "set_step_selection(%zu) -> %d", s, rc);
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
                diff(c, dv->name, "step %zu: shape differs from the dump", s);
                continue;
            }
            size_t n = prod(nd, shape);
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
                size_t bn = prod(nd, bct);
                if (gpubp_set_selection(v, nd, bst, bct) != GPUBP_OK) {
                    diff(c, dv->name, "step %zu: set_selection of an inner box", s);
                } else {
                    unsigned char *box = get_sel(c, f, v, dv->name, bn * es, NULL);
                    for (size_t i = 0; box && i < bn; i++) {
                        size_t at = box_to_linear(nd, shape, bst, bct, i);
                        if (!dump_match(t, box + i * es, dv->vals[s * n + at])) {
                            diff(c, dv->name, "step %zu: inner box element %zu differs from the dump's %s", s, i, dv->vals[s * n + at]);
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
                    diff(c, dv->name, "step %zu: value %s, dump says %s", s, g, want);
                }
                if (buf && t == GPUBP_TYPE_STRING && strlen((char *)buf) + 1 != bytes)
                    diff(c, dv->name, "step %zu: selection_size %zu for a string of %zu", s, bytes, strlen((char *)buf));
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
                    diff(c, dv->name, "step %zu block %zu: shape differs from the dump", s, b);
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
        if (gpubp_set_step_selection(v, 0, ns) != GPUBP_OK) diff(c, dv->name, "step selection 0..%zu", ns);
        if (dv->kind == DV_GLOBAL_ARRAY) gpubp_set_selection(v, nd, zero, dv->shape);
        unsigned char *buf = get_sel(c, f, v, dv->name, dv->nvals * es, NULL);
        if (buf) compare_values(c, dv->name, t, buf, dv->vals, dv->nvals, "all steps");
        free(buf);
    }
}

static void check_names(ctx *c, gpubp_file *f, dump_set *ds, int attrs)
{
    size_t n = 0, want = 0;
    const char *const *names = NULL;
    int rc = attrs ? gpubp_available_attributes(f, &n, &names) : gpubp_available_variables(f, &n, &names);
    if (rc != GPUBP_OK) {
        diff(c, "-", "available_%s -> %d", attrs ? "attributes" : "variables", rc);
        return;
    }
    for (size_t i = 0; i < ds->n; i++)
        if ((ds->vars[i].kind == DV_ATTRIBUTE) == attrs) want++;
    if (n != want) diff(c, "-", "%zu %s, the dump lists %zu", n, attrs ? "attributes" : "variables", want);
    for (size_t i = 0; i < n; i++) {
        dump_var *dv = dump_find(ds, names[i]);
        if (!dv || (dv->kind == DV_ATTRIBUTE) != attrs) diff(c, names[i], "not in the dump");
        if (i && strcmp(names[i - 1], names[i]) >= 0) diff(c, names[i], "names not sorted");
    }
}

static void check_read_mode(ctx *c, gpubp_file *f, dump_set *ds)
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
                diff(c, dv->name, "present in more steps than the dump's %zu", dv->nsteps);
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
                    diff(c, dv->name, "%s: shape differs from the dump", where);
                    continue;
                }
                if (!dv->have_values) continue;
                size_t n = prod(nd, shape);
                gpubp_set_selection(v, nd, zero, shape);
                unsigned char *buf = get_sel(c, f, v, dv->name, n * es, NULL);
                if (buf) compare_values(c, dv->name, t, buf, dv->vals + k * n, n, where);
                free(buf);
            } else if (dv->kind == DV_SCALAR && dv->have_values) {
                unsigned char *buf = get_sel(c, f, v, dv->name, t == GPUBP_TYPE_STRING ? 0 : es, NULL);
                if (buf && !dump_match(t, buf, dv->vals[k])) diff(c, dv->name, "%s: value differs from %s", where, dv->vals[k]);
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
                if (dv->ndblocks && nb != b) diff(c, dv->name, "%s: %zu blocks, dump has %zu", where, nb, b);
            }
        }
        if (gpubp_end_step(f) != GPUBP_OK) diff(c, "-", "end_step");
        s++;
        if (s > 100000) break;
    }
    if (rc != GPUBP_END_OF_STREAM) diff(c, "-", "begin_step ended with %d, not END_OF_STREAM", rc);
    if (s < maxsteps) diff(c, "-", "READ mode gave %zu steps, the dump has %zu", s, maxsteps);
    for (size_t i = 0; i < ds->n; i++)
        if (ds->vars[i].kind != DV_ATTRIBUTE && seen[i] != ds->vars[i].nsteps)
            diff(c, ds->vars[i].name, "seen in %zu steps in READ mode, dump says %zu", seen[i], ds->vars[i].nsteps);
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
    ctx c = {dataset, 0};
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
    if (rc != GPUBP_OK) diff(&c, "-", "close -> %d", rc);
    return c.diffs;
}

/* ---- dataset against dataset ----------------------------------------------------------------- */

/* reads the current selection of v (in file f) into a new buffer; NULL on failure */
static unsigned char *get_any(gpubp_file *f, gpubp_variable *v, size_t *bytes)
{
    *bytes = 0;
    if (gpubp_selection_size(v, bytes) != GPUBP_OK || *bytes > MAX_BYTES) return NULL;
    unsigned char *buf = calloc(*bytes + 16, 1);
    if (gpubp_get(f, v, buf, GPUBP_SYNC) != GPUBP_OK) {
        free(buf);
        return NULL;
    }
    return buf;
}

static gpubp_type type_of(const gpubp_variable *v)
{
    gpubp_type t = GPUBP_TYPE_INT8;
    gpubp_variable_type(v, &t);
    return t;
}

static void compare_reads(ctx *c, const char *name, const char *what, gpubp_file *fa,
                          gpubp_variable *va, gpubp_file *fb, gpubp_variable *vb)
{
    size_t na = 0, nb = 0;
    unsigned char *a = get_any(fa, va, &na), *b = get_any(fb, vb, &nb);
    if (!a || !b) diff(c, name, "%s: get failed (%s%s)", what, a ? "" : "first ", b ? "" : "second");
    else if (na != nb) diff(c, name, "%s: %zu bytes vs %zu", what, na, nb);
    else if (elems_differ(type_of(va), a, b, na)) diff(c, name, "%s: values differ", what);
    free(a);
    free(b);
}

static void compare_var(ctx *c, gpubp_file *fa, gpubp_file *fb, const char *name)
{
    gpubp_variable *va = NULL, *vb = NULL;
    if (gpubp_inquire_variable(&va, fa, name) != GPUBP_OK || gpubp_inquire_variable(&vb, fb, name) != GPUBP_OK) {
        diff(c, name, "inquire failed");
        return;
    }
    gpubp_type ta, tb;
    gpubp_shape_kind ka, kb;
    size_t nda = 0, ndb = 0, nsa = 0, nsb = 0;
    gpubp_variable_type(va, &ta);
    gpubp_variable_type(vb, &tb);
    gpubp_variable_shape_kind(va, &ka);
    gpubp_variable_shape_kind(vb, &kb);
    gpubp_variable_ndims(va, &nda);
    gpubp_variable_ndims(vb, &ndb);
    gpubp_variable_steps(va, &nsa);
    gpubp_variable_steps(vb, &nsb);
    if (ta != tb || ka != kb || nda != ndb || nsa != nsb) {
        diff(c, name, "type %d/%d, kind %d/%d, ndims %zu/%zu, steps %zu/%zu", (int)ta, (int)tb,
             (int)ka, (int)kb, nda, ndb, nsa, nsb);
        return;
    }
    size_t es = gpubp_type_size(ta);
    int str = ta == GPUBP_TYPE_STRING;
    if (!str) {
        unsigned char mna[32], mxa[32], mnb[32], mxb[32];
        gpubp_set_step_selection(va, 0, nsa);
        gpubp_set_step_selection(vb, 0, nsb);
        int ra = gpubp_variable_minmax(va, mna, mxa), rb = gpubp_variable_minmax(vb, mnb, mxb);
        if (ra != rb) diff(c, name, "minmax -> %d / %d", ra, rb);
        else if (ra != GPUBP_OK && ra != GPUBP_ERR_NOT_FOUND) diff(c, name, "minmax failed");
        else if (ra != GPUBP_OK) { /* neither has statistics (BP5: complex types) */ }
        else if (elems_differ(ta, mna, mnb, es) || elems_differ(ta, mxa, mxb, es))
            diff(c, name, "min/max differ");
    }
    for (size_t s = 0; s < nsa; s++) {
        char what[96];
        size_t nba = 0, nbb = 0;
        gpubp_variable_blocks(va, s, &nba);
        gpubp_variable_blocks(vb, s, &nbb);
        if (nba != nbb) {
            diff(c, name, "step %zu: %zu blocks vs %zu", s, nba, nbb);
            continue;
        }
        gpubp_set_step_selection(va, s, 1);
        gpubp_set_step_selection(vb, s, 1);
        size_t sha[DUMP_MAXDIMS], shb[DUMP_MAXDIMS], zero[DUMP_MAXDIMS] = {0};
        if (ka == GPUBP_SHAPE_GLOBAL_ARRAY) {
            gpubp_variable_shape(va, GPUBP_MEM_HOST, sha);
            gpubp_variable_shape(vb, GPUBP_MEM_HOST, shb);
            if (memcmp(sha, shb, nda * sizeof *sha)) {
                diff(c, name, "step %zu: shapes differ", s);
                continue;
            }
            gpubp_set_selection(va, nda, zero, sha);
            gpubp_set_selection(vb, ndb, zero, shb);
            snprintf(what, sizeof what, "step %zu", s);
            compare_reads(c, name, what, fa, va, fb, vb);
        } else if (ka == GPUBP_SHAPE_GLOBAL_VALUE) {
            snprintf(what, sizeof what, "step %zu", s);
            compare_reads(c, name, what, fa, va, fb, vb);
        }
        for (size_t b = 0; b < nba; b++) {
            size_t sta[DUMP_MAXDIMS], cta[DUMP_MAXDIMS], stb[DUMP_MAXDIMS], ctb[DUMP_MAXDIMS];
            unsigned char mna[32], mxa[32], mnb[32], mxb[32];
            int ra = gpubp_variable_block_info(va, s, b, sta, cta, str ? NULL : mna, str ? NULL : mxa);
            int rb = gpubp_variable_block_info(vb, s, b, stb, ctb, str ? NULL : mnb, str ? NULL : mxb);
            if (ra != GPUBP_OK || rb != GPUBP_OK) {
                diff(c, name, "step %zu block %zu: block_info %d/%d", s, b, ra, rb);
                continue;
            }
            if (memcmp(sta, stb, nda * sizeof *sta) || memcmp(cta, ctb, nda * sizeof *cta))
                diff(c, name, "step %zu block %zu: start/count differ", s, b);
            if (!str && (elems_differ(ta, mna, mnb, es) || elems_differ(ta, mxa, mxb, es)))
                diff(c, name, "step %zu block %zu: min/max differ", s, b);
            if (ka == GPUBP_SHAPE_LOCAL_ARRAY || ka == GPUBP_SHAPE_GLOBAL_ARRAY) {
                if (ka == GPUBP_SHAPE_GLOBAL_ARRAY) {
                    gpubp_set_selection(va, nda, sta, cta);
                    gpubp_set_selection(vb, ndb, stb, ctb);
                } else {
                    gpubp_set_block_selection(va, b);
                    gpubp_set_block_selection(vb, b);
                }
                snprintf(what, sizeof what, "step %zu block %zu", s, b);
                compare_reads(c, name, what, fa, va, fb, vb);
            }
        }
    }
}

static void compare_attr(ctx *c, gpubp_file *fa, gpubp_file *fb, const char *name)
{
    gpubp_type ta, tb;
    size_t na = 0, nb = 0;
    int aa = -1, ab = -1;
    if (gpubp_inquire_attribute(fa, name, &ta, &na, &aa) != GPUBP_OK ||
        gpubp_inquire_attribute(fb, name, &tb, &nb, &ab) != GPUBP_OK) {
        diff(c, name, "inquire_attribute failed");
        return;
    }
    if (ta != tb || na != nb || aa != ab) {
        diff(c, name, "attribute type %d/%d, n %zu/%zu, is_array %d/%d", (int)ta, (int)tb, na, nb, aa, ab);
        return;
    }
    if (ta == GPUBP_TYPE_STRING) {
        for (size_t i = 0; i < na; i++) {
            const char *sa = NULL, *sb = NULL;
            gpubp_attribute_string(fa, name, i, &sa);
            gpubp_attribute_string(fb, name, i, &sb);
            if (!sa || !sb || strcmp(sa, sb)) diff(c, name, "string %zu differs", i);
        }
        return;
    }
    size_t es = gpubp_type_size(ta);
    unsigned char *a = calloc(na * es + 16, 1), *b = calloc(nb * es + 16, 1);
    if (gpubp_attribute_data(fa, name, a) != GPUBP_OK || gpubp_attribute_data(fb, name, b) != GPUBP_OK)
        diff(c, name, "attribute_data failed");
    else if (elems_differ(ta, a, b, na * es)) diff(c, name, "attribute values differ");
    free(a);
    free(b);
}

int dump_compare_datasets(const char *a, const char *b)
{
    ctx c = {a, 0};
    gpubp_file *fa = NULL, *fb = NULL;
    if (gpubp_open(&fa, a, GPUBP_MODE_READ_RANDOM_ACCESS, NULL) != GPUBP_OK) {
        diff(&c, "-", "cannot open %s", a);
        return c.diffs;
    }
    if (gpubp_open(&fb, b, GPUBP_MODE_READ_RANDOM_ACCESS, NULL) != GPUBP_OK) {
        diff(&c, "-", "cannot open %s", b);
        gpubp_close(fa);
        return c.diffs;
    }
    size_t sa = 0, sb = 0;
    gpubp_steps(fa, &sa);
    gpubp_steps(fb, &sb);
    if (sa != sb) diff(&c, "-", "%zu steps vs %zu", sa, sb);
    for (int attrs = 0; attrs < 2; attrs++) {
        size_t na = 0, nb = 0;
        const char *const *la = NULL, *const *lb = NULL;
        if (attrs) {
            gpubp_available_attributes(fa, &na, &la);
            gpubp_available_attributes(fb, &nb, &lb);
        } else {
            gpubp_available_variables(fa, &na, &la);
            gpubp_available_variables(fb, &nb, &lb);
        }
        if (na != nb) {
            diff(&c, "-", "%zu %s vs %zu", na, attrs ? "attributes" : "variables", nb);
            continue;
        }
        /* copy the names: the lists are borrowed */
        char **names = calloc(na + 1, sizeof *names);
        for (size_t i = 0; i < na; i++) {
            if (strcmp(la[i], lb[i])) diff(&c, la[i], "name differs from %s", lb[i]);
            names[i] = xstrndup(la[i], strlen(la[i]));
        }
        for (size_t i = 0; i < na; i++) {
            if (attrs) compare_attr(&c, fa, fb, names[i]);
            else compare_var(&c, fa, fb, names[i]);
            free(names[i]);
        }
        free(names);
    }
    gpubp_close(fa);
    gpubp_close(fb);
    return c.diffs;
}
