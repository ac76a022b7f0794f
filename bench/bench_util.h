/* Timing and statistics helpers shared by the benchmark programs gpubp-bench and gpubp-bench-mpi
 * (header only, static inline: each program stays a single translation unit of its own). */
#ifndef GPUBP_BENCH_UTIL_H
#define GPUBP_BENCH_UTIL_H

#include <stddef.h>
#include <stdlib.h>
#include <time.h>

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

#endif
