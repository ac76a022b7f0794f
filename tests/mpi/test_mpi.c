/* MPI scale-out tests (label mpi; issue 8). Run under `mpiexec -n P` (ctest: P = 2 and 4):
 *
 *   test_mpi CASE GPUBPLS [GOLDEN_DIR]
 *
 * CASE: decomp      the dataset of mpi_case.h with the default parameters, 3 steps
 *       aggregators aggregators = 1, 2, P, with and without subfiles=2, both aggregation modes
 *       append      2 steps with aggregators=P, then 1 appended step with aggregators=1
 *       device      device data through the simulated device (both GPU layouts)
 *       failure     one rank's put fails mid-step: end_step fails on every rank; committed steps
 *                   stay readable and the next step commits
 *       sparse      a variable of the last rank only, a value in one step only, an attribute of
 *                   one rank only, aggregators=8 (more than ranks)
 *       bp5         ADIOS2's BP5 datasets of tests/golden/bp5/mpi (4 writers, sub-files,
 *                   aggregation modes, flushes, append) read by gpubp_open_mpi as serially
 *                   (mpi_bp5.c)
 *
 * Every dataset written is then checked the same way (check_dataset): bp4verify.py; read back
 * exactly, serially (plain gpubp_open on rank 0, step mode and random access) and in parallel by
 * P ranks in step mode and by P, P-1 and P-2 ranks (sub-communicators) in random access, each
 * reader rank reading a different box that spans several writers' blocks; the blocks of every step
 * in rank order, through the API and in `gpubpls -D`; gpubpls -la/-d/-D equal to the ADIOS2 bpls
 * golden files of GOLDEN_DIR for P ranks when they exist. */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gpubp.h"
#include "gpubp/mpi.h"
#include "mpi/mpi_bp5.h"
#include "mpi/mpi_case.h"
#include "mpi/mpi_util.h"
#include "memspace/simdev.h"
#include "support/test_support.h"

/* The aggregation-mode parameter of libgpubp_mpi and its two values. */
#define MODE_KEY "aggregation"
static const char *const agg_modes[2] = {"parallel", "funnel"};

static const char *gpubpls_path;
static const char *golden_dir;

/* ---- writing ------------------------------------------------------------------------------- */

typedef struct writer {
    gpubp_file *f;
    gpubp_variable *g1, *g2, *g3, *multi, *loc, *step, *rankval, *note;
} writer;

static void define_decomp(writer *w, int p, int r)
{
    size_t shape[3], start[3], count[3];
    size_t n1 = mc_g1_shape(p), s1 = mc_g1_start(r), c1 = mc_g1_count(r);
    MT_OK(gpubp_define_variable(&w->g1, w->f, "g1", GPUBP_TYPE_DOUBLE, 1, &n1, &s1, &c1));
    mc_g2_block(p, r, shape, start, count);
    MT_OK(gpubp_define_variable(&w->g2, w->f, "g2", GPUBP_TYPE_FLOAT, 2, shape, start, count));
    mc_g3_block(p, r, shape, start, count);
    MT_OK(gpubp_define_variable(&w->g3, w->f, "g3", GPUBP_TYPE_INT32, 3, shape, start, count));
    size_t nm = mc_multi_shape(p), z = 0, one = 1;
    MT_OK(gpubp_define_variable(&w->multi, w->f, "multi", GPUBP_TYPE_UINT16, 1, &nm, &z, &one));
    size_t lc = mc_loc_count(r, 0);
    MT_OK(gpubp_define_variable(&w->loc, w->f, "loc", GPUBP_TYPE_INT64, 1, NULL, NULL, &lc));
    MT_OK(gpubp_define_variable(&w->step, w->f, "step", GPUBP_TYPE_INT32, 0, NULL, NULL, NULL));
    MT_OK(gpubp_define_variable(&w->rankval, w->f, "rankval", GPUBP_TYPE_INT32, 0, NULL, NULL,
                                NULL));
    MT_OK(gpubp_define_variable(&w->note, w->f, "note", GPUBP_TYPE_STRING, 0, NULL, NULL, NULL));
    double dt = 0.25;
    MT_OK(gpubp_define_attribute(w->f, "dt", GPUBP_TYPE_DOUBLE, &dt, 1));
    MT_OK(gpubp_define_attribute(w->f, "unit", GPUBP_TYPE_STRING, "kelvin", 1));
    MT_OK(gpubp_define_variable_attribute(w->f, "g2", "units", GPUBP_TYPE_STRING, "m/s", 1));
}

/* Puts rank r's blocks of step `s` (values of mc_*_value(s, ...)). g1 is a deferred put of g1buf,
 * which must stay valid until end_step; the rest are synchronous. */
