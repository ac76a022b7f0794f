/* tools/gpubpls/ls_steps.h: the dataset steps in which a variable appears (ls_steps.c). */
#ifndef GPUBPLS_LS_STEPS_H
#define GPUBPLS_LS_STEPS_H

#include "gpubpls/ls.h"

/* The step of the dataset (0-based) that is relative step `rel` of v. */
size_t ls_abs_step(ls_ctx *c, const ls_var *v, size_t rel);

#endif /* GPUBPLS_LS_STEPS_H */
