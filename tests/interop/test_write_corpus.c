/* Writer interop: gpubp_write_corpus (argv[1]) writes with libgpubp, for seed 1, the content that
 * make_corpus.c wrote with ADIOS2 into tests/golden/BP4. Each dataset must pass
 * bp4verify.py, read back value for value like ADIOS2's file of the same name (variables, types,
 * shapes, blocks, steps, values, min/max, attributes), and match the bpls text of ADIOS2's file.
 * One test case per dataset. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "interop/bpls_dump.h"
#include "support/test_support.h"

static const char *writer;

static const char *outdir(void)
{
    static char dir[4096];
    if (!dir[0]) {
        snprintf(dir, sizeof dir, "%s", ts_path("corpus"));
        char cmd[9000];
        snprintf(cmd, sizeof cmd, "'%s' '%s' 1", writer, dir);
        int st = system(cmd);
        if (st != 0) {
            fprintf(stderr, "%s failed (%d)\n", cmd, st);
            dir[0] = '\0';
            return NULL;
        }
    }
    return dir;
}

static void check(const char *name)
{
    const char *dir = outdir();
    assert_non_null(dir);
    char ours[4200], theirs[4200];
    snprintf(ours, sizeof ours, "%s/%s", dir, name);
    snprintf(theirs, sizeof theirs, "%s/BP4/%s", ts_golden_dir(), name);
    assert_int_equal(ts_bp4check(ours), 0);
    int d1 = dump_compare_datasets(ours, theirs);
    int d2 = dump_check_dataset(ours, theirs, GPUBP_MODE_READ_RANDOM_ACCESS);
    int d3 = dump_check_dataset(ours, theirs, GPUBP_MODE_READ);
    if (d1 || d2 || d3)
        print_error("%s: %d differences from ADIOS2's file, %d/%d from its bpls text\n", name, d1,
                    d2, d3);
    assert_int_equal(d1, 0);
    assert_int_equal(d2, 0);
    assert_int_equal(d3, 0);
}

static void test_steps_2d(void **state) { (void)state; check("steps_2d.bp"); }
static void test_local(void **state) { (void)state; check("local.bp"); }
static void test_types(void **state) { (void)state; check("types.bp"); }
static void test_changing_3d(void **state) { (void)state; check("changing_3d.bp"); }
static void test_appended(void **state) { (void)state; check("appended.bp"); }

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: %s PATH_TO_gpubp_write_corpus\n", argv[0]);
        return 2;
    }
    writer = argv[1];
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_steps_2d),
        cmocka_unit_test(test_local),
        cmocka_unit_test(test_types),
        cmocka_unit_test(test_changing_3d),
        cmocka_unit_test(test_appended),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
