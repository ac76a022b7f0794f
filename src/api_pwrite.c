/* The parallel writer (gpubp_open_comm): every rank writes its own process group (PG) into its
 * group's subfiles at offsets given by a prefix sum of the PG sizes ("parallel"), or hands it to
 * the group's aggregator ("funnel"); rank 0 gathers every rank's step metadata, merges it as
 * ADIOS2's BP4 writer does (bp4_merge_steps) and commits md.0 and md.idx. docs/design.md §6. */
#include "internal.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <sys/mman.h>
#include <unistd.h>

int gbp_writer_open_metadata(gpubp_file *f, int *have);
int gbp_open_subfiles(gpubp_file *f, int trunc, int open);

static int new_memfd(int *fd, const char *what)
{
    if (*fd >= 0) return GPUBP_OK;
    *fd = memfd_create(what, MFD_CLOEXEC);
    if (*fd < 0) return gbp_error(GPUBP_ERR_IO, errno, "memfd_create (%s): %s", what, strerror(errno));
    return GPUBP_OK;
}

/* Subfile groups: `aggregators=N` contiguous groups of ranks, or one group per node. */
static int make_groups(gpubp_file *f)
{
    gbp_comm *w = f->comm;
    if (f->params.aggregators > 0) {
        int64_t g = f->params.aggregators < w->size ? f->params.aggregators : w->size;
        f->ngroups = (int)g;
        f->group_id = (int)((int64_t)w->rank * g / w->size);
        return gbp_comm_split(w, f->group_id, w->rank, &f->group);
    }
    GBP_FORWARD_IF_ERROR(gbp_comm_split_node(w, &f->group));
    uint64_t lead = f->group->rank == 0, g = lead;
    GBP_FORWARD_IF_ERROR(gbp_comm_exscan(w, &g, 1));
    GBP_FORWARD_IF_ERROR(gbp_comm_bcast(f->group, &g, sizeof g, 0));
    int64_t n = (int64_t)lead;
    GBP_FORWARD_IF_ERROR(gbp_comm_allreduce(w, &n, 1, GPUBP_COMM_SUM));
    f->group_id = (int)g;
    f->ngroups = (int)n;
    return GPUBP_OK;
}

int gbp_pwriter_open(gpubp_file *f)
{
    gbp_comm *w = f->comm;
    f->funnel_fd = f->stage_fd = -1;
    GBP_FORWARD_IF_ERROR(make_groups(f));
    f->sub_base = f->group_id * f->nsub;
    /* rank 0: the directory, md.0 and md.idx */
    int have = 0, rc = GPUBP_OK;
    if (w->rank == 0) rc = gbp_writer_open_metadata(f, &have);
    GBP_FORWARD_IF_ERROR(gbp_comm_agree(w, rc, 0));
    uint64_t st[2] = {(uint64_t)have, (uint64_t)f->idx_records};
    GBP_FORWARD_IF_ERROR(gbp_comm_bcast(w, st, sizeof st, 0));
    have = (int)st[0];
    f->idx_records = (size_t)st[1];
    f->step = (uint32_t)f->idx_records + 1;
    /* aggregators create their subfiles (emptied unless appending), then the others open them */
    int lead = f->group->rank == 0;
    rc = gbp_open_subfiles(f, !have, lead);
    GBP_FORWARD_IF_ERROR(gbp_comm_agree_all(w, rc, "gpubp_open (subfiles)"));
    size_t S = (size_t)f->nsub;
    uint64_t *sz = gbp_calloc(2 * S, sizeof *sz);
    rc = sz ? GPUBP_OK : gbp_error(GPUBP_ERR_NOMEM, 0, "out of memory");
    for (size_t j = 0; sz && lead && j < S; j++) {
        sz[j] = f->data_size[j];
        sz[S + j] = (uint64_t)f->data_has_header[j];
    }
    if (sz) rc = gbp_comm_bcast(f->group, sz, 2 * S * sizeof *sz, 0);
    for (size_t j = 0; sz && rc == GPUBP_OK && j < S; j++) {
        f->data_size[j] = sz[j];
        f->data_has_header[j] = (int)sz[S + j];
    }
    gbp_free(sz);
    if (rc == GPUBP_OK && !lead && !f->params.funnel) {
        for (size_t j = 0; rc == GPUBP_OK && j < S; j++) {
            char p[4200];
            rc = gbp_open_file(&f->data_fd[j], gbp_sub_name(f, (int)j, p, sizeof p), O_RDWR, 0);
        }
    }
    return gbp_comm_agree_all(w, rc, "gpubp_open (subfiles)");
}

