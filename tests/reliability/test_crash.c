/* Crash consistency: a writer in a child process is killed (SIGKILL) at every write system call
 * of its workload (before the call, or after a torn prefix of it: lib/io's GBP_IO_FAULT_KILL),
 * and at random times. Then, in the parent:
 *   - every step whose md.idx record is complete reads back exactly (random access);
 *   - no other step is visible (the step count equals the complete records);
 *   - a step-mode reader sees those steps and then GPUBP_NOT_READY (the writer-active flag of a
 *     killed writer stays set), or GPUBP_END_OF_STREAM when the writer finished;
 *   - append mode continues the dataset: one more step, and all of them read back exactly.
 * Kill points cover data writes, the PG tails, md.0, md.idx and the flag update at close. */
#include "support/rel_util.h"

#define NSTEPS 5

static long g_points, g_killed, g_trials_ok;

static const char *trial_dir(void) { return ts_path("crash.bp"); }

/* Runs the writer in a child; kill_at >= 0 arms the kill hook, delay_us > 0 kills by timer.
 * Returns 1 if the child died of SIGKILL, 0 if it finished. */
static int run_child(const char *path, gpubp_mode mode, const rel_opts *o, size_t first,
                     size_t n, long kill_at, unsigned long torn, long delay_us)
{
    fflush(stdout);
    fflush(stderr);
    int pfd[2];
    assert_int_equal(pipe(pfd), 0);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        close(pfd[0]);
        if (kill_at >= 0) gbp_io_fault_inject(GBP_IO_FAULT_KILL, kill_at, torn);
        char one = 1;
        if (write(pfd[1], &one, 1) != 1) _exit(4); /* ready: the timer starts now */
        size_t c;
        int rc = rel_write(path, mode, o, first, n, 0, &c, NULL);
        _exit(rc == GPUBP_OK ? 0 : 3);
    }
    close(pfd[1]);
    char one;
    if (read(pfd[0], &one, 1) != 1) { /* the child died before it was ready */ }
    close(pfd[0]);
    if (delay_us > 0) {
        struct timespec ts = {delay_us / 1000000, (delay_us % 1000000) * 1000};
        nanosleep(&ts, NULL);
        kill(pid, SIGKILL);
    }
    int st = 0;
    assert_int_equal(waitpid(pid, &st, 0), pid);
    if (WIFSIGNALED(st)) {
        assert_int_equal(WTERMSIG(st), SIGKILL);
        return 1;
    }
    if (!WIFEXITED(st) || WEXITSTATUS(st) != 0) {
        print_error("writer child exited with %d (kill_at %ld)\n", WEXITSTATUS(st), kill_at);
        fail();
    }
    return 0;
}

