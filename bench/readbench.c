/* gpubp-readbench: reads an existing dataset (BP4 or BP5, written by anyone) through libgpubp into
 * host or device memory, whole and as a strided half-box, and prints the medians:
 *
 *   gpubp-readbench --path DATASET [--var NAME] --mem host|gpu [--repeat R] [--params P]
 *                   [--check]
 *
 *   readbench format=BP5 mem=gpu var=field steps=S MiB_per_step=N read_GBps=<x> sub_read_GBps=<y>
 *
 * The variable (default "field") is a 2-D global array of doubles per step, as gpubp-bench and
 * gpubp-adios2-cmp write it (rows of COLS doubles). A repetition opens the dataset in step mode
 * and gets the whole array of every step, then opens it again and gets half of the fastest
 * dimension of every step (a strided sub-box: every row, its first half). --mem gpu: the
 * destination is device memory (GPU memory space and layout: the dims flipped). GB = 1e9 bytes
 * delivered; a run's time covers open, every step and close (after one untimed warm-up read, as
 * gpubp-bench's warm-up write: the pinned pool is made once per process). --check: the values are those of
 * gpubp-adios2-cmp's workload (element i of a step is i), checked after each read (outside the
 * clock). It is how the BP5 reader's device path is timed against the BP4 one on the same content
 * (bench/run_device.sh): gpubp-adios2-cmp --keep writes both with ADIOS2.
 * Exit status: 0, 1 on a failure (message on stderr), 2 on bad usage. */
#include "bench/bench_dev.h"
#include "bench/bench_util.h"

#include <gpubp.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#define RB_MAX_REPEAT 32

typedef struct rb_opts {
    const char *path, *var, *params;
    int gpu, repeat, check;
} rb_opts;

static int rb_fail(const char *what, int rc)
{
    fprintf(stderr, "gpubp-readbench: %s: %s (%s)\n", what, gpubp_strerror(rc), gpubp_last_error());
    return 1;
}

