/* The memory-space context of one file.
 *
 * Host memory: writes go straight from the user's buffer to the file (min/max computed chunk by
 * chunk while the chunk is in cache); strided boxes are packed through a bounded bounce buffer;
 * reads pread each contiguous run into place.
 *
 * Device memory (CUDA, or the simulated device): the staging pipeline of DESIGN.md section 5.
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
 * its message and native code, and reported by gbp_mem_sync on the caller's thread. */
#include "box.h"
#include "devops.h"
#include "fileio.h"
#include "simdev.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define GBP_BOUNCE_BYTES ((size_t)4 << 20)
#define GBP_MINMAX_CHUNK ((size_t)1 << 20)
#define GBP_DIRECT_ALIGN ((size_t)4096)
#define GBP_MM_PAGE_ENTRIES 256
#define GBP_MM_ENTRY 32 /* min and max, 16 bytes each at most */
#define GBP_MAX_DIRECT_FDS 16
#define GBP_HOST_CHUNK ((size_t)8 << 20) /* host transfers handed to I/O threads in such pieces */
#define GBP_HOST_JOBS 4                  /* host pieces queued at most (beyond the slots) */
#define GBP_HOST_ASYNC_MIN ((size_t)4 << 20) /* smaller host transfers stay on the caller */

/* ---- test hook: injected I/O failures in the pipeline ---------------------------------------- */
static atomic_long fail_io = -1;
void gbp_sim_fail_io_after(long n) { atomic_store(&fail_io, n); }
static int io_fail_now(void)
{
    long v = atomic_load(&fail_io);
    while (v >= 0) {
        if (atomic_compare_exchange_weak(&fail_io, &v, v - 1)) return v == 0;
    }
    return 0;
}

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
    long njobs;
};

static double mono_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

/* ---- the process-wide cache of pinned slots -------------------------------------------------- */
/* Pinning costs about 0.3 ms per MiB on the H200 machine (the pages are faulted in, zeroed and
 * locked): a 256 MiB pool took 70-78 ms, as long as writing 1.3 GB into the page cache. So the
 * slots of a closed file are not unpinned but kept, up to GPUBP_POOL_CACHE_MIB (default 1024;
 * 0 disables the cache), and the next file of the process with the same backend and slot size
 * takes them. Only for CUDA, whose pinning is what costs; the simulated device uses it when a
 * test asks (gbp_mem_pool_cache_sim). */
#define GBP_CACHE_ENTRIES 256
typedef struct cached_slot {
    const gbp_devops *ops;
    size_t bytes;
    uint8_t *buf;
} cached_slot;
static pthread_mutex_t cache_mu = PTHREAD_MUTEX_INITIALIZER;
static cached_slot cache[GBP_CACHE_ENTRIES];
static int ncache;
static size_t cache_bytes;
static atomic_int cache_sim;

void gbp_mem_pool_cache_sim(int on) { atomic_store(&cache_sim, on); }

/* What the cache holds is unpinned at exit (atexit, registered at the first slot kept: after the
 * CUDA runtime registered its own teardown, so this runs before it), so that leak checkers
 * (compute-sanitizer --leak-check full, valgrind) see every registration released. */
static pthread_once_t cache_exit_once = PTHREAD_ONCE_INIT;
static void cache_at_exit(void) { gbp_mem_pool_cache_trim(); }
static void cache_register_exit(void) { (void)atexit(cache_at_exit); }

static size_t cache_limit(void)
{
    const char *v = getenv("GPUBP_POOL_CACHE_MIB");
    if (!v || !*v) return (size_t)1024 << 20;
    char *end;
    unsigned long long mib = strtoull(v, &end, 10);
    if (*end || mib > ((size_t)-1 >> 20)) return (size_t)1024 << 20;
    return (size_t)mib << 20;
}

static int caches(const gbp_mem *m)
{
    return m->ops == gbp_cuda_ops() || (m->ops == gbp_sim_ops() && atomic_load(&cache_sim));
}

static int slot_alloc(gbp_mem *m, uint8_t **buf)
{
    if (caches(m)) {
        pthread_mutex_lock(&cache_mu);
        for (int i = ncache - 1; i >= 0; i--) {
            if (cache[i].ops != m->ops || cache[i].bytes != m->slot_alloc) continue;
            *buf = cache[i].buf;
            cache_bytes -= cache[i].bytes;
            cache[i] = cache[--ncache];
            pthread_mutex_unlock(&cache_mu);
            return GPUBP_OK;
        }
        pthread_mutex_unlock(&cache_mu);
    }
    return m->ops->host_alloc(m->dctx, (void **)buf, m->slot_alloc);
}

static void slot_free(gbp_mem *m, uint8_t *buf)
{
    if (!buf) return;
    if (caches(m)) {
        size_t limit = cache_limit();
        pthread_mutex_lock(&cache_mu);
        /* room: drop slots of other sizes first (an older configuration), then refuse */
        for (int i = 0; i < ncache && cache_bytes + m->slot_alloc > limit; i++) {
            if (cache[i].bytes == m->slot_alloc && cache[i].ops == m->ops) continue;
            cache[i].ops->host_free(NULL, cache[i].buf, cache[i].bytes);
            cache_bytes -= cache[i].bytes;
            cache[i--] = cache[--ncache];
        }
        if (ncache < GBP_CACHE_ENTRIES && cache_bytes + m->slot_alloc <= limit) {
            pthread_once(&cache_exit_once, cache_register_exit);
            cache[ncache++] = (cached_slot){m->ops, m->slot_alloc, buf};
            cache_bytes += m->slot_alloc;
            pthread_mutex_unlock(&cache_mu);
            return;
        }
        pthread_mutex_unlock(&cache_mu);
    }
    m->ops->host_free(m->dctx, buf, m->slot_alloc);
}

void gbp_mem_pool_cache_trim(void)
{
    pthread_mutex_lock(&cache_mu);
    for (int i = 0; i < ncache; i++) cache[i].ops->host_free(NULL, cache[i].buf, cache[i].bytes);
    ncache = 0;
    cache_bytes = 0;
    pthread_mutex_unlock(&cache_mu);
}

size_t gbp_mem_pool_cache_bytes(void)
{
    pthread_mutex_lock(&cache_mu);
    size_t n = cache_bytes;
    pthread_mutex_unlock(&cache_mu);
    return n;
}

/* ---- context --------------------------------------------------------------------------------- */
int gbp_mem_open(gbp_mem **out, const gbp_params *params)
{
    gbp_mem *m = gbp_calloc(1, sizeof *m);
    if (!m) return gbp_error(GPUBP_ERR_NOMEM, 0, "out of memory");
    m->params = *params;
    m->ops = params->simulated_device ? gbp_sim_ops() : gbp_cuda_ops();
    const char *st = getenv("GPUBP_MEM_STATS");
    m->stats = st && *st && strcmp(st, "0") != 0;
    pthread_mutex_init(&m->lock, NULL);
    pthread_cond_init(&m->cv, NULL);
    *out = m;
    return GPUBP_OK;
}

static void stop_threads(gbp_mem *m)
{
    if (!m->threads_started) return;
    pthread_mutex_lock(&m->lock);
    m->stop = 1;
    pthread_cond_broadcast(&m->cv);
    pthread_mutex_unlock(&m->lock);
    for (int i = 0; i < m->threads_started; i++) pthread_join(m->threads[i], NULL);
    m->threads_started = 0;
}

void gbp_mem_close(gbp_mem *m)
{
    if (!m) return;
    if (m->pool_ready || m->threads_started) {
        (void)gbp_mem_sync(m); /* nothing may still write into freed slots */
        gbp_error_clear();
    }
    double t0 = mono_s();
    stop_threads(m);
    if (m->dctx) {
        for (int i = 0; m->slots && i < m->nslots; i++) {
            if (m->slots[i].ev) m->ops->event_destroy(m->dctx, m->slots[i].ev);
            for (int k = 0; m->slots[i].pev && k < m->npev; k++)
                if (m->slots[i].pev[k]) m->ops->event_destroy(m->dctx, m->slots[i].pev[k]);
            gbp_free(m->slots[i].pev);
            slot_free(m, m->slots[i].buf);
        }
        if (m->misc_ev) m->ops->event_destroy(m->dctx, m->misc_ev);
        for (mm_page *p = m->pages, *n; p; p = n) {
            n = p->next;
            m->ops->host_free(m->dctx, p->mem, GBP_MM_PAGE_ENTRIES * GBP_MM_ENTRY);
            gbp_free(p);
        }
        m->ops->close(m->dctx);
    }
    if (m->stats && (m->pool_ready || m->threads_started))
        fprintf(stderr, "gpubp-mem: dev_open_ms=%.2f pool_ms=%.2f close_ms=%.2f sync_wait_ms=%.2f "
                "slot_wait_ms=%.2f io_busy_ms=%.2f jobs=%ld threads=%d slots=%d chunk_MiB=%.1f\n",
                m->t_dev * 1e3, m->t_pool * 1e3, (mono_s() - t0) * 1e3, m->t_sync * 1e3,
                m->t_slot * 1e3, m->t_io * 1e3, m->njobs, m->nthreads, m->nslots,
                (double)m->slot_bytes / 1048576.0);
    for (int i = 0; i < m->ndfds; i++)
        if (m->dfds[i].dfd >= 0) close(m->dfds[i].dfd);
    gbp_free(m->slots);
    gbp_free(m->threads);
    gbp_free(m->wfd);
    gbp_free(m->args);
    gbp_free(m->queue);
    gbp_free(m->pend);
    gbp_free(m->bounce);
    pthread_cond_destroy(&m->cv);
    pthread_mutex_destroy(&m->lock);
    gbp_free(m);
}

