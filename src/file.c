/* The public API, Files section of <gpubp.h>: open, close and the step calls (argument and mode
 * checks; lib/engine/engine.c chooses the role). */
#include "engine/engine.h"
#include "engine/handles.h"

#include "gpubp/cuda.h"

int gpubp_open(gpubp_file **out, const char *path, gpubp_mode mode, const char *params)
{
    GBP_CHECK_ARG(out);
    *out = NULL;
    return gbp_engine_open(out, path, mode, params, NULL);
}

int gpubp_close(gpubp_file *f)
{
    if (!f) return GPUBP_OK;
    int rc = gbp_engine_close(f);
    if (rc == GPUBP_OK) {
        gbp_engine_free(f);
        return rc;
    }
    /* tearing down may run library code that resets the error record: keep this failure's */
    gbp_saved_error e;
    gbp_error_save(&e, rc, sizeof e.msg);
    gbp_engine_free(f);
    return gbp_error_restore(&e, rc);
}

int gpubp_begin_step(gpubp_file *f)
{
    GBP_CHECK_ARG(f);
    GBP_RETURN_ERROR_IF(f->in_step, GPUBP_ERR_WRONG_MODE,
                        "gpubp_begin_step: a step is already open on %s", f->path);
    GBP_RETURN_ERROR_IF(f->mode == GPUBP_MODE_READ_RANDOM_ACCESS, GPUBP_ERR_WRONG_MODE,
                        "gpubp_begin_step: %s is open in random-access mode; use "
                        "gpubp_set_step_selection", f->path);
    return gbp_engine_begin_step(f);
}

int gpubp_end_step(gpubp_file *f)
{
    GBP_CHECK_ARG(f);
    GBP_RETURN_ERROR_IF(!f->in_step, GPUBP_ERR_WRONG_MODE,
                        "gpubp_end_step: no step is open on %s", f->path);
    return gbp_engine_end_step(f);
}

int gpubp_steps(const gpubp_file *f, size_t *nsteps)
{
    GBP_CHECK_ARG(f);
    GBP_CHECK_ARG(nsteps);
    *nsteps = gbp_is_write_mode(f) ? f->wr.idx_records : f->rd.ix.nsteps;
    if (f->mode == GPUBP_MODE_READ_RANDOM_ACCESS) *nsteps = f->rd.nrecords;
    return GPUBP_OK;
}

int gpubp_current_step(const gpubp_file *f, size_t *step)
{
    GBP_CHECK_ARG(f);
    GBP_CHECK_ARG(step);
    GBP_RETURN_ERROR_IF(f->mode == GPUBP_MODE_READ_RANDOM_ACCESS, GPUBP_ERR_WRONG_MODE,
                        "gpubp_current_step: no current step in random-access mode");
    if (gbp_is_write_mode(f)) {
        *step = f->wr.idx_records;
        return GPUBP_OK;
    }
    GBP_RETURN_ERROR_IF(!f->in_step, GPUBP_ERR_WRONG_MODE, "gpubp_current_step: no step is open");
    *step = f->rd.cur_step;
    return GPUBP_OK;
}
