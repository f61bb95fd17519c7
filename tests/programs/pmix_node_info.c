/* Reads other nodes' interconnect profile as node-level PMIx data
 * (docs/profile-keys.md), for the profile tests:
 *   pmix_node_info NODE...
 * Rank 0 prints, per NODE, one line
 *   NODE digest DIGEST interfaces N first LINE
 * or "NODE not-found STATUS" when its server has no entry for it; every
 * rank then finalizes. No fence: reading another node's data must need no
 * message between nodes. */
#include <pmix.h>
#include <stdio.h>
#include <string.h>

static pmix_status_t node_string(const pmix_proc_t *me, const char *node, const char *key,
                                 char *out, size_t size) {
    pmix_proc_t wildcard;
    PMIX_LOAD_PROCID(&wildcard, me->nspace, PMIX_RANK_WILDCARD);
    pmix_info_t qualifiers[2];
    bool yes = true;
    PMIX_INFO_LOAD(&qualifiers[0], PMIX_NODE_INFO, &yes, PMIX_BOOL);
    PMIX_INFO_LOAD(&qualifiers[1], PMIX_HOSTNAME, node, PMIX_STRING);
    pmix_value_t *value = NULL;
    pmix_status_t rc = PMIx_Get(&wildcard, key, qualifiers, 2, &value);
    if (rc == PMIX_SUCCESS && value->type == PMIX_STRING)
        snprintf(out, size, "%s", value->data.string);
    else if (rc == PMIX_SUCCESS)
        rc = PMIX_ERR_TYPE_MISMATCH;
    if (value)
        PMIX_VALUE_RELEASE(value);
    PMIX_INFO_DESTRUCT(&qualifiers[0]);
    PMIX_INFO_DESTRUCT(&qualifiers[1]);
    return rc;
}

int main(int argc, char **argv) {
    pmix_proc_t me;
    if (PMIx_Init(&me, NULL, 0) != PMIX_SUCCESS)
        return 1;
    for (int i = 1; me.rank == 0 && i < argc; ++i) {
        char digest[128] = "", interfaces[8192] = "";
        pmix_status_t rc =
            node_string(&me, argv[i], "stepmap.profile.digest", digest, sizeof digest);
        if (rc == PMIX_SUCCESS)
            rc = node_string(&me, argv[i], "stepmap.net.interfaces", interfaces, sizeof interfaces);
        if (rc != PMIX_SUCCESS) {
            printf("%s not-found %s\n", argv[i], PMIx_Error_string(rc));
            continue;
        }
        int lines = 1;
        for (const char *c = interfaces; *c; ++c)
            lines += *c == '\n';
        char *newline = strchr(interfaces, '\n');
        if (newline)
            *newline = '\0';
        printf("%s digest %s interfaces %d first %s\n", argv[i], digest, lines, interfaces);
    }
    fflush(stdout);
    PMIx_Finalize(NULL, 0);
    return 0;
}
