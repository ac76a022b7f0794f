/* The failure rule of the parallel protocol, with threads as ranks (fake_comm.c): a fault on ONE
 * rank in the middle of a step — its n-th allocation, n-th write or read, a bad put, a bad get —
 * fails that call on every rank with the same status and a message naming the rank, never
 * hangs (fake_comm aborts a rank that waits too long, or ranks that disagree on the collective
 * they are in), keeps every committed step readable, and lets the next step commit. Every
 * allocation and I/O call of a parallel end_step is made to fail in turn, on the aggregator and
 * on another rank, in both aggregation modes, with one and two aggregators. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/common.h"
#include "comm/fake_comm.h"
#include "comm/outcome.h"
#include "io/fileio.h"
#include "memspace/simdev.h"
#include "support/test_support.h"

#define NR 3   /* ranks */
#define NC 4   /* columns */
#define MAXN 400 /* more faults than any end_step has calls: the sweep must end before */

enum { F_ALLOC, F_WRITE, F_READ, F_PUT, F_DEVICE_PUT };

typedef struct fcase {
    const char *path, *params;
    int kind, rank;      /* the fault, and the rank it happens on */
    long nth;
    int fired;           /* the fault happened (faulting rank) */
    int check;           /* run bp4verify.py too (slow: a few cases only) */
    outcome o;           /* end_step of steps 0-2 */
} fcase;

static size_t rows(int r) { return 1 + (size_t)r; }
static size_t row0(int r) { return (size_t)r * ((size_t)r + 1) / 2; }
static double val(int step, size_t row, size_t col) { return step * 100.0 + row * 10.0 + col; }

static void arm(fcase *c)
{
    if (c->kind == F_ALLOC) gbp_alloc_fail_after_thread(c->nth);
    if (c->kind == F_WRITE) gbp_io_fault_inject_thread(GBP_IO_FAULT_EIO, c->nth, 0);
    if (c->kind == F_READ) gbp_io_fault_inject_thread(GBP_IO_FAULT_READ_EIO, c->nth, 0);
}

static int disarm(fcase *c)
{
    if (c->kind == F_ALLOC) return gbp_alloc_fail_after_thread(-1) < 0;
    long fired = gbp_io_faults_fired();
    gbp_io_fault_inject_thread(GBP_IO_FAULT_NONE, -1, 0);
    return fired > 0;
}

/* Three steps; the fault hits step 1 on one rank. */
static void write_body(void *ctx, int rank, int size, void *arg)
{
    fcase *c = arg;
    outcome *o = &c->o;
    gpubp_file *f;
    RK(gpubp_open_comm(&f, c->path, GPUBP_MODE_WRITE, c->params, &fc_ops, fc_dup(ctx)));
    size_t shape[2] = {row0(size), NC}, start[2] = {row0(rank), 0}, count[2] = {rows(rank), NC};
    gpubp_variable *t;
    RK(gpubp_define_variable(&t, f, "T", GPUBP_TYPE_DOUBLE, 2, shape, start, count));
    RK(gpubp_define_attribute(f, "unit", GPUBP_TYPE_STRING, "K", 1));
    double buf[NR * NC];
    void *dev = NULL;
    for (int k = 0; k < 3; k++) {
        for (size_t i = 0; i < rows(rank) * NC; i++) buf[i] = val(k, row0(rank) + i / NC, i % NC);
        RK(gpubp_begin_step(f));
        int here = k == 1 && rank == c->rank;
        if (here && (c->kind == F_PUT || c->kind == F_DEVICE_PUT)) {
            RK(gpubp_set_selection(t, 2, start, count));
            if (c->kind == F_PUT) { /* no such launch mode */
                if (gpubp_put(f, t, buf, (gpubp_launch)77) == GPUBP_OK)
                    note(o, rank, "a put with launch mode 77 was accepted");
            } else { /* a block from (simulated) device memory whose copy fails at end_step */
                size_t tb = rows(rank) * NC * sizeof(double), dc = rows(rank) * NC;
                dev = gbp_sim_alloc(tb);
                memcpy(dev, buf, tb);
                gpubp_variable *d;
                RK(gpubp_define_variable(&d, f, "D", GPUBP_TYPE_DOUBLE, 1, NULL, NULL, &dc));
                RK(gpubp_set_memory_space(d, GPUBP_MEM_GPU));
                RK(gpubp_put(f, t, buf, GPUBP_DEFERRED));
                gbp_sim_fail_copy_after(0); /* only this rank copies from a device */
                RK(gpubp_put(f, d, dev, GPUBP_DEFERRED));
            }
            c->fired = 1;
        } else {
            RK(gpubp_put(f, t, buf, k == 2 ? GPUBP_SYNC : GPUBP_DEFERRED));
        }
        if (here) arm(c);
        int rc = gpubp_end_step(f);
        if (here && c->kind < F_PUT) c->fired = disarm(c);
        record(o, rank, k, rc);
        if (dev) {
            gbp_sim_fail_copy_after(-1);
            gbp_sim_free(dev);
            dev = NULL;
        }
    }
    RK(gpubp_close(f));
}

