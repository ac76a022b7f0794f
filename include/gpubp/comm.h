/*
 * libgpubp, the abstract communicator: how a parallel program's ranks open one dataset together.
 *
 * The whole parallel protocol (subfile groups, prefix sums of process-group sizes, the merge of
 * every rank's metadata into md.0 and md.idx by rank 0, the parallel reader's broadcast of the
 * metadata) lives in the serial library and talks to the other ranks only through the small
 * table of operations below. libgpubp_mpi implements it with MPI (<gpubp/mpi.h>,
 * gpubp_open_mpi); tests implement it with threads. Most programs never include this header.
 *
 * Plain C11, C++ compatible; includes no MPI header.
 */
#ifndef GPUBP_COMM_H
#define GPUBP_COMM_H

#include <stdint.h>

#include "gpubp.h"

#ifdef __cplusplus
extern "C" {
#endif

#define GPUBP_COMM_OPS_VERSION 1

typedef enum gpubp_comm_reduce {
    GPUBP_COMM_MIN = 0,
    GPUBP_COMM_MAX = 1,
    GPUBP_COMM_SUM = 2
} gpubp_comm_reduce;

/* The operations of a communicator `ctx` (opaque to the library). Every operation is collective
 * over the communicator unless it says otherwise, and every rank calls them in the same order.
 * Each returns 0 on success or a non-zero native code (an MPI error code, an errno) that the
 * library reports as GPUBP_ERR_IO with that code in gpubp_last_errno(). Byte counts may exceed
 * INT_MAX; an implementation that cannot move them in one call must split them. */
typedef struct gpubp_comm_ops {
    unsigned version;                               /* GPUBP_COMM_OPS_VERSION */
    int (*rank)(void *ctx);                         /* local: this rank, 0 … size-1 */
    int (*size)(void *ctx);                         /* local */
    int (*barrier)(void *ctx);
    /* root's n bytes at buf are copied into buf on every other rank */
    int (*bcast)(void *ctx, void *buf, size_t n, int root);
    /* gather-v to root: rank r sends n bytes; on root, counts[r] is rank r's n and recv receives
     * every rank's bytes back to back in rank order (recv and counts are ignored elsewhere). On
     * a root out of memory recv and counts are NULL: it takes part and discards the bytes. */
    int (*gather)(void *ctx, const void *send, size_t n, void *recv, const size_t *counts,
                  int root);
    /* element-wise reduction of n int64 values in place, result on every rank */
    int (*allreduce_i64)(void *ctx, int64_t *vals, size_t n, gpubp_comm_reduce op);
    /* exclusive prefix sum of n uint64 values in place (rank 0 gets zeros) */
    int (*exscan_u64)(void *ctx, uint64_t *vals, size_t n);
    /* a new communicator of the ranks with the same color, ordered by key (then rank), as
     * MPI_Comm_split; *out is released with (*free)(*out) */
    int (*split)(void *ctx, int color, int key, void **out);
    /* a new communicator of the ranks that share this rank's node (memory), in rank order, as
     * MPI_Comm_split_type(MPI_COMM_TYPE_SHARED); *out is released with (*free)(*out) */
    int (*split_node)(void *ctx, void **out);
    /* point to point (not collective): n bytes to / from one rank; messages between two ranks
     * arrive in the order they were sent */
    int (*send)(void *ctx, const void *buf, size_t n, int dest);
    int (*recv)(void *ctx, void *buf, size_t n, int src);
    /* releases ctx (not collective) */
    void (*free)(void *ctx);
} gpubp_comm_ops;

/* Opens a dataset on every rank of the communicator (ops, ctx): gpubp_open for parallel
 * programs, and the hook libgpubp_mpi's gpubp_open_mpi is built on. Collective: every rank
 * calls it with the same path, mode and params.
 *
 * Writing (WRITE, APPEND): every rank puts its own blocks; each gpubp_end_step (and
 * gpubp_close) is collective and commits one step holding every rank's blocks, in rank order.
 * Ranks are grouped onto subfiles (parameters aggregators and aggregation, docs/parameters.md).
 * A failure on any rank fails gpubp_end_step on every rank with the same status and a message
 * naming the failing ranks; that step is not committed, earlier ones stay readable.
 * Reading (READ, READ_RANDOM_ACCESS): rank 0 reads the metadata and broadcasts it; gpubp_open,
 * gpubp_begin_step, gpubp_end_step and gpubp_close are collective, gets are not; a get that fails
 * on one rank in a step fails that step's gpubp_end_step on every rank. A failed communicator
 * operation (GPUBP_ERR_IO on that rank) cannot be agreed on.
 *
 * Ownership: ctx belongs to the library from this call on, whatever the outcome; it is released
 * with ops->free at gpubp_close (or before this call returns on failure). ops must stay valid
 * until then. A communicator of one rank gives exactly the files gpubp_open gives.
 * Errors: those of gpubp_open; INVALID_ARG (NULL ops or ctx, a bad ops->version); IO (a
 * communicator operation failed). Errors of gpubp_open that depend on one rank's view (a
 * missing directory) are seen by every rank.
 */
GPUBP_API int gpubp_open_comm(gpubp_file **out, const char *path, gpubp_mode mode,
                              const char *params, const gpubp_comm_ops *ops, void *ctx);

/* Records a failure of a communicator implementation (before gpubp_open_comm could be called:
 * no MPI, a failed duplication) as this thread's last error: gpubp_last_error() then returns
 * message (copied; NULL is taken as "") and gpubp_last_errno() native. Returns status. */
GPUBP_API int gpubp_comm_error(int status, int native, const char *message);

#ifdef __cplusplus
}
#endif

#endif /* GPUBP_COMM_H */
