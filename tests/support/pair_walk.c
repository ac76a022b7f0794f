/* Two datasets compared through the API (tests/support/pair_walk.h). */
#include "support/pair_walk.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "support/test_support.h"
#include "support/values.h"

#define MAXD 16

void ts_pair_diff(ts_pair *c, const char *var, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "DIFF %s: %s: ", c->name, var);
    vfprintf(stderr, fmt, ap);
    fprintf(stderr, " [%s]\n", gpubp_last_error());
    va_end(ap);
    c->diffs++;
}

static int is_complex(gpubp_type t)
{
    return t == GPUBP_TYPE_FLOAT_COMPLEX || t == GPUBP_TYPE_DOUBLE_COMPLEX;
}

static gpubp_type type_of(const gpubp_variable *v)
{
    gpubp_type t = GPUBP_TYPE_INT8;
    gpubp_variable_type(v, &t);
    return t;
}

void ts_pair_read(ts_pair *c, const char *var, const char *what, gpubp_file *fa,
                  gpubp_variable *va, gpubp_file *fb, gpubp_variable *vb)
{
    size_t na, nb;
    int ra, rb;
    unsigned char *a = ts_get_new(fa, va, &na, &ra), *b = ts_get_new(fb, vb, &nb, &rb);
    if (!a || !b) ts_pair_diff(c, var, "%s: get %d / %d", what, ra, rb);
    else if (na != nb || ts_elems_differ(type_of(va), a, b, na))
        ts_pair_diff(c, var, "%s: %zu / %zu bytes, values differ", what, na, nb);
    free(a);
    free(b);
}

int ts_pair_head(ts_pair *c, const char *var, gpubp_variable *va, gpubp_variable *vb,
                 gpubp_type *t, gpubp_shape_kind *k, size_t *nd, size_t *ns)
{
    gpubp_type tb;
    gpubp_shape_kind kb;
    size_t ndb = 0, nsb = 0;
    gpubp_variable_type(va, t);
    gpubp_variable_type(vb, &tb);
    gpubp_variable_shape_kind(va, k);
    gpubp_variable_shape_kind(vb, &kb);
    gpubp_variable_ndims(va, nd);
    gpubp_variable_ndims(vb, &ndb);
    gpubp_variable_steps(va, ns);
    gpubp_variable_steps(vb, &nsb);
    if (*t != tb || *k != kb || *nd != ndb || *ns != nsb) {
        ts_pair_diff(c, var, "type %d/%d, kind %d/%d, ndims %zu/%zu, steps %zu/%zu", (int)*t,
                     (int)tb, (int)*k, (int)kb, *nd, ndb, *ns, nsb);
        return 0;
    }
    return 1;
}

void ts_pair_minmax(ts_pair *c, const char *var, const char *what, gpubp_variable *va,
                    gpubp_variable *vb, gpubp_type t, gpubp_shape_kind k)
{
    unsigned char mna[32], mxa[32], mnb[32], mxb[32];
    int ra = gpubp_variable_minmax(va, mna, mxa), rb = gpubp_variable_minmax(vb, mnb, mxb);
    if (t == GPUBP_TYPE_STRING) {
        if (ra != GPUBP_ERR_NOT_SUPPORTED || rb != GPUBP_ERR_NOT_SUPPORTED)
            ts_pair_diff(c, var, "%s: string min/max %d / %d, expected NOT_SUPPORTED", what, ra, rb);
        return;
    }
    if (c->bp5_twin && is_complex(t) && k != GPUBP_SHAPE_GLOBAL_VALUE &&
        k != GPUBP_SHAPE_LOCAL_VALUE) {
        if (ra != GPUBP_OK || rb != GPUBP_ERR_NOT_FOUND)
            ts_pair_diff(c, var, "%s: complex min/max %d / %d, expected BP4 OK / BP5 NOT_FOUND",
                         what, ra, rb);
        c->complex_minmax++;
        return;
    }
    size_t es = gpubp_type_size(t);
    if (ra != rb) ts_pair_diff(c, var, "%s: minmax %d / %d", what, ra, rb);
    else if (ra == GPUBP_ERR_NOT_FOUND && !c->bp5_twin) { /* neither has statistics */ }
    else if (ra != GPUBP_OK) ts_pair_diff(c, var, "%s: minmax %d", what, ra);
    else if (ts_elems_differ(t, mna, mnb, es) || ts_elems_differ(t, mxa, mxb, es))
        ts_pair_diff(c, var, "%s: min/max differ", what);
}

