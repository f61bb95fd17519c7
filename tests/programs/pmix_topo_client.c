/* A PMIx client that reports what its server told it about the hardware,
 * one "rank R key value" line per fact, for the end-to-end tests:
 *   shmem      adopted | <why not>   (hwloc shared-memory topology)
 *   topo_pus   OS indices of the PUs in the shared topology
 *   cgroup     cpuset.cpus of the cgroup this process runs in
 *   allowed    Cpus_allowed_list of /proc/self/status
 *   xml_v2 / xml_v1   length of the XML topologies
 *   cpuset     PMIX_CPUSET, or "none"
 *   locality   own PMIX_LOCALITY_STRING; peer_locality P S for each local peer
 *   distances  number of PMIX_DEVICE_DISTANCES entries
 * With "mem shmem" or "mem xml" it instead loads the topology the given way
 * (adopting the server's shared memory, or parsing PMIX_HWLOC_XML_V2 into
 * its own copy, as a client without shmem would) and prints
 *   rank R mem MODE rss KB pss KB   (from /proc/self/smaps_rollup) */
#include <hwloc.h>
#include <hwloc/shmem.h>
#include <pmix.h>

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static pmix_proc_t me;

static pmix_value_t *get(const pmix_proc_t *who, const char *key) {
    pmix_value_t *val = NULL;
    if (PMIx_Get(who, key, NULL, 0, &val) != PMIX_SUCCESS)
        return NULL;
    return val;
}

static void status_field(const char *field, char *out, size_t n) {
    char line[4096];
    FILE *f = fopen("/proc/self/status", "r");
    out[0] = '\0';
    while (f && fgets(line, sizeof line, f)) {
        if (strncmp(line, field, strlen(field)) == 0) {
            char *v = line + strlen(field);
            v += strspn(v, ":\t ");
            v[strcspn(v, "\n")] = '\0';
            snprintf(out, n, "%s", v);
        }
    }
    if (f)
        fclose(f);
}

static void cgroup_cpus(char *out, size_t n) {
    char line[4096], path[4200];
    FILE *f = fopen("/proc/self/cgroup", "r");
    snprintf(out, n, "unknown");
    while (f && fgets(line, sizeof line, f)) {
        char *p = strstr(line, ":cpuset:");
        if (!p)
            continue;
        p += strlen(":cpuset:");
        p[strcspn(p, "\n")] = '\0';
        snprintf(path, sizeof path, "/sys/fs/cgroup/cpuset%s/cpuset.cpus", p);
        FILE *c = fopen(path, "r");
        if (c && fgets(out, (int)n, c))
            out[strcspn(out, "\n")] = '\0';
        if (c)
            fclose(c);
    }
    if (f)
        fclose(f);
}

static long rollup(const char *field) {
    char line[256];
    long kb = -1;
    FILE *f = fopen("/proc/self/smaps_rollup", "r");
    while (f && fgets(line, sizeof line, f))
        if (strncmp(line, field, strlen(field)) == 0)
            kb = atol(line + strlen(field));
    if (f)
        fclose(f);
    return kb;
}

static int memory_report(const char *mode, const pmix_proc_t *wild) {
    hwloc_topology_t topo = NULL;
    int ok = 0;
    if (strcmp(mode, "shmem") == 0) {
        pmix_value_t *file = get(wild, PMIX_HWLOC_SHMEM_FILE);
        pmix_value_t *addr = get(wild, PMIX_HWLOC_SHMEM_ADDR);
        pmix_value_t *size = get(wild, PMIX_HWLOC_SHMEM_SIZE);
        int fd = file ? open(file->data.string, O_RDONLY) : -1;
        ok = fd >= 0 && addr && size &&
             hwloc_shmem_topology_adopt(&topo, fd, 0, (void *)addr->data.size, size->data.size,
                                        0) == 0;
        if (fd >= 0)
            close(fd);
    } else {
        pmix_value_t *xml = get(wild, PMIX_HWLOC_XML_V2);
        ok = xml && xml->type == PMIX_STRING && hwloc_topology_init(&topo) == 0 &&
             hwloc_topology_set_xmlbuffer(topo, xml->data.string,
                                          (int)strlen(xml->data.string) + 1) == 0 &&
             hwloc_topology_load(topo) == 0;
    }
    if (!ok) {
        printf("rank %u mem %s failed\n", me.rank, mode);
        return 1;
    }
    /* Touch the whole tree, as a library walking it would. */
    (void)hwloc_get_nbobjs_by_type(topo, HWLOC_OBJ_PU);
    printf("rank %u mem %s rss %ld pss %ld\n", me.rank, mode, rollup("Rss:"), rollup("Pss:"));
    fflush(stdout);
    PMIx_Fence(NULL, 0, NULL, 0); /* all clients hold their copy at once */
    hwloc_topology_destroy(topo);
    return 0;
}

