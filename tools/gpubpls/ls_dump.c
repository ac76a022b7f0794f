/*
 * gpubpls: statistics, block listings and data dumps (bpls's readVar, readVarBlock, print_decomp);
 * the shapes and blocks they query are in ls_shape.c.
 *
 * Everything goes through the public API. In random-access mode a variable's step selection
 * persists between calls, so every read and every per-step query sets it first
 * (ls_select_steps); in -t mode (GPUBP_MODE_READ) the current step is implied.
 *
 * Dumps read in pieces of at most LS_READ_BYTES, cut along the slowest dimensions exactly as bpls
 * cuts them, and print as one stream: a line of values may span two reads.
 */
#include "gpubpls/ls_dump.h"
#include "gpubpls/ls_print.h"
#include "gpubpls/ls_shape.h"
#include "gpubpls/ls_steps.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

/* ---- reading -------------------------------------------------------------------------------- */

/* A piece of data read for printing: numbers in `data`, strings as an array of pointers. */
typedef struct piece {
    void *data;
    char **strings;
    size_t nstrings;
} piece;

static void piece_free(piece *p)
{
    for (size_t i = 0; i < p->nstrings; i++)
        free(p->strings[i]);
    free(p->strings);
    free(p->data);
    memset(p, 0, sizeof *p);
}

/* Reads v with its current selections into p (numbers) or appends one string to p. */
static int get_into(ls_ctx *c, const ls_var *v, piece *p, size_t expect)
{
    size_t bytes;
    int rc = gpubp_selection_size(v->v, &bytes);
    if (rc < 0)
        return ls_lib_error(c, rc, "sizing a read of", v->name);
    if (v->type != GPUBP_TYPE_STRING && bytes != expect * v->esize) {
        fprintf(stderr, "gpubpls: error: a read of %s needs %zu bytes, %zu expected\n", v->name,
                bytes, expect * v->esize);
        return LS_FAIL;
    }
    /* Zeroed: a selection no block covers is left untouched by a read, and bpls prints 0 there. */
    void *buf = calloc(1, bytes ? bytes : 1);
    if (!buf)
        return ls_nomem();
    rc = gpubp_get(c->f, v->v, buf, GPUBP_SYNC);
    const char *expr = NULL;
    if (rc == GPUBP_ERR_NOT_FOUND && gpubp_variable_expression(v->v, &expr) == GPUBP_OK && expr) {
        /* a derived variable written without data: bpls (ADIOS2 built without derived
         * variables, its default) reads nothing into its zeroed buffer and prints zeros */
        rc = GPUBP_OK;
    } else if (rc == GPUBP_ERR_NOT_FOUND && c->bp5) {
        /* a BP5 variable written as statistics only: ADIOS2 throws, bpls reports it and stops */
        free(buf);
        fflush(c->out);
        fputs("\nbpls caught an exception\nNo data exists for this variable\n", stdout);
        return LS_ABORT;
    }
    if (rc < 0) {
        free(buf);
        return ls_lib_error(c, rc, "reading", v->name);
    }
    if (v->type != GPUBP_TYPE_STRING) {
        p->data = buf;
        return LS_OK;
    }
    ((char *)buf)[bytes ? bytes - 1 : 0] = '\0';
    char **s = realloc(p->strings, (p->nstrings + 1) * sizeof *s);
    if (!s) {
        free(buf);
        return ls_nomem();
    }
    p->strings = s;
    p->strings[p->nstrings++] = buf;
    return LS_OK;
}

/* The value of block b of a single value (global or local) at step. */
static int value_of_block(ls_ctx *c, const ls_var *v, size_t step, size_t b, piece *p)
{
    if (v->type == GPUBP_TYPE_STRING) {
        int rc = ls_select_steps(c, v, step, 1);
        if (rc == LS_OK && (rc = gpubp_set_block_selection(v->v, b)) < 0)
            return ls_lib_error(c, rc, "selecting a block of", v->name);
        return rc == LS_OK ? get_into(c, v, p, 1) : rc;
    }
    size_t start[1], count[1];
    p->data = malloc(v->esize);
    if (!p->data)
        return ls_nomem();
    return ls_block_info(c, v, step, b, start, count, p->data, NULL);
}

static const void *piece_ptr(const piece *p)
{
    return p->strings ? (const void *)p->strings : p->data;
}

int ls_print_block_value(ls_ctx *c, const ls_var *v, size_t step, size_t b, bool allowformat)
{
    piece p = {0};
    int rc = value_of_block(c, v, step, b, &p);
    if (rc == LS_OK)
        ls_print_value(c, v->type, piece_ptr(&p), 0, allowformat);
    piece_free(&p);
    return rc;
}

/* The box (s, n) of steps s0 .. s0 + ns - 1 into p; with shape, clipped to it: what lies past
 * it reads as zeros (ADIOS2's BP5 reader does not check a box against the shape). */
