/* lib/common/error.h: see error.c. */
#ifndef GBP_COMMON_ERROR_H
#define GBP_COMMON_ERROR_H

#include <stddef.h>

#include "gpubp.h"

/* gbp_error() records a message (printf format) and a native code for this thread and returns
 * the status, so that `return gbp_error(GPUBP_ERR_X, 0, "...")` reports and returns in one go. */
int gbp_error(int status, int native, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;
void gbp_error_clear(void);
const char *gbp_error_message(void);
int gbp_error_native(void);

#define GBP_RETURN_ERROR_IF(cond, status, ...) \
    do { if (cond) return gbp_error((status), 0, __VA_ARGS__); } while (0)
#define GBP_FORWARD_IF_ERROR(expr) \
    do { int gbp_rc_ = (expr); if (gbp_rc_ != 0) return gbp_rc_; } while (0)
#define GBP_CHECK_ARG(p) \
    GBP_RETURN_ERROR_IF((p) == NULL, GPUBP_ERR_INVALID_ARG, "%s: argument '%s' is NULL", __func__, #p)

/* The out-of-memory failure: records "out of memory" and returns GPUBP_ERR_NOMEM.
 * GBP_CHECK_ALLOC(p) returns it from the calling function when p is NULL. */
int gbp_nomem(void);
#define GBP_CHECK_ALLOC(p) \
    do { if ((p) == NULL) return gbp_nomem(); } while (0)

/* A failure kept across a clean-up call that may fail too (and overwrite this thread's error
 * record). gbp_error_save keeps rc and, for a failure (rc < 0), this thread's native code and
 * message, cut to `keep` bytes with its terminator (at most sizeof msg: pass sizeof e->msg to keep
 * all of it). gbp_error_restore returns the kept failure with its message and native code, else
 * (rc kept >= 0) rc2, the clean-up's status. */
typedef struct gbp_saved_error {
    int rc, native;
    char msg[1024];
} gbp_saved_error;
void gbp_error_save(gbp_saved_error *e, int rc, size_t keep);
int gbp_error_restore(const gbp_saved_error *e, int rc2);

#endif /* GBP_COMMON_ERROR_H */
