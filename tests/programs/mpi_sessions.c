/* An MPI-4 sessions program (Open MPI 5): no MPI_Init. Each rank prints
 *   psets <n>: <name>,<name>,...
 *   world rank <r> of <n> on <host>: sum <s>
 *   part <tag>: rank <r> of <m>, sum <s>        (members only)
 *   dup: sum <s>
 *   self: size 1
 * (rank 0 also "create-ms T": the slowest rank's time in the world's
 * MPI_Comm_create_from_group) and exits 0 when every sum is what it must be.
 *   mpi_sessions [part]
 * part: the ranks of a second communicator, made from a group of the world
 * ("even": 0, 2, 4, ...; "last2": the last two ranks; default "even"). */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static void check(int rc, const char *what) {
    if (rc != MPI_SUCCESS) {
        char text[MPI_MAX_ERROR_STRING];
        int len = 0;
        MPI_Error_string(rc, text, &len);
        fprintf(stderr, "mpi_sessions: %s failed: %s\n", what, text);
        exit(2);
    }
}

static int sum_of_ranks(MPI_Comm comm, int value) {
    int sum = 0;
    check(MPI_Allreduce(&value, &sum, 1, MPI_INT, MPI_SUM, comm), "MPI_Allreduce");
    return sum;
}

int main(int argc, char **argv) {
    const char *part = argc > 1 ? argv[1] : "even";
    MPI_Session session;
    check(MPI_Session_init(MPI_INFO_NULL, MPI_ERRORS_RETURN, &session), "MPI_Session_init");

    int npsets = 0;
    check(MPI_Session_get_num_psets(session, MPI_INFO_NULL, &npsets), "MPI_Session_get_num_psets");
    char names[4096] = "";
    for (int i = 0; i < npsets; ++i) {
        char name[256];
        int len = sizeof name;
        check(MPI_Session_get_nth_pset(session, MPI_INFO_NULL, i, &len, name),
              "MPI_Session_get_nth_pset");
        if (i)
            strncat(names, ",", sizeof names - strlen(names) - 1);
        strncat(names, name, sizeof names - strlen(names) - 1);
    }

    MPI_Group world_group;
    check(MPI_Group_from_session_pset(session, "mpi://WORLD", &world_group),
          "MPI_Group_from_session_pset(mpi://WORLD)");
    MPI_Comm world;
    const double before = MPI_Wtime();
    check(MPI_Comm_create_from_group(world_group, "org.stepmap.sessions.world", MPI_INFO_NULL,
                                     MPI_ERRORS_RETURN, &world),
          "MPI_Comm_create_from_group(world)");
    const double created_ms = (MPI_Wtime() - before) * 1000;
    int rank = 0, size = 0;
    MPI_Comm_rank(world, &rank);
    MPI_Comm_size(world, &size);
    char host[256] = "";
    gethostname(host, sizeof host);
    const char *node = getenv("SLURMD_NODENAME");
    /* The slowest rank's time in the world's construct (the benchmark's). */
    double slowest = 0;
    MPI_Reduce(&created_ms, &slowest, 1, MPI_DOUBLE, MPI_MAX, 0, world);
    if (rank == 0)
        printf("psets %d: %s\ncreate-ms %.3f\n", npsets, names, slowest);
    const int world_sum = sum_of_ranks(world, rank);
    printf("world rank %d of %d on %s: sum %d\n", rank, size, node ? node : host, world_sum);
    int ok = world_sum == size * (size - 1) / 2;

    /* A communicator over part of the world, from a group of it. */
    int members[1024], nmembers = 0;
    for (int r = 0; r < size && nmembers < 1024; ++r)
        if (strcmp(part, "last2") == 0 ? r >= size - 2 : r % 2 == 0)
            members[nmembers++] = r;
    MPI_Group part_group;
    check(MPI_Group_incl(world_group, nmembers, members, &part_group), "MPI_Group_incl");
    int part_rank = MPI_UNDEFINED;
    MPI_Group_rank(part_group, &part_rank);
    if (part_rank != MPI_UNDEFINED) {
        MPI_Comm part_comm;
        check(MPI_Comm_create_from_group(part_group, "org.stepmap.sessions.part", MPI_INFO_NULL,
                                         MPI_ERRORS_RETURN, &part_comm),
              "MPI_Comm_create_from_group(part)");
        int expected = 0;
        for (int i = 0; i < nmembers; ++i)
            expected += members[i];
        const int part_sum = sum_of_ranks(part_comm, rank);
        int part_size = 0;
        MPI_Comm_size(part_comm, &part_size);
        printf("part %s: rank %d of %d, sum %d\n", part, part_rank, part_size, part_sum);
        ok = ok && part_sum == expected && part_size == nmembers;
        check(MPI_Comm_free(&part_comm), "MPI_Comm_free(part)");
    }

    /* A communicator derived from a session's one makes its own group. */
    MPI_Comm dup;
    check(MPI_Comm_dup(world, &dup), "MPI_Comm_dup");
    const int dup_sum = sum_of_ranks(dup, 1);
    printf("dup: sum %d\n", dup_sum);
    ok = ok && dup_sum == size;
    check(MPI_Comm_free(&dup), "MPI_Comm_free(dup)");

    MPI_Group self_group;
    check(MPI_Group_from_session_pset(session, "mpi://SELF", &self_group),
          "MPI_Group_from_session_pset(mpi://SELF)");
    int self_size = 0;
    MPI_Group_size(self_group, &self_size);
    printf("self: size %d\n", self_size);
    ok = ok && self_size == 1;

    MPI_Group_free(&self_group);
    MPI_Group_free(&part_group);
    MPI_Group_free(&world_group);
    check(MPI_Comm_free(&world), "MPI_Comm_free(world)");
    check(MPI_Session_finalize(&session), "MPI_Session_finalize");
    fflush(stdout);
    return ok ? 0 : 1;
}
