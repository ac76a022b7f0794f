/* Streaming: a writer process and a reader process on one dataset. The parent is the reader and
 * paces the writer (a child) through a pipe, so that each behaviour is checked deterministically:
 *   - READ, timeout=0: begin_step returns GPUBP_NOT_READY at once while the writer is active;
 *   - READ, timeout=T: NOT_READY after about T seconds;
 *   - READ, timeout=-1: begin_step waits until the writer commits the next step;
 *   - each step read while the writer goes on is exact (host and simulated-device data);
 *   - after the writer's close: the remaining steps, then GPUBP_END_OF_STREAM, without waiting
 *     (even with timeout=-1);
 *   - random access never waits: it sees the steps committed at open; begin_step is WRONG_MODE. */
#include "support/rel_util.h"

#define SSTEPS 4

typedef struct writer {
    pid_t pid;
    int to_child, from_child;
} writer;

/* child: commands from the parent: 'g' write the next step now, 'd' sleep 250 ms then write it,
 * 'c' close. Replies 'O' after open, 'S' after each step, 'C' after close. */
static void writer_main(const char *path, const rel_opts *o, int in, int out)
{
    char params[256];
    rel_params(o, params, sizeof params);
    gpubp_file *w;
    rel_vars v;
    double *devbuf = o->dev ? gbp_sim_alloc(REL_DEV_N * sizeof(double)) : NULL;
    if (gpubp_open(&w, path, GPUBP_MODE_WRITE, params) || rel_define(w, o, &v)) _exit(3);
    char c = 'O';
    if (write(out, &c, 1) != 1) _exit(4);
    size_t s = 0;
    while (read(in, &c, 1) == 1) {
        if (c == 'c') break;
        if (c == 'd') {
            struct timespec ts = {0, 250 * 1000 * 1000};
            nanosleep(&ts, NULL);
        }
        if (gpubp_begin_step(w) || rel_put_step(w, o, &v, s, devbuf) || gpubp_end_step(w)) _exit(5);
        s++;
        char r = 'S';
        if (write(out, &r, 1) != 1) _exit(4);
    }
    if (gpubp_close(w)) _exit(6);
    c = 'C';
    if (write(out, &c, 1) != 1) _exit(4);
    _exit(0);
}

static void start_writer(writer *wr, const char *path, const rel_opts *o)
{
    int a[2], b[2];
    assert_int_equal(pipe(a), 0);
    assert_int_equal(pipe(b), 0);
    fflush(stdout);
    fflush(stderr);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        close(a[1]);
        close(b[0]);
        writer_main(path, o, a[0], b[1]);
    }
    close(a[0]);
    close(b[1]);
    wr->pid = pid;
    wr->to_child = a[1];
    wr->from_child = b[0];
}

static void cmd(writer *wr, char c) { assert_int_equal(write(wr->to_child, &c, 1), 1); }
static void expect(writer *wr, char want)
{
    char c = 0;
    assert_int_equal(read(wr->from_child, &c, 1), 1);
    assert_int_equal(c, want);
}
static void finish(writer *wr)
{
    int st;
    assert_int_equal(waitpid(wr->pid, &st, 0), wr->pid);
    assert_true(WIFEXITED(st));
    assert_int_equal(WEXITSTATUS(st), 0);
    close(wr->to_child);
    close(wr->from_child);
}

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + t.tv_nsec * 1e-9;
}

static gpubp_file *open_reader(const char *path, const rel_opts *o, gpubp_mode mode,
                               const char *timeout)
{
    char params[300];
    rel_params(o, params, sizeof params);
    if (timeout) {
        strcat(params, ",timeout=");
        strcat(params, timeout);
    }
    gpubp_file *r = NULL;
    TS_OK(gpubp_open(&r, path, mode, params));
    return r;
}

/* begin_step on r: its status and how long it took */
static int timed_begin(gpubp_file *r, double *secs)
{
    double t0 = now();
    int rc = gpubp_begin_step(r);
    *secs = now() - t0;
    return rc;
}

/* reads the current step of a READ handle and compares it with global step s */
static void check_step(gpubp_file *r, const rel_opts *o, size_t s)
{
    size_t cur;
    TS_OK(gpubp_current_step(r, &cur));
    assert_int_equal(cur, s);
    gpubp_variable *g, *n, *d;
    float gv[REL_ROWS * REL_COLS];
    int64_t nv;
    TS_OK(gpubp_inquire_variable(&g, r, "g"));
    TS_OK(gpubp_inquire_variable(&n, r, "n"));
    TS_OK(gpubp_get(r, g, gv, GPUBP_DEFERRED));
    TS_OK(gpubp_get(r, n, &nv, GPUBP_SYNC));
    double *dv = NULL;
    if (o->dev) {
        dv = gbp_sim_alloc(REL_DEV_N * sizeof(double));
        assert_non_null(dv);
        TS_OK(gpubp_inquire_variable(&d, r, "d"));
        TS_OK(gpubp_set_memory_space(d, GPUBP_MEM_GPU));
        TS_OK(gpubp_get(r, d, dv, GPUBP_DEFERRED));
    }
    TS_OK(gpubp_end_step(r)); /* performs the deferred gets */
    assert_int_equal(nv, (int64_t)s);
    for (size_t i = 0; i < REL_ROWS * REL_COLS; i++) assert_true(gv[i] == ts_step_f(s, i));
    if (o->dev) {
        for (size_t i = 0; i < REL_DEV_N; i++) assert_true(dv[i] == ts_step_d(s, i));
        gbp_sim_free(dv);
    }
}

