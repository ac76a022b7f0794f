/* tools/gpubpls/ls_steps.h: the dataset steps in which a variable appears, and a BP5 joined array's
 * first-writer extent (ls_steps.c). */
#ifndef GPUBPLS_LS_STEPS_H
#define GPUBPLS_LS_STEPS_H

#include "gpubpls/ls.h"

/* The step of the dataset (0-based) that is relative step `rel` of v. */
size_t ls_abs_step(ls_ctx *c, const ls_var *v, size_t rel);

/* d[joined dimension] of a BP5 joined array v (the rest of d as given): the sum of the first
 * writer's blocks of its first step, the extent ADIOS2's BP5 reader defines the variable with
 * (bpls's block widths follow it). LS_OK, or LS_FAIL with the library's message. */
int ls_joined_first_writer(ls_ctx *c, const ls_var *v, size_t *d);

#endif /* GPUBPLS_LS_STEPS_H */
