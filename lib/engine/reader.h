/* lib/engine/reader.h: see reader.c. */
#ifndef GBP_ENGINE_READER_H
#define GBP_ENGINE_READER_H

#include "engine/engine_internal.h"

int gbp_reader_open(gpubp_file *f);
void gbp_reader_free(gpubp_file *f);
int gbp_reader_begin_step(gpubp_file *f);
int gbp_reader_end_step(gpubp_file *f);
int gbp_reader_inquire(gpubp_variable **out, gpubp_file *f, const char *name);

#endif /* GBP_ENGINE_READER_H */
