/* lib/memspace: what an I/O thread does with a device job (jobs.c). Internal to lib/memspace. */
#ifndef GBP_JOBS_H
#define GBP_JOBS_H

#include "memspace/mem_internal.h"

/* Queues the device-to-host copy of chunk c of the array at base into slot s (at byte `shift`)
 * and records the slot's event. */
int gbp_jobs_fill_slot(gbp_mem *m, int s, size_t shift, const void *base, size_t elsize,
                       const gbp_chunk *c);
/* A device write taken by a thread: queues the copy of its first piece (or whole chunk), once. */
int gbp_jobs_fill(gbp_mem *m, job *j);
/* Writes device write j's slot as its copies land; queues the copy of `next` (may be NULL) on
 * the way, its failure going to *rc_next. */
int gbp_jobs_write_dev(gbp_mem *m, job *j, job *next, int *rc_next);
/* A device read: the span into the slot, then copied to the device. */
int gbp_jobs_read_dev(gbp_mem *m, job *j);

#endif /* GBP_JOBS_H */
