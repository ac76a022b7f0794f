/* The simulated device (lib/memspace/simdev.c): host memory that libgpubp treats as device memory,
 * with copies and reductions carried out later by a worker thread per context (the "stream").
 * It exists so that the staging pipeline is exercised where there is no GPU (CI): a file opened
 * with "device=simulated" uses it, and buffers from gbp_sim_alloc() are GPU pointers there.
 *
 * Test hooks inject delays and failures. They are process-wide, take effect for work queued after
 * the call, and are reset by gbp_sim_reset(). */
#ifndef GBP_SIMDEV_H
#define GBP_SIMDEV_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Simulated device memory: gbp_mem_detect() reports it as GPUBP_MEM_GPU. The bytes are plain host
 * memory, so tests may fill and check them directly. NULL when out of memory. */
void *gbp_sim_alloc(size_t n);
void gbp_sim_free(void *p);

/* Each queued copy or reduction waits `us` microseconds before it runs. */
void gbp_sim_set_delay_us(unsigned us);
/* The n-th copy from now (0 = the next one) fails after copying half its rows: its stream reports
 * GPUBP_ERR_DEVICE. n < 0 disables. */
void gbp_sim_fail_copy_after(long n);
/* The n-th call from now to queue a copy fails at once (GPUBP_ERR_DEVICE, native code 1, like
 * cudaMemcpyAsync refusing an argument), queuing nothing; the stream is not affected. n < 0
 * disables. */
void gbp_sim_fail_queue_after(long n);
/* The n-th event record from now fails at once (GPUBP_ERR_DEVICE, native code 1); the work
 * queued before it still runs. n < 0 disables. */
void gbp_sim_fail_record_after(long n);
/* The n-th pinned allocation from now fails (GPUBP_ERR_NOMEM). n < 0 disables. */
void gbp_sim_fail_pinned_alloc_after(long n);
/* The n-th pwrite or pread of a staging slot from now fails with EIO (GPUBP_ERR_IO), whatever
 * the device backend. n < 0 disables. */
void gbp_sim_fail_io_after(long n);
/* While on, the pipeline's pwrites and preads (the I/O threads' jobs, any backend) wait before
 * they start: a test looks at what returns while the writes cannot finish. Off releases them. */
void gbp_sim_hold_io(int on);
/* Called by the pipeline once per pwrite or pread of a slot or host piece: waits while the I/O
 * is held; 1 when it is the one to fail. */
int gbp_sim_io_fail_now(void);
/* While on, the streams run nothing: what is queued waits (a test looks at work in flight).
 * Closing a context runs its queue regardless. */
void gbp_sim_hold(int on);
/* Counters since the last reset: copies run, reductions run, bytes copied, user-stream fences. */
typedef struct gbp_sim_stats {
    long copies;
    long reductions;
    unsigned long long bytes;
    long fences;
    long signals;
    long pinned_live;     /* pinned allocations not yet freed */
    size_t pinned_bytes;  /* their bytes */
    long hazards;         /* slot bytes reused while a copy still touched them (check_idle) */
    int copy_threads;     /* distinct threads that queued copies (up to 64) */
    long copies_behind_own; /* copies queued while an earlier copy of the same thread was still
                             * queued or running (its next piece read while the copy flew) */
} gbp_sim_stats;
void gbp_sim_get_stats(gbp_sim_stats *s);
/* Clears the hooks and the counters (not the live allocations). */
void gbp_sim_reset(void);

#ifdef __cplusplus
}
#endif

#endif /* GBP_SIMDEV_H */
