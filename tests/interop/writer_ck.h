/* CK(call): the standalone writers of the interop tests stop at the first failing call, with its
 * status and gpubp_last_error() on stderr. */
#ifndef GPUBP_TEST_WRITER_CK_H
#define GPUBP_TEST_WRITER_CK_H

#include <stdio.h>
#include <stdlib.h>

#include "gpubp.h"

#define CK(x)                                                                                 \
    do {                                                                                      \
        int rc_ = (x);                                                                        \
        if (rc_ != GPUBP_OK) {                                                                \
            fprintf(stderr, "%s:%d: %s -> %d (%s): %s\n", __FILE__, __LINE__, #x, rc_,        \
                    gpubp_strerror(rc_), gpubp_last_error());                                 \
            exit(1);                                                                          \
        }                                                                                     \
    } while (0)

#endif
