/* The I/O layer through the public API: absent/empty md.idx, the writer-active flag (md.idx byte
 * 38), a reader following a live writer, a killed writer whose file is then appended, I/O errors
 * with errno, WRITE replacing a foreign (BP5) directory. */
#include <errno.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "support/test_support.h"

static int idx_byte(const char *ds, long off) { return ts_file_byte(ts_join(ds, "md.idx"), off); }

/* the value written at step s */
static double sval(size_t s, size_t i) { return (double)s * 100.0 + (double)i + 0.5; }

/* a writer of "x" (4 doubles) and "n" (uint32 = step) */
typedef struct wr {
    gpubp_file *f;
    gpubp_variable *x, *n;
} wr;

static wr writer_open(const char *path, gpubp_mode mode, const char *params)
{
    wr w;
    w.f = ts_open(path, mode, params);
    size_t shape[1] = {4};
    w.x = ts_define(w.f, "x", GPUBP_TYPE_DOUBLE, 1, shape, NULL);
    w.n = ts_define(w.f, "n", GPUBP_TYPE_UINT32, 0, NULL, NULL);
    return w;
}

static void writer_step(wr *w, size_t s)
{
    double d[4];
    for (size_t i = 0; i < 4; i++) d[i] = sval(s, i);
    uint32_t n = (uint32_t)s;
    TS_OK(gpubp_begin_step(w->f));
    TS_OK(gpubp_put(w->f, w->x, d, GPUBP_SYNC));
    TS_OK(gpubp_put(w->f, w->n, &n, GPUBP_SYNC));
    TS_OK(gpubp_end_step(w->f));
}

/* random access: exactly nsteps steps with the values of writer_step */
static void check_steps(const char *path, size_t nsteps)
{
    gpubp_file *r = ts_open(path, GPUBP_MODE_READ_RANDOM_ACCESS, NULL);
    size_t ns = 99;
    TS_OK(gpubp_steps(r, &ns));
    assert_int_equal(ns, nsteps);
    if (nsteps) {
        gpubp_variable *x, *n;
        TS_OK(gpubp_inquire_variable(&x, r, "x"));
        TS_OK(gpubp_inquire_variable(&n, r, "n"));
        for (size_t s = 0; s < nsteps; s++) {
            double d[4];
            uint32_t k = 999;
            TS_OK(gpubp_set_step_selection(x, s, 1));
            TS_OK(gpubp_set_step_selection(n, s, 1));
            TS_OK(gpubp_get(r, x, d, GPUBP_SYNC));
            TS_OK(gpubp_get(r, n, &k, GPUBP_SYNC));
            assert_int_equal(k, s);
            for (size_t i = 0; i < 4; i++) assert_true(d[i] == sval(s, i));
        }
    }
    TS_OK(gpubp_close(r));
}

/* asserts that bp4verify.py accepts path and that it reads back as nsteps steps of writer_step */
static void check_dataset(const char *path, size_t nsteps)
{
    assert_int_equal(ts_bp4check(path), 0);
    check_steps(path, nsteps);
}

/* Closes w, then check_dataset(path, nsteps). */
static void close_and_check(wr *w, const char *path, size_t nsteps)
{
    TS_OK(gpubp_close(w->f));
    check_dataset(path, nsteps);
}

/* Forks a writer of x and n (as writer_step) that commits steps 0 .. kill_at - 1, then puts step
 * kill_at, flushes it (perform_puts) and SIGKILLs itself before end_step; returns its wait status
 * after asserting that it died of a signal. */