static int read_box(ls_ctx *c, const ls_var *v, uint64_t s0, uint64_t ns, const uint64_t *s,
                    const uint64_t *n, uint64_t nelems, const size_t *shape, piece *p)
{
    int rc;
    bool clipped = false, clip = shape != NULL;
    if (v->ndims > 0) {
        size_t start[LS_MAX_DIMS], count[LS_MAX_DIMS], mstart[LS_MAX_DIMS];
        for (size_t k = 0; k < v->ndims; k++) {
            start[k] = (size_t)s[k];
            count[k] = (size_t)n[k];
            mstart[k] = 0;
            if (clip && start[k] >= shape[k]) { /* nothing of the piece is inside: zeros */
                p->data = calloc(1, nelems * v->esize + 1);
                return p->data ? LS_OK : ls_nomem();
            }
            if (clip && count[k] > shape[k] - start[k]) {
                count[k] = shape[k] - start[k];
                clipped = true;
            }
        }
        rc = gpubp_set_selection(v->v, v->ndims, start, count);
        if (rc < 0)
            return ls_lib_error(c, rc, "selecting a box of", v->name);
        /* the part inside the shape lands at the start of the piece's (zeroed) buffer */
        size_t mcount[LS_MAX_DIMS];
        for (size_t k = 0; k < v->ndims; k++)
            mcount[k] = (size_t)n[k];
        if (clipped && (rc = gpubp_set_memory_selection(v->v, v->ndims, mstart, mcount)) < 0)
            return ls_lib_error(c, rc, "selecting a box of", v->name);
    }
    if ((rc = ls_select_steps(c, v, (size_t)s0, (size_t)ns)) == LS_OK)
        rc = get_into(c, v, p, (size_t)nelems);
    if (clipped) {
        int crc = gpubp_set_memory_selection(v->v, 0, NULL, NULL);
        if (crc < 0 && rc == LS_OK)
            rc = ls_lib_error(c, crc, "clearing the memory selection of", v->name);
    }
    return rc;
}

/* Reads steps [s0, s0 + ns) and elements [s, s + n) of a global value or array. With clip (BP5
 * dumps), elements outside the shape of step s0 read as 0, as ADIOS2's BP5 reader leaves them;
 * a joined array's each step outside the extent of that step's blocks. */
static int read_piece(ls_ctx *c, const ls_var *v, uint64_t s0, uint64_t ns, const uint64_t *s,
                      const uint64_t *n, uint64_t nelems, piece *p, bool clip)
{
    int rc;
    if (v->kind == GPUBP_SHAPE_LOCAL_VALUE && v->type == GPUBP_TYPE_STRING) {
        for (uint64_t st = s0; st < s0 + ns; st++)
            for (uint64_t b = s[0]; b < s[0] + n[0]; b++)
                if ((rc = value_of_block(c, v, (size_t)st, (size_t)b, p)) != LS_OK)
                    return rc;
        return LS_OK;
    }
    if (v->kind == GPUBP_SHAPE_LOCAL_VALUE) {
        p->data = calloc(1, nelems * v->esize + 1);
        if (!p->data)
            return ls_nomem();
        size_t k = 0;
        for (uint64_t st = s0; st < s0 + ns; st++) {
            size_t nb = SIZE_MAX;
            if (clip && (rc = ls_nblocks_at(c, v, (size_t)st, &nb)) != LS_OK)
                return rc;
            for (uint64_t b = s[0]; b < s[0] + n[0]; b++, k++) {
                size_t bs[1], bc[1];
                if (b >= nb)
                    continue; /* past the step's blocks: 0 */
                rc = ls_block_info(c, v, (size_t)st, (size_t)b, bs, bc,
                                   (char *)p->data + k * v->esize, NULL);
                if (rc != LS_OK)
                    return rc;
            }
        }
        return LS_OK;
    }
    if (v->type == GPUBP_TYPE_STRING) {
        for (uint64_t st = s0; st < s0 + ns; st++) {
            if ((rc = ls_select_steps(c, v, (size_t)st, 1)) != LS_OK ||
                (rc = get_into(c, v, p, 1)) != LS_OK)
                return rc;
        }
        return LS_OK;
    }
    if (!clip || v->ndims == 0)
        return read_box(c, v, s0, ns, s, n, nelems, NULL, p);
    size_t shape[LS_MAX_DIMS];
    if (v->kind != GPUBP_SHAPE_JOINED_ARRAY) {
        if ((rc = ls_var_shape(c, v, (size_t)s0, shape)) != LS_OK)
            return rc;
        return read_box(c, v, s0, ns, s, n, nelems, shape, p);
    }
    /* BP5 joined array: the shape ADIOS2 reports is one step's, but its reader fills each step's
     * part of a box from that step's own blocks, wherever they reach (zeros past them): each
     * step is clipped to the extent of its blocks */
    uint64_t slab = nelems / ns;
    if (!(p->data = calloc(1, nelems * v->esize + 1)))
        return ls_nomem();
    for (uint64_t i = 0; i < ns; i++) {
        piece q = {0};
        if ((rc = ls_joined_extent(c, v, (size_t)(s0 + i), shape)) == LS_OK)
            rc = read_box(c, v, s0 + i, 1, s, n, slab, shape, &q);
        if (rc == LS_OK)
            memcpy((char *)p->data + i * slab * v->esize, q.data, slab * v->esize);
        piece_free(&q);
        if (rc != LS_OK)
            return rc;
    }
    return LS_OK;
}

