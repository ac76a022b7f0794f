/* The writer: variables and attributes, puts, and the commit of a step (data, then md.0, then
 * the md.idx record: the step is visible to readers once its record is written). */
#include "internal.h"

#include "blosczlib.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

const char *gbp_sub_name(const gpubp_file *f, int k, char *buf, size_t n)
{
    snprintf(buf, n, "%s/data.%d", f->path, f->sub_base + k);
    return buf;
}
#define sub_name gbp_sub_name

/* Opens subfile k (creating it; emptied when trunc), its size giving where the next PG goes. */
static int open_subfile(gpubp_file *f, int k, int trunc)
{
    char p[4200];
    sub_name(f, k, p, sizeof p);
    GBP_FORWARD_IF_ERROR(gbp_open_file(&f->data_fd[k], p, O_RDWR | O_CREAT | (trunc ? O_TRUNC : 0), 0666));
    uint64_t size;
    GBP_FORWARD_IF_ERROR(gbp_file_size(f->data_fd[k], &size, p));
    f->data_has_header[k] = size >= BP4_HEADER_SIZE;
    f->data_size[k] = size >= BP4_HEADER_SIZE ? size : BP4_HEADER_SIZE;
    return GPUBP_OK;
}

/* subfiles=auto, a new dataset: data.1… are created when a block first goes there, so that a
 * dataset of small blocks is data.0 alone, as ADIOS2 writes it; those of an earlier dataset of
 * the same name are removed (they would be read as this one's). Appending: those that exist are
 * opened now (their sizes are where the next PGs go); the others are created when first used. */
static int open_subfile_auto(gpubp_file *f, int k, int trunc)
{
    char p[4200];
    sub_name(f, k, p, sizeof p);
    f->data_size[k] = BP4_HEADER_SIZE;
    if (trunc) {
        if (unlink(p) < 0 && errno != ENOENT)
            return gbp_error(GPUBP_ERR_IO, errno, "cannot remove %s: %s", p, strerror(errno));
        return GPUBP_OK;
    }
    if (access(p, F_OK) < 0) return GPUBP_OK;
    return open_subfile(f, k, 0);
}

/* Subfile k opened (created) for a block, when subfiles=auto left it closed. */
static int use_subfile(gpubp_file *f, int k)
{
    return f->data_fd[k] >= 0 ? GPUBP_OK : open_subfile(f, k, 1);
}

/* Allocates the per-subfile state and, when `open` is set, opens (creating) this writer's
 * subfiles; their current sizes give where the next PG goes. */
int gbp_open_subfiles(gpubp_file *f, int trunc, int open);
int gbp_open_subfiles(gpubp_file *f, int trunc, int open)
{
    int n = f->nsub;
    f->data_fd = gbp_malloc((size_t)n * sizeof(int));
    f->data_size = gbp_calloc((size_t)n, sizeof(uint64_t));
    f->pg_start = gbp_calloc((size_t)n, sizeof(uint64_t));
    f->cursor = gbp_calloc((size_t)n, sizeof(uint64_t));
    f->pg_nvars = gbp_calloc((size_t)n, sizeof(uint32_t));
    f->data_has_header = gbp_calloc((size_t)n, sizeof(int));
    for (int k = 0; f->data_fd && k < n; k++) f->data_fd[k] = -1;
    if (!f->data_fd || !f->data_size || !f->pg_start || !f->cursor || !f->pg_nvars ||
        !f->data_has_header)
        return gbp_nomem();
    for (int k = 0; open && k < n; k++)
        GBP_FORWARD_IF_ERROR(k > 0 && f->sub_auto ? open_subfile_auto(f, k, trunc)
                                                  : open_subfile(f, k, trunc));
    return GPUBP_OK;
}

/* Append: continue after the last committed step. Metadata past the last record's end (a
 * writer killed mid-commit) is cut off; data past it is simply never referenced. */
static int load_for_append(gpubp_file *f, const char *idxp, const char *md0p, int *have)
{
    uint8_t *idx = NULL;
    size_t len = 0;
    *have = 0;
    int rc = gbp_read_file(idxp, &idx, &len, 0);
    if (rc == GPUBP_ERR_NOT_FOUND) return GPUBP_OK;
    GBP_FORWARD_IF_ERROR(rc);
    if (len < BP4_HEADER_SIZE + BP4_IDX_RECORD_SIZE) {
        gbp_free(idx);
        return GPUBP_OK; /* no committed step: start afresh */
    }
    rc = bp4_check_idx_header(idx, len, idxp);
    size_t n = (len - BP4_HEADER_SIZE) / BP4_IDX_RECORD_SIZE;
    uint64_t md0_size = 0;
    if (rc == GPUBP_OK) {
        int fd;
        rc = gbp_open_file(&fd, md0p, O_RDONLY, 0);
        if (rc == GPUBP_OK) {
            rc = gbp_file_size(fd, &md0_size, md0p);
            close(fd);
        }
    }
    bp4_idx_record r = {0};
    for (size_t i = 0; rc == GPUBP_OK && i < n; i++)
        rc = bp4_parse_idx_record(idx, len, i, md0_size, &r, idxp);
    gbp_free(idx);
    GBP_FORWARD_IF_ERROR(rc);
    f->idx_records = n;
    f->md0_size = r.end;
    *have = 1;
    return GPUBP_OK;
}

/* The dataset directory, md.0 and md.idx (WRITE: cleared; APPEND: continued after the last
 * committed step, *have set). A parallel writer runs this on rank 0 only. */
