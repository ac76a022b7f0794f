/* A variable as the reader sees it: its selected steps, blocks, shapes and boxes. */
#include "engine/rvar.h"

#include "engine/dataset.h"
#include "engine/handles.h"
#include "engine/scan.h"

#include "compress/blosczlib.h"
#include "format/bp5_op.h"
#include "memspace/box.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

/* Variables of a type this library cannot read are listed; their values are not readable. */
int gbp_rvar_check_readable(const gpubp_variable *v, const char *fn)
{
    if (gbp_type_known(v->type) || (v->type == GPUBP_TYPE_STRUCT && v->rv && v->rv->sdef))
        return GPUBP_OK;
    return gbp_error(GPUBP_ERR_UNSUPPORTED_TYPE, 0,
                     "%s: variable '%s' of %s has BP4 type id %d, which libgpubp cannot read", fn,
                     v->name, v->file->path, v->type);
}

size_t gbp_rvar_esize(const gpubp_variable *v)
{
    return v->rv ? gbp_var_esize(v->rv) : gbp_type_size(v->type);
}

/* ---- steps and blocks of a variable --------------------------------------------------------- */

/* The variable's selected steps as indices into rv->steps: [*first, *first + *n). */
int gbp_rvar_steps(const gpubp_variable *v, const gbp_sel *s, size_t *first, size_t *n)
{
    const gpubp_file *f = v->file;
    if (f->mode == GPUBP_MODE_READ) {
        GBP_RETURN_ERROR_IF(!f->in_step, GPUBP_ERR_WRONG_MODE, "'%s': no step is open", v->name);
        const gbp_var_step *st = gbp_var_find_step(v->rv, f->rd.cur_step);
        GBP_RETURN_ERROR_IF(!st, GPUBP_ERR_INVALID_STEP, "'%s' is not in the current step %zu",
                            v->name, f->rd.cur_step);
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
int gbp_rvar_blocks(const gpubp_variable *v, size_t vs, const gbp_block **out)
{
    gpubp_file *f = v->file; /* the index is a cache: loading is not a change of state */
    char what[4200];
    snprintf(what, sizeof what, "%s/md.0", f->path);
    return gbp_index_blocks(&f->rd.ix, v->rv, vs, out, what);
}

/* The blocks a user numbers (block selections, block queries) at var-step vs: the blocks as they
 * were put (the sub-blocks of a split global-array put are one), or with block_view=stored every
 * stored block, as ADIOS2's readers number them. */
int gbp_rvar_user_blocks(const gpubp_variable *v, size_t vs, const gbp_block **out, size_t *n)
{
    gpubp_file *f = v->file;
    if (f->params.block_view_stored || v->kind != GPUBP_SHAPE_GLOBAL_ARRAY) {
        *n = v->rv->steps[vs].nblocks;
        return gbp_rvar_blocks(v, vs, out);
    }
    char what[4200];
    snprintf(what, sizeof what, "%s/md.0", f->path);
    return gbp_index_puts(&f->rd.ix, v->rv, vs, out, n, what);
}

int gbp_rvar_user_nblocks(const gpubp_variable *v, size_t vs, size_t *n)
{
    if (v->file->params.block_view_stored || v->kind != GPUBP_SHAPE_GLOBAL_ARRAY) {
        *n = v->rv->steps[vs].nblocks; /* known without loading the blocks */
        return GPUBP_OK;
    }
    const gbp_block *blocks = NULL;
    return gbp_rvar_user_blocks(v, vs, &blocks, n);
}

int gbp_rvar_select_block(const gpubp_variable *v, const gbp_sel *s, size_t vs, const gbp_block **out)
{
    size_t b = s->has_block ? s->block_id : 0, n = 0;
    const gbp_block *blocks = NULL;
    GBP_FORWARD_IF_ERROR(gbp_rvar_user_blocks(v, vs, &blocks, &n));
    if (b >= n)
        return gbp_error(GPUBP_ERR_INVALID_SELECTION, 0,
                         "'%s': block %zu does not exist (step has %zu blocks)", v->name, b, n);
    *out = &blocks[b];
    return GPUBP_OK;
}

/* File-order shape of the variable at var-step vs. */
int gbp_rvar_file_shape(const gpubp_variable *v, const gbp_sel *s, size_t vs, size_t *dims)
{
    const gbp_var_step *st = &v->rv->steps[vs];
    size_t nd = v->sel.ndims;
    switch (v->kind) {
    case GPUBP_SHAPE_GLOBAL_VALUE: return GPUBP_OK;
    case GPUBP_SHAPE_LOCAL_VALUE: dims[0] = st->nblocks; return GPUBP_OK;
    case GPUBP_SHAPE_LOCAL_ARRAY: {
        const gbp_block *b = NULL;
        GBP_FORWARD_IF_ERROR(gbp_rvar_select_block(v, s, vs, &b));
        for (size_t i = 0; i < nd; i++) dims[i] = (size_t)GBP_COUNT(b)[i];
        return GPUBP_OK;
    }
    default: {
        gpubp_file *f = v->file;
        /* joined arrays are always summarized as their steps are added (BP5: bp5_index.c
         * light_ok; BP4: bp4_index.c on_var_begin) */
        if (!f->rd.ix.summarized && v->kind != GPUBP_SHAPE_JOINED_ARRAY) {
            /* a few steps: from their blocks; a listing of many: the summary pass, once */
            if (v->rv->steps[vs].blocks || v->rv->loaded < 16) {
                const gbp_block *blocks = NULL;
                GBP_FORWARD_IF_ERROR(gbp_rvar_blocks(v, vs, &blocks));
                const gbp_block *b = &blocks[st->nblocks - 1]; /* the last block's shape */
                for (size_t i = 0; i < nd; i++) dims[i] = (size_t)GBP_SHAPE(b)[i];
                return GPUBP_OK;
            }
            GBP_FORWARD_IF_ERROR(gbp_scan_summary(f));
        }
        const uint64_t *shape = gbp_var_shape(v->rv, vs); /* the step's last block's shape */
        for (size_t i = 0; i < nd; i++) dims[i] = (size_t)shape[i];
        return GPUBP_OK;
    }
    }
}

gpubp_memory_space gbp_rvar_space(const gpubp_variable *v, gpubp_memory_space space)
{
    if (space == GPUBP_MEM_DETECT) return v->space == GPUBP_MEM_DETECT ? GPUBP_MEM_HOST : v->space;
    return space;
}

int gbp_rvar_step_arg(const gpubp_variable *v, size_t step, size_t *vs)
{
    GBP_RETURN_ERROR_IF(gbp_is_write_mode(v->file), GPUBP_ERR_WRONG_MODE,
                        "'%s': block queries need a file open for reading", v->name);
    if (v->file->mode == GPUBP_MODE_READ) {
        size_t n;
        return gbp_rvar_steps(v, &v->sel, vs, &n);
    }
    GBP_RETURN_ERROR_IF(step >= v->rv->nsteps, GPUBP_ERR_INVALID_STEP,
                        "'%s': step %zu does not exist (the variable has %zu steps)", v->name, step,
                        v->rv->nsteps);
    *vs = step;
    return GPUBP_OK;
}

/* ---- selections and gets -------------------------------------------------------------------- */

/* The file-order box a get reads at var-step vs: start/count in the variable's coordinates
 * (global: the shape; local array: the block; local value: the block list). */
int gbp_rvar_box(const gpubp_variable *v, const gbp_sel *s, size_t vs, int rev, size_t *start,
                   size_t *count)
{
    size_t nd = v->sel.ndims, shape[GBP_MAX_DIMS];
    GBP_FORWARD_IF_ERROR(gbp_rvar_file_shape(v, s, vs, shape));
    if (s->has_box && v->kind == GPUBP_SHAPE_JOINED_ARRAY && v->rv->steps[vs].nblocks) {
        /* a BP5 joined array reports its last step's shape in every step (ADIOS2 does too); a
         * box may cover what this step's own blocks hold, which is more after an append by
         * fewer writers (their blocks carry the step's own joined extent) */
        const gbp_block *blocks = NULL;
        GBP_FORWARD_IF_ERROR(gbp_rvar_blocks(v, vs, &blocks));
        const uint64_t *own = GBP_SHAPE(&blocks[v->rv->steps[vs].nblocks - 1]);
        for (size_t i = 0; i < nd; i++)
            if (own[i] > shape[i]) shape[i] = (size_t)own[i];
    }
    if (s->has_box) {
        memcpy(start, s->start, nd * sizeof *start);
        memcpy(count, s->count, nd * sizeof *count);
        if (rev) {
            gbp_reverse(start, nd);
            gbp_reverse(count, nd);
        }
    } else if (s->has_block && (v->kind == GPUBP_SHAPE_GLOBAL_ARRAY ||
                                v->kind == GPUBP_SHAPE_JOINED_ARRAY)) {
        const gbp_block *b = NULL;
        GBP_FORWARD_IF_ERROR(gbp_rvar_select_block(v, s, vs, &b));
        for (size_t i = 0; i < nd; i++) {
            start[i] = (size_t)GBP_START(b)[i];
            count[i] = (size_t)GBP_COUNT(b)[i];
        }
        /* the block's own box: a BP5 joined array's random-access shape is its last step's
         * (ADIOS2's too), which an append by fewer writers makes smaller than earlier steps' */
        if (v->kind == GPUBP_SHAPE_JOINED_ARRAY) return GPUBP_OK;
    } else if (s->has_block && v->kind == GPUBP_SHAPE_LOCAL_VALUE) {
        /* a local value's block: its one value (ADIOS2: SetBlockSelection) */
        const gbp_block *b = NULL;
        GBP_FORWARD_IF_ERROR(gbp_rvar_select_block(v, s, vs, &b));
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
int gbp_rvar_step_bytes(const gpubp_variable *v, const gbp_sel *s, size_t vs, int rev, size_t *bytes)
{
    size_t start[GBP_MAX_DIMS], count[GBP_MAX_DIMS], elems = gbp_rvar_esize(v);
    size_t nd = v->sel.ndims;
    if (v->type == GPUBP_TYPE_STRING) {
        /* strings: each selected value and its NUL, one after the other */
        const gbp_block *blocks = NULL;
        GBP_FORWARD_IF_ERROR(gbp_rvar_blocks(v, vs, &blocks));
        size_t total = 0, lo = 0, hi = 1;
        if (v->kind == GPUBP_SHAPE_GLOBAL_VALUE) {
            const gbp_block *b = NULL;
            GBP_FORWARD_IF_ERROR(gbp_rvar_select_block(v, s, vs, &b));
            lo = (size_t)(b - blocks);
            hi = lo + 1;
        } else {
            GBP_FORWARD_IF_ERROR(gbp_rvar_box(v, s, vs, rev, start, count));
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
    GBP_FORWARD_IF_ERROR(gbp_rvar_box(v, s, vs, rev, start, count));
    const size_t *c = s->mem_ndims ? s->mem_count : count;
    int ok = 1;
    for (size_t i = 0; i < nd; i++) ok = ok && gbp_mul_ok(elems, c[i], &elems);
    GBP_RETURN_ERROR_IF(!ok, GPUBP_ERR_INVALID_SELECTION,
                        "'%s': the selection's size overflows", v->name);
    *bytes = elems;
    return GPUBP_OK;
}

int gbp_rvar_check_mem_sel(const gpubp_variable *v, const gbp_sel *s, int rev, const size_t *count)
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

int gbp_rvar_block_operator(const gpubp_variable *v, const gbp_block *b, char *name, size_t cap)
{
    gpubp_file *f = v->file;
    const char *meta = b->op ? b->op->name : "";
    /* BP5 metadata does not name the operator ("bp5"), nor BP4's a plugin's: the buffer does */
    if (strcmp(meta, "bp5") != 0 && strcmp(meta, "plugin") != 0) {
        GBP_RETURN_ERROR_IF(strlen(meta) >= cap, GPUBP_ERR_INVALID_ARG,
                            "'%s': the operator's name '%s' needs %zu bytes, %zu given", v->name,
                            meta, strlen(meta) + 1, cap);
        memcpy(name, meta, strlen(meta) + 1);
        return GPUBP_OK;
    }
    size_t n = b->op->size < 4 ? (size_t)b->op->size : 4;
    uint8_t head[4], *buf = head;
    int fd = -1, rc = f->rd.remote ? GPUBP_OK : gbp_dataset_data_fd(f, b->subfile, &fd);
    if (rc == GPUBP_OK) rc = gbp_block_check_span(f, v->name, b, fd, b->op->size);
    if (rc == GPUBP_OK && n) rc = gbp_dataset_pread(f, b->subfile, fd, head, n, b->payload_offset);
    if (rc == GPUBP_OK && n == 4 && head[0] == 53 && b->op->size > 4) { /* a plugin's header */
        n = b->op->size < BP5_OP_NAME_MAX_HEADER ? (size_t)b->op->size : BP5_OP_NAME_MAX_HEADER;
        buf = gbp_malloc(n);
        rc = buf ? gbp_dataset_pread(f, b->subfile, fd, buf, n, b->payload_offset) : gbp_nomem();
    }
    if (rc == GPUBP_OK && (rc = bp5_op_name(buf, n, name, cap)) != GPUBP_OK)
        rc = gbp_block_name_error(rc, f, v->name, b);
    if (buf != head) gbp_free(buf);
    return rc;
}
