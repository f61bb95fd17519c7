/* The MPI program the end-to-end tests launch. Each rank prints one line:
 *   rank R size N node NODE nspace NS sum S shared L app A
 * where L is the size of its MPI_COMM_TYPE_SHARED communicator, A its
 * MPI_APPNUM (application context), NODE is the Slurm node it runs on, NS the PMIx namespace that
 * served it and S the result of an MPI_Allreduce of all ranks (must be
 * N*(N-1)/2). With "abort R STATUS", rank R calls MPI_Abort(STATUS) after
 * the Allreduce while the others wait in a barrier. With "die R STATUS",
 * rank R exits with STATUS right after MPI_Init, without MPI_Finalize,
 * while the others wait in the Allreduce. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int main(int argc, char **argv) {
    int rank = 0, size = 0;
    long mine, sum = 0;
    const char *node = getenv("SLURMD_NODENAME");
    const char *ns = getenv("PMIX_NAMESPACE");

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (argc == 4 && strcmp(argv[1], "die") == 0 && rank == atoi(argv[2]))
        _exit(atoi(argv[3]));
    mine = rank;
    MPI_Allreduce(&mine, &sum, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
    {
        /* The ranks MPI thinks share this node's memory. */
        MPI_Comm shared;
        int shared_size = 0;
        MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &shared);
        MPI_Comm_size(shared, &shared_size);
        MPI_Comm_free(&shared);
        int *appnum = NULL, has_appnum = 0;
        MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_APPNUM, &appnum, &has_appnum);
        printf("rank %d size %d node %s nspace %s sum %ld shared %d app %d\n", rank, size,
               node ? node : "?", ns ? ns : "?", sum, shared_size,
               has_appnum && appnum ? *appnum : -1);
    }
    fflush(stdout);
    if (argc == 4 && strcmp(argv[1], "abort") == 0) {
        if (rank == atoi(argv[2]))
            MPI_Abort(MPI_COMM_WORLD, atoi(argv[3]));
        MPI_Barrier(MPI_COMM_WORLD);
    }
    MPI_Finalize();
    return sum == (long)size * (size - 1) / 2 ? 0 : 1;
}