/* Opens the backend context on first use. Returns 1 when a device is usable. */
static int dev_open(gbp_mem *m)
{
    if (m->dev_state == 0) {
        m->dev_state = -1;
        double t0 = mono_s();
        int rc = m->ops ? m->ops->open(&m->dctx) : GPUBP_ERR_NOT_SUPPORTED;
        m->t_dev += mono_s() - t0;
        if (rc == GPUBP_OK) {
            m->dev_state = 1;
        } else if (rc == GPUBP_ERR_NOMEM) {
            m->dev_state = 0; /* not "no device": a later call tries again */
            m->dev_nomem = 1; /* the error record says what failed */
            return 0;
        }
        gbp_error_clear();
    }
    m->dev_nomem = 0;
    return m->dev_state == 1;
}

static int device_unsupported(const gbp_mem *m);

int gbp_mem_device_status(gbp_mem *m)
{
    return dev_open(m) ? GPUBP_OK : device_unsupported(m);
}

int gbp_mem_has_device(const gbp_mem *m)
{
    return dev_open((gbp_mem *)m); /* the context is opened lazily; m is not const in spirit */
}

int gbp_mem_detect(gbp_mem *m, const void *ptr, gpubp_memory_space *space)
{
    *space = GPUBP_MEM_HOST;
    if (!ptr || !m->ops) return GPUBP_OK;
    if (m->dev_state == 0 && m->ops->present && !m->ops->present()) return GPUBP_OK;
    if (!dev_open(m)) return GPUBP_OK;
    return m->ops->query(m->dctx, ptr, space);
}

static int device_unsupported(const gbp_mem *m)
{
    if (m->dev_nomem) return GPUBP_ERR_NOMEM; /* the record has the allocation that failed */
    if (m->ops)
        return gbp_error(GPUBP_ERR_NOT_SUPPORTED, 0,
                         "GPU memory: no usable %s device (none present, or its runtime failed)",
                         m->ops->name);
    return gbp_error(GPUBP_ERR_NOT_SUPPORTED, 0,
                     "GPU memory is not supported by this build of libgpubp (built without CUDA)");
}

int gbp_mem_set_stream(gbp_mem *m, void *stream)
{
    if (!dev_open(m)) return device_unsupported(m);
    GBP_FORWARD_IF_ERROR(m->ops->set_user_stream(m->dctx, stream));
    m->user_stream = stream;
    return GPUBP_OK;
}

/* ---- errors of the pipeline ------------------------------------------------------------------ */
/* Keeps the first failure (the message of gbp_error on this thread). Caller holds m->lock. */
static void keep_error_ep_locked(gbp_mem *m, int rc, int epoch)
{
    if (rc >= 0) return;
    m->ep_failed[epoch & 1] = 1;
    if (m->err) return;
    m->err = rc;
    m->err_native = gbp_error_native();
    snprintf(m->err_msg, sizeof m->err_msg, "%s", gbp_error_message());
}

static void keep_error_locked(gbp_mem *m, int rc) { keep_error_ep_locked(m, rc, m->epoch); }

/* The failure kept so far, raised again on this thread (it stays kept), or GPUBP_OK. */
static int kept_error(gbp_mem *m)
{
    pthread_mutex_lock(&m->lock);
    int err = m->err, native = m->err_native;
    char msg[sizeof m->err_msg];
    memcpy(msg, m->err_msg, sizeof msg);
    pthread_mutex_unlock(&m->lock);
    return err ? gbp_error(err, native, "%s", msg) : GPUBP_OK;
}

static int keep_error(gbp_mem *m, int rc)
{
    if (rc >= 0) return rc;
    pthread_mutex_lock(&m->lock);
    keep_error_locked(m, rc);
    pthread_mutex_unlock(&m->lock);
    return rc;
}

static int has_error(gbp_mem *m)
{
    pthread_mutex_lock(&m->lock);
    int e = m->err;
    pthread_mutex_unlock(&m->lock);
    return e;
}

/* A job of j's epoch failed: j does nothing more (a job of a later epoch failing does not stop
 * an earlier one, whose commit is still to come). */
static int job_failed(gbp_mem *m, const job *j)
{
    pthread_mutex_lock(&m->lock);
    int e = m->ep_failed[j->epoch & 1];
    pthread_mutex_unlock(&m->lock);
    return e;
}

/* ---- O_DIRECT descriptors -------------------------------------------------------------------- */
/* A second descriptor of the same file opened with O_DIRECT, cached by (fd, device, inode) so that
 * a reused descriptor number is never confused with an older file. -1: not possible (tmpfs...),
 * buffered I/O is used. Called by I/O threads under m->lock. */
static int direct_fd_locked(gbp_mem *m, int fd, int rd)
{
    struct stat st;
    if (fstat(fd, &st) < 0) return -1;
    for (int i = 0; i < m->ndfds; i++) {
        direct_fd *d = &m->dfds[i];
        if (d->fd == fd && d->rd == rd && d->dev == st.st_dev && d->ino == st.st_ino) return d->dfd;
    }
    char path[64];
    snprintf(path, sizeof path, "/proc/self/fd/%d", fd);
    int dfd = open(path, (rd ? O_RDONLY : O_WRONLY) | O_DIRECT | O_CLOEXEC);
    direct_fd *d;
    if (m->ndfds < GBP_MAX_DIRECT_FDS) {
        d = &m->dfds[m->ndfds++];
    } else { /* recycle the oldest entry */
        d = &m->dfds[0];
        if (d->dfd >= 0) close(d->dfd);
    }
    d->fd = fd;
    d->rd = rd;
    d->dev = st.st_dev;
    d->ino = st.st_ino;
    d->dfd = dfd;
    return dfd;
}

static int pwrite_direct(int dfd, int fd, const uint8_t *p, size_t n, uint64_t off)
{
    /* p is aligned like off (p % 4096 == off % 4096): direct for the whole pages inside */
    uint64_t a = (off + GBP_DIRECT_ALIGN - 1) & ~(uint64_t)(GBP_DIRECT_ALIGN - 1);
    uint64_t e = (off + n) & ~(uint64_t)(GBP_DIRECT_ALIGN - 1);
    if (dfd < 0 || e <= a) return gbp_pwrite_all(fd, p, n, off, "data file");
    if (a > off) GBP_FORWARD_IF_ERROR(gbp_pwrite_all(fd, p, a - off, off, "data file"));
    GBP_FORWARD_IF_ERROR(gbp_pwrite_all(dfd, p + (a - off), e - a, a, "data file (O_DIRECT)"));
    if (off + n > e) GBP_FORWARD_IF_ERROR(gbp_pwrite_all(fd, p + (e - off), off + n - e, e, "data file"));
    return GPUBP_OK;
}

/* ---- I/O threads ----------------------------------------------------------------------------- */
typedef struct h2d_ctx {
    gbp_mem *m;
    const uint8_t *src; /* the slot byte that holds the block's byte span_off */
    size_t span_off;
    uint8_t *dst;
} h2d_ctx;

static int h2d_piece(void *vc, const gbp_piece *p)
{
    h2d_ctx *c = vc;
    gbp_copy3d k = {c->src + (p->a_off - c->span_off), c->dst + p->b_off, p->width, p->height,
                    p->depth, p->apitch, p->aslice, p->bpitch, p->bslice, GBP_COPY_H2D};
    return c->m->ops->copy_async(c->m->dctx, &k);
}

typedef struct one_piece {
    int n;
    gbp_piece p; /* the first */
} one_piece;

static int one_piece_fn(void *vc, const gbp_piece *p)
{
    one_piece *c = vc;
    if (c->n++ == 0) c->p = *p;
    return 0;
}

/* A failure kept across a clean-up call that may fail too (and overwrite this thread's error
 * record): err_restore returns the first failure with its message, else the clean-up's status. */
typedef struct saved_err {
    int rc, native;
    char msg[512];
} saved_err;

static void err_save(saved_err *e, int rc)
{
    e->rc = rc;
    e->native = rc < 0 ? gbp_error_native() : 0;
    snprintf(e->msg, sizeof e->msg, "%s", rc < 0 ? gbp_error_message() : "");
}

static int err_restore(const saved_err *e, int rc2)
{
    return e->rc < 0 ? gbp_error(e->rc, e->native, "%s", e->msg) : rc2;
}

/* Failure rc came after copies into or out of a slot were queued that no recorded event covers
 * (a copy queued, then its event refused; a strided copy queued in part): waits for the whole
 * stream, so that the slot can be freed, and returns rc with its message. */
static int drain_after(gbp_mem *m, int rc)
{
    saved_err e;
    err_save(&e, rc);
    (void)m->ops->sync(m->dctx);
    return err_restore(&e, rc);
}

/* The simulated device's hazard check (devops.h check_idle), nothing elsewhere. */
static int slot_idle(gbp_mem *m, const void *p, size_t n, int reads)
{
    return m->ops->check_idle ? m->ops->check_idle(m->dctx, p, n, reads) : GPUBP_OK;
}

