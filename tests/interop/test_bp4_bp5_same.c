/* The BP4 and the BP5 files of the same content read identically through the API (issue 21
 * item 8). ADIOS2 wrote each pair with the same generator, once with its BP4 engine and once with
 * its BP5 engine (tests/golden/README.md): BP4/ and BP5/ (make_corpus.c: every type, strings,
 * attributes, a global array in blocks over steps, local arrays, a column-major writer, changing
 * shapes, an appended file), codecs/BP4 and codecs/BP5 (make_codecs.c: the blosc operator with
 * every codec and shuffle), gpu/BP4 and gpu/BP5 (the seed's GPU example). For every pair, in
 * random access and in step mode:
 *   the step count; the variables (names, order), their type, shape kind, ndims, step count,
 *   dataset steps; per step the shape (host and device layout), the blocks and their info (start,
 *   count, min, max), min/max of the step and over all steps; every value: the whole step, each
 *   block alone, a box across the blocks (one element in from every side), all steps at once
 *   (step range), a box into a larger buffer (memory selection); the attributes (names, type,
 *   count, array or not, values).
 *
 * The differences ADIOS2 itself shows between the engines, and how the API presents them (each is
 * asserted, so that a change on either side is seen):
 *   - complex variables: ADIOS2's BP4 writer records min/max (bpls -la prints "(-1,i0.5) /
 *     (-0.5,i4.5)"); its BP5 writer computes no statistics for complex arrays (bpls prints no
 *     " = min / max"). The API: the BP4 file gives min/max (by modulus, as ADIOS2), the BP5 file
 *     gives GPUBP_ERR_NOT_FOUND for gpubp_variable_minmax and zeros from block_info; values equal.
 *     A complex single value has its value as min and max in both.
 *   - string variables: bpls prints '"" / ""' as the BP4 min/max of a string and nothing for
 *     BP5; the API has no min/max for strings in either (NOT_SUPPORTED), so nothing differs.
 * Nothing else differs: shapes, blocks, block boxes, values and attributes are the same. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "support/test_support.h"

#define MAXD 16

typedef struct pair {
    char a[4300], b[4300]; /* BP4, BP5 */
    char name[300];
} pair;

typedef struct cmp {
    const pair *p;
    int diffs;
    int complex_minmax; /* min/max checks where BP5 has none (complex): counted, not differences */
} cmp;

static void diff(cmp *c, const char *var, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void diff(cmp *c, const char *var, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "DIFF %s: %s: ", c->p->name, var);
    vfprintf(stderr, fmt, ap);
    fprintf(stderr, " [%s]\n", gpubp_last_error());
    va_end(ap);
    c->diffs++;
}

static int is_complex(gpubp_type t)
{
    return t == GPUBP_TYPE_FLOAT_COMPLEX || t == GPUBP_TYPE_DOUBLE_COMPLEX;
}

/* One read of each side with the selections set; a difference if they fail or differ. */
static void same_read(cmp *c, const char *var, const char *what, gpubp_file *fa, gpubp_variable *va,
                      gpubp_file *fb, gpubp_variable *vb)
{
    size_t na, nb;
    int ra, rb;
    unsigned char *a = ts_get_new(fa, va, &na, &ra), *b = ts_get_new(fb, vb, &nb, &rb);
    if (!a || !b) diff(c, var, "%s: get %d / %d", what, ra, rb);
    else if (na != nb || memcmp(a, b, na)) diff(c, var, "%s: %zu / %zu bytes, values differ", what, na, nb);
    free(a);
    free(b);
}

