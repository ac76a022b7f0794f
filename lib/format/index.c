/* The reader's index (index.h): storage, lookups, the summary of blocks, on-demand loads. */
#include "format/index.h"

#define ARENA_CHUNK ((size_t)64 << 10)

struct gbp_arena_chunk {
    gbp_arena_chunk *next;
    size_t used, cap;
    max_align_t data[];
};

void *gbp_index_alloc(gbp_index *ix, size_t n)
{
    n = (n + 15) & ~(size_t)15;
    gbp_arena_chunk *c = ix->arena;
    if (!c || c->cap - c->used < n) {
        size_t cap = n > ARENA_CHUNK ? n : ARENA_CHUNK;
        c = gbp_malloc(sizeof *c + cap);
        if (!c) return NULL;
        c->next = ix->arena;
        c->used = 0;
        c->cap = cap;
        ix->arena = c;
    }
    void *p = (char *)c->data + c->used;
    c->used += n;
    return p;
}

void gbp_attr_free(gbp_attr *a)
{
    if (!a) return;
    gbp_free(a->name);
    gbp_free(a->data);
    if (a->strings)
        for (size_t i = 0; i < a->n; i++) gbp_free(a->strings[i]);
    gbp_free(a->strings);
    memset(a, 0, sizeof *a);
}

void gbp_index_init(gbp_index *ix, gbp_load_fn load, void *load_ctx)
{
    memset(ix, 0, sizeof *ix);
    ix->load = load;
    ix->load_ctx = load_ctx;
}

void gbp_struct_def_free(gbp_struct_def *d)
{
    if (!d) return;
    for (size_t i = 0; i < d->nfields; i++) gbp_free(d->fields[i].name);
    gbp_free(d->fields);
    gbp_free(d->name);
    gbp_free(d);
}

void gbp_index_free(gbp_index *ix)
{
    for (size_t i = 0; i < ix->nvars; i++) {
        gbp_var *v = ix->vars[i];
        gbp_struct_def_free(v->sdef);
        gbp_free(v->expr);
        gbp_free(v->name);
        gbp_free(v->steps);
        gbp_free(v->puts);
        gbp_free(v->shapes);
        gbp_free(v);
    }
    gbp_free(ix->vars);
    gbp_free(ix->hash);
    for (size_t i = 0; i < ix->nattrs; i++) gbp_attr_free(&ix->attrs[i]);
    gbp_free(ix->attrs);
    gbp_free(ix->colmajor);
    gbp_free(ix->pending);
    while (ix->arena) {
        gbp_arena_chunk *n = ix->arena->next;
        gbp_free(ix->arena);
        ix->arena = n;
    }
    memset(ix, 0, sizeof *ix);
}

static size_t hash_str(const char *s, size_t n)
{
    size_t h = 1469598103934665603ull;
    for (size_t i = 0; i < n; i++) h = (h ^ (unsigned char)s[i]) * 1099511628211ull;
    return h;
}

gbp_var *gbp_index_find_n(const gbp_index *ix, const char *name, size_t n)
{
    if (!ix->hash_cap) return NULL;
    size_t m = ix->hash_cap - 1, i = hash_str(name, n) & m;
    while (ix->hash[i]) {
        gbp_var *v = ix->vars[ix->hash[i] - 1];
        if (strlen(v->name) == n && !memcmp(v->name, name, n)) return v;
        i = (i + 1) & m;
    }
    return NULL;
}

gbp_var *gbp_index_find(const gbp_index *ix, const char *name)
{
    return gbp_index_find_n(ix, name, strlen(name));
}

static int rehash(gbp_index *ix)
{
    size_t cap = ix->hash_cap ? ix->hash_cap * 2 : 64;
    size_t *h = gbp_calloc(cap, sizeof *h);
    if (!h) return gbp_error(GPUBP_ERR_NOMEM, 0, "out of memory (variable index)");
    for (size_t k = 0; k < ix->nvars; k++) {
        gbp_var *v = ix->vars[k];
        size_t i = hash_str(v->name, strlen(v->name)) & (cap - 1);
        while (h[i]) i = (i + 1) & (cap - 1);
        h[i] = k + 1;
    }
    gbp_free(ix->hash);
    ix->hash = h;
    ix->hash_cap = cap;
    return 0;
}


