/* lib/engine/pwriter.h: see pwriter.c. */
#ifndef GBP_ENGINE_PWRITER_H
#define GBP_ENGINE_PWRITER_H

#include "engine/engine_internal.h"

/* The parallel writer (gpubp_open_comm). */
int gbp_pwriter_open(gpubp_file *f);
void gbp_pwriter_free(gpubp_file *f);
int gbp_pwriter_close_sync(gpubp_file *f, int rc);
int gbp_pwriter_stage(gpubp_file *f, gbp_wblock *wb);
int gbp_pwriter_end_step(gpubp_file *f);

#endif /* GBP_ENGINE_PWRITER_H */
