/* PMIx groups at the PMIx level (a PMIx 5 client):
 *   pmix_group members <r,r,...>   ranks listed construct a group with a
 *                                  context id; others skip it. Each member
 *                                  prints "rank R: group of M, context id C"
 *                                  and, from another member's PMIX_GROUP_INFO,
 *                                  "rank R: member S says S*7".
 *   pmix_group unknown             every rank constructs a group with a
 *                                  rank the step does not have (its size);
 *                                  prints the failure.
 *   pmix_group abandoned           every rank but the last constructs a
 *                                  group of all; the last sleeps 30 s.
 *   pmix_group dies                the same, but the last rank dies (exit 3,
 *                                  without PMIx_Finalize).
 * A failed call prints "rank R: <call> failed: <status>" and the program
 * exits 1 (after PMIx_Finalize). */
#include <pmix.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static pmix_proc_t me;

static int failed(const char *call, pmix_status_t rc) {
    printf("rank %u: %s failed: %s\n", me.rank, call, PMIx_Error_string(rc));
    fflush(stdout);
    PMIx_Finalize(NULL, 0);
    return 1;
}

int main(int argc, char **argv) {
    const char *mode = argc > 1 ? argv[1] : "members";
    pmix_status_t rc = PMIx_Init(&me, NULL, 0);
    if (rc != PMIX_SUCCESS) {
        printf("PMIx_Init failed: %s\n", PMIx_Error_string(rc));
        return 1;
    }
    pmix_proc_t job;
    PMIX_LOAD_PROCID(&job, me.nspace, PMIX_RANK_WILDCARD);
    pmix_value_t *v = NULL;
    if ((rc = PMIx_Get(&job, PMIX_JOB_SIZE, NULL, 0, &v)) != PMIX_SUCCESS)
        return failed("PMIx_Get(PMIX_JOB_SIZE)", rc);
    const uint32_t size = v->data.uint32;
    PMIX_VALUE_RELEASE(v);

    pmix_proc_t procs[256];
    size_t n = 0;
    int member = 0;
    if (strcmp(mode, "members") == 0 && argc > 2) {
        char *list = strdup(argv[2]);
        for (char *t = strtok(list, ","); t && n < 256; t = strtok(NULL, ",")) {
            PMIX_LOAD_PROCID(&procs[n], me.nspace, (uint32_t)atoi(t));
            member |= procs[n].rank == me.rank;
            ++n;
        }
        free(list);
    } else if (strcmp(mode, "unknown") == 0) {
        PMIX_LOAD_PROCID(&procs[0], me.nspace, me.rank);
        PMIX_LOAD_PROCID(&procs[1], me.nspace, size);
        n = 2;
        member = 1;
    } else if (strcmp(mode, "abandoned") == 0 || strcmp(mode, "dies") == 0) {
        for (uint32_t r = 0; r < size && n < 256; ++r)
            PMIX_LOAD_PROCID(&procs[n++], me.nspace, r);
        member = me.rank != size - 1;
        if (!member && strcmp(mode, "dies") == 0)
            _exit(3);
        if (!member) {
            sleep(30);
            PMIx_Finalize(NULL, 0);
            return 0;
        }
    } else {
        printf("usage: pmix_group members R,R,... | unknown | abandoned\n");
        return 2;
    }
    if (!member) {
        printf("rank %u: not a member\n", me.rank);
        fflush(stdout);
        PMIx_Finalize(NULL, 0);
        return 0;
    }

    /* What each member tells the others through the construct. */
    size_t said = (size_t)me.rank * 7;
    pmix_info_t said_info;
    PMIX_INFO_LOAD(&said_info, "stepmap.test.said", &said, PMIX_SIZE);
    pmix_data_array_t group_info = {.type = PMIX_INFO, .size = 1, .array = &said_info};
    pmix_info_t directives[2];
    bool yes = true;
    PMIX_INFO_LOAD(&directives[0], PMIX_GROUP_ASSIGN_CONTEXT_ID, &yes, PMIX_BOOL);
    PMIX_INFO_LOAD(&directives[1], PMIX_GROUP_INFO, &group_info, PMIX_DATA_ARRAY);
    pmix_info_t *results = NULL;
    size_t nresults = 0;
    rc = PMIx_Group_construct("stepmap.test.group", procs, n, directives, 2, &results, &nresults);
    if (rc != PMIX_SUCCESS && strcmp(mode, "unknown") == 0) {
        /* Every rank says so before any exits (the first failure ends the
         * step). */
        printf("rank %u: PMIx_Group_construct failed: %s\n", me.rank, PMIx_Error_string(rc));
        fflush(stdout);
        PMIx_Fence(NULL, 0, NULL, 0);
        PMIx_Finalize(NULL, 0);
        return 1;
    }
    if (rc != PMIX_SUCCESS)
        return failed("PMIx_Group_construct", rc);
    size_t context_id = 0, members = 0;
    for (size_t i = 0; i < nresults; ++i) {
        if (PMIX_CHECK_KEY(&results[i], PMIX_GROUP_CONTEXT_ID))
            PMIX_VALUE_GET_NUMBER(rc, &results[i].value, context_id, size_t);
        else if (PMIX_CHECK_KEY(&results[i], PMIX_GROUP_MEMBERSHIP))
            members = results[i].value.data.darray->size;
    }
    printf("rank %u: group of %zu, context id %zu\n", me.rank, members, context_id);

    /* The next member's word, qualified by the group's context id. */
    size_t next = 0;
    while (next < n && procs[next].rank != me.rank)
        ++next;
    pmix_proc_t other = procs[(next + 1) % n];
    pmix_info_t qualifier;
    PMIX_INFO_LOAD(&qualifier, PMIX_GROUP_CONTEXT_ID, &context_id, PMIX_SIZE);
    PMIX_INFO_SET_QUALIFIER(&qualifier);
    if ((rc = PMIx_Get(&other, "stepmap.test.said", &qualifier, 1, &v)) != PMIX_SUCCESS)
        return failed("PMIx_Get(a member's group info)", rc);
    size_t word = 0;
    PMIX_VALUE_GET_NUMBER(rc, v, word, size_t);
    printf("rank %u: member %u says %zu\n", me.rank, other.rank, word);
    PMIX_VALUE_RELEASE(v);
    if ((rc = PMIx_Group_destruct("stepmap.test.group", NULL, 0)) != PMIX_SUCCESS)
        return failed("PMIx_Group_destruct", rc);
    fflush(stdout);
    PMIx_Finalize(NULL, 0);
    return 0;
}
