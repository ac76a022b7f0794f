/* A writer's step: begin, the PG heads and tails and the md.0 step block, the commit record
 * (data, then md.0, then the md.idx record: the step is visible to readers once its record is
 * written), the asynchronous commit, end_step. */
#include "engine/commit.h"

#include "engine/dataset.h"
#include "engine/writer.h"

#include "compress/blosczlib.h"
#include "format/bp4_encode.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

int gbp_writer_begin_step(gpubp_file *f)
{
    GBP_FORWARD_IF_ERROR(gbp_writer_broken(f));
    f->in_step = 1;
    f->wr.steps_begun++;
    f->failed_step = 0;
    f->wr.nblocks = 0;
    for (size_t i = 0; i < f->nvars; i++) f->vars[i]->in_step = 0;
    size_t hs = bp4_pg_head_size(strlen(GBP_IO_NAME), f->wr.step);
    for (int k = 0; k < f->wr.nsub; k++) {
        f->wr.pg_start[k] = f->wr.data_size[k];
        f->wr.cursor[k] = f->wr.pg_start[k] + hs;
        f->wr.pg_nvars[k] = 0;
    }
    return GPUBP_OK;
}

void gbp_pg_tail(gpubp_file *f, int k, gbp_buf *tail, uint64_t *amd_off, uint64_t *amd_pay)
{
    size_t ndirty = gbp_dirty_attrs(f);
    gbp_buf_reset(tail);
    if (k == 0 && ndirty) {
        gbp_buf_u32(tail, (uint32_t)ndirty);
        gbp_buf_u64(tail, 0); /* patched: attribute bytes including these 8 */
        for (size_t i = 0; i < f->wr.nattrs; i++) {
            gbp_attr_def *a = &f->wr.attrs[i];
            if (!a->dirty) continue;
            size_t amd_at = tail->len, pay;
            bp4_put_amd(tail, a->member_id, a->name, a->type, a->data, a->n,
                        (const char *const *)a->strings, &pay);
            amd_off[i] = f->wr.cursor[k] + amd_at;
            amd_pay[i] = f->wr.cursor[k] + pay;
        }
        if (gbp_buf_ok(tail)) gbp_buf_set_u64(tail, 4, (uint64_t)(tail->len - 4));
    } else {
        gbp_buf_zero(tail, 12);
    }
    gbp_buf_put(tail, "PGI]", 4);
}

void gbp_pg_head(gpubp_file *f, int k, gbp_buf *pg, size_t tail_len)
{
    size_t hs = bp4_pg_head_size(strlen(GBP_IO_NAME), f->wr.step);
    size_t base = pg->len;
    size_t lenat = bp4_pg_head(pg, 0, GBP_IO_NAME, f->wr.step);
    uint64_t vars_len = f->wr.cursor[k] - (f->wr.pg_start[k] + hs);
    uint64_t end = f->wr.cursor[k] + tail_len;
    if (!gbp_buf_ok(pg)) return;
    gbp_buf_set_u64(pg, lenat, end - (f->wr.pg_start[k] + 4));
    gbp_buf_set_u32(pg, base + hs - 12, f->wr.pg_nvars[k]);
    gbp_buf_set_u64(pg, base + hs - 8, vars_len);
}