/* bpls's read strategy: whole fastest dimensions, as many of them as fit in LS_READ_BYTES. */
static void read_strategy(const ls_var *v, int tdims, const uint64_t *count, uint64_t nelems,
                          uint64_t *readn)
{
    uint64_t esize = v->esize ? v->esize : 32;
    uint64_t maxreadn = LS_READ_BYTES / esize;
    if (nelems < maxreadn)
        maxreadn = nelems;
    uint64_t sum = 1;
    for (int i = tdims - 1; i >= 0; i--) {
        if (sum >= maxreadn) {
            readn[i] = 1;
        } else {
            readn[i] = maxreadn / sum;
            if (readn[i] > count[i])
                readn[i] = count[i];
        }
        sum *= count[i];
    }
}

/* Moves the piece (s, n) to the next one in row-major order of the selection (st, ct). */
static void next_piece(int tdims, const uint64_t *st, const uint64_t *ct, const uint64_t *readn,
                       uint64_t *s, uint64_t *n)
{
    bool incdim = true;
    for (int j = tdims - 1; j >= 0 && incdim; j--) {
        if (s[j] + n[j] == st[j] + ct[j]) {
            s[j] = st[j];
            n[j] = readn[j];
        } else {
            s[j] += readn[j];
            if (s[j] + n[j] > st[j] + ct[j])
                n[j] = st[j] + ct[j] - s[j];
            incdim = false;
        }
    }
}

/* "slice (a:b, c:d)" when the selection is smaller than the variable. ndim counts the dims
 * bpls takes from the variable's shape (0 for local arrays, so their blocks never say it). */
static void print_slice_info(ls_ctx *c, size_t ndim, bool timed, size_t nsteps,
                             const uint64_t *s, const uint64_t *n, const size_t *dims)
{
    int tidx = timed ? 1 : 0;
    bool slice = timed && n[0] < nsteps;
    for (size_t i = 0; i < ndim; i++)
        if (n[i + tidx] < dims[i])
            slice = true;
    if (!slice)
        return;
    fprintf(c->out, "%c   slice (%" PRIu64 ":%" PRIu64, c->commentchar, s[0], s[0] + n[0] - 1);
    for (size_t i = 1; i < ndim + tidx; i++)
        fprintf(c->out, ", %" PRIu64 ":%" PRIu64, s[i], s[i] + n[i] - 1);
    fputs(")\n", c->out);
}

/* Reads the selection (st, ct) piece by piece and prints it. */
static int dump_selection(ls_ctx *c, const ls_var *v, int tdims, int tidx, uint64_t step,
                          const uint64_t *st, const uint64_t *ct, uint64_t nelems,
                          const size_t *offset, size_t block)
{
    uint64_t readn[LS_MAX_DIMS], s[LS_MAX_DIMS], n[LS_MAX_DIMS];
    int ndigits[LS_MAX_DIMS];
    read_strategy(v, tdims, ct, nelems, readn);
    for (int j = 0; j < tdims; j++) {
        s[j] = st[j];
        n[j] = readn[j];
        ndigits[j] = ls_ndigits(st[j] + ct[j] - 1);
    }
    for (uint64_t done = 0; done < nelems;) {
        uint64_t piecen = 1, box_s[LS_MAX_DIMS];
        for (int j = 0; j < tdims; j++)
            piecen *= n[j];
        for (int j = tidx; j < tdims; j++)
            box_s[j - tidx] = s[j] + (offset ? offset[j - tidx] : 0);
        piece p = {0};
        int rc;
        if (block != SIZE_MAX && v->kind == GPUBP_SHAPE_LOCAL_VALUE) {
            /* BP4: bpls reads a local value's block without a selection (ADIOS2 marks the
             * variable a single value), which gets the step's first value: it prints that for
             * every block (BP5 selects the block) */
            rc = value_of_block(c, v, (size_t)step, c->bp5 ? block : 0, &p);
        } else if (block != SIZE_MAX && v->kind == GPUBP_SHAPE_LOCAL_ARRAY) {
            rc = gpubp_set_block_selection(v->v, block);
            if (rc < 0)
                rc = ls_lib_error(c, rc, "selecting a block of", v->name);
            else
                rc = read_piece(c, v, step, 1, box_s, n + tidx, piecen, &p, false);
            c->sel_set = true;
            memcpy(c->sel_count, n + tidx, v->ndims * sizeof *c->sel_count);
        } else {
            rc = read_piece(c, v, tidx ? s[0] : step, tidx ? n[0] : 1, box_s, n + tidx, piecen,
                            &p, c->bp5 && !offset);
        }
        if (rc == LS_OK)
            ls_print_dataset(c, piece_ptr(&p), v->type, s, n, tdims, ndigits);
        piece_free(&p);
        if (rc != LS_OK)
            return rc;
        done += piecen;
        next_piece(tdims, st, ct, readn, s, n);
    }
    ls_print_endline(c);
    return LS_OK;
}

