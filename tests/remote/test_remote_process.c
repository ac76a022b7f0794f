/* Remote-read tests that start their own gpubp-serve processes on free loopback ports: the client
 * started before the server (the retry path), retries running out (a status naming the address),
 * the server killed mid-read (a clear error, no hang), large pipelined reads, symbolic links out
 * of the root, SIGTERM shutdown with clients connected, --background/--pid-file/--stop, and a full
 * server (--max-clients). */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "remote/remote.h"
#include "remote/remote_util.h"
#include "support/test_support.h"

#define BIG_BYTES ((size_t)40 << 20)

static char g_adios[4200]; /* tests/golden */

static void sleep_ms(int ms)
{
    struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
}

static gbp_params params(const char *s)
{
    gbp_params p;
    assert_int_equal(gbp_params_parse(&p, s), GPUBP_OK);
    return p;
}

/* A scratch root with types.bp and big.bp (data.0 of BIG_BYTES pseudo-random bytes). */
static const char *big_root(void)
{
    static char root[4200];
    if (root[0]) return root;
    snprintf(root, sizeof root, "%s", ts_path("root"));
    mkdir(root, 0755);
    char src[4400], dst[4400];
    snprintf(src, sizeof src, "%s/BP4/types.bp", g_adios);
    snprintf(dst, sizeof dst, "%s/types.bp", root);
    assert_int_equal(ts_copy_dataset(src, dst), 0);
    snprintf(dst, sizeof dst, "%s/big.bp", root);
    assert_int_equal(ts_copy_dataset(src, dst), 0);
    uint8_t *b = malloc(BIG_BYTES);
    uint64_t x = 88172645463325252ull;
    for (size_t i = 0; i < BIG_BYTES; i++) {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        b[i] = (uint8_t)x;
    }
    assert_int_equal(ts_write_file(ts_join(dst, "data.0"), b, BIG_BYTES), 0);
    free(b);
    return root;
}

/* ---- retries ------------------------------------------------------------------------------- */

static void test_client_before_server(void **state)
{
    (void)state;
    int port = ru_free_port();
    assert_true(port > 0);
    fflush(NULL);
    pid_t pid = fork();
    if (pid == 0) { /* the server comes up 1.5 s after the client started trying */
        sleep_ms(1500);
        char listen[64];
        snprintf(listen, sizeof listen, "127.0.0.1:%d", port);
        execl(ru_serve_bin(), ru_serve_bin(), "--listen", listen, "--root", g_adios, (char *)NULL);
        _exit(127);
    }
    assert_true(pid > 0);
    ru_track(pid);
    double t0 = ru_now();
    gbp_remote *r = NULL;
    int rc = gbp_remote_open(&r, ru_url(port, "BP4/types.bp"), NULL); /* default retries */
    double dt = ru_now() - t0;
    if (rc) print_error("%s\n", gbp_error_message());
    assert_int_equal(rc, GPUBP_OK);
    assert_true(dt >= 1.0 && dt < 15);
    uint8_t *d = NULL;
    size_t n = 0;
    TS_OK(gbp_remote_read_file(r, "md.idx", &d, &n));
    assert_int_equal(n, 128);
    gbp_free(d);
    gbp_remote_close(r);
    int st = ru_stop_server(pid, SIGTERM);
    assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);
}

static void test_retries_run_out(void **state)
{
    (void)state;
    int port = ru_free_port();
    char ps[16];
    snprintf(ps, sizeof ps, "%d", port);
    gbp_params p = params("retries=3,retry_delay=0.05,connect_timeout=1");
    gbp_remote *r = (gbp_remote *)1;
    double t0 = ru_now();
    TS_ERR(gbp_remote_open(&r, ru_url(port, "BP4/types.bp"), &p), GPUBP_ERR_IO);
    double dt = ru_now() - t0;
    assert_null(r);
    assert_true(dt >= 0.3 && dt < 10); /* 0.05 + 0.1 + 0.2 s of pauses */
    assert_non_null(strstr(gbp_error_message(), "127.0.0.1"));
    assert_non_null(strstr(gbp_error_message(), ps));
    assert_non_null(strstr(gbp_error_message(), "4 attempts"));
    assert_int_equal(gbp_error_native(), ECONNREFUSED);
    /* retries=0: one attempt */
    p = params("retries=0");
    t0 = ru_now();
    TS_ERR(gbp_remote_open(&r, ru_url(port, "BP4/types.bp"), &p), GPUBP_ERR_IO);
    assert_true(ru_now() - t0 < 2);
}

static void test_default_retry_lasts_10s(void **state)
{
    (void)state;
    int port = ru_free_port();
    gbp_remote *r = NULL;
    double t0 = ru_now();
    TS_ERR(gbp_remote_open(&r, ru_url(port, "BP4/types.bp"), NULL), GPUBP_ERR_IO);
    double dt = ru_now() - t0;
    print_message("default retries gave up after %.1f s\n", dt);
    assert_true(dt >= 10 && dt < 40);
}