void gbp_var_attr_index(gpubp_file *f, gbp_buf *md, const uint64_t *amd_off,
                        const uint64_t *amd_pay)
{
    size_t vhead = md->len;
    uint32_t nv = 0;
    gbp_buf_u32(md, 0);
    gbp_buf_u64(md, 0);
    for (size_t i = 0; i < f->nvars; i++) {
        gpubp_variable *v = f->vars[i];
        if (!v->in_step) continue;
        uint64_t nb = 0;
        for (size_t j = 0; j < f->wr.nblocks; j++) nb += f->wr.blocks[j].var == v;
        size_t at = bp4_entry_begin(md, v->member_id, v->name, v->type, 0, nb);
        for (size_t j = 0; j < f->wr.nblocks; j++) {
            gbp_wblock *wb = &f->wr.blocks[j];
            if (wb->var != v) continue;
            wb->meta.dims = wb->dimstore;
            wb->meta.op = wb->meta.op ? &wb->opstore : NULL;
            bp4_put_var_charset(md, v->type, v->kind, &wb->meta);
        }
        if (gbp_buf_ok(md)) bp4_entry_end(md, at);
        nv++;
    }
    if (!gbp_buf_ok(md)) return;
    gbp_buf_set_u32(md, vhead, nv);
    gbp_buf_set_u64(md, vhead + 4, (uint64_t)(md->len - vhead - 12));
    size_t ahead = md->len;
    gbp_buf_u32(md, (uint32_t)gbp_dirty_attrs(f));
    gbp_buf_u64(md, 0);
    for (size_t i = 0; i < f->wr.nattrs; i++) {
        gbp_attr_def *a = &f->wr.attrs[i];
        if (!a->dirty) continue;
        size_t at = bp4_entry_begin(md, a->member_id, a->name, a->type, 1, 1);
        bp4_put_attr_charset(md, a->type, f->wr.step, (uint32_t)f->wr.sub_base, amd_off[i],
                             amd_pay[i], a->data, a->n, (const char *const *)a->strings);
        if (gbp_buf_ok(md)) bp4_entry_end(md, at);
    }
    if (gbp_buf_ok(md)) gbp_buf_set_u64(md, ahead + 4, (uint64_t)(md->len - ahead - 12));
}

/* The writes that commit a step, prepared by the caller and carried out then (commit_write) or
 * by an I/O thread once the step's data is written (async_commit=1). */
typedef struct commit_rec {
    uint8_t *md;            /* the step's md.0 block, after the md.0 header for the first */
    size_t md_len;
    uint64_t md_off, md_end;
    uint8_t idx[BP4_HEADER_SIZE + BP4_IDX_RECORD_SIZE];
    size_t idx_len;
    uint64_t idx_off;
    int md0_fd, idx_fd, fsync;
    uint8_t *defer;         /* async_commit: the step's deferred data-file bytes, written first */
    gbp_deferred *dspans;
    size_t ndspans;
    int nsync;              /* fsync=1: data subfiles flushed first */
    int sync[];             /* their descriptors, then their numbers (data.N) */
} commit_rec;

/* Prepares the commit of the md.0 block blk of the step f->wr.step, and (fsync=1) the flush of
 * the subfiles whose `flush[k]` is set (flush NULL: none). NULL when out of memory. */
static commit_rec *commit_prepare(gpubp_file *f, const uint8_t *blk, size_t len, const int *flush)
{
    int nsync = 0;
    for (int k = 0; flush && f->params.fsync && k < f->wr.nsub; k++) nsync += flush[k] != 0;
    size_t sz = sizeof(commit_rec) + (size_t)(2 * nsync) * sizeof(int);
    commit_rec *c = gbp_calloc(1, sz);
    if (!c) return NULL;
    int md_header = f->wr.idx_records == 0;
    c->md_len = (md_header ? BP4_HEADER_SIZE : 0) + len;
    c->md = gbp_malloc(c->md_len ? c->md_len : 1);
    if (!c->md) {
        gbp_free(c);
        return NULL;
    }
    if (md_header) bp4_make_header(c->md, BP4_KIND_METADATA, 0);
    memcpy(c->md + (md_header ? BP4_HEADER_SIZE : 0), blk, len);
    /* the three pointers of the record follow the step block's section lengths */
    uint64_t pglen = gbp_ld64(blk + 8);
    uint64_t varlen = gbp_ld64(blk + 16 + pglen + 4);
    uint64_t base = md_header ? BP4_HEADER_SIZE : f->md0_size;
    bp4_idx_record r = {0};
    r.step = f->wr.step;
    r.pg_off = base;
    r.var_off = base + 16 + pglen;
    r.attr_off = r.var_off + 12 + varlen;
    r.end = base + len;
    r.timestamp = (uint64_t)time(NULL);
    c->md_off = md_header ? 0 : base;
    c->md_end = r.end;
    if (f->wr.idx_records == 0) {
        bp4_make_header(c->idx, BP4_KIND_INDEX, 1);
        c->idx_len = BP4_HEADER_SIZE;
    }
    bp4_make_idx_record(c->idx + c->idx_len, &r);
    c->idx_len += BP4_IDX_RECORD_SIZE;
    c->idx_off =
        f->wr.idx_records == 0 ? 0 : BP4_HEADER_SIZE + f->wr.idx_records * BP4_IDX_RECORD_SIZE;
    c->md0_fd = f->md0_fd;
    c->idx_fd = f->wr.idx_fd;
    /* the deferred bytes are the record's now */
    c->defer = f->wr.defer.data;
    c->dspans = f->wr.dspans;
    c->ndspans = f->wr.ndspans;
    gbp_buf_init(&f->wr.defer);
    f->wr.dspans = NULL;
    f->wr.ndspans = f->wr.cap_dspans = 0;
    c->fsync = f->params.fsync;
    c->nsync = nsync;
    for (int k = 0, i = 0; i < nsync; k++) {
        if (!flush[k]) continue;
        c->sync[i] = f->wr.data_fd[k];
        c->sync[nsync + i++] = f->wr.sub_base + k;
    }
    return c;
}

