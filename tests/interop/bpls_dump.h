/* The checks that compare a dataset read through libgpubp with the text ADIOS2's bpls printed
 * for it (parsed by bpls_parse.h), and two datasets with each other (support/pair_walk.h). Used
 * by the interop tests and test_remote_api. */
#ifndef GPUBP_TEST_BPLS_DUMP_H
#define GPUBP_TEST_BPLS_DUMP_H

#include <stddef.h>

#include "gpubp.h"
#include "interop/bpls_parse.h"

/* Formats one element of `type` the way bpls prints it. */
void dump_format(gpubp_type type, const void *elem, char *out, size_t outsz);
/* 1 if `got` (an element of type) matches the printed token (exact text, or for floating types
 * within the printed precision). */
int dump_match(gpubp_type type, const void *got, const char *token);

/* Compares a dataset read through libgpubp with the dumps at `prefix` (e.g. ".../steps_2d.bp":
 * reads steps_2d.bp.d.txt, .blocks.txt, .la.txt). mode: GPUBP_MODE_READ_RANDOM_ACCESS or
 * GPUBP_MODE_READ. Prints each difference on stderr; returns the number of differences (0 =
 * identical), or -1 when the dataset cannot be opened. */
int dump_check_dataset(const char *dataset, const char *prefix, gpubp_mode mode);
/* The same against dumps already loaded (and adjusted by the caller); ds stays the caller's. */
int dump_check_loaded(const char *dataset, dump_set *ds, gpubp_mode mode);

/* Compares two datasets through libgpubp (ts_pair_random of support/pair_walk.h): variables,
 * types, shape kinds, steps, dataset steps, shapes, blocks (start, count, min, max, values), all
 * values, boxes, min/max, attributes. Returns the number of differences (printed on stderr). */
int dump_compare_datasets(const char *a, const char *b);

#endif
