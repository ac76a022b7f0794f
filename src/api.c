/* The public API: library calls, open/close and the step calls dispatching to the writer or
 * reader, variable handles and their selections. */
#include "internal.h"
#include "blosczlib.h"
#include "gpubp/cuda.h"

#include <stdio.h>
#include <stdlib.h>

static int gbp_is_write_mode_value(gpubp_mode m)
{
    return m == GPUBP_MODE_WRITE || m == GPUBP_MODE_APPEND;
}

const char *gpubp_version(void) { return GPUBP_VERSION_STRING; }

unsigned gpubp_features(void)
{
    unsigned f = gbp_blosc_features();
    gbp_params p;
    gbp_params_parse(&p, NULL);
    gbp_mem *m = NULL;
    if (gbp_mem_open(&m, &p) == GPUBP_OK) {
        if (gbp_mem_has_device(m)) f |= GPUBP_FEATURE_CUDA;
        gbp_mem_close(m);
    }
    return f;
}

const char *gpubp_strerror(int status)
{
    switch (status) {
    case GPUBP_OK: return "success";
    case GPUBP_END_OF_STREAM: return "end of stream";
    case GPUBP_NOT_READY: return "not ready";
    case GPUBP_ERR_INVALID_ARG: return "invalid argument";
    case GPUBP_ERR_NOT_FOUND: return "not found";
    case GPUBP_ERR_INVALID_SELECTION: return "invalid selection";
    case GPUBP_ERR_INVALID_DIMS: return "invalid number of dimensions";
    case GPUBP_ERR_INVALID_STEP: return "invalid step";
    case GPUBP_ERR_WRONG_MODE: return "call not allowed in this mode or state";
    case GPUBP_ERR_TYPE_MISMATCH: return "type mismatch";
    case GPUBP_ERR_FORMAT: return "damaged or inconsistent BP4 file";
    case GPUBP_ERR_NOT_BP4: return "not a BP4 dataset";
    case GPUBP_ERR_BP5: return "an ADIOS2 BP5 dataset (only BP4 is supported)";
    case GPUBP_ERR_IO: return "I/O error";
    case GPUBP_ERR_NOMEM: return "out of memory";
    case GPUBP_ERR_NOT_SUPPORTED: return "not supported";
    case GPUBP_ERR_DEVICE: return "GPU runtime error";
    case GPUBP_ERR_MEMORY_SPACE: return "pointer in the wrong memory space";
    case GPUBP_ERR_PARAM: return "invalid parameter";
    case GPUBP_ERR_EXISTS: return "already defined";
    case GPUBP_ERR_CODEC: return "unsupported compression operator or codec";
    case GPUBP_ERR_UNSUPPORTED_TYPE: return "unsupported type";
    case GPUBP_ERR_INTERNAL: return "internal error";
    default: return "unknown status";
    }
}

const char *gpubp_last_error(void) { return gbp_error_message(); }
int gpubp_last_errno(void) { return gbp_error_native(); }
size_t gpubp_type_size(gpubp_type type) { return gbp_type_size(type); }
const char *gpubp_type_name(gpubp_type type) { return gbp_type_name(type); }

int gpubp_long_double_from_double(void *dst, double x)
{
    GBP_CHECK_ARG(dst);
    gbp_ld_from_double(dst, x);
    return GPUBP_OK;
}

int gpubp_long_double_to_double(const void *src, double *x)
{
    GBP_CHECK_ARG(src);
    GBP_CHECK_ARG(x);
    *x = gbp_ld_to_double(src);
    return GPUBP_OK;
}

int gbp_is_write_mode(const gpubp_file *f) { return gbp_is_write_mode_value(f->mode); }

void gbp_reverse(size_t *d, size_t n)
{
    for (size_t i = 0; i < n / 2; i++) {
        size_t t = d[i];
        d[i] = d[n - 1 - i];
        d[n - 1 - i] = t;
    }
}