int gbp_writer_open_metadata(gpubp_file *f, int *have)
{
    int is_dir;
    *have = 0;
    GBP_FORWARD_IF_ERROR(gbp_is_dir(f->path, &is_dir));
    char *idxp = gbp_path_join(f->path, "md.idx"), *md0p = gbp_path_join(f->path, "md.0");
    char *mmdp = gbp_path_join(f->path, "mmd.0");
    int rc = (idxp && md0p && mmdp) ? GPUBP_OK : gbp_nomem();
    if (rc == GPUBP_OK && !is_dir) rc = gbp_mkdir(f->path);
    if (rc == GPUBP_OK && is_dir && f->mode == GPUBP_MODE_WRITE) rc = gbp_clear_dataset(f->path);
    if (rc == GPUBP_OK && is_dir && f->mode == GPUBP_MODE_APPEND) {
        if (gbp_path_exists(mmdp))
            rc = gbp_error(GPUBP_ERR_BP5, 0, "%s is an ADIOS2 BP5 dataset: cannot append BP4 steps",
                           f->path);
        else
            rc = load_for_append(f, idxp, md0p, have);
    }
    int trunc = !*have;
    if (rc == GPUBP_OK) rc = gbp_open_file(&f->idx_fd, idxp, O_RDWR | O_CREAT | (trunc ? O_TRUNC : 0), 0666);
    if (rc == GPUBP_OK) rc = gbp_open_file(&f->md0_fd, md0p, O_RDWR | O_CREAT | (trunc ? O_TRUNC : 0), 0666);
    if (rc == GPUBP_OK && *have) {
        rc = gbp_truncate(f->md0_fd, f->md0_size, md0p);
        if (rc == GPUBP_OK)
            rc = gbp_truncate(f->idx_fd, BP4_HEADER_SIZE + f->idx_records * BP4_IDX_RECORD_SIZE, idxp);
        uint8_t one = 1;
        if (rc == GPUBP_OK) rc = gbp_pwrite_all(f->idx_fd, &one, 1, 38, idxp);
    }
    if (!*have) {
        f->md0_size = BP4_HEADER_SIZE;
        f->idx_records = 0;
    }
    f->step = (uint32_t)f->idx_records + 1;
    gbp_free(idxp);
    gbp_free(md0p);
    gbp_free(mmdp);
    return rc;
}

/* subfiles=auto: as many subfiles as I/O threads (io_threads, else pool_slots), at most this */
#define GBP_AUTO_SUBFILES_MAX 64

int gbp_writer_open(gpubp_file *f)
{
    const gbp_params *p = &f->params;
    /* parallel writers: one subfile per group unless asked (the groups spread the ranks) */
    int nauto = gbp_params_io_threads(p);
    if (nauto > GBP_AUTO_SUBFILES_MAX) nauto = GBP_AUTO_SUBFILES_MAX;
    f->sub_auto = p->subfiles <= 0 && !f->comm && nauto > 1;
    f->nsub = p->subfiles > 0 ? p->subfiles : f->sub_auto ? nauto : 1;
    if (f->comm) return gbp_pwriter_open(f); /* parallel writers commit in end_step */
    f->async = f->params.async_commit;
    int have;
    GBP_FORWARD_IF_ERROR(gbp_writer_open_metadata(f, &have));
    return gbp_open_subfiles(f, !have, 1);
}

void gbp_writer_free(gpubp_file *f)
{
    if (f->comm) gbp_pwriter_free(f);
    for (int k = 0; f->data_fd && k < f->nsub; k++)
        if (f->data_fd[k] >= 0) close(f->data_fd[k]);
    if (f->md0_fd >= 0) close(f->md0_fd);
    if (f->idx_fd >= 0) close(f->idx_fd);
    gbp_free(f->data_fd);
    gbp_free(f->data_size);
    gbp_free(f->pg_start);
    gbp_free(f->cursor);
    gbp_free(f->pg_nvars);
    gbp_free(f->data_has_header);
    gbp_discard_step(f);
    gbp_free(f->blocks);
    for (size_t i = 0; i < f->nattrs; i++) {
        gbp_attr_def *a = &f->attrs[i];
        gbp_free(a->name);
        gbp_free(a->data);
        for (size_t j = 0; a->strings && j < a->n; j++) gbp_free(a->strings[j]);
        gbp_free(a->strings);
    }
    gbp_free(f->attrs);
}

int gbp_writer_close(gpubp_file *f)
{
    int rc = GPUBP_OK;
    if (f->in_step) rc = gbp_writer_end_step(f);
    if (rc == GPUBP_OK && f->idx_records == 0 && !f->steps_begun) {
        /* a writer closed without ever beginning a step: commit one empty step, as ADIOS2 does,
         * so that the dataset reads as finished (an empty md.idx means "a writer may still
         * come"); after failed steps nothing is added */
        rc = gbp_writer_begin_step(f);
        if (rc == GPUBP_OK) rc = gbp_writer_end_step(f);
    }
    /* async_commit: the last step's commit is waited for (and reported); broken: again */
    int rcw = gbp_writer_commit_wait(f);
    if (rc == GPUBP_OK) rc = rcw;
    if (f->idx_records > 0 && f->idx_fd >= 0) {
        uint8_t zero = 0;
        char ip[4200];
        snprintf(ip, sizeof ip, "%s/md.idx", f->path);
        int rc2 = gbp_pwrite_all(f->idx_fd, &zero, 1, 38, ip);
        if (rc2 == GPUBP_OK && f->params.fsync) rc2 = gbp_fdatasync(f->idx_fd, ip);
        if (rc == GPUBP_OK) rc = rc2;
    }
    return f->comm ? gbp_pwriter_close_sync(f, rc) : rc;
}