void gbp_pwriter_free(gpubp_file *f)
{
    if (f->funnel_fd >= 0) close(f->funnel_fd);
    if (f->stage_fd >= 0) close(f->stage_fd);
    f->funnel_fd = f->stage_fd = -1;
}

int gbp_pwriter_close_sync(gpubp_file *f, int rc)
{
    /* the only rank-local part of a close is rank 0 clearing the writer-active flag */
    return gbp_comm_agree(f->comm, rc, 0);
}

/* ---- copies aside ---------------------------------------------------------------------------
 * Offsets are known only at end_step, so a SYNC put (and perform_puts) copies the payload to a
 * host buffer, and a compressed block is compressed into one, min/max included. Host data in
 * one contiguous run is copied directly; device and strided data goes through the memory-space
 * layer into a memory file (the pinned pipeline, min/max on the device) and is read back. */
int gbp_pwriter_stage(gpubp_file *f, gbp_wblock *wb)
{
    gpubp_variable *v = wb->var;
    if (wb->owned || v->kind == GPUBP_SHAPE_GLOBAL_VALUE || wb->payload_len == 0) return GPUBP_OK;
    size_t es = gbp_type_size(v->type), n = (size_t)wb->payload_len;
    uint8_t *buf = NULL;
    int rc = new_memfd(&f->stage_fd, "gpubp-stage");
    if (rc == GPUBP_OK) rc = gbp_truncate(f->stage_fd, 0, "staging buffer");
    if (rc != GPUBP_OK) return rc;
    uint64_t saved = wb->meta.payload_offset;
    wb->meta.payload_offset = 0;
    if (v->op) {
        rc = gbp_write_compressed(f, wb, f->stage_fd, "compression buffer");
        n = (size_t)wb->payload_len;
    } else if (wb->space == GPUBP_MEM_HOST && gbp_box_is_contiguous(&wb->box)) {
        buf = gbp_malloc(n);
        if (!buf) rc = gbp_error(GPUBP_ERR_NOMEM, 0, "out of memory (%zu bytes to copy)", n);
        else {
            memcpy(buf, (const uint8_t *)wb->data + gbp_box_offset(&wb->box) * es, n);
            gbp_minmax(v->type, buf, n / es, wb->meta.mm, wb->meta.mm + 16, 0);
        }
    } else {
        rc = gbp_mem_write(f->mem, wb->space, f->stage_fd, 0, wb->data, v->type, &wb->box,
                           wb->meta.mm, wb->meta.mm + 16);
        int rc2 = gbp_mem_sync(f->mem);
        if (rc == GPUBP_OK) rc = rc2;
    }
    wb->meta.payload_offset = saved;
    if (rc == GPUBP_OK && !buf) {
        buf = gbp_malloc(n ? n : 1);
        if (!buf) rc = gbp_error(GPUBP_ERR_NOMEM, 0, "out of memory (%zu bytes to copy)", n);
        else rc = gbp_pread_all(f->stage_fd, buf, n, 0, "staging buffer");
    }
    if (rc != GPUBP_OK) {
        gbp_free(buf);
        return gbp_error_with_path(rc, f->path);
    }
    wb->owned = buf;
    return GPUBP_OK;
}

/* ---- the step ---------------------------------------------------------------------------- */

typedef struct pstep {
    size_t S;
    uint64_t *size;      /* this rank's PG bytes per stripe (0: no PG there) */
    uint64_t *off;       /* its offset in the group's PGs */
    int64_t *total;      /* the group's PG bytes per stripe */
    int *fd;             /* where this rank writes stripe j ... */
    uint64_t *delta;     /* ... at (absolute offset - delta[j]) */
    uint64_t *amd_off, *amd_pay;
    gbp_buf tail0;
} pstep;

