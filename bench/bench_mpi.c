/* gpubp-bench-mpi: MPI weak scaling of libgpubp_mpi (issue 8; docs/scaling.md). Built only when
 * libgpubp_mpi is, so the serial gpubp-bench keeps no MPI dependency.
 *
 *   mpiexec -n P gpubp-bench-mpi --dir D [--mib-per-rank N] [--steps S] [--vars V] [--repeat R]
 *                                [--aggs LIST] [--modes LIST] [--params "k=v,..."] [--keep]
 *   gpubp-bench-mpi --synthetic LIST [--vars V] [--steps S] [--dir D]
 *
 * Weak scaling: every rank writes the same bytes per step (N MiB, default 64, as V 1-D global
 * double arrays, rank r's block at r*n) for S steps (default 4). For every aggregation mode of
 * LIST (default "parallel,funnel") and every aggregator count of LIST (default "1,P": one subfile
 * for all ranks, one per rank) it prints the medians over R repeats (default 5; configurations
 * interleaved within a repeat, so drift hits all alike):
 *
 *   mode=M aggregators=A ranks=P mib_per_rank=N steps=S vars=V: write_GBps=X step_ms=Y
 *       md_step_ms=Z md0_bytes_per_step=B md0_bytes_per_rank_step=C vs_raw=F
 *
 * write_GBps: P*N*S MiB over the time from open to close (all ranks, barrier to barrier);
 * step_ms: one step, begin_step to end_step, the slowest rank; md_step_ms: rank 0's end_step of a
 * metadata-only step (the same V variables, one element per rank each), i.e. gathering every
 * rank's metadata, merging it on rank 0 and writing md.0 and md.idx; md0_bytes_per_step: growth of
 * md.0 per step. Before them, in the same run, the raw baseline:
 *
 *   baseline ranks=P: raw_own_GBps=X raw_shared_GBps=Y
 *
 * (each rank pwrites the same bytes per step to a file of its own / to its slice of one shared
 * file, and closes it), and vs_raw = write_GBps / raw_own_GBps.
 *
 * --synthetic LIST (one process, no mpiexec needed): the rank-0 side of the metadata merge for
 * N = each value of LIST simulated ranks. A fake communicator of the public <gpubp/comm.h> gives
 * the library N ranks whose step metadata are copies of this process's own; each metadata-only
 * step is then timed (median over S steps, default 20):
 *
 *   synthetic ranks=N vars=V: merge_step_ms=X md0_bytes_per_step=B
 *
 * Files go to D (default /tmp); data is in the page cache (no fsync), so the figures measure the
 * library's own cost against the same bytes written raw. Exit status: 0, 1 on a failure, 2 on bad
 * usage. */
#define _POSIX_C_SOURCE 200809L
#include <dirent.h>
#include <fcntl.h>
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <gpubp.h>
#include <gpubp/comm.h>
#include <gpubp/mpi.h>

#include "bench/bench_util.h"

#define MAX_LIST 16
#define MAX_REPEAT 64
#define MAX_STEPS 1024

typedef struct opts {
    const char *dir, *params;
    size_t mib, steps, vars;
    int repeat, keep;
    int naggs, aggs[MAX_LIST];
    int nmodes;
    const char *modes[MAX_LIST];
} opts;

static int rank, nranks;

static void die(const char *what, int rc)
{
    fprintf(stderr, "gpubp-bench-mpi: rank %d: %s: %d (%s): %s\n", rank, what, rc,
            gpubp_strerror(rc), gpubp_last_error());
    MPI_Abort(MPI_COMM_WORLD, 1);
    exit(1);
}

