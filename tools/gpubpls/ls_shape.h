/* tools/gpubpls/ls_shape.h: the shapes and blocks of one variable (ls_shape.c). Each returns
 * LS_OK or LS_FAIL (ls.h), the library's message printed. */
#ifndef GPUBPLS_LS_SHAPE_H
#define GPUBPLS_LS_SHAPE_H

#include "gpubpls/ls.h"

/* The steps of v to read from: [step, step + n) in random access; nothing in -t mode. */
int ls_select_steps(ls_ctx *c, const ls_var *v, size_t step, size_t n);

/* The array shape of v at relative step `step` (the current step in -t mode). */
int ls_var_shape(ls_ctx *c, const ls_var *v, size_t step, size_t *dims);

/* The variable's shape as bpls keeps it after opening: the last step's shape (global arrays),
 * the first block's count (local arrays). */
int ls_var_last_shape(ls_ctx *c, const ls_var *v, size_t *dims);

/* The shape over all steps, 0 where a dimension changes ("__"); *nblocks for local arrays. */
int ls_global_signature(ls_ctx *c, const ls_var *v, size_t *dims);
int ls_local_signature(ls_ctx *c, const ls_var *v, size_t *nblocks, size_t *dims);

/* The number of blocks of v at relative step `step` (the current step in -t mode). */
int ls_nblocks_at(ls_ctx *c, const ls_var *v, size_t step, size_t *n);

/* Start and count of block b in file order (local arrays: start 0; local values: the block
 * index along their one dimension), and min/max (one element each; either may be NULL). */
int ls_block_info(ls_ctx *c, const ls_var *v, size_t step, size_t b, size_t *start,
                  size_t *count, void *min, void *max);

/* How far the blocks of v's step reach in each dimension (the largest start + count of a block
 * with elements; 0 where none has): a BP5 joined array's own extent in that step. */
int ls_joined_extent(ls_ctx *c, const ls_var *v, size_t step, size_t *ext);

#endif /* GPUBPLS_LS_SHAPE_H */
