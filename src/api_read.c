/* The reader: open (md.idx, md.0, the index), the step loop, variable queries, selections and
 * gets, attributes. */
#include "internal.h"

#include "blosczlib.h"
#include "box.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>


#define GBP_MAX_SUBFILES 1048576

typedef struct gbp_pending_get {
    gpubp_variable *var;
    gbp_sel sel;
    void *data;
} gbp_pending_get;

/* ---- open and the index ------------------------------------------------------------------- */

#define GBP_MD0_WINDOW ((size_t)4 << 20)
/* Sanity bounds against files that claim huge sizes: checked before anything is allocated. */
#define GBP_MAX_STEP_METADATA ((uint64_t)256 << 20)
#define GBP_MAX_INDEX_BYTES ((uint64_t)1 << 30)

static int open_md0(gpubp_file *f)
{
    if (f->md0_fd >= 0) return GPUBP_OK;
    char *p = gbp_path_join(f->path, "md.0");
    GBP_CHECK_ALLOC(p);
    int rc = gbp_open_file(&f->md0_fd, p, O_RDONLY, 0);
    if (rc == GPUBP_ERR_NOT_FOUND)
        rc = gbp_error(GPUBP_ERR_FORMAT, 0, "%s: md.idx lists steps but md.0 is missing", f->path);
    gbp_free(p);
    return rc;
}

int gbp_reader_md0(void *ctx, uint64_t off, size_t n, uint8_t *buf)
{
    gpubp_file *f = ctx;
    if (f->comm) { /* parallel readers: md.0 as rank 0 broadcast it */
        if (off > f->md0_all_len || n > f->md0_all_len - off)
            return gbp_error(GPUBP_ERR_FORMAT, 0, "%s/md.0: %zu bytes at offset %llu run past "
                             "its end (%zu)", f->path, n, (unsigned long long)off, f->md0_all_len);
        memcpy(buf, f->md0_all + off, n);
        return GPUBP_OK;
    }
    if (!f->remote) GBP_FORWARD_IF_ERROR(open_md0(f));
    if (off > f->md0_size || n > f->md0_size - off)
        return gbp_error(GPUBP_ERR_FORMAT, 0, "%s/md.0: %zu bytes at offset %llu run past its end "
                         "(%llu)", f->path, n, (unsigned long long)off,
                         (unsigned long long)f->md0_size);
    if (f->remote) return gbp_remote_pread(f->remote, "md.0", buf, n, off);
    char what[4200];
    snprintf(what, sizeof what, "%s/md.0", f->path);
    return gbp_pread_all(f->md0_fd, buf, n, off, what);
}

static int adopt_index(gpubp_file *f, uint8_t *idx, size_t ilen, uint64_t msize,
                       const char *idxp);
static int load_metadata_comm(gpubp_file *f);

/* (Re)reads md.idx and checks every complete record against md.0's size. Records already parsed
 * into the index are not parsed again. md.0 itself is read step by step (parse_until). */
static int load_metadata(gpubp_file *f)
{
    char *idxp = gbp_path_join(f->path, "md.idx");
    int rc = idxp ? GPUBP_OK : gbp_nomem();
    uint8_t *idx = NULL;
    size_t ilen = 0;
    if (rc == GPUBP_OK && !f->remote) {
        struct stat st;
        if (stat(idxp, &st) == 0 && (uint64_t)st.st_size > GBP_MAX_INDEX_BYTES)
            rc = gbp_error(GPUBP_ERR_FORMAT, 0, "%s: %llu bytes is larger than any index (%llu "
                           "bytes = %llu steps)", idxp, (unsigned long long)st.st_size,
                           (unsigned long long)GBP_MAX_INDEX_BYTES,
                           (unsigned long long)(GBP_MAX_INDEX_BYTES / BP4_IDX_RECORD_SIZE));
    }
    if (rc == GPUBP_OK && f->remote) {
        uint64_t isz = 0;
        rc = gbp_remote_size(f->remote, "md.idx", &isz);
        if (rc == GPUBP_OK && isz > GBP_MAX_INDEX_BYTES)
            rc = gbp_error(GPUBP_ERR_FORMAT, 0, "%s: md.idx of %llu bytes is too large", f->path,
                           (unsigned long long)isz);
        if (rc == GPUBP_OK) rc = gbp_remote_read_file(f->remote, "md.idx", &idx, &ilen);
        if (rc == GPUBP_ERR_NOT_FOUND) {
            rc = GPUBP_OK;
            ilen = 0;
        }
    } else if (rc == GPUBP_OK) {
        rc = gbp_read_file(idxp, &idx, &ilen, 0);
        if (rc == GPUBP_ERR_NOT_FOUND) {
            rc = GPUBP_OK;
            ilen = 0;
        }
    }
    if (rc == GPUBP_OK && ilen > 0) rc = bp4_check_idx_header(idx, ilen, idxp);
    uint64_t msize = 0;
    if (rc == GPUBP_OK && ilen >= BP4_HEADER_SIZE + BP4_IDX_RECORD_SIZE && f->remote) {
        rc = gbp_remote_size(f->remote, "md.0", &msize);
    } else if (rc == GPUBP_OK && ilen >= BP4_HEADER_SIZE + BP4_IDX_RECORD_SIZE) {
        rc = open_md0(f);
        if (rc == GPUBP_OK) rc = gbp_file_size(f->md0_fd, &msize, f->path);
    }
    if (rc == GPUBP_OK) {
        rc = adopt_index(f, idx, ilen, msize, idxp);
        idx = NULL;
    }
    gbp_free(idx);
    gbp_free(idxp);
    return rc;
}

/* Checks md.idx (idx, ilen bytes; taken over) against md.0's size msize and installs it. */
static int adopt_index(gpubp_file *f, uint8_t *idx, size_t ilen, uint64_t msize,
                       const char *idxp)
{
    int rc = GPUBP_OK;
    size_t n = 0;
    if (rc == GPUBP_OK && ilen > 0) {
        rc = bp4_check_idx_header(idx, ilen, idxp);
        n = ilen >= BP4_HEADER_SIZE ? (ilen - BP4_HEADER_SIZE) / BP4_IDX_RECORD_SIZE : 0;
    }
    bp4_idx_record *recs = NULL;
    if (rc == GPUBP_OK && n > 0) {
        recs = gbp_malloc(n * sizeof *recs);
        if (!recs) rc = gbp_nomem();
    }
    for (size_t i = 0; rc == GPUBP_OK && i < n; i++) {
        rc = bp4_parse_idx_record(idx, ilen, i, msize, &recs[i], idxp);
        if (rc == GPUBP_OK && recs[i].rank != 0)
            rc = gbp_error(GPUBP_ERR_FORMAT, 0, "%s: record %zu has rank %llu, expected 0", idxp, i,
                           (unsigned long long)recs[i].rank);
        if (rc == GPUBP_OK && i > 0 && recs[i].pg_off < recs[i - 1].end)
            rc = gbp_error(GPUBP_ERR_FORMAT, 0,
                           "%s: record %zu points into the metadata of the step before it", idxp, i);
    }
    if (rc == GPUBP_OK && n < f->nrecords)
        rc = gbp_error(GPUBP_ERR_FORMAT, 0, "%s shrank from %zu to %zu steps while open", idxp,
                       f->nrecords, n);
    if (rc == GPUBP_OK) {
        gbp_free(f->idx);
        gbp_free(f->records);
        f->idx = idx;
        f->idx_len = ilen;
        f->records = recs;
        f->nrecords = n;
        f->md0_size = msize;
        f->writer_active = ilen >= BP4_HEADER_SIZE ? idx[38] != 0 : 1;
        idx = NULL;
        recs = NULL;
    }
    gbp_free(idx);
    gbp_free(recs);
    return rc;
}

/* Parallel readers: rank 0 reads md.idx and the new part of md.0 and broadcasts both; every rank
 * then checks and installs the same index, and serves md.0 from memory. Every rank ends with the
 * same records, or (any failure) with the ones it had before: begin_step takes the same branch
 * on every rank only if they agree on what they have. */
