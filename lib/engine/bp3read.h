/* lib/engine/bp3read.h: the reader's BP3 path (bp3read.c): a BP3 file is read as the BP4 dataset
 * its index describes (format/bp3.h), its metadata served from memory. */
#ifndef GBP_ENGINE_BP3READ_H
#define GBP_ENGINE_BP3READ_H

#include <stddef.h>
#include <stdint.h>

#include "common/buf.h"
#include "engine/engine_internal.h"

/* Reads the BP3 file at path (a regular file): its mini-footer and index, cut into BP4 metadata
 * (md0: md.0, idx: md.idx; both empty on entry, the caller's after, also on failure).
 * *has_subfiles: its data is in PATH.dir/NAME.N (else in the file itself). GPUBP_ERR_NOT_BP4 for
 * a file that is no BP3 file, GPUBP_ERR_FORMAT for a damaged one, GPUBP_ERR_IO. */
int gbp_bp3_load(const char *path, gbp_buf *md0, gbp_buf *idx, int *has_subfiles);

#endif /* GBP_ENGINE_BP3READ_H */