int gbp_space_reverses(const gpubp_file *f, gpubp_memory_space space)
{
    return space == GPUBP_MEM_GPU && !f->params.gpu_row_major;
}

static void free_file(gpubp_file *f)
{
    for (size_t i = 0; i < f->nvars; i++) {
        gbp_free(f->vars[i]->name);
        gbp_free(f->vars[i]);
    }
    gbp_free(f->vars);
    gbp_free(f->names);
    gbp_free(f->anames);
    if (gbp_is_write_mode(f)) gbp_writer_free(f);
    else gbp_reader_free(f);
    gbp_mem_close(f->mem);
    gbp_comm_free(f->group);
    gbp_comm_free(f->comm);
    gbp_free(f->path);
    gbp_free(f);
}

static int open_file(gpubp_file **out, const char *path, gpubp_mode mode, const char *params,
                     gbp_comm *comm);

int gpubp_open(gpubp_file **out, const char *path, gpubp_mode mode, const char *params)
{
    GBP_CHECK_ARG(out);
    *out = NULL;
    return open_file(out, path, mode, params, NULL);
}

int gpubp_open_comm(gpubp_file **out, const char *path, gpubp_mode mode, const char *params,
                    const gpubp_comm_ops *ops, void *ctx)
{
    if (out) *out = NULL;
    int freeable = ops && ops->version == GPUBP_COMM_OPS_VERSION && ops->free && ctx;
    const char *bad = NULL;
    if (!ops || !ctx) bad = "ops or ctx is NULL";
    else if (ops->version != GPUBP_COMM_OPS_VERSION) bad = "the operations table has another version";
    else if (!ops->free || !ops->rank || !ops->size || !ops->barrier || !ops->bcast ||
             !ops->gather || !ops->allreduce_i64 || !ops->exscan_u64 || !ops->split ||
             !ops->split_node || !ops->send || !ops->recv)
        bad = "the operations table is incomplete";
    if (!bad && !out)
        return gbp_comm_open_failed(ops, ctx, gbp_error(GPUBP_ERR_INVALID_ARG, 0,
                                    "gpubp_open_comm: argument 'out' is NULL"), "gpubp_open");
    if (bad) {
        if (freeable) ops->free(ctx);
        return gbp_error(GPUBP_ERR_INVALID_ARG, 0, "gpubp_open_comm: %s", bad);
    }
    gbp_comm *comm;
    GBP_FORWARD_IF_ERROR(gbp_comm_open(&comm, ops, ctx));
    return open_file(out, path, mode, params, comm);
}

/* Opens a file; a parallel open (comm set; owned by the file from here on) agrees on the outcome
 * of each phase across ranks, so that every rank fails together. */
static int open_file(gpubp_file **out, const char *path, gpubp_mode mode, const char *params,
                     gbp_comm *comm)
{
    int rc = GPUBP_OK;
    if (!path) rc = gbp_error(GPUBP_ERR_INVALID_ARG, 0, "gpubp_open: argument 'path' is NULL");
    else if (!*path) rc = gbp_error(GPUBP_ERR_INVALID_ARG, 0, "gpubp_open: empty path");
    else if (mode < GPUBP_MODE_WRITE || mode > GPUBP_MODE_READ_RANDOM_ACCESS)
        rc = gbp_error(GPUBP_ERR_INVALID_ARG, 0, "gpubp_open: invalid mode %d", (int)mode);
    else if (gbp_is_remote_url(path) && gbp_is_write_mode_value(mode))
        rc = gbp_error(GPUBP_ERR_WRONG_MODE, 0, "gpubp_open: %s: remote datasets are read only",
                       path);
    else if (comm && gbp_is_remote_url(path))
        rc = gbp_error(GPUBP_ERR_NOT_SUPPORTED, 0,
                       "gpubp_open_comm: %s: remote datasets are opened serially", path);
    gpubp_file *f = rc == GPUBP_OK ? gbp_calloc(1, sizeof *f) : NULL;
    if (rc == GPUBP_OK && !f) rc = gbp_nomem();
    if (rc != GPUBP_OK) {
        if (comm) {
            rc = gbp_comm_agree_all(comm, rc, "gpubp_open");
            gbp_comm_free(comm);
        }
        return rc;
    }
    f->comm = comm;
    f->mode = mode;
    f->md0_fd = f->idx_fd = -1;
    /* keep a path without trailing slashes */
    size_t pl = strlen(path);
    while (pl > 1 && path[pl - 1] == '/') pl--;
    f->path = gbp_strndup(path, pl);
    rc = f->path ? GPUBP_OK : gbp_nomem();
    if (rc == GPUBP_OK) rc = gbp_params_parse(&f->params, params);
    if (rc == GPUBP_OK) rc = gbp_mem_open(&f->mem, &f->params);
    if (comm) rc = gbp_comm_agree_all(comm, rc, "gpubp_open");
    if (rc == GPUBP_OK) {
        f->md0_src.read = gbp_reader_md0;
        f->md0_src.ctx = f;
        bp4_index_init(&f->ix, &f->md0_src);
        rc = gbp_is_write_mode(f) ? gbp_writer_open(f) : gbp_reader_open(f);
    }
    if (rc != GPUBP_OK) {
        free_file(f);
        return rc;
    }
    *out = f;
    return GPUBP_OK;
}

