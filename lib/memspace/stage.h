/* lib/memspace: the staging iterator (stage.c, gbp_mem_stage_*): a block delivered packed, in
 * pieces, to a consumer on the host (compression). Internal to lib/memspace; its calls are the
 * module's, declared in memspace.h. */
#ifndef GBP_STAGE_H
#define GBP_STAGE_H

#include "memspace/mem_internal.h"

/* Device pieces queued ahead of the one the caller holds, at most (and at most the pool's
 * slots). */
#define GBP_STAGE_MAX 64

#endif /* GBP_STAGE_H */
