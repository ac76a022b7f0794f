/* API-level remote reads: gpubp_open("gpubp://...") through the fixture server reads every golden
 * dataset exactly as the local read does (variables, types, shapes, blocks, all values, min/max,
 * attributes; random access and step mode; the bpls dumps), a dataset of several MiB per block
 * reads into host and (simulated) device memory with selections, and gpubpls lists and dumps a
 * gpubp:// URL exactly as the local path. */
#include <dirent.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include "interop/bpls_dump.h"
#include "remote/remote_util.h"
#include "memspace/simdev.h"
#include "support/test_support.h"

#include <time.h>
#include <unistd.h>

static int g_port = -1;

static void sleep_ms(int ms)
{
    struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
}
static char g_adios[4200];

/* Every dataset of tests/golden/sub read remotely equals the local read; with dumps, both also
 * equal the bpls dumps beside each. */
static void golden_in_dumps(const char *sub, int *checked, int dumps)
{
    char dir[4400];
    snprintf(dir, sizeof dir, "%s/%s", g_adios, sub);
    DIR *d = opendir(dir);
    if (!d) return;
    struct dirent *e;
    while ((e = readdir(d))) {
        size_t l = strlen(e->d_name);
        if (l < 4 || strcmp(e->d_name + l - 3, ".bp")) continue;
        char local[4700], rel[600], dump[4800];
        snprintf(local, sizeof local, "%s/%s", dir, e->d_name);
        snprintf(rel, sizeof rel, "%s/%s", sub, e->d_name);
        if (!ts_exists(ts_join(local, "md.idx"))) continue;
        const char *url = ru_url(g_port, rel);
        int diffs = dump_compare_datasets(url, local);
        if (diffs) print_error("%s: %d differences remote vs local\n", rel, diffs);
        assert_int_equal(diffs, 0);
        snprintf(dump, sizeof dump, "%s.d.txt", local);
        if (dumps && ts_exists(dump)) {
            for (int m = 0; m < 2; m++) {
                gpubp_mode mode = m ? GPUBP_MODE_READ : GPUBP_MODE_READ_RANDOM_ACCESS;
                diffs = dump_check_dataset(url, local, mode);
                if (diffs)
                    print_error("%s [%d]: %d differences from the bpls dumps\n", rel, m, diffs);
                assert_int_equal(diffs, 0);
            }
        }
        (*checked)++;
    }
    closedir(d);
}

static void golden_in(const char *sub, int *checked)
{
    golden_in_dumps(sub, checked, 1);
}

static void test_golden_remote_equals_local(void **state)
{
    (void)state;
    int n = 0;
    golden_in("BP4", &n);
    golden_in("gpu/BP4", &n);
    golden_in("compressed", &n);
    print_message("%d golden datasets read remotely\n", n);
    assert_true(n >= 7);
}

/* BP5 (issue 21): ADIOS2's BP5 datasets served by gpubp-serve read as the local ones, and as
 * bpls dumped them where the dumps cover the content (the corpus, the GPU example, every codec);
 * multi-writer, aggregated and sub-filed datasets and the wheel's cases remote = local. */
static void test_golden_bp5_remote_equals_local(void **state)
{
    (void)state;
    int n = 0;
    golden_in("BP5", &n);
    golden_in("gpu/BP5", &n);
    golden_in("codecs/BP5", &n);
    golden_in_dumps("bp5/mpi", &n, 0);
    golden_in_dumps("bp5/wheel", &n, 0);
    print_message("%d golden BP5 datasets read remotely\n", n);
    assert_true(n >= 6 + 1 + 15 + 6 + 10);
    /* a BP5 dataset in step mode over the connection: steps and values as the local read */
    gpubp_file *f = NULL, *l = NULL;
    char local[4400];
    snprintf(local, sizeof local, "%s/BP5/steps_2d.bp", g_adios);
    TS_OK(gpubp_open(&f, ru_url(g_port, "BP5/steps_2d.bp"), GPUBP_MODE_READ, NULL));
    TS_OK(gpubp_open(&l, local, GPUBP_MODE_READ, NULL));
    size_t steps = 0;
    while (gpubp_begin_step(f) == GPUBP_OK) {
        TS_OK(gpubp_begin_step(l));
        gpubp_variable *vr, *vl;
        TS_OK(gpubp_inquire_variable(&vr, f, "temperature"));
        TS_OK(gpubp_inquire_variable(&vl, l, "temperature"));
        float a[24], b[24];
        memset(a, 0, sizeof a);
        TS_OK(gpubp_get(f, vr, a, GPUBP_SYNC));
        TS_OK(gpubp_get(l, vl, b, GPUBP_SYNC));
        assert_memory_equal(a, b, sizeof a);
        assert_true(a[0] == 0.5f + 100.0f * (float)steps); /* bpls -d: 0.5, 100.5, 200.5 */
        TS_OK(gpubp_end_step(f));
        TS_OK(gpubp_end_step(l));
        steps++;
    }
    assert_int_equal(steps, 3);
    assert_int_equal(gpubp_begin_step(l), GPUBP_END_OF_STREAM);
    TS_OK(gpubp_close(f));
    TS_OK(gpubp_close(l));
}

