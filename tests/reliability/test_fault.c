/* Faults: injected ENOSPC, EIO and short writes in lib/io at every write call of a workload,
 * read errors at every read call, failed allocations after N allocations (host), failed pinned
 * allocations, copies and staging I/O in the simulated device, and files that claim huge sizes.
 * Each failure must come back as its status with a message (and errno for I/O), leak nothing
 * (run under valgrind / LeakSanitizer in CI), and leave the dataset readable to its last
 * committed step. */
#include <sys/resource.h>

#include "support/rel_util.h"

static long g_faults, g_runs;

/* The workload with failures tolerated: writes `n` steps, going on after a failed step. ok[] gets
 * the global step numbers committed, *first_rc / first_msg / first_errno the first failure. */
typedef struct wres {
    size_t ncommitted;
    size_t ok[32];
    int first_rc;
    int first_errno;
    char first_msg[512];
    int open_rc, close_rc;
    int partial;       /* a step was committed although one of its puts failed */
    int close_failed;  /* the first failure came from gpubp_close */
} wres;

static void note(wres *r, int rc)
{
    if (rc != GPUBP_OK && r->first_rc == GPUBP_OK) {
        r->first_rc = rc;
        r->first_errno = gpubp_last_errno();
        snprintf(r->first_msg, sizeof r->first_msg, "%s", gpubp_last_error());
    }
}

static int g_stop_on_failure;

static void write_tolerant(const char *path, gpubp_mode mode, const rel_opts *o, size_t first,
                           size_t n, wres *r)
{
    memset(r, 0, sizeof *r);
    char params[256];
    rel_params(o, params, sizeof params);
    gpubp_file *w = NULL;
    r->open_rc = gpubp_open(&w, path, mode, params);
    note(r, r->open_rc);
    if (r->open_rc) {
        assert_null(w);
        return;
    }
    double *devbuf = o->dev ? gbp_sim_alloc(REL_DEV_N * sizeof(double)) : NULL;
    rel_vars v;
    int rc = rel_define(w, o, &v);
    note(r, rc);
    if (o->dev && !devbuf) { /* the test's own device buffer (an injected allocation failure) */
        rc = GPUBP_ERR_NOMEM;
        if (r->first_rc == GPUBP_OK) {
            r->first_rc = rc;
            snprintf(r->first_msg, sizeof r->first_msg, "test buffer: out of memory");
        }
    }
    for (size_t s = first; rc == GPUBP_OK && s < first + n; s++) {
        int a = gpubp_begin_step(w);
        note(r, a);
        if (a) break;
        int b = rel_put_step(w, o, &v, s, devbuf);
        note(r, b);
        int c = gpubp_end_step(w);
        note(r, c);
        if (b == GPUBP_OK && c == GPUBP_OK) r->ok[r->ncommitted++] = s;
        /* a put that failed before it queued anything (NOMEM in its bookkeeping) does not doom
         * the step: end_step commits the other puts. Stop there: the step is not checkable. */
        if (b != GPUBP_OK && c == GPUBP_OK) {
            r->partial = 1;
            break;
        }
        if (g_stop_on_failure && (b || c)) break;
    }
    int had = r->first_rc;
    r->close_rc = gpubp_close(w);
    note(r, r->close_rc);
    r->close_failed = had == GPUBP_OK && r->close_rc != GPUBP_OK;
    if (devbuf) gbp_sim_free(devbuf);
}

static void expect_failure(const wres *r, int status, int err, long k, const char *what)
{
    if (r->first_rc != status || (err && r->first_errno != err) || r->first_msg[0] == '\0') {
        print_error("%s at %ld: first failure %d (errno %d) '%s', expected %d (errno %d)\n", what,
                    k, r->first_rc, r->first_errno, r->first_msg, status, err);
        fail();
    }
}

static long count_writes(const char *path, const rel_opts *o, size_t n)
{
    rel_rmdir(path);
    gbp_io_fault_reset();
    wres r;
    write_tolerant(path, GPUBP_MODE_WRITE, o, 0, n, &r);
    assert_int_equal(r.first_rc, GPUBP_OK);
    long w = gbp_io_write_calls();
    gbp_io_fault_reset();
    return w;
}

