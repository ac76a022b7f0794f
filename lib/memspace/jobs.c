/* What an I/O thread does with a device job: a write's chunk copied from the device into its
 * slot (piece by piece when contiguous on the device) and written as the copies land; a read's
 * file span read into a slot (or produced by a fill) and copied to the device. Also the
 * O_DIRECT descriptors both use. Each runs on the thread that took the job, without m->lock
 * except where a function says so. */
#include "memspace/jobs.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "memspace/mem_ctx.h"
#include "memspace/simdev.h"

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

typedef struct h2d_ctx {
    gbp_mem *m;
    const uint8_t *src; /* the slot byte that holds the block's byte span_off */
    size_t span_off;
    uint8_t *dst;
} h2d_ctx;

/* Where a device read's bytes land in its slot, piece by piece: the file bytes (the whole span,
 * or only the runs of a sparse read, packed) at slot offsets 0..len, each piece of m->piece
 * bytes copied to the device as soon as it is complete when the read goes in pieces. */
typedef struct rd_fill {
    gbp_mem *m;
    job *j;
    slot *s;
    int pieces, prev_np;
    int waited;    /* pieces: regions of the slot whose older copies are known complete */
    size_t filled; /* bytes in the slot so far */
    uint8_t *dst;  /* pieces: the destination of slot byte 0 (contiguous) */
    int queued;    /* a copy was queued */
} rd_fill;

/* Before bytes land in piece region i of the slot: the older copies out of it are complete. */
static int rd_fill_wait(rd_fill *f, int i)
{
    for (; f->waited <= i; f->waited++) {
        size_t o = (size_t)f->waited * f->m->piece;
        size_t n = f->j->len - o < f->m->piece ? f->j->len - o : f->m->piece;
        /* after pev[prev_np - 1], every older copy out of the slot has completed */
        if (f->waited < f->prev_np)
            GBP_FORWARD_IF_ERROR(f->m->ops->event_wait(f->m->dctx, f->s->pev[f->waited]));
        GBP_FORWARD_IF_ERROR(gbp_memctx_slot_idle(f->m, f->s->buf + o, n, 1));
    }
    return GPUBP_OK;
}

/* Reads n file bytes at offset `off` into the slot at f->filled; in pieces, each piece completed
 * is copied to the device with its event. */
static int rd_fill_put(rd_fill *f, uint64_t off, size_t n)
{
    gbp_mem *m = f->m;
    while (n > 0) {
        size_t o = f->filled, k = n;
        if (f->pieces) {
            int i = (int)(o / m->piece);
            GBP_FORWARD_IF_ERROR(rd_fill_wait(f, i));
            size_t end = ((size_t)i + 1) * m->piece;
            if (k > end - o) k = end - o;
        }
        GBP_FORWARD_IF_ERROR(gbp_pread_all(f->j->fd, f->s->buf + o, k, off, "data file"));
        f->filled += k;
        off += k;
        n -= k;
        if (f->pieces && (f->filled % m->piece == 0 || f->filled == f->j->len)) {
            int i = (int)((f->filled - 1) / m->piece);
            size_t po = (size_t)i * m->piece;
            gbp_copy3d c = {f->s->buf + po, f->dst + po, f->filled - po, 1, 1, 0, 0, 0, 0,
                            GBP_COPY_H2D};
            f->queued = 1;
            GBP_FORWARD_IF_ERROR(m->ops->copy_async(m->dctx, &c));
            GBP_FORWARD_IF_ERROR(m->ops->event_record(m->dctx, f->s->pev[i]));
            f->s->read_np = i + 1; /* a copy without its event: the next read waits for ev */
        }
    }
    return GPUBP_OK;
}

/* A run of a sparse read: its bytes follow the previous run's in the slot. */
static int rd_fill_run(void *vc, size_t a_off, size_t b_off, size_t bytes)
{
    rd_fill *f = vc;
    (void)b_off; /* == f->filled: the runs are packed in order */
    return rd_fill_put(f, f->j->off + (a_off - f->j->span_off), bytes);
}

static int h2d_piece(void *vc, const gbp_piece *p)
{
    h2d_ctx *c = vc;
    gbp_copy3d k = {c->src + (p->a_off - c->span_off), c->dst + p->b_off, p->width, p->height,
                    p->depth, p->apitch, p->aslice, p->bpitch, p->bslice, GBP_COPY_H2D};
    return c->m->ops->copy_async(c->m->dctx, &k);
}

/* The whole span of a device read without pieces: read by O_DIRECT where asked (any trouble:
 * through the page cache) or by one pread, at byte `shift` of the slot. */
