/* lib/memspace/mem_dz.c: the device of a context, for device work done outside lib/memspace (the
 * GPU compression path, lib/engine/zdev.c): the backend's context, device scratch memory, small
 * synchronous copies, device min/max, the codec state, and the path's counters and phase times
 * for GPUBP_MEM_STATS. The CUDA backend's batched codec is memspace/dz_stub.h's. */
#ifndef GBP_MEM_DZ_H
#define GBP_MEM_DZ_H

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
 * call with other ops closes the old state), and device scratch buffer `which` (0, 1 or 2) of at
 * least n bytes (kept and grown; its old contents are lost when it grows). The caller uses them
 * on the file's thread only and waits for the work that uses them before the next call. */
int gbp_mem_dz_state(gbp_mem *m, const gbp_dzops *ops, void *dctx, void **z);
int gbp_mem_dz_scratch(gbp_mem *m, int which, size_t n, void **p);
/* Exchanges device scratch buffers a and b (pointers and sizes): a buffer filled ahead of its
 * use (zdev_read.c: the next block's input, 2) becomes the one the decoder reads (0). */
void gbp_mem_dz_scratch_swap(gbp_mem *m, int a, int b);
/* The caller's own state for the path (zdev.c: its rings of buffers): `size` bytes, zeroed at
 * the first call and kept until close, where free_fn(m, p) frees what it points to (device
 * memory of m included) before the device context closes. NULL when out of memory. At close the
 * state (with the codec state and the scratch) may be parked for the next file of the process
 * (memspace/dz_cache.c), which calls reset_fn(p) when it takes it: what referred to the old
 * file (its write fences) is forgotten there. */
void *gbp_mem_dz_user(gbp_mem *m, size_t size, void (*free_fn)(gbp_mem *m, void *p),
                      void (*reset_fn)(void *p));
/* The state gbp_mem_dz_user made (NULL: none, or no codec state), the codec state and its ops. */
void *gbp_mem_dz_peek(gbp_mem *m, const gbp_dzops **ops, void **z);
/* Frees all of it, or parks it for the next file (gbp_mem_close, before the device context). */
void gbp_mem_dz_free(gbp_mem *m);
/* The GPU codec path's counters for GPUBP_MEM_STATS (printed at close): blocks compressed or
 * decompressed on the device, and the last reason the CPU path was taken instead (kept). */
void gbp_mem_dz_note(gbp_mem *m, int decode, size_t raw, size_t stored, const char *fallback);
/* Prints the counters to stderr when GPUBP_MEM_STATS is set and the path was considered. */
void gbp_mem_dz_report(const gbp_mem *m);

/* Write fences, so that a buffer whose bytes were queued for writing is reused as soon as those
 * writes are done, without waiting for the writes queued after them: gbp_mem_dz_fence closes
 * the fence of the jobs queued since the previous call and returns its number (waiting first,
 * when GBP_FENCES fences are open, for the oldest); gbp_mem_dz_fence_wait(m, f) waits until
 * every job of fence f is done and returns the first failure so far (kept, as
 * gbp_mem_wait_writes does). A fence older than the last GBP_FENCES is done. */
unsigned gbp_mem_dz_fence(gbp_mem *m);
int gbp_mem_dz_fence_wait(gbp_mem *m, unsigned fence);

/* Host wall time of the GPU codec path by phase, for GPUBP_MEM_STATS (printed at close with the
 * counters): gbp_mem_dz_timing says whether it is kept (GPUBP_MEM_STATS set: the caller reads the
 * clock only then), gbp_mem_dz_time adds seconds to a phase. */
enum {
    /* writes (zdev.c gbp_zdev_write) */
    GBP_DZT_W_FILTER_CODE, /* filter and codec queued, and the wait for the codec's results */
    GBP_DZT_W_FRAME,       /* the host framing: put_ext, emit_ext, segment lists */
    GBP_DZT_W_ASSEMBLE,    /* the assembly queued (segment upload, kernel) */
    GBP_DZT_W_SUBMIT,      /* the output's writes queued for the I/O threads */
    GBP_DZT_W_WAIT,        /* waits for earlier writes (their output buffer reused) */
    GBP_DZT_W_FINISH,      /* a block's setup (encoder, min/max kernel) and headers (redo) */
    /* reads (get.c, zdev.c gbp_zdev_read) */
    GBP_DZT_R_FILE,        /* the compressed bytes read from the file into host memory (whole
                            * blocks of a local file: through the slots, uploaded at once) */
    GBP_DZT_R_PARSE,       /* chunk headers and stream sizes parsed on the host */
    GBP_DZT_R_UPLOAD,      /* the compressed bytes up to the device, waited for */
    GBP_DZT_R_DECODE,      /* the codec batch queued and waited for */
    GBP_DZT_R_PLACE,       /* copies, runs, unshuffle queued and waited for */
    /* both */
    GBP_DZT_STATE,         /* the codec state opened (or taken from the cache, dz_cache.c), the
                            * scratch and zdev.c's rings and filter buffers allocated */
    GBP_DZT_CLOSE,         /* the state freed, or parked for the next file, at close */
    GBP_DZT_PHASES
};
int gbp_mem_dz_timing(const gbp_mem *m);
void gbp_mem_dz_time(gbp_mem *m, int phase, double seconds);

#endif /* GBP_MEM_DZ_H */
