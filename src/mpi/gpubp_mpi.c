/* libgpubp_mpi: the communicator table of <gpubp/comm.h> implemented with MPI, and
 * gpubp_open_mpi. Everything else (the parallel protocol) is in libgpubp, which has no MPI
 * dependency. Uses only the public headers. */
#include "gpubp/comm.h"
#include "gpubp/mpi.h"

#include <limits.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* The largest piece one MPI call moves (counts are int). */
#define PIECE ((size_t)1 << 30)

/* A context is its communicator's Fortran handle + 1 (never NULL): wrapping a communicator
 * allocates nothing, so no rank can fail alone (out of memory) before the library's first
 * agreement, where the other ranks would wait for it. */
static MPI_Comm C(void *ctx) { return MPI_Comm_f2c((MPI_Fint)((intptr_t)ctx - 1)); }

static int m_rank(void *ctx)
{
    int r = -1;
    MPI_Comm_rank(C(ctx), &r);
    return r;
}

static int m_size(void *ctx)
{
    int s = 0;
    MPI_Comm_size(C(ctx), &s);
    return s;
}

static int m_barrier(void *ctx) { return MPI_Barrier(C(ctx)); }

static int m_bcast(void *ctx, void *buf, size_t n, int root)
{
    for (size_t at = 0; at < n; at += PIECE) {
        size_t k = n - at < PIECE ? n - at : PIECE;
        int rc = MPI_Bcast((char *)buf + at, (int)k, MPI_BYTE, root, C(ctx));
        if (rc != MPI_SUCCESS) return rc;
    }
    return MPI_SUCCESS;
}

static int m_send(void *ctx, const void *buf, size_t n, int dest)
{
    for (size_t at = 0; at < n || at == 0; at += PIECE) {
        size_t k = n - at < PIECE ? n - at : PIECE;
        int rc = MPI_Send((const char *)buf + at, (int)k, MPI_BYTE, dest, 0x6270, C(ctx));
        if (rc != MPI_SUCCESS || n == 0) return rc;
    }
    return MPI_SUCCESS;
}

static int m_recv(void *ctx, void *buf, size_t n, int src)
{
    for (size_t at = 0; at < n || at == 0; at += PIECE) {
        size_t k = n - at < PIECE ? n - at : PIECE;
        int rc = MPI_Recv((char *)buf + at, (int)k, MPI_BYTE, src, 0x6270, C(ctx),
                          MPI_STATUS_IGNORE);
        if (rc != MPI_SUCCESS || n == 0) return rc;
    }
    return MPI_SUCCESS;
}

/* MPI_Gatherv when every count and the total fit an int; rank by rank messages otherwise (the
 * root decides and tells the others); a root without buffers (out of memory) has every rank
 * send its length and then pieces it receives into a stack buffer and drops. */
#define DROP_PIECE 65536
static int m_gather(void *ctx, const void *send, size_t n, void *recv, const size_t *counts,
                    int root)
{
    MPI_Comm c = C(ctx);
    int me = m_rank(ctx), size = m_size(ctx), rc;
    int big = 0, *cnt = NULL, *disp = NULL;
    if (me == root && (!recv || !counts)) {
        big = 2;
    } else if (me == root) {
        size_t total = 0;
        for (int r = 0; r < size; r++) {
            if (counts[r] > INT_MAX) big = 1;
            total += counts[r];
        }
        if (total > INT_MAX) big = 1;
        if (!big) {
            cnt = malloc((size_t)size * sizeof *cnt);
            disp = malloc((size_t)size * sizeof *disp);
            if (!cnt || !disp) big = 1; /* fall back to messages, which need no arrays */
            for (int r = 0, at = 0; !big && r < size; r++) {
                cnt[r] = (int)counts[r];
                disp[r] = at;
                at += cnt[r];
            }
        }
    }
    rc = MPI_Bcast(&big, 1, MPI_INT, root, c);
    if (rc == MPI_SUCCESS && !big) {
        rc = MPI_Gatherv(send, (int)n, MPI_BYTE, recv, cnt, disp, MPI_BYTE, root, c);
    } else if (rc == MPI_SUCCESS && big == 2 && me == root) {
        unsigned char drop[DROP_PIECE];
        for (int r = 0; rc == MPI_SUCCESS && r < size; r++) {
            uint64_t len = 0;
            if (r != root) rc = MPI_Recv(&len, 1, MPI_UINT64_T, r, 0x6271, c, MPI_STATUS_IGNORE);
            for (uint64_t at = 0; rc == MPI_SUCCESS && at < len; at += DROP_PIECE) {
                int k = len - at < DROP_PIECE ? (int)(len - at) : DROP_PIECE;
                rc = MPI_Recv(drop, k, MPI_BYTE, r, 0x6271, c, MPI_STATUS_IGNORE);
            }
        }
    } else if (rc == MPI_SUCCESS && big == 2) {
        uint64_t len = n;
        rc = MPI_Send(&len, 1, MPI_UINT64_T, root, 0x6271, c);
        for (size_t at = 0; rc == MPI_SUCCESS && at < n; at += DROP_PIECE) {
            int k = n - at < DROP_PIECE ? (int)(n - at) : DROP_PIECE;
            rc = MPI_Send((const char *)send + at, k, MPI_BYTE, root, 0x6271, c);
        }
    } else if (rc == MPI_SUCCESS && me == root) {
        size_t at = 0;
        for (int r = 0; rc == MPI_SUCCESS && r < size; r++) {
            if (r == root) memcpy((char *)recv + at, send, n);
            else rc = m_recv(ctx, (char *)recv + at, counts[r], r);
            at += counts[r];
        }
    } else if (rc == MPI_SUCCESS) {
        rc = m_send(ctx, send, n, root);
    }
    free(cnt);
    free(disp);
    return rc;
}

