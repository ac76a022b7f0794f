/* lib/memspace/dz_cache.c: the process-wide cache of the GPU codec path's per-file device state
 * (mem_dz.c): a closed file's codec state, its caller's state and its scratch buffers are parked
 * and taken by the next file of the process on the same backend and device. */
#ifndef GBP_DZ_CACHE_H
#define GBP_DZ_CACHE_H

#include "memspace/mem_internal.h"

/* At close (gbp_mem_dz_free): 1 when m's device codec state went to the cache (m's fields are
 * cleared), 0 when the caller frees it (no room, the cache off, nothing to park). */
int gbp_dz_park(gbp_mem *m);
/* Before m's first device codec state, user state or scratch buffer: a parked state of m's
 * backend and device becomes m's (what m has already is kept, the kit's counterpart freed). */
void gbp_dz_take(gbp_mem *m);
/* The simulated device uses the cache too (tests; 0 frees what it parked). Frees everything
 * parked (also at exit). How many states are parked. */
void gbp_dz_cache_sim(int on);
void gbp_dz_cache_trim(void);
int gbp_dz_cache_count(void);

#endif /* GBP_DZ_CACHE_H */
