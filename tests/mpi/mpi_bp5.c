/* The bp5 case of test_mpi (see test_mpi.c): ADIOS2's multi-writer BP5 datasets of
 * tests/golden/bp5/mpi, and BP3 files of tests/golden/bp3, read in parallel, compared with the
 * serial reader through support/pair_walk.h. */
#include "mpi/mpi_bp5.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gpubp.h"
#include "gpubp/mpi.h"
#include "mpi/mpi_util.h"
#include "support/pair_walk.h"
#include "support/test_support.h"

/* One variable at step s (random access: s is the step selection; READ: the open step) in the
 * parallel reader par and the serial reader ser: blocks, block info, a box of rank r's own that
 * spans the writers' blocks (global arrays), every block (local arrays), the value. */
static void bp5_cmp_var(gpubp_file *par, gpubp_file *ser, const char *name, size_t s, int ra,
                        const char *ds)
{
    int p = mt_size(), r = mt_rank();
    gpubp_variable *vp = NULL, *vs = NULL;
    MT_OK(gpubp_inquire_variable(&vp, par, name));
    MT_OK(gpubp_inquire_variable(&vs, ser, name));
    if (!vp || !vs) return;
    ts_pair pc = {ds, 0, 0, 0};
    gpubp_type tp;
    gpubp_shape_kind kp;
    size_t ndp = 0, nsp = 0;
    MT_CHECK(ts_pair_head(&pc, name, vp, vs, &tp, &kp, &ndp, &nsp), "%s %s: heads differ", ds, name);
    if (ra) {
        MT_OK(gpubp_set_step_selection(vp, s, 1));
        MT_OK(gpubp_set_step_selection(vs, s, 1));
    }
    ts_pair_blocks(&pc, name, ra ? s : 0, par, vp, ser, vs, tp, kp, ndp);
    MT_CHECK(pc.diffs == 0, "%s %s step %zu: the blocks differ from the serial reader's", ds, name, s);
    int str = tp == GPUBP_TYPE_STRING;
    if (str || kp == GPUBP_SHAPE_LOCAL_ARRAY) return;
    if (kp == GPUBP_SHAPE_GLOBAL_ARRAY || kp == GPUBP_SHAPE_JOINED_ARRAY) {
        size_t shp[8], shs[8], start[8] = {0}, count[8];
        MT_OK(gpubp_variable_shape(vp, GPUBP_MEM_HOST, shp));
        MT_OK(gpubp_variable_shape(vs, GPUBP_MEM_HOST, shs));
        MT_CHECK(!memcmp(shp, shs, ndp * sizeof *shp), "%s %s step %zu: shapes differ", ds, name, s);
        /* rank r's rows of dimension 0: a box across the writers' blocks */
        memcpy(count, shp, ndp * sizeof *count);
        start[0] = shp[0] * (size_t)r / (size_t)p;
        count[0] = shp[0] * (size_t)(r + 1) / (size_t)p - start[0];
        if (ndp == 0 || count[0] == 0) return;
        MT_OK(gpubp_set_selection(vp, ndp, start, count));
        MT_OK(gpubp_set_selection(vs, ndp, start, count));
    }
    size_t n1 = 0, n2 = 0;
    int rc1, rc2;
    unsigned char *a = ts_get_new(par, vp, &n1, &rc1), *c = ts_get_new(ser, vs, &n2, &rc2);
    MT_CHECK(rc1 == GPUBP_OK && rc2 == GPUBP_OK && n1 == n2 && n1 && !memcmp(a, c, n1),
             "%s %s step %zu: values of rank %d's box differ (%d/%d)", ds, name, s, r, rc1, rc2);
    free(a);
    free(c);
}

/* Variables and attributes of par and ser: the same names, types and values; the variable names
 * copied into *names (ts_pair_free_names). */
static char **bp5_cmp_names(gpubp_file *par, gpubp_file *ser, const char *ds, size_t *nv)
{
    ts_pair c = {ds, 0, 0, 0};
    char **names = ts_pair_names(&c, par, ser, 0, nv);
    ts_pair_attrs(&c, par, ser);
    MT_CHECK(c.diffs == 0, "%s: variables or attributes differ from the serial reader's", ds);
    return names;
}