/* min/max of both sides (selections set): equal, or (complex) BP4's and BP5's NOT_FOUND. */
static void same_minmax(cmp *c, const char *var, const char *what, gpubp_variable *va,
                        gpubp_variable *vb, gpubp_type t, gpubp_shape_kind k)
{
    if (t == GPUBP_TYPE_STRING) {
        unsigned char x[32];
        int ra = gpubp_variable_minmax(va, x, x), rb = gpubp_variable_minmax(vb, x, x);
        if (ra != GPUBP_ERR_NOT_SUPPORTED || rb != GPUBP_ERR_NOT_SUPPORTED)
            diff(c, var, "%s: string min/max %d / %d, expected NOT_SUPPORTED", what, ra, rb);
        return;
    }
    unsigned char mna[32], mxa[32], mnb[32], mxb[32];
    size_t es = gpubp_type_size(t);
    int ra = gpubp_variable_minmax(va, mna, mxa), rb = gpubp_variable_minmax(vb, mnb, mxb);
    if (is_complex(t) && k != GPUBP_SHAPE_GLOBAL_VALUE && k != GPUBP_SHAPE_LOCAL_VALUE) {
        if (ra != GPUBP_OK || rb != GPUBP_ERR_NOT_FOUND)
            diff(c, var, "%s: complex min/max %d / %d, expected BP4 OK / BP5 NOT_FOUND", what, ra, rb);
        c->complex_minmax++;
        return;
    }
    if (ra != GPUBP_OK || rb != GPUBP_OK) diff(c, var, "%s: minmax %d / %d", what, ra, rb);
    else if (memcmp(mna, mnb, es) || memcmp(mxa, mxb, es)) diff(c, var, "%s: min/max differ", what);
}

/* The blocks of the variable's step s (random access) or of the open step. */
static void same_blocks(cmp *c, const char *var, size_t s, gpubp_variable *va, gpubp_variable *vb,
                        gpubp_file *fa, gpubp_file *fb, gpubp_type t, gpubp_shape_kind k,
                        size_t nd)
{
    size_t nba = 0, nbb = 0;
    if (gpubp_variable_blocks(va, s, &nba) != GPUBP_OK || gpubp_variable_blocks(vb, s, &nbb) != GPUBP_OK ||
        nba != nbb) {
        diff(c, var, "step %zu: %zu / %zu blocks", s, nba, nbb);
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
            diff(c, var, "step %zu block %zu: block_info %d / %d", s, b, ra, rb);
            continue;
        }
        if (memcmp(sta, stb, nd * sizeof *sta) || memcmp(cta, ctb, nd * sizeof *cta))
            diff(c, var, "step %zu block %zu: start/count differ", s, b);
        if (!str && is_complex(t) && k != GPUBP_SHAPE_GLOBAL_VALUE) {
            /* BP5 has no complex statistics: zeros (a value's min = max = the value) */
            if (memcmp(mnb, zero, es) || memcmp(mxb, zero, es))
                diff(c, var, "step %zu block %zu: BP5 complex block min/max not zeros", s, b);
            c->complex_minmax++;
        } else if (!str && (memcmp(mna, mnb, es) || memcmp(mxa, mxb, es))) {
            diff(c, var, "step %zu block %zu: block min/max differ", s, b);
        }
        if (k == GPUBP_SHAPE_LOCAL_ARRAY || k == GPUBP_SHAPE_GLOBAL_ARRAY) {
            if (gpubp_set_block_selection(va, b) != GPUBP_OK ||
                gpubp_set_block_selection(vb, b) != GPUBP_OK) {
                diff(c, var, "step %zu block %zu: set_block_selection", s, b);
                continue;
            }
            char what[96];
            snprintf(what, sizeof what, "step %zu block %zu", s, b);
            if (!str) same_read(c, var, what, fa, va, fb, vb);
        }
    }
}

/* A global array's step: the whole of it, a box one element in from every side (across the
 * blocks), and the same box into a larger buffer two elements bigger per dimension. */
static void same_boxes(cmp *c, const char *var, size_t s, gpubp_variable *va, gpubp_variable *vb,
                       gpubp_file *fa, gpubp_file *fb, size_t nd)
{
    size_t sha[MAXD], shb[MAXD], shda[MAXD], shdb[MAXD];
    if (gpubp_variable_shape(va, GPUBP_MEM_HOST, sha) != GPUBP_OK ||
        gpubp_variable_shape(vb, GPUBP_MEM_HOST, shb) != GPUBP_OK ||
        gpubp_variable_shape(va, GPUBP_MEM_GPU, shda) != GPUBP_OK ||
        gpubp_variable_shape(vb, GPUBP_MEM_GPU, shdb) != GPUBP_OK) {
        diff(c, var, "step %zu: shape", s);
        return;
    }
    if (memcmp(sha, shb, nd * sizeof *sha) || memcmp(shda, shdb, nd * sizeof *sha)) {
        diff(c, var, "step %zu: shapes differ", s);
        return;
    }
    size_t zero[MAXD] = {0}, st[MAXD], ct[MAXD], mst[MAXD], mct[MAXD];
    gpubp_set_selection(va, nd, zero, sha);
    gpubp_set_selection(vb, nd, zero, shb);
    same_read(c, var, "whole step", fa, va, fb, vb);
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
    same_read(c, var, "inner box", fa, va, fb, vb);
    if (gpubp_set_memory_selection(va, nd, mst, mct) != GPUBP_OK ||
        gpubp_set_memory_selection(vb, nd, mst, mct) != GPUBP_OK) {
        diff(c, var, "step %zu: set_memory_selection", s);
        return;
    }
    same_read(c, var, "inner box in a larger buffer", fa, va, fb, vb);
    gpubp_set_memory_selection(va, 0, NULL, NULL);
    gpubp_set_memory_selection(vb, 0, NULL, NULL);
}

