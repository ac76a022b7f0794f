/* The parallel writer (gpubp_open_comm): every rank writes its own process group (PG) into its
 * group's subfiles at offsets given by a prefix sum of the PG sizes ("parallel"), or hands it to
 * the group's aggregator ("funnel"); rank 0 gathers every rank's step metadata, merges it as
 * ADIOS2's BP4 writer does (bp4_merge_steps) and commits md.0 and md.idx. docs/design.md §6. */
#include "engine/pwriter.h"

#include "engine/collective.h"
#include "engine/commit.h"
#include "engine/dataset.h"
#include "engine/handles.h"
#include "engine/writer.h"
#include "engine/zblock.h"

#include "format/bp4_encode.h"
#include "format/bp4_merge.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <sys/mman.h>
#include <unistd.h>

static int new_memfd(int *fd, const char *what)
{
    if (*fd >= 0) return GPUBP_OK;
    *fd = memfd_create(what, MFD_CLOEXEC);
    if (*fd < 0) return gbp_error(GPUBP_ERR_IO, errno, "memfd_create (%s): %s", what, strerror(errno));
    return GPUBP_OK;
}

/* Subfile groups: `aggregators=N` contiguous groups of ranks, or one group per node. A rank
 * that cannot hold its group (out of memory after the split) fails the open on every rank. */
static int make_groups(gpubp_file *f)
{
    gbp_comm *w = f->comm;
    int rc;
    if (f->params.aggregators > 0) {
        int64_t g = f->params.aggregators < w->size ? f->params.aggregators : w->size;
        f->pw.ngroups = (int)g;
        f->pw.group_id = (int)((int64_t)w->rank * g / w->size);
        rc = gbp_comm_split(w, f->pw.group_id, w->rank, &f->pw.group);
    } else {
        rc = gbp_comm_split_node(w, &f->pw.group);
    }
    GBP_FORWARD_IF_ERROR(gbp_comm_agree_all(w, rc, "gpubp_open (subfile groups)"));
    if (f->params.aggregators > 0) return GPUBP_OK;
    uint64_t lead = f->pw.group->rank == 0, g = lead;
    GBP_FORWARD_IF_ERROR(gbp_comm_exscan(w, &g, 1));
    GBP_FORWARD_IF_ERROR(gbp_comm_bcast(f->pw.group, &g, sizeof g, 0));
    int64_t n = (int64_t)lead;
    GBP_FORWARD_IF_ERROR(gbp_comm_allreduce(w, &n, 1, GPUBP_COMM_SUM));
    f->pw.group_id = (int)g;
    f->pw.ngroups = (int)n;
    return GPUBP_OK;
}

