/* The reader's index: variables and attributes found in md.0, step by step. */
#include "bp4.h"

#define ARENA_CHUNK ((size_t)64 << 10)

struct bp4_arena_chunk {
    bp4_arena_chunk *next;
    size_t used, cap;
    max_align_t data[];
};

static void *arena_alloc(bp4_index *ix, size_t n)
{
    n = (n + 15) & ~(size_t)15;
    bp4_arena_chunk *c = ix->arena;
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

void bp4_index_init(bp4_index *ix, bp4_read_fn read, void *read_ctx)
{
    memset(ix, 0, sizeof *ix);
    ix->read = read;
    ix->read_ctx = read_ctx;
}

void bp4_index_free(bp4_index *ix)
{
    for (size_t i = 0; i < ix->nvars; i++) {
        bp4_var *v = ix->vars[i];
        gbp_free(v->name);
        gbp_free(v->steps);
        gbp_free(v->shapes);
        gbp_free(v);
    }
    gbp_free(ix->vars);
    gbp_free(ix->hash);
    for (size_t i = 0; i < ix->nattrs; i++) bp4_attr_free(&ix->attrs[i]);
    gbp_free(ix->attrs);
    gbp_free(ix->colmajor);
    gbp_free(ix->load);
    while (ix->arena) {
        bp4_arena_chunk *n = ix->arena->next;
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

static bp4_var *find_n(const bp4_index *ix, const char *name, size_t n)
{
    if (!ix->hash_cap) return NULL;
    size_t m = ix->hash_cap - 1, i = hash_str(name, n) & m;
    while (ix->hash[i]) {
        bp4_var *v = ix->vars[ix->hash[i] - 1];
        if (strlen(v->name) == n && !memcmp(v->name, name, n)) return v;
        i = (i + 1) & m;
    }
    return NULL;
}

bp4_var *bp4_index_find(const bp4_index *ix, const char *name)
{
    return find_n(ix, name, strlen(name));
}

static int rehash(bp4_index *ix)
{
    size_t cap = ix->hash_cap ? ix->hash_cap * 2 : 64;
    size_t *h = gbp_calloc(cap, sizeof *h);
    if (!h) return gbp_error(GPUBP_ERR_NOMEM, 0, "out of memory (variable index)");
    for (size_t k = 0; k < ix->nvars; k++) {
        bp4_var *v = ix->vars[k];
        size_t i = hash_str(v->name, strlen(v->name)) & (cap - 1);
        while (h[i]) i = (i + 1) & (cap - 1);
        h[i] = k + 1;
    }
    gbp_free(ix->hash);
    ix->hash = h;
    ix->hash_cap = cap;
    return 0;
}

static int classify(const bp4_block *b)
{
    if (b->ndims == 0) return GPUBP_SHAPE_GLOBAL_VALUE;
    const uint64_t *shape = BP4_SHAPE(b), *start = BP4_START(b);
    if (shape[0] == BP4_LOCAL_VALUE_DIM) return GPUBP_SHAPE_LOCAL_VALUE;
    int all_zero = 1;
    for (size_t i = 0; i < b->ndims; i++) {
        if (shape[i] == BP4_JOINED_DIM) return GPUBP_SHAPE_JOINED_ARRAY;
        if (shape[i] != 0 || start[i] != 0) all_zero = 0;
    }
    return all_zero ? GPUBP_SHAPE_LOCAL_ARRAY : GPUBP_SHAPE_GLOBAL_ARRAY;
}

static int on_step_begin(void *ctx, int column_major)
{
    ((bp4_index *)ctx)->cur_colmajor = column_major;
    return 0;
}

/* Dims of a block as a row-major reader sees them: reversed for a column-major writer. */
static void reader_dims(const bp4_block *blk, int colmajor, uint64_t *out)
{
    size_t nd = blk->ndims;
    for (size_t k = 0; k < 3; k++)
        for (size_t i = 0; i < nd; i++)
            out[k * nd + i] = colmajor ? blk->dims[k * nd + nd - 1 - i] : blk->dims[k * nd + i];
}

static int on_var_begin(void *ctx, const char *name, size_t nl, int type, uint64_t nsets,
                        uint64_t entry_off, uint32_t entry_len)
{
    bp4_index *ix = ctx;
    (void)nsets;
    /* steps usually list the variables in the same order: try the one after the last first */
    bp4_var *v = NULL;
    size_t guess = ix->cur ? ix->cur_pos + 1 : 0;
    if (guess < ix->nvars && !strncmp(ix->vars[guess]->name, name, nl) &&
        ix->vars[guess]->name[nl] == '\0')
        v = ix->vars[guess];
    else
        v = find_n(ix, name, nl);
    if (v && v->type != type)
        return gbp_error(GPUBP_ERR_FORMAT, 0,
                         "variable %.*s changes type from %s to %s in step %u", (int)nl, name,
                         gbp_type_name(v->type), gbp_type_name(type), ix->cur_step + 1);
    if (!v) {
        GBP_FORWARD_IF_ERROR(gbp_grow((void **)&ix->vars, &ix->cap_vars, ix->nvars + 1, sizeof *ix->vars));
        v = gbp_calloc(1, sizeof *v);
        if (!v) return gbp_error(GPUBP_ERR_NOMEM, 0, "out of memory");
        v->name = gbp_strndup(name, nl);
        if (!v->name) {
            gbp_free(v);
            return gbp_error(GPUBP_ERR_NOMEM, 0, "out of memory");
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
    }
    ix->cur = v;
    ix->cur_pos = v->pos;
    if (v->nsteps && v->steps[v->nsteps - 1].step == ix->cur_step)
        return gbp_error(GPUBP_ERR_FORMAT, 0,
                         "variable %s has two entries in step %u (at md.0 offset %llu)", v->name,
                         ix->cur_step + 1, (unsigned long long)entry_off);
    if (v->cap_steps == 0 && ix->steps_hint > ix->cur_step) {
        /* reserve what the remaining steps can need, once, instead of doubling */
        size_t want = ix->steps_hint - ix->cur_step;
        bp4_var_step *st = gbp_malloc(want * sizeof *st);
        if (st) {
            v->steps = st;
            v->cap_steps = want;
        }
    }
    GBP_FORWARD_IF_ERROR(gbp_grow((void **)&v->steps, &v->cap_steps, v->nsteps + 1, sizeof *v->steps));
    bp4_var_step *vs = &v->steps[v->nsteps++];
    memset(vs, 0, sizeof *vs);
    vs->step = ix->cur_step;
    vs->entry_off = entry_off;
    vs->entry_len = entry_len;
    ix->cur_vs = vs;
    v->joined = 0;
    if (ix->light && v->kind >= 0) return BP4_SINK_COUNT;
    return 0;
}

static int on_var_count(void *ctx, uint64_t nb)
{
    bp4_index *ix = ctx;
    if (nb >= UINT32_MAX)
        return gbp_error(GPUBP_ERR_FORMAT, 0, "variable %s: too many blocks in step %u",
                         ix->cur->name, ix->cur_step + 1);
    ix->cur_vs->nblocks = (uint32_t)nb;
    return 0;
}

/* Records the step's shape (deduplicated against the previous one). */
static int set_step_shape(bp4_var *v, bp4_var_step *vs, const uint64_t *shape)
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

/* Classifies and checks a block of the current (variable, step) and folds it into the summary:
 * the step's shape, min/max over everything. The block itself is not kept. */
static int summarize_block(bp4_index *ix, const bp4_block *blk)
{
    bp4_var *v = ix->cur;
    bp4_var_step *vs = ix->cur_vs;
    uint64_t dims[3 * GBP_MAX_DIMS];
    bp4_block b = *blk;
    reader_dims(blk, ix->cur_colmajor && blk->ndims > 1, dims);
    b.dims = dims;
    int kind = classify(&b);
    if (v->kind < 0) {
        v->kind = kind;
        v->ndims = b.ndims;
    } else if (v->ndims != b.ndims) {
        return gbp_error(GPUBP_ERR_FORMAT, 0,
                         "variable %s changes its number of dimensions from %zu to %u in step %u",
                         v->name, v->ndims, b.ndims, ix->cur_step + 1);
    } else if (kind != v->kind && !(v->kind == GPUBP_SHAPE_GLOBAL_ARRAY &&
                                    kind == GPUBP_SHAPE_LOCAL_ARRAY)) {
        return gbp_error(GPUBP_ERR_FORMAT, 0, "variable %s changes its kind in step %u", v->name,
                         ix->cur_step + 1);
    }
    if ((v->kind == GPUBP_SHAPE_GLOBAL_VALUE || v->kind == GPUBP_SHAPE_LOCAL_VALUE) &&
        !b.has_value)
        return gbp_error(GPUBP_ERR_FORMAT, 0, "value %s has no value in step %u", v->name,
                         ix->cur_step + 1);
    if (v->type == GPUBP_TYPE_STRING && v->kind != GPUBP_SHAPE_GLOBAL_VALUE &&
        v->kind != GPUBP_SHAPE_LOCAL_VALUE)
        return gbp_error(GPUBP_ERR_FORMAT, 0, "string variable %s is not a single or local value", v->name);
    if (v->kind == GPUBP_SHAPE_GLOBAL_ARRAY) {
        GBP_FORWARD_IF_ERROR(set_step_shape(v, vs, BP4_SHAPE(&b))); /* the last block's wins */
    } else if (v->kind == GPUBP_SHAPE_JOINED_ARRAY) {
        uint64_t shape[GBP_MAX_DIMS];
        memcpy(shape, BP4_SHAPE(&b), v->ndims * sizeof *shape);
        for (size_t i = 0; i < v->ndims; i++)
            if (shape[i] == BP4_JOINED_DIM) {
                v->joined += BP4_COUNT(&b)[i];
                shape[i] = v->joined;
            }
        GBP_FORWARD_IF_ERROR(set_step_shape(v, vs, shape));
    }
    if (v->type != GPUBP_TYPE_STRING && (b.has_value || b.has_minmax)) {
        const uint8_t *mn = b.mm, *mx = b.has_value ? b.mm : b.mm + 16;
        size_t es = gbp_type_size(v->type);
        if (!v->has_mm || gbp_value_cmp(v->type, mn, v->mm) < 0) memcpy(v->mm, mn, es);
        if (!v->has_mm || gbp_value_cmp(v->type, mx, v->mm + 16) > 0) memcpy(v->mm + 16, mx, es);
        v->has_mm = 1;
    }
    return 0;
}

/* The first pass: the summary of the block, and one more block in the step. */
static int on_var_block(void *ctx, const bp4_block *blk)
{
    bp4_index *ix = ctx;
    GBP_FORWARD_IF_ERROR(summarize_block(ix, blk));
    if (ix->cur_vs->nblocks == UINT32_MAX)
        return gbp_error(GPUBP_ERR_FORMAT, 0, "variable %s: too many blocks in step %u",
                         ix->cur->name, ix->cur_step + 1);
    ix->cur_vs->nblocks++;
    return 0;
}

static int on_attr(void *ctx, bp4_attr *a)
{
    bp4_index *ix = ctx;
    for (size_t i = 0; i < ix->nattrs; i++) {
        if (!strcmp(ix->attrs[i].name, a->name)) {
            bp4_attr_free(&ix->attrs[i]);
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

int bp4_index_add_step(bp4_index *ix, const uint8_t *p, uint64_t base, size_t n,
                       const bp4_idx_record *r, const char *what)
{
    bp4_step_sink sink = {ix, on_step_begin, on_var_begin, on_var_block, on_attr, on_var_count};
    ix->cur_step = (uint32_t)ix->nsteps;
    ix->cur = NULL;
    ix->cur_colmajor = 0;
    GBP_FORWARD_IF_ERROR(gbp_grow((void **)&ix->colmajor, &ix->cap_colmajor, ix->nsteps + 1, 1));
    int cm = 0;
    int rc = bp4_parse_step(p, base, n, r, &cm, &sink, what);
    if (rc) {
        /* drop what this step added, so the index stays as it was */
        for (size_t i = 0; i < ix->nvars; i++) {
            bp4_var *v = ix->vars[i];
            while (v->nsteps && v->steps[v->nsteps - 1].step == ix->cur_step) v->nsteps--;
        }
        return rc;
    }
    /* an entry with no block (not written by ADIOS2) does not count as an appearance */
    for (size_t i = 0; i < ix->nvars; i++) {
        bp4_var *v = ix->vars[i];
        if (v->nsteps && v->steps[v->nsteps - 1].step == ix->cur_step &&
            v->steps[v->nsteps - 1].nblocks == 0)
            v->nsteps--;
    }
    ix->colmajor[ix->nsteps] = (uint8_t)cm;
    ix->nsteps++;
    if (!ix->light && ix->sum_steps + 1 == ix->nsteps) {
        ix->sum_steps = ix->nsteps;
        ix->summarized = 1;
    } else {
        ix->summarized = 0;
    }
    return 0;
}

/* ---- loading the blocks of one (variable, step) ------------------------------------------- */

static int load_begin(void *ctx, const char *name, size_t nl, int type, uint64_t nsets,
                      uint64_t entry_off, uint32_t entry_len)
{
    (void)ctx; (void)name; (void)nl; (void)type; (void)nsets; (void)entry_off; (void)entry_len;
    return 0;
}

static int load_block(void *ctx, const bp4_block *blk)
{
    bp4_index *ix = ctx;
    GBP_FORWARD_IF_ERROR(gbp_grow((void **)&ix->load, &ix->cap_load, ix->nload + 1, sizeof *ix->load));
    bp4_block *b = &ix->load[ix->nload];
    *b = *blk;
    size_t nd = blk->ndims;
    b->dims = arena_alloc(ix, (3 * nd + 1) * sizeof(uint64_t));
    if (!b->dims) return gbp_error(GPUBP_ERR_NOMEM, 0, "out of memory");
    reader_dims(blk, ix->cur_colmajor && nd > 1, b->dims);
    if (blk->str) {
        b->str = arena_alloc(ix, (size_t)blk->str_len + 1);
        if (!b->str) return gbp_error(GPUBP_ERR_NOMEM, 0, "out of memory");
        memcpy(b->str, blk->str, blk->str_len);
        b->str[blk->str_len] = '\0';
    }
    if (blk->op) {
        b->op = arena_alloc(ix, sizeof *b->op);
        if (!b->op) return gbp_error(GPUBP_ERR_NOMEM, 0, "out of memory");
        *b->op = *blk->op;
    }
    ix->nload++;
    return 0;
}

int bp4_index_blocks(bp4_index *ix, bp4_var *v, size_t vs, const bp4_block **blocks,
                     const char *what)
{
    bp4_var_step *st = &v->steps[vs];
    if (st->blocks) {
        *blocks = st->blocks;
        return 0;
    }
    size_t n = (size_t)st->entry_len + 4;
    uint8_t *buf = gbp_malloc(n);
    if (!buf) return gbp_error(GPUBP_ERR_NOMEM, 0, "out of memory");
    int rc = ix->read(ix->read_ctx, st->entry_off, n, buf);
    bp4_step_sink sink = {ix, NULL, load_begin, load_block, NULL, NULL};
    ix->nload = 0;
    ix->cur_colmajor = ix->colmajor[st->step];
    if (rc == 0) rc = bp4_parse_var_entries(buf, st->entry_off, n, &sink, what);
    gbp_free(buf);
    if (rc == 0 && ix->nload != st->nblocks)
        rc = gbp_error(GPUBP_ERR_FORMAT, 0,
                       "%s: entry of %s at offset %llu changed: %zu blocks, %u expected", what,
                       v->name, (unsigned long long)st->entry_off, ix->nload, st->nblocks);
    bp4_block *dst = NULL;
    if (rc == 0) {
        dst = arena_alloc(ix, (ix->nload ? ix->nload : 1) * sizeof *dst);
        if (!dst) rc = gbp_error(GPUBP_ERR_NOMEM, 0, "out of memory");
    }
    if (rc) return rc;
    memcpy(dst, ix->load, ix->nload * sizeof *dst);
    if (v->kind == GPUBP_SHAPE_JOINED_ARRAY) {
        /* starts along the joined dimension: running sums of the counts, in block order */
        uint64_t sum = 0;
        for (size_t i = 0; i < ix->nload; i++)
            for (size_t d = 0; d < dst[i].ndims; d++)
                if (BP4_SHAPE(&dst[i])[d] == BP4_JOINED_DIM) {
                    BP4_START(&dst[i])[d] = sum;
                    sum += BP4_COUNT(&dst[i])[d];
                }
        for (size_t i = 0; i < ix->nload; i++)
            for (size_t d = 0; d < dst[i].ndims; d++)
                if (BP4_SHAPE(&dst[i])[d] == BP4_JOINED_DIM) BP4_SHAPE(&dst[i])[d] = sum;
    }
    st->blocks = dst;
    v->loaded++;
    *blocks = dst;
    return 0;
}

/* ---- the summary pass ------------------------------------------------------------------------- */

static int sum_begin(void *ctx, const char *name, size_t nl, int type, uint64_t nsets,
                     uint64_t entry_off, uint32_t entry_len)
{
    bp4_index *ix = ctx;
    (void)type; (void)nsets; (void)entry_len;
    bp4_var *v = find_n(ix, name, nl);
    bp4_var_step *vs = NULL;
    if (v && v->sum_pos < v->nsteps && v->steps[v->sum_pos].step == ix->cur_step &&
        v->steps[v->sum_pos].entry_off == entry_off)
        vs = &v->steps[v->sum_pos++];
    ix->cur = v;
    ix->cur_vs = vs;
    if (v) {
        v->joined = 0;
        v->sum_seen = 0;
    }
    return 0;
}

static int sum_block(void *ctx, const bp4_block *blk)
{
    bp4_index *ix = ctx;
    bp4_var *v = ix->cur;
    if (!v || !ix->cur_vs) return 0; /* an entry the first pass skipped (no block) */
    if (++v->sum_seen > ix->cur_vs->nblocks)
        return gbp_error(GPUBP_ERR_FORMAT, 0, "variable %s: step %u changed while read", v->name,
                         ix->cur_step + 1);
    return summarize_block(ix, blk);
}

static int sum_attr(void *ctx, bp4_attr *a)
{
    (void)ctx;
    bp4_attr_free(a); /* the first pass has them */
    return 0;
}

int bp4_index_summarize_step(bp4_index *ix, const uint8_t *p, uint64_t base, size_t n,
                             const bp4_idx_record *r, const char *what)
{
    if (ix->sum_steps == 0)
        for (size_t i = 0; i < ix->nvars; i++) {
            ix->vars[i]->sum_pos = 0;
            ix->vars[i]->nshapes = 0;
            ix->vars[i]->has_mm = 0;
        }
    bp4_step_sink sink = {ix, on_step_begin, sum_begin, sum_block, sum_attr, NULL};
    ix->cur_step = (uint32_t)ix->sum_steps;
    ix->cur = NULL;
    ix->cur_colmajor = 0;
    int light = ix->light, cm = 0;
    ix->light = 0;
    int rc = bp4_parse_step(p, base, n, r, &cm, &sink, what);
    ix->light = light;
    if (rc) return rc;
    ix->sum_steps++;
    if (ix->sum_steps == ix->nsteps) ix->summarized = 1;
    return 0;
}

const bp4_attr *bp4_index_find_attr(const bp4_index *ix, const char *name)
{
    for (size_t i = 0; i < ix->nattrs; i++)
        if (!strcmp(ix->attrs[i].name, name)) return &ix->attrs[i];
    return NULL;
}

const bp4_var_step *bp4_var_find_step(const bp4_var *v, size_t s)
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
