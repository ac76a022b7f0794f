/* BP4's filling of the reader's index (format/index.h): variables and attributes found in md.0,
 * step by step, and the blocks of a (variable, step) loaded from its md.0 entry. */
#include "format/bp4_index.h"
#include "format/bp4_decode.h"

static int on_step_begin(void *ctx, int column_major)
{
    ((gbp_index *)ctx)->cur_colmajor = column_major;
    return 0;
}

static int on_var_begin(void *ctx, const char *name, size_t nl, int type, uint64_t nsets,
                        uint64_t entry_off, uint32_t entry_len)
{
    gbp_index *ix = ctx;
    (void)nsets;
    /* steps usually list the variables in the same order: try the one after the last first */
    gbp_var *v = NULL;
    size_t guess = ix->cur ? ix->cur_pos + 1 : 0;
    if (guess < ix->nvars && !strncmp(ix->vars[guess]->name, name, nl) &&
        ix->vars[guess]->name[nl] == '\0')
        v = ix->vars[guess];
    else
        v = gbp_index_find_n(ix, name, nl);
    if (v && v->type != type)
        return gbp_error(GPUBP_ERR_FORMAT, 0,
                         "variable %.*s changes type from %s to %s in step %u", (int)nl, name,
                         gbp_type_name(v->type), gbp_type_name(type), ix->cur_step + 1);
    if (!v) GBP_FORWARD_IF_ERROR(gbp_index_new_var(ix, name, nl, type, &v));
    ix->cur = v;
    ix->cur_pos = v->pos;
    if (v->nsteps && v->steps[v->nsteps - 1].step == ix->cur_step)
        return gbp_error(GPUBP_ERR_FORMAT, 0,
                         "variable %s has two entries in step %u (at md.0 offset %llu)", v->name,
                         ix->cur_step + 1, (unsigned long long)entry_off);
    if (v->cap_steps == 0 && ix->steps_hint > ix->cur_step) {
        /* reserve what the remaining steps can need, once, instead of doubling */
        size_t want = ix->steps_hint - ix->cur_step;
        gbp_var_step *st = gbp_malloc(want * sizeof *st);
        if (st) {
            v->steps = st;
            v->cap_steps = want;
        }
    }
    GBP_FORWARD_IF_ERROR(gbp_grow((void **)&v->steps, &v->cap_steps, v->nsteps + 1, sizeof *v->steps));
    gbp_var_step *vs = &v->steps[v->nsteps++];
    memset(vs, 0, sizeof *vs);
    vs->step = ix->cur_step;
    vs->entry_off = entry_off;
    vs->entry_len = entry_len;
    ix->cur_vs = vs;
    v->joined = 0;
    /* a joined array's step shape is the running sum of its blocks: never only counted (the
     * reader takes its shapes from the index, summarized or not: engine/rvar.c) */
    if (ix->light && v->kind >= 0 && v->kind != GPUBP_SHAPE_JOINED_ARRAY) return GBP_SINK_COUNT;
    return 0;
}

static int on_var_count(void *ctx, uint64_t nb)
{
    gbp_index *ix = ctx;
    if (nb >= UINT32_MAX)
        return gbp_error(GPUBP_ERR_FORMAT, 0, "variable %s: too many blocks in step %u",
                         ix->cur->name, ix->cur_step + 1);
    ix->cur_vs->nblocks = (uint32_t)nb;
    return 0;
}

/* The first pass: the summary of the block, and one more block in the step. */
static int on_var_block(void *ctx, const gbp_block *blk)
{
    gbp_index *ix = ctx;
    GBP_FORWARD_IF_ERROR(gbp_index_summarize_block(ix, blk));
    if (ix->cur_vs->nblocks == UINT32_MAX)
        return gbp_error(GPUBP_ERR_FORMAT, 0, "variable %s: too many blocks in step %u",
                         ix->cur->name, ix->cur_step + 1);
    ix->cur_vs->nblocks++;
    return 0;
}

static int on_attr(void *ctx, gbp_attr *a) { return gbp_index_set_attr(ctx, a); }

