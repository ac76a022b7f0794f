/* lib/engine/scan.h: see scan.c. */
#ifndef GBP_ENGINE_SCAN_H
#define GBP_ENGINE_SCAN_H

#include "engine/engine_internal.h"

int gbp_scan_until(gpubp_file *f, size_t nsteps);
int gbp_scan_summary(gpubp_file *f);
void gbp_scan_drop_window(gpubp_file *f);

#endif /* GBP_ENGINE_SCAN_H */
