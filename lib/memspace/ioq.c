/* The queue and the I/O threads of one context. Producers (mem_write.c, mem_read.c,
 * memspace.c's commits) gbp_ioq_submit jobs; each thread takes the first job it may take, runs it
 * (jobs.c for the device jobs) and accounts for it under m->lock: failures kept per epoch,
 * staged writes counted out, the slot freed or handed on with its pending state. A commit runs
 * here once every job of its epoch is done. */
#include "memspace/ioq.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "io/fmap.h"
#include "memspace/box.h"
#include "memspace/jobs.h"
#include "memspace/mem_ctx.h"
#include "memspace/simdev.h"

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
        for (int t = 0; gbp_job_is_write(j) && t < m->nthreads && !busy; t++)
            busy = t != me && m->wfd[t] == j->fd;
        if (busy) continue;
        if (gbp_job_is_dev(j) && free_slots_locked(m) == 0) continue;
        return k;
    }
    return -1;
}

/* How many other files could start a device write now, counted up to cap: files with a queued
 * device write that no thread is writing, and, while the writer queues a step's blocks (it set
 * m->nfiles, the files it may write), every file no thread is writing (it queues the sub-blocks
 * one after the other: the last ones' chunks come a millisecond after the first threads started);
 * one per idle thread at most. A thread takes a second slot for its file's next chunk only when
 * that leaves a slot for each of them; else, at the start of a step, the first threads took two
 * slots each and the files of the last ones started a chunk late (a step of one 64 MiB sub-block
 * per file ended a chunk of 16 MiB after the first files; an H100 trace of 16 files of 32 MiB,
 * 2026-12-05: the last three files started 9-14 ms late in a step of 26 ms). Caller holds
 * m->lock. */
#define GBP_WAITING_MAX 64
static int others_waiting_locked(const gbp_mem *m, int me, int fd, int cap)
{
    int idle = 0, seen[GBP_WAITING_MAX], n = 0, nbusy = 0;
    for (int t = 0; t < m->nthreads; t++) idle += t != me && m->wfd[t] < 0;
    if (cap > idle) cap = idle;
    if (cap > GBP_WAITING_MAX) cap = GBP_WAITING_MAX;
    if (m->nfiles > 0) { /* the files that no other thread writes, fd's aside */
        int busy[GBP_WAITING_MAX];
        for (int t = 0; t < m->nthreads && nbusy < GBP_WAITING_MAX; t++) {
            int dup = t == me || m->wfd[t] < 0 || m->wfd[t] == fd;
            for (int i = 0; i < nbusy && !dup; i++) dup = busy[i] == m->wfd[t];
            if (!dup) busy[nbusy++] = m->wfd[t];
        }
        int rest = m->nfiles - 1 - nbusy;
        if (rest > 0) return rest < cap ? rest : cap;
    }
    for (int k = 0; k < m->q_len && n < cap; k++) {
        const job *q = &m->queue[(m->q_head + k) % m->qcap];
        if (q->kind != JOB_DEV_WRITE || q->fd == fd) continue;
        int busy = 0;
        for (int t = 0; t < m->nthreads && !busy; t++) busy = t != me && m->wfd[t] == q->fd;
        for (int i = 0; i < n && !busy; i++) busy = seen[i] == q->fd;
        if (!busy) seen[n++] = q->fd;
    }
    return n;
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
    if (gbp_job_is_dev(&j) && j.slot < 0) {
        int pending = 0;
        j.slot = grab_slot_locked(m, &pending);
        j.wait_ev = j.kind == JOB_DEV_READ && pending;
        j.slot_pending = pending;
    }
    return j;
}

/* A run of a sparse host read: from the block at j->off into the user's array at j->dst. */
static int sparse_run(void *vc, size_t a_off, size_t b_off, size_t bytes)
{
    const job *j = vc;
    return gbp_pread_all(j->fd, (uint8_t *)j->dst + b_off, bytes, j->off + a_off, "data file");
}

/* A sparse host read: its runs one pread each, or (read_mmap) copied out of a mapping of their
 * span when that is at most four times their bytes (gbp_fmap_worth); a span not wholly in the
 * file is not mapped, and pread reports it. */
static int sparse_read(gbp_mem *m, job *j)
{
    if (m->params.read_mmap) {
        size_t first = gbp_box_offset(&j->fa) * j->elsize, span = gbp_box_span(&j->fa, j->elsize);
        gbp_fmap fm;
        if (gbp_fmap_worth(span, gbp_box_elements(&j->fa) * j->elsize) &&
            gbp_fmap_open(&fm, j->fd, j->off + first, span)) {
            gbp_box_copy_runs(&j->fa, &j->da, j->elsize, gbp_fmap_at(&fm, j->off + first), first,
                              j->dst);
            gbp_fmap_close(&fm);
            return GPUBP_OK;
        }
    }
    return gbp_box_foreach_run(&j->fa, &j->da, j->elsize, sparse_run, j);
}

