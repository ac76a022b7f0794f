/* lib/format/bp5_index.h: see bp5_index.c: the reader's index (format/index.h) filled from BP5. */
#ifndef GBP_FORMAT_BP5_INDEX_H
#define GBP_FORMAT_BP5_INDEX_H

#include <stddef.h>
#include <stdint.h>

#include "format/bp5.h"
#include "format/index.h"

void bp5_reader_init(bp5_reader *r, bp5_read_fn read, void *read_ctx);
void bp5_reader_free(bp5_reader *r);
/* Adds dataset step r->nadded (p: its md.0 block, MetadataSize bytes) to the index; r->idx and
 * r->ft must cover it. On error the index is as it was. */
int bp5_index_add_step(gbp_index *ix, bp5_reader *r, const uint8_t *p, size_t n, const char *what);
/* After the last step of a random-access open, as ADIOS2's random-access reader: every step of a
 * joined array reports one joined shape (§10.5: the last dataset step's, or when the variable is
 * not in that step, the first writer's of its first step), and a variable's steps are numbered
 * 0, 1, ... (relative steps, §10.2; the loader's cookie keeps the dataset step). */
void bp5_index_finish(gbp_index *ix);
/* The md.0 block of dataset step s (MetadataSize bytes) through r->read: read with the blocks of
 * the steps after it that follow it in md.0, up to BP5_MD0_WINDOW bytes, and kept until a step
 * outside is asked for (a step's variables loaded one after the other, or the steps of a pass,
 * read md.0 once). */
#define BP5_MD0_WINDOW ((size_t)256 << 10)
int bp5_step_block(bp5_reader *r, size_t s, const uint8_t **p);
/* After an open with ix->light: every step decoded again for the shapes and min/max that the
 * light pass left out (the index is then summarized). */
int bp5_index_summarize(gbp_index *ix, bp5_reader *r, const char *what);
/* gbp_load_fn: the blocks of v's step vs. */
int bp5_index_load(void *ctx, gbp_index *ix, gbp_var *v, size_t vs, const char *what);
/* What a variable of that name is when the index does not present it ("a struct variable with
 * ...", "a long double of 10 or 12 bytes": a 32-bit writer's), or NULL. */
const char *bp5_unsupported(const bp5_reader *r, const char *name);

#endif /* GBP_FORMAT_BP5_INDEX_H */