static int killed_writer(const char *path, size_t kill_at)
{
    fflush(NULL);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        gpubp_file *f = NULL;
        if (gpubp_open(&f, path, GPUBP_MODE_WRITE, NULL) != GPUBP_OK) _exit(3);
        gpubp_variable *x, *n;
        size_t shape[1] = {4}, st[1] = {0};
        gpubp_define_variable(&x, f, "x", GPUBP_TYPE_DOUBLE, 1, shape, st, shape);
        gpubp_define_variable(&n, f, "n", GPUBP_TYPE_UINT32, 0, NULL, NULL, NULL);
        for (size_t s = 0; s <= kill_at; s++) {
            double d[4];
            for (size_t i = 0; i < 4; i++) d[i] = sval(s, i);
            uint32_t k = (uint32_t)s;
            if (gpubp_begin_step(f) != GPUBP_OK) _exit(4);
            gpubp_put(f, x, d, GPUBP_SYNC);
            gpubp_put(f, n, &k, GPUBP_SYNC);
            if (s == kill_at) {
                gpubp_perform_puts(f); /* data may be out; the step is not committed */
                kill(getpid(), SIGKILL);
            }
            if (gpubp_end_step(f) != GPUBP_OK) _exit(5);
        }
        _exit(6);
    }
    int status = 0;
    assert_int_equal(waitpid(pid, &status, 0), pid);
    assert_true(WIFSIGNALED(status));
    return status;
}

/* Opens path in READ mode, ends `n` steps and asserts that the next begin_step returns `next`. */
static void read_steps_then(const char *path, int n, int next)
{
    gpubp_file *r = ts_open(path, GPUBP_MODE_READ, NULL);
    for (int s = 0; s < n; s++) {
        TS_OK(gpubp_begin_step(r));
        TS_OK(gpubp_end_step(r));
    }
    assert_int_equal(gpubp_begin_step(r), next);
    TS_OK(gpubp_close(r));
}

static void test_absent_md_idx_means_no_steps(void **state)
{
    (void)state;
    /* what a writer that has not finished its first step may leave: files, but no md.idx */
    const char *path = ts_path("nothing_yet.bp");
    assert_int_equal(mkdir(path, 0777), 0);
    assert_int_equal(ts_write_file(ts_join(path, "data.0"), "", 0), 0);
    assert_int_equal(ts_write_file(ts_join(path, "md.0"), "", 0), 0);
    check_steps(path, 0);
    gpubp_file *r = ts_open(path, GPUBP_MODE_READ_RANDOM_ACCESS, NULL);
    size_t n = 9;
    const char *const *names;
    TS_OK(gpubp_available_variables(r, &n, &names));
    assert_int_equal(n, 0);
    gpubp_variable *v;
    TS_ERR(gpubp_inquire_variable(&v, r, "x"), GPUBP_ERR_NOT_FOUND);
    TS_OK(gpubp_close(r));
    r = ts_open(path, GPUBP_MODE_READ, NULL);
    int rc = gpubp_begin_step(r);
    assert_true(rc == GPUBP_END_OF_STREAM || rc == GPUBP_NOT_READY);
    TS_OK(gpubp_close(r));
}

static void test_empty_md_idx_means_no_steps(void **state)
{
    (void)state;
    const char *path = ts_path("empty_idx.bp");
    assert_int_equal(mkdir(path, 0777), 0);
    assert_int_equal(ts_write_file(ts_join(path, "md.idx"), "", 0), 0);
    assert_int_equal(ts_write_file(ts_join(path, "md.0"), "", 0), 0);
    assert_int_equal(ts_write_file(ts_join(path, "data.0"), "", 0), 0);
    check_steps(path, 0);
    gpubp_file *r = ts_open(path, GPUBP_MODE_READ, NULL);
    int rc = gpubp_begin_step(r);
    assert_true(rc == GPUBP_END_OF_STREAM || rc == GPUBP_NOT_READY);
    TS_OK(gpubp_close(r));
    /* and it can be appended to */
    wr w = writer_open(path, GPUBP_MODE_APPEND, NULL);
    writer_step(&w, 0);
    close_and_check(&w, path, 1);
}