/* A device read: the chunk's file span pread into the slot (or produced by j->fill) and copied
 * to the device. The slot may still feed the host-to-device copies of the read before it
 * (j->wait_ev): they are waited for before their bytes are overwritten, piece by piece when
 * both reads go in pieces, so that a reused slot does not wait for the last copy of the read
 * before. A contiguous run on both sides goes in pieces, each copied as soon as it is in the
 * slot, so that the copies of a step's last chunks do not queue behind its last reads. The
 * slot's event is recorded after the copies queued, also on a failure: it always covers every
 * copy out of the slot. */
static int read_dev_job(gbp_mem *m, job *j)
{
    slot *s = &m->slots[j->slot];
    size_t shift = m->params.direct_io && !j->fill ? (size_t)(j->off % GBP_DIRECT_ALIGN) : 0;
    int prev_np = j->wait_ev ? s->read_np : 0;
    s->read_np = 0;
    if (io_fail_now())
        return gbp_error(GPUBP_ERR_IO, EIO, "read of data file at offset %llu failed: %s "
                         "(injected)", (unsigned long long)j->off, strerror(EIO));
    one_piece op = {0, {0}};
    int pieces = !j->fill && !m->params.direct_io && j->len > m->piece && m->npev > 1 &&
                 gbp_box_walk3d(&j->fa, &j->da, j->elsize, one_piece_fn, &op) == GPUBP_OK &&
                 op.n == 1 && op.p.height == 1 && op.p.depth == 1 && op.p.width == j->len;
    gbp_error_clear();
    int rc = GPUBP_OK, queued = 0;
    if (pieces) {
        if (j->wait_ev && prev_np == 0) rc = m->ops->event_wait(m->dctx, s->ev);
        int i = 0;
        for (size_t o = 0; rc == GPUBP_OK && o < j->len; o += m->piece, i++) {
            size_t n = j->len - o < m->piece ? j->len - o : m->piece;
            /* after pev[prev_np - 1], every older copy out of the slot has completed */
            if (i < prev_np) rc = m->ops->event_wait(m->dctx, s->pev[i]);
            if (rc == GPUBP_OK) rc = slot_idle(m, s->buf + o, n, 1);
            if (rc == GPUBP_OK) rc = gbp_pread_all(j->fd, s->buf + o, n, j->off + o, "data file");
            gbp_copy3d k = {s->buf + o, (uint8_t *)j->dst + op.p.b_off + o, n, 1, 1, 0, 0, 0, 0,
                            GBP_COPY_H2D};
            if (rc == GPUBP_OK) {
                queued = 1;
                rc = m->ops->copy_async(m->dctx, &k);
            }
            if (rc == GPUBP_OK) rc = m->ops->event_record(m->dctx, s->pev[i]);
            /* a copy without its piece's event: the next read waits for ev (recorded below) */
            s->read_np = rc == GPUBP_OK ? i + 1 : 0;
        }
    } else {
        int done = 0;
        if (j->wait_ev) rc = m->ops->event_wait(m->dctx, s->ev);
        if (rc == GPUBP_OK) rc = slot_idle(m, s->buf, m->slot_alloc, 1);
        if (rc == GPUBP_OK && j->fill) {
            rc = j->fill(j->fill_ctx, s->buf, j->span_off, j->len);
            done = 1;
        } else if (rc == GPUBP_OK && m->params.direct_io) {
            pthread_mutex_lock(&m->lock);
            int dfd = direct_fd_locked(m, j->fd, 1);
            pthread_mutex_unlock(&m->lock);
            if (dfd >= 0) {
                uint64_t a = j->off - shift;
                size_t n = (shift + j->len + GBP_DIRECT_ALIGN - 1) & ~(GBP_DIRECT_ALIGN - 1);
                size_t got = 0;
                int r = gbp_pread_some(dfd, s->buf, n, a, &got, "data file (O_DIRECT)");
                if (r == GPUBP_OK && got >= shift + j->len) done = 1;
                gbp_error_clear(); /* on any trouble, read it again through the page cache */
            }
        }
        if (rc == GPUBP_OK && !done)
            rc = gbp_pread_all(j->fd, s->buf + shift, j->len, j->off, "data file");
        h2d_ctx c = {m, s->buf + shift, j->span_off, j->dst};
        if (rc == GPUBP_OK) {
            queued = 1;
            rc = gbp_box_walk3d(&j->fa, &j->da, j->elsize, h2d_piece, &c);
        }
    }
    if (!queued) return rc;
    saved_err e;
    err_save(&e, rc);
    int rc2 = m->ops->event_record(m->dctx, s->ev);
    if (rc2 != GPUBP_OK) { /* nothing covers the copies: none may be left running */
        s->read_np = 0;
        rc2 = drain_after(m, rc2);
    }
    return err_restore(&e, rc2);
}

static int run_job(gbp_mem *m, job *j)
{
    if (j->kind == JOB_HOST_WRITE || j->kind == JOB_HOST_READ) {
        if (job_failed(m, j)) return GPUBP_OK;
        if (io_fail_now())
            return gbp_error(GPUBP_ERR_IO, EIO, "%s data file at offset %llu failed: %s (injected)",
                             j->kind == JOB_HOST_WRITE ? "write to" : "read of",
                             (unsigned long long)j->off, strerror(EIO));
        if (j->kind == JOB_HOST_WRITE) return gbp_pwrite_all(j->fd, j->src, j->len, j->off, "data file");
        return gbp_pread_all(j->fd, j->dst, j->len, j->off, "data file");
    }
    if (job_failed(m, j)) return GPUBP_OK;
    return read_dev_job(m, j);
}

typedef struct io_arg {
    gbp_mem *m;
    int idx;
} io_arg;

static int is_write(const job *j) { return j->kind == JOB_DEV_WRITE || j->kind == JOB_HOST_WRITE; }

/* A free slot, taken (busy), or -1; one whose host-to-device copies are known complete first.
 * *pending: copies out of it may still run. A device-to-host copy into it is queued after them
 * on the same in-order stream (nothing to wait for); a pread into it must wait its event. */
static int grab_slot_locked(gbp_mem *m, int *pending)
{
    int k = -1;
    for (int i = 0; i < m->nslots; i++) {
        if (m->slots[i].busy) continue;
        if (k < 0 || !m->slots[i].ev_pending) k = i;
        if (!m->slots[i].ev_pending) break;
    }
    if (k < 0) return -1;
    *pending = m->slots[k].ev_pending;
    m->slots[k].busy = 1;
    m->slots[k].ev_pending = 0;
    return k;
}

static int is_dev(const job *j) { return j->kind == JOB_DEV_WRITE || j->kind == JOB_DEV_READ; }

static int free_slots_locked(const gbp_mem *m)
{
    int n = 0;
    for (int i = 0; i < m->nslots; i++) n += !m->slots[i].busy;
    return n;
}

/* Position in the queue of the first job this thread may take, or -1. A write to a file that
 * another thread is writing waits: the kernel serialises writes to one file anyway, and taking
 * another file's job keeps several files (subfiles) busy at once. A device write also needs a
 * free slot (device reads too). A commit waits until every job of its epoch is done.
 * Caller holds m->lock. */
static int pick_job_locked(gbp_mem *m, int me)
{
    for (int k = 0; k < m->q_len; k++) {
        const job *j = &m->queue[(m->q_head + k) % m->qcap];
        if (j->kind == JOB_COMMIT) {
            if (m->open_jobs[j->epoch & 1] == 0) return k; /* every job of its epoch is done */
            continue;
        }
        int busy = 0;
        for (int t = 0; is_write(j) && t < m->nthreads && !busy; t++)
            busy = t != me && m->wfd[t] == j->fd;
        if (busy) continue;
        if (is_dev(j) && free_slots_locked(m) == 0) continue;
        return k;
    }
    return -1;
}

/* Position of a thread's next chunk of file fd, the first queued device write of fd, when it can
 * start now, or -1. With a slot of its own (share 0) it needs a free slot. Sharing (share 1), it
 * takes the current chunk's slot, which only a chunk copied in pieces can: its first piece lands
 * in the slot's first piece, written long before the current chunk ends. Caller holds m->lock. */
static int pick_next_locked(gbp_mem *m, int fd, int share)
{
    for (int k = 0; k < m->q_len; k++) {
        const job *j = &m->queue[(m->q_head + k) % m->qcap];
        if (j->kind != JOB_DEV_WRITE || j->fd != fd) continue;
        if (share) return j->np > 1 ? k : -1;
        return free_slots_locked(m) > 0 ? k : -1;
    }
    return -1;
}

/* Takes the job at position k out of the queue, keeping the order of the others. */
static job take_job_locked(gbp_mem *m, int k)
{
    job j = m->queue[(m->q_head + k) % m->qcap];
    for (int i = k; i > 0; i--) /* close the gap */
        m->queue[(m->q_head + i) % m->qcap] = m->queue[(m->q_head + i - 1) % m->qcap];
    m->q_head = (m->q_head + 1) % m->qcap;
    m->q_len--;
    if (is_dev(&j) && j.slot < 0) {
        int pending = 0;
        j.slot = grab_slot_locked(m, &pending);
        j.wait_ev = j.kind == JOB_DEV_READ && pending;
        j.slot_pending = pending;
    }
    return j;
}

static int fill_slot(gbp_mem *m, int s, size_t shift, const void *base, size_t elsize,
                     const gbp_chunk *c);

/* A write's data has left the caller's buffer (its copies into a slot are all queued, or it
 * failed, or it was written): gbp_mem_wait_staged counts it out. Caller holds m->lock. */
