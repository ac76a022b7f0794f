/* BP5's filling of the reader's index (format/index.h): per dataset step, every writer's metadata
 * block is decoded; each variable record becomes blocks that are summarized into the index (steps,
 * block counts, shapes, min/max), and attributes are kept. The blocks themselves are loaded on
 * demand by bp5_index_load, which decodes the step's md.0 block again for that one variable.
 *
 * What the index then presents is what ADIOS2's BP5 reader presents (§10): relative steps (a
 * variable's steps are the steps in which some writer wrote it), blocks in writer order, local
 * values as a 1-D array of the step's writer count (block w at {w}, its value kept in the block),
 * joined arrays with running offsets, flattened steps as one step, dimensions reversed for
 * column-major writers. */
#include "format/bp5_index.h"
#include "format/bp5_ffs.h"
#include "format/bp5_idx.h"
#include "format/bp5_meta.h"

void bp5_reader_init(bp5_reader *r, bp5_read_fn read, void *read_ctx)
{
    memset(r, 0, sizeof *r);
    bp5_idx_init(&r->idx);
    bp5_formats_init(&r->ft);
    r->read = read;
    r->read_ctx = read_ctx;
}

void bp5_reader_free(bp5_reader *r)
{
    if (!r) return;
    bp5_idx_free(&r->idx);
    bp5_formats_free(&r->ft);
    bp5_scratch_free(&r->scr);
    for (size_t i = 0; i < r->nunsup; i++) gbp_free(r->unsup[i].name);
    gbp_free(r->unsup);
    gbp_struct_def_free(r->new_sdef);
    gbp_free(r->mmd_buf);
    gbp_free(r->step_buf);
    memset(r, 0, sizeof *r);
}

const char *bp5_unsupported(const bp5_reader *r, const char *name)
{
    for (size_t i = 0; i < r->nunsup; i++)
        if (strcmp(r->unsup[i].name, name) == 0)
            return r->unsup[i].what == BP5_UNSUP_STRUCT ? r->unsup[i].why
                                                        : "a long double of 10 or 12 bytes (a "
                                                          "32-bit writer's)";
    return NULL;
}

/* Notes a variable that is listed by name only; why: for BP5_UNSUP_STRUCT (static). */
static int note_unsupported(bp5_reader *r, const char *name, int what, const char *why)
{
    if (bp5_unsupported(r, name)) return GPUBP_OK;
    GBP_FORWARD_IF_ERROR(gbp_grow((void **)&r->unsup, &r->cap_unsup, r->nunsup + 1, sizeof *r->unsup));
    r->unsup[r->nunsup].name = gbp_strdup(name);
    GBP_CHECK_ALLOC(r->unsup[r->nunsup].name);
    r->unsup[r->nunsup].why = why;
    r->unsup[r->nunsup++].what = what;
    return GPUBP_OK;
}

/* A variable that is listed by name only (a struct one whose layout cannot be presented too). */
static int not_presented(const bp5_reader *r, const bp5_var_field *f)
{
    return f->unsupported || (f->type == GPUBP_TYPE_STRUCT && bp5_unsupported(r, f->name));
}

static int same_struct(const gbp_struct_def *a, const gbp_struct_def *b)
{
    if (strcmp(a->name, b->name) != 0 || a->size != b->size || a->nfields != b->nfields) return 0;
    for (size_t i = 0; i < a->nfields; i++) {
        const gbp_struct_field *x = &a->fields[i], *y = &b->fields[i];
        if (strcmp(x->name, y->name) != 0 || x->type != y->type || x->offset != y->offset ||
            x->count != y->count)
            return 0;
    }
    return 1;
}

/* A struct array's layout from its description in mmd.0 (*d NULL: listed by name only, the
 * reason noted). A variable keeps one layout: a record under another description of different
 * content is damage. */