/* After a (possibly) killed writer that wrote steps [0, base + n): check and append. */
static void check_after(const char *path, const rel_opts *o, size_t base, size_t n, int killed,
                        long point)
{
    size_t committed = rel_idx_records(path);
    if (committed < base || committed > base + n) {
        print_error("kill point %ld: %zu records, expected %zu..%zu\n", point, committed, base,
                    base + n);
        fail();
    }
    if (!killed && committed != base + n) {
        print_error("kill point %ld: writer finished but %zu records\n", point, committed);
        fail();
    }
    size_t steps[64];
    for (size_t i = 0; i <= committed; i++) steps[i] = i;
    if (rel_verify(path, o, steps, committed) != 0) {
        print_error("kill point %ld (killed %d): committed steps do not read back\n", point, killed);
        fail();
    }
    /* step mode: the committed steps, then NOT_READY (flag left set) or END_OF_STREAM */
    if (committed > 0) {
        char params[300];
        rel_params(o, params, sizeof params);
        strcat(params, ",timeout=0");
        gpubp_file *r;
        TS_OK(gpubp_open(&r, path, GPUBP_MODE_READ, params));
        size_t seen = 0;
        int rc;
        while ((rc = gpubp_begin_step(r)) == GPUBP_OK) {
            seen++;
            TS_OK(gpubp_end_step(r));
        }
        /* the writer-active flag (md.idx byte 38) is cleared only by a completed close: a writer
         * killed before that leaves it set (NOT_READY), except a kill in append mode before the
         * open set it, or after the close cleared it */
        char ip[1024];
        snprintf(ip, sizeof ip, "%s/md.idx", path);
        int flag = ts_file_byte(ip, 38);
        if (!killed && flag != 0) {
            print_error("kill point %ld: a finished writer left the active flag set\n", point);
            fail();
        }
        if (killed && committed < base + n && base == 0 && flag != 1) {
            print_error("kill point %ld: a killed writer's flag is %d\n", point, flag);
            fail();
        }
        if (seen != committed || rc != (flag ? GPUBP_NOT_READY : GPUBP_END_OF_STREAM)) {
            print_error("kill point %ld: step mode saw %zu steps then %d (killed %d, %zu committed)\n",
                        point, seen, rc, killed, committed);
            fail();
        }
        TS_OK(gpubp_close(r));
    }
    /* append continues the dataset */
    size_t c = 0;
    int rc = rel_write(path, GPUBP_MODE_APPEND, o, committed, 1, 0, &c, NULL);
    if (rc != GPUBP_OK || c != 1) {
        print_error("kill point %ld: append after the kill -> %d: %s\n", point, rc,
                    gpubp_last_error());
        fail();
    }
    if (rel_verify(path, o, steps, committed + 1) != 0) {
        print_error("kill point %ld: after append, steps do not read back\n", point);
        fail();
    }
    g_trials_ok++;
}

/* Write calls of the complete workload. */
static long count_writes(const rel_opts *o, gpubp_mode mode, size_t first, size_t n,
                         const char *base_copy)
{
    const char *p = trial_dir();
    if (base_copy) assert_int_equal(ts_copy_dataset(base_copy, p), 0);
    else rel_rmdir(p);
    gbp_io_fault_reset();
    size_t c;
    TS_OK(rel_write(p, mode, o, first, n, 0, &c, NULL));
    long w = gbp_io_write_calls();
    gbp_io_fault_reset();
    return w;
}

static void sweep(const rel_opts *o, const char *base_copy, size_t base)
{
    const char *p = trial_dir();
    gpubp_mode mode = base_copy ? GPUBP_MODE_APPEND : GPUBP_MODE_WRITE;
    long w = count_writes(o, mode, base, NSTEPS, base_copy);
    assert_true(w > 0);
    unsigned seed = 12345u + (unsigned)w;
    for (long k = 0; k <= w; k++) {
        for (int torn = 0; torn < 2; torn++) {
            if (base_copy) assert_int_equal(ts_copy_dataset(base_copy, p), 0);
            else rel_rmdir(p);
            unsigned long t = torn ? 1 + (unsigned long)(rand_r(&seed) % 100000) : 0;
            int killed = run_child(p, mode, o, base, NSTEPS, k, t, 0);
            if (k < w) assert_true(killed);
            g_points++;
            g_killed += killed;
            check_after(p, o, base, NSTEPS, killed, k);
        }
    }
    printf("crash sweep (dev %d, subfiles %d, %s): %ld write calls, kill points 0..%ld x {clean, torn}\n",
           o->dev, o->subfiles, base_copy ? "append" : "write", w, w);
}

static void test_crash_kill_every_write_host(void **state)
{
    (void)state;
    rel_opts o = {0, 1, 0, 0};
    sweep(&o, NULL, 0);
}

static void test_crash_kill_every_write_device_subfiles(void **state)
{
    (void)state;
    rel_opts o = {1, 2, 0, 0};
    sweep(&o, NULL, 0);
}

static void test_crash_kill_every_write_append(void **state)
{
    (void)state;
    rel_opts o = {0, 2, 1, 0};
    const char *base = ts_path("crash_base.bp");
    rel_rmdir(base);
    size_t c;
    TS_OK(rel_write(base, GPUBP_MODE_WRITE, &o, 0, 2, 0, &c, NULL));
    sweep(&o, base, 2);
}

