/* The parallel protocol of gpubp_open_comm, with threads as ranks (fake_comm.c): decomposed,
 * uneven and local arrays over 1-4 ranks, subfile groups, parallel and funnel aggregation,
 * a one-rank communicator giving gpubp_open's bytes, failures on one rank, append, a streaming
 * parallel reader, device (simulated) buffers. Every dataset passes bp4verify.py. */
#include <pthread.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "comm/fake_comm.h"
#include "comm/outcome.h"
#include "memspace/simdev.h"
#include "support/test_support.h"

#define NC 5       /* columns of T */
#define STEPS 3

/* ---- the decomposition: rank r owns rows [row0(r), row0(r) + rows(r)) of T ----------------- */

static size_t rows(int r) { return 2 + (size_t)r; }
static size_t row0(int r) { return (size_t)r * 2 + (size_t)r * ((size_t)r - 1) / 2; }
static size_t total_rows(int n) { return row0(n); }
static double tval(int step, size_t row, size_t col) { return step * 1000.0 + row * 10.0 + col; }

typedef struct wcase {
    const char *path;
    const char *params;
    int device;          /* buffers in simulated device memory */
    int fail_rank;       /* a put fails on this rank at step 1 (-1: none) */
    int mismatch_rank;   /* this rank defines T as float (-1: none) */
    int steps;
    int step0;           /* values start at this step (append) */
    outcome o;
} wcase;

static void write_body(void *ctx, int rank, int size, void *arg)
{
    wcase *w = arg;
    outcome *o = &w->o;
    gpubp_file *f;
    RK(gpubp_open_comm(&f, w->path, w->step0 ? GPUBP_MODE_APPEND : GPUBP_MODE_WRITE, w->params,
                       &fc_ops, fc_dup(ctx)));
    size_t shape[2] = {total_rows(size), NC}, start[2] = {row0(rank), 0}, count[2] = {rows(rank), NC};
    gpubp_variable *t, *l, *s, *str;
    int tt = rank == w->mismatch_rank ? GPUBP_TYPE_FLOAT : GPUBP_TYPE_DOUBLE;
    RK(gpubp_define_variable(&t, f, "T", tt, 2, shape, start, count));
    size_t lc = (size_t)rank + 1;
    RK(gpubp_define_variable(&l, f, "L", GPUBP_TYPE_INT32, 1, NULL, NULL, &lc));
    RK(gpubp_define_variable(&s, f, "step", GPUBP_TYPE_INT32, 0, NULL, NULL, NULL));
    RK(gpubp_define_variable(&str, f, "name", GPUBP_TYPE_STRING, 0, NULL, NULL, NULL));
    if (w->device) RK(gpubp_set_memory_space(t, GPUBP_MEM_GPU));
    RK(gpubp_define_attribute(f, "unit", GPUBP_TYPE_STRING, "kelvin", 1));
    double who = rank;
    RK(gpubp_define_attribute(f, "writer", GPUBP_TYPE_DOUBLE, &who, 1));
    size_t tb = rows(rank) * NC * sizeof(double);
    double *host = malloc(tb);
    double *buf = w->device ? gbp_sim_alloc(tb) : host;
    int32_t lv[MAXR];
    for (int k = 0; k < w->steps; k++) {
        int step = w->step0 + k;
        for (size_t i = 0; i < rows(rank); i++)
            for (size_t j = 0; j < NC; j++) host[i * NC + j] = tval(step, row0(rank) + i, j);
        if (w->device) memcpy(buf, host, tb); /* simulated device memory is host memory */
        for (size_t i = 0; i < lc; i++) lv[i] = rank * 100 + step * 10 + (int)i;
        RK(gpubp_begin_step(f));
        if (rank % 2 == 1) { /* odd ranks put T as two blocks (first row, then the rest) */
            size_t c1[2] = {1, NC}, s2[2] = {row0(rank) + 1, 0}, c2[2] = {rows(rank) - 1, NC};
            RK(gpubp_set_selection(t, 2, start, c1));
            RK(gpubp_put(f, t, buf, GPUBP_SYNC));
            RK(gpubp_set_selection(t, 2, s2, c2));
            RK(gpubp_put(f, t, buf + NC, k % 2 ? GPUBP_SYNC : GPUBP_DEFERRED));
            RK(gpubp_set_selection(t, 2, start, count));
        } else {
            RK(gpubp_put(f, t, buf, k % 2 ? GPUBP_DEFERRED : GPUBP_SYNC));
        }
        if (k == 1 && rank == w->fail_rank) {
            int rc = gpubp_put(f, l, NULL, GPUBP_SYNC);
            if (rc != GPUBP_ERR_INVALID_ARG) note(o, rank, "bad put gave %d", rc);
        } else {
            RK(gpubp_put(f, l, lv, GPUBP_DEFERRED));
        }
        if (rank == 0) {
            RK(gpubp_put(f, s, &step, GPUBP_SYNC));
            RK(gpubp_put(f, str, "run-a", GPUBP_SYNC));
        }
        record(o, rank, k, gpubp_end_step(f));
    }
    int rc = gpubp_close(f);
    if (rc != GPUBP_OK && w->fail_rank < 0 && w->mismatch_rank < 0)
        note(o, rank, "close -> %d: %s", rc, gpubp_last_error());
    if (w->device) gbp_sim_free(buf);
    free(host);
}