static void pstep_free(pstep *ps)
{
    gbp_free(ps->size);
    gbp_free(ps->off);
    gbp_free(ps->total);
    gbp_free(ps->fd);
    gbp_free(ps->delta);
    gbp_free(ps->amd_off);
    gbp_free(ps->amd_pay);
    gbp_buf_free(&ps->tail0);
}

static int pstep_alloc(gpubp_file *f, pstep *ps)
{
    memset(ps, 0, sizeof *ps);
    ps->S = (size_t)f->nsub;
    ps->size = gbp_calloc(ps->S, sizeof *ps->size);
    ps->off = gbp_calloc(ps->S, sizeof *ps->off);
    ps->total = gbp_calloc(ps->S, sizeof *ps->total);
    ps->fd = gbp_calloc(ps->S, sizeof *ps->fd);
    ps->delta = gbp_calloc(ps->S, sizeof *ps->delta);
    ps->amd_off = gbp_calloc(f->nattrs + 1, sizeof *ps->amd_off);
    ps->amd_pay = gbp_calloc(f->nattrs + 1, sizeof *ps->amd_pay);
    gbp_buf_init(&ps->tail0);
    if (!ps->size || !ps->off || !ps->total || !ps->fd || !ps->delta || !ps->amd_off ||
        !ps->amd_pay)
        return gbp_error(GPUBP_ERR_NOMEM, 0, "out of memory");
    return GPUBP_OK;
}

/* The PGs laid out from offset 0 of each stripe: block offsets, attribute offsets and sizes. */
static int layout(gpubp_file *f, pstep *ps)
{
    int rc = GPUBP_OK;
    for (size_t i = 0; i < f->nblocks && rc == GPUBP_OK; i++) {
        gbp_wblock *wb = &f->blocks[i];
        if (wb->var->op) rc = gbp_pwriter_stage(f, wb); /* the compressed size first */
    }
    if (rc != GPUBP_OK) return rc;
    size_t hs = bp4_pg_head_size(strlen(GBP_IO_NAME), f->step);
    for (size_t j = 0; j < ps->S; j++) {
        f->pg_start[j] = 0;
        f->cursor[j] = hs;
        f->pg_nvars[j] = 0;
    }
    for (size_t i = 0; i < f->nblocks; i++) {
        gbp_wblock *wb = &f->blocks[i];
        gbp_advance_block(f, wb, gbp_assign_block(f, wb));
    }
    gbp_pg_tail(f, 0, &ps->tail0, ps->amd_off, ps->amd_pay);
    if (!gbp_buf_ok(&ps->tail0)) return gbp_error(GPUBP_ERR_NOMEM, 0, "out of memory");
    for (size_t j = 0; j < ps->S; j++)
        if (j == 0 || f->pg_nvars[j]) ps->size[j] = f->cursor[j] + (j ? 16 : ps->tail0.len);
    return GPUBP_OK;
}

static void shift(gpubp_file *f, pstep *ps)
{
    for (size_t j = 0; j < ps->S; j++) {
        f->pg_start[j] = f->data_size[j] + ps->off[j];
        f->cursor[j] += f->pg_start[j];
    }
    for (size_t i = 0; i < f->nblocks; i++) {
        gbp_wblock *wb = &f->blocks[i];
        wb->meta.vmd_offset += f->pg_start[wb->subfile];
        wb->meta.payload_offset += f->pg_start[wb->subfile];
    }
    for (size_t i = 0; i < f->nattrs; i++) {
        ps->amd_off[i] += f->pg_start[0];
        ps->amd_pay[i] += f->pg_start[0];
    }
}