/* Start (python-style negative) and count (-1 = to the end) of dimension j against size dim. */
static void resolve_spec(const ls_ctx *c, int j, uint64_t dim, uint64_t *st, uint64_t *ct)
{
    int64_t is = j < LS_MAX_DIMS ? c->opt.istart[j] : 0;
    int64_t ic = j < LS_MAX_DIMS ? c->opt.icount[j] : -1;
    *st = is < 0 ? dim + (uint64_t)is : (uint64_t)is;
    *ct = ic < 0 ? dim + (uint64_t)ic + 1 - *st : (uint64_t)ic;
}

static int step_range_error(uint64_t start, uint64_t count, size_t nsteps)
{
    printf("ERROR: The sum of start step (%" PRIu64 ") and step count (%" PRIu64
           ") is larger than the number of steps available (%d)\n",
           start, count, (int)nsteps);
    return LS_STOP;
}

int ls_read_var(ls_ctx *c, const ls_var *v)
{
    uint64_t st[LS_MAX_DIMS] = {0}, ct[LS_MAX_DIMS] = {0};
    size_t shape[LS_MAX_DIMS] = {0};
    const int ndim = (int)v->ndims;
    const size_t nsteps = v->nsteps;
    int tidx = 0;
    uint64_t step0 = 0, nelems = 1;
    int rc;
    bool past = false; /* the step selection passes bpls's check only by wrapping */

    if (v->ndims >= LS_MAX_DIMS) /* checked at open_var; repeated for the compiler's sake */
        return LS_FAIL;
    if (c->random_access && nsteps > 1) {
        /* the selection starts with the step dimension */
        resolve_spec(c, 0, nsteps, &st[0], &ct[0]);
        /* bpls adds start and count in 64 bits: a start past the end with the count -1 wraps to
         * the step count and passes its check, stopping at a changing shape's message below (as
         * bpls does) or going on to read past the end (bpls: an exception; here the message) */
        if (st[0] > nsteps || ct[0] > nsteps - st[0]) {
            past = st[0] + ct[0] <= nsteps;
            if (!past)
                return step_range_error(st[0], ct[0], nsteps);
        }
        step0 = st[0];
        nelems *= ct[0];
        tidx = 1;
    }
    const int tdims = ndim + tidx;

    /* a step selection starting at the end (empty, which bpls accepts, or one that passes its
     * check by wrapping) takes the last step's shape, and on BP5 the first step's (ADIOS2's BP5
     * reader maps a relative step past the end through its table's end: what bpls printed for
     * every such selection of 600 random files, 2026-12-07); a local value over several steps
     * takes its one shape, the last step's block count, and each step reads that many of its
     * own blocks (bpls does so) */
    if (tidx && v->kind == GPUBP_SHAPE_LOCAL_VALUE)
        rc = ls_global_signature(c, v, shape);
    else
        rc = ls_var_shape(c, v, step0 < nsteps ? (size_t)step0 : c->bp5 ? 0 : nsteps - 1, shape);
    if (rc != LS_OK)
        return rc;

    if (tidx && ct[0] > 1 && ndim > 0) {
        size_t sig[LS_MAX_DIMS];
        if ((rc = ls_global_signature(c, v, sig)) != LS_OK)
            return rc;
        bool changing = false;
        for (int j = 0; j < ndim; j++)
            changing |= sig[j] == 0;
        if (changing) {
            printf("ERROR: This variable has a changing shape over time, "
                   "so bpls cannot dump it as a global array. \n");
            printf("You can dump a single step with\n    bpls -d %s -s \"T", v->name);
            for (int j = 0; j < ndim; j++)
                printf(",0");
            printf("\" -c \"1");
            for (int j = 0; j < ndim; j++)
                printf(",-1");
            printf("\"\nwhere T is a number between 0 and %d,\n", (int)nsteps - 1);
            printf("or dump each block separately with \n    bpls -dD %s\n", v->name);
            return LS_STOP;
        }
    }
    if (past)
        return step_range_error(st[0], ct[0], nsteps);

    int bad = -1;
    for (int j = 0; j < ndim; j++) {
        resolve_spec(c, j + tidx, shape[j], &st[j + tidx], &ct[j + tidx]);
        uint64_t s = st[j + tidx], n = ct[j + tidx];
        bool inside = n == 0 ? s <= shape[j] : s < shape[j] && n <= shape[j] - s;
        /* BP5: a box past the end of the shape reads zeros there (ADIOS2's BP5 reader does not
         * check it); bpls's dump goes on */
        if (c->bp5 && s <= UINT32_MAX && n <= UINT32_MAX)
            inside = true;
        if (!inside && bad < 0)
            bad = j;
        nelems *= ct[j + tidx];
    }

    print_slice_info(c, v->ndims, tidx == 1, nsteps, st, ct, shape);

    if (bad >= 0) {
        fflush(c->out);
        fprintf(stderr,
                "gpubpls: error: the selection start %" PRId64 " count %" PRId64
                " is outside dimension %d (size %zu) of variable %s\n",
                (int64_t)st[bad + tidx], (int64_t)ct[bad + tidx], bad, shape[bad], v->name);
        return LS_FAIL;
    }
    if (nelems == 0) {
        ls_print_endline(c);
        return LS_OK;
    }
    return dump_selection(c, v, tdims, tidx, step0, st, ct, nelems, NULL, SIZE_MAX);
}