static int rd_span(gbp_mem *m, job *j, slot *s, size_t shift)
{
    if (m->params.direct_io) {
        pthread_mutex_lock(&m->lock);
        int dfd = direct_fd_locked(m, j->fd, 1);
        pthread_mutex_unlock(&m->lock);
        if (dfd >= 0) {
            uint64_t a = j->off - shift;
            size_t n = (shift + j->len + GBP_DIRECT_ALIGN - 1) & ~(GBP_DIRECT_ALIGN - 1);
            size_t got = 0;
            int r = gbp_pread_some(dfd, s->buf, n, a, &got, "data file (O_DIRECT)");
            gbp_error_clear(); /* on any trouble, read it again through the page cache */
            if (r == GPUBP_OK && got >= shift + j->len) return GPUBP_OK;
        }
    }
    return gbp_pread_all(j->fd, s->buf + shift, j->len, j->off, "data file");
}

/* A device read: the chunk's file bytes pread into the slot (or produced by j->fill) and copied
 * to the device. Without j->sparse the slot holds the chunk's whole span (the bytes between its
 * runs too, dropped by the strided copy); with it, only its runs, packed (j->len bytes, one pread
 * each: mem_read.c decides, gbp_box_sparse_pays). The slot may still feed the host-to-device
 * copies of the read before it (j->wait_ev): they are waited for before their bytes are
 * overwritten, piece by piece when both reads go in pieces, so that a reused slot does not wait
 * for the last copy of the read before. A read whose bytes in the slot go to one contiguous
 * range of the device goes in pieces, each copied as soon as it is in the slot, so that the
 * copies of a step's last chunks do not queue behind its last reads. The slot's event is
 * recorded after the copies queued, also on a failure: it always covers every copy out of the
 * slot. */
int gbp_jobs_read_dev(gbp_mem *m, job *j)
{
    slot *s = &m->slots[j->slot];
    size_t shift = m->params.direct_io && !j->fill ? (size_t)(j->off % GBP_DIRECT_ALIGN) : 0;
    int prev_np = j->wait_ev ? s->read_np : 0;
    s->read_np = 0;
    if (gbp_sim_io_fail_now())
        return gbp_error(GPUBP_ERR_IO, EIO, "read of data file at offset %llu failed: %s "
                         "(injected)", (unsigned long long)j->off, strerror(EIO));
    /* the slot's bytes as a box: the span (of the block's array) or the runs packed */
    gbp_box src = j->fa;
    size_t src_off = j->span_off;
    if (j->sparse) {
        gbp_box_dense(&src, j->fa.ndims, j->fa.count);
        src_off = 0;
    }
    gbp_one_piece op = {0, {0}};
    int pieces = !j->fill && !m->params.direct_io && j->len > m->piece && m->npev > 1 &&
                 gbp_box_walk3d(&src, &j->da, j->elsize, gbp_memctx_one_piece_fn, &op) ==
                     GPUBP_OK &&
                 op.n == 1 && op.p.height == 1 && op.p.depth == 1 && op.p.width == j->len;
    gbp_error_clear();
    rd_fill f = {m, j, s, pieces, prev_np, 0, 0, (uint8_t *)j->dst + op.p.b_off, 0};
    int rc = GPUBP_OK;
    if (pieces) {
        if (j->wait_ev && prev_np == 0) rc = m->ops->event_wait(m->dctx, s->ev);
        if (rc == GPUBP_OK)
            rc = j->sparse ? gbp_box_foreach_run(&j->fa, NULL, j->elsize, rd_fill_run, &f)
                           : rd_fill_put(&f, j->off, j->len);
    } else {
        if (j->wait_ev) rc = m->ops->event_wait(m->dctx, s->ev);
        if (rc == GPUBP_OK) rc = gbp_memctx_slot_idle(m, s->buf, m->slot_alloc, 1);
        if (rc == GPUBP_OK) {
            if (j->fill) rc = j->fill(j->fill_ctx, s->buf, j->span_off, j->len);
            else if (j->sparse) rc = gbp_box_foreach_run(&j->fa, NULL, j->elsize, rd_fill_run, &f);
            else rc = rd_span(m, j, s, shift);
        }
        h2d_ctx c = {m, s->buf + shift, src_off, j->dst};
        if (rc == GPUBP_OK) {
            f.queued = 1;
            rc = gbp_box_walk3d(&src, &j->da, j->elsize, h2d_piece, &c);
        }
    }
    if (!f.queued) return rc;
    if (rc != GPUBP_OK && pieces) s->read_np = 0; /* a piece may lack its event: ev covers all */
    gbp_saved_error e;
    gbp_error_save(&e, rc, sizeof m->err_msg);
    int rc2 = m->ops->event_record(m->dctx, s->ev);
    if (rc2 != GPUBP_OK) { /* nothing covers the copies: none may be left running */
        s->read_np = 0;
        rc2 = gbp_memctx_drain_after(m, rc2);
    }
    return gbp_error_restore(&e, rc2);
}

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
int gbp_jobs_fill_slot(gbp_mem *m, int s, size_t shift, const void *base, size_t elsize,
                     const gbp_chunk *c)
{
    gbp_box dense;
    gbp_box_dense(&dense, c->a.ndims, c->count);
    d2h_ctx dc = {m, base, m->slots[s].buf + shift};
    int rc = gbp_box_walk3d(&c->a, &dense, elsize, d2h_piece, &dc);
    if (rc == GPUBP_OK) rc = m->ops->event_record(m->dctx, m->slots[s].ev);
    return rc;
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
    return rc == GPUBP_OK ? rc : gbp_memctx_drain_after(m, rc);
}