/* Every rank the same outcome; a failure names the rank; steps 0 and 2 commit; the file reads
 * back every committed step. Returns whether the fault fired. */
/* Runs body on NR ranks; then every rank has step k's status of rank 0, and a failure names
 * the faulting rank. Returns whether step k failed. */
static int run_ranks(fc_body body, void *arg, outcome *o, int k, int rank, const char *what)
{
    outcome_init(o);
    assert_int_equal(fc_run(NR, 0, body, arg), 0);
    assert_clean(o);
    int failed = o->end_rc[0][k] != GPUBP_OK;
    char who[32];
    snprintf(who, sizeof who, "rank %d", rank);
    for (int r = 0; r < NR; r++) {
        assert_int_equal(o->end_rc[r][k], o->end_rc[0][k]);
        if (failed && (!strstr(o->end_msg[r], who) || !strstr(o->end_msg[r], what)))
            print_error("rank %d's message: %s\n", r, o->end_msg[r]);
        assert_true(!failed || strstr(o->end_msg[r], who));
        assert_true(!failed || strstr(o->end_msg[r], what));
    }
    return failed;
}

static int run_case(fcase *c)
{
    c->fired = 0;
    int failed = run_ranks(write_body, c, &c->o, 1, c->rank, "not committed");
    for (int r = 0; r < NR; r++) {
        assert_int_equal(c->o.end_rc[r][0], GPUBP_OK);
        assert_int_equal(c->o.end_rc[r][2], GPUBP_OK);
    }
    if (c->fired && c->kind >= F_PUT && !failed)
        print_error("kind %d on rank %d (%s) did not fail the step\n", c->kind, c->rank, c->params);
    if (c->fired && c->kind >= F_PUT) assert_true(failed);
    /* read back: steps 0, (1), 2 (the independent checker is slow: a few cases only) */
    if (c->check) assert_int_equal(ts_bp4check(c->path), 0);
    gpubp_file *f;
    TS_OK(gpubp_open(&f, c->path, GPUBP_MODE_READ_RANDOM_ACCESS, NULL));
    size_t steps;
    TS_OK(gpubp_steps(f, &steps));
    assert_int_equal(steps, failed ? 2 : 3);
    gpubp_variable *t;
    TS_OK(gpubp_inquire_variable(&t, f, "T"));
    size_t z[2] = {0, 0}, sh[2] = {row0(NR), NC};
    double all[NR * NR * NC];
    for (size_t s = 0; s < steps; s++) {
        int step = failed && s == 1 ? 2 : (int)s;
        TS_OK(gpubp_set_selection(t, 2, z, sh));
        TS_OK(gpubp_set_step_selection(t, s, 1));
        TS_OK(gpubp_get(f, t, all, GPUBP_SYNC));
        for (size_t i = 0; i < row0(NR) * NC; i++) assert_true(all[i] == val(step, i / NC, i % NC));
    }
    TS_OK(gpubp_close(f));
    return c->fired;
}