int gbp_pwriter_open(gpubp_file *f)
{
    gbp_comm *w = f->comm;
    f->pw.funnel_fd = f->pw.stage_fd = -1;
    GBP_FORWARD_IF_ERROR(make_groups(f));
    f->wr.sub_base = f->pw.group_id * f->wr.nsub;
    /* rank 0: the directory, md.0 and md.idx */
    int have = 0, rc = GPUBP_OK;
    if (w->rank == 0) rc = gbp_writer_open_metadata(f, &have);
    GBP_FORWARD_IF_ERROR(gbp_comm_agree(w, rc, 0));
    uint64_t st[2] = {(uint64_t)have, (uint64_t)f->wr.idx_records};
    GBP_FORWARD_IF_ERROR(gbp_comm_bcast(w, st, sizeof st, 0));
    have = (int)st[0];
    f->wr.idx_records = (size_t)st[1];
    f->wr.step = (uint32_t)f->wr.idx_records + 1;
    /* aggregators create their subfiles (emptied unless appending), then the others open them */
    int lead = f->pw.group->rank == 0;
    rc = gbp_open_subfiles(f, !have, lead);
    size_t S = (size_t)f->wr.nsub;
    uint64_t *sz = gbp_calloc(2 * S, sizeof *sz); /* before the agreement: the bcast needs it */
    if (!sz && rc == GPUBP_OK) rc = gbp_nomem();
    rc = gbp_comm_agree_all(w, rc, "gpubp_open (subfiles)");
    if (rc != GPUBP_OK) {
        gbp_free(sz);
        return rc;
    }
    for (size_t j = 0; sz && lead && j < S; j++) {
        sz[j] = f->wr.data_size[j];
        sz[S + j] = (uint64_t)f->wr.data_has_header[j];
    }
    rc = gbp_comm_bcast(f->pw.group, sz, 2 * S * sizeof *sz, 0);
    for (size_t j = 0; rc == GPUBP_OK && j < S; j++) {
        f->wr.data_size[j] = sz[j];
        f->wr.data_has_header[j] = (int)sz[S + j];
    }
    gbp_free(sz);
    if (rc == GPUBP_OK && !lead && !f->params.funnel) {
        for (size_t j = 0; rc == GPUBP_OK && j < S; j++) {
            char p[4200];
            rc = gbp_open_file(&f->wr.data_fd[j], gbp_sub_name(f, (int)j, p, sizeof p), O_RDWR, 0);
        }
    }
    return gbp_comm_agree_all(w, rc, "gpubp_open (subfiles)");
}

void gbp_pwriter_free(gpubp_file *f)
{
    if (f->pw.funnel_fd >= 0) close(f->pw.funnel_fd);
    if (f->pw.stage_fd >= 0) close(f->pw.stage_fd);
    f->pw.funnel_fd = f->pw.stage_fd = -1;
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
    if (wb->owned || gbp_kind_is_value(v->kind) || wb->payload_len == 0) return GPUBP_OK;
    size_t es = gbp_type_size(v->type), n = (size_t)wb->payload_len;
    uint8_t *buf = NULL;
    int rc = new_memfd(&f->pw.stage_fd, "gpubp-stage");
    if (rc == GPUBP_OK) rc = gbp_truncate(f->pw.stage_fd, 0, "staging buffer");
    if (rc != GPUBP_OK) return rc;
    uint64_t saved = wb->meta.payload_offset;
    wb->meta.payload_offset = 0;
    if (v->op) {
        rc = gbp_write_compressed(f, wb, f->pw.stage_fd, "compression buffer");
        int rc2 = gbp_mem_sync(f->mem); /* the GPU path's writes may still run */
        if (rc == GPUBP_OK) rc = rc2;
        n = (size_t)wb->payload_len;
    } else if (wb->space == GPUBP_MEM_HOST && gbp_box_is_contiguous(&wb->box)) {
        buf = gbp_malloc(n);
        if (!buf) rc = gbp_error(GPUBP_ERR_NOMEM, 0, "out of memory (%zu bytes to copy)", n);
        else {
            memcpy(buf, (const uint8_t *)wb->data + gbp_box_offset(&wb->box) * es, n);
            gbp_minmax(v->type, buf, n / es, wb->meta.mm, wb->meta.mm + 16, 0);
        }
    } else {
        rc = gbp_mem_write(f->mem, wb->space, f->pw.stage_fd, 0, wb->data, v->type, &wb->box,
                           wb->meta.mm, wb->meta.mm + 16);
        int rc2 = gbp_mem_sync(f->mem);
        if (rc == GPUBP_OK) rc = rc2;
    }
    wb->meta.payload_offset = saved;
    if (rc == GPUBP_OK && !buf) {
        buf = gbp_malloc(n ? n : 1);
        if (!buf) rc = gbp_error(GPUBP_ERR_NOMEM, 0, "out of memory (%zu bytes to copy)", n);
        else rc = gbp_pread_all(f->pw.stage_fd, buf, n, 0, "staging buffer");
    }
    if (rc != GPUBP_OK) {
        gbp_free(buf);
        return gbp_error_with_path(rc, f->path);
    }
    wb->owned = buf;
    return GPUBP_OK;
}