static void run_write(wcase *w, int n, int per_node)
{
    outcome_init(&w->o);
    if (!w->steps) w->steps = STEPS;
    assert_int_equal(fc_run(n, per_node, write_body, w), 0);
}

/* Serial check of a dataset written by n ranks with steps [first, first + nsteps). */
static void check_serial(const char *path, int n, int first, int nsteps)
{
    assert_int_equal(ts_bp4check(path), 0);
    gpubp_file *f;
    TS_OK(gpubp_open(&f, path, GPUBP_MODE_READ_RANDOM_ACCESS, NULL));
    size_t steps;
    TS_OK(gpubp_steps(f, &steps));
    assert_int_equal(steps, (size_t)nsteps);
    gpubp_variable *t, *l;
    TS_OK(gpubp_inquire_variable(&t, f, "T"));
    TS_OK(gpubp_inquire_variable(&l, f, "L"));
    size_t tr = total_rows(n), z[2] = {0, 0}, sh[2] = {tr, NC};
    double *all = malloc(tr * NC * sizeof *all);
    for (int k = 0; k < nsteps; k++) {
        TS_OK(gpubp_set_selection(t, 2, z, sh));
        TS_OK(gpubp_set_step_selection(t, (size_t)k, 1));
        TS_OK(gpubp_get(f, t, all, GPUBP_SYNC));
        for (size_t i = 0; i < tr; i++)
            for (size_t j = 0; j < NC; j++) assert_true(all[i * NC + j] == tval(first + k, i, j));
        /* blocks in rank order, then put order within a rank */
        size_t nb, bstart[2], bcount[2], b = 0;
        TS_OK(gpubp_variable_blocks(t, (size_t)k, &nb));
        for (int r = 0; r < n; r++) {
            size_t parts = r % 2 ? 2 : 1;
            for (size_t p = 0; p < parts; p++, b++) {
                TS_OK(gpubp_variable_block_info(t, (size_t)k, b, bstart, bcount, NULL, NULL));
                assert_int_equal(bstart[0], row0(r) + (p ? 1 : 0));
            }
        }
        assert_int_equal(nb, b);
        TS_OK(gpubp_variable_blocks(l, (size_t)k, &nb));
        assert_int_equal(nb, (size_t)n);
        for (int r = 0; r < n; r++) {
            int32_t lv[MAXR];
            TS_OK(gpubp_set_block_selection(l, (size_t)r));
            TS_OK(gpubp_set_step_selection(l, (size_t)k, 1));
            TS_OK(gpubp_get(f, l, lv, GPUBP_SYNC));
            for (int i = 0; i <= r; i++) assert_int_equal(lv[i], r * 100 + (first + k) * 10 + i);
        }
    }
    double who = -1;
    TS_OK(gpubp_attribute_data(f, "writer", &who));
    assert_true(who == 0.0); /* the first rank's attribute */
    free(all);
    TS_OK(gpubp_close(f));
}

/* ---- parallel reading --------------------------------------------------------------------- */

typedef struct rcase {
    const char *path;
    const char *params;
    int nsteps, first, nwriters;
    outcome o;
} rcase;