static void staged_locked(gbp_mem *m, job *j)
{
    if (!is_write(j) || j->staged) return;
    j->staged = 1;
    if (--m->unstaged == 0) pthread_cond_broadcast(&m->cv);
}

/* staged_locked once every copy of device write j is queued */
static void staged_if_queued(gbp_mem *m, job *j)
{
    if (j->queued < j->np) return;
    pthread_mutex_lock(&m->lock);
    staged_locked(m, j);
    pthread_mutex_unlock(&m->lock);
}

/* The event that completes piece i of device write j (the slot's event for a chunk copied in
 * one go). */
static void *piece_ev(const gbp_mem *m, const job *j, int i)
{
    const slot *s = &m->slots[j->slot];
    return j->np == 1 ? s->ev : s->pev[i];
}

/* Queues the copy of piece i of device write j into its slot, and the piece's event. A copy
 * queued counts in j->queued even when its event is refused (then the stream is drained). */
static int queue_piece(gbp_mem *m, job *j, int i)
{
    size_t o = (size_t)i * m->piece;
    size_t n = j->len - o < m->piece ? j->len - o : m->piece;
    gbp_copy3d k = {j->csrc + o, m->slots[j->slot].buf + o, n, 1, 1, 0, 0, 0, 0, GBP_COPY_D2H};
    GBP_FORWARD_IF_ERROR(m->ops->copy_async(m->dctx, &k));
    j->queued = i + 1;
    int rc = m->ops->event_record(m->dctx, m->slots[j->slot].pev[i]);
    return rc == GPUBP_OK ? rc : drain_after(m, rc);
}

/* A device write taken by an I/O thread: the copy of its first piece (or of the whole chunk)
 * into the slot, queued once. */
static int fill_job(gbp_mem *m, job *j)
{
    if (j->kind != JOB_DEV_WRITE || j->filled) return GPUBP_OK;
    j->filled = 1;
    if (job_failed(m, j)) return GPUBP_OK; /* its step failed: nothing to copy (queued 0) */
    int rc;
    if (j->np > 1) {
        rc = queue_piece(m, j, 0);
    } else {
        size_t shift = m->params.direct_io ? (size_t)(j->off % GBP_DIRECT_ALIGN) : 0;
        rc = fill_slot(m, j->slot, shift, j->base, j->elsize, &j->ch);
        if (rc == GPUBP_OK) j->queued = 1;
        else rc = drain_after(m, rc); /* a strided chunk may be queued in part */
    }
    staged_if_queued(m, j);
    return rc;
}

/* Writes device write j's slot: piece i once its copy landed, the copy of piece i+1 (after the
 * last: of the thread's next chunk, `next`, whose failure goes to *rc_next) queued just before,
 * so that each thread has one copy in flight and the threads' copies interleave on the stream
 * (the first bytes of every file are in the pool soon after a step starts). Every copy queued
 * into the slot has landed when this returns. */
static int write_dev_job(gbp_mem *m, job *j, job *next, int *rc_next)
{
    slot *s = &m->slots[j->slot];
    int rc = GPUBP_OK, waited = 0;
    if (j->queued == 0) return GPUBP_OK; /* its copy could not be queued: failed (kept) */
    for (int i = 0; i < j->np; i++) {
        rc = m->ops->event_wait(m->dctx, piece_ev(m, j, i));
        waited = i + 1;
        if (rc != GPUBP_OK) break;
        if (job_failed(m, j)) break; /* a failure of its step: copy and write nothing more */
        if (i == 0 && io_fail_now()) {
            rc = gbp_error(GPUBP_ERR_IO, EIO, "write to data file at offset %llu failed: %s "
                           "(injected)", (unsigned long long)j->off, strerror(EIO));
            break;
        }
        if (i + 1 < j->np) {
            rc = queue_piece(m, j, i + 1);
            if (rc != GPUBP_OK) break;
            staged_if_queued(m, j);
        } else if (next) {
            *rc_next = fill_job(m, next);
        }
        size_t o = (size_t)i * m->piece;
        size_t n = j->np == 1 ? m->slot_alloc : j->len - o < m->piece ? j->len - o : m->piece;
        rc = slot_idle(m, s->buf + (j->np == 1 ? 0 : o), n, 0); /* no copy lands in what is written */
        if (rc != GPUBP_OK) break;
        if (j->np > 1) {
            rc = gbp_pwrite_all(j->fd, s->buf + o, n, j->off + o, "data file");
        } else if (m->params.direct_io) {
            pthread_mutex_lock(&m->lock);
            int dfd = direct_fd_locked(m, j->fd, 0);
            pthread_mutex_unlock(&m->lock);
            rc = pwrite_direct(dfd, j->fd, s->buf + j->off % GBP_DIRECT_ALIGN, j->len, j->off);
        } else {
            rc = gbp_pwrite_all(j->fd, s->buf, j->len, j->off, "data file");
        }
        if (rc != GPUBP_OK) break;
    }
    if (j->queued > waited) { /* the slot is freed after: no copy into it may still run */
        saved_err e;
        err_save(&e, rc);
        return err_restore(&e, m->ops->event_wait(m->dctx, piece_ev(m, j, j->queued - 1)));
    }
    return rc;
}

/* A commit whose epoch's jobs are all done: runs it unless one of them failed. */
static void run_commit(gbp_mem *m, job *j)
{
    pthread_mutex_lock(&m->lock);
    int failed = m->ep_failed[j->epoch & 1];
    pthread_mutex_unlock(&m->lock);
    int rc = failed ? kept_error(m) : j->commit(j->commit_ctx);
    if (failed && rc == GPUBP_OK)
        rc = gbp_error(GPUBP_ERR_IO, 0, "a transfer of the step failed");
    pthread_mutex_lock(&m->lock);
    m->commit_rc = rc < 0 ? rc : GPUBP_OK;
    m->commit_native = rc < 0 ? gbp_error_native() : 0;
    snprintf(m->commit_msg, sizeof m->commit_msg, "%s", rc < 0 ? gbp_error_message() : "");
    m->commit_pending = 0;
    m->inflight--;
    pthread_cond_broadcast(&m->cv);
    pthread_mutex_unlock(&m->lock);
    if (j->commit_free) j->commit_free(j->commit_ctx);
}

static void *io_main(void *arg)
{
    gbp_mem *m = ((io_arg *)arg)->m;
    int me = ((io_arg *)arg)->idx;
    int bound = 0; /* this thread was made ready for the device context */
    job j, next;
    int have_next = 0;
    pthread_mutex_lock(&m->lock);
    for (;;) {
        if (have_next) { /* the next chunk of this thread's file, already being copied */
            j = next;
            have_next = 0;
        } else {
            int k;
            while ((k = pick_job_locked(m, me)) < 0 && !(m->stop && !m->q_len))
                pthread_cond_wait(&m->cv, &m->lock);
            if (k < 0) break; /* stopping, and the queue is empty */
            j = take_job_locked(m, k);
            if (j.kind == JOB_COMMIT) {
                pthread_cond_broadcast(&m->cv); /* room in the queue */
                pthread_mutex_unlock(&m->lock);
                run_commit(m, &j);
                pthread_mutex_lock(&m->lock);
                continue;
            }
        }
        /* device writes: the copy of this thread's next chunk of the same file runs while this
         * one is written (two slots per thread at most). With one slot per thread (the default
         * pool of 4 slots with 4 subfiles) a chunk copied in pieces hands its slot on to the
         * file's next chunk in pieces, whose first piece is copied into the slot's first piece
         * while this chunk's last piece is written. */
        if (j.kind == JOB_DEV_WRITE) {
            int k2 = -1;
            if (free_slots_locked(m) >= 2 || m->nslots >= 2 * m->nthreads)
                k2 = pick_next_locked(m, j.fd, 0);
            if (k2 < 0 && j.np > 1 && (k2 = pick_next_locked(m, j.fd, 1)) >= 0)
                m->queue[(m->q_head + k2) % m->qcap].slot = j.slot; /* no slot taken */
            if (k2 >= 0) {
                next = take_job_locked(m, k2);
                have_next = 1;
            }
        }
        int pass_slot = have_next && next.slot == j.slot; /* the slot stays taken, by next */
        if (is_write(&j)) m->wfd[me] = j.fd;
        pthread_cond_broadcast(&m->cv); /* room in the queue */
        pthread_mutex_unlock(&m->lock);

        int host = j.kind == JOB_HOST_WRITE || j.kind == JOB_HOST_READ;
        int rc = GPUBP_OK;
        if (!host && !bound) {
            rc = m->ops->bind_thread(m->dctx);
            bound = rc == GPUBP_OK;
        }
        double t0 = m->stats ? mono_s() : 0;
        int rc2 = GPUBP_OK;
        if (rc == GPUBP_OK) rc = fill_job(m, &j);
        /* device writes: the copy of the next piece, or of the next chunk, is queued once the
         * current one landed (write_dev_job) */
        if (rc == GPUBP_OK)
            rc = j.kind == JOB_DEV_WRITE ? write_dev_job(m, &j, have_next ? &next : NULL, &rc2)
                                         : run_job(m, &j);
        double dt = m->stats ? mono_s() - t0 : 0;
        if (j.kind == JOB_DEV_WRITE && m->ops->check_idle && !pass_slot) { /* no copy left */
            saved_err e;
            err_save(&e, rc);
            rc = err_restore(&e, slot_idle(m, m->slots[j.slot].buf, m->slot_alloc, 0));
        }

        pthread_mutex_lock(&m->lock);
        m->t_io += dt;
        m->njobs++;
        keep_error_ep_locked(m, rc, j.epoch);
        if (have_next) keep_error_ep_locked(m, rc2, next.epoch);
        staged_locked(m, &j);
        m->open_jobs[j.epoch & 1]--;
        if (!have_next) m->wfd[me] = -1;
        /* copies out of the slot may still run after a read, and after a write that queued
         * nothing into it and found them there: the slot keeps that state, also when handed on */
        int pending = j.is_read || (j.queued == 0 && j.slot_pending);
        if (pass_slot) {
            next.slot_pending = pending;
        } else if (!host) {
            m->slots[j.slot].busy = 0;
            if (pending) m->slots[j.slot].ev_pending = 1;
        }
        m->inflight--;
        pthread_cond_broadcast(&m->cv);
    }
    pthread_mutex_unlock(&m->lock);
    return NULL;
}