int gpubp_close(gpubp_file *f)
{
    if (!f) return GPUBP_OK;
    int rc = GPUBP_OK;
    if (gbp_is_write_mode(f)) {
        rc = gbp_writer_close(f);
    } else {
        if (f->in_step) rc = gbp_reader_end_step(f);
        /* parallel readers leave together (a failed get is that rank's own affair) */
        if (f->comm) {
            int rc2 = gbp_comm_barrier(f->comm);
            if (rc == GPUBP_OK) rc = rc2;
        }
    }
    if (rc == GPUBP_OK) {
        free_file(f);
        return rc;
    }
    /* tearing down may run library code that resets the error record: keep this failure's */
    gbp_saved_error e;
    gbp_error_save(&e, rc, sizeof e.msg);
    free_file(f);
    return gbp_error_restore(&e, rc);
}

int gbp_error_with_path(int rc, const char *path)
{
    gbp_saved_error e;
    gbp_error_save(&e, rc, sizeof e.msg);
    if (strstr(e.msg, path)) return gbp_error_restore(&e, rc);
    return gbp_error(rc, e.native, "%s: %s", path, e.msg);
}

int gpubp_begin_step(gpubp_file *f)
{
    GBP_CHECK_ARG(f);
    GBP_RETURN_ERROR_IF(f->in_step, GPUBP_ERR_WRONG_MODE,
                        "gpubp_begin_step: a step is already open on %s", f->path);
    if (gbp_is_write_mode(f)) return gbp_writer_begin_step(f);
    GBP_RETURN_ERROR_IF(f->mode == GPUBP_MODE_READ_RANDOM_ACCESS, GPUBP_ERR_WRONG_MODE,
                        "gpubp_begin_step: %s is open in random-access mode; use "
                        "gpubp_set_step_selection", f->path);
    return gbp_reader_begin_step(f);
}

int gpubp_end_step(gpubp_file *f)
{
    GBP_CHECK_ARG(f);
    GBP_RETURN_ERROR_IF(!f->in_step, GPUBP_ERR_WRONG_MODE,
                        "gpubp_end_step: no step is open on %s", f->path);
    return gbp_is_write_mode(f) ? gbp_writer_end_step(f) : gbp_reader_end_step(f);
}

int gpubp_steps(const gpubp_file *f, size_t *nsteps)
{
    GBP_CHECK_ARG(f);
    GBP_CHECK_ARG(nsteps);
    *nsteps = gbp_is_write_mode(f) ? f->idx_records : f->ix.nsteps;
    if (f->mode == GPUBP_MODE_READ_RANDOM_ACCESS) *nsteps = f->nrecords;
    return GPUBP_OK;
}