/* ---- the step ----------------------------------------------------------------------------
 * Failure rule: a rank that fails anywhere in end_step still takes part in every collective
 * operation and message that follows, so no rank ever waits for it. Everything that can fail on
 * one rank alone (allocations, layout, compression, staging) happens before the first collective,
 * whose group-wide sum also counts the ranks that failed so far: then no rank of the group writes
 * data or funnels it, and the metadata gather tells rank 0, which commits nothing. */

typedef struct pstep {
    size_t S;
    uint64_t *size;      /* this rank's PG bytes per stripe (0: no PG there) */
    uint64_t *off;       /* its offset in the group's PGs */
    int64_t *total;      /* the group's PG bytes per stripe */
    uint64_t *delta;     /* this rank writes stripe j at (absolute offset - delta[j]) ... */
    uint64_t *pos;       /* funnel aggregator: where the next PG of stripe j goes */
    uint64_t *msg;       /* funnel: [status][S sizes], one rank's first message */
    int *fd;             /* ... into fd[j] */
    uint64_t *amd_off, *amd_pay;
    uint8_t *chunk;      /* funnel: one message of PG bytes */
    uint8_t *block;      /* the arrays above, one allocation */
    int64_t group_failed; /* ranks of the group that failed before the data */
    gbp_buf tail0;
} pstep;

static void pstep_free(pstep *ps)
{
    gbp_free(ps->block);
    gbp_free(ps->chunk);
    gbp_buf_free(&ps->tail0);
}

/* All of the step's fixed-size state, in two allocations (none, on failure). */
static int pstep_alloc(gpubp_file *f, pstep *ps)
{
    memset(ps, 0, sizeof *ps);
    gbp_buf_init(&ps->tail0);
    size_t S = (size_t)f->wr.nsub, na = f->wr.nattrs + 1;
    size_t bytes = (6 * S + 1 + 2 * na) * sizeof(uint64_t) + S * sizeof(int);
    ps->S = S;
    ps->block = gbp_calloc(1, bytes);
    int funnel = f->params.funnel && f->pw.group->size > 1;
    if (funnel) ps->chunk = gbp_malloc(f->params.chunk_bytes);
    if (!ps->block || (funnel && !ps->chunk)) {
        pstep_free(ps);
        ps->block = ps->chunk = NULL;
        return gbp_error(GPUBP_ERR_NOMEM, 0, "out of memory (%zu bytes of step state)",
                         bytes + (funnel ? f->params.chunk_bytes : 0));
    }
    uint64_t *u = (uint64_t *)ps->block;
    ps->size = u;
    ps->off = u + S;
    ps->total = (int64_t *)(u + 2 * S);
    ps->delta = u + 3 * S;
    ps->pos = u + 4 * S;
    ps->msg = u + 5 * S;
    ps->amd_off = u + 6 * S + 1;
    ps->amd_pay = ps->amd_off + na;
    ps->fd = (int *)(ps->amd_pay + na);
    return GPUBP_OK;
}

/* The PGs laid out from offset 0 of each stripe: block offsets, attribute offsets and sizes. */
static int layout(gpubp_file *f, pstep *ps)
{
    int rc = GPUBP_OK;
    for (size_t i = 0; i < f->wr.nblocks && rc == GPUBP_OK; i++) {
        gbp_wblock *wb = &f->wr.blocks[i];
        if (wb->var->op) rc = gbp_pwriter_stage(f, wb); /* the compressed size first */
    }
    if (rc != GPUBP_OK) return rc;
    size_t hs = bp4_pg_head_size(strlen(GBP_IO_NAME), f->wr.step);
    for (size_t j = 0; j < ps->S; j++) {
        f->wr.pg_start[j] = 0;
        f->wr.cursor[j] = hs;
        f->wr.pg_nvars[j] = 0;
    }
    for (size_t i = 0; i < f->wr.nblocks; i++) {
        gbp_wblock *wb = &f->wr.blocks[i];
        gbp_advance_block(f, wb, gbp_assign_block(f, wb));
    }
    gbp_pg_tail(f, 0, &ps->tail0, ps->amd_off, ps->amd_pay);
    if (!gbp_buf_ok(&ps->tail0)) return gbp_nomem();
    for (size_t j = 0; j < ps->S; j++)
        if (j == 0 || f->wr.pg_nvars[j]) ps->size[j] = f->wr.cursor[j] + (j ? 16 : ps->tail0.len);
    return GPUBP_OK;
}

