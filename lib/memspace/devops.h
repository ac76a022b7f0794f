/* Internal to lib/memspace (and cuda/, which implements it): the table of operations of one
 * device backend. Three implementations exist: none (host memory only: gbp_mem has no table),
 * the CUDA runtime (cuda/cuda_backend.cu) and the simulated device (simdev.c, host memory whose
 * copies a worker thread completes later, with injectable delays and failures, used by CI).
 *
 * Every operation returns a gpubp status and records its failure with gbp_error() (a CUDA error
 * keeps its cudaError_t as the native code). Operations may be called from several threads
 * (the caller's and the I/O threads); the backend makes that safe. All asynchronous work goes to
 * one in-order queue per context (the CUDA stream of the context), so an event recorded after
 * a copy completes after it. */
#ifndef GBP_DEVOPS_H
#define GBP_DEVOPS_H

#include <stddef.h>

#include "common/common.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum gbp_copy_kind {
    GBP_COPY_D2H = 0,
    GBP_COPY_H2D = 1,
    GBP_COPY_D2D = 2,
    GBP_COPY_H2H = 3
} gbp_copy_kind;

/* A 3-D strided copy: depth slices of height rows of `width` contiguous bytes. Rows are `pitch`
 * bytes apart, slices `slice` bytes apart, on each side. height/depth 1 ignore their strides. */
typedef struct gbp_copy3d {
    const void *src;
    void *dst;
    size_t width, height, depth;
    size_t spitch, sslice;
    size_t dpitch, dslice;
    gbp_copy_kind kind;
} gbp_copy3d;

typedef struct gbp_devops {
    const char *name;
    /* Creates a context (its stream, on the device current for the calling thread). Returns
     * GPUBP_ERR_NOT_SUPPORTED, with a message, when there is no usable device. */
    int (*open)(void **ctx);
    void (*close)(void *ctx);
    /* Makes the calling thread ready to use ctx (CUDA: sets the context's device). */
    int (*bind_thread)(void *ctx);
    /* 0 when no device pointer can exist in the process yet (CUDA: the driver library is not
     * loaded, so nobody allocated device memory), without initialising anything: lets
     * gbp_mem_detect answer HOST for host-only programs without creating a device context.
     * NULL: always possible. */
    int (*present)(void);
    /* GPUBP_MEM_GPU for device memory, HOST for host, pinned, managed and unknown memory. */
    int (*query)(void *ctx, const void *ptr, gpubp_memory_space *space);
    /* Page-locked host memory (page aligned) for the staging pool. */
    int (*host_alloc)(void *ctx, void **p, size_t n);
    void (*host_free)(void *ctx, void *p, size_t n);
    /* Device memory (scratch for reductions; tests and the bench use it through the helpers). */
    int (*dev_alloc)(void *ctx, void **p, size_t n);
    void (*dev_free)(void *ctx, void *p);
    /* Queues a copy on the context's stream. */
    int (*copy_async)(void *ctx, const gbp_copy3d *c);
    /* Min/max of a strided 3-D region of device memory (elements of `type`; width counts bytes
     * as in gbp_copy3d), merged into the context's running accumulator. minmax_begin resets the
     * accumulator; minmax_end queues the copy of the result (min then max, one element each)
     * into `out`, which is pinned host memory valid until the stream is synchronized. Same
     * order and tie rules as gbp_minmax (NaN aside). */
    int (*minmax_begin)(void *ctx, int type);
    int (*minmax_region)(void *ctx, int type, const void *dptr, size_t width, size_t height,
                         size_t depth, size_t pitch, size_t slice);
    int (*minmax_end)(void *ctx, int type, void *out);
    /* Events: created once, recorded on the stream (captures all work queued so far), waited
     * for by the host (returns the first failure of the work it covers). */
    int (*event_create)(void *ctx, void **ev);
    void (*event_destroy)(void *ctx, void *ev);
    int (*event_record)(void *ctx, void *ev);
    int (*event_wait)(void *ctx, void *ev);
    /* Waits for all work queued on the stream. */
    int (*sync)(void *ctx);
    /* Orders the context's following work after the work queued so far on `stream` (a
     * cudaStream_t; NULL forgets it), and makes `stream` wait for the context's work at
     * gbp_mem_sync. */
    int (*set_user_stream)(void *ctx, void *stream);
    int (*fence_user_stream)(void *ctx);  /* lib stream waits for the user stream, now */
    int (*signal_user_stream)(void *ctx); /* user stream waits for the lib stream, now */
    /* The simulated device's hazard check (NULL elsewhere): GPUBP_ERR_INTERNAL, with a message,
     * when a copy queued and not yet complete writes into host bytes [p, p + n) or, with
     * `reads` set, reads them. The pipeline calls it where it relies on no copy touching a
     * slot: before it reads a file span into a slot, before it writes a slot's bytes to a
     * file, and when a device write gives its slot back. */
    int (*check_idle)(void *ctx, const void *p, size_t n, int reads);
} gbp_devops;

/* The CUDA backend (cuda/), or NULL in a build without CUDA (cuda_stub.c). */
const gbp_devops *gbp_cuda_ops(void);

/* The simulated device (simdev.c). */
const gbp_devops *gbp_sim_ops(void);

#ifdef __cplusplus
}
#endif

#endif /* GBP_DEVOPS_H */