static int load_metadata_comm(gpubp_file *f)
{
    gbp_comm *c = f->comm;
    int rc = GPUBP_OK;
    uint64_t hdr[3] = {0, 0, 0}; /* md.idx bytes, md.0 end of the last record, writer active */
    size_t old = f->md0_all_len, old_n = f->nrecords;
    uint64_t old_size = f->md0_size;
    int old_active = f->writer_active;
    if (c->rank == 0) {
        rc = load_metadata(f);
        uint64_t end = f->nrecords ? f->records[f->nrecords - 1].end : 0;
        if (rc == GPUBP_OK && end > old) {
            uint8_t *m = gbp_realloc(f->md0_all, (size_t)end);
            if (!m) rc = gbp_error(GPUBP_ERR_NOMEM, 0, "out of memory (%llu bytes of md.0)",
                                   (unsigned long long)end);
            else f->md0_all = m;
            char what[4200];
            snprintf(what, sizeof what, "%s/md.0", f->path);
            if (rc == GPUBP_OK)
                rc = gbp_pread_all(f->md0_fd, m + old, (size_t)(end - old), old, what);
        }
        hdr[0] = f->idx_len;
        hdr[1] = end > old ? end : old;
        hdr[2] = (uint64_t)f->writer_active;
    }
    rc = gbp_comm_agree(c, rc, 0);
    if (rc == GPUBP_OK) rc = gbp_comm_bcast(c, hdr, sizeof hdr, 0);
    uint8_t *idx = NULL, *m = f->md0_all;
    int agreed = rc != GPUBP_OK; /* rank 0's failure is every rank's already */
    if (!agreed) {
        idx = c->rank == 0 ? f->idx : gbp_malloc(hdr[0] ? (size_t)hdr[0] : 1);
        if (c->rank != 0) m = gbp_realloc(f->md0_all, hdr[1] ? (size_t)hdr[1] : 1);
        if (c->rank != 0 && m) f->md0_all = m;
        /* all ranks agree that the buffers are there before the broadcasts fill them */
        if ((hdr[0] && !idx) || (hdr[1] && !m))
            rc = gbp_error(GPUBP_ERR_NOMEM, 0, "out of memory (%llu bytes of metadata)",
                           (unsigned long long)(hdr[0] + hdr[1]));
        rc = gbp_comm_agree_all(c, rc, "reading the metadata");
        agreed = rc != GPUBP_OK;
    }
    if (rc == GPUBP_OK) rc = gbp_comm_bcast(c, idx, (size_t)hdr[0], 0);
    if (rc == GPUBP_OK && hdr[1] > old)
        rc = gbp_comm_bcast(c, m + old, (size_t)(hdr[1] - old), 0);
    if (c->rank != 0 && rc == GPUBP_OK) {
        char *idxp = gbp_path_join(f->path, "md.idx");
        rc = idxp ? adopt_index(f, idx, (size_t)hdr[0], hdr[1], idxp)
                  : gbp_nomem();
        idx = NULL;
        gbp_free(idxp);
    }
    if (c->rank != 0) gbp_free(idx);
    if (!agreed) rc = gbp_comm_agree_all(c, rc, "reading the metadata");
    if (rc != GPUBP_OK) { /* back to what every rank had */
        if (f->nrecords > old_n) f->nrecords = old_n;
        f->md0_all_len = old;
        f->md0_size = old_size;
        f->writer_active = old_active;
        return rc;
    }
    f->md0_all_len = (size_t)hdr[1];
    f->md0_size = hdr[1];
    f->writer_active = (int)hdr[2];
    return GPUBP_OK;
}

static int window_over(gpubp_file *f, const bp4_idx_record *r, const char *what);
static void drop_window(gpubp_file *f);

/* The streaming pass: md.0 is read through a window of a few MiB (or one step, if larger), and
 * each step is parsed into the index once. */
static int parse_until(gpubp_file *f, size_t nsteps)
{
    char what[4200];
    snprintf(what, sizeof what, "%s/md.0", f->path);
    f->ix.steps_hint = nsteps;
    while (f->ix.nsteps < nsteps) {
        const bp4_idx_record *r = &f->records[f->ix.nsteps];
        GBP_FORWARD_IF_ERROR(window_over(f, r, what));
        GBP_FORWARD_IF_ERROR(bp4_index_add_step(&f->ix, f->md0, f->md0_base, f->md0_len, r, what));
    }
    return GPUBP_OK;
}

/* Positions the md.0 window over the step of record r. */
static int window_over(gpubp_file *f, const bp4_idx_record *r, const char *what)
{
    {
        if (r->end - r->pg_off > GBP_MAX_STEP_METADATA)
            return gbp_error(GPUBP_ERR_FORMAT, 0,
                             "%s: step %llu claims %llu bytes of metadata (limit %llu)", what,
                             (unsigned long long)r->step,
                             (unsigned long long)(r->end - r->pg_off),
                             (unsigned long long)GBP_MAX_STEP_METADATA);
        if (r->pg_off < f->md0_base || r->end > f->md0_base + f->md0_len) {
            size_t need = (size_t)(r->end - r->pg_off);
            size_t want = need > GBP_MD0_WINDOW ? need : GBP_MD0_WINDOW;
            if (want > f->md0_size - r->pg_off) want = (size_t)(f->md0_size - r->pg_off);
            if (want > f->md0_cap) {
                uint8_t *w = gbp_realloc(f->md0, want);
                if (!w) return gbp_error(GPUBP_ERR_NOMEM, 0, "out of memory (%zu bytes of md.0)", want);
                f->md0 = w;
                f->md0_cap = want;
            }
            f->md0_len = 0;
            GBP_FORWARD_IF_ERROR(gbp_reader_md0(f, r->pg_off, want, f->md0));
            f->md0_base = r->pg_off;
            f->md0_len = want;
            /* read ahead of the next window while this one is parsed */
            if (!f->remote && r->pg_off + want < f->md0_size)
                posix_fadvise(f->md0_fd, (off_t)(r->pg_off + want), (off_t)GBP_MD0_WINDOW,
                              POSIX_FADV_WILLNEED);
        }
    }
    return GPUBP_OK;
}

/* After a light pass (random-access open): the second pass that gives every step's shapes and
 * min/max over all steps, run once, the first time a listing needs them. */
static int ensure_summary(gpubp_file *f)
{
    if (f->ix.summarized || f->ix.nsteps == 0) return GPUBP_OK;
    char what[4200];
    snprintf(what, sizeof what, "%s/md.0", f->path);
    while (f->ix.sum_steps < f->ix.nsteps) {
        const bp4_idx_record *r = &f->records[f->ix.sum_steps];
        GBP_FORWARD_IF_ERROR(window_over(f, r, what));
        GBP_FORWARD_IF_ERROR(bp4_index_summarize_step(&f->ix, f->md0, f->md0_base, f->md0_len, r,
                                                      what));
    }
    drop_window(f);
    return GPUBP_OK;
}

static void drop_window(gpubp_file *f)
{
    gbp_free(f->md0);
    f->md0 = NULL;
    f->md0_len = f->md0_cap = 0;
    f->md0_base = 0;
}

/* md.idx, then (random access) the light pass over md.0: block counts now, shapes and min/max
 * when a listing asks; random access keeps no metadata bytes, only the index. */
static int load_index(gpubp_file *f)
{
    GBP_FORWARD_IF_ERROR(f->comm ? load_metadata_comm(f) : load_metadata(f));
    if (f->mode == GPUBP_MODE_READ_RANDOM_ACCESS) {
        f->ix.light = 1;
        int rc = parse_until(f, f->nrecords);
        drop_window(f);
        /* parallel: a rank out of memory fails the open on every rank */
        if (f->comm) rc = gbp_comm_check(f->comm, rc, "gpubp_open (index)");
        return rc;
    }
    return GPUBP_OK;
}

static int check_dataset(gpubp_file *f);

int gbp_reader_open(gpubp_file *f)
{
    if (f->comm) {
        int rc = f->comm->rank == 0 ? check_dataset(f) : GPUBP_OK;
        GBP_FORWARD_IF_ERROR(gbp_comm_agree(f->comm, rc, 0));
        return load_index(f);
    }
    return check_dataset(f);
}