static void put_decomp(writer *w, int p, int r, size_t s, double *g1buf)
{
    size_t shape[3], start[3], count[3];
    for (size_t i = 0; i < mc_g1_count(r); i++) g1buf[i] = mc_g1_value(s, mc_g1_start(r) + i);
    MT_OK(gpubp_put(w->f, w->g1, g1buf, GPUBP_DEFERRED));

    float g2[15];
    mc_g2_block(p, r, shape, start, count);
    for (size_t i = 0; i < 3; i++)
        for (size_t j = 0; j < 5; j++) g2[i * 5 + j] = mc_g2_value(s, start[0] + i, start[1] + j);
    MT_OK(gpubp_put(w->f, w->g2, g2, GPUBP_SYNC));

    int32_t g3[24];
    mc_g3_block(p, r, shape, start, count);
    for (size_t i = 0; i < 2; i++)
        for (size_t j = 0; j < 3; j++)
            for (size_t k = 0; k < 4; k++)
                g3[(i * 3 + j) * 4 + k] = mc_g3_value(s, i, j, start[2] + k);
    MT_OK(gpubp_put(w->f, w->g3, g3, GPUBP_SYNC));

    for (int b = 0; b < mc_multi_nblocks(p, r); b++) {
        uint16_t m[MC_MAX_BLOCKS + 2];
        size_t ms = mc_multi_start(p, r, b), mc = mc_multi_count(b);
        for (size_t i = 0; i < mc; i++) m[i] = mc_multi_value(s, ms + i);
        MT_OK(gpubp_set_selection(w->multi, 1, &ms, &mc));
        MT_OK(gpubp_put(w->f, w->multi, m, GPUBP_SYNC));
    }
    for (int b = 0; b < mc_loc_nblocks(r); b++) {
        int64_t l[8];
        size_t lc = mc_loc_count(r, b);
        for (size_t i = 0; i < lc; i++) l[i] = mc_loc_value(s, r, b, i);
        MT_OK(gpubp_set_selection(w->loc, 1, NULL, &lc));
        MT_OK(gpubp_put(w->f, w->loc, l, GPUBP_SYNC));
    }
    int32_t rv = mc_rankval(s, r), sv = (int32_t)s;
    MT_OK(gpubp_put(w->f, w->rankval, &rv, GPUBP_SYNC));
    if (r == 0) {
        char note[32];
        snprintf(note, sizeof note, "step %zu", s);
        MT_OK(gpubp_put(w->f, w->step, &sv, GPUBP_SYNC));
        MT_OK(gpubp_put(w->f, w->note, note, GPUBP_SYNC));
    }
}

/* Writes steps [s0, s0 + n) of the decomp dataset with every rank of comm. */
static void write_decomp(const char *path, gpubp_mode mode, const char *params, MPI_Comm comm,
                         size_t s0, size_t n)
{
    int p, r;
    MPI_Comm_size(comm, &p);
    MPI_Comm_rank(comm, &r);
    writer w;
    MT_OK(gpubp_open_mpi(&w.f, path, mode, params, comm));
    define_decomp(&w, p, r);
    double g1buf[64];
    for (size_t s = s0; s < s0 + n; s++) {
        MT_OK(gpubp_begin_step(w.f));
        put_decomp(&w, p, r, s, g1buf);
        MT_OK(gpubp_end_step(w.f));
    }
    MT_OK(gpubp_close(w.f));
}

/* ---- reading ------------------------------------------------------------------------------- */

typedef struct reader {
    gpubp_file *f;
    int pw;        /* ranks that wrote */
    int q, nq;     /* this reader and the number of readers */
    int ra;        /* random access (step selections) rather than step mode */
    size_t s;      /* step being checked (0-based over the dataset) */
    size_t tag;    /* the step number the writer used for the values of step s */
} reader;

static gpubp_variable *var(reader *rd, const char *name)
{
    gpubp_variable *v;
    MT_OK(gpubp_inquire_variable(&v, rd->f, name));
    if (rd->ra) MT_OK(gpubp_set_step_selection(v, rd->s, 1));
    return v;
}

/* Blocks of v in the step being read: their number and each start (first dim) in rank order. */
static void check_blocks(reader *rd, gpubp_variable *v, const char *name, size_t nexp,
                         const size_t *starts, size_t ndims, const size_t *counts)
{
    size_t nb = 0, start[3], count[3];
    MT_OK(gpubp_variable_blocks(v, rd->ra ? rd->s : 0, &nb));
    MT_CHECK(nb == nexp, "%s step %zu: %zu blocks, expected %zu", name, rd->s, nb, nexp);
    for (size_t b = 0; b < nb; b++) {
        MT_OK(gpubp_variable_block_info(v, rd->ra ? rd->s : 0, b, start, count, NULL, NULL));
        MT_CHECK(start[ndims - 1] == starts[b] && count[ndims - 1] == counts[b],
                 "%s step %zu block %zu: start %zu count %zu, expected %zu %zu (rank order)", name,
                 rd->s, b, start[ndims - 1], count[ndims - 1], starts[b], counts[b]);
    }
}

static void check_g1(reader *rd)
{
    gpubp_variable *v = var(rd, "g1");
    size_t n = 0, starts[64], counts[64];
    MT_OK(gpubp_variable_shape(v, GPUBP_MEM_HOST, &n));
    MT_CHECK(n == mc_g1_shape(rd->pw), "g1 shape %zu", n);
    for (int b = 0; b < rd->pw; b++) starts[b] = mc_g1_start(b), counts[b] = mc_g1_count(b);
    check_blocks(rd, v, "g1", (size_t)rd->pw, starts, 1, counts);
    for (int whole = 0; whole <= (rd->q == 0); whole++) { /* this reader's box; reader 0: all */
        size_t st = 0, c = n;
        if (!whole) mc_reader_box(n, rd->q, rd->nq, &st, &c);
        double got[256];
        MT_OK(gpubp_set_selection(v, 1, &st, &c));
        MT_OK(gpubp_get(rd->f, v, got, GPUBP_SYNC));
        for (size_t i = 0; i < c; i++)
            MT_CHECK(got[i] == mc_g1_value(rd->tag, st + i), "g1 step %zu [%zu] = %g", rd->s,
                     st + i, got[i]);
    }
}