int gpubp_current_step(const gpubp_file *f, size_t *step)
{
    GBP_CHECK_ARG(f);
    GBP_CHECK_ARG(step);
    GBP_RETURN_ERROR_IF(f->mode == GPUBP_MODE_READ_RANDOM_ACCESS, GPUBP_ERR_WRONG_MODE,
                        "gpubp_current_step: no current step in random-access mode");
    if (gbp_is_write_mode(f)) {
        *step = f->idx_records;
        return GPUBP_OK;
    }
    GBP_RETURN_ERROR_IF(!f->in_step, GPUBP_ERR_WRONG_MODE, "gpubp_current_step: no step is open");
    *step = f->cur_step;
    return GPUBP_OK;
}

int gbp_file_add_var(gpubp_file *f, gpubp_variable *v)
{
    GBP_FORWARD_IF_ERROR(gbp_grow((void **)&f->vars, &f->cap_vars, f->nvars + 1, sizeof *f->vars));
    f->vars[f->nvars++] = v;
    return GPUBP_OK;
}

int gbp_file_new_var(gpubp_file *f, const char *name, int type, int kind, gpubp_variable **out)
{
    gpubp_variable *v = gbp_calloc(1, sizeof *v);
    GBP_CHECK_ALLOC(v);
    v->name = gbp_strdup(name);
    if (!v->name || gbp_file_add_var(f, v) != GPUBP_OK) {
        gbp_free(v->name);
        gbp_free(v);
        return gbp_nomem();
    }
    v->file = f;
    v->type = type;
    v->kind = kind;
    v->space = GPUBP_MEM_DETECT;
    *out = v;
    return GPUBP_OK;
}

gpubp_variable *gbp_file_var(const gpubp_file *f, const char *name)
{
    for (size_t i = 0; i < f->nvars; i++)
        if (!strcmp(f->vars[i]->name, name)) return f->vars[i];
    return NULL;
}

int gpubp_inquire_variable(gpubp_variable **out, gpubp_file *f, const char *name)
{
    GBP_CHECK_ARG(out);
    *out = NULL;
    GBP_CHECK_ARG(f);
    GBP_CHECK_ARG(name);
    if (gbp_is_write_mode(f)) {
        gpubp_variable *v = gbp_file_var(f, name);
        GBP_RETURN_ERROR_IF(!v, GPUBP_ERR_NOT_FOUND, "variable '%s' is not defined in %s", name,
                            f->path);
        *out = v;
        return GPUBP_OK;
    }
    return gbp_reader_inquire(out, f, name);
}

int gpubp_variable_name(const gpubp_variable *v, const char **name)
{
    GBP_CHECK_ARG(v);
    GBP_CHECK_ARG(name);
    *name = v->name;
    return GPUBP_OK;
}

static int check_dims_arg(const gpubp_variable *v, size_t ndims, const char *fn)
{
    if (ndims != v->sel.ndims)
        return gbp_error(GPUBP_ERR_INVALID_DIMS, 0,
                         "%s: variable '%s' has %zu dimensions, %zu given", fn, v->name,
                         v->sel.ndims, ndims);
    return GPUBP_OK;
}

int gpubp_set_shape(gpubp_variable *v, size_t ndims, const size_t *shape)
{
    GBP_CHECK_ARG(v);
    GBP_RETURN_ERROR_IF(!gbp_is_write_mode(v->file), GPUBP_ERR_WRONG_MODE,
                        "gpubp_set_shape: '%s' belongs to a file open for reading", v->name);
    GBP_RETURN_ERROR_IF(v->kind != GPUBP_SHAPE_GLOBAL_ARRAY, GPUBP_ERR_WRONG_MODE,
                        "gpubp_set_shape: '%s' is not a global array", v->name);
    GBP_FORWARD_IF_ERROR(check_dims_arg(v, ndims, "gpubp_set_shape"));
    GBP_CHECK_ARG(shape);
    memcpy(v->sel.shape, shape, ndims * sizeof *shape);
    return GPUBP_OK;
}