/* A local dataset: is it a BP4 directory? Then its index. */
static int check_dataset(gpubp_file *f)
{
    if (gbp_is_remote_url(f->path)) {
        int rc = gbp_remote_open(&f->remote, f->path, &f->params);
        if (rc == GPUBP_ERR_NOT_FOUND) rc = gbp_error_with_path(GPUBP_ERR_NOT_BP4, f->path);
        GBP_FORWARD_IF_ERROR(rc);
        return load_index(f);
    }
    int is_dir;
    GBP_FORWARD_IF_ERROR(gbp_is_dir(f->path, &is_dir));
    if (!is_dir)
        return gbp_error(GPUBP_ERR_NOT_BP4, ENOENT, "%s does not exist", f->path);
    char *mmd = gbp_path_join(f->path, "mmd.0"), *idx = gbp_path_join(f->path, "md.idx");
    char *md0 = gbp_path_join(f->path, "md.0"), *d0 = gbp_path_join(f->path, "data.0");
    int rc = (mmd && idx && md0 && d0) ? GPUBP_OK : gbp_nomem();
    if (rc == GPUBP_OK && gbp_path_exists(mmd))
        rc = gbp_error(GPUBP_ERR_BP5, 0,
                       "%s is an ADIOS2 BP5 dataset (it has mmd.0); libgpubp reads BP4 only",
                       f->path);
    if (rc == GPUBP_OK && !gbp_path_exists(idx) && !gbp_path_exists(md0) && !gbp_path_exists(d0))
        rc = gbp_error(GPUBP_ERR_NOT_BP4, 0,
                       "%s is not a BP4 dataset (no md.idx, md.0 or data.0)", f->path);
    gbp_free(mmd);
    gbp_free(idx);
    gbp_free(md0);
    gbp_free(d0);
    GBP_FORWARD_IF_ERROR(rc);
    return f->comm ? GPUBP_OK : load_index(f);
}

void gbp_reader_free(gpubp_file *f)
{
    gbp_index_free(&f->ix);
    gbp_free(f->idx);
    gbp_free(f->md0_all);
    gbp_free(f->md0);
    gbp_free(f->records);
    if (f->md0_fd >= 0) close(f->md0_fd);
    gbp_remote_close(f->remote);
    f->remote = NULL;
    for (size_t i = 0; i < f->nrfd; i++)
        if (f->rfd[i] >= 0) close(f->rfd[i]);
    gbp_free(f->rfd);
    gbp_free(f->gets);
}

static void invalidate_names(gpubp_file *f)
{
    gbp_free(f->names);
    f->names = NULL;
    gbp_free(f->anames);
    f->anames = NULL;
}

static int begin_step(gpubp_file *f);

/* Parallel readers: every rank opens the step, or none does (a rank that opened it gives it
 * back), so that the next begin_step takes the same path on every rank. */
int gbp_reader_begin_step(gpubp_file *f)
{
    int rc = begin_step(f);
    if (!f->comm) return rc;
    if (rc == GPUBP_OK) f->failed_step = 0;
    char what[4300];
    snprintf(what, sizeof what, "gpubp_begin_step: step %zu of %s", f->next_step - (rc == GPUBP_OK),
             f->path);
    int arc = gbp_comm_check(f->comm, rc, what);
    if (arc != GPUBP_OK && rc == GPUBP_OK) {
        f->in_step = 0;
        f->next_step = f->cur_step;
    }
    return arc;
}

static int begin_step(gpubp_file *f)
{
    double t0 = gbp_now_s(), timeout = f->params.timeout;
    for (;;) {
        if (f->next_step < f->nrecords) {
            GBP_FORWARD_IF_ERROR(parse_until(f, f->next_step + 1));
            f->cur_step = f->next_step++;
            f->in_step = 1;
            invalidate_names(f);
            return GPUBP_OK;
        }
        GBP_FORWARD_IF_ERROR(f->comm ? load_metadata_comm(f) : load_metadata(f));
        if (f->next_step < f->nrecords) continue;
        if (!f->writer_active) return GPUBP_END_OF_STREAM;
        /* parallel readers: rank 0's clock decides, for every rank */
        int64_t expired = timeout >= 0 && gbp_now_s() - t0 >= timeout;
        if (f->comm) GBP_FORWARD_IF_ERROR(gbp_comm_bcast(f->comm, &expired, sizeof expired, 0));
        if (expired) return GPUBP_NOT_READY;
        struct timespec nap = {0, 10 * 1000 * 1000};
        nanosleep(&nap, NULL);
    }
}

int gbp_reader_end_step(gpubp_file *f)
{
    int rc = gbp_reader_perform(f);
    f->in_step = 0;
    if (!f->comm) return rc;
    /* parallel: a get that failed on one rank in this step fails end_step on every rank */
    if (f->failed_step) rc = gbp_error(f->failed_rc, 0, "%s", f->failed_msg);
    f->failed_step = 0;
    char what[4300];
    snprintf(what, sizeof what, "gpubp_end_step: step %zu of %s", f->cur_step, f->path);
    return gbp_comm_check(f->comm, rc, what);
}

/* Parallel step-mode readers remember the first failed get of the step for end_step. */
static int get_failed(gpubp_file *f, int rc)
{
    if (rc < 0 && f->comm && f->mode == GPUBP_MODE_READ && f->in_step && !f->failed_step) {
        snprintf(f->failed_msg, sizeof f->failed_msg, "%s", gbp_error_message());
        f->failed_rc = rc;
        f->failed_step = 1;
    }
    return rc;
}

int gbp_reader_inquire(gpubp_variable **out, gpubp_file *f, const char *name)
{
    GBP_RETURN_ERROR_IF(f->mode == GPUBP_MODE_READ && !f->in_step, GPUBP_ERR_WRONG_MODE,
                        "gpubp_inquire_variable: no step is open on %s (call gpubp_begin_step)",
                        f->path);
    gbp_var *rv = gbp_index_find(&f->ix, name);
    if (rv && rv->nsteps == 0) rv = NULL;
    if (rv && f->mode == GPUBP_MODE_READ && !gbp_var_find_step(rv, f->cur_step)) rv = NULL;
    if (!rv)
        return gbp_error(GPUBP_ERR_NOT_FOUND, 0, "variable '%s' is not in %s%s", name, f->path,
                         f->mode == GPUBP_MODE_READ ? " at the current step" : "");
    gpubp_variable *v = gbp_file_var(f, name);
    if (!v) {
        GBP_FORWARD_IF_ERROR(gbp_file_new_var(f, name, rv->type, rv->kind, &v));
        v->rv = rv;
        v->sel.ndims = rv->kind == GPUBP_SHAPE_LOCAL_VALUE ? 1 : rv->ndims;
    }
    *out = v;
    return GPUBP_OK;
}

/* Variables of a type this library cannot read are listed; their values are not readable. */
static int check_readable(const gpubp_variable *v, const char *fn)
{
    if (gbp_type_known(v->type)) return GPUBP_OK;
    return gbp_error(GPUBP_ERR_UNSUPPORTED_TYPE, 0,
                     "%s: variable '%s' of %s has BP4 type id %d, which libgpubp cannot read", fn,
                     v->name, v->file->path, v->type);
}

/* ---- steps and blocks of a variable --------------------------------------------------------- */

/* The variable's selected steps as indices into rv->steps: [*first, *first + *n). */
static int var_steps(const gpubp_variable *v, const gbp_sel *s, size_t *first, size_t *n)
{
    const gpubp_file *f = v->file;
    if (f->mode == GPUBP_MODE_READ) {
        GBP_RETURN_ERROR_IF(!f->in_step, GPUBP_ERR_WRONG_MODE, "'%s': no step is open", v->name);
        const gbp_var_step *st = gbp_var_find_step(v->rv, f->cur_step);
        GBP_RETURN_ERROR_IF(!st, GPUBP_ERR_INVALID_STEP, "'%s' is not in the current step %zu",
                            v->name, f->cur_step);
        *first = (size_t)(st - v->rv->steps);
        *n = 1;
        return GPUBP_OK;
    }
    if (s->has_steps) {
        GBP_RETURN_ERROR_IF(s->step_start + s->step_count > v->rv->nsteps, GPUBP_ERR_INVALID_STEP,
                            "'%s': steps [%zu, %zu) do not exist", v->name, s->step_start,
                            s->step_start + s->step_count);
        *first = s->step_start;
        *n = s->step_count;
    } else {
        *first = 0;
        *n = 1;
    }
    return GPUBP_OK;
}