int gbp_index_new_var(gbp_index *ix, const char *name, size_t nl, int type, gbp_var **out)
{
    GBP_FORWARD_IF_ERROR(gbp_grow((void **)&ix->vars, &ix->cap_vars, ix->nvars + 1, sizeof *ix->vars));
    gbp_var *v = gbp_calloc(1, sizeof *v);
    GBP_CHECK_ALLOC(v);
    v->name = gbp_strndup(name, nl);
    if (!v->name) {
        gbp_free(v);
        return gbp_nomem();
    }
    v->type = type;
    v->kind = -1;
    v->pos = ix->nvars;
    ix->vars[ix->nvars++] = v;
    if (ix->nvars * 2 > ix->hash_cap) {
        GBP_FORWARD_IF_ERROR(rehash(ix));
    } else {
        size_t i = hash_str(v->name, nl) & (ix->hash_cap - 1);
        while (ix->hash[i]) i = (i + 1) & (ix->hash_cap - 1);
        ix->hash[i] = ix->nvars;
    }
    *out = v;
    return 0;
}

int gbp_index_set_attr(gbp_index *ix, gbp_attr *a)
{
    for (size_t i = 0; i < ix->nattrs; i++) {
        if (!strcmp(ix->attrs[i].name, a->name)) {
            gbp_attr_free(&ix->attrs[i]);
            ix->attrs[i] = *a;
            memset(a, 0, sizeof *a);
            return 0;
        }
    }
    GBP_FORWARD_IF_ERROR(gbp_grow((void **)&ix->attrs, &ix->cap_attrs, ix->nattrs + 1, sizeof *ix->attrs));
    ix->attrs[ix->nattrs++] = *a;
    memset(a, 0, sizeof *a);
    return 0;
}

static int classify(const gbp_block *b)
{
    if (b->ndims == 0) return GPUBP_SHAPE_GLOBAL_VALUE;
    const uint64_t *shape = GBP_SHAPE(b), *start = GBP_START(b);
    if (shape[0] == GBP_LOCAL_VALUE_DIM) return GPUBP_SHAPE_LOCAL_VALUE;
    int all_zero = 1;
    for (size_t i = 0; i < b->ndims; i++) {
        if (shape[i] == GBP_JOINED_DIM) return GPUBP_SHAPE_JOINED_ARRAY;
        if (shape[i] != 0 || start[i] != 0) all_zero = 0;
    }
    return all_zero ? GPUBP_SHAPE_LOCAL_ARRAY : GPUBP_SHAPE_GLOBAL_ARRAY;
}

/* Dims of a block as a row-major reader sees them: reversed for a column-major writer. */
static void reader_dims(const gbp_block *blk, int colmajor, uint64_t *out)
{
    size_t nd = blk->ndims;
    for (size_t k = 0; k < 3; k++)
        for (size_t i = 0; i < nd; i++)
            out[k * nd + i] = colmajor ? blk->dims[k * nd + nd - 1 - i] : blk->dims[k * nd + i];
}

/* Records the step's shape (deduplicated against the previous one). */
static int set_step_shape(gbp_var *v, gbp_var_step *vs, const uint64_t *shape)
{
    size_t nd = v->ndims;
    if (v->nshapes && !memcmp(v->shapes + (v->nshapes - 1) * nd, shape, nd * sizeof *shape)) {
        vs->shape_id = (uint32_t)(v->nshapes - 1);
        return 0;
    }
    GBP_FORWARD_IF_ERROR(gbp_grow((void **)&v->shapes, &v->cap_shapes, (v->nshapes + 1) * (nd ? nd : 1),
                              sizeof *v->shapes));
    memcpy(v->shapes + v->nshapes * nd, shape, nd * sizeof *shape);
    vs->shape_id = (uint32_t)v->nshapes++;
    return 0;
}