static void commit_free(void *vc)
{
    commit_rec *c = vc;
    if (!c) return;
    gbp_free(c->md);
    gbp_free(c->defer);
    gbp_free(c->dspans);
    gbp_free(c);
}

/* The dataset's path for the messages of an asynchronous commit. */
typedef struct commit_job {
    commit_rec *rec;
    char path[4096];
} commit_job;

static int commit_write(const commit_rec *c, const char *path)
{
    char mp[4200], ip[4200], dp[4200];
    int rc = GPUBP_OK;
    for (size_t i = 0; i < c->ndspans && rc == GPUBP_OK; i++) {
        const gbp_deferred *d = &c->dspans[i];
        snprintf(dp, sizeof dp, "%s/data.%d", path, d->num);
        rc = gbp_pwrite_all(d->fd, c->defer + d->at, d->len, d->off, dp);
    }
    for (int i = 0; i < c->nsync && rc == GPUBP_OK; i++) {
        snprintf(dp, sizeof dp, "%s/data.%d", path, c->sync[c->nsync + i]);
        rc = gbp_fdatasync(c->sync[i], dp);
    }
    snprintf(mp, sizeof mp, "%s/md.0", path);
    snprintf(ip, sizeof ip, "%s/md.idx", path);
    if (rc == GPUBP_OK) rc = gbp_pwrite_all(c->md0_fd, c->md, c->md_len, c->md_off, mp);
    if (rc == GPUBP_OK && c->fsync) rc = gbp_fdatasync(c->md0_fd, mp);
    /* md.idx: the commit point */
    if (rc == GPUBP_OK) rc = gbp_pwrite_all(c->idx_fd, c->idx, c->idx_len, c->idx_off, ip);
    if (rc == GPUBP_OK && c->fsync) rc = gbp_fdatasync(c->idx_fd, ip);
    return rc;
}

static int commit_job_run(void *vc)
{
    commit_job *j = vc;
    return commit_write(j->rec, j->path);
}

static void commit_job_free(void *vc)
{
    commit_job *j = vc;
    commit_free(j->rec);
    gbp_free(j);
}

int gbp_commit_metadata(gpubp_file *f, const uint8_t *blk, size_t len)
{
    commit_rec *c = commit_prepare(f, blk, len, NULL);
    GBP_CHECK_ALLOC(c);
    int rc = commit_write(c, f->path);
    if (rc == GPUBP_OK) f->md0_size = c->md_end;
    commit_free(c);
    return rc;
}