/* ---- a server killed mid-read ------------------------------------------------------------- */

typedef struct killer {
    pid_t pid;
    double at;
} killer;

static void *kill_later(void *arg)
{
    killer *k = arg;
    sleep_ms(300);
    k->at = ru_now();
    kill(k->pid, SIGKILL);
    return NULL;
}

static void test_server_killed_mid_read(void **state)
{
    (void)state;
    const char *root = big_root();
    int port = ru_free_port();
    pid_t pid = ru_start_server(port, root, NULL);
    assert_true(pid > 0);
    gbp_remote *r = NULL;
    TS_OK(gbp_remote_open(&r, ru_url(port, "big.bp"), NULL));
    uint8_t *buf = malloc(BIG_BYTES);
    killer k = {pid, 0};
    pthread_t th;
    assert_int_equal(pthread_create(&th, NULL, kill_later, &k), 0);
    int rc = GPUBP_OK;
    double t0 = ru_now();
    int reads = 0;
    while (rc == GPUBP_OK && ru_now() - t0 < 60) {
        rc = gbp_remote_pread(r, "data.0", buf, BIG_BYTES, 0);
        reads++;
    }
    double done = ru_now();
    pthread_join(th, NULL);
    ru_stop_server(pid, SIGKILL); /* reaps it */
    print_message("%d reads; the error came %.3f s after the kill: %s\n", reads, done - k.at,
                  gbp_error_message());
    assert_int_equal(rc, GPUBP_ERR_IO);
    assert_true(done - k.at < 5);
    assert_non_null(strstr(gbp_error_message(), ru_url(port, "big.bp")));
    /* every later call fails at once */
    t0 = ru_now();
    uint64_t sz;
    TS_ERR(gbp_remote_size(r, "data.0", &sz), GPUBP_ERR_IO);
    TS_ERR(gbp_remote_pread(r, "data.0", buf, 10, 0), GPUBP_ERR_IO);
    assert_true(ru_now() - t0 < 1);
    gbp_remote_close(r);
    free(buf);
}

/* ---- large pipelined reads ---------------------------------------------------------------- */

static void test_big_reads(void **state)
{
    (void)state;
    const char *root = big_root();
    int port = ru_free_port();
    pid_t pid = ru_start_server(port, root, NULL);
    assert_true(pid > 0);
    size_t n = 0;
    unsigned char *loc = ts_read_file(ts_join(ts_join(root, "big.bp"), "data.0"), &n);
    assert_int_equal(n, BIG_BYTES);
    gbp_remote *r = NULL;
    TS_OK(gbp_remote_open(&r, ru_url(port, "big.bp"), NULL));
    uint8_t *buf = malloc(BIG_BYTES);
    TS_OK(gbp_remote_pread(r, "data.0", buf, BIG_BYTES, 0));
    assert_memory_equal(buf, loc, BIG_BYTES);
    /* unaligned ranges across chunk borders */
    size_t offs[] = {1, 4095, (4u << 20) - 3, (13u << 20) + 7};
    size_t lens[] = {(4u << 20) + 5, (9u << 20) - 1, 6, (20u << 20) + 12345};
    for (size_t i = 0; i < 4; i++) {
        memset(buf, 0, lens[i]);
        TS_OK(gbp_remote_pread(r, "data.0", buf, lens[i], offs[i]));
        assert_memory_equal(buf, loc + offs[i], lens[i]);
    }
    /* a whole file larger than one reply (read_file continues with preads) */
    uint8_t *d = NULL;
    size_t dn = 0;
    TS_OK(gbp_remote_read_file(r, "data.0", &d, &dn));
    assert_int_equal(dn, BIG_BYTES);
    assert_memory_equal(d, loc, BIG_BYTES);
    gbp_free(d);
    /* past the end of a big file: FORMAT, and the connection still works */
    TS_ERR(gbp_remote_pread(r, "data.0", buf, 30u << 20, BIG_BYTES - (10u << 20)),
           GPUBP_ERR_FORMAT);
    TS_OK(gbp_remote_pread(r, "data.0", buf, 100, 0));
    assert_memory_equal(buf, loc, 100);
    /* two threads sharing one handle */
    gbp_remote_close(r);
    free(buf);
    free(loc);
    int st = ru_stop_server(pid, SIGTERM);
    assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);
}

/* ---- symbolic links and the root ---------------------------------------------------------- */

