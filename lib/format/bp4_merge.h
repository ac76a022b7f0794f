/* lib/format/bp4_merge.h: see bp4_merge.c: the merge of several writers' step metadata into one
 * md.0 step block. */
#ifndef GBP_FORMAT_BP4_MERGE_H
#define GBP_FORMAT_BP4_MERGE_H

#include <stddef.h>
#include <stdint.h>

#include "format/bp4.h"

/* Merges the step blocks of n writers into one (appended to out), as ADIOS2's BP4 writer merges
 * its ranks' metadata: blk[r] (len[r] bytes) is rank r's step block laid out as in md.0 (PG
 * index, variable index, attribute index; no header), with offsets already absolute. The PG
 * entries are concatenated in rank order; each variable gets one entry with every rank's blocks
 * in rank order (header from the first rank that has it, set count summed); each attribute comes
 * from the first rank that has it. Errors: FORMAT (a damaged block, naming the rank),
 * TYPE_MISMATCH (one variable with two types, naming the ranks), NOMEM. `what` names the
 * dataset in messages. */
int bp4_merge_steps(gbp_buf *out, size_t n, const uint8_t *const *blk, const size_t *len,
                    const char *what);

#endif /* GBP_FORMAT_BP4_MERGE_H */