/* The blocks of the variable's step vs, parsed from md.0 on first use. */
static int vblocks(const gpubp_variable *v, size_t vs, const gbp_block **out)
{
    gpubp_file *f = v->file; /* the index is a cache: loading is not a change of state */
    char what[4200];
    snprintf(what, sizeof what, "%s/md.0", f->path);
    return gbp_index_blocks(&f->ix, v->rv, vs, out, what);
}

static int select_block(const gpubp_variable *v, const gbp_sel *s, size_t vs, const gbp_block **out)
{
    const gbp_var_step *st = &v->rv->steps[vs];
    size_t b = s->has_block ? s->block_id : 0;
    if (b >= st->nblocks)
        return gbp_error(GPUBP_ERR_INVALID_SELECTION, 0,
                         "'%s': block %zu does not exist (step has %u blocks)", v->name, b,
                         st->nblocks);
    const gbp_block *blocks = NULL;
    GBP_FORWARD_IF_ERROR(vblocks(v, vs, &blocks));
    *out = &blocks[b];
    return GPUBP_OK;
}

/* File-order shape of the variable at var-step vs. */
static int file_shape(const gpubp_variable *v, const gbp_sel *s, size_t vs, size_t *dims)
{
    const gbp_var_step *st = &v->rv->steps[vs];
    size_t nd = v->sel.ndims;
    switch (v->kind) {
    case GPUBP_SHAPE_GLOBAL_VALUE: return GPUBP_OK;
    case GPUBP_SHAPE_LOCAL_VALUE: dims[0] = st->nblocks; return GPUBP_OK;
    case GPUBP_SHAPE_LOCAL_ARRAY: {
        const gbp_block *b = NULL;
        GBP_FORWARD_IF_ERROR(select_block(v, s, vs, &b));
        for (size_t i = 0; i < nd; i++) dims[i] = (size_t)GBP_COUNT(b)[i];
        return GPUBP_OK;
    }
    default: {
        gpubp_file *f = v->file;
        if (!f->ix.summarized) {
            /* a few steps: from their blocks; a listing of many: the summary pass, once */
            if (v->rv->steps[vs].blocks || v->rv->loaded < 16) {
                const gbp_block *blocks = NULL;
                GBP_FORWARD_IF_ERROR(vblocks(v, vs, &blocks));
                const gbp_block *b = &blocks[st->nblocks - 1]; /* the last block's shape */
                for (size_t i = 0; i < nd; i++) dims[i] = (size_t)GBP_SHAPE(b)[i];
                return GPUBP_OK;
            }
            GBP_FORWARD_IF_ERROR(ensure_summary(f));
        }
        const uint64_t *shape = gbp_var_shape(v->rv, vs); /* the step's last block's shape */
        for (size_t i = 0; i < nd; i++) dims[i] = (size_t)shape[i];
        return GPUBP_OK;
    }
    }
}

static gpubp_memory_space eff_space(const gpubp_variable *v, gpubp_memory_space space)
{
    if (space == GPUBP_MEM_DETECT) return v->space == GPUBP_MEM_DETECT ? GPUBP_MEM_HOST : v->space;
    return space;
}

int gpubp_variable_shape(const gpubp_variable *v, gpubp_memory_space space, size_t *dims)
{
    GBP_CHECK_ARG(v);
    GBP_RETURN_ERROR_IF(space < GPUBP_MEM_DETECT || space > GPUBP_MEM_GPU, GPUBP_ERR_INVALID_ARG,
                        "gpubp_variable_shape: invalid memory space %d", (int)space);
    size_t nd = v->sel.ndims;
    if (nd == 0) return GPUBP_OK;
    GBP_CHECK_ARG(dims);
    if (gbp_is_write_mode(v->file)) {
        for (size_t i = 0; i < nd; i++)
            dims[i] = v->kind == GPUBP_SHAPE_LOCAL_ARRAY ? v->sel.count[i] : v->sel.shape[i];
        /* the user gave dims in the variable's own layout */
        gpubp_memory_space own = eff_space(v, GPUBP_MEM_DETECT);
        if (gbp_space_reverses(v->file, own) != gbp_space_reverses(v->file, eff_space(v, space)))
            gbp_reverse(dims, nd);
        return GPUBP_OK;
    }
    size_t first, n;
    GBP_FORWARD_IF_ERROR(var_steps(v, &v->sel, &first, &n));
    /* random access with no step selection: the shape of the last step, as ADIOS2's BP4 reader */
    if (v->file->mode == GPUBP_MODE_READ_RANDOM_ACCESS && !v->sel.has_steps)
        first = v->rv->nsteps - 1;
    GBP_FORWARD_IF_ERROR(file_shape(v, &v->sel, first, dims));
    if (gbp_space_reverses(v->file, eff_space(v, space))) gbp_reverse(dims, nd);
    return GPUBP_OK;
}

int gpubp_variable_steps(const gpubp_variable *v, size_t *nsteps)
{
    GBP_CHECK_ARG(v);
    GBP_CHECK_ARG(nsteps);
    *nsteps = gbp_is_write_mode(v->file) ? v->steps_written : v->rv->nsteps;
    return GPUBP_OK;
}

static int var_step_arg(const gpubp_variable *v, size_t step, size_t *vs)
{
    GBP_RETURN_ERROR_IF(gbp_is_write_mode(v->file), GPUBP_ERR_WRONG_MODE,
                        "'%s': block queries need a file open for reading", v->name);
    if (v->file->mode == GPUBP_MODE_READ) {
        size_t n;
        return var_steps(v, &v->sel, vs, &n);
    }
    GBP_RETURN_ERROR_IF(step >= v->rv->nsteps, GPUBP_ERR_INVALID_STEP,
                        "'%s': step %zu does not exist (the variable has %zu steps)", v->name, step,
                        v->rv->nsteps);
    *vs = step;
    return GPUBP_OK;
}

int gpubp_variable_blocks(const gpubp_variable *v, size_t step, size_t *nblocks)
{
    GBP_CHECK_ARG(v);
    GBP_CHECK_ARG(nblocks);
    size_t vs;
    GBP_FORWARD_IF_ERROR(var_step_arg(v, step, &vs));
    *nblocks = v->rv->steps[vs].nblocks;
    return GPUBP_OK;
}

int gpubp_variable_block_info(const gpubp_variable *v, size_t step, size_t block, size_t *start,
                              size_t *count, void *min, void *max)
{
    GBP_CHECK_ARG(v);
    size_t vs;
    GBP_FORWARD_IF_ERROR(var_step_arg(v, step, &vs));
    const gbp_var_step *st = &v->rv->steps[vs];
    GBP_RETURN_ERROR_IF(block >= st->nblocks, GPUBP_ERR_INVALID_SELECTION,
                        "'%s': block %zu does not exist (step has %u blocks)", v->name, block,
                        st->nblocks);
    const gbp_block *blocks = NULL;
    GBP_FORWARD_IF_ERROR(vblocks(v, vs, &blocks));
    const gbp_block *b = &blocks[block];
    size_t nd = v->sel.ndims, es = gbp_type_size(v->type);
    if (v->kind == GPUBP_SHAPE_LOCAL_VALUE) {
        if (start) start[0] = block;
        if (count) count[0] = 1;
    } else {
        for (size_t i = 0; i < nd && i < b->ndims; i++) {
            if (start)
                start[i] = v->kind == GPUBP_SHAPE_LOCAL_ARRAY ? 0 : (size_t)GBP_START(b)[i];
            if (count) count[i] = (size_t)GBP_COUNT(b)[i];
        }
        if (gbp_space_reverses(v->file, eff_space(v, GPUBP_MEM_DETECT))) {
            if (start) gbp_reverse(start, nd);
            if (count) gbp_reverse(count, nd);
        }
    }
    if (v->type == GPUBP_TYPE_STRING || (!min && !max)) return GPUBP_OK;
    GBP_FORWARD_IF_ERROR(check_readable(v, "gpubp_variable_block_info"));
    const uint8_t *mn = b->mm, *mx = b->has_value ? b->mm : b->mm + 16;
    if (!b->has_value && !b->has_minmax) {
        /* an empty block has no statistics: zeros, as for the value of no element */
        if (min) memset(min, 0, es);
        if (max) memset(max, 0, es);
        return GPUBP_OK;
    }
    if (min) memcpy(min, mn, es);
    if (max) memcpy(max, mx, es);
    return GPUBP_OK;
}