/* A device write taken by an I/O thread: the copy of its first piece (or of the whole chunk)
 * into the slot, queued once. */
int gbp_jobs_fill(gbp_mem *m, job *j)
{
    if (j->kind != JOB_DEV_WRITE || j->filled) return GPUBP_OK;
    j->filled = 1;
    /* its step failed: nothing to copy (queued 0) */
    if (gbp_memctx_job_failed(m, j)) return GPUBP_OK;
    int rc;
    if (j->np > 1) {
        rc = queue_piece(m, j, 0);
    } else {
        size_t shift = m->params.direct_io ? (size_t)(j->off % GBP_DIRECT_ALIGN) : 0;
        rc = gbp_jobs_fill_slot(m, j->slot, shift, j->base, j->elsize, &j->ch);
        if (rc == GPUBP_OK) j->queued = 1;
        else rc = gbp_memctx_drain_after(m, rc); /* a strided chunk may be queued in part */
    }
    gbp_memctx_staged_if_queued(m, j);
    return rc;
}

/* Writes device write j's slot: piece i once its copy landed, the copy of piece i+1 (after the
 * last: of the thread's next chunk, `next`, whose failure goes to *rc_next) queued just before,
 * so that each thread has one copy in flight and the threads' copies interleave on the stream
 * (the first bytes of every file are in the pool soon after a step starts). Every copy queued
 * into the slot has landed when this returns. */
int gbp_jobs_write_dev(gbp_mem *m, job *j, job *next, int *rc_next)
{
    slot *s = &m->slots[j->slot];
    int rc = GPUBP_OK, waited = 0;
    if (j->queued == 0) return GPUBP_OK; /* its copy could not be queued: failed (kept) */
    for (int i = 0; i < j->np; i++) {
        rc = m->ops->event_wait(m->dctx, piece_ev(m, j, i));
        waited = i + 1;
        if (rc != GPUBP_OK) break;
        /* a failure of its step: copy and write nothing more */
        if (gbp_memctx_job_failed(m, j)) break;
        if (i == 0 && gbp_sim_io_fail_now()) {
            rc = gbp_error(GPUBP_ERR_IO, EIO, "write to data file at offset %llu failed: %s "
                           "(injected)", (unsigned long long)j->off, strerror(EIO));
            break;
        }
        if (i + 1 < j->np) {
            rc = queue_piece(m, j, i + 1);
            if (rc != GPUBP_OK) break;
            gbp_memctx_staged_if_queued(m, j);
        } else if (next) {
            *rc_next = gbp_jobs_fill(m, next);
        }
        size_t o = (size_t)i * m->piece;
        size_t n = j->np == 1 ? m->slot_alloc : j->len - o < m->piece ? j->len - o : m->piece;
        /* no copy lands in what is written */
        rc = gbp_memctx_slot_idle(m, s->buf + (j->np == 1 ? 0 : o), n, 0);
        if (rc != GPUBP_OK) break;
        if (j->np > 1) {
            rc = gbp_pwrite_all(j->fd, s->buf + o, n, j->off + o, "data file");
        } else if (m->params.direct_io) {
            pthread_mutex_lock(&m->lock);
            int dfd = direct_fd_locked(m, j->fd, 0);
            pthread_mutex_unlock(&m->lock);
            rc = gbp_pwrite_direct(dfd, j->fd, s->buf + j->off % GBP_DIRECT_ALIGN, j->len, j->off);
        } else {
            rc = gbp_pwrite_all(j->fd, s->buf, j->len, j->off, "data file");
        }
        if (rc != GPUBP_OK) break;
    }
    if (j->queued > waited) { /* the slot is freed after: no copy into it may still run */
        gbp_saved_error e;
        gbp_error_save(&e, rc, sizeof m->err_msg);
        return gbp_error_restore(&e, m->ops->event_wait(m->dctx, piece_ev(m, j, j->queued - 1)));
    }
    return rc;
}
