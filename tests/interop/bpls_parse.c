/* Parser of bpls -d / -D / -la output (tests/interop/bpls_parse.h). */
#include "interop/bpls_parse.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "support/test_support.h"
#include "support/values.h"

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
                    cur->nvals = cur->nsteps * ts_prod(cur->ndims, cur->shape);
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
                b.ntok = b.null_box ? 0 : ts_prod(b.ndims, b.count);
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
        char *text = ts_read_text(path);
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