static void test_crash_kill_random_times(void **state)
{
    (void)state;
    rel_opts o = {1, 1, 0, 0};
    const char *p = trial_dir();
    /* how long a whole run takes (the shortest of three, from the child's start) */
    long us = 1L << 30;
    for (int i = 0; i < 3; i++) {
        struct timespec a, b;
        rel_rmdir(p);
        clock_gettime(CLOCK_MONOTONIC, &a);
        run_child(p, GPUBP_MODE_WRITE, &o, 0, NSTEPS, -1, 0, 0);
        clock_gettime(CLOCK_MONOTONIC, &b);
        long t = (b.tv_sec - a.tv_sec) * 1000000L + (b.tv_nsec - a.tv_nsec) / 1000;
        if (t < us) us = t;
    }
    if (us < 200) us = 200;
    unsigned seed = 777;
    int n = getenv("GPUBP_CRASH_TIMED") ? atoi(getenv("GPUBP_CRASH_TIMED")) : 200;
    long killed_here = 0;
    for (int i = 0; i < n; i++) {
        rel_rmdir(p);
        long d = 1 + (long)(rand_r(&seed) % (unsigned)(us + us / 4));
        int killed = run_child(p, GPUBP_MODE_WRITE, &o, 0, NSTEPS, -1, 0, d);
        g_points++;
        g_killed += killed;
        killed_here += killed;
        check_after(p, &o, 0, NSTEPS, killed, -1000 - i);
    }
    printf("crash timed: %d kills at random times in [0, %ld us], %ld hit the writer alive\n", n,
           us + us / 4, killed_here);
}

/* GPUBP_IO_KILL_AT=k[:torn] arms the kill hook in any program: this test execs itself as a
 * plain writer with the variable set. */
static void test_crash_env_kill_hook(void **state)
{
    (void)state;
    rel_opts o = {0, 1, 0, 0};
    const char *p = trial_dir();
    long killed = 0, tried = 0;
    for (long k = 3; k < 60; k += 7) {
        rel_rmdir(p);
        fflush(stdout);
        fflush(stderr);
        pid_t pid = fork();
        assert_true(pid >= 0);
        if (pid == 0) {
            char v[64];
            snprintf(v, sizeof v, "%ld:%ld", k, k * 13);
            setenv("GPUBP_IO_KILL_AT", v, 1);
            execl("/proc/self/exe", "test_reliability_crash", "--env-writer", p, (char *)NULL);
            _exit(5);
        }
        int st;
        assert_int_equal(waitpid(pid, &st, 0), pid);
        int was_killed = WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL;
        if (!was_killed) assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);
        killed += was_killed;
        tried++;
        g_points++;
        g_killed += was_killed;
        check_after(p, &o, 0, NSTEPS, was_killed, 5000 + k);
    }
    assert_true(killed > 0);
    printf("crash env hook: %ld writers started with GPUBP_IO_KILL_AT, %ld killed\n", tried, killed);
}

int main(int argc, char **argv)
{
    if (argc == 3 && !strcmp(argv[1], "--env-writer")) {
        rel_opts o = {0, 1, 0, 0};
        size_t c;
        return rel_write(argv[2], GPUBP_MODE_WRITE, &o, 0, NSTEPS, 0, &c, NULL) == GPUBP_OK ? 0 : 3;
    }
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_crash_kill_every_write_host),
        cmocka_unit_test(test_crash_kill_every_write_device_subfiles),
        cmocka_unit_test(test_crash_kill_every_write_append),
        cmocka_unit_test(test_crash_kill_random_times),
        cmocka_unit_test(test_crash_env_kill_hook),
    };
    int rc = cmocka_run_group_tests(tests, NULL, NULL);
    printf("crash: %ld kill points tried, %ld writers killed, %ld trials verified (read back, "
           "step mode, append)\n", g_points, g_killed, g_trials_ok);
    return rc;
}