/* Block b of both read alone, through a block selection and (global arrays) through its box. */
static void block_values(ts_pair *c, const char *var, size_t s, size_t b, gpubp_file *fa,
                         gpubp_variable *va, gpubp_file *fb, gpubp_variable *vb,
                         gpubp_shape_kind k, size_t nd, const size_t *st, const size_t *ct)
{
    char what[96];
    if (gpubp_set_block_selection(va, b) != GPUBP_OK ||
        gpubp_set_block_selection(vb, b) != GPUBP_OK) {
        ts_pair_diff(c, var, "step %zu block %zu: set_block_selection", s, b);
        return;
    }
    snprintf(what, sizeof what, "step %zu block %zu", s, b);
    ts_pair_read(c, var, what, fa, va, fb, vb);
    if (k != GPUBP_SHAPE_GLOBAL_ARRAY) return;
    if (gpubp_set_selection(va, nd, st, ct) != GPUBP_OK ||
        gpubp_set_selection(vb, nd, st, ct) != GPUBP_OK) {
        ts_pair_diff(c, var, "step %zu block %zu: set_selection of its box", s, b);
        return;
    }
    snprintf(what, sizeof what, "step %zu box of block %zu", s, b);
    ts_pair_read(c, var, what, fa, va, fb, vb);
}

void ts_pair_blocks(ts_pair *c, const char *var, size_t s, gpubp_file *fa, gpubp_variable *va,
                    gpubp_file *fb, gpubp_variable *vb, gpubp_type t, gpubp_shape_kind k,
                    size_t nd)
{
    size_t nba = 0, nbb = 0;
    if (gpubp_variable_blocks(va, s, &nba) != GPUBP_OK ||
        gpubp_variable_blocks(vb, s, &nbb) != GPUBP_OK || nba != nbb) {
        ts_pair_diff(c, var, "step %zu: %zu / %zu blocks", s, nba, nbb);
        return;
    }
    int str = t == GPUBP_TYPE_STRING;
    size_t es = gpubp_type_size(t);
    static const unsigned char zero[32];
    for (size_t b = 0; b < nba; b++) {
        size_t sta[MAXD], cta[MAXD], stb[MAXD], ctb[MAXD];
        unsigned char mna[32], mxa[32], mnb[32], mxb[32];
        int ra = gpubp_variable_block_info(va, s, b, sta, cta, str ? NULL : mna, str ? NULL : mxa);
        int rb = gpubp_variable_block_info(vb, s, b, stb, ctb, str ? NULL : mnb, str ? NULL : mxb);
        if (ra != GPUBP_OK || rb != GPUBP_OK) {
            ts_pair_diff(c, var, "step %zu block %zu: block_info %d / %d", s, b, ra, rb);
            continue;
        }
        if (memcmp(sta, stb, nd * sizeof *sta) || memcmp(cta, ctb, nd * sizeof *cta)) {
            ts_pair_diff(c, var, "step %zu block %zu: start/count differ", s, b);
            continue;
        }
        if (!str && c->bp5_twin && is_complex(t) && k != GPUBP_SHAPE_GLOBAL_VALUE) {
            /* BP5 has no complex statistics: zeros (a value's min = max = the value) */
            if (memcmp(mnb, zero, es) || memcmp(mxb, zero, es))
                ts_pair_diff(c, var, "step %zu block %zu: BP5 complex block min/max not zeros", s, b);
            c->complex_minmax++;
        } else if (!str && (ts_elems_differ(t, mna, mnb, es) || ts_elems_differ(t, mxa, mxb, es))) {
            ts_pair_diff(c, var, "step %zu block %zu: block min/max differ", s, b);
        }
        if (!str && (k == GPUBP_SHAPE_LOCAL_ARRAY || k == GPUBP_SHAPE_GLOBAL_ARRAY))
            block_values(c, var, s, b, fa, va, fb, vb, k, nd, sta, cta);
    }
}

