/* The public API, Variables section of <gpubp.h>: define and inquire, shapes and selections, the
 * reader's queries (steps, blocks, min/max, sizes), the variable list. */
#include "engine/bp5read.h"
#include "engine/handles.h"
#include "engine/reader.h"
#include "engine/rvar.h"
#include "engine/scan.h"
#include "engine/zblock.h"

#include "gpubp/cuda.h"

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

static int gbp_check_dims_arg(const gpubp_variable *v, size_t ndims, const char *fn)
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
    GBP_FORWARD_IF_ERROR(gbp_check_dims_arg(v, ndims, "gpubp_set_shape"));
    GBP_CHECK_ARG(shape);
    memcpy(v->sel.shape, shape, ndims * sizeof *shape);
    return GPUBP_OK;
}

int gpubp_set_selection(gpubp_variable *v, size_t ndims, const size_t *start, const size_t *count)
{
    GBP_CHECK_ARG(v);
    GBP_FORWARD_IF_ERROR(gbp_check_dims_arg(v, ndims, "gpubp_set_selection"));
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
    /* a block selection replaces a box from an earlier gbp_reader_get (ADIOS2: SetBlockSelection) */
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
        int st = gbp_file_device_status(v->file);
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

int gpubp_set_memory_selection(gpubp_variable *v, size_t ndims, const size_t *start,
                               const size_t *count)
{
    GBP_CHECK_ARG(v);
    if (ndims == 0) {
        v->sel.mem_ndims = 0;
        return GPUBP_OK;
    }
    GBP_FORWARD_IF_ERROR(gbp_check_dims_arg(v, ndims, "gpubp_set_memory_selection"));
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

int gpubp_variable_element_size(const gpubp_variable *v, size_t *bytes)
{
    GBP_CHECK_ARG(v);
    GBP_CHECK_ARG(bytes);
    if (v->rv) GBP_FORWARD_IF_ERROR(gbp_rvar_check_readable(v, "gpubp_variable_element_size"));
    *bytes = gbp_rvar_esize(v);
    return GPUBP_OK;
}

int gpubp_variable_expression(const gpubp_variable *v, const char **expression)
{
    GBP_CHECK_ARG(v);
    GBP_CHECK_ARG(expression);
    *expression = v->rv ? v->rv->expr : NULL; /* rv: read modes only */
    return GPUBP_OK;
}

/* The layout of a struct variable, or TYPE_MISMATCH naming fn. */
static int struct_of(const gpubp_variable *v, const char *fn, const gbp_struct_def **d)
{
    GBP_CHECK_ARG(v);
    *d = v->rv ? v->rv->sdef : NULL; /* rv: read modes only */
    GBP_RETURN_ERROR_IF(!*d, GPUBP_ERR_TYPE_MISMATCH, "%s: '%s' is a %s variable, not a struct",
                        fn, v->name, gbp_type_name(v->type));
    return GPUBP_OK;
}

int gpubp_variable_struct(const gpubp_variable *v, const char **name, size_t *size,
                          size_t *nfields)
{
    const gbp_struct_def *d;
    GBP_FORWARD_IF_ERROR(struct_of(v, "gpubp_variable_struct", &d));
    if (name) *name = d->name;
    if (size) *size = d->size;
    if (nfields) *nfields = d->nfields;
    return GPUBP_OK;
}

int gpubp_variable_struct_field(const gpubp_variable *v, size_t i, const char **name,
                                gpubp_type *type, size_t *offset, size_t *count)
{
    const gbp_struct_def *d;
    GBP_FORWARD_IF_ERROR(struct_of(v, "gpubp_variable_struct_field", &d));
    GBP_RETURN_ERROR_IF(i >= d->nfields, GPUBP_ERR_INVALID_ARG,
                        "gpubp_variable_struct_field: '%s' has %zu fields, not %zu", v->name,
                        d->nfields, i + 1);
    const gbp_struct_field *fl = &d->fields[i];
    if (name) *name = fl->name;
    if (type) *type = (gpubp_type)fl->type;
    if (offset) *offset = fl->offset;
    if (count) *count = fl->count;
    return GPUBP_OK;
}

int gpubp_variable_shape_kind(const gpubp_variable *v, gpubp_shape_kind *kind)
{
    GBP_CHECK_ARG(v);
    GBP_CHECK_ARG(kind);
    *kind = (gpubp_shape_kind)v->kind;
    return GPUBP_OK;
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
    v->member_id = f->wr.next_member++;
    if (f->params.compress && !gbp_kind_is_value(kind)) {
        v->op = 1;
        v->op_codec = f->params.compress_codec;
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

int gpubp_variable_add_operation(gpubp_variable *v, const char *op, const char *params)
{
    GBP_CHECK_ARG(v);
    GBP_CHECK_ARG(op);
    GBP_RETURN_ERROR_IF(!gbp_is_write_mode(v->file), GPUBP_ERR_WRONG_MODE,
                        "gpubp_variable_add_operation: '%s' belongs to a file open for reading",
                        v->name);
    GBP_RETURN_ERROR_IF(v->puts > 0, GPUBP_ERR_WRONG_MODE,
                        "gpubp_variable_add_operation: '%s' has been put already", v->name);
    int codec;
    GBP_FORWARD_IF_ERROR(gbp_zblock_codec(op, &codec));
    GBP_RETURN_ERROR_IF(v->type == GPUBP_TYPE_STRING || gbp_kind_is_value(v->kind),
                        GPUBP_ERR_NOT_SUPPORTED,
                        "gpubp_variable_add_operation: '%s' is a single value; only arrays are "
                        "compressed", v->name);
    int level = v->file->params.compress_level, shuffle = v->file->params.compress_shuffle;
    int threads = 0;
    if (params) GBP_FORWARD_IF_ERROR(gbp_zblock_params(params, &level, &shuffle, &threads));
    v->op = 1;
    v->op_codec = codec;
    v->op_level = level;
    v->op_shuffle = shuffle;
    v->op_threads = threads;
    return GPUBP_OK;
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
        gpubp_memory_space own = gbp_rvar_space(v, GPUBP_MEM_DETECT);
        if (gbp_space_reverses(v->file, own) != gbp_space_reverses(v->file, gbp_rvar_space(v, space)))
            gbp_reverse(dims, nd);
        return GPUBP_OK;
    }
    size_t first, n;
    GBP_FORWARD_IF_ERROR(gbp_rvar_steps(v, &v->sel, &first, &n));
    /* random access with no step selection: the shape of the last step, as ADIOS2's BP4 reader */
    if (v->file->mode == GPUBP_MODE_READ_RANDOM_ACCESS && !v->sel.has_steps)
        first = v->rv->nsteps - 1;
    GBP_FORWARD_IF_ERROR(gbp_rvar_file_shape(v, &v->sel, first, dims));
    if (gbp_space_reverses(v->file, gbp_rvar_space(v, space))) gbp_reverse(dims, nd);
    return GPUBP_OK;
}

int gpubp_variable_steps(const gpubp_variable *v, size_t *nsteps)
{
    GBP_CHECK_ARG(v);
    GBP_CHECK_ARG(nsteps);
    *nsteps = gbp_is_write_mode(v->file) ? v->steps_written : v->rv->nsteps;
    return GPUBP_OK;
}

int gpubp_variable_blocks(const gpubp_variable *v, size_t step, size_t *nblocks)
{
    GBP_CHECK_ARG(v);
    GBP_CHECK_ARG(nblocks);
    size_t vs;
    GBP_FORWARD_IF_ERROR(gbp_rvar_step_arg(v, step, &vs));
    return gbp_rvar_user_nblocks(v, vs, nblocks);
}

int gpubp_variable_block_info(const gpubp_variable *v, size_t step, size_t block, size_t *start,
                              size_t *count, void *min, void *max)
{
    GBP_CHECK_ARG(v);
    size_t vs;
    GBP_FORWARD_IF_ERROR(gbp_rvar_step_arg(v, step, &vs));
    const gbp_block *blocks = NULL;
    size_t nb = 0;
    GBP_FORWARD_IF_ERROR(gbp_rvar_user_blocks(v, vs, &blocks, &nb));
    GBP_RETURN_ERROR_IF(block >= nb, GPUBP_ERR_INVALID_SELECTION,
                        "'%s': block %zu does not exist (step has %zu blocks)", v->name, block, nb);
    const gbp_block *b = &blocks[block];
    size_t nd = v->sel.ndims, es = gbp_type_size(v->type); /* structs: 0, no min/max */
    if (v->kind == GPUBP_SHAPE_LOCAL_VALUE) {
        if (start) start[0] = block;
        if (count) count[0] = 1;
    } else {
        for (size_t i = 0; i < nd && i < b->ndims; i++) {
            if (start)
                start[i] = v->kind == GPUBP_SHAPE_LOCAL_ARRAY ? 0 : (size_t)GBP_START(b)[i];
            if (count) count[i] = (size_t)GBP_COUNT(b)[i];
        }
        if (gbp_space_reverses(v->file, gbp_rvar_space(v, GPUBP_MEM_DETECT))) {
            if (start) gbp_reverse(start, nd);
            if (count) gbp_reverse(count, nd);
        }
    }
    if (v->type == GPUBP_TYPE_STRING || (!min && !max)) return GPUBP_OK;
    GBP_FORWARD_IF_ERROR(gbp_rvar_check_readable(v, "gpubp_variable_block_info"));
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

int gpubp_variable_joined_dim(const gpubp_variable *v, size_t *dim)
{
    GBP_CHECK_ARG(v);
    GBP_CHECK_ARG(dim);
    GBP_RETURN_ERROR_IF(gbp_is_write_mode(v->file), GPUBP_ERR_WRONG_MODE,
                        "gpubp_variable_joined_dim: '%s' belongs to a file open for writing",
                        v->name);
    GBP_RETURN_ERROR_IF(v->kind != GPUBP_SHAPE_JOINED_ARRAY, GPUBP_ERR_INVALID_ARG,
                        "gpubp_variable_joined_dim: '%s' is not a joined array", v->name);
    *dim = v->rv->joined_dim;
    return GPUBP_OK;
}

int gpubp_variable_block_writer(const gpubp_variable *v, size_t step, size_t block,
                                size_t *writer)
{
    GBP_CHECK_ARG(v);
    GBP_CHECK_ARG(writer);
    size_t vs;
    GBP_FORWARD_IF_ERROR(gbp_rvar_step_arg(v, step, &vs));
    GBP_RETURN_ERROR_IF(!v->file->rd.bp5 || v->file->rd.remote, GPUBP_ERR_NOT_SUPPORTED,
                        "gpubp_variable_block_writer: '%s': writer ranks are known for BP5 "
                        "datasets read from disk only", v->name);
    const gbp_var_step *st = &v->rv->steps[vs];
    GBP_RETURN_ERROR_IF(block >= st->nblocks, GPUBP_ERR_INVALID_SELECTION,
                        "'%s': block %zu does not exist (step has %u blocks)", v->name, block,
                        st->nblocks);
    const gbp_block *blocks = NULL;
    GBP_FORWARD_IF_ERROR(gbp_rvar_blocks(v, vs, &blocks));
    *writer = (size_t)blocks[block].vmd_offset;
    return GPUBP_OK;
}

int gpubp_variable_block_operator(const gpubp_variable *v, size_t step, size_t block, char *name,
                                  size_t cap)
{
    GBP_CHECK_ARG(v);
    GBP_CHECK_ARG(name);
    GBP_RETURN_ERROR_IF(cap == 0, GPUBP_ERR_INVALID_ARG,
                        "gpubp_variable_block_operator: '%s': cap is 0", v->name);
    size_t vs, nb = 0;
    GBP_FORWARD_IF_ERROR(gbp_rvar_step_arg(v, step, &vs));
    const gbp_block *blocks = NULL;
    GBP_FORWARD_IF_ERROR(gbp_rvar_user_blocks(v, vs, &blocks, &nb));
    GBP_RETURN_ERROR_IF(block >= nb, GPUBP_ERR_INVALID_SELECTION,
                        "'%s': block %zu does not exist (step has %zu blocks)", v->name, block, nb);
    return gbp_rvar_block_operator(v, &blocks[block], name, cap);
}

int gpubp_variable_minmax(const gpubp_variable *v, void *min, void *max)
{
    GBP_CHECK_ARG(v);
    GBP_RETURN_ERROR_IF(v->type == GPUBP_TYPE_STRING || v->type == GPUBP_TYPE_STRUCT,
                        GPUBP_ERR_NOT_SUPPORTED, "gpubp_variable_minmax: '%s' is a %s", v->name,
                        gbp_type_name(v->type));
    GBP_RETURN_ERROR_IF(gbp_is_write_mode(v->file), GPUBP_ERR_WRONG_MODE,
                        "gpubp_variable_minmax: '%s' belongs to a file open for writing", v->name);
    GBP_FORWARD_IF_ERROR(gbp_rvar_check_readable(v, "gpubp_variable_minmax"));
    size_t first = 0, n = v->rv->nsteps;
    if (v->file->mode == GPUBP_MODE_READ || v->sel.has_steps)
        GBP_FORWARD_IF_ERROR(gbp_rvar_steps(v, &v->sel, &first, &n));
    size_t es = gbp_type_size(v->type);
    if (first == 0 && n == v->rv->nsteps && !v->sel.has_block &&
        v->file->mode == GPUBP_MODE_READ_RANDOM_ACCESS) {
        /* every step: the summary of the streaming pass, no block is loaded */
        GBP_FORWARD_IF_ERROR(gbp_scan_summary(v->file));
        GBP_RETURN_ERROR_IF(!v->rv->has_mm, GPUBP_ERR_NOT_FOUND,
                            "gpubp_variable_minmax: '%s' has no min/max", v->name);
        if (min) memcpy(min, v->rv->mm, es);
        if (max) memcpy(max, v->rv->mm + 16, es);
        return GPUBP_OK;
    }
    uint8_t mn[16], mx[16];
    int have = 0;
    for (size_t s = first; s < first + n; s++) {
        const gbp_block *blocks = NULL;
        size_t nb = 0;
        GBP_FORWARD_IF_ERROR(gbp_rvar_user_blocks(v, s, &blocks, &nb));
        for (size_t b = 0; b < nb; b++) {
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

int gpubp_variable_minmax_missing(const gpubp_variable *v, int *missing)
{
    GBP_CHECK_ARG(v);
    GBP_CHECK_ARG(missing);
    GBP_RETURN_ERROR_IF(v->type == GPUBP_TYPE_STRING || v->type == GPUBP_TYPE_STRUCT,
                        GPUBP_ERR_NOT_SUPPORTED, "gpubp_variable_minmax_missing: '%s' is a %s",
                        v->name, gbp_type_name(v->type));
    GBP_RETURN_ERROR_IF(gbp_is_write_mode(v->file), GPUBP_ERR_WRONG_MODE,
                        "gpubp_variable_minmax_missing: '%s' belongs to a file open for writing",
                        v->name);
    if (v->file->mode == GPUBP_MODE_READ_RANDOM_ACCESS) {
        /* the summary of the streaming pass knows it for every step */
        GBP_FORWARD_IF_ERROR(gbp_scan_summary(v->file));
        *missing = v->rv->mm_missing != 0;
        return GPUBP_OK;
    }
    size_t first = 0, n = 0; /* READ: the current step */
    GBP_FORWARD_IF_ERROR(gbp_rvar_steps(v, &v->sel, &first, &n));
    *missing = 0;
    for (size_t s = first; s < first + n && !*missing; s++) {
        const gbp_block *blocks = NULL;
        GBP_FORWARD_IF_ERROR(gbp_rvar_blocks(v, s, &blocks));
        for (size_t b = 0; b < v->rv->steps[s].nblocks; b++)
            if (!blocks[b].has_value && !blocks[b].has_minmax) *missing = 1;
    }
    return GPUBP_OK;
}

int gpubp_selection_size(const gpubp_variable *v, size_t *bytes)
{
    GBP_CHECK_ARG(v);
    GBP_CHECK_ARG(bytes);
    GBP_FORWARD_IF_ERROR(gbp_rvar_check_readable(v, "gpubp_selection_size"));
    size_t es = gbp_rvar_esize(v), nd = v->sel.ndims;
    if (gbp_is_write_mode(v->file)) {
        size_t n = 1;
        for (size_t i = 0; i < nd; i++) n *= v->sel.count[i];
        *bytes = n * es;
        return GPUBP_OK;
    }
    size_t first, n;
    GBP_FORWARD_IF_ERROR(gbp_rvar_steps(v, &v->sel, &first, &n));
    int rev = gbp_space_reverses(v->file, gbp_rvar_space(v, GPUBP_MEM_DETECT));
    size_t total = 0;
    for (size_t t = 0; t < n; t++) {
        size_t one;
        GBP_FORWARD_IF_ERROR(gbp_rvar_step_bytes(v, &v->sel, first + t, rev, &one));
        GBP_RETURN_ERROR_IF(!gbp_add_ok(total, one, &total), GPUBP_ERR_INVALID_SELECTION,
                            "gpubp_selection_size: '%s': the selection's size overflows", v->name);
    }
    *bytes = total;
    return GPUBP_OK;
}

int gpubp_available_variables(const gpubp_file *fc, size_t *n, const char *const **names)
{
    GBP_CHECK_ARG(fc);
    GBP_CHECK_ARG(n);
    GBP_CHECK_ARG(names);
    gpubp_file *f = (gpubp_file *)fc; /* the cache is not part of the file's state */
    gbp_free(f->names);
    size_t cap = (gbp_is_write_mode(f) ? f->nvars : f->rd.ix.nvars) + 1;
    f->names = gbp_malloc(cap * sizeof *f->names);
    GBP_CHECK_ALLOC(f->names);
    size_t k = 0;
    if (gbp_is_write_mode(f)) {
        for (size_t i = 0; i < f->nvars; i++) f->names[k++] = f->vars[i]->name;
    } else {
        for (size_t i = 0; i < f->rd.ix.nvars; i++) {
            gbp_var *rv = f->rd.ix.vars[i];
            if (rv->nsteps == 0) continue;
            if (f->mode == GPUBP_MODE_READ && (!f->in_step || !gbp_file_step_has(f, rv)))
                continue;
            f->names[k++] = rv->name;
        }
    }
    gbp_sort_names(f->names, k);
    f->nnames = k;
    *n = k;
    *names = f->names;
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
    *dataset_step = gbp_dataset_step(v->file, &v->rv->steps[step]);
    return GPUBP_OK;
}