int bp4_index_add_step(gbp_index *ix, const uint8_t *p, uint64_t base, size_t n,
                       const bp4_idx_record *r, const char *what)
{
    gbp_step_sink sink = {ix, on_step_begin, on_var_begin, on_var_block, on_attr, on_var_count};
    ix->cur_step = (uint32_t)ix->nsteps;
    ix->cur = NULL;
    ix->cur_colmajor = 0;
    GBP_FORWARD_IF_ERROR(gbp_grow((void **)&ix->colmajor, &ix->cap_colmajor, ix->nsteps + 1, 1));
    int cm = 0;
    int rc = bp4_parse_step(p, base, n, r, &cm, &sink, what);
    if (rc) {
        /* drop what this step added, so the index stays as it was */
        for (size_t i = 0; i < ix->nvars; i++) {
            gbp_var *v = ix->vars[i];
            while (v->nsteps && v->steps[v->nsteps - 1].step == ix->cur_step) v->nsteps--;
        }
        return rc;
    }
    /* an entry with no block (not written by ADIOS2) does not count as an appearance */
    for (size_t i = 0; i < ix->nvars; i++) {
        gbp_var *v = ix->vars[i];
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

void bp4_index_init(gbp_index *ix, const bp4_md0 *md0)
{
    gbp_index_init(ix, bp4_index_load, (void *)md0);
}

static int load_begin(void *ctx, const char *name, size_t nl, int type, uint64_t nsets,
                      uint64_t entry_off, uint32_t entry_len)
{
    (void)ctx; (void)name; (void)nl; (void)type; (void)nsets; (void)entry_off; (void)entry_len;
    return 0;
}

static int load_block(void *ctx, const gbp_block *blk)
{
    gbp_index *ix = ctx;
    return gbp_index_load_block(ix, blk, ix->cur_colmajor);
}

int bp4_index_load(void *ctx, gbp_index *ix, gbp_var *v, size_t vs, const char *what)
{
    const bp4_md0 *md0 = ctx;
    const gbp_var_step *st = &v->steps[vs];
    size_t n = (size_t)st->entry_len + 4;
    uint8_t *buf = gbp_malloc(n);
    GBP_CHECK_ALLOC(buf);
    int rc = md0->read(md0->ctx, st->entry_off, n, buf);
    gbp_step_sink sink = {ix, NULL, load_begin, load_block, NULL, NULL};
    ix->cur_colmajor = ix->colmajor[st->step];
    if (rc == 0) rc = bp4_parse_var_entries(buf, st->entry_off, n, &sink, what);
    gbp_free(buf);
    return rc;
}

/* ---- the summary pass ------------------------------------------------------------------------- */

static int sum_begin(void *ctx, const char *name, size_t nl, int type, uint64_t nsets,
                     uint64_t entry_off, uint32_t entry_len)
{
    gbp_index *ix = ctx;
    (void)type; (void)nsets; (void)entry_len;
    gbp_var *v = gbp_index_find_n(ix, name, nl);
    gbp_var_step *vs = NULL;
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

static int sum_block(void *ctx, const gbp_block *blk)
{
    gbp_index *ix = ctx;
    gbp_var *v = ix->cur;
    if (!v || !ix->cur_vs) return 0; /* an entry the first pass skipped (no block) */
    if (++v->sum_seen > ix->cur_vs->nblocks)
        return gbp_error(GPUBP_ERR_FORMAT, 0, "variable %s: step %u changed while read", v->name,
                         ix->cur_step + 1);
    return gbp_index_summarize_block(ix, blk);
}

static int sum_attr(void *ctx, gbp_attr *a)
{
    (void)ctx;
    gbp_attr_free(a); /* the first pass has them */
    return 0;
}

int bp4_index_summarize_step(gbp_index *ix, const uint8_t *p, uint64_t base, size_t n,
                             const bp4_idx_record *r, const char *what)
{
    if (ix->sum_steps == 0)
        for (size_t i = 0; i < ix->nvars; i++) {
            ix->vars[i]->sum_pos = 0;
            ix->vars[i]->nshapes = 0;
            ix->vars[i]->has_mm = 0;
            ix->vars[i]->mm_missing = 0;
        }
    gbp_step_sink sink = {ix, on_step_begin, sum_begin, sum_block, sum_attr, NULL};
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

