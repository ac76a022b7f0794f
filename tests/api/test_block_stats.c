/* What the reader's index knows of blocks beyond their geometry, on ADIOS2-written golden
 * datasets:
 * - gpubp_variable_minmax_missing (per variable "some block lacks min/max", filled by the BP4 and
 *   the BP5 index builders): BP4 written with StatsLevel=0 and with a step appended without
 *   statistics (tests/golden/nostats), BP5 without statistics (bp5/wheel/nostats.bp), and
 *   datasets with statistics everywhere, including a BP5 block of no elements (its writer's
 *   sentinels are statistics); random access and READ mode; errors.
 * - gpubp_variable_block_writer on BP5 datasets written by 4 MPI ranks (tests/golden/bp5/mpi):
 *   every block names the rank that wrote it, in writer order, also after an append with 2 ranks
 *   (mw_append) and for a variable only odd ranks write; BP4 datasets and bad arguments get
 *   their statuses.
 * - box selections of mw_append's joined array j: every step reports the last step's joined
 *   shape {3, 2} (ADIOS2's random-access quirk), and a box may still cover what a 4-writer step's
 *   own blocks hold (10 rows), as bpls -dD reads them; a box past a step's own rows fails. */
#include <stdio.h>
#include <string.h>

#include "support/api_util.h"

static const char *gold(const char *rel)
{
    static char p[2][4300];
    static int k;
    k ^= 1;
    snprintf(p[k], sizeof p[k], "%s/%s", ts_golden_dir(), rel);
    return p[k];
}

static int missing_of(gpubp_file *f, const char *name)
{
    int m = -1;
    TS_OK(gpubp_variable_minmax_missing(au_inq(f, name), &m));
    assert_true(m == 0 || m == 1);
    return m;
}

/* BP4, step 0 with statistics and step 1 appended without: the arrays lack some, values never */
static void test_bp4_mixed(void **state)
{
    (void)state;
    gpubp_file *f = au_open(gold("nostats/mixed.bp"), GPUBP_MODE_READ_RANDOM_ACCESS);
    const char *arrays[] = {"a_int16", "a_int32", "a_uint32", "a_float64", "g2", "loc"};
    for (size_t i = 0; i < sizeof arrays / sizeof *arrays; i++)
        assert_int_equal(missing_of(f, arrays[i]), 1);
    assert_int_equal(missing_of(f, "early"), 0); /* step 0 only: it has them */
    assert_int_equal(missing_of(f, "sc"), 0);
    assert_int_equal(missing_of(f, "lv"), 0);
    /* the min/max of the blocks that have them: step 0's (bpls folds 0 in for the others) */
    int32_t mn = 0, mx = 0;
    TS_OK(gpubp_variable_minmax(au_inq(f, "a_int32"), &mn, &mx));
    assert_int_equal(mn, -4);
    assert_int_equal(mx, 5);
    uint32_t un = 0, ux = 0;
    TS_OK(gpubp_variable_minmax(au_inq(f, "a_uint32"), &un, &ux));
    assert_int_equal(un, 1);
    assert_int_equal(ux, 5);
    TS_OK(gpubp_close(f));
}

/* READ mode: the current step only */
static void test_bp4_mixed_read_mode(void **state)
{
    (void)state;
    gpubp_file *f = au_open(gold("nostats/mixed.bp"), GPUBP_MODE_READ);
    for (int s = 0; s < 2; s++) {
        TS_OK(gpubp_begin_step(f));
        assert_int_equal(missing_of(f, "a_int32"), s);
        assert_int_equal(missing_of(f, "sc"), 0);
        TS_OK(gpubp_end_step(f));
    }
    TS_OK(gpubp_close(f));
}

/* BP4 with StatsLevel=0: every array lacks them and has no min/max at all */
static void test_bp4_nostats(void **state)
{
    (void)state;
    gpubp_file *f = au_open(gold("nostats/nostats.bp"), GPUBP_MODE_READ_RANDOM_ACCESS);
    assert_int_equal(missing_of(f, "a_int32"), 1);
    assert_int_equal(missing_of(f, "g2"), 1);
    assert_int_equal(missing_of(f, "sc"), 0);
    int32_t mn, mx;
    TS_ERR(gpubp_variable_minmax(au_inq(f, "a_int32"), &mn, &mx), GPUBP_ERR_NOT_FOUND);
    TS_OK(gpubp_close(f));
}