static void test_symlinks(void **state)
{
    (void)state;
    const char *root = big_root();
    char p[4600], q[4600];
    /* a link inside the root is fine */
    snprintf(p, sizeof p, "%s/alias.bp", root);
    unlink(p);
    assert_int_equal(symlink("types.bp", p), 0);
    /* a link to a directory outside the root */
    snprintf(p, sizeof p, "%s/out", root);
    snprintf(q, sizeof q, "%s/BP4", g_adios);
    unlink(p);
    assert_int_equal(symlink(q, p), 0);
    /* a dataset whose data.0 is a link to a file outside the root */
    snprintf(p, sizeof p, "%s/evil.bp", root);
    snprintf(q, sizeof q, "%s/BP4/types.bp", g_adios);
    assert_int_equal(ts_copy_dataset(q, p), 0);
    snprintf(p, sizeof p, "%s/evil.bp/data.0", root);
    snprintf(q, sizeof q, "%s/BP4/types.bp/data.0", g_adios);
    unlink(p);
    assert_int_equal(symlink(q, p), 0);

    int port = ru_free_port();
    pid_t pid = ru_start_server(port, root, NULL);
    assert_true(pid > 0);
    gbp_remote *r = NULL;
    TS_OK(gbp_remote_open(&r, ru_url(port, "alias.bp"), NULL));
    uint64_t sz;
    TS_OK(gbp_remote_size(r, "data.0", &sz));
    gbp_remote_close(r);
    TS_ERR(gbp_remote_open(&r, ru_url(port, "out/types.bp"), NULL), GPUBP_ERR_IO);
    assert_non_null(strstr(gbp_error_message(), "outside"));
    assert_int_equal(gbp_error_native(), EACCES);
    TS_ERR(gbp_remote_open(&r, ru_url(port, "alias.bp/../types.bp"), NULL), GPUBP_ERR_IO);
    TS_OK(gbp_remote_open(&r, ru_url(port, "evil.bp"), NULL));
    TS_OK(gbp_remote_size(r, "md.0", &sz));
    uint8_t b[16];
    TS_ERR(gbp_remote_size(r, "data.0", &sz), GPUBP_ERR_IO);
    assert_non_null(strstr(gbp_error_message(), "outside"));
    TS_ERR(gbp_remote_pread(r, "data.0", b, 8, 0), GPUBP_ERR_IO);
    gbp_remote_close(r);
    int st = ru_stop_server(pid, SIGTERM);
    assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);
}

/* ---- shutdown, background, busy ----------------------------------------------------------- */

static void test_sigterm_with_clients(void **state)
{
    (void)state;
    int port = ru_free_port();
    const char *pidf = ts_path("fg.pid");
    const char *const args[] = {"--pid-file", pidf, NULL};
    pid_t pid = ru_start_server(port, g_adios, args);
    assert_true(pid > 0);
    for (int i = 0; i < 500 && !ts_exists(pidf); i++) /* it listens a moment before writing it */
        sleep_ms(10);
    assert_true(ts_exists(pidf));
    gbp_remote *r[3];
    for (int i = 0; i < 3; i++) TS_OK(gbp_remote_open(&r[i], ru_url(port, "BP4/local.bp"), NULL));
    int raw = ru_connect(port); /* a connection that never says anything */
    assert_true(raw >= 0);
    double t0 = ru_now();
    int st = ru_stop_server(pid, SIGTERM);
    assert_true(ru_now() - t0 < 5);
    assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);
    assert_false(ts_exists(pidf));
    assert_false(ru_port_open(port));
    uint64_t sz;
    for (int i = 0; i < 3; i++) {
        TS_ERR(gbp_remote_size(r[i], "md.0", &sz), GPUBP_ERR_IO);
        gbp_remote_close(r[i]);
    }
    close(raw);
}

static int run(const char *const *argv)
{
    fflush(NULL);
    pid_t pid = fork();
    if (pid == 0) {
        execv(argv[0], (char *const *)argv);
        _exit(127);
    }
    int st = -1;
    for (int i = 0; i < 2000; i++) { /* 20 s */
        if (waitpid(pid, &st, WNOHANG) == pid) return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
        sleep_ms(10);
    }
    kill(pid, SIGKILL);
    waitpid(pid, NULL, 0);
    return -1;
}