/* bpls's readVarBlock: the selection applies inside the block (count, and start for global
 * arrays), clipped to it; with several steps the first spec selects steps. */
static int read_block(ls_ctx *c, const ls_var *v, size_t step, size_t block, const size_t *count,
                      const size_t *start)
{
    uint64_t st[LS_MAX_DIMS] = {0}, ct[LS_MAX_DIMS] = {0};
    const int ndim = (int)v->ndims;
    int tidx = 0;
    uint64_t nelems = 1;

    if (v->nsteps > 1) {
        uint64_t s0, c0;
        resolve_spec(c, 0, v->nsteps, &s0, &c0);
        if (step < s0 || step >= s0 + c0)
            return LS_OK;
        tidx = 1;
    }
    bool out_of_bound = false;
    for (int j = 0; j < ndim; j++) {
        resolve_spec(c, j + tidx, count[j], &st[j], &ct[j]);
        if (st[j] > count[j])
            out_of_bound = true;
        else if (ct[j] > count[j] - st[j])
            ct[j] = count[j] - st[j];
        nelems *= ct[j];
    }
    size_t shape_dims = v->kind == GPUBP_SHAPE_LOCAL_ARRAY ? 0 : v->ndims;
    print_slice_info(c, shape_dims, false, v->nsteps, st, ct, count);
    if (out_of_bound)
        return LS_OK;
    if (nelems == 0) {
        ls_print_endline(c);
        return LS_OK;
    }
    bool global = v->kind == GPUBP_SHAPE_GLOBAL_ARRAY || v->kind == GPUBP_SHAPE_JOINED_ARRAY;
    return dump_selection(c, v, ndim, 0, step, st, ct, nelems, global ? start : NULL,
                          global ? SIZE_MAX : block);
}

/* -1, 0 or 1 as a is less than, equal to or greater than b (complex numbers by modulus, as
 * ADIOS2 compares them); *ok is false for a type that has no order here (strings, unknown). */
static int compare(gpubp_type t, const void *a, const void *b, bool *ok)
{
    *ok = true;
    switch (t) {
#define CMP(T)                                                                                     \
    {                                                                                              \
        T p, q;                                                                                    \
        memcpy(&p, a, sizeof p);                                                                   \
        memcpy(&q, b, sizeof q);                                                                   \
        return p < q ? -1 : (q < p ? 1 : 0);                                                       \
    }
#define CMPC(T)                                                                                    \
    {                                                                                              \
        T p[2], q[2];                                                                              \
        memcpy(p, a, sizeof p);                                                                    \
        memcpy(q, b, sizeof q);                                                                    \
        T np = p[0] * p[0] + p[1] * p[1], nq = q[0] * q[0] + q[1] * q[1];                          \
        return np < nq ? -1 : (nq < np ? 1 : 0);                                                   \
    }
    case GPUBP_TYPE_INT8:
    case GPUBP_TYPE_CHAR:
        CMP(int8_t)
    case GPUBP_TYPE_INT16:
        CMP(int16_t)
    case GPUBP_TYPE_INT32:
        CMP(int32_t)
    case GPUBP_TYPE_INT64:
        CMP(int64_t)
    case GPUBP_TYPE_UINT8:
        CMP(uint8_t)
    case GPUBP_TYPE_UINT16:
        CMP(uint16_t)
    case GPUBP_TYPE_UINT32:
        CMP(uint32_t)
    case GPUBP_TYPE_UINT64:
        CMP(uint64_t)
    case GPUBP_TYPE_FLOAT:
        CMP(float)
    case GPUBP_TYPE_DOUBLE:
        CMP(double)
    case GPUBP_TYPE_FLOAT_COMPLEX:
        CMPC(float)
    case GPUBP_TYPE_DOUBLE_COMPLEX:
        CMPC(double)
#undef CMP
#undef CMPC
    default:
        *ok = false;
        return 0;
    }
}

