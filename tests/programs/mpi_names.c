/* MPI's name service and ports inside one step (tests/e2e/test_dynamic.py).
 *
 *   mpi_names names    rank 0 publishes a name; every rank looks it up; a
 *                      second publish of it fails; once unpublished a
 *                      lookup fails with MPI_ERR_NAME. Prints
 *                      "rank R names ok" or "rank R names FAILED: why".
 *   mpi_names accept   the ranks split in two halves; the first half's
 *                      root opens a port and publishes it, the second
 *                      half's root looks it up; MPI_Comm_accept meets
 *                      MPI_Comm_connect, the intercommunicator is merged
 *                      and summed over, then disconnected. Prints
 *                      "rank R accept ok" or "rank R accept FAILED: why",
 *                      and on rank 0 "accept-ms T": the slowest rank's
 *                      time from the port's lookup to the
 *                      intercommunicator (tests/bench/dynamic_processes.py).
 *   mpi_names server NAME   (one srun) and
 *   mpi_names client NAME   (another srun of the same job): the server's
 *                      root opens a port and publishes it as NAME, the
 *                      client's root looks it up (waiting up to 60 s); the
 *                      two steps accept/connect, merge, sum every rank of
 *                      both and disconnect. Prints "rank R server ok sum S
 *                      size Z" (or client), or "... FAILED: why".
 *   mpi_names pairs    ranks 2k and 2k+1 meet by accept/connect, every
 *                      pair at once and each through its own published
 *                      port, so that connects over the same nodes run
 *                      concurrently. Prints "rank R pairs ok" or
 *                      "rank R pairs FAILED: why".
 */
#include <mpi.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static int rank, size;

static int fail(const char *mode, const char *why, int rc) {
    char text[MPI_MAX_ERROR_STRING] = "";
    int len = 0, class = 0;
    if (rc != MPI_SUCCESS) {
        MPI_Error_string(rc, text, &len);
        MPI_Error_class(rc, &class);
    }
    printf("rank %d %s FAILED: %s (class %d: %s)\n", rank, mode, why, class, text);
    fflush(stdout);
    return 1;
}