static void read_body(void *ctx, int rank, int size, void *arg)
{
    rcase *c = arg;
    outcome *o = &c->o;
    gpubp_file *f;
    RK(gpubp_open_comm(&f, c->path, GPUBP_MODE_READ, c->params, &fc_ops, fc_dup(ctx)));
    /* a sub-box spanning several writers' blocks, different on each reader */
    size_t tr = total_rows(c->nwriters), r0 = (size_t)rank % 2, nr = tr - r0 - 1;
    size_t st[2] = {r0, 1}, cn[2] = {nr, NC - 2};
    double *buf = malloc(nr * NC * sizeof *buf);
    int k = 0, rc;
    while ((rc = gpubp_begin_step(f)) == GPUBP_OK) {
        gpubp_variable *t;
        RK(gpubp_inquire_variable(&t, f, "T"));
        RK(gpubp_set_selection(t, 2, st, cn));
        RK(gpubp_get(f, t, buf, GPUBP_DEFERRED));
        RK(gpubp_end_step(f));
        for (size_t i = 0; i < nr; i++)
            for (size_t j = 0; j < NC - 2; j++)
                if (buf[i * (NC - 2) + j] != tval(c->first + k, r0 + i, j + 1)) {
                    note(o, rank, "step %d: T[%zu][%zu] = %g", k, r0 + i, j + 1,
                         buf[i * (NC - 2) + j]);
                    k = -1000;
                }
        k++;
    }
    if (rc != GPUBP_END_OF_STREAM) note(o, rank, "begin_step -> %d: %s", rc, gpubp_last_error());
    if (k != c->nsteps) note(o, rank, "read %d steps, expected %d", k, c->nsteps);
    free(buf);
    RK(gpubp_close(f));
}

static void check_parallel(const char *path, int nwriters, int nreaders, int first, int nsteps)
{
    rcase c = {path, NULL, nsteps, first, nwriters, .o = {.bad = 0}};
    outcome_init(&c.o);
    assert_int_equal(fc_run(nreaders, 0, read_body, &c), 0);
    assert_clean(&c.o);
}

/* ---- cases -------------------------------------------------------------------------------- */

static void written_by(int n, int per_node, const char *params, const char *name)
{
    wcase w = {ts_path(name), params, 0, -1, -1, 0, 0, .o = {.bad = 0}};
    run_write(&w, n, per_node);
    assert_clean(&w.o);
    check_serial(w.path, n, 0, STEPS);
    check_parallel(w.path, n, 3, 0, STEPS);
}

static void ranks_1_to_4(void **state)
{
    (void)state;
    written_by(1, 0, NULL, "r1.bp");
    written_by(2, 0, NULL, "r2.bp");
    written_by(3, 1, NULL, "r3_per_node.bp");  /* three nodes: data.0 … data.2 */
    assert_true(ts_exists(ts_path("r3_per_node.bp/data.2")));
    written_by(4, 0, "aggregators=2", "r4_agg2.bp");
    assert_true(ts_exists(ts_path("r4_agg2.bp/data.1")));
    assert_false(ts_exists(ts_path("r4_agg2.bp/data.2")));
    written_by(4, 2, "subfiles=2", "r4_sub2.bp"); /* 2 nodes x 2 stripes: data.0 … data.3 */
    assert_true(ts_exists(ts_path("r4_sub2.bp/data.3")));
    written_by(3, 0, "compress=zlib", "r3_zlib.bp");
}

static int same_file(const char *a, const char *b, long skip_from, long skip_stride)
{
    size_t la, lb;
    unsigned char *x = ts_read_file(a, &la), *y = ts_read_file(b, &lb);
    int same = x && y && la == lb;
    for (size_t i = 0; same && i < la; i++) {
        /* md.idx: each record's time stamp (bytes 48-55 of the record) may differ */
        if (skip_stride && (long)i >= skip_from && ((long)i - skip_from) % skip_stride >= 48 &&
            ((long)i - skip_from) % skip_stride < 56)
            continue;
        same = x[i] == y[i];
    }
    free(x);
    free(y);
    return same;
}

static void serial_body(const char *path, const char *params)
{
    /* what write_body does on one rank, through gpubp_open */
    gpubp_file *f;
    TS_OK(gpubp_open(&f, path, GPUBP_MODE_WRITE, params));
    size_t shape[2] = {2, NC}, start[2] = {0, 0}, count[2] = {2, NC}, lc = 1;
    gpubp_variable *t, *l, *s, *str;
    TS_OK(gpubp_define_variable(&t, f, "T", GPUBP_TYPE_DOUBLE, 2, shape, start, count));
    TS_OK(gpubp_define_variable(&l, f, "L", GPUBP_TYPE_INT32, 1, NULL, NULL, &lc));
    TS_OK(gpubp_define_variable(&s, f, "step", GPUBP_TYPE_INT32, 0, NULL, NULL, NULL));
    TS_OK(gpubp_define_variable(&str, f, "name", GPUBP_TYPE_STRING, 0, NULL, NULL, NULL));
    TS_OK(gpubp_define_attribute(f, "unit", GPUBP_TYPE_STRING, "kelvin", 1));
    double who = 0;
    TS_OK(gpubp_define_attribute(f, "writer", GPUBP_TYPE_DOUBLE, &who, 1));
    double buf[2 * NC];
    for (int k = 0; k < STEPS; k++) {
        for (size_t i = 0; i < 2 * NC; i++) buf[i] = tval(k, i / NC, i % NC);
        int32_t lv = k * 10;
        TS_OK(gpubp_begin_step(f));
        TS_OK(gpubp_put(f, t, buf, k % 2 ? GPUBP_DEFERRED : GPUBP_SYNC));
        TS_OK(gpubp_put(f, l, &lv, GPUBP_DEFERRED));
        TS_OK(gpubp_put(f, s, &k, GPUBP_SYNC));
        TS_OK(gpubp_put(f, str, "run-a", GPUBP_SYNC));
        TS_OK(gpubp_end_step(f));
    }
    TS_OK(gpubp_close(f));
}

