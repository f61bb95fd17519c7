/* Point-to-point traffic between every pair of ranks, for the modex tests:
 *   mpi_exchange ring|alltoall [late RANK MS]
 * ring: each rank sends its rank to the next and receives from the previous
 * (so every rank first contacts a peer after MPI_Init); alltoall: every rank
 * sends a distinct value to every other rank with MPI_Alltoall. With
 * "late RANK MS", rank RANK sleeps MS milliseconds before MPI_Init: its
 * peers must wait for it, not fail to connect. Each rank prints
 *   rank R size N node NODE PATTERN ok
 * when everything it received was right, and exits 1 otherwise. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int ring(int rank, int size) {
    int next = (rank + 1) % size, prev = (rank + size - 1) % size, got = -1;
    MPI_Sendrecv(&rank, 1, MPI_INT, next, 7, &got, 1, MPI_INT, prev, 7, MPI_COMM_WORLD,
                 MPI_STATUS_IGNORE);
    return got == prev;
}

static int alltoall(int rank, int size) {
    int *out = malloc(sizeof(int) * (size_t)size), *in = malloc(sizeof(int) * (size_t)size);
    int ok = 1;
    for (int i = 0; i < size; ++i)
        out[i] = rank * 1000 + i;
    MPI_Alltoall(out, 1, MPI_INT, in, 1, MPI_INT, MPI_COMM_WORLD);
    for (int i = 0; i < size; ++i)
        ok = ok && in[i] == i * 1000 + rank;
    free(out);
    free(in);
    return ok;
}

int main(int argc, char **argv) {
    const char *pattern = argc > 1 ? argv[1] : "ring";
    const char *node = getenv("SLURMD_NODENAME");
    const char *task = getenv("SLURM_PROCID");
    if (argc == 5 && strcmp(argv[2], "late") == 0 && task && atoi(task) == atoi(argv[3]))
        usleep((useconds_t)atoi(argv[4]) * 1000);
    int rank = 0, size = 0;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int ok = strcmp(pattern, "alltoall") == 0 ? alltoall(rank, size) : ring(rank, size);
    printf("rank %d size %d node %s %s %s\n", rank, size, node ? node : "?", pattern,
           ok ? "ok" : "WRONG");
    fflush(stdout);
    MPI_Finalize();
    return ok ? 0 : 1;
}
