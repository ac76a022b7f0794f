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
 *   count, array or not, values). Random access is support/pair_walk.h's ts_pair_random; the
 *   step-mode walk is here, through the same ts_pair_* pieces.
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
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "support/pair_walk.h"
#include "support/test_support.h"

typedef struct pair {
    char a[4300], b[4300]; /* BP4, BP5 */
    char name[300];
} pair;

/* Step mode: both files step by step, every variable of the open step as ts_pair_random walks a
 * step in random access, and the attributes. */
static void compare_steps(ts_pair *c, const pair *p)
{
    gpubp_file *fa = NULL, *fb = NULL;
    TS_OK(gpubp_open(&fa, p->a, GPUBP_MODE_READ, NULL));
    TS_OK(gpubp_open(&fb, p->b, GPUBP_MODE_READ, NULL));
    size_t steps = 0;
    int ra, rb;
    while ((ra = gpubp_begin_step(fa)) == GPUBP_OK) {
        rb = gpubp_begin_step(fb);
        if (rb != GPUBP_OK) {
            ts_pair_diff(c, "-", "step %zu: BP5 begin_step %d", steps, rb);
            break;
        }
        size_t ca = 0, cb = 0;
        gpubp_current_step(fa, &ca);
        gpubp_current_step(fb, &cb);
        if (ca != cb) ts_pair_diff(c, "-", "current step %zu / %zu", ca, cb);
        size_t n = 0;
        char **names = ts_pair_names(c, fa, fb, 0, &n);
        if (names && !n) ts_pair_diff(c, "-", "step %zu: no variables", steps);
        for (size_t i = 0; names && i < n; i++) {
            gpubp_variable *va = NULL, *vb = NULL;
            if (gpubp_inquire_variable(&va, fa, names[i]) != GPUBP_OK ||
                gpubp_inquire_variable(&vb, fb, names[i]) != GPUBP_OK) {
                ts_pair_diff(c, names[i], "step %zu: inquire", steps);
                continue;
            }
            gpubp_type t;
            gpubp_shape_kind k;
            size_t nd, ns;
            if (!ts_pair_head(c, names[i], va, vb, &t, &k, &nd, &ns)) continue;
            ts_pair_minmax(c, names[i], "open step", va, vb, t, k);
            if (k == GPUBP_SHAPE_GLOBAL_ARRAY) ts_pair_boxes(c, names[i], steps, fa, va, fb, vb, nd);
            else if (k == GPUBP_SHAPE_GLOBAL_VALUE || k == GPUBP_SHAPE_LOCAL_VALUE) {
                char what[64];
                snprintf(what, sizeof what, "step %zu", steps);
                ts_pair_read(c, names[i], what, fa, va, fb, vb);
            }
            ts_pair_blocks(c, names[i], 0, fa, va, fb, vb, t, k, nd);
        }
        ts_pair_free_names(names, n);
        ts_pair_attrs(c, fa, fb);
        TS_OK(gpubp_end_step(fa));
        TS_OK(gpubp_end_step(fb));
        steps++;
    }
    if (ra != GPUBP_END_OF_STREAM) ts_pair_diff(c, "-", "BP4 begin_step %d after %zu steps", ra, steps);
    rb = gpubp_begin_step(fb);
    if (rb != GPUBP_END_OF_STREAM) ts_pair_diff(c, "-", "BP5 begin_step %d after %zu steps", rb, steps);
    if (steps == 0) ts_pair_diff(c, "-", "no step");
    TS_OK(gpubp_close(fa));
    TS_OK(gpubp_close(fb));
}

static void test_pair(void **state)
{
    const pair *p = *state;
    ts_pair c = {p->name, 0, 1, 0};
    ts_pair_random(&c, p->a, p->b);
    compare_steps(&c, p);
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