static void check_g2(reader *rd)
{
    gpubp_variable *v = var(rd, "g2");
    size_t shape[2], bs[2], bc[2], starts[64], counts[64];
    MT_OK(gpubp_variable_shape(v, GPUBP_MEM_HOST, shape));
    size_t sh0[2];
    mc_g2_block(rd->pw, 0, sh0, bs, bc);
    MT_CHECK(shape[0] == sh0[0] && shape[1] == sh0[1], "g2 shape %zu x %zu", shape[0], shape[1]);
    for (int b = 0; b < rd->pw; b++) {
        size_t sh[2];
        mc_g2_block(rd->pw, b, sh, bs, bc);
        starts[b] = bs[1], counts[b] = bc[1];
    }
    check_blocks(rd, v, "g2", (size_t)rd->pw, starts, 2, counts);
    for (int whole = 0; whole <= (rd->q == 0); whole++) { /* this reader's box; reader 0: all */
        size_t st[2] = {0, 0}, c[2] = {shape[0], shape[1]};
        if (!whole) {
            mc_reader_box(shape[0], rd->q, rd->nq, &st[0], &c[0]);
            mc_reader_box(shape[1], rd->nq - 1 - rd->q, rd->nq, &st[1], &c[1]);
        }
        float got[1024];
        MT_OK(gpubp_set_selection(v, 2, st, c));
        MT_OK(gpubp_get(rd->f, v, got, GPUBP_SYNC));
        for (size_t i = 0; i < c[0]; i++)
            for (size_t j = 0; j < c[1]; j++)
                MT_CHECK(got[i * c[1] + j] == mc_g2_value(rd->tag, st[0] + i, st[1] + j),
                         "g2 step %zu [%zu,%zu]", rd->s, st[0] + i, st[1] + j);
    }
    const char *units = NULL;
    MT_OK(gpubp_attribute_string(rd->f, "g2/units", 0, &units));
    MT_CHECK(strcmp(units, "m/s") == 0, "g2/units = %s", units);
}

static void check_g3(reader *rd)
{
    gpubp_variable *v = var(rd, "g3");
    size_t shape[3], sh[3], bs[3], bc[3], starts[64], counts[64];
    MT_OK(gpubp_variable_shape(v, GPUBP_MEM_HOST, shape));
    mc_g3_block(rd->pw, 0, sh, bs, bc);
    MT_CHECK(memcmp(shape, sh, sizeof sh) == 0, "g3 shape");
    for (int b = 0; b < rd->pw; b++) {
        mc_g3_block(rd->pw, b, sh, bs, bc);
        starts[b] = bs[2], counts[b] = bc[2];
    }
    check_blocks(rd, v, "g3", (size_t)rd->pw, starts, 3, counts);
    for (int whole = 0; whole <= (rd->q == 0); whole++) { /* this reader's box; reader 0: all */
        size_t st[3] = {0, 0, 0}, c[3] = {shape[0], shape[1], shape[2]};
        if (!whole) {
            st[0] = 1, c[0] = 1, c[1] = 2;
            st[1] = (size_t)rd->q % 2;
            mc_reader_box(shape[2], rd->q, rd->nq, &st[2], &c[2]);
            c[2] = shape[2] - st[2] > 5 ? 5 : shape[2] - st[2]; /* crosses a 4-wide block edge */
        }
        int32_t got[512];
        MT_OK(gpubp_set_selection(v, 3, st, c));
        MT_OK(gpubp_get(rd->f, v, got, GPUBP_SYNC));
        for (size_t i = 0; i < c[0]; i++)
            for (size_t j = 0; j < c[1]; j++)
                for (size_t k = 0; k < c[2]; k++) {
                    int32_t x = got[(i * c[1] + j) * c[2] + k];
                    MT_CHECK(x == mc_g3_value(rd->tag, st[0] + i, st[1] + j, st[2] + k),
                             "g3 step %zu [%zu,%zu,%zu] = %d", rd->s, st[0] + i, st[1] + j,
                             st[2] + k, x);
                }
    }
}

static void check_multi(reader *rd)
{
    gpubp_variable *v = var(rd, "multi");
    size_t n = 0, nb = 0, starts[64], counts[64];
    MT_OK(gpubp_variable_shape(v, GPUBP_MEM_HOST, &n));
    MT_CHECK(n == mc_multi_shape(rd->pw), "multi shape %zu", n);
    for (int r = 0; r < rd->pw; r++)
        for (int b = 0; b < mc_multi_nblocks(rd->pw, r); b++, nb++)
            starts[nb] = mc_multi_start(rd->pw, r, b), counts[nb] = mc_multi_count(b);
    check_blocks(rd, v, "multi", nb, starts, 1, counts);
    uint16_t got[256];
    size_t z = 0; /* the whole array: every block, from every writer */
    MT_OK(gpubp_set_selection(v, 1, &z, &n));
    MT_OK(gpubp_get(rd->f, v, got, GPUBP_SYNC));
    for (size_t i = 0; i < n; i++)
        MT_CHECK(got[i] == mc_multi_value(rd->tag, i), "multi step %zu [%zu] = %u", rd->s, i,
                 got[i]);
}

static void check_loc(reader *rd)
{
    gpubp_variable *v = var(rd, "loc");
    size_t nb = 0, total = mc_loc_total_blocks(rd->pw);
    MT_OK(gpubp_variable_blocks(v, rd->ra ? rd->s : 0, &nb));
    MT_CHECK(nb == total, "loc step %zu: %zu blocks, expected %zu", rd->s, nb, total);
    for (size_t k = 0; k < nb; k++) {
        if (k != 0 && (int)(k % (size_t)rd->nq) != rd->q) continue; /* readers share the blocks */
        int r, b;
        mc_loc_owner(rd->pw, k, &r, &b);
        size_t c = 0, exp = mc_loc_count(r, b);
        MT_OK(gpubp_set_block_selection(v, k));
        MT_OK(gpubp_variable_shape(v, GPUBP_MEM_HOST, &c));
        MT_CHECK(c == exp, "loc step %zu block %zu: count %zu, expected %zu", rd->s, k, c, exp);
        int64_t got[8];
        MT_OK(gpubp_get(rd->f, v, got, GPUBP_SYNC));
        for (size_t i = 0; i < c; i++)
            MT_CHECK(got[i] == mc_loc_value(rd->tag, r, b, i), "loc step %zu block %zu [%zu]",
                     rd->s, k, i);
    }
}

