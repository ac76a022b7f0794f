/* Files written by OLDER ADIOS2 releases (tests/golden/old/<release>, written by the PyPI wheels
 * of those releases with tests/golden/generators/gen_old_releases.py; docs/interop.md, "Files
 * written by older ADIOS2 releases"). Where such a file differs from what 2.12 writes, it must
 * read as ADIOS2 2.12 reads it:
 * - 2.9.0, BP5 (stats_bp5): arrays of char and complex carry a MinMax field holding the
 *   writer's initial values (char 0xFF / 0x00, complex zeros: 2.9 computed no statistics of
 *   them but wrote the field for every type; 2.10 and later write none). They have no min/max,
 *   as in 2.12's files; a float array's block of no elements keeps its sentinels.
 * - 2.10.0, BP5 (chunk_nullop_bp5, BufferChunkSize=128): 2.10.0's chunk buffer recorded a null
 *   operator block 24 bytes before where it wrote it; ADIOS2 2.10.0 and 2.12.1 both fail reading
 *   it (they take the zeros there for a blosc header). libgpubp reports GPUBP_ERR_FORMAT naming
 *   the block, never other bytes as its values; the variable before it reads. */
#include <float.h>
#include <stdio.h>
#include <string.h>

#include "support/api_util.h"

static const char *gold(const char *rel)
{
    static char p[4300];
    snprintf(p, sizeof p, "%s/old/%s", ts_golden_dir(), rel);
    return p;
}

static void no_stats(gpubp_file *f, const char *name, size_t es)
{
    gpubp_variable *v = au_inq(f, name);
    int missing = -1;
    TS_OK(gpubp_variable_minmax_missing(v, &missing));
    assert_int_equal(missing, 1);
    unsigned char mn[16], mx[16], zero[16] = {0};
    TS_ERR(gpubp_variable_minmax(v, mn, mx), GPUBP_ERR_NOT_FOUND);
    size_t nb = 0;
    TS_OK(gpubp_variable_blocks(v, 1, &nb));
    for (size_t b = 0; b < nb; b++) {
        memset(mn, 0xAB, sizeof mn);
        memset(mx, 0xAB, sizeof mx);
        TS_OK(gpubp_variable_block_info(v, 1, b, NULL, NULL, mn, mx));
        assert_memory_equal(mn, zero, es);
        assert_memory_equal(mx, zero, es);
    }
}

static void test_stats_bp5_29(void **state)
{
    (void)state;
    gpubp_file *f = au_open(gold("2.9.0/stats_bp5.bp"), GPUBP_MODE_READ_RANDOM_ACCESS);
    no_stats(f, "c", 1);
    no_stats(f, "z", 8);
    no_stats(f, "d", 16);
    /* the values */
    gpubp_variable *c = au_inq(f, "c");
    TS_OK(gpubp_set_step_selection(c, 1, 1));
    char cv[4];
    TS_OK(gpubp_get(f, c, cv, GPUBP_SYNC));
    const char want[4] = {6, -2, 8, 101};
    assert_memory_equal(cv, want, 4);
    /* a float array with statistics: the empty block's sentinels widen them, as ADIOS2 does */
    float mn = 0, mx = 0;
    gpubp_variable *fv = au_inq(f, "f");
    TS_OK(gpubp_variable_minmax(fv, &mn, &mx));
    assert_true(mn == -FLT_MAX && mx == FLT_MAX);
    TS_OK(gpubp_variable_block_info(fv, 1, 0, NULL, NULL, &mn, &mx));
    assert_true(mn == -1.5f && mx == 5.0f);
    TS_OK(gpubp_close(f));
}

static void test_chunk_nullop_bp5_2100(void **state)
{
    (void)state;
    static const gpubp_mode modes[] = {GPUBP_MODE_READ_RANDOM_ACCESS, GPUBP_MODE_READ};
    for (size_t m = 0; m < 2; m++) {
        gpubp_file *f = au_open(gold("2.10.0/chunk_nullop_bp5.bp"), modes[m]);
        if (modes[m] == GPUBP_MODE_READ) TS_OK(gpubp_begin_step(f));
        float fv[18];
        TS_OK(gpubp_get(f, au_inq(f, "f"), fv, GPUBP_SYNC));
        for (int i = 0; i < 18; i++) assert_true(fv[i] == (float)i);
        char g[5] = {9, 9, 9, 9, 9};
        TS_ERR(gpubp_get(f, au_inq(f, "g"), g, GPUBP_SYNC), GPUBP_ERR_FORMAT);
        assert_non_null(strstr(gpubp_last_error(), "'g'"));
        assert_non_null(strstr(gpubp_strerror(GPUBP_ERR_FORMAT), "BP5"));
        TS_OK(gpubp_close(f));
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_stats_bp5_29),
        cmocka_unit_test(test_chunk_nullop_bp5_2100),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