int main(int argc, char **argv) {
    pmix_proc_t wild;
    pmix_value_t *v;
    char buf[4096];

    if (PMIx_Init(&me, NULL, 0) != PMIX_SUCCESS) {
        fprintf(stderr, "PMIx_Init failed\n");
        return 1;
    }
    PMIX_LOAD_PROCID(&wild, me.nspace, PMIX_RANK_WILDCARD);
    if (argc == 3 && strcmp(argv[1], "mem") == 0) {
        int rc = memory_report(argv[2], &wild);
        PMIx_Finalize(NULL, 0);
        return rc;
    }
    printf("rank %u nspace %s\n", me.rank, me.nspace);

    /* The shared-memory topology, adopted as hwloc does for a client. */
    {
        pmix_value_t *file = get(&wild, PMIX_HWLOC_SHMEM_FILE);
        pmix_value_t *addr = get(&wild, PMIX_HWLOC_SHMEM_ADDR);
        pmix_value_t *size = get(&wild, PMIX_HWLOC_SHMEM_SIZE);
        hwloc_topology_t topo = NULL;
        if (!file || !addr || !size) {
            printf("rank %u shmem missing\n", me.rank);
        } else {
            int fd = open(file->data.string, O_RDONLY);
            if (fd < 0 || hwloc_shmem_topology_adopt(&topo, fd, 0, (void *)addr->data.size,
                                                     size->data.size, 0) != 0) {
                printf("rank %u shmem adopt-failed\n", me.rank);
                topo = NULL;
            } else {
                hwloc_bitmap_t set = hwloc_bitmap_alloc();
                int i, n = hwloc_get_nbobjs_by_type(topo, HWLOC_OBJ_PU);
                for (i = 0; i < n; i++)
                    hwloc_bitmap_set(set, hwloc_get_obj_by_type(topo, HWLOC_OBJ_PU, i)->os_index);
                hwloc_bitmap_list_snprintf(buf, sizeof buf, set);
                printf("rank %u shmem adopted\n", me.rank);
                printf("rank %u topo_pus %s\n", me.rank, buf);
                hwloc_bitmap_free(set);
                hwloc_topology_destroy(topo);
            }
            if (fd >= 0)
                close(fd);
        }
    }
    cgroup_cpus(buf, sizeof buf);
    printf("rank %u cgroup %s\n", me.rank, buf);
    status_field("Cpus_allowed_list", buf, sizeof buf);
    printf("rank %u allowed %s\n", me.rank, buf);

    v = get(&wild, PMIX_HWLOC_XML_V2);
    printf("rank %u xml_v2 %zu\n", me.rank,
           v && v->type == PMIX_STRING ? strlen(v->data.string) : 0);
    v = get(&wild, PMIX_HWLOC_XML_V1);
    printf("rank %u xml_v1 %zu\n", me.rank,
           v && v->type == PMIX_STRING ? strlen(v->data.string) : 0);

    v = get(&me, PMIX_CPUSET);
    printf("rank %u cpuset %s\n", me.rank, v && v->type == PMIX_STRING ? v->data.string : "none");
    v = get(&me, PMIX_LOCALITY_STRING);
    printf("rank %u locality %s\n", me.rank, v && v->type == PMIX_STRING ? v->data.string : "none");

    v = get(&wild, PMIX_LOCAL_PEERS);
    if (v && v->type == PMIX_STRING) {
        char *peers = strdup(v->data.string), *tok, *save = NULL;
        for (tok = strtok_r(peers, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
            pmix_proc_t peer;
            pmix_value_t *loc;
            PMIX_LOAD_PROCID(&peer, me.nspace, (pmix_rank_t)atoi(tok));
            loc = get(&peer, PMIX_LOCALITY_STRING);
            printf("rank %u peer_locality %s %s\n", me.rank, tok,
                   loc && loc->type == PMIX_STRING ? loc->data.string : "none");
        }
        free(peers);
    }
    v = get(&me, PMIX_DEVICE_DISTANCES);
    printf("rank %u distances %zu\n", me.rank,
           v && v->type == PMIX_DATA_ARRAY && v->data.darray ? v->data.darray->size : 0);
    fflush(stdout);
    PMIx_Finalize(NULL, 0);
    return 0;
}