/* tests/golden/bp5/mpi: 4 writer ranks (2-4 sub-files, every aggregation mode, flushes, an
 * append with fewer writers), BP3 files of tests/golden/bp3 and bp3mpi, and tests/golden/selsteps
 * (BP5, BP4), also with select_steps, read by P ranks with gpubp_open_mpi, in random access and
 * in step mode, exactly as the serial reader reads them (that reader is checked against bpls by the cli
 * and interop tests); rank r reads its own box of every global array. */
void mt_case_bp5(void)
{
    /* and BP3 files (tests/golden/bp3, bp3mpi: 4 and 3 writers): every rank reads the index
     * itself */
    static const char *const sets[] = {"bp5/mpi/mw_everyone", "bp5/mpi/mw_twolevel",
                                       "bp5/mpi/mw_twolevelmd", "bp5/mpi/mw_datasize",
                                       "bp5/mpi/mw_flush", "bp5/mpi/mw_append",
                                       "bp3/bp3_basic", "bp3/bp3_zlib",
                                       "bp3mpi/bp3mpi_n4_aggN", "bp3mpi/bp3mpi_n3_agg2",
                                       "selsteps/steps5", "selsteps/steps4"};
    /* and with select_steps (every rank applies it to the metadata rank 0 shares) */
    static const char *const params[] = {NULL, "select_steps=1:n", "select_steps=0:n:2"};
    for (size_t d = 0; d < sizeof sets / sizeof sets[0] * 3; d++) {
        char path[4200];
        const char *prm = params[d % 3];
        size_t min_steps = prm ? 1 : 2;
        snprintf(path, sizeof path, "%s/%s.bp", ts_golden_dir(), sets[d / 3]);
        for (int ra = 1; ra >= 0; ra--) {
            gpubp_mode mode = ra ? GPUBP_MODE_READ_RANDOM_ACCESS : GPUBP_MODE_READ;
            gpubp_file *par = NULL, *ser = NULL;
            MT_OK(gpubp_open_mpi(&par, path, mode, prm, MPI_COMM_WORLD));
            MT_OK(gpubp_open(&ser, path, mode, prm));
            if (!par || !ser) continue;
            if (ra) {
                size_t s1 = 0, s2 = 0;
                MT_OK(gpubp_steps(par, &s1));
                MT_OK(gpubp_steps(ser, &s2));
                MT_CHECK(s1 == s2 && s1 >= min_steps, "%s: %zu steps vs %zu serially", path, s1,
                         s2);
                size_t nv = 0;
                char **names = bp5_cmp_names(par, ser, path, &nv);
                for (size_t i = 0; i < nv; i++) {
                    gpubp_variable *v = NULL;
                    size_t vsteps = 0;
                    MT_OK(gpubp_inquire_variable(&v, ser, names[i]));
                    if (v) MT_OK(gpubp_variable_steps(v, &vsteps));
                    for (size_t s = 0; s < vsteps; s++) bp5_cmp_var(par, ser, names[i], s, 1, path);
                }
                ts_pair_free_names(names, nv);
            } else {
                size_t steps = 0;
                int rc;
                while ((rc = gpubp_begin_step(par)) == GPUBP_OK) {
                    MT_OK(gpubp_begin_step(ser));
                    size_t nv = 0;
                    char **names = bp5_cmp_names(par, ser, path, &nv);
                    for (size_t i = 0; i < nv; i++) bp5_cmp_var(par, ser, names[i], steps, 0, path);
                    ts_pair_free_names(names, nv);
                    MT_OK(gpubp_end_step(par));
                    MT_OK(gpubp_end_step(ser));
                    steps++;
                }
                MT_CHECK(rc == GPUBP_END_OF_STREAM, "%s: begin_step -> %d after %zu steps", path,
                         rc, steps);
                MT_CHECK(gpubp_begin_step(ser) == GPUBP_END_OF_STREAM, "%s: serial reader has more "
                         "than %zu steps", path, steps);
                MT_CHECK(steps >= min_steps, "%s: %zu steps", path, steps);
            }
            MT_OK(gpubp_close(par));
            MT_OK(gpubp_close(ser));
        }
    }
}

