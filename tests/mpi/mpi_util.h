/* Checks and helpers of the MPI tests (tests/mpi). A failed check prints the rank, the place and
 * the libgpubp message, then calls MPI_Abort: one rank's failure ends the whole job at once (never
 * a hang of the others in a collective), and mpiexec exits non-zero, which ctest reports. */
#ifndef GPUBP_TESTS_MPI_UTIL_H
#define GPUBP_TESTS_MPI_UTIL_H

#include <mpi.h>
#include <stddef.h>

#include "gpubp.h"

/* Checks made by this process so far; a case that made none fails (a test that asserts nothing is
 * a defect). */
extern long mt_checks;

void mt_fail(const char *file, int line, const char *fmt, ...)
    __attribute__((format(printf, 3, 4), noreturn));

#define MT_CHECK(cond, ...)                                            \
    do {                                                               \
        mt_checks++;                                                   \
        if (!(cond)) mt_fail(__FILE__, __LINE__, "check failed: " __VA_ARGS__); \
    } while (0)

#define MT_OK(expr)                                                                        \
    do {                                                                                   \
        int mt_rc_ = (expr);                                                               \
        mt_checks++;                                                                       \
        if (mt_rc_ != GPUBP_OK)                                                            \
            mt_fail(__FILE__, __LINE__, "%s -> %d (%s): %s", #expr, mt_rc_,                \
                    gpubp_strerror(mt_rc_), gpubp_last_error());                           \
    } while (0)

/* rank and size of MPI_COMM_WORLD */
int mt_rank(void);
int mt_size(void);

/* A scratch folder for this test (env GPUBP_TEST_TMP, else /tmp/gpubp_mpi_test), created by rank 0
 * and emptied of earlier runs' datasets as they are rewritten; name joined to it in a static
 * rotating buffer (8 slots). Collective. */
const char *mt_path(const char *name);

/* Runs the project's checker, tests/support/bp4verify.py, on a dataset (ts_bp4check: its report
 * goes to stderr); returns its exit status. */
int mt_bp4check(const char *dataset);

/* Runs `gpubpls FLAGS dataset` and returns its standard output (caller frees), NULL on failure. */
char *mt_run_gpubpls(const char *gpubpls, const char *flags, const char *dataset);

/* Number of data.K subfiles in a dataset directory. */
int mt_count_subfiles(const char *dataset);

#endif
