/* Issue 18 item 6: an openPMD series written through libgpubp's C API (gpubp_write_openpmd)
 * matches openpmd-api 0.17.1's own series (tests/golden/openpmd: x_0.bp, x_1.bp and ADIOS2
 * v2.12.1's bpls -la, -d and -D of them) name for name and type for type: every attribute (type,
 * element count, single value or list, value) and every variable (type, shape kind, shape,
 * blocks, values), nothing more and nothing less, in random access and READ mode.
 * Two things differ by design and are adjusted in the loaded dumps: openpmd-api wrote no
 * statistics (bpls prints 0 / 0; ours has min/max, checked against the data block by block), and
 * /software, /softwareVersion, /date name the writer and the time (their type is still checked).
 * Usage: test_interop_openpmd_layout GOLDEN_DIR WRITER */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "interop/bpls_dump.h"
#include "support/test_support.h"

static const char *golden, *writer;
static char ours[4096];

static void write_ours(void)
{
    snprintf(ours, sizeof ours, "%s/series", ts_tmpdir());
    ts_remove_tree(ours);
    char cmd[8400];
    snprintf(cmd, sizeof cmd, "mkdir -p '%s' && '%s' '%s'", ours, writer, ours);
    assert_int_equal(system(cmd), 0);
}

/* the dumps of openpmd-api's iteration `step`, adjusted as the header says */
static void load_golden(dump_set *ds, int step, const char *dataset)
{
    char prefix[4300];
    snprintf(prefix, sizeof prefix, "%s/x_%d.bp", golden, step);
    assert_int_equal(dump_load(ds, prefix), 0);
    assert_true(ds->have_la && ds->have_d && ds->have_blocks);
    size_t nvars = 0, nattrs = 0;
    for (size_t i = 0; i < ds->n; i++) {
        dump_var *dv = &ds->vars[i];
        if (dv->kind == DV_ATTRIBUTE) {
            nattrs++;
            continue;
        }
        nvars++;
        /* statistics off in openpmd-api's series: bpls's 0 / 0 is no min/max */
        assert_non_null(dv->min);
        assert_string_equal(dv->min, "0");
        assert_string_equal(dv->max, "0");
        free(dv->min);
        free(dv->max);
        dv->min = dv->max = NULL;
    }
    /* what openpmd-api 0.17.1 wrote: 14 variables, 87 attributes */
    assert_int_equal(nvars, 14);
    assert_int_equal(nattrs, 87);
    /* who wrote it and when: our values (read back here), openpmd-api's type and count */
    static const char *const own[] = {"/software", "/softwareVersion", "/date"};
    gpubp_file *f = NULL;
    TS_OK(gpubp_open(&f, dataset, GPUBP_MODE_READ_RANDOM_ACCESS, NULL));
    for (size_t k = 0; k < 3; k++) {
        dump_var *dv = dump_find(ds, own[k]);
        assert_non_null(dv);
        assert_string_equal(dv->type, "string");
        assert_int_equal(dv->nattr, 1);
        const char *s = NULL;
        TS_OK(gpubp_attribute_string(f, own[k], 0, &s));
        size_t len = strlen(s) + 3;
        free(dv->attr[0]);
        dv->attr[0] = malloc(len);
        snprintf(dv->attr[0], len, "\"%s\"", s);
    }
    const char *s = NULL;
    TS_OK(gpubp_attribute_string(f, "/software", 0, &s));
    assert_string_equal(s, "libgpubp");
    TS_OK(gpubp_close(f));
}

static void test_layout(void **state)
{
    (void)state;
    write_ours();
    for (int step = 0; step < 2; step++) {
        char dataset[4200];
        snprintf(dataset, sizeof dataset, "%s/x_%d.bp", ours, step);
        dump_set ds;
        load_golden(&ds, step, dataset);
        int ra = dump_check_loaded(dataset, &ds, GPUBP_MODE_READ_RANDOM_ACCESS);
        int rd = dump_check_loaded(dataset, &ds, GPUBP_MODE_READ);
        if (ra || rd) print_error("x_%d.bp: %d differences (random access), %d (READ)\n", step, ra, rd);
        assert_int_equal(ra, 0);
        assert_int_equal(rd, 0);
        dump_free(&ds);
    }
}

/* The comparison can fail: a dump with one type, one attribute value or one name changed
 * differs from our series. */
static void test_layout_check_detects(void **state)
{
    (void)state;
    write_ours();
    char dataset[4200];
    snprintf(dataset, sizeof dataset, "%s/x_0.bp", ours);
    for (int how = 0; how < 3; how++) {
        dump_set ds;
        load_golden(&ds, 0, dataset);
        dump_var *dv;
        if (how == 0) {
            dv = dump_find(&ds, "/data/0/meshes/E/x/position");
            assert_non_null(dv);
            snprintf(dv->type, sizeof dv->type, "double"); /* long double in openpmd-api's */
        } else if (how == 1) {
            dv = dump_find(&ds, "/data/0/meshes/E/gridSpacing");
            assert_non_null(dv);
            assert_int_equal(dv->nattr, 3);
            free(dv->attr[2]);
            dv->attr[2] = strdup("0.3");
        } else {
            dv = dump_find(&ds, "/data/0/particles/e/weighting");
            assert_non_null(dv);
            snprintf(dv->name, sizeof dv->name, "/data/0/particles/e/weight");
        }
        int d = dump_check_loaded(dataset, &ds, GPUBP_MODE_READ_RANDOM_ACCESS);
        assert_true(d > 0);
        dump_free(&ds);
    }
}

int main(int argc, char **argv)
{
    if (argc != 3) {
        fprintf(stderr, "usage: %s GOLDEN_DIR WRITER\n", argv[0]);
        return 2;
    }
    golden = argv[1];
    writer = argv[2];
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_layout),
        cmocka_unit_test(test_layout_check_detects),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