/* The group's sums: each rank's offsets (exscan of the PG sizes), the totals, and the number of
 * ranks that already failed. A rank that failed, even without its arrays, takes part with
 * zeros: the operations go in pieces of a stack buffer's size (one piece below 64 stripes). */
#define SUM_PIECE 64

static int group_sums(gpubp_file *f, pstep *ps, int failed)
{
    size_t n = ps->S + 1, S = ps->S;
    int mine = ps->size && !failed;
    for (size_t at = 0; at < n; at += SUM_PIECE) {
        size_t k = n - at < SUM_PIECE ? n - at : SUM_PIECE;
        uint64_t off[SUM_PIECE];
        int64_t tot[SUM_PIECE];
        for (size_t i = 0; i < k; i++) {
            size_t j = at + i;
            off[i] = j < S ? (mine ? ps->size[j] : 0) : (uint64_t)(failed != 0);
            tot[i] = (int64_t)off[i];
        }
        GBP_FORWARD_IF_ERROR(gbp_comm_exscan(f->pw.group, off, k));
        GBP_FORWARD_IF_ERROR(gbp_comm_allreduce(f->pw.group, tot, k, GPUBP_COMM_SUM));
        for (size_t i = 0; i < k; i++) {
            size_t j = at + i;
            if (j == S) ps->group_failed = tot[i];
            else if (mine) {
                ps->off[j] = off[i];
                ps->total[j] = tot[i];
            }
        }
    }
    return GPUBP_OK;
}

static void shift(gpubp_file *f, pstep *ps)
{
    for (size_t j = 0; j < ps->S; j++) {
        f->wr.pg_start[j] = f->wr.data_size[j] + ps->off[j];
        f->wr.cursor[j] += f->wr.pg_start[j];
    }
    for (size_t i = 0; i < f->wr.nblocks; i++) {
        gbp_wblock *wb = &f->wr.blocks[i];
        wb->meta.vmd_offset += f->wr.pg_start[wb->subfile];
        wb->meta.payload_offset += f->wr.pg_start[wb->subfile];
    }
    for (size_t i = 0; i < f->wr.nattrs; i++) {
        ps->amd_off[i] += f->wr.pg_start[0];
        ps->amd_pay[i] += f->wr.pg_start[0];
    }
}

/* This rank's PGs: payloads, [VMD headers, PG heads and tails, to ps->fd at ps->delta. */
static int write_pgs(gpubp_file *f, pstep *ps)
{
    int rc = GPUBP_OK;
    char p[4200];
    for (size_t i = 0; i < f->wr.nblocks && rc == GPUBP_OK; i++) {
        gbp_wblock *wb = &f->wr.blocks[i];
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
        if (!gbp_buf_ok(&pg)) rc = gbp_nomem();
        gbp_sub_name(f, (int)j, p, sizeof p);
        if (rc == GPUBP_OK)
            rc = gbp_pwrite_all(ps->fd[j], pg.data, pg.len, f->wr.pg_start[j] - ps->delta[j], p);
        if (rc == GPUBP_OK)
            rc = gbp_pwrite_all(ps->fd[j], tail, tl, f->wr.cursor[j] - ps->delta[j], p);
    }
    gbp_buf_free(&pg);
    return rc;
}