static void stream_case(const rel_opts *o, const char *name)
{
    const char *path = ts_path(name);
    rel_rmdir(path);
    writer wr;
    start_writer(&wr, path, o);
    expect(&wr, 'O');
    double t;

    /* nothing committed yet, writer active */
    gpubp_file *r0 = open_reader(path, o, GPUBP_MODE_READ, "0");
    assert_int_equal(timed_begin(r0, &t), GPUBP_NOT_READY);
    assert_true(t < 0.5);
    gpubp_file *rt = open_reader(path, o, GPUBP_MODE_READ, "0.3");
    assert_int_equal(timed_begin(rt, &t), GPUBP_NOT_READY);
    assert_true(t >= 0.29 && t < 3.0);
    /* the default timeout is 0 */
    gpubp_file *rd = open_reader(path, o, GPUBP_MODE_READ, NULL);
    assert_int_equal(timed_begin(rd, &t), GPUBP_NOT_READY);
    assert_true(t < 0.5);
    TS_OK(gpubp_close(rd));

    /* step 0 committed: every reader gets it */
    cmd(&wr, 'g');
    expect(&wr, 'S');
    assert_int_equal(timed_begin(r0, &t), GPUBP_OK);
    check_step(r0, o, 0);
    assert_int_equal(timed_begin(rt, &t), GPUBP_OK);
    check_step(rt, o, 0);
    assert_int_equal(timed_begin(r0, &t), GPUBP_NOT_READY);

    /* timeout=-1 waits for the next step (the writer sleeps 250 ms before writing it) */
    gpubp_file *rinf = open_reader(path, o, GPUBP_MODE_READ, "-1");
    assert_int_equal(timed_begin(rinf, &t), GPUBP_OK);
    check_step(rinf, o, 0);
    cmd(&wr, 'd');
    assert_int_equal(timed_begin(rinf, &t), GPUBP_OK);
    assert_true(t >= 0.1);
    check_step(rinf, o, 1);
    expect(&wr, 'S');

    /* random access never waits: it sees the steps committed at open */
    gpubp_file *ra = open_reader(path, o, GPUBP_MODE_READ_RANDOM_ACCESS, "-1");
    size_t ns;
    TS_OK(gpubp_steps(ra, &ns));
    assert_int_equal(ns, 2);
    TS_ERR(gpubp_begin_step(ra), GPUBP_ERR_WRONG_MODE);
    size_t steps[2] = {0, 1};
    TS_OK(gpubp_close(ra));
    assert_int_equal(rel_verify(path, o, steps, 2), 0);

    /* the writer goes on and closes; the step-mode readers drain, then END_OF_STREAM */
    for (size_t s = 2; s < SSTEPS; s++) {
        cmd(&wr, 'g');
        expect(&wr, 'S');
        assert_int_equal(timed_begin(rinf, &t), GPUBP_OK);
        check_step(rinf, o, s);
    }
    cmd(&wr, 'c');
    expect(&wr, 'C');
    finish(&wr);
    for (size_t s = 1; s < SSTEPS; s++) {
        assert_int_equal(timed_begin(r0, &t), GPUBP_OK);
        check_step(r0, o, s);
    }
    assert_int_equal(timed_begin(r0, &t), GPUBP_END_OF_STREAM);
    assert_int_equal(timed_begin(rinf, &t), GPUBP_END_OF_STREAM);
    assert_true(t < 0.5); /* no waiting once the writer has closed */
    assert_int_equal(timed_begin(rinf, &t), GPUBP_END_OF_STREAM);
    size_t left = 0;
    while ((timed_begin(rt, &t)) == GPUBP_OK) {
        left++;
        TS_OK(gpubp_end_step(rt));
    }
    assert_int_equal(left, SSTEPS - 1);
    TS_OK(gpubp_close(r0));
    TS_OK(gpubp_close(rt));
    TS_OK(gpubp_close(rinf));
}

static void test_stream_host(void **state)
{
    (void)state;
    rel_opts o = {0, 1, 0, 0};
    stream_case(&o, "stream_host.bp");
}

static void test_stream_simulated_device(void **state)
{
    (void)state;
    rel_opts o = {1, 2, 0, 0};
    stream_case(&o, "stream_dev.bp");
}

/* a reader that opens before the writer created anything: the directory does not exist yet */
static void test_stream_open_before_writer(void **state)
{
    (void)state;
    const char *path = ts_path("stream_none.bp");
    rel_rmdir(path);
    gpubp_file *r = NULL;
    TS_ERR(gpubp_open(&r, path, GPUBP_MODE_READ, "timeout=0"), GPUBP_ERR_NOT_BP4);
    assert_null(r);
}

/* a free-running writer and a timeout=-1 reader: all steps, in order, then END_OF_STREAM */
static void test_stream_free_running(void **state)
{
    (void)state;
    rel_opts o = {1, 1, 0, 0};
    const char *path = ts_path("stream_free.bp");
    rel_rmdir(path);
    writer wr;
    start_writer(&wr, path, &o);
    expect(&wr, 'O');
    gpubp_file *r = open_reader(path, &o, GPUBP_MODE_READ, "-1");
    for (int i = 0; i < 12; i++) cmd(&wr, 'g');
    cmd(&wr, 'c');
    size_t s = 0;
    int rc;
    while ((rc = gpubp_begin_step(r)) == GPUBP_OK) check_step(r, &o, s++);
    assert_int_equal(rc, GPUBP_END_OF_STREAM);
    assert_int_equal(s, 12);
    for (int i = 0; i < 12; i++) expect(&wr, 'S');
    expect(&wr, 'C');
    finish(&wr);
    TS_OK(gpubp_close(r));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_stream_host),
        cmocka_unit_test(test_stream_simulated_device),
        cmocka_unit_test(test_stream_open_before_writer),
        cmocka_unit_test(test_stream_free_running),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
