/* gpubpls: the dataset step of a variable's step, for bpls's BP4 -D listing, and a BP5 joined
 * array's extent as ADIOS2 defines the variable (ls_steps.h). */
#include "gpubpls/ls_steps.h"

#include <stdlib.h>
#include <string.h>

/* The public API counts a variable's steps from 0 over the steps where it appears; bpls prints
 * the dataset's step. When a variable skips steps, one pass over the dataset in READ mode finds
 * in which steps each variable appears. */
/* The entry of `name` in the sorted step map, or NULL with *pos where it would go. */
static ls_stepmap_entry *stepmap_find(const ls_ctx *c, const char *name, size_t *pos)
{
    size_t lo = 0, hi = c->stepmap_n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        int r = strcmp(c->stepmap[mid].name, name);
        if (r == 0)
            return &c->stepmap[mid];
        if (r < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    *pos = lo;
    return NULL;
}

/* The entry of `name`, created (empty) when absent; NULL when out of memory. */
static ls_stepmap_entry *stepmap_entry(ls_ctx *c, const char *name)
{
    size_t lo;
    ls_stepmap_entry *e = stepmap_find(c, name, &lo);
    if (e)
        return e;
    if (ls_grow((void **)&c->stepmap, &c->stepmap_cap, c->stepmap_n + 1, sizeof *c->stepmap, 64))
        return NULL;
    char *copy = strdup(name);
    if (!copy)
        return NULL;
    memmove(&c->stepmap[lo + 1], &c->stepmap[lo], (c->stepmap_n - lo) * sizeof *c->stepmap);
    c->stepmap[lo] = (ls_stepmap_entry){copy, NULL, 0, 0};
    c->stepmap_n++;
    return &c->stepmap[lo];
}

static bool stepmap_add(ls_ctx *c, const char *name, size_t step)
{
    ls_stepmap_entry *e = stepmap_entry(c, name);
    if (!e)
        return false;
    if (e->n == e->cap) {
        size_t cap = e->cap ? 2 * e->cap : 8;
        size_t *s = realloc(e->steps, cap * sizeof *s);
        if (!s)
            return false;
        e->steps = s;
        e->cap = cap;
    }
    e->steps[e->n++] = step;
    return true;
}

static void build_stepmap(ls_ctx *c)
{
    c->stepmap_done = true;
    gpubp_file *f = NULL;
    if (gpubp_open(&f, c->opt.path, GPUBP_MODE_READ, "block_view=stored") != GPUBP_OK)
        return;
    bool ok = true;
    while (ok && gpubp_begin_step(f) == GPUBP_OK) {
        size_t step, n;
        const char *const *names;
        ok = gpubp_current_step(f, &step) == GPUBP_OK &&
             gpubp_available_variables(f, &n, &names) == GPUBP_OK;
        for (size_t i = 0; ok && i < n; i++)
            ok = stepmap_add(c, names[i], step);
        ok = ok && gpubp_end_step(f) == GPUBP_OK;
    }
    gpubp_close(f);
}

size_t ls_abs_step(ls_ctx *c, const ls_var *v, size_t rel)
{
    if (!c->random_access) {
        size_t step = 0;
        gpubp_current_step(c->f, &step);
        return step;
    }
    if (v->nsteps >= c->file_steps)
        return rel;
    if (!c->stepmap_done)
        build_stepmap(c);
    size_t pos;
    const ls_stepmap_entry *e = stepmap_find(c, v->name, &pos);
    return e && rel < e->n ? e->steps[rel] : rel;
}

/* A BP5 joined array's extent along its joined dimension as ADIOS2's BP5 reader defines the
 * variable: the sum of the first writer's blocks of its first step (the step's other writers'
 * blocks come after the definition). */
int ls_joined_first_writer(ls_ctx *c, const ls_var *v, size_t *d)
{
    size_t jd = 0, n = 0, w0 = 0, w = 0, sum = 0, start[LS_MAX_DIMS], count[LS_MAX_DIMS];
    int rc = gpubp_variable_joined_dim(v->v, &jd);
    if (rc >= 0)
        rc = gpubp_variable_blocks(v->v, 0, &n);
    for (size_t j = 0; rc >= 0 && j < n; j++) {
        rc = gpubp_variable_block_writer(v->v, 0, j, &w);
        if (rc >= 0 && j == 0)
            w0 = w;
        if (rc >= 0 && w != w0)
            break;
        if (rc >= 0)
            rc = gpubp_variable_block_info(v->v, 0, j, start, count, NULL, NULL);
        if (rc >= 0)
            sum += count[jd];
    }
    if (rc < 0)
        return ls_lib_error(c, rc, "reading the blocks of", v->name);
    if (n && jd < v->ndims)
        d[jd] = sum;
    return LS_OK;
}