static int struct_layout(bp5_reader *r, const bp5_var_field *f, gbp_var *v, int *skip)
{
    *skip = 0;
    if (v && v->sdef && memcmp(v->sdef->id, f->sid, sizeof f->sid) == 0) return GPUBP_OK;
    const bp5_format *sf = bp5_formats_find(&r->ft, f->sid);
    gbp_struct_def *d = NULL;
    const char *why = "a struct variable whose description is not in mmd.0";
    if (sf) {
        GBP_FORWARD_IF_ERROR(bp5_struct_def(sf, f->esize, &d, &why));
    }
    if (v) { /* seen before under another id */
        int same = d && v->sdef && same_struct(d, v->sdef);
        gbp_struct_def_free(d);
        if (same) return GPUBP_OK;
        return gbp_error(GPUBP_ERR_FORMAT, 0, "%s: struct variable %s changes its layout in step "
                         "%zu (its block at offset %llu)", r->what, f->name, r->cur_s,
                         (unsigned long long)r->idx.steps[r->cur_s].md_pos);
    }
    if (!d) {
        *skip = 1;
        return note_unsupported(r, f->name, BP5_UNSUP_STRUCT, why);
    }
    r->new_sdef = d;
    return GPUBP_OK;
}

/* The blocks of one record, handed to emit one by one (dims in a local buffer). */
typedef int (*emit_fn)(bp5_reader *r, const gbp_block *b);

static int each_block(bp5_reader *r, uint64_t w, const bp5_var_field *f, const bp5_array_rec *a,
                      const bp5_value_rec *val, emit_fn emit, const char *what)
{
    uint64_t dims[3 * GBP_MAX_DIMS];
    gbp_block b;
    memset(&b, 0, sizeof b);
    b.dims = dims;
    b.step = r->cur_p + 1;
    b.vmd_offset = w; /* BP5's cookie: the writer's rank in the step */
    if (val) {
        memcpy(b.mm, val->bytes, 16);
        b.has_value = 1;
        if (val->str) {
            b.str = (char *)val->str;
            b.str_len = (uint32_t)val->str_len;
        }
        if (f->kind == GPUBP_SHAPE_LOCAL_VALUE && f->type != GPUBP_TYPE_STRING) {
            /* seen as {W}: writer w's value at {w} (§10.1) */
            b.ndims = 1;
            dims[0] = 1;
            dims[1] = r->cur_w;
            dims[2] = w;
        } else if (f->kind == GPUBP_SHAPE_LOCAL_VALUE) {
            b.ndims = 1;
            dims[0] = 1;
            dims[1] = GBP_LOCAL_VALUE_DIM;
            dims[2] = 0;
        }
        return emit(r, &b);
    }
    size_t D = (size_t)a->ndims;
    b.ndims = (uint8_t)D;
    uint64_t *count = dims, *shape = dims + D, *start = dims + 2 * D;
    uint64_t es = f->esize;
    gbp_op op;
    for (uint64_t i = 0; i < a->nblocks; i++) {
        uint64_t n = 1;
        for (size_t k = 0; k < D; k++) {
            count[k] = a->count[i * D + k];
            shape[k] = a->shape ? a->shape[k] : 0;
            start[k] = a->start && f->kind == GPUBP_SHAPE_GLOBAL_ARRAY ? a->start[i * D + k] : 0;
            n = count[k] && n > UINT64_MAX / count[k] ? UINT64_MAX : n * count[k];
        }
        b.has_minmax = a->minmax != NULL;
        memset(b.mm, 0, sizeof b.mm);
        if (a->minmax) {
            memcpy(b.mm, a->minmax + 2 * i * es, es);
            memcpy(b.mm + 16, a->minmax + (2 * i + 1) * es, es);
        }
        b.op = NULL;
        if (a->location[i] == BP5_NO_DATA) {
            b.subfile = 0;
            b.payload_offset = BP5_NO_DATA;
        } else {
            uint64_t sf, off;
            GBP_FORWARD_IF_ERROR(bp5_locate(&r->idx, r->cur_s, w, a->location[i], &sf, &off, what));
            b.subfile = (uint32_t)sf;
            b.payload_offset = off;
            if (a->stored) {
                memset(&op, 0, sizeof op);
                memcpy(op.name, BP5_OP_NAME, sizeof BP5_OP_NAME);
                op.raw_size = n > UINT64_MAX / es ? UINT64_MAX : n * es;
                op.size = a->stored[i];
                b.op = &op;
            }
        }
        GBP_FORWARD_IF_ERROR(emit(r, &b));
    }
    return GPUBP_OK;
}

