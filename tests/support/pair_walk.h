/* Two datasets of the same content compared through the public API, variable by variable, step
 * by step, block by block: the walker of interop/bpls_dump.c's dump_compare_datasets (our
 * writer's files against ADIOS2's) and of interop/test_bp4_bp5_same.c (ADIOS2's BP4 file against
 * its BP5 twin, which adds a step-mode walk of its own). A difference is printed on stderr
 * ("DIFF name: variable: what [last error]") and counted; nothing asserts. Compiled once into
 * gpubp_test_support. */
#ifndef GPUBP_TEST_PAIR_WALK_H
#define GPUBP_TEST_PAIR_WALK_H

#include <stddef.h>

#include "gpubp.h"

typedef struct ts_pair {
    const char *name;   /* printed with each difference */
    int diffs;          /* differences so far */
    int bp5_twin;       /* the second is the BP5 twin of the first (a BP4 file): complex arrays
                         * have min/max in the first only, zeros from block_info in the second */
    int complex_minmax; /* (bp5_twin) min/max checks met that way: counted, not differences */
} ts_pair;

/* Prints and counts one difference of variable `var` ("-" for the dataset). */
void ts_pair_diff(ts_pair *c, const char *var, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* One get of each side with its selections as set: a difference if either fails, or their sizes
 * or values differ (long double by its value bytes). */
void ts_pair_read(ts_pair *c, const char *var, const char *what, gpubp_file *fa,
                  gpubp_variable *va, gpubp_file *fb, gpubp_variable *vb);

/* The type, shape kind, ndims and step count of both (those of va in *t, *k, *nd, *ns); 0 when
 * they differ (reported). */
int ts_pair_head(ts_pair *c, const char *var, gpubp_variable *va, gpubp_variable *vb,
                 gpubp_type *t, gpubp_shape_kind *k, size_t *nd, size_t *ns);

/* min/max of both with the step selections as set: equal (strings: NOT_SUPPORTED in both;
 * neither with statistics: NOT_FOUND in both, unless bp5_twin), or with bp5_twin for a complex
 * array, the first's OK and the second's NOT_FOUND. */
void ts_pair_minmax(ts_pair *c, const char *var, const char *what, gpubp_variable *va,
                    gpubp_variable *vb, gpubp_type t, gpubp_shape_kind k);

/* The blocks of step s (the variable's step in random access; 0 for the open step in step mode):
 * their count, start, count, min/max, and the values of each array block alone (a block
 * selection; for a global array also its box). */
void ts_pair_blocks(ts_pair *c, const char *var, size_t s, gpubp_file *fa, gpubp_variable *va,
                    gpubp_file *fb, gpubp_variable *vb, gpubp_type t, gpubp_shape_kind k,
                    size_t nd);

/* A global array's step (selected): its shape (host and device layout), the whole of it, a box
 * one element in from every side (across the blocks), and that box into a larger buffer two
 * elements bigger per dimension (memory selection). */
void ts_pair_boxes(ts_pair *c, const char *var, size_t s, gpubp_file *fa, gpubp_variable *va,
                   gpubp_file *fb, gpubp_variable *vb, size_t nd);

/* The variable (attrs 0) or attribute (attrs 1) names of both, copied from the borrowed lists
 * (free with ts_pair_free_names); *n their number; NULL with a difference when the counts differ. */
char **ts_pair_names(ts_pair *c, gpubp_file *fa, gpubp_file *fb, int attrs, size_t *n);
void ts_pair_free_names(char **names, size_t n);

/* Every attribute of both: names, type, count, array or not, values. */
void ts_pair_attrs(ts_pair *c, gpubp_file *fa, gpubp_file *fb);

/* Random access to the datasets a and b: the step count, then every variable (ts_pair_head,
 * min/max over all steps and of each step, dataset steps, each step's values, boxes and blocks,
 * all steps in one get) and every attribute. Returns c->diffs. */
int ts_pair_random(ts_pair *c, const char *a, const char *b);

#endif