/* ENOSPC / EIO at write call k, for every k */
static void io_error_sweep(const rel_opts *o, int kind, int err)
{
    const char *path = ts_path(o->dev ? "fault_dev.bp" : "fault_host.bp");
    const size_t n = 4;
    long w = count_writes(path, o, n);
    long paths_named = 0;
    for (long k = 0; k < w; k += rel_stride()) {
        rel_rmdir(path);
        gbp_io_fault_inject(kind, k, 0);
        wres r;
        write_tolerant(path, GPUBP_MODE_WRITE, o, 0, n, &r);
        assert_int_equal(gbp_io_faults_fired(), 1);
        gbp_io_fault_reset();
        g_faults++;
        g_runs++;
        if (r.close_failed) {
            /* the flag update at close failed: known bug 4b (the message is cleared by the memory
             * space's close); checked in test_reliability_fault_known_bugs */
            assert_int_equal(r.first_rc, GPUBP_ERR_IO);
            assert_int_equal(r.ncommitted, n);
        } else {
            expect_failure(&r, GPUBP_ERR_IO, err, k, kind == GBP_IO_FAULT_ENOSPC ? "ENOSPC" : "EIO");
        }
        if (strstr(r.first_msg, path)) paths_named++;
        /* one fault, one failed step (or a failed close): the others are committed */
        if (r.ncommitted < n - 1) {
            print_error("fault at %ld: only %zu of %zu steps committed: %s\n", k, r.ncommitted, n,
                        r.first_msg);
            fail();
        }
        if (rel_verify(path, o, r.ok, r.ncommitted) != 0) {
            print_error("fault at write %ld (%s): the dataset does not read back its committed "
                        "steps\n", k, r.first_msg);
            fail();
        }
        /* and append continues it */
        wres a;
        write_tolerant(path, GPUBP_MODE_APPEND, o, 100, 1, &a);
        assert_int_equal(a.first_rc, GPUBP_OK);
        r.ok[r.ncommitted++] = 100;
        assert_int_equal(rel_verify(path, o, r.ok, r.ncommitted), 0);
    }
    printf("fault %s (dev %d, subfiles %d): %ld write calls, %ld faults, message names the "
           "dataset path in %ld\n", err == ENOSPC ? "ENOSPC" : "EIO", o->dev, o->subfiles, w, w,
           paths_named);
}

static void test_fault_enospc_every_write(void **state)
{
    (void)state;
    rel_opts h = {0, 2, 0, 0}, d = {1, 1, 1, 0};
    io_error_sweep(&h, GBP_IO_FAULT_ENOSPC, ENOSPC);
    io_error_sweep(&d, GBP_IO_FAULT_ENOSPC, ENOSPC);
}

static void test_fault_eio_every_write(void **state)
{
    (void)state;
    rel_opts h = {0, 1, 1, 0}, d = {1, 2, 0, 0};
    io_error_sweep(&h, GBP_IO_FAULT_EIO, EIO);
    io_error_sweep(&d, GBP_IO_FAULT_EIO, EIO);
}

/* Known bug 4 (memspace): data-file write errors name "data file", not the subfile's path. */
static void test_fault_known_bug4_message_names_path(void **state)
{
    (void)state;
    rel_opts o = {0, 1, 0, 0};
    const char *path = ts_path("fault_msg.bp");
    long w = count_writes(path, &o, 1);
    long missing = 0;
    for (long k = 0; k < w; k++) {
        rel_rmdir(path);
        gbp_io_fault_inject(GBP_IO_FAULT_ENOSPC, k, 0);
        wres r;
        write_tolerant(path, GPUBP_MODE_WRITE, &o, 0, 1, &r);
        gbp_io_fault_reset();
        if (!strstr(r.first_msg, path)) {
            print_error("write %ld: message without the dataset path: '%s'\n", k, r.first_msg);
            missing++;
        }
    }
    assert_int_equal(missing, 0);
}