int gpubp_variable_minmax(const gpubp_variable *v, void *min, void *max)
{
    GBP_CHECK_ARG(v);
    GBP_RETURN_ERROR_IF(v->type == GPUBP_TYPE_STRING, GPUBP_ERR_NOT_SUPPORTED,
                        "gpubp_variable_minmax: '%s' is a string", v->name);
    GBP_RETURN_ERROR_IF(gbp_is_write_mode(v->file), GPUBP_ERR_WRONG_MODE,
                        "gpubp_variable_minmax: '%s' belongs to a file open for writing", v->name);
    GBP_FORWARD_IF_ERROR(check_readable(v, "gpubp_variable_minmax"));
    size_t first = 0, n = v->rv->nsteps;
    if (v->file->mode == GPUBP_MODE_READ || v->sel.has_steps)
        GBP_FORWARD_IF_ERROR(var_steps(v, &v->sel, &first, &n));
    size_t es = gbp_type_size(v->type);
    if (first == 0 && n == v->rv->nsteps && !v->sel.has_block &&
        v->file->mode == GPUBP_MODE_READ_RANDOM_ACCESS) {
        /* every step: the summary of the streaming pass, no block is loaded */
        GBP_FORWARD_IF_ERROR(ensure_summary(v->file));
        GBP_RETURN_ERROR_IF(!v->rv->has_mm, GPUBP_ERR_NOT_FOUND,
                            "gpubp_variable_minmax: '%s' has no min/max", v->name);
        if (min) memcpy(min, v->rv->mm, es);
        if (max) memcpy(max, v->rv->mm + 16, es);
        return GPUBP_OK;
    }
    uint8_t mn[16], mx[16];
    int have = 0;
    for (size_t s = first; s < first + n; s++) {
        const gbp_var_step *st = &v->rv->steps[s];
        const gbp_block *blocks = NULL;
        GBP_FORWARD_IF_ERROR(vblocks(v, s, &blocks));
        for (size_t b = 0; b < st->nblocks; b++) {
            if (v->sel.has_block && b != v->sel.block_id) continue;
            const gbp_block *blk = &blocks[b];
            const uint8_t *bmn, *bmx;
            if (blk->has_value) bmn = bmx = blk->mm;
            else if (blk->has_minmax) { bmn = blk->mm; bmx = blk->mm + 16; }
            else continue;
            if (!have || gbp_value_cmp(v->type, bmn, mn) < 0) memcpy(mn, bmn, es);
            if (!have || gbp_value_cmp(v->type, bmx, mx) > 0) memcpy(mx, bmx, es);
            have = 1;
        }
    }
    GBP_RETURN_ERROR_IF(!have, GPUBP_ERR_NOT_FOUND, "gpubp_variable_minmax: '%s': no min/max in "
                        "the selected steps and blocks", v->name);
    if (min) memcpy(min, mn, es);
    if (max) memcpy(max, mx, es);
    return GPUBP_OK;
}

/* ---- selections and gets -------------------------------------------------------------------- */


/* The file-order box a get reads at var-step vs: start/count in the variable's coordinates
 * (global: the shape; local array: the block; local value: the block list). */
static int get_box(const gpubp_variable *v, const gbp_sel *s, size_t vs, int rev, size_t *start,
                   size_t *count)
{
    size_t nd = v->sel.ndims, shape[GBP_MAX_DIMS];
    GBP_FORWARD_IF_ERROR(file_shape(v, s, vs, shape));
    if (s->has_box) {
        memcpy(start, s->start, nd * sizeof *start);
        memcpy(count, s->count, nd * sizeof *count);
        if (rev) {
            gbp_reverse(start, nd);
            gbp_reverse(count, nd);
        }
    } else if (s->has_block && v->kind == GPUBP_SHAPE_GLOBAL_ARRAY) {
        const gbp_block *b = NULL;
        GBP_FORWARD_IF_ERROR(select_block(v, s, vs, &b));
        for (size_t i = 0; i < nd; i++) {
            start[i] = (size_t)GBP_START(b)[i];
            count[i] = (size_t)GBP_COUNT(b)[i];
        }
    } else if (s->has_block && v->kind == GPUBP_SHAPE_LOCAL_VALUE) {
        /* a local value's block: its one value (ADIOS2: SetBlockSelection) */
        const gbp_block *b;
        GBP_FORWARD_IF_ERROR(select_block(v, s, vs, &b));
        start[0] = s->block_id;
        count[0] = 1;
    } else {
        for (size_t i = 0; i < nd; i++) {
            start[i] = 0;
            count[i] = shape[i];
        }
    }
    for (size_t i = 0; i < nd; i++)
        if (start[i] > shape[i] || count[i] > shape[i] - start[i])
            return gbp_error(GPUBP_ERR_INVALID_SELECTION, 0,
                             "'%s': selection start %zu + count %zu exceeds %s %zu in (file) "
                             "dimension %zu at step %u", v->name, start[i], count[i],
                             v->kind == GPUBP_SHAPE_LOCAL_ARRAY ? "block count" : "shape",
                             shape[i], i, v->rv->steps[vs].step);
    return GPUBP_OK;
}

/* Bytes one selected step occupies in the user's buffer: the box (the memory box when a memory
 * selection is set). Steps follow each other in the buffer, each with its own size (a local
 * block or a shape may differ between steps). */
static int step_bytes(const gpubp_variable *v, const gbp_sel *s, size_t vs, int rev, size_t *bytes)
{
    size_t start[GBP_MAX_DIMS], count[GBP_MAX_DIMS], elems = gbp_type_size(v->type);
    size_t nd = v->sel.ndims;
    if (v->type == GPUBP_TYPE_STRING) {
        /* strings: each selected value and its NUL, one after the other */
        const gbp_block *blocks = NULL;
        GBP_FORWARD_IF_ERROR(vblocks(v, vs, &blocks));
        size_t total = 0, lo = 0, hi = 1;
        if (v->kind == GPUBP_SHAPE_GLOBAL_VALUE) {
            const gbp_block *b = NULL;
            GBP_FORWARD_IF_ERROR(select_block(v, s, vs, &b));
            lo = (size_t)(b - blocks);
            hi = lo + 1;
        } else {
            GBP_FORWARD_IF_ERROR(get_box(v, s, vs, rev, start, count));
            lo = start[0];
            hi = start[0] + count[0];
        }
        for (size_t b = lo; b < hi; b++) total += (size_t)blocks[b].str_len + 1;
        *bytes = total;
        return GPUBP_OK;
    }
    if (v->kind == GPUBP_SHAPE_GLOBAL_VALUE) {
        *bytes = elems;
        return GPUBP_OK;
    }
    GBP_FORWARD_IF_ERROR(get_box(v, s, vs, rev, start, count));
    const size_t *c = s->mem_ndims ? s->mem_count : count;
    int ok = 1;
    for (size_t i = 0; i < nd; i++) ok = ok && gbp_mul_ok(elems, c[i], &elems);
    GBP_RETURN_ERROR_IF(!ok, GPUBP_ERR_INVALID_SELECTION,
                        "'%s': the selection's size overflows", v->name);
    *bytes = elems;
    return GPUBP_OK;
}

int gpubp_selection_size(const gpubp_variable *v, size_t *bytes)
{
    GBP_CHECK_ARG(v);
    GBP_CHECK_ARG(bytes);
    GBP_FORWARD_IF_ERROR(check_readable(v, "gpubp_selection_size"));
    size_t es = gbp_type_size(v->type), nd = v->sel.ndims;
    if (gbp_is_write_mode(v->file)) {
        size_t n = 1;
        for (size_t i = 0; i < nd; i++) n *= v->sel.count[i];
        *bytes = n * es;
        return GPUBP_OK;
    }
    size_t first, n;
    GBP_FORWARD_IF_ERROR(var_steps(v, &v->sel, &first, &n));
    int rev = gbp_space_reverses(v->file, eff_space(v, GPUBP_MEM_DETECT));
    size_t total = 0;
    for (size_t t = 0; t < n; t++) {
        size_t one;
        GBP_FORWARD_IF_ERROR(step_bytes(v, &v->sel, first + t, rev, &one));
        GBP_RETURN_ERROR_IF(!gbp_add_ok(total, one, &total), GPUBP_ERR_INVALID_SELECTION,
                            "gpubp_selection_size: '%s': the selection's size overflows", v->name);
    }
    *bytes = total;
    return GPUBP_OK;
}

