/* lib/memspace: moving bytes between user buffers in any memory space and data files.
 *
 * src/ (the public API) calls only the functions below. Behind them sit the memory-space
 * backends (host; CUDA, implemented in cuda/; a simulated device for CI) and, for device
 * memory, the staging pipeline: a bounded pool of pinned slots filled by async copies on the
 * library's stream and drained by I/O threads (docs/design.md section 5).
 *
 * Boxes: a gbp_box names a box (start, count) inside a dense row-major array of dims `dims`.
 * A contiguous whole-buffer block is dims == count, start == 0. */
#ifndef GBP_MEMSPACE_H
#define GBP_MEMSPACE_H

#include <stdint.h>

#include "common/common.h"

typedef struct gbp_box {
    size_t ndims;
    size_t dims[GBP_MAX_DIMS];
    size_t start[GBP_MAX_DIMS];
    size_t count[GBP_MAX_DIMS];
} gbp_box;

/* A dense box: dims = count, start = 0. ndims 0 is one element. */
void gbp_box_dense(gbp_box *b, size_t ndims, const size_t *count);
size_t gbp_box_elements(const gbp_box *b);   /* product of count */
int gbp_box_is_contiguous(const gbp_box *b); /* the box is one contiguous run of the array */
size_t gbp_box_offset(const gbp_box *b);     /* linear index of the box's first element */

/* The memory-space context of one open file. Created at open; the pinned pool and the device
 * stream are allocated at the first device transfer and kept until gbp_mem_close. */
typedef struct gbp_mem gbp_mem;

int gbp_mem_open(gbp_mem **out, const gbp_params *params);
void gbp_mem_close(gbp_mem *m);

/* 1 when a device backend (CUDA, or the simulated device selected by "device=simulated") is there. */
int gbp_mem_has_device(const gbp_mem *m);
/* GPUBP_OK when a device backend is usable; else the reason as a status with its message:
 * GPUBP_ERR_NOT_SUPPORTED (no device / no CUDA), GPUBP_ERR_NOMEM (opening it ran out of memory;
 * a later call tries again). */
int gbp_mem_device_status(gbp_mem *m);

/* How many files (subfiles) the writer may write through m, set while it queues a step's blocks
 * (one after the other) and reset to 0 once they are all queued: meanwhile an I/O thread takes a
 * second pool slot for its file's next chunk only when that leaves one slot for each other file
 * no thread is writing yet, including files whose chunks are not queued yet. 0 (the default):
 * only files with queued chunks count. */
void gbp_mem_set_files(gbp_mem *m, int n);

/* What `ptr` is: device memory gives GPUBP_MEM_GPU; host, pinned and managed memory HOST.
 * Without a device backend every pointer is HOST. */
int gbp_mem_detect(gbp_mem *m, const void *ptr, gpubp_memory_space *space);

/* Writes the box `src` of the array at `base` (in space sp), packed row-major, to `fd` at `off`.
 * When min and max are non-NULL they receive the box's min and max (one element of `type`;
 * complex by modulus) computed on the way (device: a reduction kernel).
 * The transfer may still be running when this returns: `base` must stay valid and the results
 * (bytes on disk, min/max) are complete only after gbp_mem_sync() returns GPUBP_OK. */
int gbp_mem_write(gbp_mem *m, gpubp_memory_space sp, int fd, uint64_t off, const void *base,
                  int type, const gbp_box *src, void *min, void *max);

/* Reads: the file holds at `off` a dense row-major block of dims fbox->dims; copies the box of
 * fbox into the box dbox (same counts) of the array at dst (space sp). May complete
 * asynchronously like gbp_mem_write. */
int gbp_mem_read(gbp_mem *m, gpubp_memory_space sp, int fd, uint64_t off, size_t elsize,
                 const gbp_box *fbox, void *dst, const gbp_box *dbox);

/* Device reads whose bytes are produced on the host (decompression): as gbp_mem_read into device
 * memory, but the bytes [off, off + len) of the dense packed block (dims fbox->dims) that a slot
 * needs are written into the slot by fill(ctx, slot, off, len) on an I/O thread — several at
 * once, in any order — instead of being read from a file; the host-to-device copies out of the
 * slots overlap the next fills. fill returns a status (its failure is kept and reported by
 * gbp_mem_sync). ctx and what it points to must stay valid until gbp_mem_sync returns. */
typedef int (*gbp_fill_fn)(void *ctx, uint8_t *slot, size_t off, size_t len);
int gbp_mem_read_fill(gbp_mem *m, gbp_fill_fn fill, void *ctx, size_t elsize, const gbp_box *fbox,
                      void *dst, const gbp_box *dbox);

/* Copies the box sbox of the host array `src` into the box dbox (same counts) of dst in space sp.
 * Synchronous. Used for values from metadata, decompressed blocks, transposed reads. */
int gbp_mem_scatter(gbp_mem *m, gpubp_memory_space sp, const void *src, size_t elsize,
                    const gbp_box *sbox, void *dst, const gbp_box *dbox);

/* Copies n bytes from `src` in space sp into host memory (synchronous). */
int gbp_mem_copy_out(gbp_mem *m, gpubp_memory_space sp, void *dst_host, const void *src, size_t n);