/* BP5 without statistics, and BP5/BP4 with them everywhere */
static void test_bp5_and_complete(void **state)
{
    (void)state;
    gpubp_file *f = au_open(gold("bp5/wheel/nostats.bp"), GPUBP_MODE_READ_RANDOM_ACCESS);
    assert_int_equal(missing_of(f, "x"), 1);
    assert_int_equal(missing_of(f, "l"), 1);
    assert_int_equal(missing_of(f, "sc"), 0);
    TS_OK(gpubp_close(f));
    const char *complete[] = {"BP5/steps_2d.bp", "BP4/steps_2d.bp"};
    for (int i = 0; i < 2; i++) {
        f = au_open(gold(complete[i]), GPUBP_MODE_READ_RANDOM_ACCESS);
        assert_int_equal(missing_of(f, "temperature"), 0);
        assert_int_equal(missing_of(f, "physics/pressure"), 0);
        TS_OK(gpubp_close(f));
    }
    /* a local array with a block of no elements: ADIOS2 stored sentinels for it */
    f = au_open(gold("bp5/wheel/shapes.bp"), GPUBP_MODE_READ_RANDOM_ACCESS);
    assert_int_equal(missing_of(f, "local"), 0);
    TS_OK(gpubp_close(f));
}

static void test_errors(void **state)
{
    (void)state;
    int m = 7;
    TS_ERR(gpubp_variable_minmax_missing(NULL, &m), GPUBP_ERR_INVALID_ARG);
    gpubp_file *f = au_open(gold("nostats/mixed.bp"), GPUBP_MODE_READ_RANDOM_ACCESS);
    TS_ERR(gpubp_variable_minmax_missing(au_inq(f, "a_int32"), NULL), GPUBP_ERR_INVALID_ARG);
    TS_ERR(gpubp_variable_minmax_missing(au_inq(f, "str"), &m), GPUBP_ERR_NOT_SUPPORTED);
    TS_OK(gpubp_close(f));
    gpubp_file *w = au_open(ts_path("mm_missing_write.bp"), GPUBP_MODE_WRITE);
    gpubp_variable *v = ts_define(w, "x", GPUBP_TYPE_INT32, 0, NULL, NULL);
    TS_ERR(gpubp_variable_minmax_missing(v, &m), GPUBP_ERR_WRONG_MODE);
    TS_OK(gpubp_close(w));
    assert_int_equal(m, 7); /* untouched by the failures */
}

static size_t writer_of(gpubp_variable *v, size_t step, size_t block)
{
    size_t w = 999;
    TS_OK(gpubp_variable_block_writer(v, step, block, &w));
    return w;
}

static void test_mw_append(void **state)
{
    (void)state;
    gpubp_file *f = au_open(gold("bp5/mpi/mw_append.bp"), GPUBP_MODE_READ_RANDOM_ACCESS);
    gpubp_variable *g = au_inq(f, "g"), *odd = au_inq(f, "odd");
    for (size_t s = 0; s < 4; s++) {
        size_t n = 0;
        TS_OK(gpubp_variable_blocks(g, s, &n));
        assert_int_equal(n, s < 2 ? 4 : 2); /* 4 writers, then 2 appended */
        for (size_t b = 0; b < n; b++) assert_int_equal(writer_of(g, s, b), b);
        /* a local value: block b sits at the writer's index, {w} */
        TS_OK(gpubp_variable_blocks(odd, s, &n));
        assert_int_equal(n, s < 2 ? 2 : 1);
        for (size_t b = 0; b < n; b++) {
            size_t start[1], count[1];
            TS_OK(gpubp_variable_block_info(odd, s, b, start, count, NULL, NULL));
            assert_int_equal(writer_of(odd, s, b), 2 * b + 1);
            assert_int_equal(writer_of(odd, s, b), start[0]);
        }
    }
    size_t w = 7;
    TS_ERR(gpubp_variable_block_writer(g, 2, 2, &w), GPUBP_ERR_INVALID_SELECTION);
    TS_ERR(gpubp_variable_block_writer(g, 4, 0, &w), GPUBP_ERR_INVALID_STEP);
    TS_ERR(gpubp_variable_block_writer(g, 0, 0, NULL), GPUBP_ERR_INVALID_ARG);
    TS_ERR(gpubp_variable_block_writer(NULL, 0, 0, &w), GPUBP_ERR_INVALID_ARG);
    assert_int_equal(w, 7);
    TS_OK(gpubp_close(f));
}

/* j: writer w puts w + 1 rows of 2 floats, 100 w + i (+ 0.5 in odd steps); 4 writers in steps 0
 * and 1 (10 rows), 2 in the appended steps 2 and 3 (3 rows, the shape every step reports) */