/* The I/O threads and their queue, once per file at the first transfer that uses them. */
static int threads_open(gbp_mem *m)
{
    if (m->threads_started) return GPUBP_OK;
    int slots = m->params.pool_slots > 0 ? m->params.pool_slots : 4;
    m->nthreads = gbp_params_io_threads(&m->params);
    m->qcap = slots + GBP_HOST_JOBS;
    if (!m->queue) m->queue = gbp_calloc((size_t)m->qcap, sizeof *m->queue);
    if (!m->threads) m->threads = gbp_calloc((size_t)m->nthreads, sizeof *m->threads);
    if (!m->wfd) m->wfd = gbp_calloc((size_t)m->nthreads, sizeof *m->wfd);
    if (!m->args) m->args = gbp_calloc((size_t)m->nthreads, sizeof *m->args);
    if (!m->queue || !m->threads || !m->wfd || !m->args)
        return gbp_error(GPUBP_ERR_NOMEM, 0, "out of memory (I/O threads)");
    for (int i = 0; i < m->nthreads; i++) {
        m->wfd[i] = -1;
        m->args[i] = (io_arg){m, i};
    }
    for (int i = m->threads_started; i < m->nthreads; i++) {
        int e = pthread_create(&m->threads[i], NULL, io_main, &m->args[i]);
        if (e) return gbp_error(GPUBP_ERR_IO, e, "cannot start an I/O thread: %s", strerror(e));
        m->threads_started++;
    }
    return GPUBP_OK;
}

static int pool_alloc(gbp_mem *m);

/* The pinned pool and its events, once per file at the first device transfer. */
static int pool_open(gbp_mem *m)
{
    if (m->pool_ready) return GPUBP_OK;
    if (!dev_open(m)) return device_unsupported(m);
    double t0 = mono_s();
    int rc = pool_alloc(m);
    m->t_pool += mono_s() - t0;
    return rc;
}

static int pool_alloc(gbp_mem *m)
{
    GBP_FORWARD_IF_ERROR(threads_open(m));
    int nslots = m->params.pool_slots > 0 ? m->params.pool_slots : 4;
    m->slot_bytes = m->params.chunk_bytes ? m->params.chunk_bytes : (size_t)16 << 20;
    m->slot_alloc = m->slot_bytes + (m->params.direct_io ? 2 * GBP_DIRECT_ALIGN : 0);
    /* the slot table first, its count after: nothing may walk a table that does not exist */
    if (!m->slots) m->slots = gbp_calloc((size_t)nslots, sizeof *m->slots);
    if (!m->slots) return gbp_error(GPUBP_ERR_NOMEM, 0, "out of memory (staging pool)");
    m->nslots = nslots;
    m->piece = m->params.piece_bytes ? m->params.piece_bytes : (size_t)4 << 20;
    if (m->piece > m->slot_bytes) m->piece = m->slot_bytes;
    m->npev = (int)((m->slot_bytes + m->piece - 1) / m->piece);
    for (int i = 0; i < m->nslots; i++) {
        slot *s = &m->slots[i];
        if (!s->buf) GBP_FORWARD_IF_ERROR(slot_alloc(m, &s->buf));
        if (!s->ev) GBP_FORWARD_IF_ERROR(m->ops->event_create(m->dctx, &s->ev));
        if (m->npev > 1 && !s->pev && !(s->pev = gbp_calloc((size_t)m->npev, sizeof *s->pev)))
            return gbp_error(GPUBP_ERR_NOMEM, 0, "out of memory (staging pool)");
        for (int k = 0; m->npev > 1 && k < m->npev; k++)
            if (!s->pev[k]) GBP_FORWARD_IF_ERROR(m->ops->event_create(m->dctx, &s->pev[k]));
    }
    if (!m->misc_ev) GBP_FORWARD_IF_ERROR(m->ops->event_create(m->dctx, &m->misc_ev));
    m->pool_ready = 1;
    return GPUBP_OK;
}

/* Takes slot next mod N, waiting until it is free and copies out of it have completed. */
static int slot_acquire(gbp_mem *m, int *out)
{
    pthread_mutex_lock(&m->lock);
    int i = m->next_slot;
    double t0 = m->stats && m->slots[i].busy ? mono_s() : 0;
    while (m->slots[i].busy) pthread_cond_wait(&m->cv, &m->lock);
    if (t0 > 0) m->t_slot += mono_s() - t0;
    m->next_slot = (i + 1) % m->nslots;
    int pending = m->slots[i].ev_pending;
    m->slots[i].ev_pending = 0;
    m->slots[i].busy = 1;
    pthread_mutex_unlock(&m->lock);
    if (pending) {
        int rc = m->ops->event_wait(m->dctx, m->slots[i].ev);
        if (rc < 0) {
            keep_error(m, rc);
            pthread_mutex_lock(&m->lock);
            m->slots[i].busy = 0;
            pthread_mutex_unlock(&m->lock);
            return rc;
        }
    }
    *out = i;
    return GPUBP_OK;
}

static void slot_release(gbp_mem *m, int i)
{
    pthread_mutex_lock(&m->lock);
    m->slots[i].busy = 0;
    pthread_cond_broadcast(&m->cv);
    pthread_mutex_unlock(&m->lock);
}

/* Doubles the queue (ring) when full; 0 when out of memory (the caller waits for room). */
static int grow_queue_locked(gbp_mem *m)
{
    job *q = gbp_malloc((size_t)m->qcap * 2 * sizeof *q);
    if (!q) return 0;
    for (int i = 0; i < m->q_len; i++) q[i] = m->queue[(m->q_head + i) % m->qcap];
    gbp_free(m->queue);
    m->queue = q;
    m->q_head = 0;
    m->qcap *= 2;
    return 1;
}

static void submit(gbp_mem *m, const job *j)
{
    pthread_mutex_lock(&m->lock);
    /* device transfers and commits are queued in full (descriptors, no data); host pieces wait
     * for room */
    while (m->q_len == m->qcap && !((is_dev(j) || j->kind == JOB_COMMIT) && grow_queue_locked(m)))
        pthread_cond_wait(&m->cv, &m->lock);
    job *q = &m->queue[(m->q_head + m->q_len) % m->qcap];
    *q = *j;
    q->epoch = m->epoch;
    if (j->kind != JOB_COMMIT) m->open_jobs[m->epoch & 1]++;
    if (is_write(j)) m->unstaged++;
    m->q_len++;
    m->inflight++;
    pthread_cond_broadcast(&m->cv);
    pthread_mutex_unlock(&m->lock);
}

/* ---- device min/max -------------------------------------------------------------------------- */
static int mm_entry(gbp_mem *m, uint8_t **entry)
{
    size_t page = m->mm_used / GBP_MM_PAGE_ENTRIES, at = m->mm_used % GBP_MM_PAGE_ENTRIES;
    mm_page **pp = &m->pages;
    for (size_t i = 0; i < page && *pp; i++) pp = &(*pp)->next;
    if (!*pp) {
        mm_page *p = gbp_calloc(1, sizeof *p);
        if (!p) return gbp_error(GPUBP_ERR_NOMEM, 0, "out of memory (min/max results)");
        int rc = m->ops->host_alloc(m->dctx, (void **)&p->mem, GBP_MM_PAGE_ENTRIES * GBP_MM_ENTRY);
        if (rc) {
            gbp_free(p);
            return rc;
        }
        *pp = p;
    }
    *entry = (*pp)->mem + at * GBP_MM_ENTRY;
    m->mm_used++;
    return GPUBP_OK;
}

typedef struct mm_ctx {
    gbp_mem *m;
    int type;
    const uint8_t *base;
} mm_ctx;

static int mm_piece(void *vc, const gbp_piece *p)
{
    mm_ctx *c = vc;
    return c->m->ops->minmax_region(c->m->dctx, c->type, c->base + p->a_off, p->width, p->height,
                                    p->depth, p->apitch, p->aslice);
}

