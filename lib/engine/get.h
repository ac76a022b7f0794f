/* lib/engine/get.h: see get.c. */
#ifndef GBP_ENGINE_GET_H
#define GBP_ENGINE_GET_H

#include "engine/engine_internal.h"

int gbp_reader_get_failed(gpubp_file *f, int rc);
int gbp_reader_get(gpubp_file *f, gpubp_variable *v, void *data, gpubp_launch mode);
int gbp_reader_perform(gpubp_file *f);

#endif /* GBP_ENGINE_GET_H */
