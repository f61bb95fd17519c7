/* A PMIx client for the security tests: tries to join the server named by
 * its PMIX_* environment. Prints "joined rank R" and then aborts the job
 * with status 42 (what an intruder would do), or prints "refused: STATUS"
 * and exits 3. */
#include <pmix.h>

#include <stdio.h>

int main(void) {
    pmix_proc_t me;
    pmix_status_t rc = PMIx_Init(&me, NULL, 0);
    if (rc != PMIX_SUCCESS) {
        printf("refused: %s\n", PMIx_Error_string(rc));
        fflush(stdout);
        return 3;
    }
    printf("joined rank %u\n", me.rank);
    fflush(stdout);
    PMIx_Abort(42, "intruder", NULL, 0);
    PMIx_Finalize(NULL, 0);
    return 0;
}
