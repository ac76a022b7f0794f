/*
 * libgpubp_mpi: opening one dataset from every rank of an MPI communicator.
 *
 * Link with libgpubp_mpi (pkg-config gpubp-mpi, or CMake gpubp::gpubp_mpi), which depends on
 * libgpubp and MPI. Everything after the open is the ordinary API of <gpubp.h>; which calls are
 * collective is written at gpubp_open_comm in <gpubp/comm.h>.
 */
#ifndef GPUBP_MPI_H
#define GPUBP_MPI_H

#include <mpi.h>

#include "gpubp.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Opens path on every rank of comm (collective; same path, mode and params on every rank).
 * The library duplicates comm (MPI_Comm_dup, errors returned rather than fatal on the
 * duplicate), so its messages never mix with the program's; comm may be freed after this call.
 * Writers: each rank writes its own blocks (host or device; device data is staged through
 * each rank's own pinned pool) into the subfile of its group: one group per node by default
 * (MPI_Comm_split_type SHARED), or `aggregators=N` contiguous groups of ranks; rank 0 merges the
 * metadata as ADIOS2's BP4 engine does, so ADIOS2 and bpls read the dataset. Readers: rank 0 reads
 * md.idx and md.0 and broadcasts them; each rank reads its own selections from data.K.
 * A call that fails on one rank in a step (a put, a device copy, a write, out of memory, a
 * get) fails that step's gpubp_end_step on every rank with one status and a message naming the
 * rank; nothing of a failed write step is committed, the next step can commit.
 * A rank that dies (a signal, MPI_Abort) takes the job with it: the MPI library in use has no fault
 * tolerance; steps committed before stay readable. An MPI error returned by a collective is
 * GPUBP_ERR_IO on the rank that saw it and cannot be agreed on.
 * Errors: those of gpubp_open_comm; NOT_SUPPORTED when MPI is not initialised (MPI_Init first).
 */
GPUBP_API int gpubp_open_mpi(gpubp_file **out, const char *path, gpubp_mode mode,
                             const char *params, MPI_Comm comm);

#ifdef __cplusplus
}
#endif

#endif /* GPUBP_MPI_H */
