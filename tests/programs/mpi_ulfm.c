/* A ULFM program (Open MPI 5 built with fault tolerance, run with
 * mpirun --with-ft ulfm or srun --with-ft=ulfm):
 *   mpi_ulfm VICTIM [exit|kill]
 * Every rank takes part in a first Allreduce; then rank VICTIM dies (exit
 * status 3 without MPI_Finalize, or SIGKILL). The survivors go on: a
 * Barrier that reports the failure, MPIX_Comm_revoke, MPIX_Comm_shrink,
 * an Allreduce over the shrunk communicator; each prints
 *   survivor R of S (was W): sum T
 * and they finalize. Exit 0 when the sum is what the survivors' old ranks
 * add up to. */
#include <mpi.h>
// After mpi.h: Open MPI's extensions (MPIX_Comm_shrink, ...) need it.
#include <mpi-ext.h>

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    int rank = 0, size = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    const int victim = argc > 1 ? atoi(argv[1]) : size - 1;
    const int by_signal = argc > 2 && strcmp(argv[2], "kill") == 0;
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);

    int one = 1, all = 0;
    MPI_Allreduce(&one, &all, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0)
        printf("before: %d ranks\n", all);
    fflush(stdout);
    if (rank == victim) {
        if (by_signal)
            raise(SIGKILL);
        _exit(3);
    }

    /* Until every survivor has seen the failure, a collective can succeed
     * on some and fail on others: revoke so that all of them leave it. */
    int rc = MPI_SUCCESS;
    for (int i = 0; i < 100 && rc == MPI_SUCCESS; ++i) {
        rc = MPI_Barrier(MPI_COMM_WORLD);
        if (rc == MPI_SUCCESS)
            usleep(100000);
    }
    int eclass = 0;
    MPI_Error_class(rc, &eclass);
    if (eclass != MPIX_ERR_PROC_FAILED && eclass != MPIX_ERR_REVOKED) {
        fprintf(stderr, "rank %d: no failure reported (error class %d)\n", rank, eclass);
        return 2;
    }
    MPIX_Comm_revoke(MPI_COMM_WORLD);
    MPI_Comm shrunk;
    rc = MPIX_Comm_shrink(MPI_COMM_WORLD, &shrunk);
    if (rc != MPI_SUCCESS) {
        fprintf(stderr, "rank %d: MPIX_Comm_shrink failed (%d)\n", rank, rc);
        return 2;
    }
    int new_rank = 0, new_size = 0, sum = 0;
    MPI_Comm_rank(shrunk, &new_rank);
    MPI_Comm_size(shrunk, &new_size);
    rc = MPI_Allreduce(&rank, &sum, 1, MPI_INT, MPI_SUM, shrunk);
    if (rc != MPI_SUCCESS) {
        fprintf(stderr, "rank %d: MPI_Allreduce on the shrunk communicator failed\n", rank);
        return 2;
    }
    printf("survivor %d of %d (was %d): sum %d\n", new_rank, new_size, rank, sum);
    fflush(stdout);
    MPI_Comm_free(&shrunk);
    MPI_Finalize();
    return sum == size * (size - 1) / 2 - victim && new_size == size - 1 ? 0 : 1;
}