/* The aggregator writes the 64-byte header of each of its subfiles that gets its first PG. */
static int write_data_headers(gpubp_file *f, pstep *ps)
{
    int rc = GPUBP_OK;
    for (size_t j = 0; j < ps->S && rc == GPUBP_OK; j++) {
        if (f->wr.data_has_header[j] || !ps->total[j]) continue;
        uint8_t h[BP4_HEADER_SIZE];
        char p[4200];
        bp4_make_header(h, BP4_KIND_DATA, 0);
        rc = gbp_pwrite_all(f->wr.data_fd[j], h, sizeof h, 0, gbp_sub_name(f, (int)j, p, sizeof p));
    }
    return rc;
}

/* Funnel (only when no rank of the group failed before the data, so every rank has its buffers):
 * each non-aggregator sends [status][its S PG sizes], then, if its status is OK, its PGs in
 * chunks; the aggregator writes them after its own, rank by rank. A failure after the first
 * message changes nothing in the messages: a failed read sends zeros, a failed write still
 * receives. */
static int funnel(gpubp_file *f, pstep *ps, int rc)
{
    gbp_comm *g = f->pw.group;
    size_t S = ps->S, chunk = f->params.chunk_bytes, hl = (S + 1) * sizeof *ps->msg;
    int crc = GPUBP_OK;
    char p[4200];
    if (g->rank != 0) {
        ps->msg[0] = (uint64_t)(int64_t)rc;
        memcpy(ps->msg + 1, ps->size, S * sizeof *ps->size);
        crc = gbp_comm_send(g, ps->msg, hl, 0);
        uint64_t at = 0;
        for (size_t j = 0; crc == GPUBP_OK && rc == GPUBP_OK && j < S; j++) {
            for (uint64_t done = 0; crc == GPUBP_OK && done < ps->size[j];) {
                size_t n = ps->size[j] - done < chunk ? (size_t)(ps->size[j] - done) : chunk;
                int rrc = gbp_pread_all(f->pw.funnel_fd, ps->chunk, n, at, "funnel buffer");
                if (rrc != GPUBP_OK) {
                    if (rc == GPUBP_OK) rc = rrc; /* reported in the metadata gather */
                    memset(ps->chunk, 0, n);
                }
                crc = gbp_comm_send(g, ps->chunk, n, 0);
                done += n;
                at += n;
            }
            if (rc != GPUBP_OK) { /* finish the announced bytes with zeros */
                memset(ps->chunk, 0, chunk);
                for (size_t k = j + 1; crc == GPUBP_OK && k < S; k++)
                    for (uint64_t done = 0; crc == GPUBP_OK && done < ps->size[k];) {
                        size_t n = ps->size[k] - done < chunk ? (size_t)(ps->size[k] - done) : chunk;
                        crc = gbp_comm_send(g, ps->chunk, n, 0);
                        done += n;
                    }
                break;
            }
        }
        return crc != GPUBP_OK ? crc : rc;
    }
    for (size_t j = 0; j < S; j++) ps->pos[j] = f->wr.pg_start[j] + ps->size[j];
    for (int r = 1; crc == GPUBP_OK && r < g->size; r++) {
        crc = gbp_comm_recv(g, ps->msg, hl, r);
        int64_t st = crc == GPUBP_OK ? (int64_t)ps->msg[0] : GPUBP_OK;
        for (size_t j = 0; crc == GPUBP_OK && j < S; j++) {
            uint64_t sz = ps->msg[1 + j];
            for (uint64_t done = 0; st == GPUBP_OK && crc == GPUBP_OK && done < sz;) {
                size_t n = sz - done < chunk ? (size_t)(sz - done) : chunk;
                crc = gbp_comm_recv(g, ps->chunk, n, r);
                if (crc == GPUBP_OK && rc == GPUBP_OK)
                    rc = gbp_pwrite_all(f->wr.data_fd[j], ps->chunk, n, ps->pos[j] + done,
                                        gbp_sub_name(f, (int)j, p, sizeof p));
                done += n;
            }
            ps->pos[j] += sz;
        }
    }
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
        bp4_put_pg_entry(md, GBP_IO_NAME, f->wr.step, (uint32_t)f->comm->rank, f->wr.pg_start[j]);
        npg++;
    }
    if (gbp_buf_ok(md)) {
        gbp_buf_set_u64(md, base, npg);
        gbp_buf_set_u64(md, base + 8, (uint64_t)(md->len - base - 16));
    }
    gbp_var_attr_index(f, md, ps->amd_off, ps->amd_pay);
    return gbp_buf_ok(md) ? GPUBP_OK : gbp_nomem();
}