int gpubp_set_selection(gpubp_variable *v, size_t ndims, const size_t *start, const size_t *count)
{
    GBP_CHECK_ARG(v);
    GBP_FORWARD_IF_ERROR(check_dims_arg(v, ndims, "gpubp_set_selection"));
    GBP_RETURN_ERROR_IF(ndims == 0, GPUBP_ERR_INVALID_DIMS,
                        "gpubp_set_selection: '%s' is a single value", v->name);
    GBP_CHECK_ARG(count);
    GBP_RETURN_ERROR_IF(gbp_is_write_mode(v->file) && v->kind == GPUBP_SHAPE_LOCAL_VALUE,
                        GPUBP_ERR_WRONG_MODE,
                        "gpubp_set_selection: '%s' is a local value: each put writes one value",
                        v->name);
    int local = v->kind == GPUBP_SHAPE_LOCAL_ARRAY;
    GBP_RETURN_ERROR_IF(!start && !local, GPUBP_ERR_INVALID_ARG,
                        "gpubp_set_selection: start is NULL for global array '%s'", v->name);
    for (size_t i = 0; i < ndims; i++) {
        size_t s = start ? start[i] : 0;
        GBP_RETURN_ERROR_IF(count[i] > SIZE_MAX - s, GPUBP_ERR_INVALID_SELECTION,
                            "gpubp_set_selection: '%s': start + count overflows in dimension %zu",
                            v->name, i);
        if (gbp_is_write_mode(v->file) && !local && s + count[i] > v->sel.shape[i])
            return gbp_error(GPUBP_ERR_INVALID_SELECTION, 0,
                             "gpubp_set_selection: '%s': start %zu + count %zu exceeds shape %zu "
                             "in dimension %zu", v->name, s, count[i], v->sel.shape[i], i);
    }
    for (size_t i = 0; i < ndims; i++) {
        v->sel.start[i] = start ? start[i] : 0;
        v->sel.count[i] = count[i];
    }
    v->sel.has_box = 1;
    return GPUBP_OK;
}

int gpubp_set_block_selection(gpubp_variable *v, size_t block_id)
{
    GBP_CHECK_ARG(v);
    GBP_RETURN_ERROR_IF(gbp_is_write_mode(v->file), GPUBP_ERR_WRONG_MODE,
                        "gpubp_set_block_selection: '%s' belongs to a file open for writing",
                        v->name);
    v->sel.has_block = 1;
    v->sel.block_id = block_id;
    /* a block selection replaces a box from an earlier get (ADIOS2: SetBlockSelection) */
    if (v->kind != GPUBP_SHAPE_LOCAL_ARRAY) v->sel.has_box = 0;
    return GPUBP_OK;
}

int gpubp_set_step_selection(gpubp_variable *v, size_t step_start, size_t step_count)
{
    GBP_CHECK_ARG(v);
    GBP_RETURN_ERROR_IF(v->file->mode != GPUBP_MODE_READ_RANDOM_ACCESS, GPUBP_ERR_WRONG_MODE,
                        "gpubp_set_step_selection: '%s': step selections need "
                        "GPUBP_MODE_READ_RANDOM_ACCESS", v->name);
    size_t n = v->rv ? v->rv->nsteps : 0;
    if (step_count == 0 || step_start >= n || step_count > n - step_start)
        return gbp_error(GPUBP_ERR_INVALID_STEP, 0,
                         "gpubp_set_step_selection: '%s' has %zu steps; steps [%zu, %zu) do not exist",
                         v->name, n, step_start, step_start + step_count);
    v->sel.has_steps = 1;
    v->sel.step_start = step_start;
    v->sel.step_count = step_count;
    return GPUBP_OK;
}