static void one_rank_is_serial(void **state)
{
    (void)state;
    const char *params[] = {NULL, "subfiles=2", "compress=zlib"};
    for (size_t i = 0; i < sizeof params / sizeof params[0]; i++) {
        char s[64], p[64];
        snprintf(s, sizeof s, "serial%zu.bp", i);
        snprintf(p, sizeof p, "comm%zu.bp", i);
        serial_body(ts_path(s), params[i]);
        wcase w = {ts_path(p), params[i], 0, -1, -1, 0, 0, .o = {.bad = 0}};
        run_write(&w, 1, 0);
        assert_clean(&w.o);
        const char *files[] = {"data.0", "data.1", "md.0"};
        for (size_t k = 0; k < 3; k++) {
            char a[4200], b[4200];
            snprintf(a, sizeof a, "%s/%s", ts_path(s), files[k]);
            snprintf(b, sizeof b, "%s/%s", ts_path(p), files[k]);
            assert_int_equal(ts_exists(a), ts_exists(b));
            if (ts_exists(a)) assert_true(same_file(a, b, 0, 0));
        }
        char a[4200], b[4200];
        snprintf(a, sizeof a, "%s/md.idx", ts_path(s));
        snprintf(b, sizeof b, "%s/md.idx", ts_path(p));
        assert_true(same_file(a, b, 64, 64));
    }
}

static void funnel_equals_parallel(void **state)
{
    (void)state;
    written_by(4, 0, "aggregators=2,aggregation=funnel,chunk_mib=1", "funnel.bp");
    written_by(4, 0, "aggregators=2", "parallel.bp");
    const char *files[] = {"data.0", "data.1", "md.0"};
    for (size_t k = 0; k < 3; k++) {
        char a[4200], b[4200];
        snprintf(a, sizeof a, "%s/%s", ts_path("funnel.bp"), files[k]);
        snprintf(b, sizeof b, "%s/%s", ts_path("parallel.bp"), files[k]);
        assert_true(same_file(a, b, 0, 0));
    }
}

/* A put that fails on one rank fails the step on every rank; the other steps commit. */
static void failure_on_one_rank(void **state)
{
    (void)state;
    const char *modes[] = {"aggregators=1", "aggregators=1,aggregation=funnel"};
    for (size_t m = 0; m < 2; m++) {
        wcase w = {ts_path(m ? "fail_funnel.bp" : "fail.bp"), modes[m], 0, 1, -1, 0, 0, .o = {.bad = 0}};
        run_write(&w, 3, 0);
        assert_clean(&w.o);
        for (int r = 0; r < 3; r++) {
            assert_int_equal(w.o.end_rc[r][0], GPUBP_OK);
            assert_int_equal(w.o.end_rc[r][1], GPUBP_ERR_INVALID_ARG);
            assert_int_equal(w.o.end_rc[r][2], GPUBP_OK);
            assert_non_null(strstr(w.o.end_msg[r], "failed on 1 of 3 ranks: rank 1:"));
            assert_non_null(strstr(w.o.end_msg[r], "data is NULL"));
        }
        assert_int_equal(ts_bp4check(w.path), 0);
        gpubp_file *f;
        TS_OK(gpubp_open(&f, w.path, GPUBP_MODE_READ_RANDOM_ACCESS, NULL));
        size_t steps;
        TS_OK(gpubp_steps(f, &steps));
        assert_int_equal(steps, 2);
        gpubp_variable *t;
        TS_OK(gpubp_inquire_variable(&t, f, "T"));
        double v;
        size_t st[2] = {total_rows(3) - 1, NC - 1}, one[2] = {1, 1};
        TS_OK(gpubp_set_selection(t, 2, st, one));
        TS_OK(gpubp_set_step_selection(t, 1, 1));
        TS_OK(gpubp_get(f, t, &v, GPUBP_SYNC));
        assert_true(v == tval(2, st[0], st[1])); /* the third step, after the rolled-back one */
        TS_OK(gpubp_close(f));
    }
}

