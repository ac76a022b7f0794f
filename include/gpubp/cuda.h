/*
 * libgpubp, optional CUDA entry points. Plain C; includes no CUDA header (a cudaStream_t is passed
 * as void *). Declared in every build: without CUDA the calls return GPUBP_ERR_NOT_SUPPORTED.
 *
 * How device data moves (docs/design.md section 5)
 * - Each open file has its own CUDA stream, created on the device that is current when the file
 *   first moves device data, with default flags: work already queued on the legacy default stream
 *   is complete before the library's copies start (not so for per-thread default streams or
 *   non-blocking user streams: pass those with gpubp_set_stream).
 * - Puts of GPU data are copied in chunks (parameter chunk_mib, 16 MiB) into a pool of pinned
 *   host slots (pool_slots, 4), allocated once per file and kept until gpubp_close, and written
 *   by I/O threads (io_threads) while the next chunks are copied. Host memory is bounded by the
 *   pool whatever the step size (see docs/performance.md).
 * - A SYNC put returns once its data has been copied out of the device buffer and written; a
 *   DEFERRED put reads the device buffer during gpubp_perform_puts / gpubp_end_step, so the
 *   buffer must stay valid and unchanged until one of them returns. Min/max of a device block
 *   are computed on the device (a reduction kernel on the library's stream).
 * - Gets into GPU memory read file chunks into pinned slots and copy them to the device with
 *   cudaMemcpyAsync / cudaMemcpy2DAsync / cudaMemcpy3DAsync (sub-boxes and memory selections);
 *   the data is in place when the SYNC get, gpubp_perform_gets or gpubp_end_step returns.
 */
#ifndef GPUBP_CUDA_H
#define GPUBP_CUDA_H

#include "gpubp.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Orders the library's device work for f after the user's work on `cuda_stream` (a
 * cudaStream_t; NULL, the default, forgets it): before each transfer the library's stream waits
 * for everything queued on cuda_stream so far (an event, no device-wide synchronisation), so a
 * kernel that produced the data may still be running when gpubp_put or gpubp_end_step is called.
 * When the library's transfers of a perform/end_step (or SYNC get) have completed, cuda_stream is
 * made to wait for them as well, so kernels queued there afterwards see the data read.
 * The stream must belong to the device current when f first moved device data, and stay valid
 * until gpubp_close(f) or another gpubp_set_stream call.
 * Errors: INVALID_ARG (f NULL), NOT_SUPPORTED (no CUDA in this build, no device, or a file
 *   opened without a device), DEVICE (a CUDA call failed; gpubp_last_errno() keeps the
 *   cudaError_t). */
GPUBP_API int gpubp_set_stream(gpubp_file *f, void *cuda_stream);

#ifdef __cplusplus
}
#endif

#endif /* GPUBP_CUDA_H */