int gpubp_set_memory_space(gpubp_variable *v, gpubp_memory_space space)
{
    GBP_CHECK_ARG(v);
    GBP_RETURN_ERROR_IF(space < GPUBP_MEM_DETECT || space > GPUBP_MEM_GPU, GPUBP_ERR_INVALID_ARG,
                        "gpubp_set_memory_space: invalid memory space %d", (int)space);
    if (space == GPUBP_MEM_GPU) {
        int st = gbp_mem_device_status(v->file->mem);
        if (st == GPUBP_ERR_NOMEM) return st;
        if (st != GPUBP_OK)
            return gbp_error(GPUBP_ERR_NOT_SUPPORTED, 0,
                             "gpubp_set_memory_space: '%s': GPU memory is not supported (no CUDA in "
                             "this build or no device)", v->name);
    }
    if (v->space != GPUBP_MEM_DETECT && space != v->space)
        return gbp_error(GPUBP_ERR_MEMORY_SPACE, 0,
                         "gpubp_set_memory_space: variable '%s' is set to %s and cannot receive %s "
                         "buffers (a variable is host or GPU for its whole life)",
                         v->name, v->space == GPUBP_MEM_GPU ? "GPU" : "host",
                         space == GPUBP_MEM_GPU ? "GPU" : space == GPUBP_MEM_HOST ? "host"
                                                                                 : "detected");
    v->space = space;
    return GPUBP_OK;
}

int gpubp_variable_memory_space(const gpubp_variable *v, gpubp_memory_space *space)
{
    GBP_CHECK_ARG(v);
    GBP_CHECK_ARG(space);
    *space = v->space;
    return GPUBP_OK;
}

int gbp_resolve_space(gpubp_variable *v, const void *ptr, gpubp_memory_space *space)
{
    gpubp_memory_space det;
    GBP_FORWARD_IF_ERROR(gbp_mem_detect(v->file->mem, ptr, &det));
    if (v->space == GPUBP_MEM_DETECT) {
        v->space = det;
    } else if (v->space != det) {
        return gbp_error(GPUBP_ERR_MEMORY_SPACE, 0,
                         "variable '%s' is set to %s memory but the buffer %p is %s memory",
                         v->name, v->space == GPUBP_MEM_GPU ? "GPU" : "host", ptr,
                         det == GPUBP_MEM_GPU ? "device" : "host");
    }
    *space = v->space;
    return GPUBP_OK;
}

int gpubp_set_memory_selection(gpubp_variable *v, size_t ndims, const size_t *start,
                               const size_t *count)
{
    GBP_CHECK_ARG(v);
    if (ndims == 0) {
        v->sel.mem_ndims = 0;
        return GPUBP_OK;
    }
    GBP_FORWARD_IF_ERROR(check_dims_arg(v, ndims, "gpubp_set_memory_selection"));
    GBP_CHECK_ARG(start);
    GBP_CHECK_ARG(count);
    for (size_t i = 0; i < ndims; i++) {
        v->sel.mem_start[i] = start[i];
        v->sel.mem_count[i] = count[i];
    }
    v->sel.mem_ndims = ndims;
    return GPUBP_OK;
}

int gpubp_variable_ndims(const gpubp_variable *v, size_t *ndims)
{
    GBP_CHECK_ARG(v);
    GBP_CHECK_ARG(ndims);
    *ndims = v->sel.ndims;
    return GPUBP_OK;
}

int gpubp_variable_type(const gpubp_variable *v, gpubp_type *type)
{
    GBP_CHECK_ARG(v);
    GBP_CHECK_ARG(type);
    *type = (gpubp_type)v->type;
    return GPUBP_OK;
}

int gpubp_variable_shape_kind(const gpubp_variable *v, gpubp_shape_kind *kind)
{
    GBP_CHECK_ARG(v);
    GBP_CHECK_ARG(kind);
    *kind = (gpubp_shape_kind)v->kind;
    return GPUBP_OK;
}

int gpubp_set_stream(gpubp_file *f, void *cuda_stream)
{
    GBP_CHECK_ARG(f);
    return gbp_mem_set_stream(f->mem, cuda_stream);
}