/* Rank 0's own failure while committing, named as such for every rank. */
static int rank0_failed(gbp_comm *w, int rc, const char *what, const char *doing)
{
    gbp_saved_error e;
    gbp_error_save(&e, rc, sizeof e.msg);
    return gbp_error(rc, e.native, "%s failed on 1 of %d ranks: rank 0 (%s): %s", what, w->size,
                     doing, e.msg);
}

/* Rank 0: every rank's status, then (all OK) the merged metadata, committed. */
static int commit(gpubp_file *f, const uint8_t *all, const size_t *cnt, const char *what)
{
    gbp_comm *w = f->comm;
    GBP_FORWARD_IF_ERROR(gbp_comm_failures(w, all, cnt, what));
    const uint8_t **blk = gbp_malloc((size_t)w->size * sizeof *blk);
    size_t *len = gbp_malloc((size_t)w->size * sizeof *len);
    int rc = blk && len ? GPUBP_OK : gbp_nomem();
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
    if (rc == GPUBP_OK) {
        rc = gbp_commit_metadata(f, md.data, md.len);
        if (rc != GPUBP_OK) rc = rank0_failed(w, rc, what, "committing the metadata");
    } else if (rc == GPUBP_ERR_NOMEM) {
        rc = rank0_failed(w, rc, what, "merging the metadata");
    }
    gbp_buf_free(&md);
    gbp_free(blk);
    gbp_free(len);
    return rc;
}

/* This rank's [status][message length][message] record when it has no step block. */
static size_t status_record(uint8_t *rec, size_t cap, int rc)
{
    const char *m = rc == GPUBP_OK ? "" : gbp_error_message();
    size_t ml = strlen(m) < cap - 12 ? strlen(m) : cap - 12;
    int64_t st = rc;
    uint32_t l32 = (uint32_t)ml;
    memcpy(rec, &st, 8);
    memcpy(rec + 8, &l32, 4);
    memcpy(rec + 12, m, ml);
    return 12 + ml;
}