/* md.idx: nothing before the first step; header (active 1) + record with it; 0 after close. */
static void test_active_flag(void **state)
{
    (void)state;
    const char *path = ts_path("active.bp");
    wr w = writer_open(path, GPUBP_MODE_WRITE, NULL);
    assert_true(ts_file_size(ts_join(path, "md.idx")) <= 0); /* absent or empty */
    writer_step(&w, 0);
    assert_int_equal(ts_file_size(ts_join(path, "md.idx")), 128);
    assert_int_equal(idx_byte(path, 36), 0); /* little-endian */
    assert_int_equal(idx_byte(path, 37), 4); /* BP4 */
    assert_int_equal(idx_byte(path, 38), 1); /* writer active */
    assert_int_equal(ts_file_byte(ts_join(path, "md.0"), 38), 0);
    assert_int_equal(ts_file_byte(ts_join(path, "data.0"), 38), 0);
    assert_int_equal(ts_file_byte(ts_join(path, "md.0"), 37), 4);
    /* a reader sees the committed step while the writer is open */
    check_steps(path, 1);
    writer_step(&w, 1);
    assert_int_equal(ts_file_size(ts_join(path, "md.idx")), 192);
    assert_int_equal(idx_byte(path, 38), 1);
    TS_OK(gpubp_close(w.f));
    assert_int_equal(idx_byte(path, 38), 0);
    assert_int_equal(ts_file_size(ts_join(path, "md.idx")), 192);
    assert_false(ts_exists(ts_join(path, "mmd.0")));
    check_dataset(path, 2);
}

static void test_append_sets_flag_again(void **state)
{
    (void)state;
    const char *path = ts_path("append_flag.bp");
    wr w = writer_open(path, GPUBP_MODE_WRITE, NULL);
    writer_step(&w, 0);
    TS_OK(gpubp_close(w.f));
    assert_int_equal(idx_byte(path, 38), 0);
    w = writer_open(path, GPUBP_MODE_APPEND, NULL);
    writer_step(&w, 1);
    assert_int_equal(idx_byte(path, 38), 1);
    assert_int_equal(ts_file_size(ts_join(path, "md.idx")), 192);
    TS_OK(gpubp_close(w.f));
    assert_int_equal(idx_byte(path, 38), 0);
    check_dataset(path, 2);
}

/* A READ-mode reader follows a live writer: NOT_READY while it is active and has no new step,
 * the new step when it comes, END_OF_STREAM after close. */
static void test_reader_follows_writer(void **state)
{
    (void)state;
    const char *path = ts_path("follow.bp");
    wr w = writer_open(path, GPUBP_MODE_WRITE, NULL);
    writer_step(&w, 0);
    gpubp_file *r = ts_open(path, GPUBP_MODE_READ, NULL);
    TS_OK(gpubp_begin_step(r));
    gpubp_variable *n;
    uint32_t k = 99;
    TS_OK(gpubp_inquire_variable(&n, r, "n"));
    TS_OK(gpubp_get(r, n, &k, GPUBP_SYNC));
    assert_int_equal(k, 0);
    TS_OK(gpubp_end_step(r));
    assert_int_equal(gpubp_begin_step(r), GPUBP_NOT_READY);
    writer_step(&w, 1);
    TS_OK(gpubp_begin_step(r));
    size_t cur = 9;
    TS_OK(gpubp_current_step(r, &cur));
    assert_int_equal(cur, 1);
    TS_OK(gpubp_inquire_variable(&n, r, "n"));
    TS_OK(gpubp_get(r, n, &k, GPUBP_SYNC));
    assert_int_equal(k, 1);
    TS_OK(gpubp_end_step(r));
    TS_OK(gpubp_close(w.f));
    assert_int_equal(gpubp_begin_step(r), GPUBP_END_OF_STREAM);
    TS_OK(gpubp_close(r));
}