/* ---- the pass over a step ------------------------------------------------------------------------ */

/* Folds a block into the index's summary of its (variable, step): shape, min/max. */
static int sum_block(bp5_reader *r, const gbp_block *b)
{
    gbp_index *ix = r->ix;
    GBP_FORWARD_IF_ERROR(gbp_index_summarize_block(ix, b));
    gbp_var *v = ix->cur;
    size_t es = gbp_type_size(v->type);
    if (b->has_minmax && v->has_mm && es) {
        /* ADIOS2 feeds both of a block's values to the running min/max (§13): a block of no
         * elements (min = the type's largest, max = its smallest) widens it */
        if (gbp_value_cmp(v->type, b->mm + 16, v->mm) < 0) memcpy(v->mm, b->mm + 16, es);
        if (gbp_value_cmp(v->type, b->mm, v->mm + 16) > 0) memcpy(v->mm + 16, b->mm, es);
    }
    return GPUBP_OK;
}

static int add_blocks(gbp_index *ix, uint64_t n)
{
    if (n > UINT32_MAX - ix->cur_vs->nblocks)
        return gbp_error(GPUBP_ERR_FORMAT, 0, "variable %s: too many blocks in step %u",
                         ix->cur->name, ix->cur_step + 1);
    ix->cur_vs->nblocks += (uint32_t)n;
    return GPUBP_OK;
}

static int add_block(bp5_reader *r, const gbp_block *b)
{
    GBP_FORWARD_IF_ERROR(sum_block(r, b));
    return add_blocks(r->ix, 1);
}

/* The light pass (random-access open): a known array's record is counted, not decoded; its
 * shapes and min/max come from bp5_index_summarize. Joined arrays (running offsets) and flattened
 * steps are always decoded. */
static int light_ok(void *ctx, const bp5_var_field *f)
{
    bp5_reader *r = ctx;
    if (!r->ix->light || r->idx.flatten || f->kind == GPUBP_SHAPE_JOINED_ARRAY) return 0;
    gbp_var *v = gbp_index_find_n(r->ix, f->name, strlen(f->name));
    r->lv = v;
    return v && v->kind >= 0 && v->type == f->type && v->kind != GPUBP_SHAPE_JOINED_ARRAY;
}