/* Known bug 4b (memspace): gbp_mem_close() clears the thread's error record, so a failing
 * gpubp_close() returns its status with an empty gpubp_last_error() and errno 0. */
static void test_fault_known_bug4b_close_keeps_message(void **state)
{
    (void)state;
    rel_opts cases[3] = {{0, 1, 0, 0}, {0, 2, 0, 0}, {1, 1, 0, 0}};
    int bad = 0;
    for (int c = 0; c < 3; c++) {
        const char *path = ts_path("fault_close.bp");
        long w = count_writes(path, &cases[c], 1);
        rel_rmdir(path);
        gbp_io_fault_inject(GBP_IO_FAULT_EIO, w - 1, 0); /* the last write: the flag at close */
        wres r;
        write_tolerant(path, GPUBP_MODE_WRITE, &cases[c], 0, 1, &r);
        gbp_io_fault_reset();
        assert_int_equal(r.close_rc, GPUBP_ERR_IO);
        if (r.first_msg[0] == '\0' || r.first_errno != EIO) {
            print_error("dev %d subfiles %d: gpubp_close -> IO with message '%s', errno %d\n",
                        cases[c].dev, cases[c].subfiles, r.first_msg, r.first_errno);
            bad++;
        }
    }
    assert_int_equal(bad, 0);
}

/* Bug 7 (fixed in 771d3f5; src/api_write.c): gpubp_define_attribute failing with NOMEM leaves the attribute
 * registered without its data; the next end_step crashes in bp4_put_amd (memcpy from NULL). */
static void test_fault_bug7_attribute_nomem_then_end_step(void **state)
{
    (void)state;
    const char *path = ts_path("fault_attr.bp");
    for (long k = 0; k < 4; k++) {
        rel_rmdir(path);
        fflush(stdout);
        pid_t pid = fork();
        if (pid == 0) {
            gpubp_file *w;
            if (gpubp_open(&w, path, GPUBP_MODE_WRITE, NULL)) _exit(2);
            if (gpubp_begin_step(w)) _exit(2);
            double a = 1.5;
            gbp_alloc_fail_after(k);
            int rc = gpubp_define_attribute(w, "a", GPUBP_TYPE_DOUBLE, &a, 1);
            gbp_alloc_fail_after(-1);
            if (rc != GPUBP_OK && rc != GPUBP_ERR_NOMEM) _exit(3);
            gpubp_end_step(w); /* must not crash */
            gpubp_close(w);
            _exit(0);
        }
        int st;
        waitpid(pid, &st, 0);
        if (!WIFEXITED(st) || WEXITSTATUS(st) != 0)
            print_error("allocation %ld failing in define_attribute: writer %s %d\n", k,
                        WIFSIGNALED(st) ? "killed by signal" : "exited", WIFSIGNALED(st) ? WTERMSIG(st) : WEXITSTATUS(st));
        assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);
    }
}

/* short writes: one at every call, and every call short: all data lands, nothing fails */
static void test_fault_short_writes(void **state)
{
    (void)state;
    rel_opts cases[2] = {{0, 2, 0, 0}, {1, 1, 0, 0}};
    for (int c = 0; c < 2; c++) {
        const rel_opts *o = &cases[c];
        const char *path = ts_path("fault_short.bp");
        long w = count_writes(path, o, 3);
        for (long k = -1; k < w; k += (k < 0 ? 1 : rel_stride())) {
            rel_rmdir(path);
            if (k < 0) gbp_io_fault_inject(GBP_IO_FAULT_SHORT_ALL, 0, 0);
            else gbp_io_fault_inject(GBP_IO_FAULT_SHORT, k, 0);
            wres r;
            write_tolerant(path, GPUBP_MODE_WRITE, o, 0, 3, &r);
            long fired = gbp_io_faults_fired();
            gbp_io_fault_reset();
            assert_true(fired >= 1);
            g_faults += fired;
            g_runs++;
            if (r.first_rc != GPUBP_OK) {
                print_error("short write at %ld: %d %s\n", k, r.first_rc, r.first_msg);
                fail();
            }
            assert_int_equal(r.ncommitted, 3);
            assert_int_equal(rel_verify(path, o, r.ok, 3), 0);
        }
        printf("fault short writes (dev %d): %ld single short writes + one all-short run\n",
               o->dev, w);
    }
}