/* The variable's description; 0 when the two differ (reported). */
static int same_var_head(cmp *c, const char *var, gpubp_variable *va, gpubp_variable *vb,
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
        diff(c, var, "type %d/%d, kind %d/%d, ndims %zu/%zu, steps %zu/%zu", (int)*t, (int)tb,
             (int)*k, (int)kb, *nd, ndb, *ns, nsb);
        return 0;
    }
    return 1;
}

static void same_var_random(cmp *c, gpubp_file *fa, gpubp_file *fb, const char *var)
{
    gpubp_variable *va = NULL, *vb = NULL;
    if (gpubp_inquire_variable(&va, fa, var) != GPUBP_OK || gpubp_inquire_variable(&vb, fb, var) != GPUBP_OK) {
        diff(c, var, "inquire");
        return;
    }
    gpubp_type t;
    gpubp_shape_kind k;
    size_t nd, ns;
    if (!same_var_head(c, var, va, vb, &t, &k, &nd, &ns)) return;
    int str = t == GPUBP_TYPE_STRING;
    /* every step at once: min/max, and the values of a step range */
    gpubp_set_step_selection(va, 0, ns);
    gpubp_set_step_selection(vb, 0, ns);
    same_minmax(c, var, "all steps", va, vb, t, k);
    for (size_t s = 0; s < ns; s++) {
        size_t da = 0, db = 0;
        if (gpubp_variable_dataset_step(va, s, &da) != GPUBP_OK ||
            gpubp_variable_dataset_step(vb, s, &db) != GPUBP_OK || da != db)
            diff(c, var, "step %zu: dataset step %zu / %zu", s, da, db);
        gpubp_set_step_selection(va, s, 1);
        gpubp_set_step_selection(vb, s, 1);
        same_minmax(c, var, "one step", va, vb, t, k);
        char what[64];
        snprintf(what, sizeof what, "step %zu", s);
        if (k == GPUBP_SHAPE_GLOBAL_ARRAY) same_boxes(c, var, s, va, vb, fa, fb, nd);
        else if (k == GPUBP_SHAPE_GLOBAL_VALUE || k == GPUBP_SHAPE_LOCAL_VALUE)
            same_read(c, var, what, fa, va, fb, vb);
        same_blocks(c, var, s, va, vb, fa, fb, t, k, nd);
    }
    /* a step range of a fixed-shape global array or of values: every step in one get */
    if (!str && (k == GPUBP_SHAPE_GLOBAL_VALUE || k == GPUBP_SHAPE_GLOBAL_ARRAY) && ns > 1) {
        gpubp_inquire_variable(&va, fa, var);
        gpubp_inquire_variable(&vb, fb, var);
        gpubp_set_step_selection(va, 0, ns);
        gpubp_set_step_selection(vb, 0, ns);
        size_t n1 = 0, n2 = 0;
        int fixed = gpubp_selection_size(va, &n1) == GPUBP_OK && gpubp_selection_size(vb, &n2) == GPUBP_OK;
        if (fixed) same_read(c, var, "all steps in one get", fa, va, fb, vb);
    }
}