static const char *const configs[] = {
    "aggregators=1", "aggregators=1,aggregation=funnel,chunk_mib=1",
    "aggregators=2", "aggregators=2,aggregation=funnel,chunk_mib=1",
};

static long runs; /* cases run (printed: the sweeps' cost) */

/* The faulting ranks: with one aggregator rank 0 (aggregator and committer) and rank 1 (a plain
 * rank); with two, rank 1 (shares rank 0's group) and rank 2 (the second group's aggregator). */
static void sweep(int kind)
{
    for (size_t i = 0; i < sizeof configs / sizeof *configs; i++) {
        for (int q = 0; q < 2; q++) {
            fcase c = {.path = ts_path("fault.bp"), .params = configs[i], .kind = kind,
                       .rank = q + (i >= 2)};
            if (kind == F_READ && c.rank == 0) continue; /* rank 0 reads nothing back */
            long n = 0, failures = 0;
            for (; n < MAXN; n++) {
                c.nth = n;
                c.check = n == 0 && q == 0 && kind != F_READ;
                runs++;
                if (!run_case(&c)) break;
                failures += c.o.end_rc[0][1] != GPUBP_OK;
            }
            assert_true(n < MAXN); /* the sweep reached a step without a fault */
            if (kind == F_WRITE) assert_true(n > 0 && failures == n); /* every write counts */
        }
    }
    print_message("%ld cases\n", runs);
    runs = 0;
}

static void alloc_faults_in_end_step(void **state)
{
    (void)state;
    sweep(F_ALLOC);
}

static void write_faults_in_end_step(void **state)
{
    (void)state;
    sweep(F_WRITE); /* rank 0's writes include md.0 and md.idx */
}

static void read_faults_in_end_step(void **state)
{
    (void)state;
    sweep(F_READ); /* the funnel buffer and the staging buffer are read back */
}

static void bad_put_on_one_rank(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof configs / sizeof *configs; i++)
        for (int r = 0; r < NR; r++)
            for (int kind = F_PUT; kind <= F_DEVICE_PUT; kind++) {
                char params[128];
                snprintf(params, sizeof params, "%s%s", configs[i],
                         kind == F_DEVICE_PUT ? ",device=simulated,gpu_layout=row_major" : "");
                fcase c = {.path = ts_path("badput.bp"), .params = params, .kind = kind,
                           .rank = r, .check = r == 1 && (int)(i % 2) == kind - F_PUT};
                assert_true(run_case(&c));
            }
}

/* ---- readers ------------------------------------------------------------------------------ */

typedef struct rcase {
    const char *path;
    int kind, rank;      /* F_ALLOC: n-th allocation of begin_step 1; F_PUT: a bad get */
    long nth;
    int fired;
    outcome o;           /* step 1's begin_step (F_ALLOC) or end_step (F_PUT) */
} rcase;

