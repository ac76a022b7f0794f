/* lib/memspace internals: the state of a context, its pinned slots and its jobs, shared by the
 * files of the module (nothing outside lib/memspace includes this).
 *
 * Host memory: writes go straight from the user's buffer to the file (min/max computed chunk by
 * chunk while the chunk is in cache); strided boxes are packed through a bounded bounce buffer;
 * reads pread each contiguous run into place.
 *
 * Device memory (CUDA, or the simulated device): the staging pipeline of docs/design.md section 5.
 * A pool of `pool_slots` pinned slots of `chunk_bytes`, allocated once at the first device
 * transfer, and `io_threads` I/O threads. A write cuts the block into chunks and queues them as
 * descriptors; the I/O thread that takes one takes a free slot, queues the device-to-host copy
 * into it on the library's stream (a chunk contiguous on the device in pieces of `piece_bytes`,
 * each with its event, the next piece's copy queued once the current one landed), and pwrites
 * the slot piece by piece as the copies land. A read mirrors it: the I/O thread preads the file
 * span of the chunk into a free slot and queues the (strided) host-to-device copies out of it,
 * recording the slot's event; the slot is reused only once that event completed.
 * Min/max of device blocks: a reduction on the device whose result lands in pinned memory and is
 * handed to the caller's pointers at gbp_mem_sync. The first failure of any thread is kept, with
 * its message and native code, and reported by gbp_mem_sync on the caller's thread.
 *
 * The files, from the callers down (each calls only files of its own row or below, and no two
 * call each other):
 *   memspace.c   the context's public calls: open, close, device status, stream, waits, commits
 *   mem_write.c, mem_read.c, stage.c, mem_minmax.c
 *                producers: transfers cut into jobs (and device min/max, delivered at the waits)
 *   slots.c      the pinned pool of a context and the process-wide slot cache
 *   ioq.c        the queue and the I/O threads: which job a thread takes, and its accounting
 *   jobs.c       what an I/O thread does with a device job (and the O_DIRECT descriptors)
 *   mem_ctx.c    backend binding, kept errors, staged accounting, checks every job makes
 * Each has its own header (memspace.c: memspace.h, memdev.h); the producers' calls are the
 * module's, declared in memspace.h, and their headers hold what is theirs alone.
 * m->lock guards the queue, the slots' busy and ev_pending flags, the counters and the kept
 * errors; a function named *_locked is called with it held. */
#ifndef GBP_MEM_INTERNAL_H
#define GBP_MEM_INTERNAL_H

#include <pthread.h>
#include <stdint.h>
#include <sys/types.h>

#include "memspace/box.h"
#include "common/dzops.h"
#include "memspace/devops.h"
#include "io/fileio.h"
#include "memspace/memspace.h"

#define GBP_BOUNCE_BYTES ((size_t)4 << 20)
#define GBP_DZ_SCRATCH 3 /* device scratch buffers of the GPU codec path (mem_dz.c) */
#define GBP_DZ_TIMES 16  /* its phase times (at least mem_dz.h's GBP_DZT_PHASES) */
#define GBP_FENCES 64    /* write fences open at once (gbp_mem_dz_fence): zdev.c's rings' */
#define GBP_MM_PAGE_ENTRIES 256
#define GBP_MM_ENTRY 32 /* min and max, 16 bytes each at most */
#define GBP_MAX_DIRECT_FDS 16
#define GBP_HOST_CHUNK ((size_t)8 << 20) /* host transfers handed to I/O threads in such pieces */
#define GBP_HOST_JOBS 4                  /* host pieces queued at most (beyond the slots) */
#define GBP_HOST_ASYNC_MIN ((size_t)4 << 20) /* smaller host transfers stay on the caller */

typedef struct slot {
    uint8_t *buf;  /* pinned, slot_alloc bytes */
    void *ev;
    void **pev;    /* npev events: a device write copied into the slot piece by piece */
    int busy;      /* handed to an I/O thread */
    int ev_pending; /* host-to-device copies out of it may still run: wait ev before reuse */
    int read_np;    /* the last read copied out of it in read_np pieces, each with pev[i] (and
                     * ev after the last); 0: in one go (ev only) */
} slot;

typedef enum job_kind { JOB_DEV_WRITE, JOB_DEV_READ, JOB_HOST_WRITE, JOB_HOST_READ, JOB_COMMIT } job_kind;

/* GPUBP_MEM_STATS=trace (memspace.c): event kinds besides the GPU codec path's phases (mem_dz.h
 * GBP_DZT_*): an I/O job (GBP_TRACE_JOB + its job_kind), a wait of gbp_mem_sync. */
#define GBP_TRACE_MAX 65536
#define GBP_TRACE_JOB 100
#define GBP_TRACE_SYNC 200
void gbp_mem_trace(gbp_mem *m, double t, double dt, int kind, int fd, uint64_t bytes);
void gbp_mem_trace_locked(gbp_mem *m, double t, double dt, int kind, int fd, uint64_t bytes);