/* EIO at every read call of open + gets: an error status with a message, never a crash */
static void test_fault_read_errors(void **state)
{
    (void)state;
    rel_opts o = {1, 2, 0, 0};
    const char *path = ts_path("fault_read.bp");
    rel_rmdir(path);
    wres r;
    write_tolerant(path, GPUBP_MODE_WRITE, &o, 0, 3, &r);
    assert_int_equal(r.first_rc, GPUBP_OK);
    gbp_io_fault_reset();
    assert_int_equal(rel_verify(path, &o, r.ok, 3), 0);
    long reads = gbp_io_read_calls();
    assert_true(reads > 0);
    for (long k = 0; k < reads; k += rel_stride()) {
        gbp_io_fault_inject(GBP_IO_FAULT_READ_EIO, k, 0);
        /* rel_verify prints and returns -1 on the failure; check the record it leaves */
        int v = rel_verify(path, &o, r.ok, 3);
        long fired = gbp_io_faults_fired();
        gbp_io_fault_reset();
        g_faults += fired;
        g_runs++;
        if (fired) {
            assert_int_equal(v, -1);
            assert_int_equal(gpubp_last_errno(), EIO);
            assert_true(gpubp_last_error()[0] != '\0');
        }
    }
    assert_int_equal(rel_verify(path, &o, r.ok, 3), 0);
    printf("fault read EIO: %ld read calls, each failed once\n", reads);
}

/* allocation n fails, for every n until the workload no longer allocates that many */
static void alloc_sweep(const rel_opts *o, long *crashes)
{
    const char *path = ts_path("fault_alloc.bp");
    long n, clean = 0, bad_status = 0;
    for (n = 0; n < 5000 && clean < 3; n += rel_stride()) {
        rel_rmdir(path);
        wres r;
        if (crashes) {
            /* in a child: a crash is counted, not fatal, so that every n is tried */
            fflush(stdout);
            fflush(stderr);
            pid_t pid = fork();
            if (pid == 0) {
                gbp_alloc_fail_after(n);
                g_stop_on_failure = 1;
                write_tolerant(path, GPUBP_MODE_WRITE, o, 0, 3, &r);
                gbp_alloc_fail_after(-1);
                _exit(r.first_rc == GPUBP_OK ? 0 : r.first_rc == GPUBP_ERR_NOMEM ? 1 : 2);
            }
            int st;
            waitpid(pid, &st, 0);
            if (WIFSIGNALED(st)) {
                print_error("allocation %ld: the writer crashed (signal %d)\n", n, WTERMSIG(st));
                (*crashes)++;
            } else if (WEXITSTATUS(st) == 2) {
                print_error("allocation %ld: a status other than NOMEM\n", n);
                bad_status++;
            }
            if (WIFEXITED(st) && WEXITSTATUS(st) == 0) clean++;
            else clean = 0;
            continue;
        }
        gbp_alloc_fail_after(n);
        g_stop_on_failure = 1;
        write_tolerant(path, GPUBP_MODE_WRITE, o, 0, 3, &r);
        g_stop_on_failure = 0;
        gbp_alloc_fail_after(-1);
        g_runs++;
        if (r.first_rc == GPUBP_OK) {
            clean++;
            assert_int_equal(r.ncommitted, 3);
        } else {
            clean = 0;
            g_faults++;
            if (r.first_rc != GPUBP_ERR_NOMEM || (r.first_msg[0] == '\0' && !r.close_failed)) {
                print_error("allocation %ld: status %d '%s', expected NOMEM\n", n, r.first_rc,
                            r.first_msg);
                bad_status++;
            }
        }
        if (rel_verify_x(path, o, r.ok, r.ncommitted, r.partial) != 0) {
            print_error("allocation %ld failed (status %d '%s'; open %d close %d, %zu committed, "
                        "partial %d): committed steps do not read back\n", n, r.first_rc,
                        r.first_msg, r.open_rc, r.close_rc, r.ncommitted, r.partial);
            fail();
        }
    }
    assert_int_equal(bad_status, 0);
    printf("fault alloc (write, dev %d): allocations 0..%ld failed one at a time\n", o->dev,
           n - 4);
}

