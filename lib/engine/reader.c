/* The reader: open (md.idx and metadata, serial or broadcast from rank 0), the step loop,
 * inquire. */
#include "engine/reader.h"

#include "engine/bp3read.h"
#include "engine/bp5read.h"
#include "engine/collective.h"
#include "engine/dataset.h"
#include "engine/get.h"
#include "engine/handles.h"
#include "engine/scan.h"
#include "engine/zdev_read.h"

#include "compress/blosczlib.h"
#include "format/bp4_decode.h"
#include "memspace/box.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define GBP_MAX_INDEX_BYTES ((uint64_t)1 << 30)

static int adopt_index(gpubp_file *f, uint8_t *idx, size_t ilen, uint64_t msize,
                       const char *idxp);

static int load_metadata_comm(gpubp_file *f);

/* (Re)reads md.idx and checks every complete record against md.0's size. Records already parsed
 * into the index are not parsed again. md.0 itself is read step by step (parse_until). */
static int load_metadata(gpubp_file *f)
{
    if (f->rd.bp3) return GPUBP_OK; /* complete when written: read once, at open */
    if (f->rd.bp5) return gbp_bp5_load_metadata(f);
    char *idxp = gbp_path_join(f->path, "md.idx");
    int rc = idxp ? GPUBP_OK : gbp_nomem();
    uint8_t *idx = NULL;
    size_t ilen = 0;
    if (rc == GPUBP_OK && !f->rd.remote) {
        struct stat st;
        if (stat(idxp, &st) == 0 && (uint64_t)st.st_size > GBP_MAX_INDEX_BYTES)
            rc = gbp_error(GPUBP_ERR_FORMAT, 0, "%s: %llu bytes is larger than any index (%llu "
                           "bytes = %llu steps)", idxp, (unsigned long long)st.st_size,
                           (unsigned long long)GBP_MAX_INDEX_BYTES,
                           (unsigned long long)(GBP_MAX_INDEX_BYTES / BP4_IDX_RECORD_SIZE));
    }
    if (rc == GPUBP_OK && f->rd.remote) {
        uint64_t isz = 0;
        rc = gbp_remote_size(f->rd.remote, "md.idx", &isz);
        if (rc == GPUBP_OK && isz > GBP_MAX_INDEX_BYTES)
            rc = gbp_error(GPUBP_ERR_FORMAT, 0, "%s: md.idx of %llu bytes is too large", f->path,
                           (unsigned long long)isz);
        if (rc == GPUBP_OK) rc = gbp_remote_read_file(f->rd.remote, "md.idx", &idx, &ilen);
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
    if (rc == GPUBP_OK && ilen >= BP4_HEADER_SIZE + BP4_IDX_RECORD_SIZE && f->rd.remote) {
        rc = gbp_remote_size(f->rd.remote, "md.0", &msize);
    } else if (rc == GPUBP_OK && ilen >= BP4_HEADER_SIZE + BP4_IDX_RECORD_SIZE) {
        rc = gbp_dataset_open_md0(f);
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
    if (rc == GPUBP_OK && n < f->rd.nrecords_all)
        rc = gbp_error(GPUBP_ERR_FORMAT, 0, "%s shrank from %zu to %zu steps while open", idxp,
                       f->rd.nrecords_all, n);
    uint64_t end = rc == GPUBP_OK && n ? recs[n - 1].end : 0;
    size_t kept = 0; /* select_steps: the records of the steps read, in order */
    for (size_t i = 0; rc == GPUBP_OK && i < n; i++)
        if (gbp_params_step_selected(&f->params, i)) recs[kept++] = recs[i];
    if (rc == GPUBP_OK) {
        gbp_free(f->rd.idx);
        gbp_free(f->rd.records);
        f->rd.idx = idx;
        f->rd.idx_len = ilen;
        f->rd.records = recs;
        f->rd.nrecords = kept;
        f->rd.nrecords_all = n;
        f->rd.records_end = end;
        f->md0_size = msize;
        f->rd.writer_active = ilen >= BP4_HEADER_SIZE ? idx[BP4_IDX_ACTIVE_AT] != 0 : 1;
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
    if (f->rd.bp3) return GPUBP_OK; /* every rank read it at open */
    if (f->rd.bp5) return gbp_bp5_load_metadata(f); /* collective too */
    gbp_comm *c = f->comm;
    int rc = GPUBP_OK;
    uint64_t hdr[3] = {0, 0, 0}; /* md.idx bytes, md.0 end of the last record, writer active */
    size_t old = f->rd.md0_all_len, old_n = f->rd.nrecords;
    uint64_t old_size = f->md0_size;
    int old_active = f->rd.writer_active;
    if (c->rank == 0) {
        rc = load_metadata(f);
        uint64_t end = f->rd.records_end; /* every record's, selected or not (adopt_index) */
        if (rc == GPUBP_OK && end > old) {
            uint8_t *m = gbp_realloc(f->rd.md0_all, (size_t)end);
            if (!m) rc = gbp_error(GPUBP_ERR_NOMEM, 0, "out of memory (%llu bytes of md.0)",
                                   (unsigned long long)end);
            else f->rd.md0_all = m;
            char what[4200];
            snprintf(what, sizeof what, "%s/md.0", f->path);
            if (rc == GPUBP_OK)
                rc = gbp_pread_all(f->md0_fd, m + old, (size_t)(end - old), old, what);
        }
        hdr[0] = f->rd.idx_len;
        hdr[1] = end > old ? end : old;
        hdr[2] = (uint64_t)f->rd.writer_active;
    }
    rc = gbp_comm_agree(c, rc, 0);
    if (rc == GPUBP_OK) rc = gbp_comm_bcast(c, hdr, sizeof hdr, 0);
    uint8_t *idx = NULL, *m = f->rd.md0_all;
    int agreed = rc != GPUBP_OK; /* rank 0's failure is every rank's already */
    if (!agreed) {
        idx = c->rank == 0 ? f->rd.idx : gbp_malloc(hdr[0] ? (size_t)hdr[0] : 1);
        if (c->rank != 0) m = gbp_realloc(f->rd.md0_all, hdr[1] ? (size_t)hdr[1] : 1);
        if (c->rank != 0 && m) f->rd.md0_all = m;
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
        if (f->rd.nrecords > old_n) f->rd.nrecords = old_n;
        f->rd.md0_all_len = old;
        f->md0_size = old_size;
        f->rd.writer_active = old_active;
        return rc;
    }
    f->rd.md0_all_len = (size_t)hdr[1];
    f->md0_size = hdr[1];
    f->rd.writer_active = (int)hdr[2];
    return GPUBP_OK;
}

/* md.idx, then (random access) the light pass over md.0: block counts now, shapes and min/max
 * when a listing asks; random access keeps no metadata bytes, only the index. */
static int load_index(gpubp_file *f)
{
    GBP_FORWARD_IF_ERROR(f->comm ? load_metadata_comm(f) : load_metadata(f));
    if (f->mode == GPUBP_MODE_READ_RANDOM_ACCESS) {
        f->rd.ix.light = 1;
        int rc = gbp_scan_until(f, f->rd.nrecords);
        gbp_scan_drop_window(f);
        /* parallel: a rank out of memory fails the open on every rank */
        if (f->comm) rc = gbp_comm_check(f->comm, rc, "gpubp_open (index)");
        return rc;
    }
    return GPUBP_OK;
}

static int check_dataset(gpubp_file *f);

/* A BP3 file: its index made into md.0 and md.idx in memory (every rank of a parallel reader reads
 * it), then read as a BP4 dataset. */
static int open_bp3(gpubp_file *f)
{
    gbp_buf md0, idx;
    gbp_buf_init(&md0);
    gbp_buf_init(&idx);
    int sub = 0, rc = gbp_bp3_load(f->path, &md0, &idx, &sub);
    if (rc == GPUBP_OK) {
        f->rd.bp3 = 1;
        f->rd.bp3_subfiles = sub;
        gbp_free(f->rd.md0_all);
        f->rd.md0_all = md0.data;
        f->rd.md0_all_len = md0.len;
        md0.data = NULL;
        rc = adopt_index(f, idx.data, idx.len, f->rd.md0_all_len, f->path);
        idx.data = NULL;
    }
    gbp_buf_free(&md0);
    gbp_buf_free(&idx);
    return rc;
}

int gbp_reader_open(gpubp_file *f)
{
    if (f->comm) {
        int rc = f->comm->rank == 0 ? check_dataset(f) : GPUBP_OK;
        GBP_FORWARD_IF_ERROR(gbp_comm_agree(f->comm, rc, 0));
        /* rank 0 found a BP5 dataset (1) or a BP3 file (2): every rank reads it so */
        int64_t kind = f->rd.bp5 ? 1 : f->rd.bp3 ? 2 : 0;
        GBP_FORWARD_IF_ERROR(gbp_comm_bcast(f->comm, &kind, sizeof kind, 0));
        rc = kind == 1 && !f->rd.bp5 ? gbp_bp5_setup(f) : GPUBP_OK;
        if (kind == 2 && !f->rd.bp3) rc = open_bp3(f);
        GBP_FORWARD_IF_ERROR(gbp_comm_agree_all(f->comm, rc, "gpubp_open"));
        return load_index(f);
    }
    return check_dataset(f);
}

/* A local dataset: is it a BP4 directory? Then its index. */
static int check_dataset(gpubp_file *f)
{
    if (gbp_is_remote_url(f->path)) {
        int rc = gbp_remote_open(&f->rd.remote, f->path, &f->params);
        if (rc == GPUBP_ERR_NOT_FOUND) rc = gbp_error_with_path(GPUBP_ERR_NOT_BP4, f->path);
        GBP_FORWARD_IF_ERROR(rc);
        uint64_t msz;
        rc = gbp_remote_size(f->rd.remote, "mmd.0", &msz); /* BP5 */
        if (rc == GPUBP_OK) return f->comm ? gbp_bp5_setup(f) : gbp_bp5_open(f);
        if (rc != GPUBP_ERR_NOT_FOUND) return rc;
        return load_index(f);
    }
    struct stat st;
    int found = stat(f->path, &st) == 0;
    if (!found) { /* ADIOS2's BP3 reader opens NAME.bp for NAME: so does this one */
        size_t pl = strlen(f->path);
        char *bp = gbp_malloc(pl + 4);
        GBP_CHECK_ALLOC(bp);
        memcpy(bp, f->path, pl);
        memcpy(bp + pl, ".bp", 4);
        if (stat(bp, &st) == 0 && S_ISREG(st.st_mode)) {
            gbp_free(f->path);
            f->path = bp;
            found = 1;
        } else {
            gbp_free(bp);
        }
    }
    if (found && S_ISREG(st.st_mode)) { /* not a directory: a BP3 file? */
        GBP_FORWARD_IF_ERROR(open_bp3(f));
        return f->comm ? GPUBP_OK : load_index(f);
    }
    int is_dir;
    GBP_FORWARD_IF_ERROR(gbp_is_dir(f->path, &is_dir));
    if (!is_dir)
        return gbp_error(GPUBP_ERR_NOT_BP4, ENOENT, "%s does not exist", f->path);
    char *mmd = gbp_path_join(f->path, "mmd.0"), *idx = gbp_path_join(f->path, "md.idx");
    char *md0 = gbp_path_join(f->path, "md.0"), *d0 = gbp_path_join(f->path, "data.0");
    int rc = (mmd && idx && md0 && d0) ? GPUBP_OK : gbp_nomem();
    int bp5 = rc == GPUBP_OK && gbp_path_exists(mmd);
    if (rc == GPUBP_OK && !bp5 && !gbp_path_exists(idx) && !gbp_path_exists(md0) &&
        !gbp_path_exists(d0))
        rc = gbp_error(GPUBP_ERR_NOT_BP4, 0,
                       "%s is not a BP4 dataset (no md.idx, md.0 or data.0)", f->path);
    gbp_free(mmd);
    gbp_free(idx);
    gbp_free(md0);
    gbp_free(d0);
    GBP_FORWARD_IF_ERROR(rc);
    if (bp5) return f->comm ? gbp_bp5_setup(f) : gbp_bp5_open(f);
    return f->comm ? GPUBP_OK : load_index(f);
}

void gbp_reader_free(gpubp_file *f)
{
    (void)gbp_zdev_read_ahead_wait(f); /* none pending after a get: a guard before the fds close */
    gbp_index_free(&f->rd.ix);
    gbp_bp5_free(f);
    gbp_free(f->rd.idx);
    gbp_free(f->rd.md0_all);
    gbp_free(f->rd.md0);
    gbp_free(f->rd.records);
    if (f->md0_fd >= 0) close(f->md0_fd);
    gbp_remote_close(f->rd.remote);
    f->rd.remote = NULL;
    for (size_t i = 0; i < f->rd.nrfd; i++)
        if (f->rd.rfd[i] >= 0) close(f->rd.rfd[i]);
    gbp_free(f->rd.rfd);
    gbp_free(f->rd.gets);
}

static void gbp_reader_invalidate_names(gpubp_file *f)
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
    snprintf(what, sizeof what, "gpubp_begin_step: step %zu of %s",
             f->rd.next_step - (rc == GPUBP_OK), f->path);
    int arc = gbp_comm_check(f->comm, rc, what);
    if (arc != GPUBP_OK && rc == GPUBP_OK) {
        f->in_step = 0;
        f->rd.next_step = f->rd.cur_step;
    }
    return arc;
}

static int begin_step(gpubp_file *f)
{
    double t0 = gbp_now_s(), timeout = f->params.timeout;
    for (;;) {
        if (f->rd.next_step < f->rd.nrecords) {
            GBP_FORWARD_IF_ERROR(gbp_scan_until(f, f->rd.next_step + 1));
            f->rd.cur_step = f->rd.next_step++;
            f->in_step = 1;
            gbp_reader_invalidate_names(f);
            return GPUBP_OK;
        }
        GBP_FORWARD_IF_ERROR(f->comm ? load_metadata_comm(f) : load_metadata(f));
        if (f->rd.next_step < f->rd.nrecords) continue;
        if (!f->rd.writer_active) return GPUBP_END_OF_STREAM;
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
    snprintf(what, sizeof what, "gpubp_end_step: step %zu of %s", f->rd.cur_step, f->path);
    return gbp_comm_check(f->comm, rc, what);
}

int gbp_reader_inquire(gpubp_variable **out, gpubp_file *f, const char *name)
{
    GBP_RETURN_ERROR_IF(f->mode == GPUBP_MODE_READ && !f->in_step, GPUBP_ERR_WRONG_MODE,
                        "gpubp_inquire_variable: no step is open on %s (call gpubp_begin_step)",
                        f->path);
    gbp_var *rv = gbp_index_find(&f->rd.ix, name);
    if (rv && rv->nsteps == 0) rv = NULL;
    if (rv && f->mode == GPUBP_MODE_READ && !gbp_var_find_step(rv, f->rd.cur_step)) rv = NULL;
    if (!rv && gbp_bp5_not_found(f, name) != GPUBP_ERR_NOT_FOUND) return GPUBP_ERR_NOT_SUPPORTED;
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