static void read_body(void *ctx, int rank, int size, void *arg)
{
    (void)size;
    rcase *c = arg;
    outcome *o = &c->o;
    gpubp_file *f;
    RK(gpubp_open_comm(&f, c->path, GPUBP_MODE_READ, NULL, &fc_ops, fc_dup(ctx)));
    double row[NC];
    for (int k = 0; k < 3; k++) {
        int here = k == 1 && rank == c->rank;
        if (here && c->kind == F_ALLOC) {
            gbp_alloc_fail_after_thread(c->nth);
            int rc = gpubp_begin_step(f);
            c->fired = gbp_alloc_fail_after_thread(-1) < 0;
            record(o, rank, 1, rc);
        } else if (k == 1 && c->kind == F_ALLOC) {
            record(o, rank, 1, gpubp_begin_step(f));
        }
        /* after a failed begin_step every rank tries again: the same step opens */
        if (k != 1 || c->kind != F_ALLOC || o->end_rc[rank][1] != GPUBP_OK) RK(gpubp_begin_step(f));
        size_t cur;
        RK(gpubp_current_step(f, &cur));
        if (cur != (size_t)k) RK(GPUBP_ERR_INVALID_STEP);
        gpubp_variable *t;
        RK(gpubp_inquire_variable(&t, f, "T"));
        size_t st[2] = {(size_t)rank, 0}, cn[2] = {1, NC};
        if (here && c->kind == F_PUT) st[0] = 100; /* outside the shape */
        int grc = gpubp_set_selection(t, 2, st, cn);
        if (grc == GPUBP_OK) grc = gpubp_get(f, t, row, GPUBP_DEFERRED);
        if (here && c->kind == F_PUT && grc == GPUBP_OK) RK(GPUBP_ERR_INVALID_ARG);
        if (!(here && c->kind == F_PUT)) RK(grc);
        int rc = gpubp_end_step(f);
        if (k == 1 && c->kind == F_PUT) {
            record(o, rank, 1, rc);
            if (here) c->fired = 1;
            continue;
        }
        RK(rc);
        for (size_t j = 0; j < NC; j++)
            if (row[j] != val(k, (size_t)rank, j)) RK(GPUBP_ERR_FORMAT);
    }
    RK(gpubp_begin_step(f) == GPUBP_END_OF_STREAM ? GPUBP_OK : GPUBP_ERR_FORMAT);
    RK(gpubp_close(f));
}

static int run_read(rcase *c)
{
    c->fired = 0;
    run_ranks(read_body, c, &c->o, 1, c->rank, "step 1");
    return c->fired;
}

static void readers_fail_together(void **state)
{
    (void)state;
    /* a dataset of three committed steps */
    fcase w = {.path = ts_path("read.bp"), .params = "aggregators=1", .kind = F_ALLOC, .rank = 0,
               .nth = MAXN};
    run_case(&w);
    for (int r = 0; r < NR; r++) {
        rcase c = {.path = w.path, .kind = F_PUT, .rank = r};
        assert_true(run_read(&c));
        assert_int_equal(c.o.end_rc[0][1], GPUBP_ERR_INVALID_SELECTION);
        long n = 0;
        for (; n < MAXN; n++) {
            rcase a = {.path = w.path, .kind = F_ALLOC, .rank = r, .nth = n};
            if (!run_read(&a)) break;
        }
        assert_true(n < MAXN);
    }
}

/* ---- a communicator operation that fails on one rank ---------------------------------------
 * fake_comm's failures happen after the exchange (the communicator still works): a failed gather
 * of the metadata still learns rank 0's outcome (the step commits everywhere); a failed broadcast
 * of the outcome leaves that rank unsure, so it refuses further steps (never overwriting what the
 * others committed) while the others go on. */
typedef struct ccase {
    const char *path, *op;
    outcome o;
} ccase;

static void comm_body(void *ctx, int rank, int size, void *arg)
{
    ccase *c = arg;
    outcome *o = &c->o;
    gpubp_file *f;
    void *mine = fc_dup(ctx);
    RK(gpubp_open_comm(&f, c->path, GPUBP_MODE_WRITE, "aggregators=1", &fc_ops, mine));
    size_t shape[2] = {row0(size), NC}, start[2] = {row0(rank), 0}, count[2] = {rows(rank), NC};
    gpubp_variable *t;
    RK(gpubp_define_variable(&t, f, "T", GPUBP_TYPE_DOUBLE, 2, shape, start, count));
    double buf[NR * NC];
    for (int k = 0; k < 2; k++) {
        for (size_t i = 0; i < rows(rank) * NC; i++) buf[i] = val(k, row0(rank) + i / NC, i % NC);
        RK(gpubp_begin_step(f));
        RK(gpubp_put(f, t, buf, GPUBP_SYNC));
        if (k == 1 && rank == 1) fc_fail_next(mine, c->op);
        record(o, rank, k, gpubp_end_step(f));
    }
    if (rank == 1 && !strcmp(c->op, "bcast")) { /* alone: it must not reach a collective */
        RK(gpubp_begin_step(f));
        record(o, rank, 2, gpubp_end_step(f));
    }
    RK(gpubp_close(f));
}

