/* lib/engine/commit.h: see commit.c. */
#ifndef GBP_ENGINE_COMMIT_H
#define GBP_ENGINE_COMMIT_H

#include "engine/engine_internal.h"

int gbp_writer_begin_step(gpubp_file *f);
/* The PG tail of stripe k: attributes (stripe 0) at cursor[k], the attribute count and length,
 * "PGI]"; amd_off/amd_pay get the attributes' offsets. */
void gbp_pg_tail(gpubp_file *f, int k, gbp_buf *tail, uint64_t *amd_off, uint64_t *amd_pay);
/* The PG head of stripe k whose tail is tail_len bytes (pg_start, cursor and pg_nvars set). */
void gbp_pg_head(gpubp_file *f, int k, gbp_buf *pg, size_t tail_len);
/* Appends the step's variable and attribute index to md (after its PG index). */
void gbp_var_attr_index(gpubp_file *f, gbp_buf *md, const uint64_t *amd_off,
                        const uint64_t *amd_pay);
/* Writes a step block (PG, variable and attribute index; offsets absolute) to md.0 and its record
 * to md.idx: the commit point. */
int gbp_commit_metadata(gpubp_file *f, const uint8_t *blk, size_t len);
void gbp_writer_step_done(gpubp_file *f);
/* async_commit: the writer's stopping failure, or GPUBP_OK; _commit_wait also waits for the
 * queued commit and turns its failure into that. */
int gbp_writer_broken(gpubp_file *f);
int gbp_writer_commit_wait(gpubp_file *f);
int gbp_writer_end_step(gpubp_file *f);

#endif /* GBP_ENGINE_COMMIT_H */