#define RB_CHECK(call)                                 \
    do {                                               \
        int rb_rc_ = (call);                           \
        if (rb_rc_ < 0) return rb_fail(#call, rb_rc_); \
    } while (0)

/* the element count of one step's variable, and its two dims in the file's (host) layout */
static int rb_shape(const rb_opts *o, size_t dims[2], size_t *steps)
{
    gpubp_file *f;
    gpubp_variable *v;
    RB_CHECK(gpubp_open(&f, o->path, GPUBP_MODE_READ_RANDOM_ACCESS, o->params));
    int rc = gpubp_inquire_variable(&v, f, o->var);
    size_t nd = 0;
    if (rc == GPUBP_OK) rc = gpubp_variable_ndims(v, &nd);
    if (rc == GPUBP_OK && nd != 2) rc = GPUBP_ERR_INVALID_ARG;
    if (rc == GPUBP_OK) rc = gpubp_variable_shape(v, GPUBP_MEM_HOST, dims);
    if (rc == GPUBP_OK) rc = gpubp_variable_steps(v, steps);
    gpubp_close(f);
    if (rc != GPUBP_OK) return rb_fail("the variable (a 2-D array of doubles)", rc);
    return 0;
}

/* Checks the values of a read: element (r, c) of the box [rows x cols] of a step whose rows hold
 * `full` columns is r * full + c. Device data is downloaded first. */
static long rb_verify(const rb_opts *o, const double *p, size_t rows, size_t cols, size_t full)
{
    size_t n = rows * cols;
    double *h = (double *)p;
    if (o->gpu) {
        h = malloc(n * sizeof *h);
        if (!h || bench_dev_download(h, p, n * sizeof *h)) {
            free(h);
            return -1;
        }
    }
    long bad = 0;
    for (size_t r = 0; r < rows; r++)
        for (size_t c = 0; c < cols; c += (r % 97 == 0 ? 1 : 61))
            if (h[r * cols + c] != (double)(r * full + c)) bad++;
    if (o->gpu) free(h);
    return bad;
}

/* One read of every step: whole (half = 0) or the first half of each row; the seconds. */
static int rb_read(const rb_opts *o, const size_t dims[2], int half, double *dst, size_t steps,
                   double *secs)
{
    double t0 = bench_now();
    gpubp_file *f;
    RB_CHECK(gpubp_open(&f, o->path, GPUBP_MODE_READ, o->params));
    size_t got = 0;
    int rc;
    size_t cols = half ? dims[1] / 2 : dims[1];
    long bad = 0;
    while ((rc = gpubp_begin_step(f)) == GPUBP_OK) {
        gpubp_variable *v;
        RB_CHECK(gpubp_inquire_variable(&v, f, o->var));
        RB_CHECK(gpubp_set_memory_space(v, o->gpu ? GPUBP_MEM_GPU : GPUBP_MEM_HOST));
        /* the GPU layout lists the dims fastest first */
        size_t st[2] = {0, 0}, ct[2] = {dims[0], cols};
        if (o->gpu) {
            ct[0] = cols;
            ct[1] = dims[0];
        }
        RB_CHECK(gpubp_set_selection(v, 2, st, ct));
        RB_CHECK(gpubp_get(f, v, dst, GPUBP_SYNC));
        RB_CHECK(gpubp_end_step(f));
        if (o->check && got + 1 == steps) bad = rb_verify(o, dst, dims[0], cols, dims[1]);
        got++;
    }
    if (rc != GPUBP_END_OF_STREAM) return rb_fail("gpubp_begin_step", rc);
    RB_CHECK(gpubp_close(f));
    *secs = bench_now() - t0;
    if (got != steps) {
        fprintf(stderr, "gpubp-readbench: read %zu steps of %zu\n", got, steps);
        return 1;
    }
    if (bad) {
        fprintf(stderr, "gpubp-readbench: %ld wrong values (%s read)\n", bad, half ? "half" : "whole");
        return 1;
    }
    return 0;
}

static int rb_usage(void)
{
    fprintf(stderr, "usage: gpubp-readbench --path DATASET [--var NAME] --mem host|gpu "
                    "[--repeat R] [--params P] [--check]\n");
    return 2;
}

int main(int argc, char **argv)
{
    rb_opts o = {NULL, "field", NULL, 0, 3, 0};
    int mem = 0;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(a, "--path") && v) o.path = argv[++i];
        else if (!strcmp(a, "--var") && v) o.var = argv[++i];
        else if (!strcmp(a, "--params") && v) o.params = argv[++i];
        else if (!strcmp(a, "--repeat") && v) o.repeat = atoi(argv[++i]);
        else if (!strcmp(a, "--check")) o.check = 1;
        else if (!strcmp(a, "--mem") && v) {
            v = argv[++i];
            mem = 1;
            if (!strcmp(v, "gpu")) o.gpu = 1;
            else if (strcmp(v, "host")) return rb_usage();
        } else return rb_usage();
    }
    if (!o.path || !mem || o.repeat < 1 || o.repeat > RB_MAX_REPEAT) return rb_usage();
    size_t dims[2], steps = 0;
    if (rb_shape(&o, dims, &steps)) return 1;
    size_t bytes = dims[0] * dims[1] * sizeof(double);
    double *dst;
    if (o.gpu) {
        const char *why = "";
        if (!bench_dev_init(&why)) {
            fprintf(stderr, "gpubp-readbench: --mem gpu: %s\n", why);
            return 1;
        }
        dst = bench_dev_alloc(bytes);
    } else {
        dst = malloc(bytes);
    }
    if (!dst) {
        fprintf(stderr, "gpubp-readbench: no memory for a step of %zu bytes\n", bytes);
        return 1;
    }
    double whole[RB_MAX_REPEAT], sub[RB_MAX_REPEAT], secs;
    /* a warm-up read (not timed): the library's pinned pool is allocated once per process and
     * kept for the next open, as in gpubp-bench; a first open would otherwise time it */
    int rc = rb_read(&o, dims, 0, dst, steps, &secs);
    for (int k = 0; k < o.repeat && rc == 0; k++) {
        rc = rb_read(&o, dims, 0, dst, steps, &secs);
        whole[k] = (double)bytes * (double)steps / secs / 1e9;
        if (rc == 0) rc = rb_read(&o, dims, 1, dst, steps, &secs);
        sub[k] = (double)(dims[0] * (dims[1] / 2) * sizeof(double)) * (double)steps / secs / 1e9;
    }
    if (rc == 0) {
        char mmd[4096];
        struct stat sb;
        snprintf(mmd, sizeof mmd, "%s/mmd.0", o.path);
        printf("readbench format=%s mem=%s var=%s steps=%zu MiB_per_step=%.0f read_GBps=%.2f "
               "sub_read_GBps=%.2f\n", stat(mmd, &sb) == 0 ? "BP5" : "BP4", o.gpu ? "gpu" : "host",
               o.var, steps, (double)bytes / 1048576.0, bench_median(whole, (size_t)o.repeat),
               bench_median(sub, (size_t)o.repeat));
    }
    if (o.gpu) bench_dev_free(dst);
    else free(dst);
    return rc;
}
