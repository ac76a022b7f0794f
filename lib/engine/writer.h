/* lib/engine/writer.h: see writer.c. */
#ifndef GBP_ENGINE_WRITER_H
#define GBP_ENGINE_WRITER_H

#include "engine/engine_internal.h"

/* The subfile layout of a writer (serial or parallel): nsub, sub_auto. */
void gbp_writer_layout(gpubp_file *f);
/* The serial writer's open: its metadata files (append recovery) and subfiles. */
int gbp_writer_open(gpubp_file *f);
void gbp_writer_free(gpubp_file *f);
size_t gbp_assign_block(gpubp_file *f, gbp_wblock *wb);
void gbp_advance_block(gpubp_file *f, gbp_wblock *wb, size_t hs);
int gbp_write_payload(gpubp_file *f, gbp_wblock *wb, int fd, uint64_t delta, const char *p);
int gbp_write_headers(gpubp_file *f, const int *fd, const uint64_t *delta);
/* n bytes at p for subfile k at off: written now, or with async_commit=1 kept (copied) for the
 * step's commit, which writes them on an I/O thread after the step's data (gbp_deferred). */
int gbp_writer_data_bytes(gpubp_file *f, int k, uint64_t off, const void *p, size_t n);
int gbp_writer_perform(gpubp_file *f);
/* A parallel writer's put or perform_puts failed: the step will fail on every rank. */
int gbp_writer_fail(gpubp_file *f, int rc);
/* Checks a put and adds its block to the step (*added; not yet performed, even for a SYNC put:
 * the engine performs or stages it). */
int gbp_writer_put(gpubp_file *f, gpubp_variable *v, const void *data, gpubp_launch mode,
                   gbp_wblock **added);
void gbp_discard_step(gpubp_file *f);
size_t gbp_dirty_attrs(const gpubp_file *f);

#endif /* GBP_ENGINE_WRITER_H */
