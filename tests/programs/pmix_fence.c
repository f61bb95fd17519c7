/* The PMIx-only launch benchmark's program: what a PMIx application does
 * at start with no MPI library around it. PMIx_Init, Put of one key, Commit,
 * one data-collecting Fence across the job, a Get of the next rank's key
 * (answered from the collected data), Finalize. Prints
 * "pmix_fence rank R of N: next rank's key K" or the failing call and its
 * status (exit 1). */
#include <pmix.h>

#include <stdio.h>
#include <string.h>

static int fail(const char *call, pmix_status_t rc) {
    printf("pmix_fence: %s failed: %s\n", call, PMIx_Error_string(rc));
    fflush(stdout);
    return 1;
}

int main(void) {
    pmix_proc_t me, job, next;
    pmix_status_t rc = PMIx_Init(&me, NULL, 0);
    if (rc != PMIX_SUCCESS)
        return fail("PMIx_Init", rc);

    PMIX_LOAD_PROCID(&job, me.nspace, PMIX_RANK_WILDCARD);
    pmix_value_t *size = NULL;
    rc = PMIx_Get(&job, PMIX_JOB_SIZE, NULL, 0, &size);
    if (rc != PMIX_SUCCESS)
        return fail("PMIx_Get(PMIX_JOB_SIZE)", rc);
    const uint32_t np = size->data.uint32;
    PMIX_VALUE_RELEASE(size);

    pmix_value_t value;
    PMIX_VALUE_LOAD(&value, &me.rank, PMIX_UINT32);
    if ((rc = PMIx_Put(PMIX_GLOBAL, "bench.key", &value)) != PMIX_SUCCESS)
        return fail("PMIx_Put", rc);
    if ((rc = PMIx_Commit()) != PMIX_SUCCESS)
        return fail("PMIx_Commit", rc);

    pmix_info_t collect;
    bool yes = true;
    PMIX_INFO_LOAD(&collect, PMIX_COLLECT_DATA, &yes, PMIX_BOOL);
    rc = PMIx_Fence(&job, 1, &collect, 1);
    PMIX_INFO_DESTRUCT(&collect);
    if (rc != PMIX_SUCCESS)
        return fail("PMIx_Fence", rc);

    PMIX_LOAD_PROCID(&next, me.nspace, (me.rank + 1) % np);
    pmix_value_t *got = NULL;
    if ((rc = PMIx_Get(&next, "bench.key", NULL, 0, &got)) != PMIX_SUCCESS)
        return fail("PMIx_Get(bench.key)", rc);
    printf("pmix_fence rank %u of %u: next rank's key %u\n", me.rank, np, got->data.uint32);
    fflush(stdout);
    PMIX_VALUE_RELEASE(got);

    if ((rc = PMIx_Finalize(NULL, 0)) != PMIX_SUCCESS)
        return fail("PMIx_Finalize", rc);
    return 0;
}