static void test_fault_alloc_write(void **state)
{
    (void)state;
    rel_opts o = {0, 2, 0, 1};
    alloc_sweep(&o, NULL);
}

/* Known bugs 8 and 9 (lib/memspace): with a device variable, a failed allocation while the
 * simulated device context opens is reported as NOT_SUPPORTED (and sticks); a failed allocation
 * of the staging slot table leaves nslots set with slots NULL, and gbp_mem_sync crashes. */
static void test_fault_known_bug8_9_alloc_device(void **state)
{
    (void)state;
    rel_opts o = {1, 1, 0, 1};
    long crashes = 0;
    alloc_sweep(&o, &crashes);
    assert_int_equal(crashes, 0);
}

static void test_fault_alloc_read(void **state)
{
    (void)state;
    rel_opts o = {1, 2, 0, 0};
    const char *path = ts_path("fault_alloc_rd.bp");
    rel_rmdir(path);
    wres r;
    write_tolerant(path, GPUBP_MODE_WRITE, &o, 0, 3, &r);
    assert_int_equal(r.first_rc, GPUBP_OK);
    long n, clean = 0;
    for (n = 0; n < 5000 && clean < 3; n += rel_stride()) {
        gbp_alloc_fail_after(n);
        int v = rel_verify(path, &o, r.ok, 3);
        gbp_alloc_fail_after(-1);
        g_runs++;
        if (v == 0) {
            clean++;
            continue;
        }
        clean = 0;
        g_faults++;
        assert_true(gpubp_last_error()[0] != '\0');
    }
    printf("fault alloc (read, simulated device): allocations 0..%ld failed one at a time\n", n - 4);
}

/* simulated device: failed copies, pinned allocations and staging I/O */
static void test_fault_simulated_device(void **state)
{
    (void)state;
    rel_opts o = {1, 1, 0, 0};
    const char *path = ts_path("fault_sim.bp");
    struct { const char *name; void (*arm)(long); int status; } kinds[3] = {
        {"copy", gbp_sim_fail_copy_after, GPUBP_ERR_DEVICE},
        {"pinned alloc", gbp_sim_fail_pinned_alloc_after, GPUBP_ERR_NOMEM},
        {"staging io", gbp_sim_fail_io_after, GPUBP_ERR_IO},
    };
    for (int k = 0; k < 3; k++) {
        long fired_total = 0;
        for (long n = 0; n < 40; n += rel_stride()) {
            rel_rmdir(path);
            gbp_sim_reset();
            kinds[k].arm(n);
            wres r;
            write_tolerant(path, GPUBP_MODE_WRITE, &o, 0, 3, &r);
            gbp_sim_reset();
            g_runs++;
            if (r.first_rc == GPUBP_OK) continue;
            fired_total++;
            g_faults++;
            if (r.first_rc != kinds[k].status || r.first_msg[0] == '\0') {
                print_error("simulated %s failure %ld: status %d '%s', expected %d\n",
                            kinds[k].name, n, r.first_rc, r.first_msg, kinds[k].status);
                fail();
            }
            assert_int_equal(rel_verify(path, &o, r.ok, r.ncommitted), 0);
        }
        /* reads: the same failures while reading into device memory */
        rel_rmdir(path);
        wres r;
        write_tolerant(path, GPUBP_MODE_WRITE, &o, 0, 2, &r);
        assert_int_equal(r.first_rc, GPUBP_OK);
        for (long n = 0; n < 20; n++) {
            gbp_sim_reset();
            kinds[k].arm(n);
            int v = rel_verify(path, &o, r.ok, 2);
            gbp_sim_reset();
            g_runs++;
            if (v != 0) {
                g_faults++;
                fired_total++;
                assert_true(gpubp_last_error()[0] != '\0');
            }
        }
        printf("fault simulated %s: %ld runs failed as injected\n", kinds[k].name, fired_total);
    }
}

