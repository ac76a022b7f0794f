/* A communicator of threads for <gpubp/comm.h>: fc_run starts n threads, one per rank, in one
 * process, so the parallel protocol runs under ASan/TSan and in CI without MPI. */
#ifndef GPUBP_TEST_FAKE_COMM_H
#define GPUBP_TEST_FAKE_COMM_H

#include "gpubp/comm.h"

extern const gpubp_comm_ops fc_ops;

/* The body of one rank: ctx is its communicator, owned by fc_run; each gpubp_open_comm gets a
 * handle of its own, fc_dup(ctx), with &fc_ops. */
typedef void (*fc_body)(void *ctx, int rank, int size, void *arg);

/* Runs body on n ranks (threads) and joins them. split_node groups ranks_per_node consecutive
 * ranks (0: all on one node). Returns 0, or -1 if the threads could not be started. */
int fc_run(int n, int ranks_per_node, fc_body body, void *arg);

/* A new handle on the same ranks as ctx (not collective); freed by the library at close. */
void *fc_dup(void *ctx);

/* Makes the next `op` operation ("bcast", "gather", ...) on this rank's handles fail with code
 * 99 once (0 or NULL disarms). */
void fc_fail_next(void *ctx, const char *op);

#endif