static int m_allreduce(void *ctx, int64_t *v, size_t n, gpubp_comm_reduce op)
{
    MPI_Op o = op == GPUBP_COMM_MIN ? MPI_MIN : op == GPUBP_COMM_MAX ? MPI_MAX : MPI_SUM;
    return MPI_Allreduce(MPI_IN_PLACE, v, (int)n, MPI_INT64_T, o, C(ctx));
}

static int m_exscan(void *ctx, uint64_t *v, size_t n)
{
    int rc = MPI_Exscan(MPI_IN_PLACE, v, (int)n, MPI_UINT64_T, MPI_SUM, C(ctx));
    if (rc == MPI_SUCCESS && m_rank(ctx) == 0) memset(v, 0, n * sizeof *v); /* undefined there */
    return rc;
}

/* Errors of c returned, not fatal; c is freed on failure. */
static int wrap(MPI_Comm c, void **out)
{
    *out = (void *)((intptr_t)MPI_Comm_c2f(c) + 1);
    int rc = MPI_Comm_set_errhandler(c, MPI_ERRORS_RETURN);
    if (rc != MPI_SUCCESS) {
        MPI_Comm_free(&c);
        *out = NULL;
    }
    return rc;
}

static int m_split(void *ctx, int color, int key, void **out)
{
    MPI_Comm c;
    int rc = MPI_Comm_split(C(ctx), color, key, &c);
    return rc == MPI_SUCCESS ? wrap(c, out) : rc;
}

static int m_split_node(void *ctx, void **out)
{
    MPI_Comm c;
    int rc = MPI_Comm_split_type(C(ctx), MPI_COMM_TYPE_SHARED, m_rank(ctx), MPI_INFO_NULL, &c);
    return rc == MPI_SUCCESS ? wrap(c, out) : rc;
}

static void m_free(void *ctx)
{
    if (!ctx) return;
    int fin = 0;
    MPI_Finalized(&fin);
    MPI_Comm c = C(ctx);
    if (!fin) MPI_Comm_free(&c);
}

static const gpubp_comm_ops mpi_ops = {
    GPUBP_COMM_OPS_VERSION, m_rank, m_size, m_barrier, m_bcast, m_gather, m_allreduce, m_exscan,
    m_split, m_split_node, m_send, m_recv, m_free,
};

int gpubp_open_mpi(gpubp_file **out, const char *path, gpubp_mode mode, const char *params,
                   MPI_Comm comm)
{
    int init = 0, fin = 0;
    MPI_Initialized(&init);
    MPI_Finalized(&fin);
    if (out) *out = NULL;
    if (!init || fin)
        return gpubp_comm_error(GPUBP_ERR_NOT_SUPPORTED, 0,
                                "gpubp_open_mpi: MPI is not initialised (call MPI_Init first) or "
                                "already finalised");
    if (comm == MPI_COMM_NULL)
        return gpubp_comm_error(GPUBP_ERR_INVALID_ARG, 0, "gpubp_open_mpi: comm is MPI_COMM_NULL");
    MPI_Comm dup;
    int rc = MPI_Comm_dup(comm, &dup);
    if (rc != MPI_SUCCESS)
        return gpubp_comm_error(GPUBP_ERR_IO, rc, "gpubp_open_mpi: MPI_Comm_dup failed");
    void *ctx = NULL;
    rc = wrap(dup, &ctx);
    if (rc != MPI_SUCCESS)
        return gpubp_comm_error(GPUBP_ERR_IO, rc, "gpubp_open_mpi: MPI_Comm_set_errhandler failed");
    return gpubp_open_comm(out, path, mode, params, &mpi_ops, ctx);
}
