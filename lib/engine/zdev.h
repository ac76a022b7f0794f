/* lib/engine/zdev.h: see zdev.c. */
#ifndef GBP_ENGINE_ZDEV_H
#define GBP_ENGINE_ZDEV_H

#include "common/dzops.h"
#include "engine/engine_internal.h"

/* Whether the blocks of codec `codec` in device memory (contiguous: one run of the user's
 * buffer) of file f are compressed / decompressed on the device (compress_device, the backend,
 * its codec): 1 with *ops and *dctx set; 0: the CPU path (the reason is noted for
 * GPUBP_MEM_STATS unless quiet); < 0: compress_device=on and it cannot be (status and message:
 * GPUBP_ERR_NOT_SUPPORTED naming why; `what` names the block). */
int gbp_zdev_choose(gpubp_file *f, int codec, int contiguous, int quiet, const char *what,
                    const gbp_dzops **ops, void **dctx);

/* Writes block wb (device memory, contiguous) compressed on the device to fd at
 * wb->meta.payload_offset: filter kernels, the codec's batch, the Blosc2 framing assembled in
 * device memory; only the operator buffer's bytes go to the host, through the pinned pool, and
 * the I/O threads write them. Sets *total (the buffer's length) once the writes are queued:
 * they, and the block's min/max, are complete at the caller's next gbp_mem_sync (the next block
 * is coded meanwhile; a failure waits for everything). The bytes equal the CPU path's when the
 * codec's streams do (the CPU stand-in). */
int gbp_zdev_write(gpubp_file *f, gbp_wblock *wb, int fd, const gbp_dzops *ops, void *dctx,
                   size_t *total);

/* Launches the device's coding of sub-block wb of a split put (device memory, contiguous) and of
 * the sub-blocks after it that join its batch, and of the next batch into the other coded set
 * when the first ends with a whole sub-block, ahead of their gbp_zdev_write: the writer then
 * codes the put's first sub-blocks on the CPU (cpu_lane) while the device codes these. Errors
 * as gbp_zdev_write's; on failure nothing stays queued. */
int gbp_zdev_prelaunch(gpubp_file *f, const gbp_wblock *wb, const gbp_dzops *ops, void *dctx);

/* Waits for and forgets the coding that gbp_zdev_write queued ahead for the next sub-block of a
 * split put (the writer calls it after performing a step's puts: a failed step's). */
void gbp_zdev_drain(gpubp_file *f);
/* Reads into device memory: host buffer `which` (0: the block being read, 1: the next block's,
 * read ahead by zdev_read.c) of n bytes for the operator buffer of a block, kept per file
 * (reused by the next block: valid until then; grown, its contents lost, when n is larger);
 * NULL when out of memory (an error is recorded). gbp_zdev_inbuf_swap exchanges the two. */
uint8_t *gbp_zdev_inbuf(gpubp_file *f, size_t n, int which);
void gbp_zdev_inbuf_swap(gpubp_file *f);

/* The per-phase times of GPUBP_MEM_STATS (zdev.c, zdev_read.c): the time since *t goes to
 * `phase` (GBP_DZT_*) and *t restarts (t 0: not timing); lap_start: now when timing, else 0. */
void gbp_zdev_lap(gbp_mem *m, int phase, double *t);
double gbp_zdev_lap_start(gbp_mem *m);
/* Counts a block read on the device (gbp_zdev_counts). */
void gbp_zdev_count_read(void);

/* The tuning knobs of the device codec path (GPUBP_ZDEV_*_MIB): gbp_env_mib up to 64 GiB. */
#define GBP_ZDEV_ENV_MAX_MIB 65536

/* Test hook: pieces of `bytes` of input (0: the default, 64 MiB), so that small blocks are
 * written in several pieces. Process-wide. */
void gbp_zdev_set_piece(size_t bytes);
/* Test hook: blocks written and read on the device so far in the process. */
void gbp_zdev_counts(size_t *written, size_t *read);
/* Test hook: sub-blocks launched in the batch of an earlier sub-block of their put so far. */
size_t gbp_zdev_grouped(void);
/* Test hook: gbp_zdev_prelaunch calls that launched something, so far in the process. */
size_t gbp_zdev_prelaunched(void);

#endif /* GBP_ENGINE_ZDEV_H */
