/* The reliability fixtures (tests/support/rel_util.h). */
#include "support/rel_util.h"

void rel_params(const rel_opts *o, char *buf, size_t n)
{
    snprintf(buf, n, "subfiles=%d%s%s", o->subfiles ? o->subfiles : 1,
             o->dev ? ",device=simulated,gpu_layout=row_major,chunk_mib=1,pool_slots=2" : "",
             o->fsync ? ",fsync=1" : "");
}

int rel_define(gpubp_file *w, const rel_opts *o, rel_vars *v)
{
    size_t shape[2] = {REL_ROWS, REL_COLS}, st[2] = {0, 0}, ct[2] = {REL_ROWS / 2, REL_COLS};
    size_t lc[1] = {REL_LOC}, dn[1] = {REL_DEV_N}, z[1] = {0};
    int rc;
    memset(v, 0, sizeof *v);
    if ((rc = gpubp_define_variable(&v->g, w, "g", GPUBP_TYPE_FLOAT, 2, shape, st, ct))) return rc;
    if ((rc = gpubp_define_variable(&v->n, w, "n", GPUBP_TYPE_INT64, 0, NULL, NULL, NULL))) return rc;
    if ((rc = gpubp_define_variable(&v->s, w, "s", GPUBP_TYPE_STRING, 0, NULL, NULL, NULL))) return rc;
    if ((rc = gpubp_define_variable(&v->loc, w, "loc", GPUBP_TYPE_INT32, 1, NULL, NULL, lc))) return rc;
    if (o->dev) {
        if ((rc = gpubp_define_variable(&v->d, w, "d", GPUBP_TYPE_DOUBLE, 1, dn, z, dn))) return rc;
        if ((rc = gpubp_set_memory_space(v->d, GPUBP_MEM_GPU))) return rc;
    }
    return GPUBP_OK;
}

int rel_put_step(gpubp_file *w, const rel_opts *o, rel_vars *v, size_t s,
                 double *devbuf)
{
    int rc;
    float g[REL_ROWS / 2 * REL_COLS];
    for (size_t b = 0; b < 2; b++) {
        size_t st[2] = {b * REL_ROWS / 2, 0}, ct[2] = {REL_ROWS / 2, REL_COLS};
        for (size_t i = 0; i < REL_ROWS / 2 * REL_COLS; i++) g[i] = ts_step_f(s, b * REL_ROWS / 2 * REL_COLS + i);
        if ((rc = gpubp_set_selection(v->g, 2, st, ct))) return rc;
        if ((rc = gpubp_put(w, v->g, g, GPUBP_SYNC))) return rc;
    }
    int64_t n = (int64_t)s;
    if ((rc = gpubp_put(w, v->n, &n, GPUBP_SYNC))) return rc;
    char str[32];
    snprintf(str, sizeof str, "step-%zu", s);
    if ((rc = gpubp_put(w, v->s, str, GPUBP_SYNC))) return rc;
    int32_t loc[REL_LOC];
    for (int i = 0; i < REL_LOC; i++) loc[i] = (int32_t)(s * 10 + (size_t)i);
    if ((rc = gpubp_put(w, v->loc, loc, GPUBP_SYNC))) return rc;
    if (o->dev) {
        for (size_t i = 0; i < REL_DEV_N; i++) devbuf[i] = ts_step_d(s, i);
        if ((rc = gpubp_put(w, v->d, devbuf, GPUBP_DEFERRED))) return rc;
    }
    if (o->no_attr) return GPUBP_OK;
    double a = (double)s + 0.25;
    return gpubp_define_attribute(w, "last_step", GPUBP_TYPE_DOUBLE, &a, 1);
}

int rel_write(const char *path, gpubp_mode mode, const rel_opts *o, size_t first,
              size_t n, int keep_going, size_t *committed, size_t *ok_steps)
{
    char params[256];
    rel_params(o, params, sizeof params);
    gpubp_file *w = NULL;
    rel_vars v;
    double *devbuf = NULL;
    int first_rc = GPUBP_OK;
    *committed = 0;
    int rc = gpubp_open(&w, path, mode, params);
    if (rc) return rc;
    if (o->dev) {
        devbuf = gbp_sim_alloc(REL_DEV_N * sizeof(double));
        if (!devbuf) {
            gpubp_close(w);
            return GPUBP_ERR_NOMEM;
        }
    }
    rc = rel_define(w, o, &v);
    if (rc) first_rc = rc;
    size_t s = first;
    for (size_t k = 0; k < n && first_rc == GPUBP_OK; k++, s++) {
        rc = gpubp_begin_step(w);
        if (rc == GPUBP_OK) rc = rel_put_step(w, o, &v, s, devbuf);
        int rc2 = gpubp_end_step(w);
        if (rc == GPUBP_OK) rc = rc2;
        if (rc == GPUBP_OK) {
            if (ok_steps) ok_steps[*committed] = s;
            (*committed)++;
        } else if (first_rc == GPUBP_OK) {
            first_rc = rc;
            if (keep_going) first_rc = GPUBP_OK, keep_going--; /* carry on with the next step */
            else break;
        }
    }
    rc = gpubp_close(w);
    if (first_rc == GPUBP_OK) first_rc = rc;
    if (devbuf) gbp_sim_free(devbuf);
    return first_rc;
}

