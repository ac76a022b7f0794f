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
 *   own blocks hold (10 rows), as bpls -dD reads them; a box past a step's own rows fails.
 * - joined arrays whose shape changes (tests/golden/joined): BP5's one random-access shape (the
 *   last step's, or the first writer's of the first step where the variable is not in the last
 *   step), BP4's per-step shapes, READ mode's per-step shapes, and dataset steps of BP5.
 * - ADIOS2's null operator in BP4 (tests/golden/bp4wheel): the values read back. */
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

/* A variable's shape (file order, 2 dims) at its step k in random access, and its dataset step */
static void shape_at(gpubp_variable *v, size_t k, size_t rows, size_t cols, size_t dataset_step)
{
    size_t d[2] = {0, 0}, ds = 99;
    TS_OK(gpubp_set_step_selection(v, k, 1));
    TS_OK(gpubp_variable_shape(v, GPUBP_MEM_HOST, d));
    assert_int_equal(d[0], rows);
    assert_int_equal(d[1], cols);
    TS_OK(gpubp_variable_dataset_step(v, k, &ds));
    assert_int_equal(ds, dataset_step);
}

/* tests/golden/joined (gen_joined.py, checked against the ADIOS2 2.12.1 wheel's reads): BP5
 * reports one joined shape in every step, the last dataset step's where the variable is in it,
 * else its first writer's shape of its first step (ADIOS2 cleared the running one at the last
 * step); BP4 reports each step's own; dataset steps count every step of the file (BP5 too) */
static void test_joined_shapes(void **state)
{
    (void)state;
    gpubp_file *f = au_open(gold("joined/joined_bp5.bp"), GPUBP_MODE_READ_RANDOM_ACCESS);
    gpubp_variable *ends = au_inq(f, "ends"), *gone = au_inq(f, "gone"), *late = au_inq(f, "late");
    for (size_t k = 0; k < 3; k++) shape_at(ends, k, 2, 2, k);
    for (size_t k = 0; k < 2; k++) shape_at(gone, k, 7, 2, k);
    shape_at(late, 0, 3, 2, 1);
    shape_at(late, 1, 3, 2, 3);
    /* gone's step 1 holds one row (100, 101): the rest of the shape is left as it was */
    double got[14];
    for (int i = 0; i < 14; i++) got[i] = -1.0;
    TS_OK(gpubp_set_step_selection(gone, 1, 1));
    TS_OK(gpubp_get(f, gone, got, GPUBP_SYNC));
    assert_true(got[0] == 100.0 && got[1] == 101.0 && got[2] == -1.0 && got[13] == -1.0);
    /* late's step 0 holds 4 rows, more than the shape: a box may still cover them */
    size_t start[2] = {0, 0}, count[2] = {4, 2};
    TS_OK(gpubp_set_step_selection(late, 0, 1));
    TS_OK(gpubp_set_selection(late, 2, start, count));
    TS_OK(gpubp_get(f, late, got, GPUBP_SYNC));
    for (int i = 0; i < 8; i++) assert_true(got[i] == 2100.0 + i);
    TS_OK(gpubp_close(f));

    f = au_open(gold("joined/joined_bp4.bp"), GPUBP_MODE_READ_RANDOM_ACCESS);
    gpubp_variable *grows = au_inq(f, "grows"), *gap = au_inq(f, "gap");
    shape_at(grows, 0, 2, 2, 0);
    shape_at(grows, 1, 5, 2, 1);
    shape_at(grows, 2, 3, 2, 2);
    shape_at(gap, 0, 4, 2, 0);
    shape_at(gap, 1, 2, 2, 2);
    TS_OK(gpubp_set_step_selection(gap, 1, 1));
    TS_OK(gpubp_get(f, gap, got, GPUBP_SYNC));
    for (int i = 0; i < 4; i++) assert_true(got[i] == 1200.0 + i);
    TS_OK(gpubp_close(f));

    /* the joined dimension; other kinds have none. cols is joined along its second dimension:
     * {2, 6} in every step as ADIOS2 reports it, step 2's blocks start at columns 0, 1, 3 and
     * step 0 holds rows 0 1 10 / 2 3 11 (the 2.12.1 wheel's reads) */
    size_t jd = 9;
    f = au_open(gold("joined/cols_bp5.bp"), GPUBP_MODE_READ_RANDOM_ACCESS);
    gpubp_variable *cols = au_inq(f, "cols");
    TS_OK(gpubp_variable_joined_dim(cols, &jd));
    assert_int_equal(jd, 1);
    for (size_t k = 0; k < 3; k++) shape_at(cols, k, 2, 6, k);
    size_t bs[2], bc[2];
    const size_t col0[3] = {0, 1, 3}, ncol[3] = {1, 2, 3};
    for (size_t j = 0; j < 3; j++) {
        TS_OK(gpubp_variable_block_info(cols, 2, j, bs, bc, NULL, NULL));
        assert_true(bs[0] == 0 && bs[1] == col0[j] && bc[0] == 2 && bc[1] == ncol[j]);
    }
    const double want0[6] = {0, 1, 10, 2, 3, 11};
    size_t c0[2] = {0, 0}, n0[2] = {2, 3};
    TS_OK(gpubp_set_step_selection(cols, 0, 1));
    TS_OK(gpubp_set_selection(cols, 2, c0, n0));
    TS_OK(gpubp_get(f, cols, got, GPUBP_SYNC));
    for (int i = 0; i < 6; i++) assert_true(got[i] == want0[i]);
    TS_OK(gpubp_close(f));
    f = au_open(gold("bp5/mpi/random_s118.bp"), GPUBP_MODE_READ_RANDOM_ACCESS);
    TS_OK(gpubp_variable_joined_dim(au_inq(f, "ja4_double"), &jd));
    assert_int_equal(jd, 0);
    TS_ERR(gpubp_variable_joined_dim(au_inq(f, "lv3_uint8"), &jd), GPUBP_ERR_INVALID_ARG);
    TS_ERR(gpubp_variable_joined_dim(au_inq(f, "ja4_double"), NULL), GPUBP_ERR_INVALID_ARG);
    TS_OK(gpubp_close(f));

    /* BP5 dataset steps of a sparse variable (every third step) and of one that starts late */
    f = au_open(gold("bp5/wheel/manysteps.bp"), GPUBP_MODE_READ_RANDOM_ACCESS);
    size_t ds = 0;
    TS_OK(gpubp_variable_dataset_step(au_inq(f, "sparse"), 5, &ds));
    assert_int_equal(ds, 15);
    TS_OK(gpubp_variable_dataset_step(au_inq(f, "late"), 0, &ds));
    assert_int_equal(ds, 10);
    TS_OK(gpubp_close(f));
}

