/* lib/common: error records, allocation wrappers, growable buffers, parameters, type tables.
 * Every other layer builds on this one; it depends on nothing but libc and the public header.
 * This umbrella includes the module's headers, one per .c (the files of lib/common include them
 * one by one). */
#ifndef GBP_COMMON_H
#define GBP_COMMON_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "gpubp.h"

#include "common/alloc.h"
#include "common/buf.h"
#include "common/clock.h"
#include "common/error.h"
#include "common/params.h"
#include "common/types.h"

#endif /* GBP_COMMON_H */
