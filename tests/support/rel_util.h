/* Fixtures of the reliability suite, compiled once into gpubp_test_support: a deterministic step workload (host arrays, values, strings,
 * local arrays, attributes, and optionally simulated-device arrays) and its exact verifier. */
#ifndef GBP_REL_UTIL_H
#define GBP_REL_UTIL_H

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "common/common.h"
#include "io/fileio.h"
#include "memspace/simdev.h"
#include "support/test_support.h"
#include "support/values.h"

#define REL_ROWS 8
#define REL_COLS 16
#define REL_DEV_N 4096 /* > one staging chunk with chunk_mib... small, many chunks not needed */
#define REL_LOC 5

typedef struct rel_opts {
    int dev;      /* also a simulated-device variable "d" (device=simulated) */
    int subfiles; /* 1 or 2 */
    int fsync;
    int no_attr;  /* leave out the attribute (known bug 7 crashes after its NOMEM) */
} rel_opts;

void rel_params(const rel_opts *o, char *buf, size_t n);

/* The workload's variables (rel_define). */
typedef struct rel_vars {
    gpubp_variable *g, *n, *s, *loc, *d;
} rel_vars;

int rel_define(gpubp_file *w, const rel_opts *o, rel_vars *v);

/* One step's puts (global step number s). devbuf: REL_DEV_N doubles of simulated device memory. */
int rel_put_step(gpubp_file *w, const rel_opts *o, rel_vars *v, size_t s,
                 double *devbuf);

/* Writes steps [first, first + n) with mode into path. *committed: end_steps that returned OK
 * (their global step numbers are first, first+1, ...: the workload stops at the first failure
 * unless keep_going). Returns the first failure or the close status. */
int rel_write(const char *path, gpubp_mode mode, const rel_opts *o, size_t first,
              size_t n, int keep_going, size_t *committed, size_t *ok_steps);

/* Checks that path holds exactly the steps `steps[0..nsteps)` (global step numbers, in order),
 * each exactly as written. Returns 0 or prints what differs and returns -1. */
int rel_verify(const char *path, const rel_opts *o, const size_t *steps,
               size_t nsteps);

/* extra_ok: the dataset may hold one more step after those checked (a step committed without
 * some of its puts, because a put failed and end_step still committed the rest) */
int rel_verify_x(const char *path, const rel_opts *o, const size_t *steps,
                 size_t nsteps, int extra_ok);

/* Complete md.idx records of a dataset (the commit points written), or 0. */
size_t rel_idx_records(const char *path);

/* Sweeps take every rel_stride()-th point: 1, or 7 with GPUBP_RELIABILITY_QUICK=1 (valgrind). */
long rel_stride(void);

void rel_rmdir(const char *path);

#endif