static void test_mw_append_joined_box(void **state)
{
    (void)state;
    gpubp_file *f = au_open(gold("bp5/mpi/mw_append.bp"), GPUBP_MODE_READ_RANDOM_ACCESS);
    gpubp_variable *j = au_inq(f, "j");
    size_t shape[2], start[2] = {6, 0}, count[2] = {4, 2};
    float got[20], want[20];
    TS_OK(gpubp_set_step_selection(j, 0, 1));
    TS_OK(gpubp_variable_shape(j, GPUBP_MEM_HOST, shape));
    assert_int_equal(shape[0], 3);
    assert_int_equal(shape[1], 2);
    /* block 3 of step 0, rows 6..9: outside the reported shape, inside the step's blocks */
    TS_OK(gpubp_set_selection(j, 2, start, count));
    TS_OK(gpubp_get(f, j, got, GPUBP_SYNC));
    for (int i = 0; i < 8; i++) assert_true(got[i] == (float)(300 + i));
    /* the same through a block selection */
    memset(got, 0, sizeof got);
    TS_OK(gpubp_set_block_selection(j, 3));
    TS_OK(gpubp_get(f, j, got, GPUBP_SYNC));
    for (int i = 0; i < 8; i++) assert_true(got[i] == (float)(300 + i));
    /* all 10 rows of step 1 */
    start[0] = 0;
    count[0] = 10;
    TS_OK(gpubp_set_step_selection(j, 1, 1));
    TS_OK(gpubp_set_selection(j, 2, start, count));
    TS_OK(gpubp_get(f, j, got, GPUBP_SYNC));
    for (int w = 0, k = 0; w < 4; w++)
        for (int i = 0; i < 2 * (w + 1); i++) want[k++] = (float)(100 * w + i) + 0.5f;
    assert_memory_equal(got, want, sizeof got);
    /* past the step's own rows; an appended step's own rows are the shape's */
    start[0] = 9;
    count[0] = 2;
    TS_OK(gpubp_set_selection(j, 2, start, count));
    TS_ERR(gpubp_get(f, j, got, GPUBP_SYNC), GPUBP_ERR_INVALID_SELECTION);
    start[0] = 2;
    count[0] = 2;
    TS_OK(gpubp_set_step_selection(j, 2, 1));
    TS_OK(gpubp_set_selection(j, 2, start, count));
    TS_ERR(gpubp_get(f, j, got, GPUBP_SYNC), GPUBP_ERR_INVALID_SELECTION);
    count[0] = 1;
    TS_OK(gpubp_set_selection(j, 2, start, count));
    TS_OK(gpubp_get(f, j, got, GPUBP_SYNC));
    assert_true(got[0] == 102.0f && got[1] == 103.0f);
    TS_OK(gpubp_close(f));
}

/* READ mode: the current step's blocks */
static void test_read_mode(void **state)
{
    (void)state;
    gpubp_file *f = au_open(gold("bp5/mpi/mw_everyone.bp"), GPUBP_MODE_READ);
    TS_OK(gpubp_begin_step(f));
    gpubp_variable *g = au_inq(f, "g");
    size_t n = 0;
    TS_OK(gpubp_variable_blocks(g, 0, &n));
    assert_int_equal(n, 4);
    for (size_t b = 0; b < n; b++) assert_int_equal(writer_of(g, 0, b), b);
    TS_OK(gpubp_end_step(f));
    TS_OK(gpubp_close(f));
}

static void test_bp4_not_supported(void **state)
{
    (void)state;
    gpubp_file *f = au_open(gold("BP4/steps_2d.bp"), GPUBP_MODE_READ_RANDOM_ACCESS);
    size_t w = 7;
    TS_ERR(gpubp_variable_block_writer(au_inq(f, "temperature"), 0, 0, &w),
           GPUBP_ERR_NOT_SUPPORTED);
    assert_int_equal(w, 7);
    TS_OK(gpubp_close(f));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_bp4_mixed),
        cmocka_unit_test(test_bp4_mixed_read_mode),
        cmocka_unit_test(test_bp4_nostats),
        cmocka_unit_test(test_bp5_and_complete),
        cmocka_unit_test(test_errors),
        cmocka_unit_test(test_mw_append),
        cmocka_unit_test(test_mw_append_joined_box),
        cmocka_unit_test(test_read_mode),
        cmocka_unit_test(test_bp4_not_supported),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
