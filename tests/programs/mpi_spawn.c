/* MPI_Comm_spawn under srun (tests/e2e/test_spawn.py).
 *
 *   mpi_spawn parent N [KEY=VALUE ...] [cmd=PROGRAM] [args=A,B,...] [abort]
 *             [first=K]
 *       the ranks spawn N copies of this program ("child") with the info
 *       keys given (or of PROGRAM with arguments A B ...); parents and children merge the
 * intercommunicator, sum their ranks over it and disconnect. Each parent rank prints "parent R
 * spawn ok sum S size Z" or "parent R spawn FAILED: why" (with the error class); rank 0 prints
 * "spawn-ms T", the time of MPI_Comm_spawn. With "abort", rank 0 then calls MPI_Abort (status 3)
 * while the children wait in MPI_Comm_disconnect. With first=K, MPI_Comm_spawn_multiple of two
 * programs: K copies, then N - K (each child prints its MPI_APPNUM as "app A"). mpi_spawn child
 *       prints "child R of N parent-size P sum S host H" after the same
 *       exchange.
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int rank, size;

static int app_number(void) {
    int *appnum = NULL, flag = 0;
    MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_APPNUM, &appnum, &flag);
    return flag && appnum ? *appnum : -1;
}

static int merged_sum(MPI_Comm inter, int high, int *sum, int *total) {
    MPI_Comm merged;
    int rc = MPI_Intercomm_merge(inter, high, &merged);
    if (rc != MPI_SUCCESS)
        return rc;
    int me = 0;
    MPI_Comm_rank(merged, &me);
    MPI_Comm_size(merged, total);
    rc = MPI_Allreduce(&me, sum, 1, MPI_INT, MPI_SUM, merged);
    MPI_Comm_free(&merged);
    return rc;
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    char host[256] = "";
    const char *slurm_node = getenv("SLURMD_NODENAME");
    if (slurm_node)
        snprintf(host, sizeof host, "%s", slurm_node);
    else
        gethostname(host, sizeof host);
    MPI_Comm parent;
    MPI_Comm_get_parent(&parent);
    if (argc > 1 && strcmp(argv[1], "child") == 0) {
        if (parent == MPI_COMM_NULL) {
            printf("child %d FAILED: no parent\n", rank);
            MPI_Finalize();
            return 1;
        }
        int psize = 0, sum = 0, total = 0;
        MPI_Comm_remote_size(parent, &psize);
        int rc = merged_sum(parent, 1, &sum, &total);
        if (rc != MPI_SUCCESS)
            printf("child %d FAILED: merge %d\n", rank, rc);
        else
            printf("child %d of %d parent-size %d sum %d host %s app %d\n", rank, size, psize, sum,
                   host, app_number());
        fflush(stdout);
        MPI_Comm_disconnect(&parent);
        MPI_Finalize();
        return 0;
    }
    if (argc < 3) {
        fprintf(stderr, "usage: mpi_spawn parent N [KEY=VALUE ...] | mpi_spawn child\n");
        MPI_Finalize();
        return 2;
    }
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    int n = atoi(argv[2]);
    MPI_Info info;
    MPI_Info_create(&info);
    const char *command = argv[0];
    int abort_after = 0, first = 0;
    char *child_argv[16] = {"child", NULL};
    for (int i = 3; i < argc; ++i) {
        if (strcmp(argv[i], "abort") == 0) {
            abort_after = 1;
            continue;
        }
        if (strncmp(argv[i], "first=", 6) == 0) {
            first = atoi(argv[i] + 6);
            continue;
        }
        if (strncmp(argv[i], "cmd=", 4) == 0) {
            command = argv[i] + 4;
            continue;
        }
        if (strncmp(argv[i], "args=", 5) == 0) {
            int k = 0;
            for (char *a = strtok(argv[i] + 5, ","); a && k < 15; a = strtok(NULL, ","))
                child_argv[k++] = a;
            child_argv[k] = NULL;
            continue;
        }
        char key[256];
        const char *eq = strchr(argv[i], '=');
        if (!eq || (size_t)(eq - argv[i]) >= sizeof key)
            continue;
        memcpy(key, argv[i], (size_t)(eq - argv[i]));
        key[eq - argv[i]] = 0;
        MPI_Info_set(info, key, eq + 1);
    }
    MPI_Comm inter;
    int *codes = calloc((size_t)n, sizeof(int));
    double t0 = MPI_Wtime();
    int rc;
    if (first > 0) {
        char *commands[2] = {(char *)command, (char *)command};
        char **argvs[2] = {child_argv, child_argv};
        int counts[2] = {first, n - first};
        MPI_Info infos[2] = {info, info};
        rc = MPI_Comm_spawn_multiple(2, commands, argvs, counts, infos, 0, MPI_COMM_WORLD, &inter,
                                     codes);
    } else {
        rc = MPI_Comm_spawn(command, child_argv, n, info, 0, MPI_COMM_WORLD, &inter, codes);
    }
    double t1 = MPI_Wtime();
    MPI_Info_free(&info);
    if (rc != MPI_SUCCESS) {
        char text[MPI_MAX_ERROR_STRING] = "";
        int len = 0, class = 0;
        MPI_Error_string(rc, text, &len);
        MPI_Error_class(rc, &class);
        printf("parent %d spawn FAILED: class %d%s: %s\n", rank, class,
               class == MPI_ERR_SPAWN ? " (MPI_ERR_SPAWN)" : "", text);
        fflush(stdout);
        free(codes);
        MPI_Finalize();
        return 0;
    }
    int sum = 0, total = 0;
    rc = merged_sum(inter, 0, &sum, &total);
    if (rc != MPI_SUCCESS)
        printf("parent %d spawn FAILED: merge %d\n", rank, rc);
    else
        printf("parent %d spawn ok sum %d size %d host %s\n", rank, sum, total, host);
    if (rank == 0)
        printf("spawn-ms %.1f\n", (t1 - t0) * 1e3);
    fflush(stdout);
    if (abort_after && rank == 0)
        MPI_Abort(MPI_COMM_WORLD, 3);
    MPI_Comm_disconnect(&inter);
    free(codes);
    MPI_Finalize();
    return 0;
}