/* A block's min above its max: bpls prints "N/A / N/A" for it. Never for complex numbers. */
static bool greater(gpubp_type t, const void *a, const void *b)
{
    bool ok;
    if (t == GPUBP_TYPE_FLOAT_COMPLEX || t == GPUBP_TYPE_DOUBLE_COMPLEX)
        return false;
    return compare(t, a, b, &ok) > 0 && ok;
}

/* Whether block b of v at step s counts in a BP5 min/max: ADIOS2's BP5 reader takes, in every
 * step, only the writers below the last step's writer count (c->bp5_last_writers, set when the
 * count changes: an append with fewer writers drops the others' blocks of earlier steps). */
static int bp5_counts(ls_ctx *c, const ls_var *v, size_t s, size_t b, bool *counts)
{
    *counts = true;
    if (!c->bp5_last_writers)
        return LS_OK;
    size_t w;
    int rc = gpubp_variable_block_writer(v->v, s, b, &w);
    if (rc < 0)
        return ls_lib_error(c, rc, "reading the writer of a block of", v->name);
    *counts = w < c->bp5_last_writers;
    return LS_OK;
}

/* BP5 min/max as bpls prints them where the library's (every block's) is not it: a global value
 * takes each step's first counted block (the first writer's value; the library folds every
 * block), and with a changing writer count only the counted blocks fold (bp5_counts), both of
 * each block's values. Leaves min/max as they are when neither applies. */
static int bp5_fold(ls_ctx *c, const ls_var *v, unsigned char *min, unsigned char *max)
{
    size_t start[LS_MAX_DIMS], count[LS_MAX_DIMS];
    unsigned char bmin[16], bmax[16];
    bool values = v->kind == GPUBP_SHAPE_GLOBAL_VALUE, multi = false, first = true, ok;
    int rc;
    for (size_t s = 0; s < v->nsteps && values && !c->bp5_last_writers && !multi; s++) {
        size_t n;
        if ((rc = ls_nblocks_at(c, v, s, &n)) != LS_OK)
            return rc;
        multi = n > 1;
    }
    if (!c->bp5_last_writers && !multi)
        return LS_OK;
    for (size_t s = 0; s < v->nsteps; s++) {
        size_t n;
        if ((rc = ls_nblocks_at(c, v, s, &n)) != LS_OK)
            return rc;
        for (size_t b = 0; b < n; b++) {
            bool counts;
            if ((rc = bp5_counts(c, v, s, b, &counts)) != LS_OK)
                return rc;
            if (!counts)
                continue;
            if ((rc = ls_block_info(c, v, s, b, start, count, bmin, bmax)) != LS_OK)
                return rc;
            const unsigned char *lo = bmin, *hi = bmax;
            if (compare(v->type, bmin, bmax, &ok) > 0) { /* a block of no elements */
                lo = bmax;
                hi = bmin;
            }
            if (first || compare(v->type, lo, min, &ok) < 0)
                memcpy(min, lo, v->esize);
            if (first || compare(v->type, hi, max, &ok) > 0)
                memcpy(max, hi, v->esize);
            first = false;
            if (values)
                break; /* one value a step */
        }
    }
    return LS_OK;
}

bool ls_type_has_minmax(const ls_ctx *c, gpubp_type t)
{
    if (t == GPUBP_TYPE_STRING || t == GPUBP_TYPE_STRING_ARRAY)
        return false;
    return !c->bp5 || (t != GPUBP_TYPE_CHAR && t != GPUBP_TYPE_FLOAT_COMPLEX &&
                       t != GPUBP_TYPE_DOUBLE_COMPLEX);
}

int ls_var_minmax(ls_ctx *c, const ls_var *v, void *min, void *max, bool *none)
{
    int rc = ls_select_steps(c, v, 0, v->nsteps);
    if (rc != LS_OK)
        return rc;
    memset(min, 0, 16);
    memset(max, 0, 16);
    *none = false;
    rc = gpubp_variable_minmax(v->v, min, max);
    if (rc == GPUBP_ERR_NOT_FOUND) { /* no block has statistics: every block counts as 0 / 0 */
        *none = true;
        return LS_OK;
    }
    if (rc < 0)
        return ls_lib_error(c, rc, "reading min/max of", v->name);
    if (c->bp5) /* ADIOS2's BP5 reader skips blocks without statistics */
        return bp5_fold(c, v, min, max);
    /* The library skips blocks without statistics where ADIOS2's BP4 reader counts each as
     * 0 / 0: with such blocks, 0 joins the range (the index knows, no block is read). */
    int missing = 0;
    if ((rc = gpubp_variable_minmax_missing(v->v, &missing)) < 0)
        return ls_lib_error(c, rc, "reading min/max of", v->name);
    unsigned char zero[16] = {0};
    bool ok;
    if (missing && compare(v->type, zero, min, &ok) < 0)
        memcpy(min, zero, v->esize);
    if (missing && compare(v->type, zero, max, &ok) > 0)
        memcpy(max, zero, v->esize);
    return LS_OK;
}

