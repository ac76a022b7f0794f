/* lib/engine/rvar.h: see rvar.c. */
#ifndef GBP_ENGINE_RVAR_H
#define GBP_ENGINE_RVAR_H

#include "engine/engine_internal.h"

int gbp_rvar_steps(const gpubp_variable *v, const gbp_sel *s, size_t *first, size_t *n);
int gbp_rvar_blocks(const gpubp_variable *v, size_t vs, const gbp_block **out);
int gbp_rvar_user_blocks(const gpubp_variable *v, size_t vs, const gbp_block **out, size_t *n);
/* Their number (the stored blocks' without loading them where they are the same). */
int gbp_rvar_user_nblocks(const gpubp_variable *v, size_t vs, size_t *n);
int gbp_rvar_select_block(const gpubp_variable *v, const gbp_sel *s, size_t vs, const gbp_block **out);
int gbp_rvar_file_shape(const gpubp_variable *v, const gbp_sel *s, size_t vs, size_t *dims);
gpubp_memory_space gbp_rvar_space(const gpubp_variable *v, gpubp_memory_space space);
int gbp_rvar_step_arg(const gpubp_variable *v, size_t step, size_t *vs);
int gbp_rvar_box(const gpubp_variable *v, const gbp_sel *s, size_t vs, int rev, size_t *start,
                   size_t *count);
int gbp_rvar_step_bytes(const gpubp_variable *v, const gbp_sel *s, size_t vs, int rev, size_t *bytes);
int gbp_rvar_check_mem_sel(const gpubp_variable *v, const gbp_sel *s, int rev, const size_t *count);
/* GPUBP_ERR_UNSUPPORTED_TYPE (naming fn) for a variable of a type this library cannot read. */
int gbp_rvar_check_readable(const gpubp_variable *v, const char *fn);
/* Bytes of one element: its type's size, a read struct variable's record size. */
size_t gbp_rvar_esize(const gpubp_variable *v);

/* The ADIOS2 name of the operator that stored block b of v ("" when none; format/bp5_op.h
 * bp5_op_name), from the metadata or, where the metadata does not name it (BP5, a BP4 plugin),
 * from the first bytes of the block's data. Errors: INVALID_ARG (cap too small), IO, FORMAT. */
int gbp_rvar_block_operator(const gpubp_variable *v, const gbp_block *b, char *name, size_t cap);

#endif /* GBP_ENGINE_RVAR_H */