/* What every reader of a block of v relies on, checked by the summary pass and, for the steps a
 * light pass only counted, when their blocks are loaded (`what`: the metadata's name, `off`: the
 * entry's offset; NULL from the summary): the variable's number of dimensions (its dims are
 * indexed by it) and, for a value, its value (read from the block). */
static int check_block(const gbp_var *v, const gbp_block *b, uint32_t step, const char *what,
                       uint64_t off)
{
    const char *bad = NULL;
    if (b->ndims != v->ndims) bad = "changes its number of dimensions";
    else if ((v->kind == GPUBP_SHAPE_GLOBAL_VALUE || v->kind == GPUBP_SHAPE_LOCAL_VALUE) &&
             !b->has_value && gbp_type_known(v->type)) /* unknown types keep no value */
        bad = "has no value";
    if (!bad) return 0;
    if (!what)
        return gbp_error(GPUBP_ERR_FORMAT, 0, "variable %s %s (%zu to %u dimensions) in step %u",
                         v->name, bad, v->ndims, b->ndims, step + 1);
    return gbp_error(GPUBP_ERR_FORMAT, 0, "%s: variable %s %s (%zu to %u dimensions) in step %u "
                     "(entry at offset %llu)", what, v->name, bad, v->ndims, b->ndims, step + 1,
                     (unsigned long long)off);
}

int gbp_index_summarize_block(gbp_index *ix, const gbp_block *blk)
{
    gbp_var *v = ix->cur;
    gbp_var_step *vs = ix->cur_vs;
    uint64_t dims[3 * GBP_MAX_DIMS];
    gbp_block b = *blk;
    reader_dims(blk, ix->cur_colmajor && blk->ndims > 1, dims);
    b.dims = dims;
    int kind = classify(&b);
    if (v->kind < 0) {
        v->kind = kind;
        v->ndims = b.ndims;
    } else if (v->ndims == b.ndims && kind != v->kind &&
               !(v->kind == GPUBP_SHAPE_GLOBAL_ARRAY && kind == GPUBP_SHAPE_LOCAL_ARRAY)) {
        return gbp_error(GPUBP_ERR_FORMAT, 0, "variable %s changes its kind in step %u", v->name,
                         ix->cur_step + 1);
    }
    GBP_FORWARD_IF_ERROR(check_block(v, &b, ix->cur_step, NULL, 0));
    if (v->type == GPUBP_TYPE_STRING && v->kind != GPUBP_SHAPE_GLOBAL_VALUE &&
        v->kind != GPUBP_SHAPE_LOCAL_VALUE)
        return gbp_error(GPUBP_ERR_FORMAT, 0, "string variable %s is not a single or local value", v->name);
    if (v->kind == GPUBP_SHAPE_GLOBAL_ARRAY) {
        GBP_FORWARD_IF_ERROR(set_step_shape(v, vs, GBP_SHAPE(&b))); /* the last block's wins */
    } else if (v->kind == GPUBP_SHAPE_JOINED_ARRAY) {
        uint64_t shape[GBP_MAX_DIMS];
        memcpy(shape, GBP_SHAPE(&b), v->ndims * sizeof *shape);
        for (size_t i = 0; i < v->ndims; i++)
            if (shape[i] == GBP_JOINED_DIM) {
                v->joined += GBP_COUNT(&b)[i];
                shape[i] = v->joined;
                v->joined_dim = (uint32_t)i;
            }
        GBP_FORWARD_IF_ERROR(set_step_shape(v, vs, shape));
    }
    if (v->type != GPUBP_TYPE_STRING && !b.has_value && !b.has_minmax) v->mm_missing = 1;
    if (v->type != GPUBP_TYPE_STRING && (b.has_value || b.has_minmax)) {
        const uint8_t *mn = b.mm, *mx = b.has_value ? b.mm : b.mm + 16;
        size_t es = gbp_type_size(v->type);
        if (!v->has_mm || gbp_value_cmp(v->type, mn, v->mm) < 0) memcpy(v->mm, mn, es);
        if (!v->has_mm || gbp_value_cmp(v->type, mx, v->mm + 16) > 0) memcpy(v->mm + 16, mx, es);
        v->has_mm = 1;
    }
    return 0;
}