/* After a committed step: the counters every rank keeps. */
void gbp_writer_step_done(gpubp_file *f)
{
    f->wr.idx_records++;
    f->wr.step++;
    for (size_t i = 0; i < f->wr.nattrs; i++) f->wr.attrs[i].dirty = 0;
    for (size_t i = 0; i < f->nvars; i++)
        if (f->vars[i]->in_step) f->vars[i]->steps_written++;
}

/* async_commit: the commit of an earlier step failed (found by gbp_mem_commit_wait with status
 * prev and its message). The writer stops: the steps before that one stay readable, later calls
 * return this failure. Every transfer is drained first. */
static int gbp_commit_async_broken(gpubp_file *f, int prev)
{
    gbp_saved_error e;
    gbp_error_save(&e, prev, sizeof e.msg);
    (void)gbp_mem_sync(f->mem);
    f->wr.broken = 1;
    f->wr.broken_rc = prev;
    f->wr.idx_records = f->wr.async_safe_records;
    /* steps numbered from 0, as the API counts; the failed one is async_pending_step */
    char kept[64] = "no step is readable";
    if (f->wr.async_pending_step > 0)
        snprintf(kept, sizeof kept, "steps 0 to %u stay readable", f->wr.async_pending_step - 1);
    snprintf(f->wr.broken_msg, sizeof f->wr.broken_msg,
             "%.400s: step %u was not committed (async_commit): %.400s; the writer stops, %.60s", f->path,
             f->wr.async_pending_step, e.msg, kept);
    return gbp_error(prev, 0, "%s", f->wr.broken_msg);
}

/* async_commit, a failure of this step (rc, its message current): the transfers still running
 * are drained, so that nothing writes where the next step will; an earlier step's failed commit
 * takes precedence. */
static int gbp_commit_async_fail(gpubp_file *f, int rc)
{
    gbp_saved_error e;
    gbp_error_save(&e, rc, sizeof e.msg);
    (void)gbp_mem_sync(f->mem);
    int prev = gbp_mem_commit_wait(f->mem);
    if (prev != GPUBP_OK) return gbp_commit_async_broken(f, prev);
    return gbp_error_restore(&e, rc);
}

int gbp_writer_broken(gpubp_file *f)
{
    return f->wr.broken ? gbp_error(f->wr.broken_rc, 0, "%s", f->wr.broken_msg) : GPUBP_OK;
}

int gbp_writer_commit_wait(gpubp_file *f)
{
    if (!f->wr.async || f->wr.broken) return gbp_writer_broken(f);
    int prev = gbp_mem_commit_wait(f->mem);
    return prev != GPUBP_OK ? gbp_commit_async_broken(f, prev) : GPUBP_OK;
}

