/* lib/memspace: min/max of device blocks (mem_minmax.c). Internal to lib/memspace. */
#ifndef GBP_MEM_MINMAX_H
#define GBP_MEM_MINMAX_H

#include "memspace/mem_internal.h"

/* Queues the reduction of box src of the device array at base; min and max receive the result
 * at gbp_mem_minmax_deliver. */
int gbp_mem_minmax_queue(gbp_mem *m, const void *base, int type, const gbp_box *src, void *min,
                         void *max);
/* After the device copies completed: results to their owners and the user's stream signalled,
 * unless a failure is kept. Forgets every pending result. */
void gbp_mem_minmax_deliver(gbp_mem *m);

#endif /* GBP_MEM_MINMAX_H */
