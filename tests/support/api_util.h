/* Fixtures of the api suites (and of every suite that writes through the public API): small
 * open/inquire/step wrappers that assert success, compiled once into gpubp_test_support. The
 * value patterns are in values.h. */
#ifndef GPUBP_TEST_API_UTIL_H
#define GPUBP_TEST_API_UTIL_H

#include <stddef.h>

#include "support/test_support.h"
#include "support/values.h"

/* gpubp_open without parameters, asserting success */
gpubp_file *au_open(const char *path, gpubp_mode mode);
/* gpubp_inquire_variable asserting success and a handle */
gpubp_variable *au_inq(gpubp_file *f, const char *name);
/* asserts that bp4verify.py accepts the dataset */
#define AU_CHECK(path) assert_int_equal(ts_bp4check(path), 0)
/* Closes the writer w of path, asserts that bp4verify.py accepts the dataset, opens it in `mode`. */
gpubp_file *au_reopen(gpubp_file *w, const char *path, gpubp_mode mode);
/* Closes the writer w of path, opens path for random access and inquires `name` there: returns
 * the reader, *rv the variable (no bp4verify.py: au_reopen runs it). */
gpubp_file *au_close_inq(gpubp_file *w, const char *path, const char *name, gpubp_variable **rv);
/* asserts that f holds `want` steps (gpubp_steps) */
void au_steps(gpubp_file *f, size_t want);
/* asserts that v appears in `want` steps (gpubp_variable_steps) */
void au_var_steps(gpubp_variable *v, size_t want);
/* Selects step `step` of v, asserts that the selection is `bytes` long and reads it into buf. */
void au_get_step(gpubp_file *r, gpubp_variable *v, size_t step, void *buf, size_t bytes);
/* Writes path in `mode` as one step in which `name` (ts_define's kinds, whole) is put once. */
void au_write_one(const char *path, gpubp_mode mode, const char *name, gpubp_type type,
                  size_t ndims, const size_t *shape, const void *data);

#endif