int gpubp_define_variable(gpubp_variable **out, gpubp_file *f, const char *name, gpubp_type type,
                          size_t ndims, const size_t *shape, const size_t *start,
                          const size_t *count)
{
    GBP_CHECK_ARG(out);
    *out = NULL;
    GBP_CHECK_ARG(f);
    GBP_CHECK_ARG(name);
    GBP_RETURN_ERROR_IF(!gbp_is_write_mode(f), GPUBP_ERR_WRONG_MODE,
                        "gpubp_define_variable: %s is open for reading", f->path);
    GBP_RETURN_ERROR_IF(!*name || strlen(name) > 65535, GPUBP_ERR_INVALID_ARG,
                        "gpubp_define_variable: invalid variable name");
    GBP_RETURN_ERROR_IF(type == GPUBP_TYPE_STRING_ARRAY, GPUBP_ERR_INVALID_ARG,
                        "gpubp_define_variable: '%s': string arrays are attributes only", name);
    GBP_RETURN_ERROR_IF(!gbp_type_known(type), GPUBP_ERR_INVALID_ARG,
                        "gpubp_define_variable: '%s': invalid type %d", name, (int)type);
    GBP_RETURN_ERROR_IF(gbp_file_var(f, name), GPUBP_ERR_EXISTS,
                        "gpubp_define_variable: variable '%s' is already defined", name);
    GBP_RETURN_ERROR_IF(ndims > GBP_MAX_DIMS, GPUBP_ERR_INVALID_DIMS,
                        "gpubp_define_variable: '%s': %zu dimensions (at most %d)", name, ndims,
                        GBP_MAX_DIMS);
    int local_value = ndims == 1 && shape && shape[0] == GPUBP_LOCAL_VALUE_DIM;
    for (size_t i = 0; shape && !local_value && i < ndims; i++)
        if (shape[i] >= GPUBP_LOCAL_VALUE_DIM)
            return gbp_error(GPUBP_ERR_INVALID_DIMS, 0,
                             "gpubp_define_variable: '%s': shape %zu in dimension %zu is reserved "
                             "(a local value is ndims 1 with shape GPUBP_LOCAL_VALUE_DIM)", name,
                             shape[i], i);
    GBP_RETURN_ERROR_IF(type == GPUBP_TYPE_STRING && ndims != 0 && !local_value,
                        GPUBP_ERR_INVALID_DIMS,
                        "gpubp_define_variable: string variable '%s' must be a single value "
                        "(ndims 0) or a local value", name);
    int kind = GPUBP_SHAPE_GLOBAL_VALUE;
    if (local_value) {
        kind = GPUBP_SHAPE_LOCAL_VALUE;
    } else if (ndims > 0) {
        GBP_RETURN_ERROR_IF(!count, GPUBP_ERR_INVALID_ARG,
                            "gpubp_define_variable: '%s': count is NULL", name);
        if (shape) {
            kind = GPUBP_SHAPE_GLOBAL_ARRAY;
            GBP_RETURN_ERROR_IF(!start, GPUBP_ERR_INVALID_ARG,
                                "gpubp_define_variable: '%s': start is NULL", name);
            for (size_t i = 0; i < ndims; i++)
                if (start[i] > shape[i] || count[i] > shape[i] - start[i])
                    return gbp_error(GPUBP_ERR_INVALID_SELECTION, 0,
                                     "gpubp_define_variable: '%s': start %zu + count %zu exceeds "
                                     "shape %zu in dimension %zu", name, start[i], count[i],
                                     shape[i], i);
        } else {
            kind = GPUBP_SHAPE_LOCAL_ARRAY;
        }
    }
    gpubp_variable *v;
    GBP_FORWARD_IF_ERROR(gbp_file_new_var(f, name, type, kind, &v));
    v->member_id = f->next_member++;
    if (f->params.compress && !gbp_kind_is_value(kind)) {
        v->op = 1;
        v->op_level = f->params.compress_level;
        v->op_shuffle = f->params.compress_shuffle;
    }
    v->sel.ndims = ndims;
    for (size_t i = 0; i < ndims; i++) {
        v->sel.shape[i] = shape ? shape[i] : 0;
        v->sel.start[i] = start && shape && !local_value ? start[i] : 0;
        v->sel.count[i] = local_value ? 1 : count[i];
    }
    *out = v;
    return GPUBP_OK;
}

int gbp_writer_begin_step(gpubp_file *f)
{
    GBP_FORWARD_IF_ERROR(gbp_writer_broken(f));
    f->in_step = 1;
    f->steps_begun++;
    f->failed_step = 0;
    f->nblocks = 0;
    for (size_t i = 0; i < f->nvars; i++) f->vars[i]->in_step = 0;
    size_t hs = bp4_pg_head_size(strlen(GBP_IO_NAME), f->step);
    for (int k = 0; k < f->nsub; k++) {
        f->pg_start[k] = f->data_size[k];
        f->cursor[k] = f->pg_start[k] + hs;
        f->pg_nvars[k] = 0;
    }
    return GPUBP_OK;
}

size_t gbp_assign_block(gpubp_file *f, gbp_wblock *wb)
{
    gpubp_variable *v = wb->var;
    wb->meta.dims = wb->dimstore;
    /* the subfile with the least data in this step; subfiles=auto: data.0 and those holding
     * data in this step only, unless the block is large enough to go to a file of its own */
    int k = 0, wide = !f->sub_auto || wb->payload_len >= GBP_STRIPE_MIN;
    for (int j = 1; j < f->nsub; j++)
        if ((wide || f->pg_nvars[j] > 0) &&
            f->cursor[j] - f->pg_start[j] < f->cursor[k] - f->pg_start[k])
            k = j;
    size_t hs = bp4_vmd_header_size(strlen(v->name), v->type, wb->meta.ndims, wb->meta.has_minmax);
    wb->subfile = (uint32_t)k;
    wb->meta.subfile = (uint32_t)(f->sub_base + k);
    wb->meta.vmd_offset = f->cursor[k];
    wb->meta.payload_offset = f->cursor[k] + hs;
    return hs;
}

void gbp_advance_block(gpubp_file *f, gbp_wblock *wb, size_t hs)
{
    f->cursor[wb->subfile] += hs + wb->payload_len;
    f->pg_nvars[wb->subfile]++;
    wb->performed = 1;
}

/* The payload of an assigned block, at its payload offset - delta of fd. */
int gbp_write_payload(gpubp_file *f, gbp_wblock *wb, int fd, uint64_t delta, const char *p)
{
    gpubp_variable *v = wb->var;
    uint64_t at = wb->meta.payload_offset - delta;
    if (gbp_kind_is_value(v->kind)) {
        if (v->type == GPUBP_TYPE_STRING) {
            uint8_t *tmp = gbp_malloc(2 + (size_t)wb->meta.str_len);
            GBP_CHECK_ALLOC(tmp);
            uint16_t l = (uint16_t)wb->meta.str_len;
            memcpy(tmp, &l, 2);
            memcpy(tmp + 2, wb->meta.str, wb->meta.str_len);
            int rc = gbp_pwrite_all(fd, tmp, 2 + (size_t)l, at, p);
            gbp_free(tmp);
            return rc;
        }
        return gbp_pwrite_all(fd, wb->meta.mm, gbp_type_size(v->type), at, p);
    }
    if (wb->payload_len == 0) return GPUBP_OK;
    /* copied aside (parallel writers): bytes and min/max are final */
    if (wb->owned) return gbp_pwrite_all(fd, wb->owned, wb->payload_len, at, p);
    return gbp_mem_write(f->mem, wb->space, fd, at, wb->data, v->type, &wb->box, wb->meta.has_minmax ? wb->meta.mm : NULL,
                         wb->meta.has_minmax ? wb->meta.mm + 16 : NULL);
}