static int device_minmax(gbp_mem *m, const void *base, int type, const gbp_box *src, void *min,
                         void *max)
{
    if (m->npend == m->cap_pend) {
        size_t cap = m->cap_pend ? m->cap_pend * 2 : 64;
        mm_pending *p = gbp_realloc(m->pend, cap * sizeof *p);
        if (!p) return gbp_error(GPUBP_ERR_NOMEM, 0, "out of memory (min/max results)");
        m->pend = p;
        m->cap_pend = cap;
    }
    uint8_t *entry = NULL;
    GBP_FORWARD_IF_ERROR(mm_entry(m, &entry));
    GBP_FORWARD_IF_ERROR(m->ops->minmax_begin(m->dctx, type));
    mm_ctx c = {m, type, base};
    GBP_FORWARD_IF_ERROR(gbp_box_walk3d(src, src, gbp_type_size(type), mm_piece, &c));
    GBP_FORWARD_IF_ERROR(m->ops->minmax_end(m->dctx, type, entry));
    m->pend[m->npend++] = (mm_pending){min, max, type, entry};
    return GPUBP_OK;
}

/* ---- writes ---------------------------------------------------------------------------------- */
typedef struct d2h_ctx {
    gbp_mem *m;
    const uint8_t *src;
    uint8_t *dst;
} d2h_ctx;

static int d2h_piece(void *vc, const gbp_piece *p)
{
    d2h_ctx *c = vc;
    gbp_copy3d k = {c->src + p->a_off, c->dst + p->b_off, p->width, p->height, p->depth,
                    p->apitch, p->aslice, p->bpitch, p->bslice, GBP_COPY_D2H};
    return c->m->ops->copy_async(c->m->dctx, &k);
}

/* Queues the device-to-host copy of chunk c of the array at base into slot s (at byte `shift`)
 * and records the slot's event. The slot stays taken, also on a failure. */
static int fill_slot(gbp_mem *m, int s, size_t shift, const void *base, size_t elsize,
                     const gbp_chunk *c)
{
    gbp_box dense;
    gbp_box_dense(&dense, c->a.ndims, c->count);
    d2h_ctx dc = {m, base, m->slots[s].buf + shift};
    int rc = gbp_box_walk3d(&c->a, &dense, elsize, d2h_piece, &dc);
    if (rc == GPUBP_OK) rc = m->ops->event_record(m->dctx, m->slots[s].ev);
    return rc;
}

static int device_write(gbp_mem *m, int fd, uint64_t off, const void *base, int type,
                        const gbp_box *src, void *min, void *max)
{
    GBP_FORWARD_IF_ERROR(pool_open(m));
    size_t elsize = gbp_type_size(type);
    GBP_RETURN_ERROR_IF(elsize == 0, GPUBP_ERR_INVALID_ARG, "gbp_mem_write: bad type %d", type);
    if (m->user_stream) GBP_FORWARD_IF_ERROR(m->ops->fence_user_stream(m->dctx));
    if (min && max && gbp_box_elements(src) > 0)
        GBP_FORWARD_IF_ERROR(device_minmax(m, base, type, src, min, max));
    size_t limit = m->slot_bytes;
    if (limit < elsize) limit = elsize;
    /* the chunks are queued, not copied: an I/O thread that takes one copies it into a free
     * slot, so that every file (subfile) has a thread streaming its chunks whatever the order of
     * the blocks, and the caller never waits for a slot */
    gbp_chunker ch;
    gbp_chunker_init(&ch, src, elsize, limit, 0);
    gbp_chunk c;
    while (gbp_chunker_next(&ch, &c)) {
        if (has_error(m)) return GPUBP_OK; /* reported by gbp_mem_sync */
        job j;
        memset(&j, 0, sizeof j);
        j.kind = JOB_DEV_WRITE;
        j.slot = -1;
        j.fd = fd;
        j.off = off + c.packed_off;
        j.len = c.bytes;
        j.ch = c;
        j.base = base;
        j.elsize = elsize;
        j.np = 1;
        /* contiguous on the device: copied (and written) in pieces */
        gbp_box dense;
        gbp_box_dense(&dense, c.a.ndims, c.count);
        one_piece op = {0, {0}};
        if (!m->params.direct_io && c.bytes > m->piece &&
            gbp_box_walk3d(&c.a, &dense, elsize, one_piece_fn, &op) == GPUBP_OK && op.n == 1 &&
            op.p.height == 1 && op.p.depth == 1 && op.p.width == c.bytes) {
            j.csrc = (const uint8_t *)base + op.p.a_off;
            j.np = (int)((c.bytes + m->piece - 1) / m->piece);
            if (j.np > m->npev) j.np = 1;
        }
        submit(m, &j);
    }
    return GPUBP_OK;
}

static int need_bounce(gbp_mem *m)
{
    if (!m->bounce) {
        m->bounce = gbp_malloc(GBP_BOUNCE_BYTES);
        if (!m->bounce) return gbp_error(GPUBP_ERR_NOMEM, 0, "out of memory (bounce buffer)");
    }
    return GPUBP_OK;
}

typedef struct pack_ctx {
    gbp_mem *m;
    int fd;
    uint64_t off;     /* file offset of the next byte */
    const uint8_t *base;
    size_t fill;      /* bytes in the bounce buffer */
    int type;
    size_t elsize;
    void *min, *max;
    int have;
} pack_ctx;

static int flush_bounce(pack_ctx *c)
{
    if (c->fill == 0) return 0;
    if (c->min) {
        gbp_minmax(c->type, c->m->bounce, c->fill / c->elsize, c->min, c->max, c->have);
        c->have = 1;
    }
    int rc = gbp_pwrite_all(c->fd, c->m->bounce, c->fill, c->off, "data file");
    c->off += c->fill;
    c->fill = 0;
    return rc;
}

static int pack_run(void *ctx, size_t a_off, size_t b_off, size_t bytes)
{
    pack_ctx *c = ctx;
    (void)b_off;
    const uint8_t *src = c->base + a_off;
    while (bytes > 0) {
        size_t room = GBP_BOUNCE_BYTES - c->fill;
        size_t n = bytes < room ? bytes : room;
        memcpy(c->m->bounce + c->fill, src, n);
        c->fill += n;
        src += n;
        bytes -= n;
        if (c->fill == GBP_BOUNCE_BYTES) {
            int rc = flush_bounce(c);
            if (rc) return rc;
        }
    }
    return 0;
}

int gbp_mem_write(gbp_mem *m, gpubp_memory_space sp, int fd, uint64_t off, const void *base,
                  int type, const gbp_box *src, void *min, void *max)
{
    if (sp == GPUBP_MEM_GPU) {
        if (!dev_open(m)) return device_unsupported(m);
        return device_write(m, fd, off, base, type, src, min, max);
    }
    size_t elsize = gbp_type_size(type);
    size_t n = gbp_box_elements(src);
    if (gbp_box_is_contiguous(src) && n * elsize >= GBP_HOST_ASYNC_MIN) {
        /* I/O threads pwrite the pieces straight from the user's buffer while this thread
         * computes min/max: the two overlap (the buffer stays valid until gbp_mem_sync) */
        GBP_FORWARD_IF_ERROR(threads_open(m));
        const uint8_t *p = (const uint8_t *)base + gbp_box_offset(src) * elsize;
        size_t bytes = n * elsize, done = 0;
        int have = 0;
        while (done < bytes) {
            size_t step = bytes - done < GBP_HOST_CHUNK ? bytes - done : GBP_HOST_CHUNK;
            GBP_FORWARD_IF_ERROR(gbp_mem_write_host_async(m, fd, off + done, p + done, step));
            if (min) {
                gbp_minmax(type, p + done, step / elsize, min, max, have);
                have = 1;
            }
            done += step;
        }
        return GPUBP_OK;
    }
    if (gbp_box_is_contiguous(src)) {
        const uint8_t *p = (const uint8_t *)base + gbp_box_offset(src) * elsize;
        size_t bytes = n * elsize, done = 0;
        int have = 0;
        /* minmax of a chunk while it is in cache, then its write */
        while (done < bytes) {
            size_t step = bytes - done < GBP_MINMAX_CHUNK * 8 ? bytes - done : GBP_MINMAX_CHUNK * 8;
            if (min) {
                gbp_minmax(type, p + done, step / elsize, min, max, have);
                have = 1;
            }
            GBP_FORWARD_IF_ERROR(gbp_pwrite_all(fd, p + done, step, off + done, "data file"));
            done += step;
        }
        return GPUBP_OK;
    }
    GBP_FORWARD_IF_ERROR(need_bounce(m));
    pack_ctx c = {m, fd, off, base, 0, type, elsize, min, max, 0};
    int rc = gbp_box_foreach_run(src, NULL, elsize, pack_run, &c);
    if (rc) return rc;
    return flush_bounce(&c);
}

/* ---- staging for a consumer on the host (compression) --------------------------------------- */
/* Device pieces land in pool slots: up to nslots copies are queued ahead of the piece the caller
 * holds, so the copy engine fills the next slots while the caller works on this one. Host
 * pieces are slices of the user's buffer, or packed into the bounce buffer when strided. */
#define GBP_STAGE_MAX 64

struct gbp_stage {
    gbp_mem *m;
    gpubp_memory_space sp;
    const uint8_t *base;
    size_t elsize;
    gbp_chunker ch;
    size_t from, to;       /* packed byte range wanted */
    int more;              /* the chunker may have more */
    int ring[GBP_STAGE_MAX]; /* device: slots with a copy queued, oldest first */
    gbp_chunk rc[GBP_STAGE_MAX];
    int head, n, depth;
    int held;              /* device: the slot the caller holds, or -1 */
};

/* The next chunk of the chunker that overlaps [from, to), or 0. */
static int stage_chunk(gbp_stage *st, gbp_chunk *c)
{
    while (st->more && (st->more = gbp_chunker_next(&st->ch, c)))
        if (c->packed_off < st->to && c->packed_off + c->bytes > st->from) return 1;
    return 0;
}