static void check_values(reader *rd)
{
    gpubp_variable *v = var(rd, "step");
    int32_t x = -1;
    MT_OK(gpubp_get(rd->f, v, &x, GPUBP_SYNC));
    MT_CHECK(x == (int32_t)rd->tag, "step = %d at step %zu", x, rd->s);

    v = var(rd, "rankval");
    size_t nb = 0;
    MT_OK(gpubp_variable_blocks(v, rd->ra ? rd->s : 0, &nb));
    MT_CHECK(nb == (size_t)rd->pw, "rankval: %zu blocks, expected one per rank", nb);
    for (size_t b = 0; b < nb; b++) {
        MT_OK(gpubp_set_block_selection(v, b));
        MT_OK(gpubp_get(rd->f, v, &x, GPUBP_SYNC));
        MT_CHECK(x == mc_rankval(rd->tag, (int)b), "rankval block %zu = %d", b, x);
    }

    v = var(rd, "note");
    char s[64], exp[32];
    size_t len = 0;
    MT_OK(gpubp_selection_size(v, &len));
    MT_CHECK(len <= sizeof s, "note: %zu bytes", len);
    MT_OK(gpubp_get(rd->f, v, s, GPUBP_SYNC));
    snprintf(exp, sizeof exp, "step %zu", rd->tag);
    MT_CHECK(strcmp(s, exp) == 0, "note = \"%s\", expected \"%s\"", s, exp);

    double dt = 0;
    const char *unit = NULL;
    MT_OK(gpubp_attribute_data(rd->f, "dt", &dt));
    MT_CHECK(dt == 0.25, "dt = %g", dt);
    MT_OK(gpubp_attribute_string(rd->f, "unit", 0, &unit));
    MT_CHECK(strcmp(unit, "kelvin") == 0, "unit = %s", unit);
}

static void check_step(reader *rd)
{
    check_g1(rd);
    check_g2(rd);
    check_g3(rd);
    check_multi(rd);
    check_loc(rd);
    check_values(rd);
}

/* Reads the whole decomp dataset through f; tags[s] = the writer's step number of step s. */
static void read_decomp(gpubp_file *f, int ra, int pw, int q, int nq, const size_t *tags,
                        size_t nsteps)
{
    reader rd = {f, pw, q, nq, ra, 0, 0};
    if (ra) {
        size_t n = 0;
        MT_OK(gpubp_steps(f, &n));
        MT_CHECK(n == nsteps, "%zu steps, expected %zu", n, nsteps);
        for (rd.s = 0; rd.s < n; rd.s++) {
            rd.tag = tags[rd.s];
            check_step(&rd);
        }
        return;
    }
    int rc;
    while ((rc = gpubp_begin_step(f)) == GPUBP_OK) {
        MT_CHECK(rd.s < nsteps, "more steps than the %zu written", nsteps);
        rd.tag = tags[rd.s];
        check_step(&rd);
        MT_OK(gpubp_end_step(f));
        rd.s++;
    }
    MT_CHECK(rc == GPUBP_END_OF_STREAM, "begin_step -> %d (%s)", rc, gpubp_last_error());
    MT_CHECK(rd.s == nsteps, "%zu steps read, expected %zu", rd.s, nsteps);
}

/* The block lines bpls -D prints for a 1-D variable of `shape` elements (starts, counts in rank
 * order per step); bpls pads the numbers to the width of shape - 1. */
static void expect_block_lines(char *out, size_t cap, size_t nsteps, size_t shape, size_t nb,
                               const size_t *starts, const size_t *counts)
{
    size_t len = 0;
    int w = snprintf(NULL, 0, "%zu", shape - 1);
    out[0] = '\0';
    for (size_t s = 0; s < nsteps; s++) {
        len += (size_t)snprintf(out + len, cap - len, "        step %zu: \n", s);
        for (size_t b = 0; b < nb; b++)
            len += (size_t)snprintf(out + len, cap - len, "          block %zu: [%*zu:%*zu]\n", b,
                                    w, starts[b], w, starts[b] + counts[b] - 1);
    }
}

