/* gpubp-bench --meta: the metadata-at-scale benchmark (docs/performance.md, "Metadata at scale").
 * Writes DIR/meta_S_V_B.bp with V one-dimensional global double variables var000.. of 16 values
 * per block, B blocks per step, S steps, and leaves it there; then, each in a fresh child process
 * so that times and peak memory are its own:
 *   open_inquire: open in random-access mode, inquire var007, count its steps;
 *   read_last:    read var007 at its last step (after open_inquire, in the same child);
 *   list:         what `gpubpls -l` needs: every variable's type, steps, shape per step and
 *                 min/max over all steps, and every attribute.
 * Prints one line: write_s=<> open_inquire_s=<> read_last_s=<> list_s=<> rss_kb=<>
 * open_inquire_cpu_s=<> (rss_kb: the larger peak resident set of the two reading children;
 * open_inquire_cpu_s: the CPU time of open_inquire, which a loaded machine does not inflate).
 * --path P reads the dataset P instead, written by someone else (e.g. ADIOS2's BP5 engine through
 * bench/adios2_meta.cpp, the same content): nothing is written, write_s is 0. */
#include "bench/bench_meta.h"

#include <gpubp.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + t.tv_nsec * 1e-9;
}

#define CHECK(expr)                                                                        \
    do {                                                                                   \
        int rc_ = (expr);                                                                  \
        if (rc_ != GPUBP_OK) {                                                             \
            fprintf(stderr, "gpubp-bench: %s: %s\n", #expr, gpubp_last_error());           \
            return 1;                                                                      \
        }                                                                                  \
    } while (0)

static int write_dataset(const char *path, size_t S, size_t V, size_t B)
{
    gpubp_file *w;
    CHECK(gpubp_open(&w, path, GPUBP_MODE_WRITE, NULL));
    gpubp_variable **v = calloc(V, sizeof *v);
    if (!v) return 1;
    size_t shape = 16 * B, start = 0, count = 16;
    for (size_t i = 0; i < V; i++) {
        char name[32];
        snprintf(name, sizeof name, "var%03zu", i);
        CHECK(gpubp_define_variable(&v[i], w, name, GPUBP_TYPE_DOUBLE, 1, &shape, &start, &count));
    }
    double unit = 1.0;
    CHECK(gpubp_define_attribute(w, "unit", GPUBP_TYPE_DOUBLE, &unit, 1));
    double d[16];
    for (size_t s = 0; s < S; s++) {
        CHECK(gpubp_begin_step(w));
        for (size_t i = 0; i < V; i++)
            for (size_t b = 0; b < B; b++) {
                for (size_t k = 0; k < 16; k++) d[k] = (double)(s + i + b + k);
                size_t st = 16 * b;
                CHECK(gpubp_set_selection(v[i], 1, &st, &count));
                CHECK(gpubp_put(w, v[i], d, GPUBP_SYNC));
            }
        CHECK(gpubp_end_step(w));
    }
    CHECK(gpubp_close(w));
    free(v);
    return 0;
}

static double cpu_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
    return (double)t.tv_sec + t.tv_nsec * 1e-9;
}

static int child_open_read(const char *path, double *t_open, double *t_read, double *c_open)
{
    double c0 = cpu_s(), t0 = now_s();
    gpubp_file *r;
    gpubp_variable *v;
    size_t ns, nd, shape[1];
    CHECK(gpubp_open(&r, path, GPUBP_MODE_READ_RANDOM_ACCESS, NULL));
    CHECK(gpubp_inquire_variable(&v, r, "var007"));
    CHECK(gpubp_variable_steps(v, &ns));
    double t1 = now_s();
    *c_open = cpu_s() - c0;
    CHECK(gpubp_set_step_selection(v, ns - 1, 1));
    CHECK(gpubp_variable_ndims(v, &nd));
    CHECK(gpubp_variable_shape(v, GPUBP_MEM_HOST, shape));
    double *buf = malloc(shape[0] * sizeof *buf);
    if (!buf) return 1;
    CHECK(gpubp_get(r, v, buf, GPUBP_SYNC));
    double t2 = now_s();
    free(buf);
    CHECK(gpubp_close(r));
    *t_open = t1 - t0;
    *t_read = t2 - t1;
    return 0;
}