/* select_steps over the connection (tests/golden/selsteps: s = 7 step; BP5 and BP4), with the
 * operator of a compressed block named from its bytes over the wire */
static void test_select_steps_remote(void **state)
{
    (void)state;
    const char *sets[] = {"selsteps/steps5.bp", "selsteps/steps4.bp"};
    for (int i = 0; i < 2; i++) {
        gpubp_file *f = NULL;
        TS_OK(gpubp_open(&f, ru_url(g_port, sets[i]), GPUBP_MODE_READ_RANDOM_ACCESS,
                         "select_steps=3 1"));
        size_t ns = 0;
        TS_OK(gpubp_steps(f, &ns));
        assert_int_equal(ns, 2);
        gpubp_variable *v, *z;
        TS_OK(gpubp_inquire_variable(&v, f, "s"));
        TS_OK(gpubp_inquire_variable(&z, f, "z"));
        int64_t s[2] = {0, 0};
        TS_OK(gpubp_set_step_selection(v, 0, 2));
        TS_OK(gpubp_get(f, v, s, GPUBP_SYNC));
        assert_true(s[0] == 7 && s[1] == 21);
        char op[16];
        TS_OK(gpubp_variable_block_operator(z, 1, 0, op, sizeof op));
        assert_string_equal(op, "blosc");
        TS_OK(gpubp_close(f));
    }
}

static void test_open_errors(void **state)
{
    (void)state;
    gpubp_file *f = NULL;
    int rc = gpubp_open(&f, ru_url(g_port, "BP4/nosuch.bp"), GPUBP_MODE_READ_RANDOM_ACCESS, NULL);
    assert_true(rc == GPUBP_ERR_NOT_FOUND || rc == GPUBP_ERR_NOT_BP4);
    assert_non_null(strstr(gpubp_last_error(), "nosuch.bp"));
    TS_ERR(gpubp_open(&f, ru_url(g_port, "BP4/../BP4/types.bp"), GPUBP_MODE_READ, NULL),
           GPUBP_ERR_IO);
    rc = gpubp_open(&f, ru_url(g_port, "BP4/types.bp"), GPUBP_MODE_WRITE, NULL);
    assert_true(rc == GPUBP_ERR_WRONG_MODE || rc == GPUBP_ERR_NOT_SUPPORTED ||
                rc == GPUBP_ERR_INVALID_ARG);
    /* the token from the open parameter token_file instead of the environment */
    char tok[256];
    snprintf(tok, sizeof tok, "%s", ru_token());
    unsetenv("GPUBP_TOKEN");
    TS_ERR(gpubp_open(&f, ru_url(g_port, "BP4/types.bp"), GPUBP_MODE_READ, NULL), GPUBP_ERR_IO);
    const char *tf = ts_path("api_token.txt");
    assert_int_equal(ts_write_file(tf, tok, strlen(tok)), 0);
    char params[4400];
    snprintf(params, sizeof params, "token_file=%s", tf);
    TS_OK(gpubp_open(&f, ru_url(g_port, "BP4/types.bp"), GPUBP_MODE_READ_RANDOM_ACCESS, params));
    size_t steps = 0;
    TS_OK(gpubp_steps(f, &steps));
    assert_true(steps > 0);
    TS_OK(gpubp_close(f));
    setenv("GPUBP_TOKEN", tok, 1);
    /* retries run out: the status names the address */
    int port = ru_free_port();
    char url[256], ps[16];
    snprintf(url, sizeof url, "gpubp://127.0.0.1:%d/BP4/types.bp", port);
    snprintf(ps, sizeof ps, "%d", port);
    TS_ERR(gpubp_open(&f, url, GPUBP_MODE_READ, "retries=2,retry_delay=0.05"), GPUBP_ERR_IO);
    assert_non_null(strstr(gpubp_last_error(), ps));
}

/* ---- a larger dataset: host and device destinations, selections --------------------------- */

#define NX 1024
#define NY 1536 /* 12 MiB of doubles per step, two blocks of 6 MiB */