/* Queues the device-to-host copy of the next chunk into a slot. 1 queued, 0 none left, <0 error. */
static int stage_queue(gbp_stage *st)
{
    gbp_chunk c;
    if (!stage_chunk(st, &c)) return 0;
    gbp_mem *m = st->m;
    int s;
    GBP_FORWARD_IF_ERROR(slot_acquire(m, &s));
    int rc = fill_slot(m, s, 0, st->base, st->elsize, &c);
    if (rc < 0) {
        slot_release(m, s);
        return rc;
    }
    int at = (st->head + st->n) % GBP_STAGE_MAX;
    st->ring[at] = s;
    st->rc[at] = c;
    st->n++;
    return 1;
}

int gbp_mem_stage_open(gbp_mem *m, gbp_stage **out, gpubp_memory_space sp, const void *base,
                       size_t elsize, const gbp_box *box, size_t from, size_t to)
{
    *out = NULL;
    GBP_RETURN_ERROR_IF(elsize == 0, GPUBP_ERR_INVALID_ARG, "gbp_mem_stage_open: element size 0");
    size_t limit = GBP_HOST_CHUNK * 2; /* host: 16 MiB slices, as a slot */
    if (sp == GPUBP_MEM_GPU) {
        if (!dev_open(m)) return device_unsupported(m);
        GBP_FORWARD_IF_ERROR(pool_open(m));
        /* queued device writes take their slots when an I/O thread gets to them: let them
         * finish before the stage holds every slot (and before its caller waits for them) */
        GBP_FORWARD_IF_ERROR(gbp_mem_wait_writes(m));
        if (m->user_stream) GBP_FORWARD_IF_ERROR(m->ops->fence_user_stream(m->dctx));
        limit = m->slot_bytes;
    } else if (!gbp_box_is_contiguous(box)) {
        GBP_FORWARD_IF_ERROR(need_bounce(m));
        limit = GBP_BOUNCE_BYTES;
    }
    if (limit < elsize) limit = elsize;
    gbp_stage *st = gbp_calloc(1, sizeof *st);
    if (!st) return gbp_error(GPUBP_ERR_NOMEM, 0, "out of memory (staging)");
    st->m = m;
    st->sp = sp;
    st->base = base;
    st->elsize = elsize;
    st->from = from;
    st->to = to;
    st->more = 1;
    st->held = -1;
    st->depth = m->nslots < GBP_STAGE_MAX ? m->nslots : GBP_STAGE_MAX;
    gbp_chunker_init(&st->ch, box, elsize, limit, 0);
    *out = st;
    return GPUBP_OK;
}

typedef struct pack2_ctx {
    const uint8_t *base;
    uint8_t *dst;
    size_t at;
} pack2_ctx;

static int pack2_run(void *ctx, size_t a_off, size_t b_off, size_t bytes)
{
    pack2_ctx *c = ctx;
    (void)b_off;
    memcpy(c->dst + c->at, c->base + a_off, bytes);
    c->at += bytes;
    return 0;
}

int gbp_mem_stage_next(gbp_stage *st, const uint8_t **p, size_t *off, size_t *len)
{
    gbp_mem *m = st->m;
    if (st->sp != GPUBP_MEM_GPU) {
        gbp_chunk c;
        if (!stage_chunk(st, &c)) return 0;
        *off = c.packed_off;
        *len = c.bytes;
        if (gbp_box_is_contiguous(&st->ch.box)) {
            *p = st->base + (gbp_box_offset(&st->ch.box) * st->elsize + c.packed_off);
        } else {
            pack2_ctx pc = {st->base, m->bounce, 0};
            GBP_FORWARD_IF_ERROR(gbp_box_foreach_run(&c.a, NULL, st->elsize, pack2_run, &pc));
            *p = m->bounce;
        }
        return 1;
    }
    if (st->held >= 0) {
        slot_release(m, st->held);
        st->held = -1;
    }
    while (st->n < st->depth) { /* keep the copy engine busy ahead of the caller */
        int rc = stage_queue(st);
        if (rc < 0) return keep_error(m, rc);
        if (rc == 0) break;
    }
    if (st->n == 0) return 0;
    int s = st->ring[st->head];
    gbp_chunk c = st->rc[st->head];
    st->head = (st->head + 1) % GBP_STAGE_MAX;
    st->n--;
    st->held = s;
    int rc = m->ops->event_wait(m->dctx, m->slots[s].ev);
    if (rc < 0) return keep_error(m, rc);
    *p = m->slots[s].buf;
    *off = c.packed_off;
    *len = c.bytes;
    return 1;
}

void gbp_mem_stage_close(gbp_stage *st)
{
    if (!st) return;
    gbp_mem *m = st->m;
    if (st->sp == GPUBP_MEM_GPU) {
        /* copies still queued into slots must complete before the slots are reused */
        while (st->n > 0) {
            int s = st->ring[st->head];
            (void)m->ops->event_wait(m->dctx, m->slots[s].ev);
            gbp_error_clear();
            slot_release(m, s);
            st->head = (st->head + 1) % GBP_STAGE_MAX;
            st->n--;
        }
        if (st->held >= 0) slot_release(m, st->held);
    }
    gbp_free(st);
}

int gbp_mem_write_host_async(gbp_mem *m, int fd, uint64_t off, const void *p, size_t n)
{
    if (n == 0) return GPUBP_OK;
    GBP_FORWARD_IF_ERROR(threads_open(m));
    if (has_error(m)) return GPUBP_OK; /* reported by gbp_mem_sync */
    job j;
    memset(&j, 0, sizeof j);
    j.kind = JOB_HOST_WRITE;
    j.fd = fd;
    j.off = off;
    j.len = n;
    j.src = p;
    submit(m, &j);
    return GPUBP_OK;
}

int gbp_mem_wait_writes(gbp_mem *m)
{
    if (!m->threads_started) return GPUBP_OK;
    pthread_mutex_lock(&m->lock);
    while (m->inflight > 0) pthread_cond_wait(&m->cv, &m->lock);
    pthread_mutex_unlock(&m->lock);
    return kept_error(m);
}

typedef struct scatter_ctx {
    const uint8_t *src;
    uint8_t *dst;
    size_t sub; /* subtracted from the offsets in src: src holds the array from that byte on */
} scatter_ctx;

static int scatter_run(void *ctx, size_t a_off, size_t b_off, size_t bytes)
{
    scatter_ctx *c = ctx;
    memcpy(c->dst + b_off, c->src + (a_off - c->sub), bytes);
    return 0;
}

/* ---- reads ----------------------------------------------------------------------------------- */
static int device_read(gbp_mem *m, int fd, uint64_t off, size_t elsize, const gbp_box *fbox,
                       void *dst, const gbp_box *dbox, gbp_fill_fn fill, void *fill_ctx)
{
    GBP_FORWARD_IF_ERROR(pool_open(m));
    GBP_RETURN_ERROR_IF(elsize == 0, GPUBP_ERR_INVALID_ARG, "gbp_mem_read: element size 0");
    if (m->user_stream) GBP_FORWARD_IF_ERROR(m->ops->fence_user_stream(m->dctx));
    /* direct I/O reads whole pages around the span: keep room for the alignment on both ends */
    size_t limit = m->slot_bytes;
    if (limit < elsize) limit = elsize;
    gbp_chunker ch;
    gbp_chunker_init(&ch, fbox, elsize, limit, 1);
    gbp_chunk c;
    while (gbp_chunker_next(&ch, &c)) {
        if (has_error(m)) return GPUBP_OK;
        /* queued, not read: an I/O thread that takes the chunk takes any free slot for it */
        job j;
        memset(&j, 0, sizeof j);
        j.kind = JOB_DEV_READ;
        j.is_read = 1;
        j.slot = -1;
        j.fd = fd;
        j.off = off + c.span_off;
        j.len = c.span;
        j.fa = c.a;
        gbp_box_sub(&j.da, dbox, c.rel, c.count);
        j.span_off = c.span_off;
        j.elsize = elsize;
        j.dst = dst;
        j.fill = fill;
        j.fill_ctx = fill_ctx;
        submit(m, &j);
    }
    return GPUBP_OK;
}

typedef struct read_ctx {
    gbp_mem *m;
    int fd;
    uint64_t off;
    uint8_t *dst;
} read_ctx;

/* Large runs are read by the I/O threads in parallel pieces; small ones here. */
static int read_run(void *ctx, size_t a_off, size_t b_off, size_t bytes)
{
    read_ctx *c = ctx;
    if (bytes < GBP_HOST_ASYNC_MIN)
        return gbp_pread_all(c->fd, c->dst + b_off, bytes, c->off + a_off, "data file");
    GBP_FORWARD_IF_ERROR(threads_open(c->m));
    for (size_t done = 0; done < bytes; done += GBP_HOST_CHUNK) {
        if (has_error(c->m)) return GPUBP_OK;
        job j;
        memset(&j, 0, sizeof j);
        j.kind = JOB_HOST_READ;
        j.fd = c->fd;
        j.off = c->off + a_off + done;
        j.len = bytes - done < GBP_HOST_CHUNK ? bytes - done : GBP_HOST_CHUNK;
        j.dst = c->dst + b_off + done;
        submit(c->m, &j);
    }
    return GPUBP_OK;
}

