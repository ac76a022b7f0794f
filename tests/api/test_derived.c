/* ADIOS2 BP5 derived variables (IO::DefineDerivedVariable): tests/golden/derived, written by
 * tests/golden/generators/make_derived.cpp with an ADIOS2 built with derived variables. Those
 * stored with their data read as any array; those stored without (StatsOnly: metadata and
 * min/max; ExpressionString: the expression only) list with their shape, steps, blocks and
 * statistics, give their expression, and a read of them is NOT_FOUND naming it (libgpubp
 * evaluates no expression). Values computed here from the generator's formulas. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "support/api_util.h"

static const char *gold(void)
{
    static char p[4300];
    snprintf(p, sizeof p, "%s/derived/derived.bp", ts_golden_dir());
    return p;
}

static void test_derived(void **state)
{
    (void)state;
    static const gpubp_mode modes[] = {GPUBP_MODE_READ_RANDOM_ACCESS, GPUBP_MODE_READ};
    for (int m = 0; m < 2; m++) {
        gpubp_file *f = au_open(gold(), modes[m]);
        for (int s = 0; s < (m ? 3 : 1); s++) {
            if (m) TS_OK(gpubp_begin_step(f));
            size_t nv = 0;
            const char *const *names;
            TS_OK(gpubp_available_variables(f, &nv, &names));
            assert_int_equal(nv, 11);
            /* stored with its data: x + y */
            gpubp_variable *st = au_inq(f, "derived/store");
            const char *expr = "x";
            TS_OK(gpubp_variable_expression(st, &expr));
            assert_null(expr);
            double d[6];
            if (!m) TS_OK(gpubp_set_step_selection(st, 2, 1));
            TS_OK(gpubp_get(f, st, d, GPUBP_SYNC));
            int step = m ? s : 2;
            for (int i = 0; i < 6; i++) assert_true(d[i] == (i + step) + (2.0 * i - 3));
            /* statistics only: magnitude(x, y), min/max from the metadata */
            gpubp_variable *ms = au_inq(f, "derived/stats");
            TS_OK(gpubp_variable_expression(ms, &expr));
            assert_string_equal(expr, "a = sim/x\nb = sim/y\nmagnitude(a,b)");
            double mn = 0, mx = 0;
            TS_OK(gpubp_variable_minmax(ms, &mn, &mx));
            if (!m) { /* every step: magnitudes of (i + s, 2i - 3) over i < 6, s < 3 */
                assert_true(fabs(mn - sqrt(2.0)) < 1e-12);
                assert_true(fabs(mx - sqrt(49.0 + 49.0)) < 1e-12);
            }
            TS_ERR(gpubp_get(f, ms, d, GPUBP_SYNC), GPUBP_ERR_NOT_FOUND);
            assert_non_null(strstr(gpubp_last_error(), "magnitude(a,b)"));
            /* the expression only: no statistics */
            gpubp_variable *me = au_inq(f, "mesh/sum");
            TS_OK(gpubp_variable_expression(me, &expr));
            assert_string_equal(expr, "a = mesh/u\nb = mesh/v\na+b");
            size_t nb = 0, dims[2];
            TS_OK(gpubp_variable_blocks(me, 0, &nb));
            assert_int_equal(nb, 2);
            TS_OK(gpubp_variable_shape(me, GPUBP_MEM_HOST, dims));
            assert_true(dims[0] == 4 && dims[1] == 3);
            int missing = 0;
            TS_OK(gpubp_variable_minmax_missing(me, &missing));
            assert_int_equal(missing, 1);
            double box[12];
            TS_ERR(gpubp_get(f, me, box, GPUBP_SYNC), GPUBP_ERR_NOT_FOUND);
            /* the inputs read as written */
            gpubp_variable *u = au_inq(f, "mesh/u");
            if (!m) TS_OK(gpubp_set_step_selection(u, 1, 1));
            TS_OK(gpubp_get(f, u, box, GPUBP_SYNC));
            step = m ? s : 1;
            for (int b = 0; b < 2; b++)
                for (int i = 0; i < 6; i++) assert_true(box[6 * b + i] == 10 * b + i - step);
            if (m) TS_OK(gpubp_end_step(f));
        }
        TS_OK(gpubp_close(f));
    }
    TS_ERR(gpubp_variable_expression(NULL, NULL), GPUBP_ERR_INVALID_ARG);
}

int main(void)
{
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_derived)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}
