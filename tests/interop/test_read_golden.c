/* Every dataset under tests/golden/BP4 and gpu/BP4 (whatever seed made it), and their BP5 twins
 * BP5, gpu/BP5 with the 15 codecs/BP5 files (issue 21)
 * reads back through libgpubp with exactly the values, shapes and blocks that ADIOS2's bpls
 * printed for it (NAME.bp.d.txt, NAME.bp.blocks.txt, NAME.bp.la.txt beside NAME.bp), in random
 * access and in READ mode. One test case per dataset and mode. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "interop/bpls_dump.h"
#include "support/test_support.h"

typedef struct golden {
    char path[8300];
    gpubp_mode mode;
} golden;

static void test_golden(void **state)
{
    golden *g = *state;
    int diffs = dump_check_dataset(g->path, g->path, g->mode);
    if (diffs) print_error("%s: %d differences from the bpls dumps\n", g->path, diffs);
    assert_int_equal(diffs, 0);
}

int main(void)
{
    static const char *const dirs[] = {"BP4", "gpu/BP4", "BP5", "gpu/BP5", "codecs/BP5"};
    struct CMUnitTest *tests = NULL;
    size_t n = 0;
    for (size_t d = 0; d < sizeof dirs / sizeof dirs[0]; d++) {
        char dir[4096];
        snprintf(dir, sizeof dir, "%s/%s", ts_golden_dir(), dirs[d]);
        size_t nn = 0;
        char **names = ts_list_datasets(dir, &nn);
        if (!names && d > 0) continue; /* a corpus of one engine (GPUBP_GOLDEN_DIR: another seed's) */
        if (!names) {
            fprintf(stderr, "cannot open %s\n", dir);
            return 1;
        }
        for (size_t i = 0; i < nn; i++) {
            char p[4600];
            struct stat st;
            snprintf(p, sizeof p, "%s/%s.d.txt", dir, names[i]);
            if (stat(p, &st) != 0) { /* no dump to compare with */
                free(names[i]);
                continue;
            }
            for (int m = 0; m < 2; m++) {
                golden *g = calloc(1, sizeof *g);
                snprintf(g->path, sizeof g->path, "%s/%s", dir, names[i]);
                g->mode = m ? GPUBP_MODE_READ : GPUBP_MODE_READ_RANDOM_ACCESS;
                char *tname = malloc(8300);
                snprintf(tname, 8300, "%s/%s [%s]", dirs[d], names[i], m ? "read" : "random access");
                tests = realloc(tests, (n + 1) * sizeof *tests);
                memset(&tests[n], 0, sizeof tests[n]);
                tests[n].name = tname;
                tests[n].test_func = test_golden;
                tests[n].initial_state = g;
                n++;
            }
            free(names[i]);
        }
        free(names);
    }
    if (n == 0) {
        fprintf(stderr, "no golden datasets found under %s\n", ts_golden_dir());
        return 1;
    }
    int rc = _cmocka_run_group_tests("read_golden", tests, n, NULL, NULL);
    for (size_t i = 0; i < n; i++) {
        free((void *)tests[i].name);
        free(tests[i].initial_state);
    }
    free(tests);
    return rc;
}
