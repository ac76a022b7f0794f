/* Shared helpers for the CMocka tests. */
#ifndef GPUBP_TEST_SUPPORT_H
#define GPUBP_TEST_SUPPORT_H

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "gpubp.h"

#define TS_SKIP_CODE 77

/* The ADIOS2-written golden datasets: tests/golden of the source tree (tests/golden/README.md),
 * or the folder in env GPUBP_GOLDEN_DIR (a corpus of the same layout, e.g. another seed's). */
const char *ts_golden_dir(void);
/* The project's BP4 consistency checker, tests/support/bp4verify.py of the source tree. */
const char *ts_bp4verify_tool(void);
/* A fresh empty scratch directory for this test process; created on first use. */
const char *ts_tmpdir(void);
/* ts_tmpdir() + "/" + name, in a static rotating buffer shared with ts_join (16 slots): the
 * result is overwritten by the 16th call of either after it (from any thread), so a path kept
 * longer, or handed to a thread, is copied first. */
const char *ts_path(const char *name);
/* Runs bp4verify.py on a dataset (its report on stderr); returns its exit status: 0 consistent,
 * 1 inconsistent, 2 not a BP4 dataset, -1 it could not run. */
int ts_bp4check(const char *dataset);
/* Reads a whole text file into a new NUL-terminated buffer (caller frees), NULL if absent. */
char *ts_read_text(const char *path);
/* Copies a dataset directory (files only) to dst. Returns 0 on success. */
int ts_copy_dataset(const char *src, const char *dst);

/* assert a libgpubp call returned GPUBP_OK, printing gpubp_last_error() otherwise */
#define TS_OK(expr)                                                                  \
    do {                                                                             \
        int ts_rc_ = (expr);                                                         \
        if (ts_rc_ != GPUBP_OK) print_error("%s -> %d (%s): %s\n", #expr, ts_rc_,    \
                                            gpubp_strerror(ts_rc_), gpubp_last_error()); \
        assert_int_equal(ts_rc_, GPUBP_OK);                                          \
    } while (0)

/* ---- added for the api/interop/format/io suites ------------------------------------------- */

/* Size of a file in bytes, or -1 if it cannot be stat'ed. */
long ts_file_size(const char *path);
/* Reads a whole file (binary) into a new buffer (caller frees); *len gets its size. NULL if absent. */
unsigned char *ts_read_file(const char *path, size_t *len);
/* Creates or replaces a file with n bytes. Returns 0 on success. */
int ts_write_file(const char *path, const void *data, size_t n);
/* Byte `off` of a file, or -1 if it cannot be read. */
int ts_file_byte(const char *path, long off);
/* dir/name joined in the rotating buffer of ts_path (16 slots, shared). */
const char *ts_join(const char *dir, const char *name);
/* 1 if path exists (any kind), else 0. */
int ts_exists(const char *path);
/* rm -rf path (scratch only). */
void ts_remove_tree(const char *path);
/* The names NAME.bp of the datasets in dir, sorted (caller frees each and the array); *n = 0 and
 * NULL when dir cannot be read. */
char **ts_list_datasets(const char *dir, size_t *n);
/* A get of v with its current selections into a new zeroed buffer of gpubp_selection_size bytes
 * (*n; caller frees); NULL with the status in *rc on failure. */
unsigned char *ts_get_new(gpubp_file *f, gpubp_variable *v, size_t *n, int *rc);

/* assert a libgpubp call returned exactly `status` (a failure status) and that it left a
 * non-empty gpubp_last_error() message */
#define TS_ERR(expr, status)                                                         \
    do {                                                                             \
        int ts_rc_ = (expr);                                                         \
        if (ts_rc_ != (status)) print_error("%s -> %d (%s), expected %d (%s): %s\n",  \
                                            #expr, ts_rc_, gpubp_strerror(ts_rc_),   \
                                            (int)(status), gpubp_strerror(status),   \
                                            gpubp_last_error());                     \
        assert_int_equal(ts_rc_, (status));                                          \
        assert_non_null(gpubp_last_error());                                         \
        assert_true(gpubp_last_error()[0] != '\0');                                  \
    } while (0)

/* ---- write fixtures shared by the api, io and reliability suites -------------------------- */

/* gpubp_open asserting success and a handle; params may be NULL. */
gpubp_file *ts_open(const char *path, gpubp_mode mode, const char *params);
/* Defines `name` in f: a single value when ndims is 0, a local array of `count` when shape is NULL,
 * else a global array of `shape` selected from the origin over `count` (NULL: the whole shape). */
gpubp_variable *ts_define(gpubp_file *f, const char *name, gpubp_type type, size_t ndims,
                          const size_t *shape, const size_t *count);
/* One step of f in which v is put once from data: begin_step, put, end_step. */
void ts_put_step(gpubp_file *f, gpubp_variable *v, const void *data, gpubp_launch launch);

#endif