static int fill_var(void *ctx, uint64_t w, const bp5_var_field *f, const bp5_array_rec *a,
                    const bp5_value_rec *val)
{
    bp5_reader *r = ctx;
    gbp_index *ix = r->ix;
    if (f->unsupported) return note_unsupported(r, f->name, f->unsupported, NULL);
    int light = a && !a->count;
    size_t nl = light ? 0 : strlen(f->name);
    gbp_var *v = light ? r->lv : gbp_index_find_n(ix, f->name, nl);
    if (v && v->type != f->type)
        return gbp_error(GPUBP_ERR_FORMAT, 0, "%s: variable %s changes type from %s to %s in step %zu",
                         r->what, f->name, gbp_type_name(v->type), gbp_type_name(f->type), r->cur_s);
    if (f->type == GPUBP_TYPE_STRUCT) {
        int skip;
        if (!v && bp5_unsupported(r, f->name)) return GPUBP_OK;
        GBP_FORWARD_IF_ERROR(struct_layout(r, f, v, &skip));
        if (skip) return GPUBP_OK;
    }
    if (!v) {
        int rc = gbp_index_new_var(ix, f->name, nl, f->type, &v);
        if (rc == GPUBP_OK && f->expr && !(v->expr = gbp_strdup(f->expr))) rc = gbp_nomem();
        if (rc == GPUBP_OK)
            v->sdef = r->new_sdef; /* NULL but for a struct variable */
        else
            gbp_struct_def_free(r->new_sdef);
        r->new_sdef = NULL;
        GBP_FORWARD_IF_ERROR(rc);
    }
    int first_entry = !v->nsteps; /* the first writer of the variable's first step */
    if (!v->nsteps || v->steps[v->nsteps - 1].step != r->cur_p) {
        size_t left = r->idx.nsteps - r->cur_s; /* steps md.idx lists from this one on */
        if (v->cap_steps == 0 && ix->steps_hint > r->cur_s && left > 8 && !r->idx.flatten) {
            /* reserve what the remaining steps can need, once, instead of doubling (as BP4) */
            size_t want = ix->steps_hint - r->cur_s < left ? ix->steps_hint - r->cur_s : left;
            gbp_var_step *st = gbp_malloc(want * sizeof *st);
            if (st) {
                v->steps = st;
                v->cap_steps = want;
            }
        }
        GBP_FORWARD_IF_ERROR(gbp_grow((void **)&v->steps, &v->cap_steps, v->nsteps + 1, sizeof *v->steps));
        gbp_var_step *vs = &v->steps[v->nsteps++];
        memset(vs, 0, sizeof *vs);
        vs->step = r->cur_p;
        vs->entry_off = r->cur_s; /* the loader's cookie: the (first) dataset step */
        v->joined = 0;
    }
    ix->cur = v;
    ix->cur_vs = &v->steps[v->nsteps - 1];
    if (light) {
        r->light_used = 1;
        return add_blocks(ix, a->nblocks);
    }
    GBP_FORWARD_IF_ERROR(each_block(r, w, f, a, val, add_block, r->what));
    if (first_entry && v->kind == GPUBP_SHAPE_JOINED_ARRAY) v->joined_first = ix->cur_vs->shape_id;
    return GPUBP_OK;
}

static int fill_attr(void *ctx, gbp_attr *a)
{
    bp5_reader *r = ctx;
    a->step = r->cur_p;
    return gbp_index_set_attr(r->ix, a);
}

/* Drops what dataset step s added to presented step p (after a failure). */
static void drop_step(gbp_index *ix, uint32_t p, size_t s)
{
    for (size_t i = 0; i < ix->nvars; i++) {
        gbp_var *v = ix->vars[i];
        if (v->nsteps && v->steps[v->nsteps - 1].step == p && v->steps[v->nsteps - 1].entry_off == s)
            v->nsteps--;
    }
}

int bp5_index_add_step(gbp_index *ix, bp5_reader *r, const uint8_t *p, size_t n, const char *what)
{
    size_t s = r->nadded;
    if (s >= r->idx.nsteps)
        return gbp_error(GPUBP_ERR_INTERNAL, 0, "%s: step %zu of %zu", what, s, r->idx.nsteps);
    uint32_t ps = r->idx.flatten ? 0 : (uint32_t)s;
    r->ix = ix;
    r->what = what;
    r->cur_s = s;
    r->cur_p = ps;
    r->cur_w = r->idx.maps[r->idx.steps[s].map].nwriters;
    ix->cur_step = ps;
    ix->cur = NULL;
    ix->cur_colmajor = 0; /* the decoder reversed the dimensions already */
    GBP_FORWARD_IF_ERROR(gbp_grow((void **)&ix->colmajor, &ix->cap_colmajor, (size_t)ps + 1, 1));
    bp5_md_sink sink = {r, fill_var, fill_attr, NULL, light_ok};
    int rc = bp5_decode_step(&r->idx, &r->ft, s, p, n, &r->scr, &sink, what);
    if (rc) {
        drop_step(ix, ps, s);
        return rc;
    }
    ix->colmajor[ps] = (uint8_t)r->idx.column_major;
    if (ix->nsteps < (size_t)ps + 1) ix->nsteps = (size_t)ps + 1;
    ix->summarized = !r->light_used;
    ix->sum_steps = r->light_used ? 0 : ix->nsteps;
    r->nadded++;
    return GPUBP_OK;
}

