/* Prints job-level PMIx data as a client reads it, for comparing stepmap's
 * server with Slurm's mpi/pmix (tests/e2e/test_parity.py):
 *   pmix_job_keys KEY...
 * Rank 0 prints "KEY=VALUE" for a string (or a number or a flag) or
 * "KEY!STATUS" when the server has none; every rank then finalizes. */
#include <pmix.h>
#include <stdio.h>

int main(int argc, char **argv) {
    pmix_proc_t me, job;
    if (PMIx_Init(&me, NULL, 0) != PMIX_SUCCESS)
        return 3;
    PMIX_LOAD_PROCID(&job, me.nspace, PMIX_RANK_WILDCARD);
    for (int i = 1; i < argc && me.rank == 0; ++i) {
        pmix_value_t *val = NULL;
        pmix_status_t rc = PMIx_Get(&job, argv[i], NULL, 0, &val);
        if (rc != PMIX_SUCCESS)
            printf("%s!%s\n", argv[i], PMIx_Error_string(rc));
        else if (val->type == PMIX_STRING)
            printf("%s=%s\n", argv[i], val->data.string);
        else if (val->type == PMIX_UINT32)
            printf("%s=%u\n", argv[i], val->data.uint32);
        else if (val->type == PMIX_BOOL)
            printf("%s=%s\n", argv[i], val->data.flag ? "true" : "false");
        else
            printf("%s=(type %d)\n", argv[i], val->type);
        if (val)
            PMIX_VALUE_RELEASE(val);
    }
    fflush(stdout);
    PMIx_Finalize(NULL, 0);
    return 0;
}