static int data_fd(gpubp_file *f, uint32_t k, int *fd)
{
    if (k >= GBP_MAX_SUBFILES)
        return gbp_error(GPUBP_ERR_FORMAT, 0, "%s: block in data.%u: subfile index too large",
                         f->path, k);
    if (k >= f->nrfd) {
        size_t n = (size_t)k + 1;
        int *a = gbp_realloc(f->rfd, n * sizeof *a);
        GBP_CHECK_ALLOC(a);
        for (size_t i = f->nrfd; i < n; i++) a[i] = -1;
        f->rfd = a;
        f->nrfd = n;
    }
    if (f->rfd[k] < 0) {
        char p[4200];
        snprintf(p, sizeof p, "%s/data.%u", f->path, k);
        int rc = gbp_open_file(&f->rfd[k], p, O_RDONLY, 0);
        if (rc == GPUBP_ERR_NOT_FOUND)
            return gbp_error(GPUBP_ERR_FORMAT, 0, "%s: metadata refers to data.%u, which is missing",
                             f->path, k);
        GBP_FORWARD_IF_ERROR(rc);
    }
    *fd = f->rfd[k];
    return GPUBP_OK;
}

/* Bytes of data.K, from the local file or through the remote connection. */
static int data_pread(gpubp_file *f, uint32_t k, int fd, void *buf, size_t n, uint64_t off)
{
    if (f->remote) {
        char name[32];
        snprintf(name, sizeof name, "data.%u", k);
        return gbp_remote_pread(f->remote, name, buf, n, off);
    }
    char what[4200];
    snprintf(what, sizeof what, "%s/data.%u", f->path, k);
    return gbp_pread_all(fd, buf, n, off, what);
}

static int data_size(gpubp_file *f, uint32_t k, int fd, uint64_t *size)
{
    if (f->remote) {
        char name[32];
        snprintf(name, sizeof name, "data.%u", k);
        return gbp_remote_size(f->remote, name, size);
    }
    return gbp_file_size(fd, size, f->path);
}

typedef struct span_ctx {
    gbp_mem *mem;
    gpubp_memory_space space;
    const uint8_t *span;   /* the block's bytes from `skip` on */
    size_t skip;
    uint8_t *dst;
} span_ctx;

static int span_run(void *ctx, size_t a_off, size_t b_off, size_t bytes)
{
    span_ctx *c = ctx;
    gbp_box one;
    gbp_box_dense(&one, 1, &bytes);
    return gbp_mem_scatter(c->mem, c->space, c->span + (a_off - c->skip), 1, &one, c->dst + b_off,
                           &one);
}

/* A remote block: the span of the block that holds the box comes over the connection into host
 * memory (straight into a host destination when both boxes are contiguous), then it is copied
 * into the destination box. */
static int read_remote(gpubp_file *f, gpubp_memory_space space, const gbp_block *b, size_t es,
                       const gbp_box *fbox, uint8_t *dst, const gbp_box *dbox)
{
    size_t first = gbp_box_offset(fbox), last = first, n = gbp_box_elements(fbox);
    if (n == 0) return GPUBP_OK;
    for (size_t i = 0; i < fbox->ndims; i++) {
        size_t stride = 1;
        for (size_t j = i + 1; j < fbox->ndims; j++) stride *= fbox->dims[j];
        last += (fbox->count[i] - 1) * stride;
    }
    size_t span = (last - first + 1) * es;
    uint64_t off = b->payload_offset + (uint64_t)first * es;
    if (space == GPUBP_MEM_HOST && gbp_box_is_contiguous(fbox) && gbp_box_is_contiguous(dbox))
        return data_pread(f, b->subfile, -1, dst + gbp_box_offset(dbox) * es, span, off);
    uint8_t *tmp = gbp_malloc(span);
    if (!tmp) return gbp_error(GPUBP_ERR_NOMEM, 0, "out of memory (%zu bytes)", span);
    int rc = data_pread(f, b->subfile, -1, tmp, span, off);
    if (rc == GPUBP_OK) {
        span_ctx c = {f->mem, space, tmp, first * es, dst};
        rc = gbp_box_foreach_run(fbox, dbox, es, span_run, &c);
    }
    gbp_free(tmp);
    return rc;
}

/* A compressed block: read the operator buffer, decompress the whole block on the host, then
 * copy the wanted box out (the box may be strided, the destination on the device). */
static int read_compressed(gpubp_file *f, const gpubp_variable *v, gpubp_memory_space space,
                           int fd, const gbp_block *b, const gbp_box *fbox, uint8_t *dst,
                           const gbp_box *dbox)
{
    size_t es = gbp_type_size(v->type), n = 1;
    for (size_t i = 0; i < fbox->ndims; i++)
        if (!gbp_mul_ok(n, fbox->dims[i], &n)) n = SIZE_MAX / 2;
    if (strcmp(b->op->name, "blosc") != 0)
        return gbp_error(GPUBP_ERR_CODEC, 0,
                         "'%s': block compressed with operator '%s' is not supported (only blosc "
                         "with the zlib codec)", v->name, b->op->name);
    size_t raw = 0;
    if (!gbp_mul_ok(n, es, &raw) || b->op->raw_size != raw)
        return gbp_error(GPUBP_ERR_FORMAT, 0,
                         "%s: '%s': operator says %llu uncompressed bytes, the block has %zu",
                         f->path, v->name, (unsigned long long)b->op->raw_size, raw);
    uint64_t fsize;
    GBP_FORWARD_IF_ERROR(data_size(f, b->subfile, fd, &fsize));
    if (b->payload_offset > fsize || b->op->size > fsize - b->payload_offset)
        return gbp_error(GPUBP_ERR_FORMAT, 0,
                         "%s/data.%u: '%s': compressed block of %llu bytes at offset %llu runs past "
                         "the end of the file (%llu bytes)", f->path, b->subfile, v->name,
                         (unsigned long long)b->op->size, (unsigned long long)b->payload_offset,
                         (unsigned long long)fsize);
    /* device destinations: decoded span by span into the pinned pool (api_compress.c) */
    int dev = space == GPUBP_MEM_GPU;
    uint8_t *z = gbp_malloc((size_t)b->op->size), *r = dev ? NULL : gbp_malloc(raw);
    int rc = (z && (r || dev)) ? GPUBP_OK
                               : gbp_error(GPUBP_ERR_NOMEM, 0, "out of memory (decompression)");
    if (rc == GPUBP_OK) rc = data_pread(f, b->subfile, fd, z, (size_t)b->op->size, b->payload_offset);
    if (rc == GPUBP_OK && dev)
        rc = gbp_read_compressed_device(f, z, (size_t)b->op->size, raw, es, fbox, dst, dbox);
    else if (rc == GPUBP_OK)
        rc = gbp_blosc_decompress(z, (size_t)b->op->size, r, raw, f->params.compress_threads);
    if (rc == GPUBP_OK && !dev) rc = gbp_mem_scatter(f->mem, space, r, es, fbox, dst, dbox);
    gbp_free(z);
    gbp_free(r);
    return rc;
}