void bp5_index_finish(gbp_index *ix)
{
    /* ADIOS2 keeps one joined shape per variable, which every step reports (§10.5): the last
     * dataset step's when the variable is in it; else its Variable's shape, made when the first
     * writer of its first step was read (the running sum of that writer's blocks), since the
     * last step's setup cleared the running one (ADIOS2 2.12.1, BP5Deserializer::SetupForStep,
     * VarShape). Its second call (after the summary pass) decides the same: the dataset step
     * is the loader's cookie (entry_off; flattened steps are one step, the last one) */
    for (size_t i = 0; i < ix->nvars; i++) {
        gbp_var *v = ix->vars[i];
        if (v->kind != GPUBP_SHAPE_JOINED_ARRAY || !v->nsteps) continue;
        int at_end = ix->nsteps <= 1 || v->steps[v->nsteps - 1].entry_off + 1 >= ix->nsteps;
        uint32_t id = at_end ? v->steps[v->nsteps - 1].shape_id : v->joined_first;
        for (size_t k = 0; k < v->nsteps; k++) v->steps[k].shape_id = id;
    }
    /* random access presents relative steps: a variable's k-th step is step k (§10.2) */
    for (size_t i = 0; i < ix->nvars; i++)
        for (size_t k = 0; k < ix->vars[i]->nsteps; k++) ix->vars[i]->steps[k].step = (uint32_t)k;
}

/* ---- the summary pass after a light one --------------------------------------------------- */

static int summarize_var(void *ctx, uint64_t w, const bp5_var_field *f, const bp5_array_rec *a,
                         const bp5_value_rec *val)
{
    bp5_reader *r = ctx;
    gbp_index *ix = r->ix;
    if (not_presented(r, f)) return GPUBP_OK;
    gbp_var *v = gbp_index_find_n(ix, f->name, strlen(f->name));
    size_t k = v ? v->sum_pos : 0;
    while (v && k < v->nsteps && v->steps[k].entry_off < r->cur_s) k++;
    if (!v || k == v->nsteps || v->steps[k].entry_off != r->cur_s)
        return gbp_error(GPUBP_ERR_INTERNAL, 0, "%s: variable %s of step %zu is not in the index",
                         r->what, f->name, r->cur_s);
    if (k != v->sum_pos || !v->sum_seen) v->joined = 0; /* a new (variable, step) */
    v->sum_pos = k;
    v->sum_seen = 1;
    ix->cur = v;
    ix->cur_vs = &v->steps[k];
    ix->cur_step = (uint32_t)r->cur_s;
    return each_block(r, w, f, a, val, sum_block, r->what);
}

static int summarize_attr(void *ctx, gbp_attr *a)
{
    (void)ctx;
    gbp_attr_free(a);
    return GPUBP_OK;
}