/* timeout=SECONDS: begin_step waits that long for a step from a live writer. */
static void test_read_timeout(void **state)
{
    (void)state;
    const char *path = ts_path("timeout.bp");
    wr w = writer_open(path, GPUBP_MODE_WRITE, NULL);
    writer_step(&w, 0);
    gpubp_file *r = ts_open(path, GPUBP_MODE_READ, "timeout=0.3");
    TS_OK(gpubp_begin_step(r));
    TS_OK(gpubp_end_step(r));
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    assert_int_equal(gpubp_begin_step(r), GPUBP_NOT_READY);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    double dt = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) * 1e-9;
    assert_true(dt >= 0.25);
    assert_true(dt < 10.0);
    TS_OK(gpubp_close(w.f));
    assert_int_equal(gpubp_begin_step(r), GPUBP_END_OF_STREAM);
    TS_OK(gpubp_close(r));
}

/* A writer killed after 2 committed steps (and in the middle of a third) leaves a file whose
 * committed steps read back, whose flag still says active, and that APPEND continues. */
static void test_killed_writer_then_append(void **state)
{
    (void)state;
    const char *path = ts_path("killed.bp");
    int status = killed_writer(path, 2);
    assert_int_equal(WTERMSIG(status), SIGKILL);

    assert_int_equal(idx_byte(path, 38), 1); /* nobody cleared it */
    check_steps(path, 2);
    /* READ mode: 2 steps, then NOT_READY (the flag says a writer is active) */
    read_steps_then(path, 2, GPUBP_NOT_READY);

    wr w = writer_open(path, GPUBP_MODE_APPEND, NULL);
    size_t cur = 99;
    TS_OK(gpubp_current_step(w.f, &cur));
    assert_int_equal(cur, 2);
    writer_step(&w, 2);
    writer_step(&w, 3);
    TS_OK(gpubp_close(w.f));
    assert_int_equal(idx_byte(path, 38), 0);
    assert_int_equal(ts_file_size(ts_join(path, "md.idx")), 64 + 4 * 64);
    check_dataset(path, 4);
    read_steps_then(path, 4, GPUBP_END_OF_STREAM);
}

/* A writer killed before its first step completes leaves "no steps yet"; APPEND starts it. */
static void test_killed_before_first_step(void **state)
{
    (void)state;
    const char *path = ts_path("killed0.bp");
    killed_writer(path, 0);
    check_steps(path, 0);
    wr w = writer_open(path, GPUBP_MODE_APPEND, NULL);
    writer_step(&w, 0);
    close_and_check(&w, path, 1);
}

/* An md.idx with a trailing partial record: whole records only. */
static void test_partial_index_record(void **state)
{
    (void)state;
    const char *path = ts_path("partial.bp");
    wr w = writer_open(path, GPUBP_MODE_WRITE, NULL);
    for (size_t s = 0; s < 3; s++) writer_step(&w, s);
    TS_OK(gpubp_close(w.f));
    size_t len = 0;
    unsigned char *idx = ts_read_file(ts_join(path, "md.idx"), &len);
    assert_non_null(idx);
    assert_int_equal(len, 64 + 3 * 64);
    assert_int_equal(ts_write_file(ts_join(path, "md.idx"), idx, 64 + 2 * 64 + 30), 0);
    free(idx);
    check_steps(path, 2);
}

/* A failing system call is GPUBP_ERR_IO with errno kept and the path in the message. */
static void test_io_error_keeps_errno(void **state)
{
    (void)state;
    const char *plain = ts_path("a_plain_file");
    assert_int_equal(ts_write_file(plain, "x", 1), 0);
    char path[4200];
    snprintf(path, sizeof path, "%s/sub.bp", plain); /* parent is not a directory */
    gpubp_file *f = (gpubp_file *)0x1;
    TS_ERR(gpubp_open(&f, path, GPUBP_MODE_WRITE, NULL), GPUBP_ERR_IO);
    assert_null(f);
    assert_int_equal(gpubp_last_errno(), ENOTDIR);
    assert_non_null(strstr(gpubp_last_error(), "sub.bp"));
}