static int child_list(const char *path, double *t_list)
{
    double t0 = now_s();
    gpubp_file *r;
    CHECK(gpubp_open(&r, path, GPUBP_MODE_READ_RANDOM_ACCESS, NULL));
    size_t n;
    const char *const *names;
    CHECK(gpubp_available_variables(r, &n, &names));
    unsigned long long sink = 0;
    for (size_t i = 0; i < n; i++) {
        gpubp_variable *v;
        gpubp_type t;
        size_t ns, nd, dims[32];
        unsigned char mn[16] = {0}, mx[16]; /* strings have no min/max: mn stays 0 */
        CHECK(gpubp_inquire_variable(&v, r, names[i]));
        CHECK(gpubp_variable_type(v, &t));
        CHECK(gpubp_variable_steps(v, &ns));
        CHECK(gpubp_variable_ndims(v, &nd));
        for (size_t s = 0; s < ns && nd <= 32; s++) { /* the shape of every step, for `__` */
            CHECK(gpubp_set_step_selection(v, s, 1));
            CHECK(gpubp_variable_shape(v, GPUBP_MEM_HOST, dims));
            sink += nd ? dims[0] : 0;
        }
        CHECK(gpubp_set_step_selection(v, 0, ns));
        if (t != GPUBP_TYPE_STRING) CHECK(gpubp_variable_minmax(v, mn, mx));
        sink += mn[0];
    }
    CHECK(gpubp_available_attributes(r, &n, &names));
    for (size_t i = 0; i < n; i++) {
        gpubp_type t;
        size_t cnt;
        CHECK(gpubp_inquire_attribute(r, names[i], &t, &cnt, NULL));
        sink += cnt;
    }
    CHECK(gpubp_close(r));
    *t_list = now_s() - t0;
    return sink == 0xFFFFFFFFFFFFFFFFull; /* keep the work */
}

/* Runs fn in a child; its results come back through a pipe, its peak RSS through wait4. */
static int in_child(int which, const char *path, double out[3], long *rss_kb)
{
    int fds[2];
    if (pipe(fds) != 0) return 1;
    pid_t pid = fork();
    if (pid < 0) return 1;
    if (pid == 0) {
        close(fds[0]);
        double r[3] = {0, 0, 0};
        int rc = which == 0 ? child_open_read(path, &r[0], &r[1], &r[2]) : child_list(path, &r[0]);
        if (write(fds[1], r, sizeof r) != (ssize_t)sizeof r) rc = 1;
        _exit(rc);
    }
    close(fds[1]);
    ssize_t got = read(fds[0], out, 3 * sizeof(double));
    close(fds[0]);
    int st;
    struct rusage ru;
    if (wait4(pid, &st, 0, &ru) != pid || !WIFEXITED(st) || WEXITSTATUS(st) != 0 ||
        got != (ssize_t)(3 * sizeof(double)))
        return 1;
    *rss_kb = ru.ru_maxrss;
    return 0;
}

int gpubp_bench_meta(int argc, char **argv)
{
    size_t S = 10000, V = 20, B = 1;
    const char *dir = ".", *given = NULL;
    int no_write = 0;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        const char *val = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(a, "--meta")) continue;
        if (!strcmp(a, "--no-write")) { no_write = 1; continue; }
        if (!val) {
            fprintf(stderr, "gpubp-bench --meta: %s needs a value\n", a);
            return 2;
        }
        if (!strcmp(a, "--steps")) S = strtoull(val, NULL, 10);
        else if (!strcmp(a, "--vars")) V = strtoull(val, NULL, 10);
        else if (!strcmp(a, "--blocks")) B = strtoull(val, NULL, 10);
        else if (!strcmp(a, "--dir")) dir = val;
        else if (!strcmp(a, "--path")) given = val;
        else {
            fprintf(stderr, "gpubp-bench --meta: unknown option %s\n"
                    "usage: gpubp-bench --meta --steps S --vars V --blocks B --dir D [--no-write]\n"
                    "       gpubp-bench --meta --path DATASET\n",
                    a);
            return 2;
        }
        i++;
    }
    if (S == 0 || V < 8 || B == 0) {
        fprintf(stderr, "gpubp-bench --meta: need steps >= 1, vars >= 8 (var007 is read), "
                        "blocks >= 1\n");
        return 2;
    }
    char path[4096];
    snprintf(path, sizeof path, "%s/meta_%zu_%zu_%zu.bp", dir, S, V, B);
    if (given) {
        snprintf(path, sizeof path, "%s", given);
        no_write = 1;
    }
    double t0 = now_s();
    if (!no_write && write_dataset(path, S, V, B) != 0) return 1;
    double t_write = no_write ? 0 : now_s() - t0;
    double r1[3], r2[3];
    long rss1 = 0, rss2 = 0;
    if (in_child(0, path, r1, &rss1) || in_child(1, path, r2, &rss2)) {
        fprintf(stderr, "gpubp-bench --meta: a reading child failed on %s\n", path);
        return 1;
    }
    printf("write_s=%.3f open_inquire_s=%.4f read_last_s=%.5f list_s=%.4f rss_kb=%ld "
           "open_inquire_cpu_s=%.4f\n", t_write, r1[0], r1[1], r2[0], rss1 > rss2 ? rss1 : rss2,
           r1[2]);
    return 0;
}