/* gpubpls -D lists the blocks of g1 and multi in rank order; -la, -d, -D equal the golden files. */
static void check_gpubpls(const char *path, int pw, size_t nsteps, const char *golden)
{
    char *blocks = mt_run_gpubpls(gpubpls_path, "-D", path);
    MT_CHECK(blocks != NULL, "gpubpls -D %s failed", path);
    size_t starts[64] = {0}, counts[64] = {0}, nb = 0;
    char exp[8192];
    for (int r = 0; r < pw; r++) starts[r] = mc_g1_start(r), counts[r] = mc_g1_count(r);
    expect_block_lines(exp, sizeof exp, nsteps, mc_g1_shape(pw), (size_t)pw, starts, counts);
    MT_CHECK(strstr(blocks, exp) != NULL, "gpubpls -D: g1's blocks not in rank order:\n%s\n"
             "expected to contain:\n%s", blocks, exp);
    for (int r = 0; r < pw; r++)
        for (int b = 0; b < mc_multi_nblocks(pw, r); b++, nb++)
            starts[nb] = mc_multi_start(pw, r, b), counts[nb] = mc_multi_count(b);
    expect_block_lines(exp, sizeof exp, nsteps, mc_multi_shape(pw), nb, starts, counts);
    MT_CHECK(strstr(blocks, exp) != NULL, "gpubpls -D: multi's blocks not in rank order:\n%s",
             blocks);

    static const char *const modes[3][2] = {{"-la", "la"}, {"-d", "d"}, {"-D", "blocks"}};
    for (int m = 0; golden_dir && golden && m < 3; m++) {
        char g[4096];
        snprintf(g, sizeof g, "%s/%s.n%d.s%zu.%s.txt", golden_dir, golden, pw, nsteps, modes[m][1]);
        char *want = ts_read_text(g);
        if (!want) continue; /* no ADIOS2 golden for this rank count */
        char *got = m == 2 ? blocks : mt_run_gpubpls(gpubpls_path, modes[m][0], path);
        MT_CHECK(got && strcmp(got, want) == 0,
                 "gpubpls %s %s differs from ADIOS2's bpls (%s):\n--- ours\n%s\n--- ADIOS2\n%s",
                 modes[m][0], path, g, got ? got : "(failed)", want);
        if (got != blocks) free(got);
        free(want);
    }
    free(blocks);
}

/* Everything a written decomp dataset must pass (see the top of this file); golden: the prefix of
 * the ADIOS2 bpls files (GOLDEN_DIR/PREFIX.nP.sSTEPS.{la,d,blocks}.txt), NULL for none. Collective. */
static void check_dataset(const char *path, const char *params, const size_t *tags, size_t nsteps,
                          const char *golden)
{
    int rank = mt_rank(), size = mt_size();
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0) {
        MT_CHECK(mt_bp4check(path) == 0, "bp4verify.py %s failed (written with %s)", path,
                 params ? params : "defaults");
        for (int ra = 0; ra < 2; ra++) {
            gpubp_file *f;
            MT_OK(gpubp_open(&f, path, ra ? GPUBP_MODE_READ_RANDOM_ACCESS : GPUBP_MODE_READ, NULL));
            read_decomp(f, ra, size, 0, 1, tags, nsteps);
            MT_OK(gpubp_close(f));
        }
        check_gpubpls(path, size, nsteps, golden);
    }
    MPI_Barrier(MPI_COMM_WORLD);

    /* parallel, step mode, every rank */
    gpubp_file *f;
    MT_OK(gpubp_open_mpi(&f, path, GPUBP_MODE_READ, NULL, MPI_COMM_WORLD));
    read_decomp(f, 0, size, rank, size, tags, nsteps);
    MT_OK(gpubp_close(f));

    /* parallel, random access, by fewer ranks than wrote (P-1 and P-2 readers) */
    for (int nr = size - 1; nr >= 1 && nr >= size - 2; nr--) {
        MPI_Comm sub;
        MPI_Comm_split(MPI_COMM_WORLD, rank < nr ? 0 : MPI_UNDEFINED, rank, &sub);
        if (sub != MPI_COMM_NULL) {
            MT_OK(gpubp_open_mpi(&f, path, GPUBP_MODE_READ_RANDOM_ACCESS, NULL, sub));
            read_decomp(f, 1, size, rank, nr, tags, nsteps);
            MT_OK(gpubp_close(f));
            MPI_Comm_free(&sub);
        }
    }
    MPI_Barrier(MPI_COMM_WORLD);
}

static const size_t tags_0123[4] = {0, 1, 2, 3};

/* ---- cases --------------------------------------------------------------------------------- */

static void case_decomp(void)
{
    const char *path = mt_path("decomp.bp");
    write_decomp(path, GPUBP_MODE_WRITE, NULL, MPI_COMM_WORLD, 0, 3);
    check_dataset(path, NULL, tags_0123, 3, "decomp");
}

static void case_aggregators(void)
{
    int size = mt_size();
    int aggs[3] = {1, 2, size};
    for (int a = 0; a < 3; a++) {
        if (aggs[a] > size || (a == 2 && (size == 1 || size == 2))) continue; /* already done */
        for (int sub = 1; sub <= 2; sub++)
            for (int m = 0; m < 2; m++) {
                char params[128], name[64];
                snprintf(params, sizeof params, "aggregators=%d,subfiles=%d," MODE_KEY "=%s",
                         aggs[a], sub, agg_modes[m]);
                snprintf(name, sizeof name, "agg%d_sub%d_%s.bp", aggs[a], sub, agg_modes[m]);
                const char *path = mt_path(name);
                write_decomp(path, GPUBP_MODE_WRITE, params, MPI_COMM_WORLD, 0, 2);
                if (mt_rank() == 0) {
                    int n = mt_count_subfiles(path);
                    MT_CHECK(n == aggs[a] * sub, "%s: %d data subfiles, expected %d", params, n,
                             aggs[a] * sub);
                }
                check_dataset(path, params, tags_0123, 2, "decomp");
            }
    }
}

static void case_append(void)
{
    char params[64];
    const char *path = mt_path("append.bp");
    snprintf(params, sizeof params, "aggregators=%d", mt_size());
    write_decomp(path, GPUBP_MODE_WRITE, params, MPI_COMM_WORLD, 0, 2);
    write_decomp(path, GPUBP_MODE_APPEND, "aggregators=1", MPI_COMM_WORLD, 2, 1);
    check_dataset(path, "append", tags_0123, 3, "decomp");
}