static int run_job(gbp_mem *m, job *j)
{
    if (j->kind == JOB_HOST_WRITE || j->kind == JOB_HOST_READ) {
        if (gbp_memctx_job_failed(m, j)) return GPUBP_OK;
        if (gbp_sim_io_fail_now())
            return gbp_error(GPUBP_ERR_IO, EIO, "%s data file at offset %llu failed: %s (injected)",
                             j->kind == JOB_HOST_WRITE ? "write to" : "read of",
                             (unsigned long long)j->off, strerror(EIO));
        if (j->kind == JOB_HOST_WRITE) return gbp_pwrite_all(j->fd, j->src, j->len, j->off, "data file");
        if (j->sparse) return sparse_read(m, j);
        return gbp_pread_all(j->fd, j->dst, j->len, j->off, "data file");
    }
    if (gbp_memctx_job_failed(m, j)) return GPUBP_OK;
    return gbp_jobs_read_dev(m, j);
}

/* A commit whose epoch's jobs are all done: runs it unless one of them failed. */
static void run_commit(gbp_mem *m, job *j)
{
    pthread_mutex_lock(&m->lock);
    int failed = m->ep_failed[j->epoch & 1];
    pthread_mutex_unlock(&m->lock);
    int rc = failed ? gbp_memctx_kept_error(m) : j->commit(j->commit_ctx);
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
            int k2 = -1, nfree = free_slots_locked(m);
            if (m->nslots >= 2 * m->nthreads ||
                (nfree >= 2 && others_waiting_locked(m, me, j.fd, nfree) < nfree))
                k2 = pick_next_locked(m, j.fd, 0);
            if (k2 < 0 && j.np > 1 && (k2 = pick_next_locked(m, j.fd, 1)) >= 0)
                m->queue[(m->q_head + k2) % m->qcap].slot = j.slot; /* no slot taken */
            if (k2 >= 0) {
                next = take_job_locked(m, k2);
                have_next = 1;
            }
        }
        int pass_slot = have_next && next.slot == j.slot; /* the slot stays taken, by next */
        if (gbp_job_is_write(&j)) m->wfd[me] = j.fd;
        pthread_cond_broadcast(&m->cv); /* room in the queue */
        pthread_mutex_unlock(&m->lock);

        int host = j.kind == JOB_HOST_WRITE || j.kind == JOB_HOST_READ;
        int rc = GPUBP_OK;
        if (!host && !bound) {
            rc = m->ops->bind_thread(m->dctx);
            bound = rc == GPUBP_OK;
        }
        double t0 = m->stats ? gbp_now_s() : 0;
        int rc2 = GPUBP_OK;
        if (rc == GPUBP_OK) rc = gbp_jobs_fill(m, &j);
        /* device writes: the copy of the next piece, or of the next chunk, is queued once the
         * current one landed (gbp_jobs_write_dev) */
        if (rc == GPUBP_OK)
            rc = j.kind == JOB_DEV_WRITE ? gbp_jobs_write_dev(m, &j, have_next ? &next : NULL, &rc2)
                                         : run_job(m, &j);
        double dt = m->stats ? gbp_now_s() - t0 : 0;
        if (j.kind == JOB_DEV_WRITE && m->ops->check_idle && !pass_slot) { /* no copy left */
            gbp_saved_error e;
            gbp_error_save(&e, rc, sizeof m->err_msg);
            rc = gbp_error_restore(&e, gbp_memctx_slot_idle(m, m->slots[j.slot].buf,
                                                            m->slot_alloc, 0));
        }

        pthread_mutex_lock(&m->lock);
        m->t_io += dt;
        m->njobs++;
        gbp_mem_trace_locked(m, t0, dt, GBP_TRACE_JOB + (int)j.kind, j.fd, j.len);
        gbp_memctx_keep_error_ep_locked(m, rc, j.epoch);
        if (have_next) gbp_memctx_keep_error_ep_locked(m, rc2, next.epoch);
        gbp_memctx_staged_locked(m, &j);
        m->open_jobs[j.epoch & 1]--;
        m->fence_open[j.fence % GBP_FENCES]--;
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
int gbp_ioq_open(gbp_mem *m)
{
    if (m->threads_started) return GPUBP_OK;
    int slots = gbp_params_pool_slots(&m->params);
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

void gbp_ioq_stop(gbp_mem *m)
{
    if (!m->threads_started) return;
    pthread_mutex_lock(&m->lock);
    m->stop = 1;
    pthread_cond_broadcast(&m->cv);
    pthread_mutex_unlock(&m->lock);
    for (int i = 0; i < m->threads_started; i++) pthread_join(m->threads[i], NULL);
    m->threads_started = 0;
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

void gbp_ioq_submit(gbp_mem *m, const job *j)
{
    pthread_mutex_lock(&m->lock);
    /* device transfers and commits are queued in full (descriptors, no data); host pieces wait
     * for room */
    while (m->q_len == m->qcap &&
           !((gbp_job_is_dev(j) || j->kind == JOB_COMMIT) && grow_queue_locked(m)))
        pthread_cond_wait(&m->cv, &m->lock);
    job *q = &m->queue[(m->q_head + m->q_len) % m->qcap];
    *q = *j;
    q->epoch = m->epoch;
    q->fence = m->fence;
    if (j->kind != JOB_COMMIT) {
        m->open_jobs[m->epoch & 1]++;
        m->fence_open[m->fence % GBP_FENCES]++;
    }
    if (gbp_job_is_write(j) && !j->staged) m->unstaged++; /* staged: the library's own bytes */
    m->q_len++;
    m->inflight++;
    pthread_cond_broadcast(&m->cv);
    pthread_mutex_unlock(&m->lock);
}