typedef struct job {
    job_kind kind;
    int is_read;
    int slot;
    int fd;
    uint64_t off;  /* file offset of the first byte */
    size_t len;    /* bytes */
    /* reads: the chunk as a box of the file block and of the destination, and the destination */
    gbp_box fa, da;
    size_t span_off; /* byte offset in the block of the span's first byte */
    int sparse;      /* reads: only the runs of fa are read (len: their bytes; device reads:
                      * packed in the slot), not its whole span (gbp_box_sparse_pays) */
    size_t elsize;
    void *dst;
    const void *src; /* host jobs: the user's bytes (write) */
    gbp_fill_fn fill; /* device reads: produces the span instead of a pread (fill_ctx) */
    void *fill_ctx;
    /* device writes: the chunk to copy into the slot, which the I/O thread that takes the job
     * picks (slot -1 until then) and fills (filled); a chunk contiguous on the device (from
     * csrc) is copied in np pieces, of which `queued` are queued so far (np 1: in one go) */
    gbp_chunk ch;
    const void *base;
    int filled;
    const uint8_t *csrc;
    int np, queued;
    int staged;    /* writes: counted out of m->unstaged (the data has left the caller's buffer) */
    int wait_ev;   /* device reads: the slot taken may still feed a host-to-device copy */
    int slot_pending; /* the slot had host-to-device copies out of it that may still run (its
                       * ev_pending, cleared when it was taken): a write that queues nothing into
                       * it gives that back */
    int epoch;     /* m->epoch when queued: the commit that must follow it */
    unsigned fence; /* m->fence when queued (gbp_mem_dz_fence) */
    gbp_commit_fn commit; /* JOB_COMMIT: run once every job of its epoch is done */
    void *commit_ctx;
    void (*commit_free)(void *);
} job;

typedef struct mm_pending {
    void *min, *max;
    int type;
    uint8_t *entry; /* pinned: min then max */
} mm_pending;

typedef struct mm_page {
    uint8_t *mem; /* pinned, GBP_MM_PAGE_ENTRIES * GBP_MM_ENTRY */
    struct mm_page *next;
} mm_page;

typedef struct direct_fd {
    int fd, dfd, rd;
    dev_t dev;
    ino_t ino;
} direct_fd;

typedef struct io_arg {
    gbp_mem *m;
    int idx;
} io_arg;

struct gbp_mem {
    gbp_params params;
    uint8_t *bounce; /* host bounce buffer for strided boxes, GBP_BOUNCE_BYTES */

    /* device backend */
    const gbp_devops *ops; /* NULL: host only */
    void *dctx;
    int dev_state;         /* 0 not opened yet, 1 ready, -1 unavailable */
    int dev_nomem;         /* the last open attempt ran out of memory */
    void *user_stream;

    /* pool and I/O threads */
    int pool_ready;
    int nslots, nthreads;
    int nfiles;        /* files the writer writes (gbp_mem_set_files; 0: unknown) */
    size_t slot_bytes, slot_alloc;
    size_t piece;  /* device transfers of a contiguous chunk go in pieces of this */
    int npev;      /* pieces per slot at most */
    slot *slots;
    int next_slot;
    pthread_t *threads;
    int threads_started;
    pthread_mutex_t lock;
    pthread_cond_t cv;
    job *queue; /* ring of qcap */
    int q_head, q_len, qcap;
    int *wfd;   /* per I/O thread: the descriptor it is writing, or -1 */
    struct io_arg *args;
    int inflight;
    int stop;
    void *misc_ev;

    /* commits queued behind the transfers (gbp_mem_commit_async): jobs carry the epoch they were
     * queued in; a commit runs once every job of its epoch is done, and only when none failed */
    int epoch;
    int open_jobs[2];  /* jobs of epoch e not done yet, at [e & 1] */
    int ep_failed[2];  /* a job of epoch e failed */
    int unstaged;      /* writes whose data may still be read from the caller's buffer */
    int commit_pending;
    int commit_rc, commit_native;
    char commit_msg[512];

    /* first failure since the last sync */
    int err;
    int err_native;
    char err_msg[512];

    /* min/max results on their way */
    mm_page *pages;
    size_t mm_used; /* entries used over all pages */
    mm_pending *pend;
    size_t npend, cap_pend;

    direct_fd dfds[GBP_MAX_DIRECT_FDS];
    int ndfds;

    /* GPUBP_MEM_STATS=1: where the time of a file's transfers went, printed to stderr at close */
    int stats;
    double t_dev, t_pool, t_sync, t_slot, t_io;
    /* GPUBP_MEM_STATS=trace: the timeline too (memspace.c gbp_mem_trace_locked), under lock */
    struct gbp_trace_ev *tev;
    int ntev, captev;
    long njobs;
    /* the GPU codec path (mem_dz.c): [0] writes, [1] reads on the device; the last fallback */
    long dz_blocks[2];
    uint64_t dz_raw[2], dz_stored[2];
    char dz_why[200];
    void *dz;                   /* its device codec state, kept until close */
    const gbp_dzops *dz_ops;
    void *dz_buf[GBP_DZ_SCRATCH]; /* its device scratch buffers */
    size_t dz_cap[GBP_DZ_SCRATCH];
    void *dz_user;              /* its caller's state (gbp_mem_dz_user) */
    void (*dz_user_free)(gbp_mem *m, void *p);
    void (*dz_user_reset)(void *p); /* called when a parked state is taken (dz_cache.c) */
    void *dz_owner;             /* the backend context of a cached state (dz_cache.c) */
    double dz_t[GBP_DZ_TIMES];    /* its phase times (mem_dz.h GBP_DZT_*), GPUBP_MEM_STATS only */
    /* fences (gbp_mem_dz_fence): jobs queued in fence f count in fence_open[f % GBP_FENCES] */
    unsigned fence;
    int fence_open[GBP_FENCES];
};

static inline int gbp_job_is_write(const job *j)
{
    return j->kind == JOB_DEV_WRITE || j->kind == JOB_HOST_WRITE;
}

static inline int gbp_job_is_dev(const job *j)
{
    return j->kind == JOB_DEV_WRITE || j->kind == JOB_DEV_READ;
}

#endif /* GBP_MEM_INTERNAL_H */