/* Device data: dg (like g2) from the simulated device with gpu_layout=row_major, dc (like g2) from
 * the device with the default column-major GPU layout (dims given reversed), dl (like g1) from the
 * device; read back in parallel into device buffers and serially into host memory. */
static void case_device(void)
{
    int p = mt_size(), r = mt_rank();
    const char *path = mt_path("device.bp");
    const char *params[2] = {"device=simulated,gpu_layout=row_major,pool_slots=2,chunk_mib=1",
                             "device=simulated,aggregators=1"};
    for (int lay = 0; lay < 2; lay++) {
        size_t shape[2], start[2], count[2], n1 = mc_g1_shape(p), s1 = mc_g1_start(r),
               c1 = mc_g1_count(r);
        mc_g2_block(p, r, shape, start, count);
        if (lay == 1) { /* column-major GPU layout: dims in reversed order */
            size_t t;
            t = shape[0], shape[0] = shape[1], shape[1] = t;
            t = start[0], start[0] = start[1], start[1] = t;
            t = count[0], count[0] = count[1], count[1] = t;
        }
        float *dg = gbp_sim_alloc(15 * sizeof(float));
        double *dl = gbp_sim_alloc(c1 * sizeof(double));
        MT_CHECK(dg && dl, "gbp_sim_alloc");
        gpubp_file *f;
        gpubp_variable *vg, *vl;
        MT_OK(gpubp_open_mpi(&f, path, GPUBP_MODE_WRITE, params[lay], MPI_COMM_WORLD));
        MT_OK(gpubp_define_variable(&vg, f, "dg", GPUBP_TYPE_FLOAT, 2, shape, start, count));
        MT_OK(gpubp_define_variable(&vl, f, "dl", GPUBP_TYPE_DOUBLE, 1, &n1, &s1, &c1));
        MT_OK(gpubp_set_memory_space(vg, GPUBP_MEM_GPU));
        size_t fs[2], fc[2];
        mc_g2_block(p, r, shape, fs, fc); /* the block in file (row-major) order */
        for (size_t s = 0; s < 2; s++) {
            /* bytes are never reordered: the device buffer holds the file block row by row */
            for (size_t i = 0; i < 3; i++)
                for (size_t j = 0; j < 5; j++) dg[i * 5 + j] = mc_g2_value(s, fs[0] + i, fs[1] + j);
            for (size_t i = 0; i < c1; i++) dl[i] = mc_g1_value(s, s1 + i);
            MT_OK(gpubp_begin_step(f));
            MT_OK(gpubp_put(f, vg, dg, GPUBP_SYNC));
            MT_OK(gpubp_put(f, vl, dl, GPUBP_DEFERRED));
            MT_OK(gpubp_end_step(f));
        }
        MT_OK(gpubp_close(f));
        gbp_sim_free(dg);
        gbp_sim_free(dl);
        MPI_Barrier(MPI_COMM_WORLD);
        if (r == 0) MT_CHECK(mt_bp4check(path) == 0, "bp4verify.py %s (%s)", path, params[lay]);

        /* host readers (serial on rank 0, then all ranks) see the file's row-major array */
        for (int par = 0; par < 2; par++) {
            if (!par && r != 0) continue;
            int q = par ? r : 0, nq = par ? p : 1;
            if (par)
                MT_OK(gpubp_open_mpi(&f, path, GPUBP_MODE_READ, NULL, MPI_COMM_WORLD));
            else
                MT_OK(gpubp_open(&f, path, GPUBP_MODE_READ, NULL));
            size_t s = 0;
            while (gpubp_begin_step(f) == GPUBP_OK) {
                reader rd = {f, p, q, nq, 0, s, s};
                gpubp_variable *v = var(&rd, "dg");
                size_t sh[2], st[2], c[2];
                MT_OK(gpubp_variable_shape(v, GPUBP_MEM_HOST, sh));
                MT_CHECK(sh[0] == 3 * (size_t)mc_g2_py(p) && sh[1] == 5 * (size_t)mc_g2_px(p),
                         "dg shape %zu x %zu in the file", sh[0], sh[1]);
                st[0] = st[1] = 0, c[0] = sh[0], c[1] = sh[1]; /* serially: the whole array */
                if (par) {
                    mc_reader_box(sh[0], q, nq, &st[0], &c[0]);
                    mc_reader_box(sh[1], q, nq, &st[1], &c[1]);
                }
                float got[400];
                MT_OK(gpubp_set_selection(v, 2, st, c));
                MT_OK(gpubp_get(f, v, got, GPUBP_SYNC));
                for (size_t i = 0; i < c[0]; i++)
                    for (size_t j = 0; j < c[1]; j++)
                        MT_CHECK(got[i * c[1] + j] == mc_g2_value(s, st[0] + i, st[1] + j),
                                 "dg step %zu [%zu,%zu]", s, st[0] + i, st[1] + j);
                MT_OK(gpubp_end_step(f));
                s++;
            }
            MT_CHECK(s == 2, "device.bp: %zu steps", s);
            MT_OK(gpubp_close(f));
        }

        /* parallel device readers: each rank's sub-box of dl into simulated device memory */
        MT_OK(gpubp_open_mpi(&f, path, GPUBP_MODE_READ_RANDOM_ACCESS, params[lay],
                             MPI_COMM_WORLD));
        MT_OK(gpubp_inquire_variable(&vl, f, "dl"));
        MT_OK(gpubp_set_memory_space(vl, GPUBP_MEM_GPU));
        size_t st, c;
        mc_reader_box(n1, r, p, &st, &c);
        double *dd = gbp_sim_alloc(2 * c * sizeof(double));
        MT_CHECK(dd != NULL, "gbp_sim_alloc");
        MT_OK(gpubp_set_step_selection(vl, 0, 2));
        MT_OK(gpubp_set_selection(vl, 1, &st, &c));
        MT_OK(gpubp_get(f, vl, dd, GPUBP_SYNC));
        for (size_t s = 0; s < 2; s++)
            for (size_t i = 0; i < c; i++)
                MT_CHECK(dd[s * c + i] == mc_g1_value(s, st + i), "dl step %zu [%zu] = %g", s,
                         st + i, dd[s * c + i]);
        gbp_sim_free(dd);
        MT_OK(gpubp_close(f));
        MPI_Barrier(MPI_COMM_WORLD);
    }
}