static void type_conflict_between_ranks(void **state)
{
    (void)state;
    wcase w = {ts_path("mismatch.bp"), NULL, 0, -1, 2, 1, 0, .o = {.bad = 0}};
    run_write(&w, 3, 0);
    assert_clean(&w.o);
    for (int r = 0; r < 3; r++) {
        assert_int_equal(w.o.end_rc[r][0], GPUBP_ERR_TYPE_MISMATCH);
        assert_non_null(strstr(w.o.end_msg[r], "'T' is double on rank 0 but float on rank 2"));
    }
}

static void append_with_other_rank_count(void **state)
{
    (void)state;
    wcase a = {ts_path("append.bp"), NULL, 0, -1, -1, 2, 0, .o = {.bad = 0}};
    run_write(&a, 2, 0);
    assert_clean(&a.o);
    /* a second run continues the steps */
    wcase b = {a.path, NULL, 0, -1, -1, 1, 2, .o = {.bad = 0}};
    run_write(&b, 2, 0);
    assert_clean(&b.o);
    check_serial(a.path, 2, 0, 3);
    check_parallel(a.path, 2, 2, 0, 3);
}

static void device_buffers(void **state)
{
    (void)state;
    wcase w = {ts_path("device.bp"), "device=simulated,gpu_layout=row_major,aggregators=2", 1,
               -1, -1, 0, 0, .o = {.bad = 0}};
    run_write(&w, 3, 0);
    assert_clean(&w.o);
    check_serial(w.path, 3, 0, STEPS);
}

/* A parallel reader follows a parallel writer that is still writing. */
typedef struct stream_ctx {
    wcase w;
    int n;
} stream_ctx;

static void *writer_thread(void *p)
{
    stream_ctx *s = p;
    fc_run(s->n, 0, write_body, &s->w);
    return NULL;
}

static void streaming_reader(void **state)
{
    (void)state;
    /* copies: ts_path's buffers are reused after 16 calls, and the writer thread keeps the path */
    char path[8300], idx[8400];
    snprintf(path, sizeof path, "%s", ts_path("stream.bp"));
    snprintf(idx, sizeof idx, "%s/md.idx", path);
    stream_ctx s = {{path, NULL, 0, -1, -1, 4, 0, .o = {.bad = 0}}, 2};
    outcome_init(&s.w.o);
    /* the reader may start before the writer created anything: wait for md.idx */
    pthread_t t;
    assert_int_equal(pthread_create(&t, NULL, writer_thread, &s), 0);
    for (int i = 0; i < 2000 && !ts_exists(idx); i++) {
        struct timespec ms = {0, 1000000};
        nanosleep(&ms, NULL);
    }
    rcase c = {s.w.path, "timeout=30", 4, 0, 2, .o = {.bad = 0}};
    outcome_init(&c.o);
    assert_int_equal(fc_run(2, 0, read_body, &c), 0);
    pthread_join(t, NULL);
    assert_clean(&s.w.o);
    assert_clean(&c.o);
}

static void bad_communicator(void **state)
{
    (void)state;
    gpubp_file *f = (gpubp_file *)1;
    assert_int_equal(gpubp_open_comm(&f, ts_path("x.bp"), GPUBP_MODE_WRITE, NULL, NULL, NULL),
                     GPUBP_ERR_INVALID_ARG);
    assert_null(f);
    assert_non_null(strstr(gpubp_last_error(), "ops or ctx is NULL"));
    gpubp_comm_ops old = fc_ops;
    old.version = 0;
    int dummy;
    assert_int_equal(gpubp_open_comm(&f, ts_path("x.bp"), GPUBP_MODE_WRITE, NULL, &old, &dummy),
                     GPUBP_ERR_INVALID_ARG);
    assert_non_null(strstr(gpubp_last_error(), "version"));
    assert_int_equal(gpubp_comm_error(GPUBP_ERR_NOT_SUPPORTED, 7, "no MPI"),
                     GPUBP_ERR_NOT_SUPPORTED);
    assert_string_equal(gpubp_last_error(), "no MPI");
    assert_int_equal(gpubp_last_errno(), 7);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(ranks_1_to_4),
        cmocka_unit_test(one_rank_is_serial),
        cmocka_unit_test(funnel_equals_parallel),
        cmocka_unit_test(failure_on_one_rank),
        cmocka_unit_test(type_conflict_between_ranks),
        cmocka_unit_test(append_with_other_rank_count),
        cmocka_unit_test(device_buffers),
        cmocka_unit_test(streaming_reader),
        cmocka_unit_test(bad_communicator),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