int gbp_writer_end_step(gpubp_file *f)
{
    if (f->wr.broken) {
        gbp_discard_step(f);
        return gbp_writer_broken(f);
    }
    int rc = gbp_writer_perform(f);
    if (rc != GPUBP_OK || f->failed_step) {
        if (rc == GPUBP_OK)
            rc = gbp_error(GPUBP_ERR_IO, 0, "step %u of %s was not committed: an earlier put failed",
                           f->wr.step - 1, f->path); /* numbered from 0, as the API counts */
        if (f->wr.async) rc = gbp_commit_async_fail(f, rc);
        gbp_discard_step(f);
        return rc;
    }
    gbp_buf pg, tail, md;
    gbp_buf_init(&pg);
    gbp_buf_init(&tail);
    gbp_buf_init(&md);
    uint64_t *amd_off = gbp_calloc(f->wr.nattrs + 1, sizeof *amd_off);
    uint64_t *amd_pay = gbp_calloc(f->wr.nattrs + 1, sizeof *amd_pay);
    int *flush = gbp_calloc((size_t)f->wr.nsub, sizeof *flush);
    if (!amd_off || !amd_pay || !flush) rc = gbp_nomem();
    /* 1. data: each subfile's PG head and tail (attributes go to data.0); md gets the PG index */
    uint64_t npg = 0;
    gbp_buf_u64(&md, 0);
    gbp_buf_u64(&md, 0);
    for (int k = 0; k < f->wr.nsub && rc == GPUBP_OK; k++) {
        if (k > 0 && f->wr.pg_nvars[k] == 0) continue;
        npg++;
        gbp_pg_tail(f, k, &tail, amd_off, amd_pay);
        gbp_buf_reset(&pg);
        if (!f->wr.data_has_header[k]) {
            uint8_t h[BP4_HEADER_SIZE];
            bp4_make_header(h, BP4_KIND_DATA, 0);
            gbp_buf_put(&pg, h, sizeof h);
        }
        gbp_pg_head(f, k, &pg, tail.len);
        if (!gbp_buf_ok(&pg) || !gbp_buf_ok(&tail)) {
            rc = gbp_nomem();
            break;
        }
        uint64_t at = f->wr.data_has_header[k] ? f->wr.pg_start[k] : 0;
        rc = gbp_writer_data_bytes(f, k, at, pg.data, pg.len);
        if (rc == GPUBP_OK) rc = gbp_writer_data_bytes(f, k, f->wr.cursor[k], tail.data, tail.len);
        f->wr.cursor[k] += tail.len; /* from here on: the end of this subfile's PG */
        flush[k] = 1;
        bp4_put_pg_entry(&md, GBP_IO_NAME, f->wr.step, 0, f->wr.pg_start[k]);
    }
    if (gbp_buf_ok(&md)) {
        gbp_buf_set_u64(&md, 0, npg);
        gbp_buf_set_u64(&md, 8, (uint64_t)(md.len - 16));
    }
    /* 2. md.0: variable and attribute index; 3. md.idx (with fsync=1 the subfiles are flushed
     * first) — now, or with async_commit=1 on an I/O thread once the step's data is written */
    if (rc == GPUBP_OK) gbp_var_attr_index(f, &md, amd_off, amd_pay);
    if (rc == GPUBP_OK && !gbp_buf_ok(&md)) rc = gbp_nomem();
    commit_rec *c = NULL;
    if (rc == GPUBP_OK) {
        c = commit_prepare(f, md.data, md.len, flush);
        if (!c) rc = gbp_nomem();
    }
    uint64_t md_end = c ? c->md_end : 0;
    if (rc == GPUBP_OK && f->wr.async) {
        commit_job *cj = gbp_malloc(sizeof *cj);
        if (!cj) rc = gbp_nomem();
        int prev = gbp_mem_commit_wait(f->mem); /* one commit queued at a time */
        if (prev != GPUBP_OK) {
            gbp_free(cj);
            rc = gbp_commit_async_broken(f, prev);
        } else if (cj) {
            cj->rec = c;
            snprintf(cj->path, sizeof cj->path, "%s", f->path);
            c = NULL; /* the job's now */
            f->wr.async_safe_records = f->wr.idx_records;
            f->wr.async_pending_step = f->wr.step - 1;
            rc = gbp_mem_commit_async(f->mem, commit_job_run, cj, commit_job_free);
        }
        if (rc != GPUBP_OK && !f->wr.broken) rc = gbp_commit_async_fail(f, rc);
    } else if (rc == GPUBP_OK) {
        rc = commit_write(c, f->path);
    } else if (f->wr.async && !f->wr.broken) {
        rc = gbp_commit_async_fail(f, rc);
    }
    commit_free(c);
    if (rc == GPUBP_OK) {
        f->md0_size = md_end;
        for (int k = 0; k < f->wr.nsub; k++) {
            if (k > 0 && f->wr.pg_nvars[k] == 0) continue;
            f->wr.data_has_header[k] = 1;
            f->wr.data_size[k] = f->wr.cursor[k];
        }
        gbp_writer_step_done(f);
    }
    gbp_free(amd_off);
    gbp_free(amd_pay);
    gbp_free(flush);
    gbp_buf_free(&pg);
    gbp_buf_free(&tail);
    gbp_buf_free(&md);
    gbp_discard_step(f);
    return rc;
}