int gbp_mem_read(gbp_mem *m, gpubp_memory_space sp, int fd, uint64_t off, size_t elsize,
                 const gbp_box *fbox, void *dst, const gbp_box *dbox)
{
    if (sp == GPUBP_MEM_GPU) {
        if (!dev_open(m)) return device_unsupported(m);
        return device_read(m, fd, off, elsize, fbox, dst, dbox, NULL, NULL);
    }
    if (!gbp_box_is_contiguous(fbox) && gbp_box_elements(fbox) > 0) {
        /* a strided sub-box: read spans of the file into the bounce buffer and scatter the runs,
         * rather than one pread per (short) run, where the span is not mostly waste */
        GBP_FORWARD_IF_ERROR(need_bounce(m));
        gbp_chunker ch;
        gbp_chunker_init(&ch, fbox, elsize, GBP_BOUNCE_BYTES, 1);
        gbp_chunk k;
        while (gbp_chunker_next(&ch, &k)) {
            gbp_box da;
            gbp_box_sub(&da, dbox, k.rel, k.count);
            if (k.span <= 4 * k.bytes) {
                GBP_FORWARD_IF_ERROR(gbp_pread_all(fd, m->bounce, k.span, off + k.span_off,
                                                   "data file"));
                scatter_ctx sc = {m->bounce, dst, k.span_off};
                GBP_FORWARD_IF_ERROR(gbp_box_foreach_run(&k.a, &da, elsize, scatter_run, &sc));
            } else {
                read_ctx c = {m, fd, off, dst};
                GBP_FORWARD_IF_ERROR(gbp_box_foreach_run(&k.a, &da, elsize, read_run, &c));
            }
        }
        return GPUBP_OK;
    }
    read_ctx c = {m, fd, off, dst};
    return gbp_box_foreach_run(fbox, dbox, elsize, read_run, &c);
}

int gbp_mem_read_fill(gbp_mem *m, gbp_fill_fn fill, void *ctx, size_t elsize, const gbp_box *fbox,
                      void *dst, const gbp_box *dbox)
{
    if (!dev_open(m)) return device_unsupported(m);
    return device_read(m, -1, 0, elsize, fbox, dst, dbox, fill, ctx);
}

/* ---- synchronous small copies ---------------------------------------------------------------- */
typedef struct sync_ctx {
    gbp_mem *m;
    const uint8_t *src;
    uint8_t *dst;
    gbp_copy_kind kind;
} sync_ctx;

static int sync_piece(void *vc, const gbp_piece *p)
{
    sync_ctx *c = vc;
    gbp_copy3d k = {c->src + p->a_off, c->dst + p->b_off, p->width, p->height, p->depth,
                    p->apitch, p->aslice, p->bpitch, p->bslice, c->kind};
    return c->m->ops->copy_async(c->m->dctx, &k);
}

static int wait_misc(gbp_mem *m)
{
    if (!m->misc_ev) GBP_FORWARD_IF_ERROR(m->ops->event_create(m->dctx, &m->misc_ev));
    GBP_FORWARD_IF_ERROR(m->ops->event_record(m->dctx, m->misc_ev));
    return m->ops->event_wait(m->dctx, m->misc_ev);
}


int gbp_mem_scatter(gbp_mem *m, gpubp_memory_space sp, const void *src, size_t elsize,
                    const gbp_box *sbox, void *dst, const gbp_box *dbox)
{
    if (sp == GPUBP_MEM_GPU) {
        if (!dev_open(m)) return device_unsupported(m);
        if (m->user_stream) GBP_FORWARD_IF_ERROR(m->ops->fence_user_stream(m->dctx));
        sync_ctx c = {m, src, dst, GBP_COPY_H2D};
        GBP_FORWARD_IF_ERROR(gbp_box_walk3d(sbox, dbox, elsize, sync_piece, &c));
        return wait_misc(m);
    }
    scatter_ctx c = {src, dst, 0};
    return gbp_box_foreach_run(sbox, dbox, elsize, scatter_run, &c);
}

int gbp_mem_copy_out(gbp_mem *m, gpubp_memory_space sp, void *dst_host, const void *src, size_t n)
{
    if (sp == GPUBP_MEM_GPU) {
        if (!dev_open(m)) return device_unsupported(m);
        if (n == 0) return GPUBP_OK;
        if (m->user_stream) GBP_FORWARD_IF_ERROR(m->ops->fence_user_stream(m->dctx));
        gbp_copy3d k = {src, dst_host, n, 1, 1, 0, 0, 0, 0, GBP_COPY_D2H};
        GBP_FORWARD_IF_ERROR(m->ops->copy_async(m->dctx, &k));
        return wait_misc(m);
    }
    memcpy(dst_host, src, n);
    return GPUBP_OK;
}

/* ---- sync ------------------------------------------------------------------------------------ */
/* After the device copies completed: min/max results to their owners, the user's stream told
 * that the buffers are free. Nothing on a failure so far (the step fails). */
static void deliver_minmax(gbp_mem *m)
{
    if (!has_error(m)) {
        for (size_t i = 0; i < m->npend; i++) {
            size_t el = gbp_type_size(m->pend[i].type);
            memcpy(m->pend[i].min, m->pend[i].entry, el);
            memcpy(m->pend[i].max, m->pend[i].entry + el, el);
        }
        if (m->user_stream) keep_error(m, m->ops->signal_user_stream(m->dctx));
    }
    m->npend = 0;
    m->mm_used = 0;
}

int gbp_mem_wait_staged(gbp_mem *m)
{
    if (!m->pool_ready && !m->threads_started) return GPUBP_OK;
    double t0 = m->stats ? mono_s() : 0;
    pthread_mutex_lock(&m->lock);
    while (m->unstaged > 0) pthread_cond_wait(&m->cv, &m->lock);
    pthread_mutex_unlock(&m->lock);
    if (m->pool_ready) keep_error(m, m->ops->sync(m->dctx)); /* the copies queued so far */
    if (m->stats) m->t_sync += mono_s() - t0;
    deliver_minmax(m);
    return kept_error(m);
}

int gbp_mem_commit_async(gbp_mem *m, gbp_commit_fn fn, void *ctx, void (*free_ctx)(void *))
{
    int rc = threads_open(m);
    pthread_mutex_lock(&m->lock);
    if (rc == GPUBP_OK && m->commit_pending)
        rc = gbp_error(GPUBP_ERR_INTERNAL, 0, "gbp_mem_commit_async: a commit is still queued");
    if (rc == GPUBP_OK) m->commit_pending = 1;
    pthread_mutex_unlock(&m->lock);
    if (rc != GPUBP_OK) {
        if (free_ctx) free_ctx(ctx);
        return rc;
    }
    job j;
    memset(&j, 0, sizeof j);
    j.kind = JOB_COMMIT;
    j.slot = -1;
    j.fd = -1;
    j.commit = fn;
    j.commit_ctx = ctx;
    j.commit_free = free_ctx;
    submit(m, &j);
    /* what is queued from now on belongs to the next commit */
    pthread_mutex_lock(&m->lock);
    m->epoch++;
    m->ep_failed[m->epoch & 1] = 0;
    pthread_mutex_unlock(&m->lock);
    return GPUBP_OK;
}

int gbp_mem_commit_wait(gbp_mem *m)
{
    pthread_mutex_lock(&m->lock);
    while (m->commit_pending) pthread_cond_wait(&m->cv, &m->lock);
    int rc = m->commit_rc, native = m->commit_native;
    char msg[sizeof m->commit_msg];
    memcpy(msg, m->commit_msg, sizeof msg);
    m->commit_rc = 0;
    m->commit_msg[0] = '\0';
    pthread_mutex_unlock(&m->lock);
    return rc ? gbp_error(rc, native, "%s", msg) : GPUBP_OK;
}

int gbp_mem_sync(gbp_mem *m)
{
    if (!m->pool_ready && !m->threads_started) return GPUBP_OK;
    double t0 = m->stats ? mono_s() : 0;
    pthread_mutex_lock(&m->lock);
    while (m->inflight > 0) pthread_cond_wait(&m->cv, &m->lock);
    pthread_mutex_unlock(&m->lock);
    if (m->pool_ready) keep_error(m, m->ops->sync(m->dctx));
    if (m->stats) m->t_sync += mono_s() - t0;
    pthread_mutex_lock(&m->lock);
    for (int i = 0; i < m->nslots; i++) m->slots[i].ev_pending = 0;
    pthread_mutex_unlock(&m->lock);
    deliver_minmax(m);
    pthread_mutex_lock(&m->lock);
    m->ep_failed[0] = m->ep_failed[1] = 0;
    int err = m->err;
    int native = m->err_native;
    char msg[sizeof m->err_msg];
    memcpy(msg, m->err_msg, sizeof msg);
    m->err = 0;
    m->err_native = 0;
    m->err_msg[0] = '\0';
    pthread_mutex_unlock(&m->lock);
    if (err) return gbp_error(err, native, "%s", msg);
    return GPUBP_OK;
}

size_t gbp_mem_footprint(const gbp_mem *m)
{
    size_t n = m->bounce ? GBP_BOUNCE_BYTES : 0;
    if (m->pool_ready) n += (size_t)m->nslots * m->slot_alloc;
    for (const mm_page *p = m->pages; p; p = p->next) n += GBP_MM_PAGE_ENTRIES * GBP_MM_ENTRY;
    return n;
}
