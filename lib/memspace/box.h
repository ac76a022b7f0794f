/* Internal to lib/memspace: walking the contiguous runs of boxes. */
#ifndef GBP_BOX_H
#define GBP_BOX_H

#include "memspace.h"

/* Called for each contiguous run: byte offsets of the run in array a and in array b (0 when b is
 * NULL), and its length in bytes. A non-zero return stops the walk and is returned. */
typedef int (*gbp_run_fn)(void *ctx, size_t a_off, size_t b_off, size_t bytes);

/* Walks the runs of box a (and of box b, which has the same counts) in row-major order. */
int gbp_box_foreach_run(const gbp_box *a, const gbp_box *b, size_t elsize, gbp_run_fn fn,
                        void *ctx);

#endif