int rel_verify(const char *path, const rel_opts *o, const size_t *steps,
               size_t nsteps)
{
    return rel_verify_x(path, o, steps, nsteps, 0);
}

int rel_verify_x(const char *path, const rel_opts *o, const size_t *steps,
                 size_t nsteps, int extra_ok)
{
    char params[256];
    rel_params(o, params, sizeof params);
    gpubp_file *r = NULL;
    int rc = gpubp_open(&r, path, GPUBP_MODE_READ_RANDOM_ACCESS, params);
    if (rc != GPUBP_OK) {
        if (nsteps == 0) return 0; /* nothing committed: a missing or empty dataset is fine */
        fprintf(stderr, "verify %s: open -> %d: %s\n", path, rc, gpubp_last_error());
        return -1;
    }
    size_t have = 0;
    gpubp_steps(r, &have);
    int bad = 0;
    if (nsteps == 0 && have == 1) {
        /* a writer closed without committing a step commits one empty step (as ADIOS2) */
        size_t nv = 1;
        const char *const *names;
        if (gpubp_available_variables(r, &nv, &names) == GPUBP_OK && nv == 0) have = 0;
    }
    if (have != nsteps && !(extra_ok && have == nsteps + 1)) {
        fprintf(stderr, "verify %s: %zu steps, expected %zu\n", path, have, nsteps);
        bad = 1;
    }
    gpubp_variable *g = NULL, *n = NULL, *s = NULL, *loc = NULL, *d = NULL;
    if (nsteps && !bad) {
        if (gpubp_inquire_variable(&g, r, "g") || gpubp_inquire_variable(&n, r, "n") ||
            gpubp_inquire_variable(&s, r, "s") || gpubp_inquire_variable(&loc, r, "loc") ||
            (o->dev && gpubp_inquire_variable(&d, r, "d"))) {
            fprintf(stderr, "verify %s: inquire: %s\n", path, gpubp_last_error());
            bad = 1;
        }
    }
    double *dv = o->dev ? malloc(REL_DEV_N * sizeof(double)) : NULL;
    for (size_t k = 0; k < nsteps && !bad; k++) {
        size_t st = steps[k];
        float gv[REL_ROWS * REL_COLS];
        int64_t nv = -1;
        char sv[64] = {0};
        int32_t lv[REL_LOC];
        size_t sz = 0;
        if (gpubp_set_step_selection(g, k, 1) || gpubp_get(r, g, gv, GPUBP_SYNC) ||
            gpubp_set_step_selection(n, k, 1) || gpubp_get(r, n, &nv, GPUBP_SYNC) ||
            gpubp_set_step_selection(s, k, 1) || gpubp_selection_size(s, &sz) || sz > sizeof sv ||
            gpubp_get(r, s, sv, GPUBP_SYNC) || gpubp_set_step_selection(loc, k, 1) ||
            gpubp_set_block_selection(loc, 0) || gpubp_get(r, loc, lv, GPUBP_SYNC)) {
            fprintf(stderr, "verify %s: step %zu: get: %s\n", path, k, gpubp_last_error());
            bad = 1;
            break;
        }
        for (size_t i = 0; i < REL_ROWS * REL_COLS; i++)
            if (gv[i] != ts_step_f(st, i)) {
                fprintf(stderr, "verify %s: step %zu g[%zu] = %g, expected %g\n", path, k, i,
                        (double)gv[i], (double)ts_step_f(st, i));
                bad = 1;
                break;
            }
        char want[32];
        snprintf(want, sizeof want, "step-%zu", st);
        if (nv != (int64_t)st || strcmp(sv, want) != 0) {
            fprintf(stderr, "verify %s: step %zu: n = %lld, s = '%s'; expected %zu, '%s'\n", path,
                    k, (long long)nv, sv, st, want);
            bad = 1;
        }
        for (int i = 0; i < REL_LOC; i++)
            if (lv[i] != (int32_t)(st * 10 + (size_t)i)) bad = 1;
        if (o->dev && !bad) {
            memset(dv, 0, REL_DEV_N * sizeof(double));
            if (gpubp_set_step_selection(d, k, 1) || gpubp_get(r, d, dv, GPUBP_SYNC)) {
                fprintf(stderr, "verify %s: step %zu: get d: %s\n", path, k, gpubp_last_error());
                bad = 1;
            }
            for (size_t i = 0; i < REL_DEV_N && !bad; i++)
                if (dv[i] != ts_step_d(st, i)) {
                    fprintf(stderr, "verify %s: step %zu d[%zu] = %g\n", path, k, i, dv[i]);
                    bad = 1;
                }
        }
    }
    free(dv);
    gpubp_close(r);
    return bad ? -1 : 0;
}

size_t rel_idx_records(const char *path)
{
    char p[1024];
    snprintf(p, sizeof p, "%s/md.idx", path);
    struct stat st;
    if (stat(p, &st) != 0 || st.st_size < 64) return 0;
    return (size_t)(st.st_size - 64) / 64;
}

long rel_stride(void)
{
    const char *q = getenv("GPUBP_RELIABILITY_QUICK");
    return q && *q == '1' ? 7 : 1;
}

void rel_rmdir(const char *path)
{ ts_remove_tree(path); }

