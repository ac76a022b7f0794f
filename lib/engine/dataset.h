/* lib/engine/dataset.h: see dataset.c. */
#ifndef GBP_ENGINE_DATASET_H
#define GBP_ENGINE_DATASET_H

#include "engine/engine_internal.h"

/* The pieces of a step's commit shared by the serial and the parallel writer. */
const char *gbp_sub_name(const gpubp_file *f, int k, char *buf, size_t n);
int gbp_dataset_use_subfile(gpubp_file *f, int k);
int gbp_open_subfiles(gpubp_file *f, int trunc, int open);
int gbp_writer_open_metadata(gpubp_file *f, int *have);
int gbp_dataset_open_md0(gpubp_file *f);
/* bp4_read_fn over md.0 (ctx: the file) */
int gbp_reader_md0(void *ctx, uint64_t off, size_t n, uint8_t *buf);
/* The path of data file k of f into buf (n bytes): PATH/data.K for BP4 and BP5 datasets; for a
 * BP3 file (f->rd.bp3) its subfile K (ADIOS2's naming: NAME.bp.dir/NAME.bp.K beside it, ".bp"
 * added to NAME if it lacks it) or, without subfiles, the file itself. Returns buf. */
const char *gbp_dataset_data_path(const gpubp_file *f, uint32_t k, char *buf, size_t n);
int gbp_dataset_data_fd(gpubp_file *f, uint32_t k, int *fd);
int gbp_dataset_pread(gpubp_file *f, uint32_t k, int fd, void *buf, size_t n, uint64_t off);
int gbp_dataset_data_size(gpubp_file *f, uint32_t k, int fd, uint64_t *size);
/* The error rc just recorded, with the block's head put before its message: "DATAFILE: 'VAR':
 * block at offset N: MESSAGE" (unless the message names f's path already); returns rc. Every
 * reader's way of naming the block a failure is about, built only on failure. */
int gbp_block_name_error(int rc, const gpubp_file *f, const char *var, const gbp_block *b);
/* Whether the `len` bytes at block b's payload offset lie inside its data file (fd: open, or -1
 * for a gpubp:// dataset); FORMAT "DATAFILE: 'VAR': block at offset N: LEN bytes run past the end
 * of the data file (SIZE bytes)" otherwise (every reader's one check of a block against its
 * file). */
int gbp_block_check_span(gpubp_file *f, const char *var, const gbp_block *b, int fd,
                         uint64_t len);
/* A writer's close: clears md.idx's writer-active flag (with fsync=1, flushed) once a step was
 * committed; GPUBP_OK when there is nothing to clear. */
int gbp_dataset_clear_active(gpubp_file *f);

#endif /* GBP_ENGINE_DATASET_H */