static void same_attrs(cmp *c, gpubp_file *fa, gpubp_file *fb)
{
    size_t na = 0, nb = 0;
    const char *const *la = NULL, *const *lb = NULL;
    gpubp_available_attributes(fa, &na, &la);
    gpubp_available_attributes(fb, &nb, &lb);
    if (na != nb) {
        diff(c, "-", "%zu / %zu attributes", na, nb);
        return;
    }
    for (size_t i = 0; i < na; i++) {
        const char *name = la[i];
        if (strcmp(la[i], lb[i])) diff(c, name, "attribute name differs from %s", lb[i]);
        gpubp_type ta = GPUBP_TYPE_INT8, tb = GPUBP_TYPE_INT8;
        size_t ca = 0, cb = 0;
        int aa = -1, ab = -1;
        if (gpubp_inquire_attribute(fa, name, &ta, &ca, &aa) != GPUBP_OK ||
            gpubp_inquire_attribute(fb, name, &tb, &cb, &ab) != GPUBP_OK || ta != tb || ca != cb ||
            aa != ab) {
            diff(c, name, "attribute type %d/%d, count %zu/%zu, array %d/%d", (int)ta, (int)tb, ca,
                 cb, aa, ab);
            continue;
        }
        if (ta == GPUBP_TYPE_STRING) {
            for (size_t j = 0; j < ca; j++) {
                const char *sa = NULL, *sb = NULL;
                gpubp_attribute_string(fa, name, j, &sa);
                gpubp_attribute_string(fb, name, j, &sb);
                if (!sa || !sb || strcmp(sa, sb)) diff(c, name, "string %zu differs", j);
            }
            continue;
        }
        size_t n = ca * gpubp_type_size(ta);
        unsigned char *a = calloc(n + 1, 1), *b = calloc(n + 1, 1);
        if (gpubp_attribute_data(fa, name, a) != GPUBP_OK || gpubp_attribute_data(fb, name, b) != GPUBP_OK ||
            memcmp(a, b, n))
            diff(c, name, "attribute values differ");
        free(a);
        free(b);
    }
}

/* The variable names of both files (borrowed lists copied); NULL when they differ. */
static char **same_names(cmp *c, gpubp_file *fa, gpubp_file *fb, size_t *n)
{
    size_t na = 0, nb = 0;
    const char *const *la = NULL, *const *lb = NULL;
    gpubp_available_variables(fa, &na, &la);
    gpubp_available_variables(fb, &nb, &lb);
    if (na != nb || na == 0) {
        diff(c, "-", "%zu / %zu variables", na, nb);
        return NULL;
    }
    char **names = calloc(na, sizeof *names);
    for (size_t i = 0; i < na; i++) {
        if (strcmp(la[i], lb[i])) diff(c, la[i], "name differs from %s", lb[i]);
        names[i] = strdup(la[i]);
    }
    *n = na;
    return names;
}

static void free_names(char **names, size_t n)
{
    for (size_t i = 0; names && i < n; i++) free(names[i]);
    free(names);
}

static void compare_random(cmp *c)
{
    gpubp_file *fa = NULL, *fb = NULL;
    TS_OK(gpubp_open(&fa, c->p->a, GPUBP_MODE_READ_RANDOM_ACCESS, NULL));
    TS_OK(gpubp_open(&fb, c->p->b, GPUBP_MODE_READ_RANDOM_ACCESS, NULL));
    size_t sa = 0, sb = 0;
    TS_OK(gpubp_steps(fa, &sa));
    TS_OK(gpubp_steps(fb, &sb));
    if (sa != sb || sa == 0) diff(c, "-", "%zu / %zu steps", sa, sb);
    size_t n = 0;
    char **names = same_names(c, fa, fb, &n);
    for (size_t i = 0; names && i < n; i++) same_var_random(c, fa, fb, names[i]);
    free_names(names, n);
    same_attrs(c, fa, fb);
    TS_OK(gpubp_close(fa));
    TS_OK(gpubp_close(fb));
}

