/* lib/memspace: the job queue and the I/O threads of a context (ioq.c). Internal to
 * lib/memspace. */
#ifndef GBP_IOQ_H
#define GBP_IOQ_H

#include "memspace/mem_internal.h"

/* Starts the I/O threads and allocates their queue, once per context. */
int gbp_ioq_open(gbp_mem *m);
/* Stops and joins the threads once the queue is empty (at close). */
void gbp_ioq_stop(gbp_mem *m);
/* Queues a copy of job j in the current epoch. Device jobs and commits always get room (the
 * queue grows); host jobs wait until there is room. */
void gbp_ioq_submit(gbp_mem *m, const job *j);

#endif /* GBP_IOQ_H */
