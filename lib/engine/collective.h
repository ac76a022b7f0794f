/* lib/engine/collective.h: see collective.c. */
#ifndef GBP_ENGINE_COLLECTIVE_H
#define GBP_ENGINE_COLLECTIVE_H

#include "engine/engine_internal.h"

/* Failed communicator operations seen by the calling thread so far: compared before and after
 * a collective call, it tells a failed operation from an agreed failure status. */
unsigned long gbp_comm_failures_seen(void);
int gbp_comm_make(gbp_comm **out, const gpubp_comm_ops *ops, void *ctx);
/* gbp_comm_make for gpubp_open_comm: on failure (out of memory) this rank still takes part in
 * the open's first agreement before ctx is released, so that no other rank waits for it. */
int gbp_comm_open(gbp_comm **out, const gpubp_comm_ops *ops, void *ctx);
/* A rank that cannot open (bad argument) takes part in the open's first agreement with rc,
 * then releases ctx; returns the agreed status. */
int gbp_comm_open_failed(const gpubp_comm_ops *ops, void *ctx, int rc, const char *what);
void gbp_comm_free(gbp_comm *c);
int gbp_comm_barrier(gbp_comm *c);
int gbp_comm_bcast(gbp_comm *c, void *buf, size_t n, int root);
int gbp_comm_allreduce(gbp_comm *c, int64_t *v, size_t n, gpubp_comm_reduce op);
int gbp_comm_exscan(gbp_comm *c, uint64_t *v, size_t n);
int gbp_comm_send(gbp_comm *c, const void *buf, size_t n, int dest);
int gbp_comm_recv(gbp_comm *c, void *buf, size_t n, int src);
int gbp_comm_split(gbp_comm *c, int color, int key, gbp_comm **out);
int gbp_comm_split_node(gbp_comm *c, gbp_comm **out);
/* Gathers n bytes of every rank to root; on root *all (rank order) and *counts are new arrays
 * the caller frees (NULL elsewhere). */
int gbp_comm_gatherv(gbp_comm *c, const void *p, size_t n, int root, uint8_t **all,
                     size_t **counts);
/* Every rank returns root's rc, with root's message and native code in its error record. */
int gbp_comm_agree(gbp_comm *c, int rc, int root);
/* Every rank returns the same status: OK when rc is OK everywhere, else the first failing rank's
 * status with a message "<what> failed on k of n ranks: rank r: <its message>; ...". */
int gbp_comm_agree_all(gbp_comm *c, int rc, const char *what);
/* The usual case costs one allreduce of the number of failing ranks (rc < 0); only if some
 * rank failed, every rank returns gbp_comm_agree_all's status and message; else rc (statuses
 * > 0, END_OF_STREAM / NOT_READY, pass through). */
int gbp_comm_check(gbp_comm *c, int rc, const char *what);
/* Rank 0's half of it: all/cnt as gathered, per rank [i64 status][u32 length][message] and
 * anything after it. */
int gbp_comm_failures(gbp_comm *c, const uint8_t *all, const size_t *cnt, const char *what);

#endif /* GBP_ENGINE_COLLECTIVE_H */
