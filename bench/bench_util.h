/* Timing and statistics helpers shared by the benchmark programs (gpubp-bench, gpubp-bench-mpi,
 * gpubp-zbox)
 * (header only, static inline: each program stays a single translation unit of its own). */
#ifndef GPUBP_BENCH_UTIL_H
#define GPUBP_BENCH_UTIL_H

#include <dirent.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* Monotonic wall time in seconds. */
static inline double bench_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static inline int bench_cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* The median of v[0..n) (n >= 1); sorts v in place. */
static inline double bench_median(double *v, size_t n)
{
    qsort(v, n, sizeof *v, bench_cmp_double);
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

/* Removes a dataset directory written by a benchmark (its plain files, then the directory);
 * nothing when it does not exist. Called before a timed write: truncating gigabytes of page
 * cache inside a timed open cost 0.14 s of a 0.5 s write of 4 GiB on the H200. */
static inline void bench_remove_dataset(const char *path)
{
    DIR *d = opendir(path);
    if (!d) return;
    struct dirent *e;
    char p[4400];
    while ((e = readdir(d)) != NULL) {
        if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, "..")) continue;
        if (snprintf(p, sizeof p, "%s/%s", path, e->d_name) < (int)sizeof p) unlink(p);
    }
    closedir(d);
    rmdir(path);
}

#endif
