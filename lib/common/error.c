/* The thread-local last-error record. */
#include "common/error.h"

#include <stdarg.h>
#include <stdio.h>

static _Thread_local char err_msg[1024];
static _Thread_local int err_native;

int gbp_error(int status, int native, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err_msg, sizeof err_msg, fmt, ap);
    va_end(ap);
    err_native = native;
    return status;
}

void gbp_error_clear(void)
{
    err_msg[0] = '\0';
    err_native = 0;
}

const char *gbp_error_message(void) { return err_msg; }
int gbp_error_native(void) { return err_native; }

int gbp_nomem(void) { return gbp_error(GPUBP_ERR_NOMEM, 0, "out of memory"); }

void gbp_error_save(gbp_saved_error *e, int rc, size_t keep)
{
    if (keep > sizeof e->msg) keep = sizeof e->msg;
    e->rc = rc;
    e->native = rc < 0 ? err_native : 0;
    e->msg[0] = '\0';
    if (rc < 0 && keep > 0) snprintf(e->msg, keep, "%s", err_msg);
}

int gbp_error_restore(const gbp_saved_error *e, int rc2)
{
    return e->rc < 0 ? gbp_error(e->rc, e->native, "%s", e->msg) : rc2;
}