static void comm_op_fails_on_one_rank(void **state)
{
    (void)state;
    const char *ops[] = {"gather", "bcast"};
    for (int i = 0; i < 2; i++) {
        ccase c = {.path = ts_path("commfail.bp"), .op = ops[i]};
        outcome_init(&c.o);
        assert_int_equal(fc_run(NR, 0, comm_body, &c), 0);
        assert_clean(&c.o);
        for (int r = 0; r < NR; r++) {
            assert_int_equal(c.o.end_rc[r][0], GPUBP_OK);
            assert_int_equal(c.o.end_rc[r][1], r == 1 && i == 1 ? GPUBP_ERR_IO : GPUBP_OK);
        }
        if (i == 1) assert_non_null(strstr(c.o.end_msg[1], "no more steps can be written"));
        assert_int_equal(ts_bp4check(c.path), 0);
        gpubp_file *f;
        TS_OK(gpubp_open(&f, c.path, GPUBP_MODE_READ_RANDOM_ACCESS, NULL));
        size_t steps;
        TS_OK(gpubp_steps(f, &steps));
        assert_int_equal(steps, 2); /* both steps committed, whatever rank 1 saw */
        gpubp_variable *t;
        TS_OK(gpubp_inquire_variable(&t, f, "T"));
        size_t z[2] = {0, 0}, sh[2] = {row0(NR), NC};
        double all[NR * NR * NC];
        TS_OK(gpubp_set_selection(t, 2, z, sh));
        TS_OK(gpubp_set_step_selection(t, 1, 1));
        TS_OK(gpubp_get(f, t, all, GPUBP_SYNC));
        for (size_t k = 0; k < row0(NR) * NC; k++) assert_true(all[k] == val(1, k / NC, k % NC));
        TS_OK(gpubp_close(f));
    }
}

/* ---- hostile metadata: parallel readers are as bounds-checked as the serial one ------------ */

typedef struct hcase {
    const char *path;
    gpubp_mode mode;
    outcome o;           /* step 0: open; step 1: the first begin_step that is not OK */
} hcase;

/* Opens, then takes steps until one is not OK; the statuses go to the outcome. */
static int read_all(gpubp_file **fp, const char *path, gpubp_mode mode, void *ctx, int *last)
{
    int rc = ctx ? gpubp_open_comm(fp, path, mode, NULL, &fc_ops, fc_dup(ctx))
                 : gpubp_open(fp, path, mode, NULL);
    *last = GPUBP_OK;
    if (rc != GPUBP_OK || mode != GPUBP_MODE_READ) return rc;
    double v[NC]; /* read at end_step */
    while ((*last = gpubp_begin_step(*fp)) == GPUBP_OK) {
        gpubp_variable *t;
        if (gpubp_inquire_variable(&t, *fp, "T") == GPUBP_OK) {
            size_t st[2] = {0, 0}, cn[2] = {1, NC};
            if (gpubp_set_selection(t, 2, st, cn) == GPUBP_OK)
                (void)gpubp_get(*fp, t, v, GPUBP_DEFERRED);
        }
        int rc2 = gpubp_end_step(*fp);
        if (rc2 != GPUBP_OK) {
            *last = rc2;
            break;
        }
    }
    return rc;
}

static void hostile_body(void *ctx, int rank, int size, void *arg)
{
    (void)size;
    hcase *c = arg;
    outcome *o = &c->o;
    gpubp_file *f = NULL;
    int last;
    record(o, rank, 0, read_all(&f, c->path, c->mode, ctx, &last));
    record(o, rank, 1, last);
    if (f) record(o, rank, 2, gpubp_close(f));
}

/* Every rank the same status as the serial reader, at open and at the first failing step.
 * Returns how many of the two modes found the damage. */