static int perform_block(gpubp_file *f, gbp_wblock *wb)
{
    gpubp_variable *v = wb->var;
    size_t hs = gbp_assign_block(f, wb);
    int k = (int)wb->subfile;
    GBP_FORWARD_IF_ERROR(use_subfile(f, k));
    char p[4200];
    sub_name(f, k, p, sizeof p);
    if (v->op && wb->payload_len > 0 && !gbp_kind_is_value(v->kind)) {
        /* The compressed length is known only once the payload is written. */
        int rc = gbp_write_compressed(f, wb, f->data_fd[k], p);
        if (rc != GPUBP_OK) return rc;
        gbp_advance_block(f, wb, hs);
        return GPUBP_OK;
    }
    gbp_advance_block(f, wb, hs);
    return gbp_write_payload(f, wb, f->data_fd[k], 0, p);
}

/* After gbp_mem_sync: min/max are known, so the [VMD headers can be written (to fd[k] at
 * offset - delta[k] for stripe k; delta NULL: 0). */
int gbp_write_headers(gpubp_file *f, const int *fd, const uint64_t *delta)
{
    gbp_buf b;
    gbp_buf_init(&b);
    int rc = GPUBP_OK;
    for (size_t i = 0; i < f->nblocks && rc == GPUBP_OK; i++) {
        gbp_wblock *wb = &f->blocks[i];
        if (!wb->performed || wb->header_written) continue;
        wb->meta.dims = wb->dimstore;
        wb->meta.op = wb->meta.op ? &wb->opstore : NULL;
        gbp_buf_reset(&b);
        bp4_put_vmd_header(&b, wb->var->member_id, wb->var->name, wb->var->type, &wb->meta,
                           wb->var->kind == GPUBP_SHAPE_LOCAL_ARRAY, wb->payload_len);
        if (!gbp_buf_ok(&b)) {
            rc = gbp_nomem();
            break;
        }
        char p[4200];
        uint64_t d = delta ? delta[wb->subfile] : 0;
        rc = gbp_pwrite_all(fd[wb->subfile], b.data, b.len, wb->meta.vmd_offset - d,
                            sub_name(f, (int)wb->subfile, p, sizeof p));
        wb->header_written = 1;
    }
    gbp_buf_free(&b);
    return rc;
}

int gbp_writer_perform(gpubp_file *f)
{
    int rc = GPUBP_OK;
    for (size_t i = 0; i < f->nblocks && rc == GPUBP_OK; i++)
        if (!f->blocks[i].performed) rc = perform_block(f, &f->blocks[i]);
    /* async_commit: the caller's buffers are free once the data left them; the writes go on */
    int rc2 = f->async ? gbp_mem_wait_staged(f->mem) : gbp_mem_sync(f->mem);
    if (rc == GPUBP_OK) rc = rc2;
    if (rc == GPUBP_OK) rc = gbp_write_headers(f, f->data_fd, NULL);
    if (rc != GPUBP_OK) {
        f->failed_step = 1;
        rc = gbp_error_with_path(rc, f->path);
    }
    return rc;
}

int gbp_writer_fail(gpubp_file *f, int rc)
{
    if (!f->failed_step) {
        snprintf(f->failed_msg, sizeof f->failed_msg, "%s", gbp_error_message());
        f->failed_rc = rc;
    }
    f->failed_step = 1;
    return rc;
}

int gpubp_perform_puts(gpubp_file *f)
{
    GBP_CHECK_ARG(f);
    GBP_RETURN_ERROR_IF(!gbp_is_write_mode(f), GPUBP_ERR_WRONG_MODE,
                        "gpubp_perform_puts: %s is open for reading", f->path);
    if (!f->in_step) return GPUBP_OK;
    if (!f->comm) return gbp_writer_perform(f);
    /* parallel: offsets are known only at end_step, so the puts' data is copied aside now */
    int rc = GPUBP_OK;
    for (size_t i = 0; i < f->nblocks && rc == GPUBP_OK; i++)
        rc = gbp_pwriter_stage(f, &f->blocks[i]);
    return rc == GPUBP_OK ? rc : gbp_writer_fail(f, rc);
}

static int put_block(gpubp_file *f, gpubp_variable *v, const void *data, gpubp_launch mode);

int gpubp_put(gpubp_file *f, gpubp_variable *v, const void *data, gpubp_launch mode)
{
    GBP_CHECK_ARG(f);
    int rc = put_block(f, v, data, mode);
    /* parallel writers: a failed put fails the step on every rank (at end_step) */
    if (rc < 0 && f->comm && gbp_is_write_mode(f) && f->in_step) return gbp_writer_fail(f, rc);
    return rc;
}