void ts_pair_boxes(ts_pair *c, const char *var, size_t s, gpubp_file *fa, gpubp_variable *va,
                   gpubp_file *fb, gpubp_variable *vb, size_t nd)
{
    size_t sha[MAXD], shb[MAXD], shda[MAXD], shdb[MAXD];
    if (gpubp_variable_shape(va, GPUBP_MEM_HOST, sha) != GPUBP_OK ||
        gpubp_variable_shape(vb, GPUBP_MEM_HOST, shb) != GPUBP_OK ||
        gpubp_variable_shape(va, GPUBP_MEM_GPU, shda) != GPUBP_OK ||
        gpubp_variable_shape(vb, GPUBP_MEM_GPU, shdb) != GPUBP_OK) {
        ts_pair_diff(c, var, "step %zu: shape", s);
        return;
    }
    if (memcmp(sha, shb, nd * sizeof *sha) || memcmp(shda, shdb, nd * sizeof *sha)) {
        ts_pair_diff(c, var, "step %zu: shapes differ", s);
        return;
    }
    size_t zero[MAXD] = {0}, st[MAXD], ct[MAXD], mst[MAXD], mct[MAXD];
    gpubp_set_selection(va, nd, zero, sha);
    gpubp_set_selection(vb, nd, zero, shb);
    ts_pair_read(c, var, "whole step", fa, va, fb, vb);
    int inner = 1;
    for (size_t d = 0; d < nd; d++) {
        st[d] = sha[d] > 2 ? 1 : 0;
        ct[d] = sha[d] > 2 ? sha[d] - 2 : sha[d];
        inner = inner && ct[d] > 0;
        mst[d] = 1;
        mct[d] = ct[d] + 2;
    }
    if (!inner) return;
    gpubp_set_selection(va, nd, st, ct);
    gpubp_set_selection(vb, nd, st, ct);
    ts_pair_read(c, var, "inner box", fa, va, fb, vb);
    if (gpubp_set_memory_selection(va, nd, mst, mct) != GPUBP_OK ||
        gpubp_set_memory_selection(vb, nd, mst, mct) != GPUBP_OK) {
        ts_pair_diff(c, var, "step %zu: set_memory_selection", s);
        return;
    }
    ts_pair_read(c, var, "inner box in a larger buffer", fa, va, fb, vb);
    gpubp_set_memory_selection(va, 0, NULL, NULL);
    gpubp_set_memory_selection(vb, 0, NULL, NULL);
}

char **ts_pair_names(ts_pair *c, gpubp_file *fa, gpubp_file *fb, int attrs, size_t *n)
{
    size_t na = 0, nb = 0;
    const char *const *la = NULL, *const *lb = NULL;
    if (attrs) {
        gpubp_available_attributes(fa, &na, &la);
        gpubp_available_attributes(fb, &nb, &lb);
    } else {
        gpubp_available_variables(fa, &na, &la);
        gpubp_available_variables(fb, &nb, &lb);
    }
    *n = 0;
    if (na != nb) {
        ts_pair_diff(c, "-", "%zu / %zu %s", na, nb, attrs ? "attributes" : "variables");
        return NULL;
    }
    char **names = calloc(na + 1, sizeof *names);
    for (size_t i = 0; i < na; i++) {
        if (strcmp(la[i], lb[i])) ts_pair_diff(c, la[i], "name differs from %s", lb[i]);
        names[i] = strdup(la[i]);
    }
    *n = na;
    return names;
}

void ts_pair_free_names(char **names, size_t n)
{
    for (size_t i = 0; names && i < n; i++) free(names[i]);
    free(names);
}

static void pair_attr(ts_pair *c, gpubp_file *fa, gpubp_file *fb, const char *name)
{
    gpubp_type ta = GPUBP_TYPE_INT8, tb = GPUBP_TYPE_INT8;
    size_t ca = 0, cb = 0;
    int aa = -1, ab = -1;
    if (gpubp_inquire_attribute(fa, name, &ta, &ca, &aa) != GPUBP_OK ||
        gpubp_inquire_attribute(fb, name, &tb, &cb, &ab) != GPUBP_OK || ta != tb || ca != cb ||
        aa != ab) {
        ts_pair_diff(c, name, "attribute type %d/%d, count %zu/%zu, array %d/%d", (int)ta,
                     (int)tb, ca, cb, aa, ab);
        return;
    }
    if (ta == GPUBP_TYPE_STRING) {
        for (size_t j = 0; j < ca; j++) {
            const char *sa = NULL, *sb = NULL;
            gpubp_attribute_string(fa, name, j, &sa);
            gpubp_attribute_string(fb, name, j, &sb);
            if (!sa || !sb || strcmp(sa, sb)) ts_pair_diff(c, name, "string %zu differs", j);
        }
        return;
    }
    size_t n = ca * gpubp_type_size(ta);
    unsigned char *a = calloc(n + 16, 1), *b = calloc(n + 16, 1);
    if (gpubp_attribute_data(fa, name, a) != GPUBP_OK ||
        gpubp_attribute_data(fb, name, b) != GPUBP_OK || ts_elems_differ(ta, a, b, n))
        ts_pair_diff(c, name, "attribute values differ");
    free(a);
    free(b);
}