/* One "block j: [a:b, c:d]" line (with min/max under -l) and, when dumping, the block's data. */
static int print_block_line(ls_ctx *c, const ls_var *v, size_t step, size_t j, int nd_blocks,
                            const int *nd_dims, bool nostats)
{
    size_t start[LS_MAX_DIMS], count[LS_MAX_DIMS];
    unsigned char min[16], max[16];
    bool stats = c->opt.longopt && v->type != GPUBP_TYPE_STRING;
    if (c->bp5 && v->type == GPUBP_TYPE_CHAR)
        stats = false; /* ADIOS2's BP5 reader keeps none for char */
    int rc = ls_block_info(c, v, step, j, start, count, stats ? min : NULL, stats ? max : NULL);
    if (rc != LS_OK)
        return rc;
    bool local = v->kind == GPUBP_SHAPE_LOCAL_ARRAY;
    fprintf(c->out, "%c         block %*zu: [", c->commentchar, nd_blocks, j);
    for (size_t k = 0; k < v->ndims; k++) {
        if (count[k] == 0)
            fprintf(c->out, "%-*s", 2 * nd_dims[k] + 1, "null");
        else if (local)
            fprintf(c->out, "0:%*zu", nd_dims[k], count[k] - 1);
        else
            fprintf(c->out, "%*zu:%*zu", nd_dims[k], start[k], nd_dims[k],
                    start[k] + count[k] - 1);
        if (k + 1 < v->ndims)
            fputs(", ", c->out);
    }
    fputc(']', c->out);
    if (c->opt.longopt && stats && c->bp5 && !nostats) {
        if (!ls_type_has_minmax(c, v->type)) { /* complex: bpls prints the zeroed union */
            memset(min, 0, sizeof min);
            memset(max, 0, sizeof max);
        }
        /* ADIOS2's BP5 reader feeds both of a block's values to a fresh min/max: a block of no
         * elements (min = the type's largest, max = its smallest) shows them swapped */
        bool ok;
        int swap = compare(v->type, min, max, &ok) > 0;
        fputs(" = ", c->out);
        ls_print_value(c, v->type, swap ? max : min, 0, false);
        fputs(" / ", c->out);
        ls_print_value(c, v->type, swap ? min : max, 0, false);
    } else if (c->opt.longopt && v->type == GPUBP_TYPE_STRING &&
               v->kind == GPUBP_SHAPE_LOCAL_VALUE) {
        /* bpls prints a string local value's block with its value as min and max (ADIOS2's BP5
         * reader keeps no value there: "(null)") */
        fputs(" = ", c->out);
        if (c->bp5) {
            fputs("\"(null)\" / \"(null)\"", c->out);
        } else {
            if ((rc = ls_print_block_value(c, v, step, j, false)) != LS_OK)
                return rc;
            fputs(" / ", c->out);
            if ((rc = ls_print_block_value(c, v, step, j, false)) != LS_OK)
                return rc;
        }
    } else if (c->opt.longopt) {
        if (!stats || nostats || greater(v->type, min, max)) {
            fputs("N/A / N/A", c->out);
        } else {
            fputs(" = ", c->out);
            ls_print_value(c, v->type, min, 0, false);
            fputs(" / ", c->out);
            ls_print_value(c, v->type, max, 0, false);
        }
    }
    fputc('\n', c->out);
    if (c->opt.dump)
        return read_block(c, v, step, j, count, start);
    return LS_OK;
}

/* Widths of the block bounds: from the variable's shape as bpls keeps it after opening (BP5: the
 * shape of its first step, which ADIOS2's BP5 reader defines the variable with). */
static int dims_digits(ls_ctx *c, const ls_var *v, int *nd_dims)
{
    size_t d[LS_MAX_DIMS];
    int rc = c->bp5 && c->random_access && v->kind != GPUBP_SHAPE_LOCAL_ARRAY
                 ? ls_var_shape(c, v, 0, d)
                 : ls_var_last_shape(c, v, d);
    if (rc == LS_OK && c->bp5 && c->random_access && v->kind == GPUBP_SHAPE_JOINED_ARRAY)
        rc = ls_joined_first_writer(c, v, d);
    if (rc != LS_OK)
        return rc;
    for (size_t k = 0; k < v->ndims; k++)
        nd_dims[k] = ls_ndigits((uint64_t)d[k] - 1);
    return LS_OK;
}

