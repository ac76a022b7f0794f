/* lib/memspace: the pinned slots of a context and the process-wide slot cache (slots.c).
 * Internal to lib/memspace; the cache's calls are in memspace.h. */
#ifndef GBP_SLOTS_H
#define GBP_SLOTS_H

#include "memspace/mem_internal.h"

/* The pinned pool, its events and the I/O threads, once per context at the first device
 * transfer (the device must be open). */
int gbp_slots_pool_open(gbp_mem *m);
/* Frees (or keeps in the process-wide cache) a slot buffer of m's size; NULL is ignored. */
void gbp_slots_free(gbp_mem *m, uint8_t *buf);
/* Takes slot next mod N for the caller's thread (the stage), waiting until it is free and the
 * copies out of it completed; gbp_slots_release gives it back. */
int gbp_slots_acquire(gbp_mem *m, int *out);
void gbp_slots_release(gbp_mem *m, int i);

#endif /* GBP_SLOTS_H */