static void write_big(const char *path)
{
    gpubp_file *w;
    TS_OK(gpubp_open(&w, path, GPUBP_MODE_WRITE, NULL));
    size_t shape[2] = {NX, NY}, start[2] = {0, 0}, count[2] = {NX / 2, NY};
    gpubp_variable *v;
    TS_OK(gpubp_define_variable(&v, w, "field", GPUBP_TYPE_DOUBLE, 2, shape, start, count));
    double *b = malloc(sizeof(double) * NX / 2 * NY);
    for (int s = 0; s < 3; s++) {
        TS_OK(gpubp_begin_step(w));
        for (int blk = 0; blk < 2; blk++) {
            for (size_t i = 0; i < (size_t)NX / 2 * NY; i++)
                b[i] = s * 1e7 + (double)(blk * (NX / 2) * NY + i) * 0.5;
            size_t st[2] = {(size_t)blk * NX / 2, 0};
            TS_OK(gpubp_set_selection(v, 2, st, count));
            TS_OK(gpubp_put(w, v, b, GPUBP_SYNC));
        }
        TS_OK(gpubp_end_step(w));
    }
    TS_OK(gpubp_close(w));
    free(b);
}

/* Reads field at `step`, box (start, count) in the file's (row-major) layout, from path into
 * a host buffer; with device, through a simulated-device buffer. */
static double *read_box(const char *path, const char *params, size_t step, const size_t *start,
                        const size_t *count, int device)
{
    gpubp_file *f;
    TS_OK(gpubp_open(&f, path, GPUBP_MODE_READ_RANDOM_ACCESS, params));
    gpubp_variable *v;
    TS_OK(gpubp_inquire_variable(&v, f, "field"));
    size_t n = count[0] * count[1];
    double *out = malloc(n * sizeof *out);
    TS_OK(gpubp_set_step_selection(v, step, 1));
    if (device) {
        TS_OK(gpubp_set_memory_space(v, GPUBP_MEM_GPU));
        size_t gs[2] = {start[1], start[0]}, gc[2] = {count[1], count[0]}; /* column-major */
        TS_OK(gpubp_set_selection(v, 2, gs, gc));
        double *d = gbp_sim_alloc(n * sizeof *d);
        assert_non_null(d);
        TS_OK(gpubp_get(f, v, d, GPUBP_SYNC));
        memcpy(out, d, n * sizeof *d);
        gbp_sim_free(d);
    } else {
        TS_OK(gpubp_set_selection(v, 2, start, count));
        TS_OK(gpubp_get(f, v, out, GPUBP_SYNC));
    }
    TS_OK(gpubp_close(f));
    return out;
}

static void test_big_host_and_device(void **state)
{
    (void)state;
    char root[4200];
    snprintf(root, sizeof root, "%s", ts_path("apiroot"));
    mkdir(root, 0755);
    const char *local = ts_join(root, "big.bp");
    write_big(local);
    int port = ru_free_port();
    pid_t pid = ru_start_server(port, root, NULL);
    assert_true(pid > 0);
    const char *url = ru_url(port, "big.bp");
    assert_int_equal(dump_compare_datasets(url, local), 0);
    static const size_t boxes[][4] = {
        {0, 0, NX, NY}, {1, 3, NX - 2, NY - 5}, {NX / 2 - 7, 100, 14, 900}, {NX - 1, 0, 1, NY}};
    for (size_t k = 0; k < sizeof boxes / sizeof boxes[0]; k++)
        for (size_t step = 0; step < 3; step += 2)
            for (int dev = 0; dev < 2; dev++) {
                const size_t *st = boxes[k], *ct = boxes[k] + 2;
                const char *p = dev ? "device=simulated" : NULL;
                double *a = read_box(local, p, step, st, ct, dev);
                double *b = read_box(url, p, step, st, ct, dev);
                assert_memory_equal(a, b, ct[0] * ct[1] * sizeof(double));
                free(a);
                free(b);
            }
    int stc = ru_stop_server(pid, SIGTERM);
    assert_true(WIFEXITED(stc) && WEXITSTATUS(stc) == 0);
}

/* ---- streaming: a reader of a gpubp:// URL follows a writer that is still writing ----------- */

#define STREAM_STEPS 6