int gbp_pwriter_end_step(gpubp_file *f)
{
    gbp_comm *w = f->comm;
    if (!f->pw.group) { /* see the end of this function */
        gbp_discard_step(f);
        return gbp_error(GPUBP_ERR_IO, 0, "gpubp_end_step: %s: a communicator operation failed "
                         "in an earlier step on this rank; no more steps can be written", f->path);
    }
    pstep ps;
    int rc = pstep_alloc(f, &ps);
    if (rc == GPUBP_OK && f->failed_step)
        rc = gbp_error(f->failed_rc, 0, "%s", f->failed_msg);
    if (rc == GPUBP_OK) rc = layout(f, &ps);
    /* 1. where this rank's PGs go (after the group's earlier ranks'), and whether any rank of
     * the group failed already. A failed operation makes this rank a failed one that still takes
     * part in what follows (assuming no other rank of the group failed): if the communicator
     * still works, rank 0 hears of it and every rank fails the step. */
    int crc = group_sums(f, &ps, rc != GPUBP_OK);
    if (crc != GPUBP_OK && rc == GPUBP_OK) rc = crc;
    int data = rc == GPUBP_OK && ps.group_failed == 0;
    if (data) shift(f, &ps);
    /* 2. data */
    int lead = f->pw.group->rank == 0;
    int funnel_here = f->params.funnel && !lead;
    if (data && funnel_here) {
        rc = new_memfd(&f->pw.funnel_fd, "gpubp-funnel");
        if (rc == GPUBP_OK) rc = gbp_truncate(f->pw.funnel_fd, 0, "funnel buffer");
        uint64_t at = 0;
        for (size_t j = 0; j < ps.S; j++) {
            ps.fd[j] = f->pw.funnel_fd;
            ps.delta[j] = f->wr.pg_start[j] - at;
            at += ps.size[j];
        }
    } else if (data) {
        for (size_t j = 0; j < ps.S; j++) ps.fd[j] = f->wr.data_fd[j];
    }
    if (data && rc == GPUBP_OK && lead) rc = write_data_headers(f, &ps);
    if (data && rc == GPUBP_OK) rc = write_pgs(f, &ps);
    if (f->params.funnel && ps.group_failed == 0 && f->pw.group->size > 1) {
        crc = funnel(f, &ps, rc);
        if (crc != GPUBP_OK && rc == GPUBP_OK) rc = crc;
    }
    char p[4200];
    for (size_t j = 0; data && rc == GPUBP_OK && f->params.fsync && !funnel_here && j < ps.S; j++)
        rc = gbp_fdatasync(f->wr.data_fd[j], gbp_sub_name(f, (int)j, p, sizeof p));
    /* 3. metadata: [status][message][step block] of every rank to rank 0 (a rank of a group
     * that failed sends its status alone) */
    gbp_buf rec;
    gbp_buf_init(&rec);
    uint8_t small[12 + 400];
    const uint8_t *send = small;
    size_t sendlen;
    if (rc != GPUBP_OK || !data) {
        sendlen = status_record(small, sizeof small, rc);
    } else {
        gbp_buf_u64(&rec, GPUBP_OK);
        gbp_buf_u32(&rec, 0);
        if (step_block(f, &ps, &rec) == GPUBP_OK) {
            send = rec.data;
            sendlen = rec.len;
        } else { /* this rank's failure */
            rc = gbp_error(GPUBP_ERR_NOMEM, 0, "out of memory (step metadata)");
            sendlen = status_record(small, sizeof small, rc);
        }
    }
    uint8_t *all = NULL;
    size_t *cnt = NULL;
    char what[4300];
    snprintf(what, sizeof what, "gpubp_end_step: step %u of %s (not committed)", f->wr.step - 1,
             f->path);
    crc = gbp_comm_gatherv(w, send, sendlen, 0, &all, &cnt);
    gbp_buf_free(&rec);
    /* rank 0 decides (a rank whose gather failed still learns the outcome) */
    rc = w->rank != 0 ? GPUBP_OK
         : crc != GPUBP_OK ? rank0_failed(w, crc, what, "gathering the metadata")
                           : commit(f, all, cnt, what);
    unsigned long before = gbp_comm_failures_seen();
    rc = gbp_comm_agree(w, rc, 0);
    gbp_free(all);
    gbp_free(cnt);
    if (gbp_comm_failures_seen() != before) {
        /* this rank cannot know whether the step was committed: it writes no more steps, so
         * that it never overwrites committed data at offsets the others have moved past */
        gbp_comm_free(f->pw.group);
        f->pw.group = NULL;
    }
    /* 4. committed everywhere, or rolled back everywhere: the next step reuses the space */
    if (rc == GPUBP_OK) {
        for (size_t j = 0; j < ps.S; j++) {
            f->wr.data_size[j] += (uint64_t)ps.total[j];
            if (ps.total[j]) f->wr.data_has_header[j] = 1;
        }
        gbp_writer_step_done(f);
    }
    pstep_free(&ps);
    gbp_discard_step(f);
    return rc;
}