/* ---- hostile sizes ---------------------------------------------------------------------- */

static void put_u64(unsigned char *p, uint64_t v) { memcpy(p, &v, 8); }

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define REL_SANITIZER 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
#define REL_SANITIZER 1
#endif
#endif

/* Whether an address-space limit can be set (not under sanitizers or valgrind, which reserve
 * large mappings; the CI sets GPUBP_NO_RLIMIT=1 for valgrind). */
static int can_limit(void)
{
#ifdef REL_SANITIZER
    return 0;
#else
    return getenv("GPUBP_NO_RLIMIT") == NULL;
#endif
}

/* run fn in a child limited to 1 GiB of address space */
static int limited_child(void (*fn)(void))
{
    fflush(stdout);
    fflush(stderr);
    pid_t pid = fork();
    if (pid == 0) {
        if (can_limit()) {
            struct rlimit rl = {(rlim_t)1 << 30, (rlim_t)1 << 30};
            setrlimit(RLIMIT_AS, &rl);
        }
        fn();
        _exit(0);
    }
    int st;
    waitpid(pid, &st, 0);
    return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

static const char *g_huge_path;

static void open_huge_child(void)
{
    gpubp_file *f = NULL;
    int rc = gpubp_open(&f, g_huge_path, GPUBP_MODE_READ_RANDOM_ACCESS, NULL);
    if (rc == GPUBP_OK) {
        size_t n;
        gpubp_steps(f, &n);
        gpubp_close(f);
        _exit(10); /* should not open */
    }
    if (gpubp_last_error()[0] == '\0') _exit(11);
    _exit(rc == GPUBP_ERR_FORMAT ? 0 : 20 + (-rc));
}

static void test_fault_huge_claims(void **state)
{
    (void)state;
    rel_opts o = {0, 1, 0, 0};
    const char *base = ts_path("huge_base.bp");
    rel_rmdir(base);
    size_t c;
    TS_OK(rel_write(base, GPUBP_MODE_WRITE, &o, 0, 1, 0, &c, NULL));
    const char *path = ts_path("huge.bp");
    g_huge_path = path;
    char idx[1024], md0[1024];
    snprintf(idx, sizeof idx, "%s/md.idx", path);
    snprintf(md0, sizeof md0, "%s/md.0", path);
    size_t ilen;
    /* md.idx on the stack, not the heap: the forked children exit with it still held, and
     * valgrind would report a heap copy as a leak of theirs. */
    unsigned char orig[128];
    {
        unsigned char *heap = ts_read_file(ts_join(base, "md.idx"), &ilen);
        assert_non_null(heap);
        assert_int_equal(ilen, 128);
        memcpy(orig, heap, 128);
        free(heap);
    }
    int failures = 0;
    /* 1: a record whose md.0 pointers claim 2^60 bytes */
    {
        assert_int_equal(ts_copy_dataset(base, path), 0);
        unsigned char m[128];
        memcpy(m, orig, 128);
        put_u64(m + 64 + 40, (uint64_t)1 << 60);
        assert_int_equal(ts_write_file(idx, m, 128), 0);
        int st = limited_child(open_huge_child);
        if (st) { print_error("huge md.0 end pointer: child status %d\n", st); failures++; }
        g_faults++;
    }
    /* 2: a record claiming one step of 4 GiB over a sparse md.0 of 4 GiB: the step must be
     * rejected or read piecewise, not allocated whole (only where memory can be limited) */
    if (can_limit()) { /* bug 5, fixed in 771d3f5 */
        assert_int_equal(ts_copy_dataset(base, path), 0);
        unsigned char m[128];
        memcpy(m, orig, 128);
        uint64_t big = (uint64_t)4 << 30;
        put_u64(m + 64 + 32, big - 12);
        put_u64(m + 64 + 40, big);
        assert_int_equal(ts_write_file(idx, m, 128), 0);
        assert_int_equal(truncate(md0, (off_t)big), 0);
        int st = limited_child(open_huge_child);
        if (st) {
            print_error("BUG-5: a 4 GiB step in a sparse md.0: child status %d (0 = "
                        "FORMAT error; 32 = NOMEM: allocated the claimed size)\n", st);
            failures++;
        }
        g_faults++;
        assert_int_equal(truncate(md0, 0), 0);
    }
    /* 3: an attribute whose value claims 2^40 elements: the count is checked against the bytes
     * left, so it fails as FORMAT without allocating (covered by the fuzzers; here a direct
     * case through md.0): a variable with a dimension count of 200 */
    {
        assert_int_equal(ts_copy_dataset(base, path), 0);
        size_t mlen;
        unsigned char *m = ts_read_file(md0, &mlen);
        assert_non_null(m);
        /* find the dimensions characteristic (id 4) of "g": ndims byte 2 -> 200 */
        int patched = 0;
        for (size_t i = 0; i + 4 < mlen && !patched; i++)
            if (m[i] == 4 && m[i + 1] == 2 && m[i + 2] == 48 && m[i + 3] == 0) {
                m[i + 1] = 200;
                patched = 1;
            }
        assert_true(patched);
        assert_int_equal(ts_write_file(md0, m, mlen), 0);
        free(m);
        int st = limited_child(open_huge_child);
        if (st) { print_error("200 dimensions: child status %d\n", st); failures++; }
        g_faults++;
    }
    assert_int_equal(failures, 0);
}

/* gpubp_selection_size must not wrap around for huge shapes (2^66 elements) */
static void test_fault_selection_size_overflow(void **state)
{
    (void)state;
    const char *path = ts_path("huge_shape.bp");
    rel_rmdir(path);
    gpubp_file *w = ts_open(path, GPUBP_MODE_WRITE, NULL);
    size_t shape[2] = {(size_t)1 << 33, (size_t)1 << 33}, ct[2] = {1, 1};
    float x = 1;
    ts_put_step(w, ts_define(w, "big", GPUBP_TYPE_FLOAT, 2, shape, ct), &x, GPUBP_SYNC);
    TS_OK(gpubp_close(w));
    gpubp_file *r = ts_open(path, GPUBP_MODE_READ_RANDOM_ACCESS, NULL);
    gpubp_variable *v;
    TS_OK(gpubp_inquire_variable(&v, r, "big"));
    size_t bytes = 12345;
    int rc = gpubp_selection_size(v, &bytes);
    /* 2^66 elements * 4 bytes does not fit: an error, never a wrapped-around small size */
    if (rc == GPUBP_OK) print_error("selection_size returned OK with %zu bytes (2^68 wrapped)\n", bytes);
    TS_OK(gpubp_close(r));
    assert_int_not_equal(rc, GPUBP_OK);
}

int main(int argc, char **argv)
{
    if (argc > 1 && !strcmp(argv[1], "known")) {
        /* known bugs in code this suite does not own, reported in build-rel/BUGS.txt: this
         * group fails until they are fixed */
        setenv("GPUBP_KNOWN_BUGS", "1", 1);
        const struct CMUnitTest known[] = {
            cmocka_unit_test(test_fault_known_bug4_message_names_path),
            cmocka_unit_test(test_fault_known_bug4b_close_keeps_message),
            cmocka_unit_test(test_fault_known_bug8_9_alloc_device),
        };
        return cmocka_run_group_tests(known, NULL, NULL);
    }
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_fault_enospc_every_write),
        cmocka_unit_test(test_fault_eio_every_write),
        cmocka_unit_test(test_fault_short_writes),
        cmocka_unit_test(test_fault_read_errors),
        cmocka_unit_test(test_fault_alloc_write),
        cmocka_unit_test(test_fault_alloc_read),
        cmocka_unit_test(test_fault_simulated_device),
        cmocka_unit_test(test_fault_huge_claims),
        cmocka_unit_test(test_fault_selection_size_overflow),
        cmocka_unit_test(test_fault_bug7_attribute_nomem_then_end_step),
    };
    int rc = cmocka_run_group_tests(tests, NULL, NULL);
    printf("fault: %ld faults injected over %ld runs\n", g_faults, g_runs);
    return rc;
}
