/* tools/gpubpls/ls_dump.h: statistics, block listings and data dumps of one variable
 * (ls_dump.c; its shapes and blocks: ls_shape.h). Each returns LS_OK, LS_STOP or LS_FAIL (ls.h)
 * unless it says otherwise. */
#ifndef GPUBPLS_LS_DUMP_H
#define GPUBPLS_LS_DUMP_H

#include "gpubpls/ls.h"

/* Whether bpls prints min/max for type t: never for strings; for BP5 not for char and complex
 * numbers either (ADIOS2's BP5 reader keeps none). */
bool ls_type_has_minmax(const ls_ctx *c, gpubp_type t);

/* Min and max over all steps (one element each into 16-byte buffers) as bpls prints them for
 * -l; *none is set when no block has statistics. BP4: ADIOS2 counts a block written without
 * statistics (StatsLevel=0) as 0 / 0, so a variable without any gets 0 / 0 and one with some
 * blocks lacking them folds zeros in. BP5: blocks without statistics do not count (bpls prints
 * N/A / N/A for a variable without any). Only for types ls_type_has_minmax accepts. */
int ls_var_minmax(ls_ctx *c, const ls_var *v, void *min, void *max, bool *none);

/* The data dump of a global array or value (bpls readVar). */
int ls_read_var(ls_ctx *c, const ls_var *v);

/* The block listing (-D), with the data of each block when dumping (bpls print_decomp). */
int ls_print_decomp(ls_ctx *c, const ls_var *v);

/* Prints the value of block b of a single value (global or local) at relative step `step`. */
int ls_print_block_value(ls_ctx *c, const ls_var *v, size_t step, size_t b, bool allowformat);

#endif /* GPUBPLS_LS_DUMP_H */