/* Staging for a consumer of the bytes on the host (compression): the box `box` of the array at
 * `base` (space sp) is delivered packed, in order, in pieces (device: each lands in a pool slot
 * while the copies of the next pieces run ahead; host: slices of the buffer, or packed into the
 * bounce buffer when strided). Only the pieces that overlap the packed byte range [from, to) are
 * delivered (whole: the caller clips). gbp_mem_stage_next returns 1 with *p (the piece's bytes,
 * valid and unchanged until the next call or close), *off (its packed offset) and *len; 0 after
 * the last piece; < 0 on a failure (message kept). `base` must stay valid until close. The stage
 * orders its copies after the user's stream as gbp_mem_write does. One stage at a time per
 * context, on the thread that owns the file. Close accepts NULL. */
typedef struct gbp_stage gbp_stage;
int gbp_mem_stage_open(gbp_mem *m, gbp_stage **st, gpubp_memory_space sp, const void *base,
                       size_t elsize, const gbp_box *box, size_t from, size_t to);
int gbp_mem_stage_next(gbp_stage *st, const uint8_t **p, size_t *off, size_t *len);
void gbp_mem_stage_close(gbp_stage *st);

/* Queues the write of n host bytes at p to fd at off on the I/O threads; p must stay valid and
 * unchanged until gbp_mem_wait_writes or gbp_mem_sync returns. Writes queued between two waits
 * may run in any order and at once: they must not overlap. */
int gbp_mem_write_host_async(gbp_mem *m, int fd, uint64_t off, const void *p, size_t n);
/* As gbp_mem_write_host_async (sp HOST) and gbp_mem_write of n bytes (sp GPU), for bytes the
 * library owns (not the caller's: zdev.c's assembled outputs and header buffers, fenced with
 * gbp_mem_dz_fence before they are reused): such a write counts as staged at once, so that
 * gbp_mem_wait_staged (async_commit=1) returns without waiting for it. p must stay valid and
 * unchanged until the write is done (its fence, gbp_mem_wait_writes or gbp_mem_sync). */
int gbp_mem_write_owned(gbp_mem *m, gpubp_memory_space sp, int fd, uint64_t off, const void *p,
                        size_t n);
/* Waits until every queued write and read job is done; returns the first failure so far (it is
 * kept, and gbp_mem_sync reports it again). Device copies are not waited for. */
int gbp_mem_wait_writes(gbp_mem *m);

/* Commits behind the transfers (the writer's async_commit=1).
 * gbp_mem_wait_staged waits until the data of every write queued so far has left the caller's
 * buffers: device chunks copied into pool slots (their writes may still run), host pieces
 * written (writes of the library's own bytes, gbp_mem_write_owned, are not waited for); the
 * device work queued on the library stream so far is done; min/max results are delivered.
 * Returns the first failure so far (kept: gbp_mem_sync reports it again).
 * gbp_mem_commit_async queues fn(ctx) to run on an I/O thread once every transfer queued before
 * it is done; when one of them failed, fn does not run and the commit fails with that failure.
 * free_ctx(ctx) (may be NULL) runs after it, also when the call fails. One commit at a time:
 * INTERNAL when the previous one was not waited for with gbp_mem_commit_wait, which waits for it
 * and returns its status (message kept; GPUBP_OK when none was queued). Transfers queued after a
 * commit are not held back by it; a failure of theirs does not stop it. gbp_mem_sync waits for
 * commits too, but does not consume their status. */
typedef int (*gbp_commit_fn)(void *ctx);
int gbp_mem_wait_staged(gbp_mem *m);
int gbp_mem_commit_async(gbp_mem *m, gbp_commit_fn fn, void *ctx, void (*free_ctx)(void *));
int gbp_mem_commit_wait(gbp_mem *m);

/* Waits for every transfer queued on m; returns the first failure (status and message kept). */
int gbp_mem_sync(gbp_mem *m);

/* Orders the device work of m after the work queued so far on the user's CUDA stream (a
 * cudaStream_t; NULL forgets it) at each transfer, and makes that stream wait for m's work at
 * gbp_mem_sync. NOT_SUPPORTED without a device. Backs gpubp_set_stream() of <gpubp/cuda.h>. */
int gbp_mem_set_stream(gbp_mem *m, void *stream);

/* The pinned slots of closed files are kept for the next file of the process (same backend and
 * slot size; CUDA only, since pinning costs about 0.3 ms per MiB), up to GPUBP_POOL_CACHE_MIB
 * MiB (environment; default 1024, 0 = unpin at close). gbp_mem_pool_cache_trim unpins and frees
 * what is kept now (thread-safe; files still open keep their pools; it also runs at exit);
 * _bytes says how much that is.
 * gbp_mem_pool_cache_sim(1) makes the simulated device use the cache too (tests). */
void gbp_mem_pool_cache_trim(void);
size_t gbp_mem_pool_cache_bytes(void);
void gbp_mem_pool_cache_sim(int on);

/* Host bytes the context holds now (pinned pool, bounce buffers), for footprint queries. */
size_t gbp_mem_footprint(const gbp_mem *m);

#endif /* GBP_MEMSPACE_H */