static int put_block(gpubp_file *f, gpubp_variable *v, const void *data, gpubp_launch mode)
{
    GBP_CHECK_ARG(v);
    GBP_RETURN_ERROR_IF(v->file != f, GPUBP_ERR_INVALID_ARG,
                        "gpubp_put: variable '%s' belongs to another file", v->name);
    GBP_RETURN_ERROR_IF(!gbp_is_write_mode(f), GPUBP_ERR_WRONG_MODE,
                        "gpubp_put: %s is open for reading", f->path);
    GBP_RETURN_ERROR_IF(!f->in_step, GPUBP_ERR_WRONG_MODE,
                        "gpubp_put: '%s': no step is open (call gpubp_begin_step)", v->name);
    GBP_RETURN_ERROR_IF(mode != GPUBP_SYNC && mode != GPUBP_DEFERRED, GPUBP_ERR_INVALID_ARG,
                        "gpubp_put: invalid launch mode %d", (int)mode);
    const gbp_sel *s = &v->sel;
    size_t nd = s->ndims, elems = 1;
    for (size_t i = 0; i < nd; i++) elems *= s->count[i];
    GBP_RETURN_ERROR_IF(!data && elems > 0, GPUBP_ERR_INVALID_ARG,
                        "gpubp_put: '%s': data is NULL", v->name);
    gpubp_memory_space space = GPUBP_MEM_HOST;
    if (data && v->type != GPUBP_TYPE_STRING) GBP_FORWARD_IF_ERROR(gbp_resolve_space(v, data, &space));
    if (v->type == GPUBP_TYPE_STRING && v->space == GPUBP_MEM_GPU)
        return gbp_error(GPUBP_ERR_MEMORY_SPACE, 0, "gpubp_put: string '%s' must be in host memory",
                         v->name);
    /* the device min/max kernels have no 80-bit arithmetic */
    GBP_RETURN_ERROR_IF(v->type == GPUBP_TYPE_LONG_DOUBLE && space == GPUBP_MEM_GPU &&
                        !gbp_kind_is_value(v->kind), GPUBP_ERR_NOT_SUPPORTED,
                        "gpubp_put: long double array '%s' from device memory is not supported "
                        "(copy it to host memory first)", v->name);
    GBP_FORWARD_IF_ERROR(gbp_grow((void **)&f->blocks, &f->cap_blocks, f->nblocks + 1,
                                  sizeof *f->blocks));
    gbp_wblock *wb = &f->blocks[f->nblocks];
    memset(wb, 0, sizeof *wb);
    wb->var = v;
    wb->data = data;
    wb->space = space;
    wb->meta.dims = wb->dimstore;
    wb->meta.ndims = (uint8_t)nd;
    wb->meta.step = f->step;
    size_t shape[GBP_MAX_DIMS], start[GBP_MAX_DIMS], count[GBP_MAX_DIMS];
    size_t mstart[GBP_MAX_DIMS], mcount[GBP_MAX_DIMS];
    memcpy(shape, s->shape, nd * sizeof *shape);
    memcpy(start, s->start, nd * sizeof *start);
    memcpy(count, s->count, nd * sizeof *count);
    memcpy(mstart, s->mem_start, nd * sizeof *mstart);
    memcpy(mcount, s->mem_count, nd * sizeof *mcount);
    if (gbp_space_reverses(f, space)) {
        gbp_reverse(shape, nd);
        gbp_reverse(start, nd);
        gbp_reverse(count, nd);
        gbp_reverse(mstart, nd);
        gbp_reverse(mcount, nd);
    }
    if (v->kind == GPUBP_SHAPE_LOCAL_VALUE) {
        /* ADIOS2's local value block: count 1, shape LocalValueDim, start 0 */
        shape[0] = GPUBP_LOCAL_VALUE_DIM;
        start[0] = 0;
        count[0] = 1;
    }
    int shaped = v->kind == GPUBP_SHAPE_GLOBAL_ARRAY || v->kind == GPUBP_SHAPE_LOCAL_VALUE;
    if (v->kind == GPUBP_SHAPE_GLOBAL_ARRAY)
        for (size_t i = 0; i < nd; i++)
            if (start[i] > shape[i] || count[i] > shape[i] - start[i])
                return gbp_error(GPUBP_ERR_INVALID_SELECTION, 0,
                                 "gpubp_put: '%s': block start %zu + count %zu exceeds shape %zu "
                                 "in file dimension %zu", v->name, start[i], count[i], shape[i], i);
    for (size_t i = 0; i < nd; i++) {
        GBP_COUNT(&wb->meta)[i] = count[i];
        GBP_SHAPE(&wb->meta)[i] = shaped ? shape[i] : 0;
        GBP_START(&wb->meta)[i] = shaped ? start[i] : 0;
    }
    /* the user's buffer box: the whole block, or the block inside a larger memory box */
    if (s->mem_ndims) {
        for (size_t i = 0; i < nd; i++)
            if (mstart[i] > mcount[i] || count[i] > mcount[i] - mstart[i])
                return gbp_error(GPUBP_ERR_INVALID_SELECTION, 0,
                                 "gpubp_put: '%s': memory selection start %zu + count %zu exceeds "
                                 "the buffer's %zu in dimension %zu", v->name, mstart[i], count[i],
                                 mcount[i], i);
        wb->box.ndims = nd;
        for (size_t i = 0; i < nd; i++) {
            wb->box.dims[i] = mcount[i];
            wb->box.start[i] = mstart[i];
            wb->box.count[i] = count[i];
        }
    } else {
        gbp_box_dense(&wb->box, nd, count);
    }
    size_t es = gbp_type_size(v->type);
    if (gbp_kind_is_value(v->kind)) {
        wb->meta.has_value = 1;
        if (v->type == GPUBP_TYPE_STRING) {
            size_t l = strlen(data);
            GBP_RETURN_ERROR_IF(l > 65535, GPUBP_ERR_INVALID_ARG,
                                "gpubp_put: string '%s' is longer than 65535 bytes", v->name);
            wb->meta.str = gbp_strdup(data);
            GBP_CHECK_ALLOC(wb->meta.str);
            wb->meta.str_len = (uint32_t)l;
            wb->payload_len = 2 + l;
        } else {
            GBP_FORWARD_IF_ERROR(gbp_mem_copy_out(f->mem, space, wb->meta.mm, data, es));
            if (v->type == GPUBP_TYPE_LONG_DOUBLE) memset(wb->meta.mm + 10, 0, 6); /* padding */
            wb->payload_len = es;
        }
    } else {
        wb->meta.has_minmax = 1; /* an empty block records 0 / 0, as ADIOS2 does */
        wb->payload_len = (uint64_t)elems * es;
    }
    f->nblocks++;
    v->in_step = 1;
    v->puts++;
    if (mode == GPUBP_SYNC) return f->comm ? gbp_pwriter_stage(f, wb) : gbp_writer_perform(f);
    return GPUBP_OK;
}

/* ---- attributes ------------------------------------------------------------------------------ */

static void attr_clear(gbp_attr_def *a)
{
    gbp_free(a->data);
    for (size_t j = 0; a->strings && j < a->n; j++) gbp_free(a->strings[j]);
    gbp_free(a->strings);
    a->data = NULL;
    a->strings = NULL;
}

static int attr_same(const gbp_attr_def *a, int type, const void *data, size_t n)
{
    if (a->type != type || a->n != n) return 0;
    if (type == GPUBP_TYPE_STRING) return !strcmp(a->strings[0], (const char *)data);
    if (type == 12) {
        const char *const *s = data;
        for (size_t i = 0; i < n; i++)
            if (strcmp(a->strings[i], s[i])) return 0;
        return 1;
    }
    return !memcmp(a->data, data, n * gbp_type_size(type));
}