/* This rank's PGs: payloads, [VMD headers, PG heads and tails, to ps->fd at ps->delta. */
static int write_pgs(gpubp_file *f, pstep *ps)
{
    int rc = GPUBP_OK;
    char p[4200];
    for (size_t i = 0; i < f->nblocks && rc == GPUBP_OK; i++) {
        gbp_wblock *wb = &f->blocks[i];
        size_t k = wb->subfile;
        rc = gbp_write_payload(f, wb, ps->fd[k], ps->delta[k], gbp_sub_name(f, (int)k, p, sizeof p));
    }
    int rc2 = gbp_mem_sync(f->mem);
    if (rc == GPUBP_OK) rc = rc2;
    if (rc == GPUBP_OK) rc = gbp_write_headers(f, ps->fd, ps->delta);
    gbp_buf pg;
    gbp_buf_init(&pg);
    static const uint8_t empty_tail[16] = {[12] = 'P', [13] = 'G', [14] = 'I', [15] = ']'};
    for (size_t j = 0; j < ps->S && rc == GPUBP_OK; j++) {
        if (!ps->size[j]) continue;
        const uint8_t *tail = j ? empty_tail : ps->tail0.data;
        size_t tl = j ? sizeof empty_tail : ps->tail0.len;
        gbp_buf_reset(&pg);
        gbp_pg_head(f, (int)j, &pg, tl);
        if (!gbp_buf_ok(&pg)) rc = gbp_error(GPUBP_ERR_NOMEM, 0, "out of memory");
        gbp_sub_name(f, (int)j, p, sizeof p);
        if (rc == GPUBP_OK)
            rc = gbp_pwrite_all(ps->fd[j], pg.data, pg.len, f->pg_start[j] - ps->delta[j], p);
        if (rc == GPUBP_OK)
            rc = gbp_pwrite_all(ps->fd[j], tail, tl, f->cursor[j] - ps->delta[j], p);
    }
    gbp_buf_free(&pg);
    return rc;
}

/* The aggregator writes the 64-byte header of each of its subfiles that gets its first PG. */
static int write_data_headers(gpubp_file *f, pstep *ps)
{
    int rc = GPUBP_OK;
    for (size_t j = 0; j < ps->S && rc == GPUBP_OK; j++) {
        if (f->data_has_header[j] || !ps->total[j]) continue;
        uint8_t h[BP4_HEADER_SIZE];
        char p[4200];
        bp4_make_header(h, BP4_KIND_DATA, 0);
        rc = gbp_pwrite_all(f->data_fd[j], h, sizeof h, 0, gbp_sub_name(f, (int)j, p, sizeof p));
    }
    return rc;
}

/* Funnel: non-aggregators write their PGs into a memory file and send them, in chunks, to the
 * aggregator, which writes them after its own, rank by rank. Every message is sent whatever
 * happened before, so that a failure never leaves a rank waiting. */
static int funnel(gpubp_file *f, pstep *ps, int rc)
{
    gbp_comm *g = f->group;
    size_t S = ps->S, chunk = f->params.chunk_bytes;
    uint8_t *all = NULL;
    size_t *cnt = NULL;
    int crc = gbp_comm_gatherv(g, ps->size, S * sizeof *ps->size, 0, &all, &cnt);
    if (crc != GPUBP_OK) return crc;
    uint8_t *buf = gbp_malloc(chunk);
    if (!buf && rc == GPUBP_OK) rc = gbp_error(GPUBP_ERR_NOMEM, 0, "out of memory (funnel)");
    if (g->rank != 0) {
        int64_t st = rc;
        crc = gbp_comm_send(g, &st, sizeof st, 0);
        uint64_t at = 0;
        for (size_t j = 0; crc == GPUBP_OK && st == GPUBP_OK && j < S; j++) {
            for (uint64_t done = 0; crc == GPUBP_OK && done < ps->size[j];) {
                size_t n = ps->size[j] - done < chunk ? (size_t)(ps->size[j] - done) : chunk;
                /* a failed read still sends (zeros): the aggregator counts on the bytes */
                if (rc == GPUBP_OK) rc = gbp_pread_all(f->funnel_fd, buf, n, at, "funnel buffer");
                crc = gbp_comm_send(g, buf, n, 0);
                done += n;
                at += n;
            }
        }
    } else {
        uint64_t *pos = gbp_malloc(S * sizeof *pos);
        if (!pos && rc == GPUBP_OK) rc = gbp_error(GPUBP_ERR_NOMEM, 0, "out of memory (funnel)");
        for (size_t j = 0; pos && j < S; j++) pos[j] = f->pg_start[j] + ps->size[j];
        for (int r = 1; crc == GPUBP_OK && r < g->size; r++) {
            const uint64_t *rs = (const uint64_t *)(all + (size_t)r * S * sizeof *rs);
            int64_t st = 0;
            crc = gbp_comm_recv(g, &st, sizeof st, r);
            for (size_t j = 0; crc == GPUBP_OK && j < S; j++) {
                uint64_t sz;
                memcpy(&sz, rs + j, sizeof sz);
                for (uint64_t done = 0; st == GPUBP_OK && crc == GPUBP_OK && done < sz;) {
                    size_t n = sz - done < chunk ? (size_t)(sz - done) : chunk;
                    crc = gbp_comm_recv(g, buf, n, r);
                    char p[4200];
                    if (crc == GPUBP_OK && rc == GPUBP_OK && pos)
                        rc = gbp_pwrite_all(f->data_fd[j], buf, n, pos[j] + done,
                                            gbp_sub_name(f, (int)j, p, sizeof p));
                    done += n;
                }
                if (pos) pos[j] += sz;
            }
        }
        gbp_free(pos);
    }
    gbp_free(buf);
    gbp_free(all);
    gbp_free(cnt);
    return crc != GPUBP_OK ? crc : rc;
}

