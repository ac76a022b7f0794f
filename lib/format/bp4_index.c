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

void bp4_index_init(bp4_index *ix) { memset(ix, 0, sizeof *ix); }

void bp4_index_free(bp4_index *ix)
{
    for (size_t i = 0; i < ix->nvars; i++) {
        bp4_var *v = ix->vars[i];
        gbp_free(v->name);
        gbp_free(v->blocks);
        gbp_free(v->steps);
        gbp_free(v);
    }
    gbp_free(ix->vars);
    gbp_free(ix->hash);
    for (size_t i = 0; i < ix->nattrs; i++) bp4_attr_free(&ix->attrs[i]);
    gbp_free(ix->attrs);
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

static int grow(void **p, size_t *cap, size_t need, size_t elsize)
{
    if (need <= *cap) return 0;
    size_t c = *cap ? *cap * 2 : 8;
    while (c < need) c *= 2;
    void *q = gbp_realloc(*p, c * elsize);
    if (!q) return gbp_error(GPUBP_ERR_NOMEM, 0, "out of memory (index)");
    *p = q;
    *cap = c;
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

static int on_var_begin(void *ctx, const char *name, size_t nl, int type, uint64_t nsets)
{
    bp4_index *ix = ctx;
    (void)nsets;
    ix->cur_skip = 0;
    bp4_var *v = find_n(ix, name, nl);
    if (v && v->type != type)
        return gbp_error(GPUBP_ERR_FORMAT, 0,
                         "variable %.*s changes type from %s to %s in step %u", (int)nl, name,
                         gbp_type_name(v->type), gbp_type_name(type), ix->cur_step + 1);
    if (!v) {
        GBP_FORWARD_IF_ERROR(grow((void **)&ix->vars, &ix->cap_vars, ix->nvars + 1, sizeof *ix->vars));
        v = gbp_calloc(1, sizeof *v);
        if (!v) return gbp_error(GPUBP_ERR_NOMEM, 0, "out of memory");
        v->name = gbp_strndup(name, nl);
        if (!v->name) {
            gbp_free(v);
            return gbp_error(GPUBP_ERR_NOMEM, 0, "out of memory");
        }
        v->type = type;
        v->kind = -1;
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
    /* one entry per variable per step; a second entry of the same name adds to the same step */
    if (v->nsteps == 0 || v->steps[v->nsteps - 1].step != ix->cur_step) {
        GBP_FORWARD_IF_ERROR(grow((void **)&v->steps, &v->cap_steps, v->nsteps + 1, sizeof *v->steps));
        bp4_var_step *s = &v->steps[v->nsteps++];
        s->step = ix->cur_step;
        s->nblocks = 0;
        s->first = v->nblocks;
    }
    return 0;
}

static int on_var_block(void *ctx, const bp4_block *blk)
{
    bp4_index *ix = ctx;
    bp4_var *v = ix->cur;
    if (v->kind >= 0 && v->ndims != blk->ndims)
        return gbp_error(GPUBP_ERR_FORMAT, 0,
                         "variable %s changes its number of dimensions from %zu to %u in step %u",
                         v->name, v->ndims, blk->ndims, ix->cur_step + 1);
    GBP_FORWARD_IF_ERROR(grow((void **)&v->blocks, &v->cap_blocks, v->nblocks + 1, sizeof *v->blocks));
    bp4_block *b = &v->blocks[v->nblocks];
    *b = *blk;
    size_t nd = blk->ndims;
    b->dims = arena_alloc(ix, (3 * nd + 1) * sizeof(uint64_t));
    if (!b->dims) return gbp_error(GPUBP_ERR_NOMEM, 0, "out of memory");
    if (ix->cur_colmajor && nd > 1) {
        /* a column-major writer: a row-major reader sees reversed dims (same bytes) */
        for (size_t k = 0; k < 3; k++)
            for (size_t i = 0; i < nd; i++) b->dims[k * nd + i] = blk->dims[k * nd + nd - 1 - i];
        b->reversed = 1;
    } else {
        memcpy(b->dims, blk->dims, 3 * nd * sizeof(uint64_t));
    }
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
    int kind = classify(b);
    if (v->kind < 0) {
        v->kind = kind;
        v->ndims = nd;
    } else if (kind != v->kind && !(v->kind == GPUBP_SHAPE_GLOBAL_ARRAY &&
                                    kind == GPUBP_SHAPE_LOCAL_ARRAY)) {
        return gbp_error(GPUBP_ERR_FORMAT, 0, "variable %s changes its kind in step %u", v->name,
                         ix->cur_step + 1);
    }
    if (v->kind == GPUBP_SHAPE_GLOBAL_VALUE && !b->has_value)
        return gbp_error(GPUBP_ERR_FORMAT, 0, "single value %s has no value in step %u", v->name,
                         ix->cur_step + 1);
    if (v->kind == GPUBP_SHAPE_LOCAL_VALUE && !b->has_value)
        return gbp_error(GPUBP_ERR_FORMAT, 0, "local value %s has no value in step %u", v->name,
                         ix->cur_step + 1);
    if (v->type == GPUBP_TYPE_STRING && v->kind != GPUBP_SHAPE_GLOBAL_VALUE)
        return gbp_error(GPUBP_ERR_FORMAT, 0, "string variable %s is not a single value", v->name);
    v->nblocks++;
    v->steps[v->nsteps - 1].nblocks++;
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
    GBP_FORWARD_IF_ERROR(grow((void **)&ix->attrs, &ix->cap_attrs, ix->nattrs + 1, sizeof *ix->attrs));
    ix->attrs[ix->nattrs++] = *a;
    memset(a, 0, sizeof *a);
    return 0;
}

/* Joined arrays: starts along the joined dimension are the running sums of the counts. */
static void fix_joined(bp4_index *ix)
{
    for (size_t k = 0; k < ix->nvars; k++) {
        bp4_var *v = ix->vars[k];
        if (v->kind != GPUBP_SHAPE_JOINED_ARRAY || !v->nsteps) continue;
        bp4_var_step *s = &v->steps[v->nsteps - 1];
        if (s->step != ix->cur_step) continue;
        size_t jd = 0;
        bp4_block *b0 = &v->blocks[s->first];
        for (size_t i = 0; i < b0->ndims; i++)
            if (BP4_SHAPE(b0)[i] == BP4_JOINED_DIM) jd = i;
        uint64_t sum = 0;
        for (size_t i = 0; i < s->nblocks; i++) {
            bp4_block *b = &v->blocks[s->first + i];
            if (jd < b->ndims) {
                BP4_START(b)[jd] = sum;
                sum += BP4_COUNT(b)[jd];
            }
        }
        for (size_t i = 0; i < s->nblocks; i++) {
            bp4_block *b = &v->blocks[s->first + i];
            if (jd < b->ndims) BP4_SHAPE(b)[jd] = sum;
        }
    }
}

int bp4_index_add_step(bp4_index *ix, const uint8_t *md0, size_t n, const bp4_idx_record *r,
                       const char *what)
{
    bp4_step_sink sink = {ix, on_step_begin, on_var_begin, on_var_block, on_attr};
    ix->cur_step = (uint32_t)ix->nsteps;
    ix->cur = NULL;
    int cm = 0;
    int rc = bp4_parse_step(md0, n, r, &cm, &sink, what);
    if (rc) return rc;
    fix_joined(ix);
    ix->nsteps++;
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