/* The values of single-value blocks, ncols to a line (bpls's -dD listing of scalars). */
static int print_values_of_step(ls_ctx *c, const ls_var *v, size_t step, size_t n, bool indexed,
                                int nd_blocks)
{
    int col = 0;
    int maxcols = indexed && v->type == GPUBP_TYPE_STRING ? 1 : c->opt.ncols;
    if (!indexed)
        fputs("               ", c->out);
    for (size_t j = 0; j < n; j++) {
        if (indexed && col == 0 && !c->opt.noindex)
            fprintf(c->out, "    (%*zu)    ", nd_blocks, j);
        int rc = ls_print_block_value(c, v, step, j, true);
        if (rc != LS_OK)
            return rc;
        ++col;
        if (j + 1 < n) {
            if (col < maxcols) {
                fputc(' ', c->out);
            } else {
                fputs(indexed ? "\n" : "\n               ", c->out);
                col = 0;
            }
        }
    }
    fputc('\n', c->out);
    return LS_OK;
}

/* BP5 under -l: whether v was written without statistics (no block has any), so that each block
 * prints N/A / N/A (ADIOS2's BP5 reader); false otherwise. */
static int bp5_nostats(ls_ctx *c, const ls_var *v, bool *nostats)
{
    *nostats = false;
    if (!c->bp5 || !c->opt.longopt || !ls_type_has_minmax(c, v->type))
        return LS_OK;
    unsigned char min[16], max[16];
    return ls_var_minmax(c, v, min, max, nostats);
}

/* -t: the blocks of the current step, without step headers (bpls print_decomp_singlestep). */
static int print_decomp_singlestep(ls_ctx *c, const ls_var *v)
{
    size_t n;
    int rc = ls_nblocks_at(c, v, 0, &n);
    if (rc != LS_OK || n == 0)
        return rc;
    int nd_blocks = ls_ndigits((uint64_t)n - 1);
    if (v->kind == GPUBP_SHAPE_GLOBAL_VALUE)
        return c->opt.dump ? print_values_of_step(c, v, 0, n, true, nd_blocks) : LS_OK;
    int nd_dims[LS_MAX_DIMS];
    if ((rc = dims_digits(c, v, nd_dims)) != LS_OK)
        return rc;
    bool nostats;
    if ((rc = bp5_nostats(c, v, &nostats)) != LS_OK)
        return rc;
    for (size_t j = 0; j < n && rc == LS_OK; j++)
        rc = print_block_line(c, v, 0, j, nd_blocks, nd_dims, nostats);
    return rc;
}

int ls_print_decomp(ls_ctx *c, const ls_var *v)
{
    if (!c->random_access)
        return print_decomp_singlestep(c, v);
    if (v->nsteps == 0)
        return LS_OK;
    /* BP5: ADIOS2's BP5 reader numbers a variable's steps from 0 over the steps it appears in */
    int nd_steps = ls_ndigits(c->bp5 ? v->nsteps - 1 : ls_abs_step(c, v, v->nsteps - 1));
    int nd_dims[LS_MAX_DIMS];
    int rc = LS_OK;
    bool values = v->kind == GPUBP_SHAPE_GLOBAL_VALUE;
    c->sel_set = false;
    if (!values && (rc = dims_digits(c, v, nd_dims)) != LS_OK)
        return rc;
    bool nostats = false;
    if (!values && (rc = bp5_nostats(c, v, &nostats)) != LS_OK)
        return rc;

    for (size_t s = 0; s < v->nsteps && rc == LS_OK; s++) {
        size_t n;
        if ((rc = ls_nblocks_at(c, v, s, &n)) != LS_OK)
            return rc;
        fprintf(c->out, "%c       step %*zu: ", c->commentchar, nd_steps,
                c->bp5 ? s : ls_abs_step(c, v, s));
        if (!values) {
            fputc('\n', c->out);
            /* BP5: bpls takes each step's widths from the variable's count, which the last
             * piece read of a local array's block set (its first block's before any) */
            if (c->bp5 && c->sel_set && v->kind == GPUBP_SHAPE_LOCAL_ARRAY)
                for (size_t k = 0; k < v->ndims; k++)
                    nd_dims[k] = ls_ndigits(c->sel_count[k] - 1);
            int nd_blocks = ls_ndigits((uint64_t)n - 1);
            for (size_t j = 0; j < n && rc == LS_OK; j++)
                rc = print_block_line(c, v, s, j, nd_blocks, nd_dims, nostats);
            continue;
        }
        if (n == 1) {
            fputs(" = ", c->out);
            rc = ls_print_block_value(c, v, s, 0, true);
            fputc('\n', c->out);
        } else {
            fprintf(c->out, "%zu instances available\n", n);
        }
        if (rc == LS_OK && c->opt.dump)
            rc = print_values_of_step(c, v, s, n, false, 0);
    }
    return rc;
}