static int hostile_read(const char *path)
{
    int found = 0;
    for (int m = 0; m < 2; m++) {
        gpubp_mode mode = m ? GPUBP_MODE_READ_RANDOM_ACCESS : GPUBP_MODE_READ;
        gpubp_file *f = NULL;
        int last, rc = read_all(&f, path, mode, NULL, &last);
        if (f) gpubp_close(f);
        found += rc < 0 || last < 0;
        hcase c = {.path = path, .mode = mode};
        outcome_init(&c.o);
        assert_int_equal(fc_run(NR, 0, hostile_body, &c), 0);
        assert_clean(&c.o);
        for (int r = 0; r < NR; r++) {
            if (c.o.end_rc[r][0] != rc || c.o.end_rc[r][1] != last)
                print_error("%s mode %d rank %d: %d/%d, serial %d/%d: %s\n", path, (int)mode, r,
                            c.o.end_rc[r][0], c.o.end_rc[r][1], rc, last, c.o.end_msg[r]);
            assert_int_equal(c.o.end_rc[r][0], rc);
            assert_int_equal(c.o.end_rc[r][1], last);
            assert_int_equal(c.o.end_rc[r][2], GPUBP_OK);
        }
    }
    return found;
}

static void put64(unsigned char *p, uint64_t v)
{
    for (int i = 0; i < 8; i++) p[i] = (unsigned char)(v >> (8 * i));
}

static void hostile_metadata(void **state)
{
    (void)state;
    fcase w = {.path = ts_path("good.bp"), .params = "aggregators=2", .kind = F_ALLOC, .rank = 0,
               .nth = MAXN};
    run_case(&w);
    char idxp[4300], md0p[4300], bad[4200];
    snprintf(bad, sizeof bad, "%s", ts_path("hostile.bp"));
    snprintf(idxp, sizeof idxp, "%s/md.idx", bad);
    snprintf(md0p, sizeof md0p, "%s/md.0", bad);
    size_t il, ml;
    int cases = 0, found = 0;
    /* 1. the last record ends past md.0; 2. md.0 cut inside the last step; 3. bytes of md.0's
     * steps overwritten, one case per offset, in steps of 13 bytes (every alignment) */
    for (int k = 0;; k++) {
        assert_int_equal(ts_copy_dataset(w.path, bad), 0);
        unsigned char *idx = ts_read_file(idxp, &il), *md0 = ts_read_file(md0p, &ml);
        assert_non_null(idx);
        assert_non_null(md0);
        size_t at = 64 + (size_t)(k - 2) * 13;
        int done = k >= 2 && at >= ml;
        if (k == 0) {
            put64(idx + il - 64 + 40, ml + 1000); /* the record's end of metadata */
            assert_int_equal(ts_write_file(idxp, idx, il), 0);
        } else if (k == 1) {
            assert_int_equal(ts_write_file(md0p, md0, ml - 20), 0);
        } else if (!done) {
            md0[at] ^= 0xff;
            if (at + 1 < ml) md0[at + 1] = 0x7f;
            assert_int_equal(ts_write_file(md0p, md0, ml), 0);
        }
        free(idx);
        free(md0);
        if (done) break;
        int n = hostile_read(bad);
        if (k < 2) assert_int_equal(n, 2); /* both modes reject a record past md.0's end */
        cases++;
        found += n > 0;
    }
    print_message("%d of %d damaged datasets rejected\n", found, cases);
    assert_true(found >= cases / 8); /* most bytes are values readers do not check */
}

int main(void)
{
    setenv("FC_HANG_SECONDS", "15", 0); /* a hang aborts the test rather than blocking CI */
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(bad_put_on_one_rank),
        cmocka_unit_test(alloc_faults_in_end_step),
        cmocka_unit_test(write_faults_in_end_step),
        cmocka_unit_test(read_faults_in_end_step),
        cmocka_unit_test(readers_fail_together),
        cmocka_unit_test(hostile_metadata),
        cmocka_unit_test(comm_op_fails_on_one_rank),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