#define OK(expr)                          \
    do {                                  \
        int rc_ = (expr);                 \
        if (rc_ != GPUBP_OK) die(#expr, rc_); \
    } while (0)

static long file_size(const char *p)
{
    struct stat st;
    return stat(p, &st) == 0 ? (long)st.st_size : -1;
}

/* ---- weak scaling -------------------------------------------------------------------------- */

typedef struct result {
    double total_s, step_s[MAX_STEPS], md_s[MAX_STEPS];
    long md0_bytes;
} result;

/* Defines v0 … v(nvars-1): 1-D global doubles of this rank's block (start, count) in shape. */
static void define_vars(gpubp_file *f, size_t nvars, size_t shape, size_t start, size_t count,
                        gpubp_variable **v)
{
    for (size_t i = 0; i < nvars; i++) {
        char name[32];
        snprintf(name, sizeof name, "v%zu", i);
        OK(gpubp_define_variable(&v[i], f, name, GPUBP_TYPE_DOUBLE, 1, &shape, &start, &count));
    }
}

/* One write run of one configuration: the data steps, then as many metadata-only steps. */
static void run_config(const opts *o, const char *path, const char *params, double *data,
                       result *res)
{
    size_t n = o->mib * 1024 * 1024 / 8 / o->vars;
    size_t shape = n * (size_t)nranks, start = n * (size_t)rank;
    gpubp_variable *v[64];
    if (rank == 0) bench_remove_dataset(path);
    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = bench_now();
    gpubp_file *f;
    OK(gpubp_open_mpi(&f, path, GPUBP_MODE_WRITE, params, MPI_COMM_WORLD));
    define_vars(f, o->vars, shape, start, n, v);
    for (size_t s = 0; s < o->steps; s++) {
        double ts = bench_now();
        OK(gpubp_begin_step(f));
        for (size_t i = 0; i < o->vars; i++) OK(gpubp_put(f, v[i], data + i * n, GPUBP_DEFERRED));
        OK(gpubp_end_step(f));
        double dt = bench_now() - ts;
        MPI_Allreduce(&dt, &res->step_s[s], 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    }
    OK(gpubp_close(f));
    MPI_Barrier(MPI_COMM_WORLD);
    res->total_s = bench_now() - t0;
    if (rank == 0) {
        char p[4400];
        snprintf(p, sizeof p, "%s/md.0", path);
        res->md0_bytes = file_size(p);
    }

    /* metadata-only steps: the same variables, one element per rank */
    char mdpath[4400];
    snprintf(mdpath, sizeof mdpath, "%s.md", path);
    if (rank == 0) bench_remove_dataset(mdpath);
    MPI_Barrier(MPI_COMM_WORLD);
    size_t one = 1, mshape = (size_t)nranks, mstart = (size_t)rank;
    OK(gpubp_open_mpi(&f, mdpath, GPUBP_MODE_WRITE, params, MPI_COMM_WORLD));
    define_vars(f, o->vars, mshape, mstart, one, v);
    for (size_t s = 0; s < o->steps; s++) {
        OK(gpubp_begin_step(f));
        for (size_t i = 0; i < o->vars; i++) OK(gpubp_put(f, v[i], data + i, GPUBP_SYNC));
        MPI_Barrier(MPI_COMM_WORLD); /* every rank arrives together: rank 0 times the merge */
        double ts = bench_now();
        OK(gpubp_end_step(f));
        res->md_s[s] = bench_now() - ts;
    }
    OK(gpubp_close(f));
    MPI_Barrier(MPI_COMM_WORLD);
    if (!o->keep && rank == 0) {
        bench_remove_dataset(path);
        bench_remove_dataset(mdpath);
    }
}

/* The raw baseline: each rank pwrites the bytes of every step to its own file (own = 1) or to its
 * slice of one shared file, then closes it; aggregate GB/s, barrier to barrier. */
static double raw_run(const opts *o, const double *data, int own)
{
    size_t bytes = o->mib * 1024 * 1024;
    char p[4200];
    if (own)
        snprintf(p, sizeof p, "%s/raw.%d", o->dir, rank);
    else
        snprintf(p, sizeof p, "%s/raw.shared", o->dir);
    if (rank == 0 || own) unlink(p);
    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = bench_now();
    int fd = open(p, O_WRONLY | O_CREAT, 0644);
    if (fd < 0) die("open (raw baseline)", GPUBP_ERR_IO);
    for (size_t s = 0; s < o->steps; s++) {
        off_t off = own ? (off_t)(s * bytes) : (off_t)((s * (size_t)nranks + (size_t)rank) * bytes);
        size_t done = 0;
        while (done < bytes) {
            ssize_t w = pwrite(fd, (const char *)data + done, bytes - done, off + (off_t)done);
            if (w <= 0) die("pwrite (raw baseline)", GPUBP_ERR_IO);
            done += (size_t)w;
        }
    }
    close(fd);
    MPI_Barrier(MPI_COMM_WORLD);
    double secs = bench_now() - t0;
    if (!o->keep) unlink(p);
    return (double)bytes * (double)o->steps * nranks / secs / 1e9;
}

static int weak_scaling(const opts *o)
{
    size_t n = o->mib * 1024 * 1024 / 8;
    double *data = malloc(n * sizeof *data);
    if (!data) die("out of memory", GPUBP_ERR_NOMEM);
    for (size_t i = 0; i < n; i++) data[i] = (double)rank * 1e9 + (double)i;
    int ncfg = o->nmodes * o->naggs;
    result *res = calloc((size_t)ncfg * (size_t)o->repeat, sizeof *res);
    double own[MAX_REPEAT], shared[MAX_REPEAT];
    if (!res) die("out of memory", GPUBP_ERR_NOMEM);
    for (int rep = 0; rep < o->repeat; rep++) {
        own[rep] = raw_run(o, data, 1);
        shared[rep] = raw_run(o, data, 0);
        for (int c = 0; c < ncfg; c++) {
            char params[512], path[4200];
            const char *mode = o->modes[c / o->naggs];
            int aggs = o->aggs[c % o->naggs];
            snprintf(params, sizeof params, "aggregators=%d,aggregation=%s%s%s", aggs, mode,
                     o->params ? "," : "", o->params ? o->params : "");
            snprintf(path, sizeof path, "%s/bench_mpi_%s_%d.bp", o->dir, mode, aggs);
            run_config(o, path, params, data, &res[rep * ncfg + c]);
        }
    }
    double raw_own = bench_median(own, (size_t)o->repeat), raw_shared = bench_median(shared, (size_t)o->repeat);
    if (rank == 0)
        printf("baseline ranks=%d: raw_own_GBps=%.3f raw_shared_GBps=%.3f\n", nranks, raw_own,
               raw_shared);
    for (int c = 0; c < ncfg && rank == 0; c++) {
        double gbps[MAX_REPEAT], *steps = malloc(o->steps * (size_t)o->repeat * sizeof(double)),
               *mds = malloc(o->steps * (size_t)o->repeat * sizeof(double));
        long md0 = 0;
        if (!steps || !mds) die("out of memory", GPUBP_ERR_NOMEM);
        for (int rep = 0; rep < o->repeat; rep++) {
            result *r = &res[rep * ncfg + c];
            gbps[rep] = (double)o->mib * 1048576.0 * (double)o->steps * nranks / r->total_s / 1e9;
            memcpy(steps + (size_t)rep * o->steps, r->step_s, o->steps * sizeof(double));
            memcpy(mds + (size_t)rep * o->steps, r->md_s, o->steps * sizeof(double));
            md0 = r->md0_bytes;
        }
        double g = bench_median(gbps, (size_t)o->repeat);
        double per_step = md0 > 64 ? (double)(md0 - 64) / (double)o->steps : 0;
        printf("mode=%s aggregators=%d ranks=%d mib_per_rank=%zu steps=%zu vars=%zu: "
               "write_GBps=%.3f step_ms=%.3f md_step_ms=%.3f md0_bytes_per_step=%.0f "
               "md0_bytes_per_rank_step=%.1f vs_raw=%.2f\n",
               o->modes[c / o->naggs], o->aggs[c % o->naggs], nranks, o->mib, o->steps, o->vars,
               g, 1e3 * bench_median(steps, o->steps * (size_t)o->repeat),
               1e3 * bench_median(mds, o->steps * (size_t)o->repeat), per_step, per_step / nranks,
               g / raw_own);
        free(steps);
        free(mds);
    }
    free(res);
    free(data);
    return 0;
}

/* ---- the synthetic merge: N fake ranks in this process ------------------------------------ */

/* A communicator of `size` ranks in which this process is rank 0 and every other rank's
 * contribution to a gather is a copy of rank 0's (the metadata of N identical writers). Only the
 * collectives a writer with aggregation=parallel and aggregators=1 uses are meaningful. */
typedef struct fake_comm {
    int size;
} fake_comm;

static int fc_rank(void *ctx) { (void)ctx; return 0; }
static int fc_size(void *ctx) { return ((fake_comm *)ctx)->size; }
static int fc_barrier(void *ctx) { (void)ctx; return 0; }
static int fc_bcast(void *ctx, void *buf, size_t n, int root)
{
    (void)ctx, (void)buf, (void)n, (void)root;
    return 0;
}
static int fc_gather(void *ctx, const void *send, size_t n, void *recv, const size_t *counts,
                     int root)
{
    (void)root;
    fake_comm *c = ctx;
    size_t at = 0;
    for (int r = 0; recv && r < c->size; r++) {
        size_t len = counts ? counts[r] : n;
        memcpy((char *)recv + at, send, len < n ? len : n);
        at += len;
    }
    return 0;
}
static int fc_allreduce(void *ctx, int64_t *vals, size_t n, gpubp_comm_reduce op)
{
    fake_comm *c = ctx;
    if (op == GPUBP_COMM_SUM)
        for (size_t i = 0; i < n; i++) vals[i] *= c->size;
    return 0;
}
static int fc_exscan(void *ctx, uint64_t *vals, size_t n)
{
    (void)ctx;
    memset(vals, 0, n * sizeof *vals);
    return 0;
}
static int fc_split(void *ctx, int color, int key, void **out)
{
    (void)color, (void)key;
    fake_comm *c = malloc(sizeof *c);
    if (!c) return 12;
    *c = *(fake_comm *)ctx;
    *out = c;
    return 0;
}
static int fc_split_node(void *ctx, void **out) { return fc_split(ctx, 0, 0, out); }
static int fc_p2p(void *ctx, const void *buf, size_t n, int peer)
{
    (void)ctx, (void)buf, (void)n, (void)peer;
    return 95; /* EOPNOTSUPP: only aggregation=parallel is simulated */
}
static int fc_recv(void *ctx, void *buf, size_t n, int peer) { return fc_p2p(ctx, buf, n, peer); }
static void fc_free(void *ctx) { free(ctx); }

static const gpubp_comm_ops fake_ops = {GPUBP_COMM_OPS_VERSION, fc_rank, fc_size, fc_barrier,
                                        fc_bcast, fc_gather, fc_allreduce, fc_exscan, fc_split,
                                        fc_split_node, fc_p2p, fc_recv, fc_free};

static int synthetic(const opts *o, const char *list)
{
    char buf[256];
    snprintf(buf, sizeof buf, "%s", list);
    for (char *tok = strtok(buf, ","); tok; tok = strtok(NULL, ",")) {
        int n = atoi(tok);
        if (n < 1) return 2;
        char path[4200];
        snprintf(path, sizeof path, "%s/bench_synthetic_%d.bp", o->dir, n);
        bench_remove_dataset(path);
        fake_comm *c = malloc(sizeof *c);
        if (!c) die("out of memory", GPUBP_ERR_NOMEM);
        c->size = n;
        gpubp_file *f;
        OK(gpubp_open_comm(&f, path, GPUBP_MODE_WRITE, "aggregators=1,aggregation=parallel",
                           &fake_ops, c));
        gpubp_variable *v[64];
        size_t one = 1, shape = (size_t)n, start = 0;
        double x = 1.0, t[MAX_STEPS];
        define_vars(f, o->vars, shape, start, one, v);
        for (size_t s = 0; s < o->steps; s++) {
            OK(gpubp_begin_step(f));
            for (size_t i = 0; i < o->vars; i++) OK(gpubp_put(f, v[i], &x, GPUBP_SYNC));
            double t0 = bench_now();
            OK(gpubp_end_step(f));
            t[s] = bench_now() - t0;
        }
        OK(gpubp_close(f));
        char p[4300];
        snprintf(p, sizeof p, "%s/md.0", path);
        long md0 = file_size(p);
        printf("synthetic ranks=%d vars=%zu: merge_step_ms=%.3f md0_bytes_per_step=%.0f\n", n,
               o->vars, 1e3 * bench_median(t, o->steps), (double)(md0 - 64) / (double)o->steps);
        fflush(stdout);
        if (!o->keep) bench_remove_dataset(path);
    }
    return 0;
}

static int parse_ints(const char *s, int *out)
{
    int n = 0;
    char buf[256];
    snprintf(buf, sizeof buf, "%s", s);
    for (char *t = strtok(buf, ","); t && n < MAX_LIST; t = strtok(NULL, ",")) {
        int v = !strcmp(t, "P") ? nranks : atoi(t), dup = 0;
        for (int i = 0; i < n; i++) dup |= out[i] == v; /* "1,P" with P = 1: once */
        if (!dup) out[n++] = v;
    }
    return n;
}

static int usage(void)
{
    if (rank == 0)
        fprintf(stderr, "usage: mpiexec -n P gpubp-bench-mpi --dir D [--mib-per-rank N] "
                        "[--steps S] [--vars V] [--repeat R] [--aggs 1,P] "
                        "[--modes parallel,funnel] [--params k=v,...] [--keep]\n"
                        "       gpubp-bench-mpi --synthetic 1000,10000 [--vars V] [--steps S] "
                        "[--dir D]\n");
    MPI_Finalize();
    return 2;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nranks);
    opts o = {"/tmp", NULL, 64, 4, 4, 5, 0, 0, {0}, 0, {NULL}};
    const char *synth = NULL;
    static char modes_buf[256] = "parallel,funnel";
    const char *aggs = "1,P";
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(a, "--keep")) o.keep = 1;
        else if (!v) return usage();
        else if (!strcmp(a, "--dir")) o.dir = argv[++i];
        else if (!strcmp(a, "--mib-per-rank")) o.mib = strtoul(argv[++i], NULL, 10);
        else if (!strcmp(a, "--steps")) o.steps = strtoul(argv[++i], NULL, 10);
        else if (!strcmp(a, "--vars")) o.vars = strtoul(argv[++i], NULL, 10);
        else if (!strcmp(a, "--repeat")) o.repeat = atoi(argv[++i]);
        else if (!strcmp(a, "--aggs")) aggs = argv[++i];
        else if (!strcmp(a, "--modes")) snprintf(modes_buf, sizeof modes_buf, "%s", argv[++i]);
        else if (!strcmp(a, "--params")) o.params = argv[++i];
        else if (!strcmp(a, "--synthetic")) synth = argv[++i];
        else return usage();
    }
    if (synth) {
        if (o.steps == 4) o.steps = 20;
        int rc = o.vars < 1 || o.vars > 64 || o.steps > MAX_STEPS ? 2 : synthetic(&o, synth);
        MPI_Finalize();
        return rc;
    }
    o.naggs = parse_ints(aggs, o.aggs);
    for (char *t = strtok(modes_buf, ","); t && o.nmodes < MAX_LIST; t = strtok(NULL, ","))
        o.modes[o.nmodes++] = t;
    if (o.mib < 1 || o.steps < 1 || o.steps > MAX_STEPS || o.vars < 1 || o.vars > 64 ||
        o.repeat < 1 || o.repeat > MAX_REPEAT || o.naggs < 1 || o.nmodes < 1)
        return usage();
    for (int i = 0; i < o.naggs; i++)
        if (o.aggs[i] < 1) return usage();
    int rc = weak_scaling(&o);
    MPI_Finalize();
    return rc;
}