/* ---- loading the blocks of one (variable, step) ------------------------------------------- */

int gbp_index_load_block(gbp_index *ix, const gbp_block *blk, int reverse)
{
    GBP_FORWARD_IF_ERROR(gbp_grow((void **)&ix->pending, &ix->cap_pending, ix->npending + 1,
                                  sizeof *ix->pending));
    gbp_block *b = &ix->pending[ix->npending];
    *b = *blk;
    size_t nd = blk->ndims;
    b->dims = gbp_index_alloc(ix, (3 * nd + 1) * sizeof(uint64_t));
    GBP_CHECK_ALLOC(b->dims);
    reader_dims(blk, reverse && nd > 1, b->dims);
    if (blk->str) {
        b->str = gbp_index_alloc(ix, (size_t)blk->str_len + 1);
        GBP_CHECK_ALLOC(b->str);
        memcpy(b->str, blk->str, blk->str_len);
        b->str[blk->str_len] = '\0';
    }
    if (blk->op) {
        b->op = gbp_index_alloc(ix, sizeof *b->op);
        GBP_CHECK_ALLOC(b->op);
        *b->op = *blk->op;
    }
    ix->npending++;
    return 0;
}

int gbp_index_blocks(gbp_index *ix, gbp_var *v, size_t vs, const gbp_block **blocks,
                     const char *what)
{
    gbp_var_step *st = &v->steps[vs];
    if (st->blocks) {
        *blocks = st->blocks;
        return 0;
    }
    if (!ix->load)
        return gbp_error(GPUBP_ERR_INTERNAL, 0, "%s: the blocks of %s in step %u were not supplied",
                         what, v->name, st->step + 1);
    ix->npending = 0;
    int rc = ix->load(ix->load_ctx, ix, v, vs, what);
    if (rc == 0 && ix->npending != st->nblocks)
        rc = gbp_error(GPUBP_ERR_FORMAT, 0,
                       "%s: entry of %s at offset %llu changed: %zu blocks, %u expected", what,
                       v->name, (unsigned long long)st->entry_off, ix->npending, st->nblocks);
    /* steps only counted by a light pass are checked here, as the summary checks the others */
    for (size_t i = 0; rc == 0 && v->kind >= 0 && i < ix->npending; i++)
        rc = check_block(v, &ix->pending[i], st->step, what, st->entry_off);
    gbp_block *dst = NULL;
    if (rc == 0) {
        dst = gbp_index_alloc(ix, (ix->npending ? ix->npending : 1) * sizeof *dst);
        if (!dst) rc = gbp_nomem();
    }
    if (rc) return rc;
    size_t n = ix->npending;
    memcpy(dst, ix->pending, n * sizeof *dst);
    if (v->kind == GPUBP_SHAPE_JOINED_ARRAY) {
        /* starts along the joined dimension: running sums of the counts, in block order */
        uint64_t sum = 0;
        for (size_t i = 0; i < n; i++)
            for (size_t d = 0; d < dst[i].ndims; d++)
                if (GBP_SHAPE(&dst[i])[d] == GBP_JOINED_DIM) {
                    GBP_START(&dst[i])[d] = sum;
                    sum += GBP_COUNT(&dst[i])[d];
                }
        for (size_t i = 0; i < n; i++)
            for (size_t d = 0; d < dst[i].ndims; d++)
                if (GBP_SHAPE(&dst[i])[d] == GBP_JOINED_DIM) GBP_SHAPE(&dst[i])[d] = sum;
    }
    st->blocks = dst;
    v->loaded++;
    *blocks = dst;
    return 0;
}

