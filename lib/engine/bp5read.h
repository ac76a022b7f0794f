/* lib/engine/bp5read.h: the reader's BP5 path (bp5read.c); f->rd.bp5 is set by gbp_bp5_open. */
#ifndef GBP_ENGINE_BP5READ_H
#define GBP_ENGINE_BP5READ_H

#include "engine/engine_internal.h"

/* Opens the BP5 dataset f->path (mmd.0 present); random access parses every step. */
int gbp_bp5_open(gpubp_file *f);
/* f->rd.bp5 and an empty BP5 index, nothing read (parallel readers: every rank, before the
 * collective gbp_bp5_load_metadata). */
int gbp_bp5_setup(gpubp_file *f);
void gbp_bp5_free(gpubp_file *f);
/* (Re)reads what is new in md.idx and mmd.0 (only the bytes after those read before, and
 * md.idx's header) and parses it. Parallel readers (f->comm): collective; rank 0 reads and
 * broadcasts md.idx, mmd.0 and md.0 up to the last step's end. */
int gbp_bp5_load_metadata(gpubp_file *f);
/* Adds dataset steps to the index until it presents nsteps (flattened: every step at once). */
int gbp_bp5_parse_until(gpubp_file *f, size_t nsteps);
/* After the light pass of a random-access open: every step's shapes and min/max. */
int gbp_bp5_summary(gpubp_file *f);
/* The dataset step (0-based over every step of the file) of a variable's var-step st: a BP5
 * random-access index numbers var-steps 0, 1, ... (bp5_index_finish) and keeps the dataset step
 * as the loader's cookie; flattened steps are one step, 0. */
size_t gbp_dataset_step(const gpubp_file *f, const gbp_var_step *st);
/* GPUBP_ERR_NOT_FOUND, or NOT_SUPPORTED naming what the variable is (struct, derived) */
int gbp_bp5_not_found(const gpubp_file *f, const char *name);
/* An uncompressed block of v (elements of es bytes) lies inside its data file (fd): BP5 block
 * locations are checked only when they are read. GPUBP_ERR_FORMAT naming file and offset if not. */
int gbp_bp5_check_block(gpubp_file *f, const gpubp_variable *v, const gbp_block *b, int fd,
                        size_t es);
/* Whether the dataset's byte order differs from this host's (a big-endian writer here): its
 * payloads are swapped element by element when read (gbp_bp5_read_swapped). */
int gbp_bp5_swapped(const gpubp_file *f);
/* bytes of v's elements at buf, in the dataset's byte order, into the host's (a dataset for which
 * gbp_bp5_swapped holds): each element (each half of a complex) swapped; a big-endian writer's
 * long double taken as IEEE binary128 and converted exactly into the x87 layout, or
 * GPUBP_ERR_NOT_SUPPORTED naming the element. */
int gbp_bp5_to_host(const gpubp_file *f, const gpubp_variable *v, uint8_t *buf, size_t bytes);
/* An operator buffer (*zp, *np bytes, gbp_malloc'd; raw: the block's uncompressed size) rewritten
 * into the layout libgpubp's decoders read (8-byte size_t fields, little-endian) when its own
 * header integers are a 32-bit writer's (4-byte size_t) or of the other byte order (ADIOS2 copies
 * them from the writer's memory): *zp may be replaced (the old buffer freed) and *np grow. What
 * fits no layout is left for the decoders to report. */
int gbp_bp5_op_layout(const gpubp_file *f, uint8_t **zp, size_t *np, size_t raw);
/* Reads the part fbox of uncompressed block b (elements of es bytes) into dst / dbox in space,
 * through a host buffer converted by gbp_bp5_to_host. */
int gbp_bp5_read_swapped(gpubp_file *f, const gpubp_variable *v, gpubp_memory_space space, int fd,
                         const gbp_block *b, const gbp_box *fbox, uint8_t *dst,
                         const gbp_box *dbox);

#endif /* GBP_ENGINE_BP5READ_H */