static void test_stream_while_writing(void **state)
{
    (void)state;
    char root[4200];
    snprintf(root, sizeof root, "%s", ts_path("streamroot"));
    mkdir(root, 0755);
    const char *ds = ts_join(root, "stream.bp");
    char dsp[4400];
    snprintf(dsp, sizeof dsp, "%s", ds);
    int port = ru_free_port();
    pid_t srv = ru_start_server(port, root, NULL);
    assert_true(srv > 0);
    fflush(NULL);
    pid_t w = fork();
    if (w == 0) { /* the writer: one step every 150 ms, an array of 1000 doubles = the step */
        gpubp_file *f;
        gpubp_variable *v;
        size_t shape[1] = {1000}, start[1] = {0};
        double b[1000];
        if (gpubp_open(&f, dsp, GPUBP_MODE_WRITE, NULL) ||
            gpubp_define_variable(&v, f, "s", GPUBP_TYPE_DOUBLE, 1, shape, start, shape))
            _exit(1);
        for (int st = 0; st < STREAM_STEPS; st++) {
            for (int i = 0; i < 1000; i++) b[i] = st * 1000 + i;
            if (gpubp_begin_step(f) || gpubp_put(f, v, b, GPUBP_SYNC) || gpubp_end_step(f)) _exit(1);
            sleep_ms(150);
        }
        _exit(gpubp_close(f) ? 1 : 0);
    }
    assert_true(w > 0);
    /* the dataset appears with the first step */
    char idx[4500];
    snprintf(idx, sizeof idx, "%s/md.idx", dsp);
    for (int i = 0; i < 500 && ts_file_size(idx) < 128; i++) sleep_ms(10);
    gpubp_file *f;
    TS_OK(gpubp_open(&f, ru_url(port, "stream.bp"), GPUBP_MODE_READ, "timeout=20"));
    int steps = 0, rc;
    double t0 = ru_now();
    while ((rc = gpubp_begin_step(f)) == GPUBP_OK && ru_now() - t0 < 60) {
        gpubp_variable *v;
        double b[1000];
        TS_OK(gpubp_inquire_variable(&v, f, "s"));
        TS_OK(gpubp_get(f, v, b, GPUBP_SYNC));
        for (int i = 0; i < 1000; i++) assert_true(b[i] == steps * 1000 + i);
        TS_OK(gpubp_end_step(f));
        steps++;
    }
    assert_int_equal(rc, GPUBP_END_OF_STREAM);
    assert_int_equal(steps, STREAM_STEPS);
    TS_OK(gpubp_close(f));
    int st;
    waitpid(w, &st, 0);
    assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);
    st = ru_stop_server(srv, SIGTERM);
    assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);
}

/* ---- gpubpls ----------------------------------------------------------------------------- */

/* Runs gpubpls with args and the dataset; the output into a new string. */
static char *gpubpls(const char *args, const char *path, int *status)
{
    const char *bin = getenv("GPUBPLS");
    char cmd[9000];
    snprintf(cmd, sizeof cmd, "'%s' %s '%s' 2>&1", bin, args, path);
    FILE *p = popen(cmd, "r");
    assert_non_null(p);
    size_t cap = 1 << 16, n = 0;
    char *out = malloc(cap);
    size_t k;
    while ((k = fread(out + n, 1, cap - n - 1, p)) > 0) {
        n += k;
        if (n + 1 == cap) out = realloc(out, cap *= 2);
    }
    out[n] = '\0';
    *status = pclose(p);
    return out;
}

static void test_gpubpls(void **state)
{
    (void)state;
    if (!getenv("GPUBPLS")) skip();
    static const char *const sets[] = {"BP4/types.bp", "BP4/steps_2d.bp", "BP4/local.bp",
                                       "BP4/changing_3d.bp", "gpu/BP4/StepsWriteReadCuPy.bp"};
    static const char *const args[] = {"-la", "-d", "-D", "-l -d -n 4"};
    for (size_t i = 0; i < sizeof sets / sizeof sets[0]; i++)
        for (size_t a = 0; a < sizeof args / sizeof args[0]; a++) {
            char local[4700];
            snprintf(local, sizeof local, "%s/%s", g_adios, sets[i]);
            int s1, s2;
            char *lo = gpubpls(args[a], local, &s1);
            char *re = gpubpls(args[a], ru_url(g_port, sets[i]), &s2);
            if (s1 != s2 || strcmp(lo, re))
                print_error("gpubpls %s %s: local (status %d):\n%s\nremote (status %d):\n%s\n",
                            args[a], sets[i], s1, lo, s2, re);
            assert_int_equal(s1, 0);
            assert_int_equal(s2, 0);
            assert_string_equal(lo, re);
            free(lo);
            free(re);
        }
    /* a server that is not there: a clear error, not a hang */
    int s;
    char url[128];
    snprintf(url, sizeof url, "gpubp://127.0.0.1:%d/BP4/types.bp", ru_free_port());
    setenv("GPUBP_REMOTE_VERBOSE", "0", 1);
    double t0 = ru_now();
    char *o = gpubpls("-l", url, &s);
    assert_true(s != 0);
    assert_true(ru_now() - t0 < 60);
    free(o);
}

int main(void)
{
    g_port = ru_fixture_port();
    if (g_port <= 0) {
        fprintf(stderr, "no fixture server (GPUBP_REMOTE_PORT_FILE)\n");
        return 1;
    }
    snprintf(g_adios, sizeof g_adios, "%s", ts_golden_dir());
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_golden_remote_equals_local),
        cmocka_unit_test(test_golden_bp5_remote_equals_local),
        cmocka_unit_test(test_select_steps_remote),
        cmocka_unit_test(test_open_errors),
        cmocka_unit_test(test_big_host_and_device),
        cmocka_unit_test(test_stream_while_writing),
        cmocka_unit_test(test_gpubpls),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
