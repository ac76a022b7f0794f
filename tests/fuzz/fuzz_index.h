/* The walk over a reader's index shared by the fuzz targets of BP4 step metadata (fuzz_md0) and
 * of BP3 files (fuzz_bp3, whose index bp3_to_bp4 makes): every variable found by its own name,
 * each step's own entry, every block loaded (ASan sees a wrong pointer or length), every attribute
 * by its name. `failed` is the target's oracle for a block load that fails. */
#ifndef GBP_FUZZ_INDEX_H
#define GBP_FUZZ_INDEX_H

#include <string.h>

#include "format/index.h"
#include "fuzz/fuzz_util.h"
#include "gpubp.h"

/* Touches everything the index holds and loads every block, so that a wrong pointer or length
 * shows under ASan. */
static void fz_walk_index(gbp_index *ix, size_t max_steps, void (*failed)(int rc))
{
    volatile uint64_t sink = 0;
    for (size_t i = 0; i < ix->nvars; i++) {
        gbp_var *v = ix->vars[i];
        if (gbp_index_find(ix, v->name) != v)
            fz_known_bug("BUG-2: a variable of the index is not found by its own name (NUL in "
                         "the name, or two entries with the same name)");
        for (size_t s = 0; s < v->nsteps && s < max_steps; s++) {
            const gbp_var_step *st = &v->steps[s];
            if (gbp_var_find_step(v, st->step) != st) abort();
            if ((v->kind == GPUBP_SHAPE_GLOBAL_ARRAY || v->kind == GPUBP_SHAPE_JOINED_ARRAY) &&
                v->ndims) {
                if (st->shape_id >= v->nshapes) abort();
                const uint64_t *sh = gbp_var_shape(v, s);
                for (size_t d = 0; d < v->ndims; d++) sink += sh[d];
            }
            const gbp_block *blocks = NULL;
            gbp_error_clear();
            int rc = gbp_index_blocks(ix, v, s, &blocks, "md.0");
            if (rc != GPUBP_OK) {
                failed(rc);
                continue;
            }
            for (size_t b = 0; b < st->nblocks; b++) {
                const gbp_block *blk = &blocks[b];
                for (size_t d = 0; d < 3u * blk->ndims; d++) sink += blk->dims[d];
                if (blk->str) sink += strlen(blk->str);
                if (blk->op) sink += blk->op->raw_size + strlen(blk->op->name);
                sink += blk->mm[0] + blk->mm[31];
            }
        }
    }
    for (size_t i = 0; i < ix->nattrs; i++) {
        const gbp_attr *a = &ix->attrs[i];
        if (gbp_index_find_attr(ix, a->name) == NULL) abort(); /* attributes: strcmp */
        if (a->strings)
            for (size_t k = 0; k < a->n; k++) sink += strlen(a->strings[k]);
        else if (a->data && a->n)
            sink += a->data[a->n * gbp_type_size(a->type) - 1];
    }
    (void)sink;
}

#endif /* GBP_FUZZ_INDEX_H */