static void test_background_and_stop(void **state)
{
    (void)state;
    const char *pidf = ts_path("bg.pid"), *portf = ts_path("bg.port"), *logf = ts_path("bg.log");
    const char *const start[] = {ru_serve_bin(), "--listen", "127.0.0.1:0", "--root", g_adios,
                                 "--background", "--pid-file", pidf, "--port-file", portf,
                                 "--log-file", logf, "-v", NULL};
    assert_int_equal(run(start), 0);
    assert_true(ts_exists(pidf));
    char *pt = ts_read_text(portf);
    assert_non_null(pt);
    int port = atoi(pt);
    free(pt);
    assert_true(port > 0);
    gbp_remote *r = NULL;
    TS_OK(gbp_remote_open(&r, ru_url(port, "BP4/steps_2d.bp"), NULL));
    uint8_t b[64];
    TS_OK(gbp_remote_pread(r, "data.0", b, 64, 0));
    gbp_remote_close(r);
    const char *const stop[] = {ru_serve_bin(), "--stop", "--pid-file", pidf, NULL};
    assert_int_equal(run(stop), 0);
    assert_false(ts_exists(pidf));
    assert_false(ru_port_open(port));
    assert_int_equal(run(stop), 0); /* stopping twice is fine */
    /* -v: one line per request */
    char *log = ts_read_text(logf);
    assert_non_null(log);
    assert_non_null(strstr(log, "OPEN BP4/steps_2d.bp -> ok"));
    assert_non_null(strstr(log, "PREAD BP4/steps_2d.bp/data.0 off=0 len=64 -> 64 bytes"));
    assert_non_null(strstr(log, "stopped"));
    free(log);
    /* bad options */
    const char *const bad1[] = {ru_serve_bin(), "--root", "/nonexistent/dir", NULL};
    assert_int_equal(run(bad1), 1);
    const char *const bad2[] = {ru_serve_bin(), "--bogus", NULL};
    assert_int_equal(run(bad2), 2);
    const char *const bad3[] = {ru_serve_bin(), "--listen", "nocolon", NULL};
    assert_int_equal(run(bad3), 2);
}

static void test_busy_server(void **state)
{
    (void)state;
    int port = ru_free_port();
    const char *const args[] = {"--max-clients", "2", NULL};
    pid_t pid = ru_start_server(port, g_adios, args);
    assert_true(pid > 0);
    gbp_remote *a = NULL, *b = NULL, *c = NULL;
    TS_OK(gbp_remote_open(&a, ru_url(port, "BP4/types.bp"), NULL));
    TS_OK(gbp_remote_open(&b, ru_url(port, "BP4/types.bp"), NULL));
    gbp_params p = params("retries=2,retry_delay=0.05");
    TS_ERR(gbp_remote_open(&c, ru_url(port, "BP4/types.bp"), &p), GPUBP_ERR_IO);
    print_message("%s\n", gbp_error_message());
    assert_non_null(strstr(gbp_error_message(), "busy"));
    gbp_remote_close(a);
    /* a freed slot is reused (the retry path covers the moment it takes the server to notice) */
    p = params("retries=20,retry_delay=0.05");
    TS_OK(gbp_remote_open(&c, ru_url(port, "BP4/types.bp"), &p));
    gbp_remote_close(b);
    gbp_remote_close(c);
    int st = ru_stop_server(pid, SIGTERM);
    assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);
}

/* IPv6 loopback: --listen [::1]:PORT and gpubp://[::1]:PORT/... (skipped without IPv6). */
static void test_ipv6_loopback(void **state)
{
    (void)state;
    const char *portf = ts_path("v6.port");
    unlink(portf);
    const char *const args[] = {"--port-file", portf, NULL};
    fflush(NULL);
    pid_t pid = fork();
    if (pid == 0) {
        execl(ru_serve_bin(), ru_serve_bin(), "--listen", "[::1]:0", "--root", g_adios,
              args[0], args[1], (char *)NULL);
        _exit(127);
    }
    assert_true(pid > 0);
    ru_track(pid);
    char *pt = NULL;
    for (int i = 0; i < 500 && !pt; i++) { /* 5 s */
        pt = ts_read_text(portf);
        if (!pt) {
            int st;
            if (waitpid(pid, &st, WNOHANG) == pid) {
                ru_stop_server(pid, SIGKILL);
                skip(); /* no IPv6 here */
            }
            sleep_ms(10);
        }
    }
    assert_non_null(pt);
    int port = atoi(pt);
    free(pt);
    char url[128];
    snprintf(url, sizeof url, "gpubp://[::1]:%d/BP4/types.bp", port);
    gbp_remote *r = NULL;
    TS_OK(gbp_remote_open(&r, url, NULL));
    uint64_t sz;
    TS_OK(gbp_remote_size(r, "md.idx", &sz));
    assert_int_equal(sz, 128);
    gbp_remote_close(r);
    int st = ru_stop_server(pid, SIGTERM);
    assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);
}

int main(void)
{
    snprintf(g_adios, sizeof g_adios, "%s", ts_golden_dir());
    unsetenv("GPUBP_TOKEN"); /* these servers run without a token */
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_client_before_server),
        cmocka_unit_test(test_retries_run_out),
        cmocka_unit_test(test_server_killed_mid_read),
        cmocka_unit_test(test_big_reads),
        cmocka_unit_test(test_symlinks),
        cmocka_unit_test(test_sigterm_with_clients),
        cmocka_unit_test(test_background_and_stop),
        cmocka_unit_test(test_busy_server),
        cmocka_unit_test(test_ipv6_loopback),
        cmocka_unit_test(test_default_retry_lasts_10s),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