static int names(void) {
    const char *service = "stepmap-test-service";
    char port[MPI_MAX_PORT_NAME] = "";
    int rc, class;
    if (rank == 0) {
        rc = MPI_Publish_name(service, MPI_INFO_NULL, "port-of-rank-0");
        if (rc != MPI_SUCCESS)
            return fail("names", "publish", rc);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    rc = MPI_Lookup_name(service, MPI_INFO_NULL, port);
    if (rc != MPI_SUCCESS)
        return fail("names", "lookup", rc);
    if (strcmp(port, "port-of-rank-0") != 0)
        return fail("names", "lookup returned another value", MPI_SUCCESS);
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == size - 1) {
        rc = MPI_Publish_name(service, MPI_INFO_NULL, "port-of-another-rank");
        if (rc == MPI_SUCCESS)
            return fail("names", "a second publish of the name succeeded", rc);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0) {
        rc = MPI_Unpublish_name(service, MPI_INFO_NULL, "port-of-rank-0");
        if (rc != MPI_SUCCESS)
            return fail("names", "unpublish", rc);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    rc = MPI_Lookup_name(service, MPI_INFO_NULL, port);
    MPI_Error_class(rc, &class);
    if (class != MPI_ERR_NAME)
        return fail("names", "a lookup after unpublish did not fail with MPI_ERR_NAME", rc);
    printf("rank %d names ok\n", rank);
    return 0;
}

static int accept_connect(void) {
    const char *service = "stepmap-test-accept";
    const int half = rank < size / 2 ? 0 : 1;
    char port[MPI_MAX_PORT_NAME] = "";
    MPI_Comm side, inter, merged;
    int rc, sum = 0, merged_size = 0;
    double started, took, slowest = 0;
    MPI_Comm_split(MPI_COMM_WORLD, half, rank, &side);
    int side_rank;
    MPI_Comm_rank(side, &side_rank);
    if (half == 0 && side_rank == 0) {
        MPI_Open_port(MPI_INFO_NULL, port);
        rc = MPI_Publish_name(service, MPI_INFO_NULL, port);
        if (rc != MPI_SUCCESS)
            return fail("accept", "publish", rc);
    }
    /* Published before anyone looks: the time is the lookup and the
     * handshake, not a wait for the other half. */
    MPI_Barrier(MPI_COMM_WORLD);
    started = MPI_Wtime();
    if (half == 0) {
        rc = MPI_Comm_accept(port, MPI_INFO_NULL, 0, side, &inter);
        if (rc != MPI_SUCCESS)
            return fail("accept", "accept", rc);
    } else {
        if (side_rank == 0) {
            for (int tries = 0; tries < 200; ++tries) {
                if (MPI_Lookup_name(service, MPI_INFO_NULL, port) == MPI_SUCCESS)
                    break;
                usleep(50000);
            }
            if (!port[0])
                return fail("accept", "the port was never published", MPI_SUCCESS);
        }
        rc = MPI_Comm_connect(port, MPI_INFO_NULL, 0, side, &inter);
        if (rc != MPI_SUCCESS)
            return fail("accept", "connect", rc);
    }
    took = MPI_Wtime() - started;
    rc = MPI_Intercomm_merge(inter, half, &merged);
    if (rc != MPI_SUCCESS)
        return fail("accept", "merge", rc);
    MPI_Comm_size(merged, &merged_size);
    MPI_Allreduce(&rank, &sum, 1, MPI_INT, MPI_SUM, merged);
    if (merged_size != size || sum != size * (size - 1) / 2)
        return fail("accept", "the merged communicator is not the whole step", MPI_SUCCESS);
    MPI_Reduce(&took, &slowest, 1, MPI_DOUBLE, MPI_MAX, 0, merged);
    MPI_Comm_free(&merged);
    rc = MPI_Comm_disconnect(&inter);
    if (rc != MPI_SUCCESS)
        return fail("accept", "disconnect", rc);
    if (half == 0 && port[0]) {
        MPI_Unpublish_name(service, MPI_INFO_NULL, port);
        MPI_Close_port(port);
    }
    MPI_Comm_free(&side);
    printf("rank %d accept ok\n", rank);
    if (rank == 0)
        printf("accept-ms %.3f\n", slowest * 1000);
    return 0;
}

static int across(const char *mode, const char *service) {
    char port[MPI_MAX_PORT_NAME] = "";
    MPI_Comm inter, merged;
    int rc, sum = 0, merged_size = 0;
    const int serving = strcmp(mode, "server") == 0;
    if (serving) {
        if (rank == 0) {
            MPI_Open_port(MPI_INFO_NULL, port);
            rc = MPI_Publish_name(service, MPI_INFO_NULL, port);
            if (rc != MPI_SUCCESS)
                return fail(mode, "publish", rc);
        }
        rc = MPI_Comm_accept(port, MPI_INFO_NULL, 0, MPI_COMM_WORLD, &inter);
    } else {
        if (rank == 0) {
            for (int tries = 0; tries < 1200 && !port[0]; ++tries)
                if (MPI_Lookup_name(service, MPI_INFO_NULL, port) != MPI_SUCCESS)
                    usleep(50000);
            if (!port[0])
                return fail(mode, "the port was never published", MPI_SUCCESS);
        }
        rc = MPI_Comm_connect(port, MPI_INFO_NULL, 0, MPI_COMM_WORLD, &inter);
    }
    if (rc != MPI_SUCCESS)
        return fail(mode, serving ? "accept" : "connect", rc);
    rc = MPI_Intercomm_merge(inter, serving ? 0 : 1, &merged);
    if (rc != MPI_SUCCESS)
        return fail(mode, "merge", rc);
    int me = 0;
    MPI_Comm_rank(merged, &me);
    MPI_Comm_size(merged, &merged_size);
    MPI_Allreduce(&me, &sum, 1, MPI_INT, MPI_SUM, merged);
    MPI_Comm_free(&merged);
    rc = MPI_Comm_disconnect(&inter);
    if (rc != MPI_SUCCESS)
        return fail(mode, "disconnect", rc);
    if (serving && rank == 0) {
        MPI_Unpublish_name(service, MPI_INFO_NULL, port);
        MPI_Close_port(port);
    }
    printf("rank %d %s ok sum %d size %d\n", rank, mode, sum, merged_size);
    return 0;
}

static int pairs(void) {
    char service[64], port[MPI_MAX_PORT_NAME] = "";
    MPI_Comm inter, merged;
    int rc, sum = 0, merged_size = 0;
    const int pair = rank / 2, partner = rank ^ 1;
    if (partner >= size) {
        printf("rank %d pairs ok\n", rank); /* the odd one out */
        return 0;
    }
    snprintf(service, sizeof service, "stepmap-test-pair-%d", pair);
    if (rank % 2 == 0) {
        MPI_Open_port(MPI_INFO_NULL, port);
        rc = MPI_Publish_name(service, MPI_INFO_NULL, port);
        if (rc != MPI_SUCCESS)
            return fail("pairs", "publish", rc);
        rc = MPI_Comm_accept(port, MPI_INFO_NULL, 0, MPI_COMM_SELF, &inter);
    } else {
        for (int tries = 0; tries < 200; ++tries) {
            if (MPI_Lookup_name(service, MPI_INFO_NULL, port) == MPI_SUCCESS)
                break;
            usleep(20000);
        }
        if (!port[0])
            return fail("pairs", "the partner's port was never published", MPI_SUCCESS);
        rc = MPI_Comm_connect(port, MPI_INFO_NULL, 0, MPI_COMM_SELF, &inter);
    }
    if (rc != MPI_SUCCESS)
        return fail("pairs", rank % 2 == 0 ? "accept" : "connect", rc);
    rc = MPI_Intercomm_merge(inter, rank % 2, &merged);
    if (rc != MPI_SUCCESS)
        return fail("pairs", "merge", rc);
    MPI_Comm_size(merged, &merged_size);
    MPI_Allreduce(&rank, &sum, 1, MPI_INT, MPI_SUM, merged);
    if (merged_size != 2 || sum != rank + partner)
        return fail("pairs", "the merged communicator is not the pair", MPI_SUCCESS);
    MPI_Comm_free(&merged);
    rc = MPI_Comm_disconnect(&inter);
    if (rc != MPI_SUCCESS)
        return fail("pairs", "disconnect", rc);
    if (rank % 2 == 0) {
        MPI_Unpublish_name(service, MPI_INFO_NULL, port);
        MPI_Close_port(port);
    }
    printf("rank %d pairs ok\n", rank);
    return 0;
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    /* Name-service errors go to MPI_COMM_SELF's handler (MPI-4), to
     * MPI_COMM_WORLD's in older libraries: both return them. */
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);
    int failed;
    if (argc > 1 && strcmp(argv[1], "accept") == 0)
        failed = accept_connect();
    else if (argc > 2 && (strcmp(argv[1], "server") == 0 || strcmp(argv[1], "client") == 0))
        failed = across(argv[1], argv[2]);
    else if (argc > 1 && strcmp(argv[1], "pairs") == 0)
        failed = pairs();
    else
        failed = names();
    fflush(stdout);
    if (failed) /* the other ranks may wait in a barrier: end them too */
        MPI_Abort(MPI_COMM_WORLD, 3);
    MPI_Finalize();
    return 0;
}
