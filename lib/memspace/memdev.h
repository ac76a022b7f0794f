/* lib/memspace: the device of a context, for device work done outside lib/memspace (the GPU
 * compression path, lib/engine/zdev.c): the backend's context, device scratch memory, small
 * synchronous copies, device min/max, and the batched device codec of the CUDA backend
 * (common/dzops.h; the simulated device's is lib/compress's CPU stand-in). mem_dz.c. */
#ifndef GBP_MEMDEV_H
#define GBP_MEMDEV_H

#include "common/dzops.h"
#include "memspace/memspace.h"

/* The backend context of m, its device opened as a first transfer opens it, the calling thread
 * bound to it, and the library's stream ordered after the user's stream (gpubp_set_stream).
 * *simulated: 1 for the simulated device. GPUBP_ERR_NOT_SUPPORTED (with why) without a device. */
int gbp_mem_dev_ctx(gbp_mem *m, void **dctx, int *simulated);
/* Device memory of m's backend; freed with gbp_mem_dev_free (NULL is fine). */
int gbp_mem_dev_alloc(gbp_mem *m, void **p, size_t n);
void gbp_mem_dev_free(gbp_mem *m, void *p);
/* n bytes from the device to the host (h2d 0) or back (h2d 1), queued after the work queued so
 * far on the library's stream; returns when done. */
int gbp_mem_dev_copy(gbp_mem *m, int h2d, void *dst, const void *src, size_t n);
/* Queues the min/max of the n elements of `type` at the device address p (a reduction kernel);
 * min and max receive them at the next gbp_mem_sync (or wait_staged). */
int gbp_mem_dev_minmax(gbp_mem *m, const void *p, int type, size_t n, void *min, void *max);
/* Waits for all work queued on the library's stream. */
int gbp_mem_dev_sync(gbp_mem *m);
/* The device codec state of m for ops (opened on dctx at the first call, kept until close; a
 * call with other ops closes the old state), and device scratch buffer `which` (0 or 1) of at
 * least n bytes (kept and grown; its old contents are lost when it grows). The caller uses them
 * on the file's thread only and waits for the work that uses them before the next call. */
int gbp_mem_dz_state(gbp_mem *m, const gbp_dzops *ops, void *dctx, void **z);
int gbp_mem_dz_scratch(gbp_mem *m, int which, size_t n, void **p);
/* Frees both (gbp_mem_close, before the device context). */
void gbp_mem_dz_free(gbp_mem *m);
/* The GPU codec path's counters for GPUBP_MEM_STATS (printed at close): blocks compressed or
 * decompressed on the device, and the last reason the CPU path was taken instead (kept). */
void gbp_mem_dz_note(gbp_mem *m, int decode, size_t raw, size_t stored, const char *fallback);
/* Prints the counters to stderr when GPUBP_MEM_STATS is set and the path was considered. */
void gbp_mem_dz_report(const gbp_mem *m);

/* The CUDA backend's batched codec (cuda/cuda_dz.cu: nvCOMP loaded at run time), NULL in a build
 * without CUDA. */
const gbp_dzops *gbp_cuda_dzops(void);

#endif /* GBP_MEMDEV_H */