/* Reads the part of one array block that intersects the box (start, count) into dst. */
static int read_block_part(gpubp_file *f, const gpubp_variable *v, gpubp_memory_space space,
                           const gbp_block *b, const size_t *start, const size_t *count,
                           const gbp_sel *s, int rev, uint8_t *dst, int local)
{
    size_t nd = v->sel.ndims, es = gbp_type_size(v->type);
    gbp_box fbox, dbox;
    fbox.ndims = dbox.ndims = nd;
    for (size_t i = 0; i < nd; i++) {
        size_t bs = local ? 0 : (size_t)GBP_START(b)[i], bc = (size_t)GBP_COUNT(b)[i];
        size_t lo = start[i] > bs ? start[i] : bs;
        size_t hi1 = start[i] + count[i], hi2 = bs + bc;
        size_t hi = hi1 < hi2 ? hi1 : hi2;
        if (lo >= hi) return GPUBP_OK; /* no overlap */
        fbox.dims[i] = bc;
        fbox.start[i] = lo - bs;
        fbox.count[i] = hi - lo;
        dbox.dims[i] = count[i];
        dbox.start[i] = lo - start[i];
        dbox.count[i] = hi - lo;
    }
    if (s->mem_ndims) {
        size_t ms[GBP_MAX_DIMS], mc[GBP_MAX_DIMS];
        memcpy(ms, s->mem_start, nd * sizeof *ms);
        memcpy(mc, s->mem_count, nd * sizeof *mc);
        if (rev) {
            gbp_reverse(ms, nd);
            gbp_reverse(mc, nd);
        }
        for (size_t i = 0; i < nd; i++) {
            dbox.dims[i] = mc[i];
            dbox.start[i] += ms[i];
        }
    }
    int fd = -1;
    if (!f->remote) GBP_FORWARD_IF_ERROR(data_fd(f, b->subfile, &fd));
    if (b->op) return read_compressed(f, v, space, fd, b, &fbox, dst, &dbox);
    if (f->remote) return read_remote(f, space, b, es, &fbox, dst, &dbox);
    return gbp_mem_read(f->mem, space, fd, b->payload_offset, es, &fbox, dst, &dbox);
}

static int check_mem_sel(const gpubp_variable *v, const gbp_sel *s, int rev, const size_t *count)
{
    if (!s->mem_ndims) return GPUBP_OK;
    size_t nd = v->sel.ndims, ms[GBP_MAX_DIMS], mc[GBP_MAX_DIMS];
    memcpy(ms, s->mem_start, nd * sizeof *ms);
    memcpy(mc, s->mem_count, nd * sizeof *mc);
    if (rev) {
        gbp_reverse(ms, nd);
        gbp_reverse(mc, nd);
    }
    for (size_t i = 0; i < nd; i++)
        if (ms[i] > mc[i] || count[i] > mc[i] - ms[i])
            return gbp_error(GPUBP_ERR_INVALID_SELECTION, 0,
                             "'%s': memory selection start %zu + count %zu exceeds the buffer's "
                             "%zu in dimension %zu", v->name, ms[i], count[i], mc[i], i);
    return GPUBP_OK;
}

static int do_get_queued(gpubp_file *f, gpubp_variable *v, const gbp_sel *s, void *data);

/* A get: queue every transfer, then wait for all of them, also when queueing failed part way,
 * so that nothing is still writing into the user's buffer when the call returns. */
static int do_get(gpubp_file *f, gpubp_variable *v, const gbp_sel *s, void *data)
{
    int rc = do_get_queued(f, v, s, data);
    int rc2 = gbp_mem_sync(f->mem);
    return rc ? rc : rc2;
}

static int do_get_queued(gpubp_file *f, gpubp_variable *v, const gbp_sel *s, void *data)
{
    gpubp_memory_space space = GPUBP_MEM_HOST;
    if (v->type != GPUBP_TYPE_STRING) GBP_FORWARD_IF_ERROR(gbp_resolve_space(v, data, &space));
    int rev = gbp_space_reverses(f, space);
    size_t first, n, es = gbp_type_size(v->type);
    GBP_FORWARD_IF_ERROR(var_steps(v, s, &first, &n));
    uint8_t *out = data;
    if (v->kind == GPUBP_SHAPE_GLOBAL_VALUE) {
        for (size_t t = 0; t < n; t++) {
            const gbp_block *b = NULL;
            GBP_FORWARD_IF_ERROR(select_block(v, s, first + t, &b)); /* block 0 unless selected */
            if (v->type == GPUBP_TYPE_STRING) {
                memcpy(out, b->str, b->str_len);
                out[b->str_len] = '\0';
                out += b->str_len + 1;
            } else {
                gbp_box one;
                gbp_box_dense(&one, 0, NULL);
                GBP_FORWARD_IF_ERROR(gbp_mem_scatter(f->mem, space, b->mm, es, &one, out, &one));
                out += es;
            }
        }
        return GPUBP_OK;
    }
    size_t start[GBP_MAX_DIMS], count[GBP_MAX_DIMS];
    uint8_t *next = out;
    for (size_t t = 0; t < n; t++) {
        size_t vs = first + t, sbytes;
        GBP_FORWARD_IF_ERROR(get_box(v, s, vs, rev, start, count));
        GBP_FORWARD_IF_ERROR(check_mem_sel(v, s, rev, count));
        GBP_FORWARD_IF_ERROR(step_bytes(v, s, vs, rev, &sbytes));
        uint8_t *dst = next;
        next += sbytes;
        const gbp_var_step *st = &v->rv->steps[vs];
        const gbp_block *blocks = NULL;
        GBP_FORWARD_IF_ERROR(vblocks(v, vs, &blocks));
        if (v->kind == GPUBP_SHAPE_LOCAL_VALUE && v->type == GPUBP_TYPE_STRING) {
            for (size_t b = start[0]; b < start[0] + count[0]; b++) {
                memcpy(dst, blocks[b].str, blocks[b].str_len);
                dst[blocks[b].str_len] = '\0';
                dst += blocks[b].str_len + 1;
            }
        } else if (v->kind == GPUBP_SHAPE_LOCAL_VALUE) {
            /* block b's value (in the metadata) is element b - start of the box */
            for (size_t b = start[0]; b < start[0] + count[0]; b++) {
                gbp_box one, d;
                const size_t n1 = 1;
                gbp_box_dense(&one, 1, &n1);
                d.ndims = 1;
                d.dims[0] = s->mem_ndims ? s->mem_count[0] : count[0];
                d.start[0] = (s->mem_ndims ? s->mem_start[0] : 0) + b - start[0];
                d.count[0] = 1;
                GBP_FORWARD_IF_ERROR(gbp_mem_scatter(f->mem, space, blocks[b].mm, es,
                                                     &one, dst, &d));
            }
        } else if (v->kind == GPUBP_SHAPE_LOCAL_ARRAY) {
            const gbp_block *b = NULL;
            GBP_FORWARD_IF_ERROR(select_block(v, s, vs, &b));
            GBP_FORWARD_IF_ERROR(read_block_part(f, v, space, b, start, count, s, rev, dst, 1));
        } else {
            for (size_t b = 0; b < st->nblocks; b++)
                GBP_FORWARD_IF_ERROR(read_block_part(f, v, space, &blocks[b], start,
                                                     count, s, rev, dst, 0));
        }
    }
    return GPUBP_OK;
}

static int get(gpubp_file *f, gpubp_variable *v, void *data, gpubp_launch mode);

int gpubp_get(gpubp_file *f, gpubp_variable *v, void *data, gpubp_launch mode)
{
    GBP_CHECK_ARG(f);
    int rc = !v    ? gbp_error(GPUBP_ERR_INVALID_ARG, 0, "gpubp_get: argument 'v' is NULL")
             : !data ? gbp_error(GPUBP_ERR_INVALID_ARG, 0, "gpubp_get: argument 'data' is NULL")
                     : GPUBP_OK;
    /* an unreadable type is the same on every rank: the get fails there, not the step */
    if (rc == GPUBP_OK && v->file == f) GBP_FORWARD_IF_ERROR(check_readable(v, "gpubp_get"));
    if (rc == GPUBP_OK) rc = get(f, v, data, mode);
    return get_failed(f, rc);
}

