/* lib/memspace: writes cut into jobs (mem_write.c): device blocks into chunks the I/O threads
 * copy and write, large contiguous host blocks into pieces they pwrite from the user's buffer,
 * strided host blocks packed through the bounce buffer. Internal to lib/memspace; its calls
 * (gbp_mem_write, gbp_mem_write_host_async, gbp_mem_wait_writes) are the module's, declared in
 * memspace.h. */
#ifndef GBP_MEM_WRITE_H
#define GBP_MEM_WRITE_H

#include "memspace/mem_internal.h"

/* Contiguous host blocks under GBP_HOST_ASYNC_MIN, written on the caller's thread: min/max of
 * this many bytes while they are in the cache, then their pwrite. */
#define GBP_HOST_SYNC_PIECE ((size_t)8 << 20)

#endif /* GBP_MEM_WRITE_H */