/* One rank's put fails in step 1 (a device copy that fails halfway, on the last rank) and in step
 * 2 (the write of a staging slot fails with EIO, on rank 1 or the only rank): end_step fails on
 * every rank with a negative status and a message; then step 3 commits. The dataset holds 2 steps, the values of
 * writer steps 0 and 3. */
static void case_failure(void)
{
    int p = mt_size(), r = mt_rank();
    const char *path = mt_path("failure.bp");
    writer w;
    MT_OK(gpubp_open_mpi(&w.f, path, GPUBP_MODE_WRITE, "device=simulated", MPI_COMM_WORLD));
    define_decomp(&w, p, r);
    gpubp_variable *dv;
    size_t n1 = mc_g1_shape(p), s1 = mc_g1_start(r), c1 = mc_g1_count(r);
    MT_OK(gpubp_define_variable(&dv, w.f, "dl", GPUBP_TYPE_DOUBLE, 1, &n1, &s1, &c1));
    MT_OK(gpubp_set_memory_space(dv, GPUBP_MEM_GPU));
    double *dl = gbp_sim_alloc(c1 * sizeof(double));
    MT_CHECK(dl != NULL, "gbp_sim_alloc");
    double g1buf[64];
    for (size_t s = 0; s < 4; s++) {
        for (size_t i = 0; i < c1; i++) dl[i] = mc_g1_value(s, s1 + i);
        MT_OK(gpubp_begin_step(w.f));
        put_decomp(&w, p, r, s, g1buf);
        int failing = (s == 1 && r == p - 1) || (s == 2 && r == (p > 1 ? 1 : 0));
        if (failing && s == 1) gbp_sim_fail_copy_after(0);
        if (failing && s == 2) gbp_sim_fail_io_after(0);
        int rc = gpubp_put(w.f, dv, dl, GPUBP_SYNC);
        if (failing)
            MT_CHECK(rc < 0, "step %zu: the put that had to fail -> %d", s, rc);
        else
            MT_CHECK(rc == GPUBP_OK, "put -> %d (%s)", rc, gpubp_last_error());
        rc = gpubp_end_step(w.f);
        gbp_sim_reset();
        if (s == 1 || s == 2) {
            MT_CHECK(rc < 0, "step %zu: end_step -> %d on rank %d although rank %d failed", s, rc,
                     r, s == 1 ? p - 1 : (p > 1 ? 1 : 0));
            const char *msg = gpubp_last_error();
            MT_CHECK(msg && msg[0], "step %zu: end_step failed without a message", s);
            int mn, mx;
            MPI_Allreduce(&rc, &mn, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
            MPI_Allreduce(&rc, &mx, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
            MT_CHECK(mn == mx, "step %zu: end_step statuses differ between ranks (%d..%d)", s,
                     mn, mx);
            if (r == 0) printf("step %zu failed as expected: status %d; rank 0: %s\n", s, mn, msg);
        } else {
            MT_CHECK(rc == GPUBP_OK, "step %zu: end_step -> %d (%s)", s, rc, gpubp_last_error());
        }
        size_t n = 0;
        MT_OK(gpubp_steps(w.f, &n));
        MT_CHECK(n == (s == 0 ? 1u : s == 3 ? 2u : 1u), "after step %zu: %zu committed", s, n);
    }
    MT_OK(gpubp_close(w.f));
    gbp_sim_free(dl);
    static const size_t tags[2] = {0, 3};
    check_dataset(path, "failure", tags, 2, NULL);
}

/* Sparse contributions, with more aggregators than ranks (aggregators=8: one subfile per rank):
 * "onlylast", a local array only the last rank defines, is put in steps 0 and 2; "sometimes", a
 * value only the last rank puts, in step 1 only; "rank1attr" is defined on rank 1 (or the only
 * rank) only; "a" is a global array of every rank. Read back serially and by every rank. */
static void check_sparse(gpubp_file *f, int p, int q)
{
    gpubp_variable *v;
    size_t n = 0, ds = 0, nb = 0;
    MT_OK(gpubp_steps(f, &n));
    MT_CHECK(n == 3, "sparse: %zu steps", n);
    MT_OK(gpubp_inquire_variable(&v, f, "onlylast"));
    MT_OK(gpubp_variable_steps(v, &n));
    MT_CHECK(n == 2, "onlylast: in %zu steps, expected 2", n);
    for (size_t s = 0; s < 2; s++) {
        MT_OK(gpubp_variable_dataset_step(v, s, &ds));
        MT_CHECK(ds == 2 * s, "onlylast: its step %zu is dataset step %zu", s, ds);
        MT_OK(gpubp_variable_blocks(v, s, &nb));
        MT_CHECK(nb == 1, "onlylast step %zu: %zu blocks", s, nb);
        double d[2] = {0, 0};
        MT_OK(gpubp_set_step_selection(v, s, 1));
        MT_OK(gpubp_set_block_selection(v, 0));
        MT_OK(gpubp_get(f, v, d, GPUBP_SYNC));
        MT_CHECK(d[0] == (double)ds + 0.5 && d[1] == (double)ds + 1.5, "onlylast step %zu", s);
    }
    MT_OK(gpubp_inquire_variable(&v, f, "sometimes"));
    MT_OK(gpubp_variable_steps(v, &n));
    MT_OK(gpubp_variable_dataset_step(v, 0, &ds));
    MT_CHECK(n == 1 && ds == 1, "sometimes: %zu steps, first at %zu", n, ds);
    int32_t x = -1;
    MT_OK(gpubp_get(f, v, &x, GPUBP_SYNC));
    MT_CHECK(x == (p - 1) * 10 + 1, "sometimes = %d", x);
    MT_OK(gpubp_attribute_data(f, "rank1attr", &x));
    MT_CHECK(x == 1, "rank1attr = %d", x);
    MT_OK(gpubp_inquire_variable(&v, f, "a"));
    for (size_t s = 0; s < 3; s++) {
        size_t st, c;
        int32_t got[64];
        mc_reader_box(2 * (size_t)p, q, p, &st, &c);
        MT_OK(gpubp_variable_blocks(v, s, &nb));
        MT_CHECK(nb == (size_t)p, "a step %zu: %zu blocks", s, nb);
        MT_OK(gpubp_set_step_selection(v, s, 1));
        MT_OK(gpubp_set_selection(v, 1, &st, &c));
        MT_OK(gpubp_get(f, v, got, GPUBP_SYNC));
        for (size_t i = 0; i < c; i++) {
            size_t g = st + i;
            MT_CHECK(got[i] == (int32_t)((g / 2) * 10 + s + g % 2), "a step %zu [%zu] = %d", s, g,
                     got[i]);
        }
    }
}

static void case_sparse(void)
{
    int p = mt_size(), r = mt_rank();
    const char *path = mt_path("sparse.bp");
    gpubp_file *f;
    gpubp_variable *a, *last = NULL, *some;
    MT_OK(gpubp_open_mpi(&f, path, GPUBP_MODE_WRITE, "aggregators=8", MPI_COMM_WORLD));
    size_t sh = 2 * (size_t)p, st = 2 * (size_t)r, two = 2;
    MT_OK(gpubp_define_variable(&a, f, "a", GPUBP_TYPE_INT32, 1, &sh, &st, &two));
    if (r == p - 1)
        MT_OK(gpubp_define_variable(&last, f, "onlylast", GPUBP_TYPE_DOUBLE, 1, NULL, NULL, &two));
    if (r == 1 % p) {
        int32_t one = 1;
        MT_OK(gpubp_define_attribute(f, "rank1attr", GPUBP_TYPE_INT32, &one, 1));
    }
    MT_OK(gpubp_define_variable(&some, f, "sometimes", GPUBP_TYPE_INT32, 0, NULL, NULL, NULL));
    for (int s = 0; s < 3; s++) {
        int32_t x[2] = {r * 10 + s, r * 10 + s + 1};
        double d[2] = {s + 0.5, s + 1.5};
        MT_OK(gpubp_begin_step(f));
        MT_OK(gpubp_put(f, a, x, GPUBP_SYNC));
        if (last && s != 1) MT_OK(gpubp_put(f, last, d, GPUBP_SYNC));
        if (s == 1 && r == p - 1) MT_OK(gpubp_put(f, some, &x[0], GPUBP_SYNC));
        MT_OK(gpubp_end_step(f));
    }
    MT_OK(gpubp_close(f));
    MPI_Barrier(MPI_COMM_WORLD);
    if (r == 0) {
        MT_CHECK(mt_bp4check(path) == 0, "bp4verify.py %s", path);
        int n = mt_count_subfiles(path);
        MT_CHECK(n == p, "aggregators=8 with %d ranks: %d data subfiles, expected %d", p, n, p);
        MT_OK(gpubp_open(&f, path, GPUBP_MODE_READ_RANDOM_ACCESS, NULL));
        check_sparse(f, p, 0);
        MT_OK(gpubp_close(f));
    }
    MT_OK(gpubp_open_mpi(&f, path, GPUBP_MODE_READ_RANDOM_ACCESS, NULL, MPI_COMM_WORLD));
    check_sparse(f, p, r);
    MT_OK(gpubp_close(f));
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    if (argc < 3) {
        if (mt_rank() == 0)
            fprintf(stderr, "usage: mpiexec -n P test_mpi decomp|aggregators|append|device|"
                            "failure|sparse|bp5 GPUBPLS [GOLDEN_DIR]\n");
        MPI_Finalize();
        return 2;
    }
    gpubpls_path = argv[2];
    golden_dir = argc > 3 ? argv[3] : NULL;
    static const struct {
        const char *name;
        void (*fn)(void);
    } cases[] = {{"decomp", case_decomp},
                 {"aggregators", case_aggregators},
                 {"append", case_append},
                 {"device", case_device},
                 {"failure", case_failure},
                 {"sparse", case_sparse},
                 {"bp5", mt_case_bp5}};
    int found = 0;
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        if (strcmp(argv[1], cases[i].name) == 0) {
            cases[i].fn();
            found = 1;
        }
    MT_CHECK(found, "unknown case %s", argv[1]);
    long total = 0;
    MPI_Allreduce(&mt_checks, &total, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
    MT_CHECK(total > 100, "case %s made only %ld checks", argv[1], total);
    if (mt_rank() == 0) printf("%s: %d ranks, %ld checks passed\n", argv[1], mt_size(), total);
    MPI_Finalize();
    return 0;
}