void ts_pair_attrs(ts_pair *c, gpubp_file *fa, gpubp_file *fb)
{
    size_t n = 0;
    char **names = ts_pair_names(c, fa, fb, 1, &n);
    for (size_t i = 0; names && i < n; i++) pair_attr(c, fa, fb, names[i]);
    ts_pair_free_names(names, n);
}

static void pair_var_random(ts_pair *c, gpubp_file *fa, gpubp_file *fb, const char *var)
{
    gpubp_variable *va = NULL, *vb = NULL;
    if (gpubp_inquire_variable(&va, fa, var) != GPUBP_OK ||
        gpubp_inquire_variable(&vb, fb, var) != GPUBP_OK) {
        ts_pair_diff(c, var, "inquire");
        return;
    }
    gpubp_type t;
    gpubp_shape_kind k;
    size_t nd, ns;
    if (!ts_pair_head(c, var, va, vb, &t, &k, &nd, &ns)) return;
    /* every step at once: min/max */
    gpubp_set_step_selection(va, 0, ns);
    gpubp_set_step_selection(vb, 0, ns);
    ts_pair_minmax(c, var, "all steps", va, vb, t, k);
    for (size_t s = 0; s < ns; s++) {
        size_t da = 0, db = 0;
        if (gpubp_variable_dataset_step(va, s, &da) != GPUBP_OK ||
            gpubp_variable_dataset_step(vb, s, &db) != GPUBP_OK || da != db)
            ts_pair_diff(c, var, "step %zu: dataset step %zu / %zu", s, da, db);
        gpubp_set_step_selection(va, s, 1);
        gpubp_set_step_selection(vb, s, 1);
        ts_pair_minmax(c, var, "one step", va, vb, t, k);
        char what[64];
        snprintf(what, sizeof what, "step %zu", s);
        if (k == GPUBP_SHAPE_GLOBAL_ARRAY) ts_pair_boxes(c, var, s, fa, va, fb, vb, nd);
        else if (k == GPUBP_SHAPE_GLOBAL_VALUE || k == GPUBP_SHAPE_LOCAL_VALUE)
            ts_pair_read(c, var, what, fa, va, fb, vb);
        ts_pair_blocks(c, var, s, fa, va, fb, vb, t, k, nd);
    }
    /* a step range of a fixed-shape global array or of values: every step in one get */
    if (t != GPUBP_TYPE_STRING && (k == GPUBP_SHAPE_GLOBAL_VALUE || k == GPUBP_SHAPE_GLOBAL_ARRAY) &&
        ns > 1) {
        gpubp_inquire_variable(&va, fa, var);
        gpubp_inquire_variable(&vb, fb, var);
        gpubp_set_step_selection(va, 0, ns);
        gpubp_set_step_selection(vb, 0, ns);
        size_t n1 = 0, n2 = 0;
        if (gpubp_selection_size(va, &n1) == GPUBP_OK && gpubp_selection_size(vb, &n2) == GPUBP_OK)
            ts_pair_read(c, var, "all steps in one get", fa, va, fb, vb);
    }
}

int ts_pair_random(ts_pair *c, const char *a, const char *b)
{
    gpubp_file *fa = NULL, *fb = NULL;
    if (gpubp_open(&fa, a, GPUBP_MODE_READ_RANDOM_ACCESS, NULL) != GPUBP_OK) {
        ts_pair_diff(c, "-", "cannot open %s", a);
        return c->diffs;
    }
    if (gpubp_open(&fb, b, GPUBP_MODE_READ_RANDOM_ACCESS, NULL) != GPUBP_OK) {
        ts_pair_diff(c, "-", "cannot open %s", b);
        gpubp_close(fa);
        return c->diffs;
    }
    size_t sa = 0, sb = 0;
    gpubp_steps(fa, &sa);
    gpubp_steps(fb, &sb);
    if (sa != sb || sa == 0) ts_pair_diff(c, "-", "%zu / %zu steps", sa, sb);
    size_t n = 0;
    char **names = ts_pair_names(c, fa, fb, 0, &n);
    for (size_t i = 0; names && i < n; i++) pair_var_random(c, fa, fb, names[i]);
    ts_pair_free_names(names, n);
    ts_pair_attrs(c, fa, fb);
    if (gpubp_close(fa) != GPUBP_OK) ts_pair_diff(c, "-", "close %s", a);
    if (gpubp_close(fb) != GPUBP_OK) ts_pair_diff(c, "-", "close %s", b);
    return c->diffs;
}