static void compare_steps(cmp *c)
{
    gpubp_file *fa = NULL, *fb = NULL;
    TS_OK(gpubp_open(&fa, c->p->a, GPUBP_MODE_READ, NULL));
    TS_OK(gpubp_open(&fb, c->p->b, GPUBP_MODE_READ, NULL));
    size_t steps = 0;
    int ra, rb;
    while ((ra = gpubp_begin_step(fa)) == GPUBP_OK) {
        rb = gpubp_begin_step(fb);
        if (rb != GPUBP_OK) {
            diff(c, "-", "step %zu: BP5 begin_step %d", steps, rb);
            break;
        }
        size_t ca = 0, cb = 0;
        gpubp_current_step(fa, &ca);
        gpubp_current_step(fb, &cb);
        if (ca != cb) diff(c, "-", "current step %zu / %zu", ca, cb);
        size_t n = 0;
        char **names = same_names(c, fa, fb, &n);
        for (size_t i = 0; names && i < n; i++) {
            gpubp_variable *va = NULL, *vb = NULL;
            if (gpubp_inquire_variable(&va, fa, names[i]) != GPUBP_OK ||
                gpubp_inquire_variable(&vb, fb, names[i]) != GPUBP_OK) {
                diff(c, names[i], "step %zu: inquire", steps);
                continue;
            }
            gpubp_type t;
            gpubp_shape_kind k;
            size_t nd, ns;
            if (!same_var_head(c, names[i], va, vb, &t, &k, &nd, &ns)) continue;
            same_minmax(c, names[i], "open step", va, vb, t, k);
            if (k == GPUBP_SHAPE_GLOBAL_ARRAY) same_boxes(c, names[i], steps, va, vb, fa, fb, nd);
            else if (k == GPUBP_SHAPE_GLOBAL_VALUE || k == GPUBP_SHAPE_LOCAL_VALUE) {
                char what[64];
                snprintf(what, sizeof what, "step %zu", steps);
                same_read(c, names[i], what, fa, va, fb, vb);
            }
            same_blocks(c, names[i], 0, va, vb, fa, fb, t, k, nd);
        }
        free_names(names, n);
        same_attrs(c, fa, fb);
        TS_OK(gpubp_end_step(fa));
        TS_OK(gpubp_end_step(fb));
        steps++;
    }
    if (ra != GPUBP_END_OF_STREAM) diff(c, "-", "BP4 begin_step %d after %zu steps", ra, steps);
    rb = gpubp_begin_step(fb);
    if (rb != GPUBP_END_OF_STREAM) diff(c, "-", "BP5 begin_step %d after %zu steps", rb, steps);
    if (steps == 0) diff(c, "-", "no step");
    TS_OK(gpubp_close(fa));
    TS_OK(gpubp_close(fb));
}

static void test_pair(void **state)
{
    const pair *p = *state;
    cmp c = {p, 0, 0};
    compare_random(&c);
    compare_steps(&c);
    if (c.complex_minmax) print_message("%s: %d complex min/max checks (BP5 has none)\n", p->name,
                                        c.complex_minmax);
    assert_int_equal(c.diffs, 0);
    /* make_corpus's types.bp has complex arrays: the documented difference is exercised */
    if (strstr(p->name, "BP5/types.bp")) assert_true(c.complex_minmax > 0);
}

int main(void)
{
    static const char *const sets[][2] = {{"BP4", "BP5"}, {"codecs/BP4", "codecs/BP5"},
                                          {"gpu/BP4", "gpu/BP5"}};
    struct CMUnitTest *tests = NULL;
    size_t n = 0;
    for (size_t d = 0; d < sizeof sets / sizeof sets[0]; d++) {
        char dir4[4096], dir5[4096];
        snprintf(dir4, sizeof dir4, "%s/%s", ts_golden_dir(), sets[d][0]);
        snprintf(dir5, sizeof dir5, "%s/%s", ts_golden_dir(), sets[d][1]);
        size_t nn = 0;
        char **names = ts_list_datasets(dir5, &nn);
        if (!names) {
            fprintf(stderr, "cannot open %s\n", dir5);
            return 1;
        }
        for (size_t i = 0; i < nn; i++) {
            char twin[4400];
            snprintf(twin, sizeof twin, "%s/%s", dir4, names[i]);
            if (!ts_exists(twin)) {
                free(names[i]);
                continue;
            }
            pair *p = calloc(1, sizeof *p);
            snprintf(p->a, sizeof p->a, "%s/%s", dir4, names[i]);
            snprintf(p->b, sizeof p->b, "%s/%s", dir5, names[i]);
            snprintf(p->name, sizeof p->name, "%s/%s", sets[d][1], names[i]);
            tests = realloc(tests, (n + 1) * sizeof *tests);
            memset(&tests[n], 0, sizeof tests[n]);
            tests[n].name = p->name;
            tests[n].test_func = test_pair;
            tests[n].initial_state = p;
            n++;
            free(names[i]);
        }
        free(names);
    }
    /* 6 corpus pairs, 15 codec pairs, the GPU example */
    if (n < 6 + 15 + 1) {
        fprintf(stderr, "only %zu BP4/BP5 pairs under %s\n", n, ts_golden_dir());
        return 1;
    }
    int rc = _cmocka_run_group_tests("bp4_bp5_same", tests, n, NULL, NULL);
    for (size_t i = 0; i < n; i++) free(tests[i].initial_state);
    free(tests);
    return rc;
}