int gpubp_define_attribute(gpubp_file *f, const char *name, gpubp_type type, const void *data,
                           size_t n)
{
    GBP_CHECK_ARG(f);
    GBP_CHECK_ARG(name);
    GBP_CHECK_ARG(data);
    GBP_RETURN_ERROR_IF(!gbp_is_write_mode(f), GPUBP_ERR_WRONG_MODE,
                        "gpubp_define_attribute: %s is open for reading", f->path);
    GBP_RETURN_ERROR_IF(!*name || strlen(name) > 65535, GPUBP_ERR_INVALID_ARG,
                        "gpubp_define_attribute: invalid name");
    GBP_RETURN_ERROR_IF(n == 0, GPUBP_ERR_INVALID_ARG,
                        "gpubp_define_attribute: '%s': no elements", name);
    GBP_RETURN_ERROR_IF(!gbp_type_known(type) && type != GPUBP_TYPE_STRING_ARRAY,
                        GPUBP_ERR_INVALID_ARG, "gpubp_define_attribute: '%s': invalid type %d",
                        name, (int)type);
    int t = type == GPUBP_TYPE_STRING && n > 1 ? GPUBP_TYPE_STRING_ARRAY : (int)type;
    if (t == GPUBP_TYPE_STRING_ARRAY) {
        const char *const *s = data;
        for (size_t i = 0; i < n; i++)
            GBP_RETURN_ERROR_IF(!s[i] || strlen(s[i]) > 65534, GPUBP_ERR_INVALID_ARG,
                                "gpubp_define_attribute: '%s': string %zu is NULL or too long",
                                name, i);
    } else if (t == GPUBP_TYPE_STRING) {
        GBP_RETURN_ERROR_IF(strlen(data) > 65535, GPUBP_ERR_INVALID_ARG,
                            "gpubp_define_attribute: '%s': string too long", name);
    }
    gbp_attr_def *a = NULL;
    for (size_t i = 0; i < f->nattrs; i++)
        if (!strcmp(f->attrs[i].name, name)) a = &f->attrs[i];
    if (a && attr_same(a, t, data, n)) return GPUBP_OK;
    /* build the new value aside, so that a failure leaves the attribute as it was */
    gbp_attr_def nv;
    memset(&nv, 0, sizeof nv);
    nv.type = t;
    nv.n = n;
    nv.dirty = 1;
    int rc = GPUBP_OK;
    if (t == GPUBP_TYPE_STRING || t == 12) {
        nv.strings = gbp_calloc(n, sizeof(char *));
        if (!nv.strings) rc = GPUBP_ERR_NOMEM;
        for (size_t i = 0; rc == GPUBP_OK && i < n; i++) {
            const char *src = t == 12 ? ((const char *const *)data)[i] : (const char *)data;
            nv.strings[i] = gbp_strdup(src);
            if (!nv.strings[i]) rc = GPUBP_ERR_NOMEM;
        }
    } else {
        size_t bytes = n * gbp_type_size(t);
        nv.data = gbp_malloc(bytes);
        if (nv.data) memcpy(nv.data, data, bytes);
        else rc = GPUBP_ERR_NOMEM;
        for (size_t i = 0; nv.data && t == GPUBP_TYPE_LONG_DOUBLE && i < n; i++)
            memset(nv.data + 16 * i + 10, 0, 6); /* padding: zeros, as ADIOS2's are */
    }
    if (rc == GPUBP_OK && !a) {
        nv.name = gbp_strdup(name);
        if (!nv.name) rc = GPUBP_ERR_NOMEM;
        if (rc == GPUBP_OK &&
            gbp_grow((void **)&f->attrs, &f->cap_attrs, f->nattrs + 1, sizeof *f->attrs))
            rc = GPUBP_ERR_NOMEM;
    }
    if (rc != GPUBP_OK) {
        gbp_free(nv.name);
        attr_clear(&nv);
        return gbp_error(GPUBP_ERR_NOMEM, 0, "gpubp_define_attribute: '%s': out of memory", name);
    }
    if (a) {
        attr_clear(a);
        a->type = nv.type;
        a->n = nv.n;
        a->data = nv.data;
        a->strings = nv.strings;
        a->dirty = 1;
    } else {
        nv.member_id = (uint32_t)f->nattrs;
        f->attrs[f->nattrs++] = nv;
    }
    return GPUBP_OK;
}

int gpubp_define_variable_attribute(gpubp_file *f, const char *var, const char *name,
                                    gpubp_type type, const void *data, size_t n)
{
    GBP_CHECK_ARG(var);
    GBP_CHECK_ARG(name);
    size_t a = strlen(var), b = strlen(name);
    char *full = gbp_malloc(a + b + 2);
    GBP_CHECK_ALLOC(full);
    memcpy(full, var, a);
    full[a] = '/';
    memcpy(full + a + 1, name, b + 1);
    int rc = gpubp_define_attribute(f, full, type, data, n);
    gbp_free(full);
    return rc;
}

/* ---- the commit ------------------------------------------------------------------------------ */

void gbp_discard_step(gpubp_file *f)
{
    for (size_t i = 0; i < f->nblocks; i++) {
        gbp_free(f->blocks[i].meta.str);
        f->blocks[i].meta.str = NULL;
        gbp_free(f->blocks[i].owned);
        f->blocks[i].owned = NULL;
        gbp_free(f->blocks[i].zahead);
        f->blocks[i].zahead = NULL;
    }
    f->nblocks = 0;
    f->in_step = 0;
}

size_t gbp_dirty_attrs(const gpubp_file *f)
{
    size_t n = 0;
    for (size_t i = 0; i < f->nattrs; i++) n += f->attrs[i].dirty;
    return n;
}

void gbp_pg_tail(gpubp_file *f, int k, gbp_buf *tail, uint64_t *amd_off, uint64_t *amd_pay)
{
    size_t ndirty = gbp_dirty_attrs(f);
    gbp_buf_reset(tail);
    if (k == 0 && ndirty) {
        gbp_buf_u32(tail, (uint32_t)ndirty);
        gbp_buf_u64(tail, 0); /* patched: attribute bytes including these 8 */
        for (size_t i = 0; i < f->nattrs; i++) {
            gbp_attr_def *a = &f->attrs[i];
            if (!a->dirty) continue;
            size_t amd_at = tail->len, pay;
            bp4_put_amd(tail, a->member_id, a->name, a->type, a->data, a->n,
                        (const char *const *)a->strings, &pay);
            amd_off[i] = f->cursor[k] + amd_at;
            amd_pay[i] = f->cursor[k] + pay;
        }
        if (gbp_buf_ok(tail)) gbp_buf_set_u64(tail, 4, (uint64_t)(tail->len - 4));
    } else {
        gbp_buf_zero(tail, 12);
    }
    gbp_buf_put(tail, "PGI]", 4);
}

