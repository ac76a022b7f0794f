/* lib/format/bp4_index.h: see bp4_index.c: the reader's index (format/index.h) filled from BP4.
 * One streaming pass over md.0 keeps, per variable, only what listings need: the steps it appears
 * in (with where its entry is in md.0 and its block count), the shape of each step (deduplicated),
 * and min/max over everything. The blocks of a (variable, step) are parsed on demand from md.0 by
 * the loader hook bp4_index_load, and kept. Memory thus grows with what is asked. */
#ifndef GBP_FORMAT_BP4_INDEX_H
#define GBP_FORMAT_BP4_INDEX_H

#include <stddef.h>
#include <stdint.h>

#include "format/bp4.h"
#include "format/index.h"

/* gbp_index_init(ix, bp4_index_load, md0): an empty index whose blocks are parsed from md.0
 * through *md0 (which must outlive the index). */
void bp4_index_init(gbp_index *ix, const bp4_md0 *md0);
/* The loader hook (gbp_load_fn) of a BP4 index; ctx: a const bp4_md0 *. */
int bp4_index_load(void *ctx, gbp_index *ix, gbp_var *v, size_t vs, const char *what);
/* Adds the step of record r as the index's next step; p holds md.0 bytes [base, base + n). */
int bp4_index_add_step(gbp_index *ix, const uint8_t *p, uint64_t base, size_t n,
                       const bp4_idx_record *r, const char *what);
/* The summary pass (after a light pass): shapes and min/max of step r, the index's
 * ix->sum_steps-th step. When every step is done, ix->summarized is set. */
int bp4_index_summarize_step(gbp_index *ix, const uint8_t *p, uint64_t base, size_t n,
                             const bp4_idx_record *r, const char *what);

#endif /* GBP_FORMAT_BP4_INDEX_H */