static int get(gpubp_file *f, gpubp_variable *v, void *data, gpubp_launch mode)
{
    GBP_RETURN_ERROR_IF(v->file != f, GPUBP_ERR_INVALID_ARG,
                        "gpubp_get: variable '%s' belongs to another file", v->name);
    GBP_RETURN_ERROR_IF(gbp_is_write_mode(f), GPUBP_ERR_WRONG_MODE,
                        "gpubp_get: %s is open for writing", f->path);
    GBP_RETURN_ERROR_IF(f->mode == GPUBP_MODE_READ && !f->in_step, GPUBP_ERR_WRONG_MODE,
                        "gpubp_get: '%s': no step is open (call gpubp_begin_step)", v->name);
    GBP_RETURN_ERROR_IF(mode != GPUBP_SYNC && mode != GPUBP_DEFERRED, GPUBP_ERR_INVALID_ARG,
                        "gpubp_get: invalid launch mode %d", (int)mode);
    if (mode == GPUBP_SYNC) {
        int rc = do_get(f, v, &v->sel, data);
        return rc == GPUBP_ERR_IO ? gbp_error_with_path(rc, f->path) : rc;
    }
    /* deferred: check now what can be checked, read at perform_gets / end_step */
    size_t first, n, one;
    GBP_FORWARD_IF_ERROR(var_steps(v, &v->sel, &first, &n));
    int rev = gbp_space_reverses(f, eff_space(v, GPUBP_MEM_DETECT));
    for (size_t t = 0; t < n && v->type != GPUBP_TYPE_STRING; t++)
        GBP_FORWARD_IF_ERROR(step_bytes(v, &v->sel, first + t, rev, &one));
    GBP_FORWARD_IF_ERROR(gbp_grow((void **)&f->gets, &f->cap_gets, f->ngets + 1, sizeof *f->gets));
    f->gets[f->ngets].var = v;
    f->gets[f->ngets].sel = v->sel;
    f->gets[f->ngets].data = data;
    f->ngets++;
    return GPUBP_OK;
}

int gbp_reader_perform(gpubp_file *f)
{
    int rc = GPUBP_OK;
    for (size_t i = 0; i < f->ngets; i++) {
        int r = do_get(f, f->gets[i].var, &f->gets[i].sel, f->gets[i].data);
        if (rc == GPUBP_OK) rc = r;
    }
    f->ngets = 0;
    return get_failed(f, rc);
}

int gpubp_perform_gets(gpubp_file *f)
{
    GBP_CHECK_ARG(f);
    GBP_RETURN_ERROR_IF(gbp_is_write_mode(f), GPUBP_ERR_WRONG_MODE,
                        "gpubp_perform_gets: %s is open for writing", f->path);
    return gbp_reader_perform(f);
}

/* ---- listings and attributes ---------------------------------------------------------------- */

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

int gpubp_available_variables(const gpubp_file *fc, size_t *n, const char *const **names)
{
    GBP_CHECK_ARG(fc);
    GBP_CHECK_ARG(n);
    GBP_CHECK_ARG(names);
    gpubp_file *f = (gpubp_file *)fc; /* the cache is not part of the file's state */
    gbp_free(f->names);
    size_t cap = (gbp_is_write_mode(f) ? f->nvars : f->ix.nvars) + 1;
    f->names = gbp_malloc(cap * sizeof *f->names);
    GBP_CHECK_ALLOC(f->names);
    size_t k = 0;
    if (gbp_is_write_mode(f)) {
        for (size_t i = 0; i < f->nvars; i++) f->names[k++] = f->vars[i]->name;
    } else {
        for (size_t i = 0; i < f->ix.nvars; i++) {
            gbp_var *rv = f->ix.vars[i];
            if (rv->nsteps == 0) continue;
            if (f->mode == GPUBP_MODE_READ && (!f->in_step || !gbp_var_find_step(rv, f->cur_step)))
                continue;
            f->names[k++] = rv->name;
        }
    }
    qsort(f->names, k, sizeof *f->names, cmp_str);
    f->nnames = k;
    *n = k;
    *names = f->names;
    return GPUBP_OK;
}

int gpubp_available_attributes(const gpubp_file *fc, size_t *n, const char *const **names)
{
    GBP_CHECK_ARG(fc);
    GBP_CHECK_ARG(n);
    GBP_CHECK_ARG(names);
    gpubp_file *f = (gpubp_file *)fc;
    gbp_free(f->anames);
    size_t cap = (gbp_is_write_mode(f) ? f->nattrs : f->ix.nattrs) + 1;
    f->anames = gbp_malloc(cap * sizeof *f->anames);
    GBP_CHECK_ALLOC(f->anames);
    size_t k = 0;
    if (gbp_is_write_mode(f)) {
        for (size_t i = 0; i < f->nattrs; i++) f->anames[k++] = f->attrs[i].name;
    } else {
        for (size_t i = 0; i < f->ix.nattrs; i++) f->anames[k++] = f->ix.attrs[i].name;
    }
    qsort(f->anames, k, sizeof *f->anames, cmp_str);
    f->nanames = k;
    *n = k;
    *names = f->anames;
    return GPUBP_OK;
}

static int find_attr(const gpubp_file *f, const char *name, const gbp_attr **a)
{
    GBP_RETURN_ERROR_IF(gbp_is_write_mode(f), GPUBP_ERR_WRONG_MODE,
                        "attribute queries need a file open for reading");
    *a = gbp_index_find_attr(&f->ix, name);
    GBP_RETURN_ERROR_IF(!*a, GPUBP_ERR_NOT_FOUND, "attribute '%s' is not in %s", name, f->path);
    return GPUBP_OK;
}

/* An attribute of a type this library cannot read is listed; its data is not readable. */
static int attr_readable(const gpubp_file *f, const gbp_attr *a)
{
    if (gbp_type_known(a->type)) return GPUBP_OK;
    return gbp_error(GPUBP_ERR_UNSUPPORTED_TYPE, 0,
                     "attribute '%s' of %s has BP4 type id %d, which libgpubp cannot read",
                     a->name, f->path, a->type);
}

int gpubp_inquire_attribute(const gpubp_file *f, const char *name, gpubp_type *type, size_t *n,
                            int *is_array)
{
    GBP_CHECK_ARG(f);
    GBP_CHECK_ARG(name);
    const gbp_attr *a;
    GBP_FORWARD_IF_ERROR(find_attr(f, name, &a));
    if (type) *type = (gpubp_type)a->type;
    if (n) *n = a->n;
    if (is_array) *is_array = a->is_array;
    return GPUBP_OK;
}

int gpubp_attribute_data(const gpubp_file *f, const char *name, void *data)
{
    GBP_CHECK_ARG(f);
    GBP_CHECK_ARG(name);
    GBP_CHECK_ARG(data);
    const gbp_attr *a;
    GBP_FORWARD_IF_ERROR(find_attr(f, name, &a));
    GBP_FORWARD_IF_ERROR(attr_readable(f, a));
    GBP_RETURN_ERROR_IF(a->type == GPUBP_TYPE_STRING, GPUBP_ERR_TYPE_MISMATCH,
                        "attribute '%s' is a string: use gpubp_attribute_string", name);
    memcpy(data, a->data, a->n * gbp_type_size(a->type));
    return GPUBP_OK;
}

int gpubp_attribute_string(const gpubp_file *f, const char *name, size_t i, const char **s)
{
    GBP_CHECK_ARG(f);
    GBP_CHECK_ARG(name);
    GBP_CHECK_ARG(s);
    const gbp_attr *a;
    GBP_FORWARD_IF_ERROR(find_attr(f, name, &a));
    GBP_FORWARD_IF_ERROR(attr_readable(f, a));
    GBP_RETURN_ERROR_IF(a->type != GPUBP_TYPE_STRING, GPUBP_ERR_TYPE_MISMATCH,
                        "attribute '%s' is not a string", name);
    GBP_RETURN_ERROR_IF(i >= a->n, GPUBP_ERR_INVALID_SELECTION,
                        "attribute '%s' has %zu strings; %zu requested", name, a->n, i);
    *s = a->strings[i];
    return GPUBP_OK;
}

int gpubp_variable_dataset_step(const gpubp_variable *v, size_t step, size_t *dataset_step)
{
    GBP_CHECK_ARG(v);
    GBP_CHECK_ARG(dataset_step);
    GBP_RETURN_ERROR_IF(gbp_is_write_mode(v->file), GPUBP_ERR_WRONG_MODE,
                        "gpubp_variable_dataset_step: '%s' belongs to a file open for writing",
                        v->name);
    GBP_RETURN_ERROR_IF(step >= v->rv->nsteps, GPUBP_ERR_INVALID_STEP,
                        "gpubp_variable_dataset_step: '%s' has %zu steps; step %zu does not exist",
                        v->name, v->rv->nsteps, step);
    *dataset_step = v->rv->steps[step].step;
    return GPUBP_OK;
}