int bp5_index_summarize(gbp_index *ix, bp5_reader *r, const char *what)
{
    if (ix->summarized) return GPUBP_OK;
    for (size_t i = 0; i < ix->nvars; i++) {
        gbp_var *v = ix->vars[i];
        v->nshapes = 0;
        v->has_mm = 0;
        v->sum_pos = 0;
        v->sum_seen = 0;
    }
    bp5_md_sink sink = {r, summarize_var, summarize_attr, NULL, NULL};
    r->ix = ix;
    r->what = what;
    ix->cur_colmajor = 0; /* the decoder reversed the dimensions already */
    for (size_t s = 0; s < r->nadded; s++) {
        const bp5_step_rec *rec = &r->idx.steps[s];
        const uint8_t *buf = NULL;
        r->cur_s = s;
        r->cur_p = (uint32_t)s;
        r->cur_w = r->idx.maps[rec->map].nwriters;
        GBP_FORWARD_IF_ERROR(bp5_step_block(r, s, &buf));
        GBP_FORWARD_IF_ERROR(bp5_decode_step(&r->idx, &r->ft, s, buf, (size_t)rec->md_size,
                                             &r->scr, &sink, what));
    }
    bp5_index_finish(ix);
    ix->summarized = 1;
    ix->sum_steps = ix->nsteps;
    r->light_used = 0;
    return GPUBP_OK;
}

/* ---- on-demand loads --------------------------------------------------------------------------- */

static int load_one(bp5_reader *r, const gbp_block *b)
{
    return gbp_index_load_block(r->ix, b, 0);
}

static int load_var(void *ctx, uint64_t w, const bp5_var_field *f, const bp5_array_rec *a,
                    const bp5_value_rec *val)
{
    bp5_reader *r = ctx;
    if (not_presented(r, f)) return GPUBP_OK;
    return each_block(r, w, f, a, val, load_one, r->what);
}

static int load_attr(void *ctx, gbp_attr *a)
{
    (void)ctx;
    gbp_attr_free(a);
    return GPUBP_OK;
}

int bp5_step_block(bp5_reader *r, size_t s, const uint8_t **p)
{
    const bp5_step_rec *rec = &r->idx.steps[s];
    uint64_t pos = rec->md_pos, n = rec->md_size;
    if (r->win_len && pos >= r->win_off && n <= r->win_len && pos - r->win_off <= r->win_len - n) {
        *p = r->step_buf + (pos - r->win_off);
        return GPUBP_OK;
    }
    /* the blocks of the steps that follow this one in md.0, as far as the window goes */
    uint64_t end = pos + n;
    for (size_t k = s + 1; k < r->idx.nsteps; k++) {
        const bp5_step_rec *q = &r->idx.steps[k];
        if (q->md_pos != end || end - pos >= BP5_MD0_WINDOW ||
            q->md_size > BP5_MD0_WINDOW - (end - pos))
            break;
        end += q->md_size;
    }
    size_t len = (size_t)(end - pos);
    if (len > r->step_cap || !r->step_buf) {
        uint8_t *nb = gbp_realloc(r->step_buf, len ? len : 1);
        GBP_CHECK_ALLOC(nb);
        r->step_buf = nb;
        r->step_cap = len;
    }
    r->win_len = 0;
    GBP_FORWARD_IF_ERROR(r->read(r->read_ctx, pos, len, r->step_buf));
    r->win_off = pos;
    r->win_len = len;
    *p = r->step_buf;
    return GPUBP_OK;
}

int bp5_index_load(void *ctx, gbp_index *ix, gbp_var *v, size_t vs, const char *what)
{
    bp5_reader *r = ctx;
    const gbp_var_step *st = &v->steps[vs];
    size_t first = (size_t)st->entry_off, last = r->idx.flatten ? r->nadded : first + 1;
    bp5_md_sink sink = {r, load_var, load_attr, v->name, NULL};
    r->ix = ix;
    r->what = what;
    int rc = GPUBP_OK;
    for (size_t s = first; s < last && !rc; s++) {
        const bp5_step_rec *rec = &r->idx.steps[s];
        const uint8_t *buf = NULL;
        r->cur_s = s;
        r->cur_p = st->step;
        r->cur_w = r->idx.maps[rec->map].nwriters;
        rc = bp5_step_block(r, s, &buf);
        if (!rc) rc = bp5_decode_step(&r->idx, &r->ft, s, buf, (size_t)rec->md_size, &r->scr, &sink, what);
    }
    return rc;
}