/* The stored blocks i … that make one split put (1 when blocks[i] is a whole put). */
static size_t split_run(const gbp_block *b, size_t i, size_t n)
{
    uint32_t cnt = GBP_SPLIT_COUNT(b[i].split);
    if (!b[i].split || GBP_SPLIT_INDEX(b[i].split) != 0 || cnt < 2 || cnt > n - i) return 1;
    for (size_t j = 1; j < cnt; j++)
        if (b[i + j].split != GBP_SPLIT_MAKE(j, cnt) || b[i + j].ndims != b[i].ndims) return 1;
    return cnt;
}

_Static_assert(sizeof(gbp_var_step) <= 32, "gbp_var_step: one per (variable, step), keep it small");

int gbp_index_puts(gbp_index *ix, gbp_var *v, size_t vs, const gbp_block **puts, size_t *nputs,
                   const char *what)
{
    gbp_var_step *st = &v->steps[vs];
    const gbp_block *b = NULL;
    GBP_FORWARD_IF_ERROR(gbp_index_blocks(ix, v, vs, &b, what));
    if (vs >= v->cap_puts) {
        size_t old = v->cap_puts;
        GBP_FORWARD_IF_ERROR(gbp_grow((void **)&v->puts, &v->cap_puts,
                                      vs + 1 > v->nsteps ? vs + 1 : v->nsteps, sizeof *v->puts));
        memset(v->puts + old, 0, (v->cap_puts - old) * sizeof *v->puts);
    }
    gbp_var_puts *pc = &v->puts[vs];
    if (!pc->blocks) {
        size_t n = st->nblocks, np = 0;
        for (size_t i = 0; i < n; i += split_run(b, i, n)) np++;
        if (np == n || v->kind != GPUBP_SHAPE_GLOBAL_ARRAY) {
            pc->blocks = (gbp_block *)b;
            pc->n = st->nblocks;
        } else {
            gbp_block *out = gbp_index_alloc(ix, np * sizeof *out);
            GBP_CHECK_ALLOC(out);
            size_t es = gbp_var_esize(v);
            for (size_t i = 0, p = 0; i < n; p++) {
                size_t run = split_run(b, i, n), nd = b[i].ndims;
                out[p] = b[i];
                if (run > 1) {
                    gbp_block *m = &out[p];
                    m->split = 0;
                    m->dims = gbp_index_alloc(ix, (3 * nd + 1) * sizeof *m->dims);
                    GBP_CHECK_ALLOC(m->dims);
                    memcpy(m->dims, b[i].dims, 3 * nd * sizeof *m->dims);
                    for (size_t j = i + 1; j < i + run; j++) {
                        for (size_t d = 0; d < nd; d++) {
                            uint64_t lo = GBP_START(m)[d], hi = lo + GBP_COUNT(m)[d];
                            uint64_t s = GBP_START(&b[j])[d], e = s + GBP_COUNT(&b[j])[d];
                            GBP_START(m)[d] = s < lo ? s : lo;
                            GBP_COUNT(m)[d] = (e > hi ? e : hi) - GBP_START(m)[d];
                        }
                        if (!b[j].has_minmax) {
                            m->has_minmax = 0;
                        } else if (m->has_minmax && es) {
                            if (gbp_value_cmp(v->type, b[j].mm, m->mm) < 0) memcpy(m->mm, b[j].mm, es);
                            if (gbp_value_cmp(v->type, b[j].mm + 16, m->mm + 16) > 0)
                                memcpy(m->mm + 16, b[j].mm + 16, es);
                        }
                    }
                }
                i += run;
            }
            pc->blocks = out;
            pc->n = np;
        }
    }
    *puts = pc->blocks;
    *nputs = pc->n;
    return 0;
}

const gbp_attr *gbp_index_find_attr(const gbp_index *ix, const char *name)
{
    for (size_t i = 0; i < ix->nattrs; i++)
        if (!strcmp(ix->attrs[i].name, name)) return &ix->attrs[i];
    return NULL;
}

const gbp_var_step *gbp_var_find_step(const gbp_var *v, size_t s)
{
    size_t lo = 0, hi = v->nsteps;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (v->steps[mid].step < s) lo = mid + 1;
        else hi = mid;
    }
    if (lo < v->nsteps && v->steps[lo].step == s) return &v->steps[lo];
    return NULL;
}