/* This rank's step block: its PG entries, variable and attribute index (absolute offsets). */
static int step_block(gpubp_file *f, pstep *ps, gbp_buf *md)
{
    uint64_t npg = 0;
    size_t base = md->len;
    gbp_buf_u64(md, 0);
    gbp_buf_u64(md, 0);
    for (size_t j = 0; j < ps->S; j++) {
        if (!ps->size[j]) continue;
        gbp_pg_entry(md, f->step, (uint32_t)f->comm->rank, f->pg_start[j]);
        npg++;
    }
    if (gbp_buf_ok(md)) {
        gbp_buf_set_u64(md, base, npg);
        gbp_buf_set_u64(md, base + 8, (uint64_t)(md->len - base - 16));
    }
    gbp_var_attr_index(f, md, ps->amd_off, ps->amd_pay);
    return gbp_buf_ok(md) ? GPUBP_OK : gbp_error(GPUBP_ERR_NOMEM, 0, "out of memory");
}

/* Rank 0: every rank's status, then (all OK) the merged metadata, committed. */
static int commit(gpubp_file *f, const uint8_t *all, const size_t *cnt, const char *what)
{
    gbp_comm *w = f->comm;
    GBP_FORWARD_IF_ERROR(gbp_comm_failures(w, all, cnt, what));
    const uint8_t **blk = gbp_malloc((size_t)w->size * sizeof *blk);
    size_t *len = gbp_malloc((size_t)w->size * sizeof *len);
    int rc = blk && len ? GPUBP_OK : gbp_error(GPUBP_ERR_NOMEM, 0, "out of memory");
    size_t at = 0;
    for (int r = 0; rc == GPUBP_OK && r < w->size; r++) {
        uint32_t ml;
        memcpy(&ml, all + at + 8, 4);
        blk[r] = all + at + 12 + ml;
        len[r] = cnt[r] - 12 - ml;
        at += cnt[r];
    }
    gbp_buf md;
    gbp_buf_init(&md);
    if (rc == GPUBP_OK) rc = bp4_merge_steps(&md, (size_t)w->size, blk, len, f->path);
    if (rc == GPUBP_OK) rc = gbp_commit_metadata(f, md.data, md.len);
    gbp_buf_free(&md);
    gbp_free(blk);
    gbp_free(len);
    return rc;
}