/* READ mode: each step's own joined shape (ADIOS2's streaming reader too) */
static void test_joined_read_mode(void **state)
{
    (void)state;
    gpubp_file *f = au_open(gold("joined/joined_bp5.bp"), GPUBP_MODE_READ);
    const char *names[] = {"ends", "gone", "late"};
    const size_t rows[4][3] = {{2, 7, 0}, {5, 1, 4}, {3, 0, 0}, {0, 0, 3}}; /* 0: absent */
    for (size_t s = 0; s < 4; s++) {
        TS_OK(gpubp_begin_step(f));
        for (size_t i = 0; i < 3; i++) {
            gpubp_variable *v = NULL;
            int rc = gpubp_inquire_variable(&v, f, names[i]);
            if (!rows[s][i]) {
                assert_int_equal(rc, GPUBP_ERR_NOT_FOUND);
                continue;
            }
            TS_OK(rc);
            size_t d[2];
            TS_OK(gpubp_variable_shape(v, GPUBP_MEM_HOST, d));
            assert_int_equal(d[0], rows[s][i]);
            assert_int_equal(d[1], 2);
        }
        TS_OK(gpubp_end_step(f));
    }
    TS_OK(gpubp_close(f));
}

/* ADIOS2's null operator in a BP4 file (tests/golden/bp4wheel/nullop_bp4.bp): the operator buffer
 * holds the raw bytes after its header; ADIOS2 2.12.1 cannot read them back, libgpubp does */
static void test_bp4_null_operator(void **state)
{
    (void)state;
    gpubp_file *f = au_open(gold("bp4wheel/nullop_bp4.bp"), GPUBP_MODE_READ_RANDOM_ACCESS);
    gpubp_variable *x = au_inq(f, "x"), *y = au_inq(f, "y");
    int32_t xs[8];
    double ys[3];
    for (size_t s = 0; s < 2; s++) {
        TS_OK(gpubp_set_step_selection(x, s, 1));
        TS_OK(gpubp_get(f, x, xs, GPUBP_SYNC));
        for (int i = 0; i < 8; i++)
            assert_int_equal(xs[i], (int32_t)(100 * s) + 10 * (i / 4) + i % 4);
        TS_OK(gpubp_set_step_selection(y, s, 1));
        TS_OK(gpubp_set_block_selection(y, 0));
        TS_OK(gpubp_get(f, y, ys, GPUBP_SYNC));
        for (int i = 0; i < 3; i++) assert_true(ys[i] == (double)s + i / 2.0);
    }
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
        cmocka_unit_test(test_joined_shapes),
        cmocka_unit_test(test_joined_read_mode),
        cmocka_unit_test(test_bp4_null_operator),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
