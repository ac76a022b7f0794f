/*
 * gpubpls: the shapes and blocks of one variable, as the dumps and listings query them (through
 * the public API; in random-access mode each query sets the variable's step selection first).
 */
#include "gpubpls/ls_shape.h"

#include <string.h>

int ls_select_steps(ls_ctx *c, const ls_var *v, size_t step, size_t n)
{
    if (!c->random_access)
        return LS_OK;
    int rc = gpubp_set_step_selection(v->v, step, n);
    return rc < 0 ? ls_lib_error(c, rc, "selecting steps of", v->name) : LS_OK;
}

int ls_nblocks_at(ls_ctx *c, const ls_var *v, size_t step, size_t *n)
{
    int rc = gpubp_variable_blocks(v->v, c->random_access ? step : 0, n);
    return rc < 0 ? ls_lib_error(c, rc, "counting the blocks of", v->name) : LS_OK;
}

int ls_block_info(ls_ctx *c, const ls_var *v, size_t step, size_t b, size_t *start,
                  size_t *count, void *min, void *max)
{
    size_t st = c->random_access ? step : 0;
    int rc;
    if (v->kind == GPUBP_SHAPE_LOCAL_VALUE) {
        start[0] = b;
        count[0] = 1;
        rc = gpubp_variable_block_info(v->v, st, b, NULL, NULL, min, max);
    } else {
        rc = gpubp_variable_block_info(v->v, st, b, start, count, min, max);
        if (rc >= 0 && v->kind == GPUBP_SHAPE_LOCAL_ARRAY)
            memset(start, 0, v->ndims * sizeof *start);
    }
    return rc < 0 ? ls_lib_error(c, rc, "reading the blocks of", v->name) : LS_OK;
}

int ls_var_shape(ls_ctx *c, const ls_var *v, size_t step, size_t *dims)
{
    if (v->kind == GPUBP_SHAPE_LOCAL_VALUE)
        return ls_nblocks_at(c, v, step, &dims[0]);
    if (v->ndims == 0)
        return LS_OK;
    int rc = ls_select_steps(c, v, step, 1);
    if (rc != LS_OK)
        return rc;
    rc = gpubp_variable_shape(v->v, GPUBP_MEM_HOST, dims);
    return rc < 0 ? ls_lib_error(c, rc, "reading the shape of", v->name) : LS_OK;
}

int ls_var_last_shape(ls_ctx *c, const ls_var *v, size_t *dims)
{
    if (v->kind == GPUBP_SHAPE_LOCAL_ARRAY) {
        size_t start[LS_MAX_DIMS];
        return ls_block_info(c, v, 0, 0, start, dims, NULL, NULL);
    }
    return ls_var_shape(c, v, v->nsteps ? v->nsteps - 1 : 0, dims);
}

int ls_global_signature(ls_ctx *c, const ls_var *v, size_t *dims)
{
    /* a local value keeps one shape, its last step's block count (bpls reads it so) */
    if (!c->random_access || v->kind == GPUBP_SHAPE_LOCAL_VALUE)
        return ls_var_last_shape(c, v, dims);
    size_t d[LS_MAX_DIMS];
    if (c->bp5 && v->kind == GPUBP_SHAPE_JOINED_ARRAY && v->nsteps && c->file_steps > 1) {
        /* bpls takes each step's shape from MinBlocksInfo, which has none for a BP5 joined array
         * absent from the dataset's last step (ADIOS2 cleared its running shape there): no
         * extent is known, every dimension prints as __ */
        size_t last = 0;
        int rc = gpubp_variable_dataset_step(v->v, v->nsteps - 1, &last);
        if (rc < 0)
            return ls_lib_error(c, rc, "reading the steps of", v->name);
        if (last + 1 < c->file_steps) {
            for (size_t k = 0; k < v->ndims; k++) dims[k] = 0;
            return LS_OK;
        }
    }
    for (size_t s = 0; s < v->nsteps; s++) {
        int rc = ls_var_shape(c, v, s, d);
        if (rc != LS_OK)
            return rc;
        for (size_t k = 0; k < v->ndims; k++)
            if (s == 0)
                dims[k] = d[k];
            else if (dims[k] != d[k])
                dims[k] = 0;
    }
    return LS_OK;
}

int ls_local_signature(ls_ctx *c, const ls_var *v, size_t *nblocks, size_t *dims)
{
    bool first_block = true;
    size_t start[LS_MAX_DIMS], count[LS_MAX_DIMS];
    *nblocks = 0;
    memset(dims, 0, v->ndims * sizeof *dims);
    for (size_t s = 0; s < v->nsteps; s++) { /* one step, the current one, in -t mode */
        size_t n;
        int rc = ls_nblocks_at(c, v, s, &n);
        if (rc != LS_OK)
            return rc;
        if (s == 0)
            *nblocks = n;
        else if (*nblocks != n)
            *nblocks = 0;
        for (size_t b = 0; b < n; b++) {
            rc = ls_block_info(c, v, s, b, start, count, NULL, NULL);
            if (rc != LS_OK)
                return rc;
            for (size_t k = 0; k < v->ndims; k++)
                if (first_block)
                    dims[k] = count[k];
                else if (dims[k] != count[k])
                    dims[k] = 0;
            first_block = false;
        }
    }
    return LS_OK;
}

int ls_joined_extent(ls_ctx *c, const ls_var *v, size_t step, size_t *ext)
{
    size_t nb, start[LS_MAX_DIMS], count[LS_MAX_DIMS];
    int rc = ls_nblocks_at(c, v, step, &nb);
    memset(ext, 0, v->ndims * sizeof *ext);
    for (size_t b = 0; rc == LS_OK && b < nb; b++) {
        if ((rc = ls_block_info(c, v, step, b, start, count, NULL, NULL)) != LS_OK)
            break;
        for (size_t k = 0; k < v->ndims; k++)
            if (count[k] && start[k] + count[k] > ext[k])
                ext[k] = start[k] + count[k];
    }
    return rc;
}