/* WRITE over an ADIOS2 BP5 directory replaces it with a BP4 dataset (no mmd.0 left behind,
 * otherwise ADIOS2 would take the directory for BP5). */
static void test_write_replaces_bp5(void **state)
{
    (void)state;
    char bp5[4096];
    snprintf(bp5, sizeof bp5, "%s/BP5/types.bp", ts_golden_dir());
    const char *path = ts_path("was_bp5.bp");
    assert_int_equal(ts_copy_dataset(bp5, path), 0);
    assert_true(ts_exists(ts_join(path, "mmd.0")));
    wr w = writer_open(path, GPUBP_MODE_WRITE, NULL);
    writer_step(&w, 0);
    TS_OK(gpubp_close(w.f));
    assert_false(ts_exists(ts_join(path, "mmd.0")));
    check_dataset(path, 1);
}

/* fsync=1 writes the same file. */
static void test_fsync_param(void **state)
{
    (void)state;
    const char *path = ts_path("fsync.bp");
    wr w = writer_open(path, GPUBP_MODE_WRITE, "fsync=1");
    writer_step(&w, 0);
    writer_step(&w, 1);
    close_and_check(&w, path, 2);
}

/* Two files written from two threads' worth of handles in one process do not interfere:
 * interleaved steps of two writers. */
static void test_two_writers_interleaved(void **state)
{
    (void)state;
    const char *a = ts_path("two_a.bp"), *b = ts_path("two_b.bp");
    wr wa = writer_open(a, GPUBP_MODE_WRITE, NULL), wb = writer_open(b, GPUBP_MODE_WRITE, NULL);
    for (size_t s = 0; s < 3; s++) {
        writer_step(&wa, s);
        writer_step(&wb, s);
    }
    TS_OK(gpubp_close(wb.f));
    TS_OK(gpubp_close(wa.f));
    check_dataset(a, 3);
    check_dataset(b, 3);
}

/* A writer closed without any step: ADIOS2 2.12 then writes one empty step (md.idx of 128
 * bytes, flag 0), so that readers see a finished dataset; readers must not wait for a step that
 * will never come. */
static void test_close_without_steps(void **state)
{
    (void)state;
    const char *path = ts_path("no_steps.bp");
    gpubp_file *w = ts_open(path, GPUBP_MODE_WRITE, NULL);
    ts_define(w, "v", GPUBP_TYPE_INT32, 0, NULL, NULL);
    TS_OK(gpubp_close(w));
    assert_true(ts_file_size(ts_join(path, "md.idx")) >= 64);
    assert_int_equal(idx_byte(path, 38), 0);
    assert_int_equal(ts_bp4check(path), 0);
    gpubp_file *r = ts_open(path, GPUBP_MODE_READ, NULL);
    int rc;
    int n = 0;
    while ((rc = gpubp_begin_step(r)) == GPUBP_OK && n < 10) {
        TS_OK(gpubp_end_step(r));
        n++;
    }
    assert_int_equal(rc, GPUBP_END_OF_STREAM);
    TS_OK(gpubp_close(r));
}

int main(void)
{
    ts_tmpdir();
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_absent_md_idx_means_no_steps),
        cmocka_unit_test(test_empty_md_idx_means_no_steps),
        cmocka_unit_test(test_active_flag),
        cmocka_unit_test(test_append_sets_flag_again),
        cmocka_unit_test(test_reader_follows_writer),
        cmocka_unit_test(test_read_timeout),
        cmocka_unit_test(test_killed_writer_then_append),
        cmocka_unit_test(test_killed_before_first_step),
        cmocka_unit_test(test_partial_index_record),
        cmocka_unit_test(test_io_error_keeps_errno),
        cmocka_unit_test(test_write_replaces_bp5),
        cmocka_unit_test(test_fsync_param),
        cmocka_unit_test(test_two_writers_interleaved),
        cmocka_unit_test(test_close_without_steps),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
