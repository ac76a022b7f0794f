/* The bp5 case of test_mpi (issue 21): ADIOS2's multi-writer BP5 datasets (tests/golden/bp5/mpi)
 * read by every rank with gpubp_open_mpi, in random access and in step mode, exactly as the
 * serial reader reads them. */
#ifndef GPUBP_TESTS_MPI_BP5_H
#define GPUBP_TESTS_MPI_BP5_H

/* Runs the case on MPI_COMM_WORLD; a failed check aborts the job (mpi_util.h). */
void mt_case_bp5(void);

#endif