int gbp_pwriter_end_step(gpubp_file *f)
{
    gbp_comm *w = f->comm;
    pstep ps;
    int rc = pstep_alloc(f, &ps);
    if (rc == GPUBP_OK && f->failed_step)
        rc = gbp_error(f->failed_rc, 0, "%s", f->failed_msg);
    if (rc == GPUBP_OK) rc = layout(f, &ps);
    if (rc != GPUBP_OK)
        for (size_t j = 0; j < ps.S && ps.size; j++) ps.size[j] = 0;
    /* 1. where this rank's PGs go: after the group's earlier ranks' */
    int crc = GPUBP_ERR_NOMEM;
    if (ps.size) {
        memcpy(ps.off, ps.size, ps.S * sizeof *ps.off);
        for (size_t j = 0; j < ps.S; j++) ps.total[j] = (int64_t)ps.size[j];
        crc = gbp_comm_exscan(f->group, ps.off, ps.S);
        if (crc == GPUBP_OK) crc = gbp_comm_allreduce(f->group, ps.total, ps.S, GPUBP_COMM_SUM);
    }
    if (crc != GPUBP_OK) { /* the communicator failed: no agreement is possible */
        pstep_free(&ps);
        gbp_discard_step(f);
        return crc;
    }
    shift(f, &ps);
    /* 2. data */
    int lead = f->group->rank == 0;
    int funnel_here = f->params.funnel && !lead;
    if (funnel_here && rc == GPUBP_OK) {
        rc = new_memfd(&f->funnel_fd, "gpubp-funnel");
        if (rc == GPUBP_OK) rc = gbp_truncate(f->funnel_fd, 0, "funnel buffer");
        uint64_t at = 0;
        for (size_t j = 0; j < ps.S; j++) {
            ps.fd[j] = f->funnel_fd;
            ps.delta[j] = f->pg_start[j] - at;
            at += ps.size[j];
        }
    } else {
        for (size_t j = 0; j < ps.S; j++) ps.fd[j] = f->data_fd[j];
    }
    if (rc == GPUBP_OK && lead) rc = write_data_headers(f, &ps);
    if (rc == GPUBP_OK) rc = write_pgs(f, &ps);
    if (f->params.funnel) {
        crc = funnel(f, &ps, rc);
        if (crc != GPUBP_OK && rc == GPUBP_OK) rc = crc;
    }
    char p[4200];
    for (size_t j = 0; rc == GPUBP_OK && f->params.fsync && !funnel_here && j < ps.S; j++)
        rc = gbp_fdatasync(f->data_fd[j], gbp_sub_name(f, (int)j, p, sizeof p));
    /* 3. metadata: [status][message][step block] of every rank to rank 0 */
    gbp_buf rec;
    gbp_buf_init(&rec);
    gbp_buf_u64(&rec, (uint64_t)(int64_t)rc);
    if (rc != GPUBP_OK) {
        const char *m = gbp_error_message();
        size_t ml = strlen(m) < 400 ? strlen(m) : 400;
        gbp_buf_u32(&rec, (uint32_t)ml);
        gbp_buf_put(&rec, m, ml);
    } else {
        gbp_buf_u32(&rec, 0);
        int brc = step_block(f, &ps, &rec);
        if (brc != GPUBP_OK) { /* report it as this rank's failure */
            gbp_buf_reset(&rec);
            gbp_buf_u64(&rec, (uint64_t)(int64_t)brc);
            gbp_buf_u32(&rec, 13);
            gbp_buf_put(&rec, "out of memory", 13);
        }
    }
    uint8_t *all = NULL;
    size_t *cnt = NULL;
    char what[4300];
    snprintf(what, sizeof what, "gpubp_end_step: step %u of %s (not committed)", f->step - 1, f->path);
    crc = gbp_buf_ok(&rec) ? gbp_comm_gatherv(w, rec.data, rec.len, 0, &all, &cnt)
                           : gbp_error(GPUBP_ERR_NOMEM, 0, "out of memory");
    gbp_buf_free(&rec);
    if (crc == GPUBP_OK) {
        rc = w->rank == 0 ? commit(f, all, cnt, what) : GPUBP_OK;
        rc = gbp_comm_agree(w, rc, 0);
    } else {
        rc = crc;
    }
    gbp_free(all);
    gbp_free(cnt);
    /* 4. committed everywhere, or rolled back everywhere: the next step reuses the space */
    if (rc == GPUBP_OK) {
        for (size_t j = 0; j < ps.S; j++) {
            f->data_size[j] += (uint64_t)ps.total[j];
            if (ps.total[j]) f->data_has_header[j] = 1;
        }
        gbp_writer_step_done(f);
    }
    pstep_free(&ps);
    gbp_discard_step(f);
    return rc;
}