void gbp_pg_head(gpubp_file *f, int k, gbp_buf *pg, size_t tail_len)
{
    size_t hs = bp4_pg_head_size(strlen(GBP_IO_NAME), f->step);
    size_t base = pg->len;
    size_t lenat = bp4_pg_head(pg, 0, GBP_IO_NAME, f->step);
    uint64_t vars_len = f->cursor[k] - (f->pg_start[k] + hs);
    uint64_t end = f->cursor[k] + tail_len;
    if (!gbp_buf_ok(pg)) return;
    gbp_buf_set_u64(pg, lenat, end - (f->pg_start[k] + 4));
    gbp_buf_set_u32(pg, base + hs - 12, f->pg_nvars[k]);
    gbp_buf_set_u64(pg, base + hs - 8, vars_len);
}

void gbp_pg_entry(gbp_buf *one, uint32_t step, uint32_t rank, uint64_t pg_start)
{
    char s[16];
    int sl = snprintf(s, sizeof s, "%u", step);
    size_t el = 2 + strlen(GBP_IO_NAME) + 1 + 4 + 2 + (size_t)sl + 4 + 8;
    gbp_buf_u16(one, (uint16_t)el);
    gbp_buf_bpstr(one, GBP_IO_NAME, strlen(GBP_IO_NAME));
    gbp_buf_u8(one, 'n');
    gbp_buf_u32(one, rank);
    gbp_buf_bpstr(one, s, (size_t)sl);
    gbp_buf_u32(one, step);
    gbp_buf_u64(one, pg_start);
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
        for (size_t j = 0; j < f->nblocks; j++) nb += f->blocks[j].var == v;
        size_t at = bp4_entry_begin(md, v->member_id, v->name, v->type, 0, nb);
        for (size_t j = 0; j < f->nblocks; j++) {
            gbp_wblock *wb = &f->blocks[j];
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
    for (size_t i = 0; i < f->nattrs; i++) {
        gbp_attr_def *a = &f->attrs[i];
        if (!a->dirty) continue;
        size_t at = bp4_entry_begin(md, a->member_id, a->name, a->type, 1, 1);
        bp4_put_attr_charset(md, a->type, f->step, (uint32_t)f->sub_base, amd_off[i], amd_pay[i],
                             a->data, a->n, (const char *const *)a->strings);
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
    int nsync;              /* fsync=1: data subfiles flushed first */
    int sync[];             /* their descriptors, then their numbers (data.N) */
} commit_rec;

/* Prepares the commit of the md.0 block blk of the step f->step, and (fsync=1) the flush of
 * the subfiles whose `flush[k]` is set (flush NULL: none). NULL when out of memory. */
static commit_rec *commit_prepare(gpubp_file *f, const uint8_t *blk, size_t len, const int *flush)
{
    int nsync = 0;
    for (int k = 0; flush && f->params.fsync && k < f->nsub; k++) nsync += flush[k] != 0;
    size_t sz = sizeof(commit_rec) + (size_t)(2 * nsync) * sizeof(int);
    commit_rec *c = gbp_calloc(1, sz);
    if (!c) return NULL;
    int md_header = f->idx_records == 0;
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
    r.step = f->step;
    r.pg_off = base;
    r.var_off = base + 16 + pglen;
    r.attr_off = r.var_off + 12 + varlen;
    r.end = base + len;
    r.timestamp = (uint64_t)time(NULL);
    c->md_off = md_header ? 0 : base;
    c->md_end = r.end;
    if (f->idx_records == 0) {
        bp4_make_header(c->idx, BP4_KIND_INDEX, 1);
        c->idx_len = BP4_HEADER_SIZE;
    }
    bp4_make_idx_record(c->idx + c->idx_len, &r);
    c->idx_len += BP4_IDX_RECORD_SIZE;
    c->idx_off = f->idx_records == 0 ? 0 : BP4_HEADER_SIZE + f->idx_records * BP4_IDX_RECORD_SIZE;
    c->md0_fd = f->md0_fd;
    c->idx_fd = f->idx_fd;
    c->fsync = f->params.fsync;
    c->nsync = nsync;
    for (int k = 0, i = 0; i < nsync; k++) {
        if (!flush[k]) continue;
        c->sync[i] = f->data_fd[k];
        c->sync[nsync + i++] = f->sub_base + k;
    }
    return c;
}

static void commit_free(void *vc)
{
    commit_rec *c = vc;
    if (!c) return;
    gbp_free(c->md);
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
    f->idx_records++;
    f->step++;
    for (size_t i = 0; i < f->nattrs; i++) f->attrs[i].dirty = 0;
    for (size_t i = 0; i < f->nvars; i++)
        if (f->vars[i]->in_step) f->vars[i]->steps_written++;
}

/* async_commit: the commit of an earlier step failed (found by gbp_mem_commit_wait with status
 * prev and its message). The writer stops: the steps before that one stay readable, later calls
 * return this failure. Every transfer is drained first. */
static int async_broken(gpubp_file *f, int prev)
{
    gbp_saved_error e;
    gbp_error_save(&e, prev, sizeof e.msg);
    (void)gbp_mem_sync(f->mem);
    f->broken = 1;
    f->broken_rc = prev;
    f->idx_records = f->async_safe_records;
    /* steps numbered from 0, as the API counts; the failed one is async_pending_step */
    char kept[64] = "no step is readable";
    if (f->async_pending_step > 0)
        snprintf(kept, sizeof kept, "steps 0 to %u stay readable", f->async_pending_step - 1);
    snprintf(f->broken_msg, sizeof f->broken_msg,
             "%.400s: step %u was not committed (async_commit): %.400s; the writer stops, %.60s", f->path,
             f->async_pending_step, e.msg, kept);
    return gbp_error(prev, 0, "%s", f->broken_msg);
}

/* async_commit, a failure of this step (rc, its message current): the transfers still running
 * are drained, so that nothing writes where the next step will; an earlier step's failed commit
 * takes precedence. */
static int async_fail(gpubp_file *f, int rc)
{
    gbp_saved_error e;
    gbp_error_save(&e, rc, sizeof e.msg);
    (void)gbp_mem_sync(f->mem);
    int prev = gbp_mem_commit_wait(f->mem);
    if (prev != GPUBP_OK) return async_broken(f, prev);
    return gbp_error_restore(&e, rc);
}

int gbp_writer_broken(gpubp_file *f)
{
    return f->broken ? gbp_error(f->broken_rc, 0, "%s", f->broken_msg) : GPUBP_OK;
}

int gbp_writer_commit_wait(gpubp_file *f)
{
    if (!f->async || f->broken) return gbp_writer_broken(f);
    int prev = gbp_mem_commit_wait(f->mem);
    return prev != GPUBP_OK ? async_broken(f, prev) : GPUBP_OK;
}

int gbp_writer_end_step(gpubp_file *f)
{
    if (f->comm) return gbp_pwriter_end_step(f);
    if (f->broken) {
        gbp_discard_step(f);
        return gbp_writer_broken(f);
    }
    int rc = gbp_writer_perform(f);
    if (rc != GPUBP_OK || f->failed_step) {
        if (rc == GPUBP_OK)
            rc = gbp_error(GPUBP_ERR_IO, 0, "step %u of %s was not committed: an earlier put failed",
                           f->step - 1, f->path); /* numbered from 0, as the API counts */
        if (f->async) rc = async_fail(f, rc);
        gbp_discard_step(f);
        return rc;
    }
    gbp_buf pg, tail, md;
    gbp_buf_init(&pg);
    gbp_buf_init(&tail);
    gbp_buf_init(&md);
    uint64_t *amd_off = gbp_calloc(f->nattrs + 1, sizeof *amd_off);
    uint64_t *amd_pay = gbp_calloc(f->nattrs + 1, sizeof *amd_pay);
    int *flush = gbp_calloc((size_t)f->nsub, sizeof *flush);
    if (!amd_off || !amd_pay || !flush) rc = gbp_nomem();
    /* 1. data: each subfile's PG head and tail (attributes go to data.0); md gets the PG index */
    uint64_t npg = 0;
    gbp_buf_u64(&md, 0);
    gbp_buf_u64(&md, 0);
    for (int k = 0; k < f->nsub && rc == GPUBP_OK; k++) {
        if (k > 0 && f->pg_nvars[k] == 0) continue;
        npg++;
        gbp_pg_tail(f, k, &tail, amd_off, amd_pay);
        gbp_buf_reset(&pg);
        if (!f->data_has_header[k]) {
            uint8_t h[BP4_HEADER_SIZE];
            bp4_make_header(h, BP4_KIND_DATA, 0);
            gbp_buf_put(&pg, h, sizeof h);
        }
        gbp_pg_head(f, k, &pg, tail.len);
        if (!gbp_buf_ok(&pg) || !gbp_buf_ok(&tail)) {
            rc = gbp_nomem();
            break;
        }
        char p[4200];
        sub_name(f, k, p, sizeof p);
        uint64_t at = f->data_has_header[k] ? f->pg_start[k] : 0;
        rc = gbp_pwrite_all(f->data_fd[k], pg.data, pg.len, at, p);
        if (rc == GPUBP_OK) rc = gbp_pwrite_all(f->data_fd[k], tail.data, tail.len, f->cursor[k], p);
        f->cursor[k] += tail.len; /* from here on: the end of this subfile's PG */
        flush[k] = 1;
        gbp_pg_entry(&md, f->step, 0, f->pg_start[k]);
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
    if (rc == GPUBP_OK && f->async) {
        commit_job *cj = gbp_malloc(sizeof *cj);
        if (!cj) rc = gbp_nomem();
        int prev = gbp_mem_commit_wait(f->mem); /* one commit queued at a time */
        if (prev != GPUBP_OK) {
            gbp_free(cj);
            rc = async_broken(f, prev);
        } else if (cj) {
            cj->rec = c;
            snprintf(cj->path, sizeof cj->path, "%s", f->path);
            c = NULL; /* the job's now */
            f->async_safe_records = f->idx_records;
            f->async_pending_step = f->step - 1;
            rc = gbp_mem_commit_async(f->mem, commit_job_run, cj, commit_job_free);
        }
        if (rc != GPUBP_OK && !f->broken) rc = async_fail(f, rc);
    } else if (rc == GPUBP_OK) {
        rc = commit_write(c, f->path);
    } else if (f->async && !f->broken) {
        rc = async_fail(f, rc);
    }
    commit_free(c);
    if (rc == GPUBP_OK) {
        f->md0_size = md_end;
        for (int k = 0; k < f->nsub; k++) {
            if (k > 0 && f->pg_nvars[k] == 0) continue;
            f->data_has_header[k] = 1;
            f->data_size[k] = f->cursor[k];
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

int gpubp_variable_add_operation(gpubp_variable *v, const char *op, const char *params)
{
    GBP_CHECK_ARG(v);
    GBP_CHECK_ARG(op);
    GBP_RETURN_ERROR_IF(!gbp_is_write_mode(v->file), GPUBP_ERR_WRONG_MODE,
                        "gpubp_variable_add_operation: '%s' belongs to a file open for reading",
                        v->name);
    GBP_RETURN_ERROR_IF(v->puts > 0, GPUBP_ERR_WRONG_MODE,
                        "gpubp_variable_add_operation: '%s' has been put already", v->name);
    GBP_RETURN_ERROR_IF(strcmp(op, "zlib") != 0, GPUBP_ERR_CODEC,
                        "gpubp_variable_add_operation: operator '%s' is not supported (only zlib)",
                        op);
    GBP_RETURN_ERROR_IF(v->type == GPUBP_TYPE_STRING || gbp_kind_is_value(v->kind),
                        GPUBP_ERR_NOT_SUPPORTED,
                        "gpubp_variable_add_operation: '%s' is a single value; only arrays are "
                        "compressed", v->name);
    int level = v->file->params.compress_level, shuffle = v->file->params.compress_shuffle;
    int threads = 0;
    if (params) GBP_FORWARD_IF_ERROR(gbp_blosc_parse_params(params, &level, &shuffle, &threads));
    v->op = 1;
    v->op_level = level;
    v->op_shuffle = shuffle;
    v->op_threads = threads;
    return GPUBP_OK;
}
