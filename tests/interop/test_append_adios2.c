/* APPEND to datasets that ADIOS2 wrote: a copy of every golden dataset gets an empty step and
 * then a step with a new variable from libgpubp. Afterwards it passes bp4verify.py, has the steps
 * it should, and every variable ADIOS2 wrote still reads exactly like its bpls dumps. */
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "interop/bpls_dump.h"
#include "support/test_support.h"

typedef struct item {
    char path[8300];
    char name[512];
} item;

static void test_append(void **state)
{
    item *it = *state;
    const char *copy = ts_path(it->name);
    assert_int_equal(ts_copy_dataset(it->path, copy), 0);
    gpubp_file *f = NULL;
    TS_OK(gpubp_open(&f, it->path, GPUBP_MODE_READ_RANDOM_ACCESS, NULL));
    size_t before = 0;
    TS_OK(gpubp_steps(f, &before));
    TS_OK(gpubp_close(f));

    /* run 1: an empty step */
    TS_OK(gpubp_open(&f, copy, GPUBP_MODE_APPEND, NULL));
    size_t cur = 0;
    TS_OK(gpubp_current_step(f, &cur));
    assert_int_equal(cur, before);
    TS_OK(gpubp_begin_step(f));
    TS_OK(gpubp_end_step(f));
    TS_OK(gpubp_close(f));
    assert_int_equal(ts_bp4check(copy), 0);
    int d1 = dump_check_dataset(copy, it->path, GPUBP_MODE_READ_RANDOM_ACCESS);
    int d2 = dump_check_dataset(copy, it->path, GPUBP_MODE_READ);
    if (d1 || d2) print_error("%s after an appended empty step: %d/%d differences\n", it->name, d1, d2);
    assert_int_equal(d1, 0);
    assert_int_equal(d2, 0);

    /* run 2: a new variable and attribute */
    TS_OK(gpubp_open(&f, copy, GPUBP_MODE_APPEND, NULL));
    gpubp_variable *v;
    size_t shape[1] = {3}, st[1] = {0};
    TS_OK(gpubp_define_variable(&v, f, "gpubp/appended", GPUBP_TYPE_INT32, 1, shape, st, shape));
    TS_OK(gpubp_define_attribute(f, "gpubp/note", GPUBP_TYPE_STRING, "appended by libgpubp", 1));
    TS_OK(gpubp_begin_step(f));
    int32_t d[3] = {7, -8, 9};
    TS_OK(gpubp_put(f, v, d, GPUBP_SYNC));
    TS_OK(gpubp_end_step(f));
    TS_OK(gpubp_close(f));
    assert_int_equal(ts_bp4check(copy), 0);
    assert_int_equal(ts_file_byte(ts_join(copy, "md.idx"), 38), 0);
    TS_OK(gpubp_open(&f, copy, GPUBP_MODE_READ_RANDOM_ACCESS, NULL));
    size_t after = 0;
    TS_OK(gpubp_steps(f, &after));
    assert_int_equal(after, before + 2);
    TS_OK(gpubp_inquire_variable(&v, f, "gpubp/appended"));
    int32_t got[3] = {0, 0, 0};
    TS_OK(gpubp_get(f, v, got, GPUBP_SYNC));
    assert_memory_equal(got, d, sizeof d);
    const char *s = NULL;
    TS_OK(gpubp_attribute_string(f, "gpubp/note", 0, &s));
    assert_string_equal(s, "appended by libgpubp");
    TS_OK(gpubp_close(f));
}

static int cmp_items(const void *a, const void *b)
{
    return strcmp(((const item *)a)->name, ((const item *)b)->name);
}

int main(void)
{
    static const char *const dirs[] = {"BP4", "gpu/BP4"};
    item *items = NULL;
    size_t n = 0;
    for (size_t d = 0; d < 2; d++) {
        char dir[4096];
        snprintf(dir, sizeof dir, "%s/%s", ts_golden_dir(), dirs[d]);
        DIR *dp = opendir(dir);
        if (!dp) continue;
        struct dirent *e;
        while ((e = readdir(dp))) {
            size_t l = strlen(e->d_name);
            if (l < 4 || strcmp(e->d_name + l - 3, ".bp")) continue;
            char p[8300];
            struct stat st;
            snprintf(p, sizeof p, "%s/%s.d.txt", dir, e->d_name);
            if (stat(p, &st) != 0) continue;
            items = realloc(items, (n + 1) * sizeof *items);
            snprintf(items[n].path, sizeof items[n].path, "%s/%s", dir, e->d_name);
            snprintf(items[n].name, sizeof items[n].name, "%.500s", e->d_name);
            n++;
        }
        closedir(dp);
    }
    if (!n) return 1;
    qsort(items, n, sizeof *items, cmp_items);
    struct CMUnitTest *tests = calloc(n, sizeof *tests);
    for (size_t i = 0; i < n; i++) {
        tests[i].name = items[i].name;
        tests[i].test_func = test_append;
        tests[i].initial_state = &items[i];
    }
    int rc = _cmocka_run_group_tests("append_to_adios2", tests, n, NULL, NULL);
    free(tests);
    free(items);
    return rc;
}
