/* Header test: <gpubp/version.h> on its own, strict C11. */
#include <gpubp/version.h>

#if !defined(GPUBP_VERSION_MAJOR) || !defined(GPUBP_VERSION_MINOR) || \
    !defined(GPUBP_VERSION_PATCH) || !defined(GPUBP_VERSION_NUMBER)
#error "<gpubp/version.h> lacks a version macro"
#endif
#if GPUBP_VERSION_NUMBER != GPUBP_VERSION_MAJOR * 10000 + GPUBP_VERSION_MINOR * 100 + \
                            GPUBP_VERSION_PATCH
#error "GPUBP_VERSION_NUMBER does not match its parts"
#endif

#include "header/header_version.h"

const char *header_version_string(void) { return GPUBP_VERSION_STRING; }
