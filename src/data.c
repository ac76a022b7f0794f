/* The public API, Data section of <gpubp.h>: puts and gets, perform_puts and perform_gets. */
#include "engine/engine.h"
#include "engine/get.h"
#include "engine/handles.h"
#include "engine/rvar.h"

int gpubp_perform_puts(gpubp_file *f)
{
    GBP_CHECK_ARG(f);
    GBP_RETURN_ERROR_IF(!gbp_is_write_mode(f), GPUBP_ERR_WRONG_MODE,
                        "gpubp_perform_puts: %s is open for reading", f->path);
    if (!f->in_step) return GPUBP_OK;
    return gbp_engine_perform_puts(f);
}

int gpubp_put(gpubp_file *f, gpubp_variable *v, const void *data, gpubp_launch mode)
{
    GBP_CHECK_ARG(f);
    return gbp_engine_put(f, v, data, mode);
}

int gpubp_get(gpubp_file *f, gpubp_variable *v, void *data, gpubp_launch mode)
{
    GBP_CHECK_ARG(f);
    int rc = !v    ? gbp_error(GPUBP_ERR_INVALID_ARG, 0, "gpubp_get: argument 'v' is NULL")
             : !data ? gbp_error(GPUBP_ERR_INVALID_ARG, 0, "gpubp_get: argument 'data' is NULL")
                     : GPUBP_OK;
    /* an unreadable type is the same on every rank: the get fails there, not the step */
    if (rc == GPUBP_OK && v->file == f) GBP_FORWARD_IF_ERROR(gbp_rvar_check_readable(v, "gpubp_get"));
    if (rc == GPUBP_OK) rc = gbp_reader_get(f, v, data, mode);
    return gbp_reader_get_failed(f, rc);
}

int gpubp_perform_gets(gpubp_file *f)
{
    GBP_CHECK_ARG(f);
    GBP_RETURN_ERROR_IF(gbp_is_write_mode(f), GPUBP_ERR_WRONG_MODE,
                        "gpubp_perform_gets: %s is open for writing", f->path);
    return gbp_reader_perform(f);
}
