// One rank of server_scale's step: a real PMIx client that joins its node
// server (PMIX_* environment) and runs the step's PMIx pattern, printing
// CLOCK_MONOTONIC times (ns) around each call so that the harness can line
// the ranks up (they share this machine's clock):
//   Init; Put of a <bytes>-byte key, Commit; a fence without data (the
//   ranks line up); a measured fence without data; a Get of the next
//   node's first rank's key (direct modex: no data was collected); a
//   measured fence collecting data; Finalize.
// Usage: scale_client BYTES RANKS_PER_NODE. Output, one line each:
//   init=<t0>,<t1> fence=<t0>,<t1> modex=<t0>,<t1> collect=<t0>,<t1>
// or "error=<step>: <PMIx status>" (exit status 1).

#include <pmix.h>

#include <time.h>

#include <cstdio>
#include <cstdlib>
#include <string>

namespace {

long long nowNs() {
    timespec ts{};
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return static_cast<long long>(ts.tv_sec) * 1000000000LL + ts.tv_nsec;
}

int fail(const char *step, pmix_status_t rc) {
    std::printf("error=%s: %s\n", step, PMIx_Error_string(rc));
    return 1;
}

pmix_status_t fence(bool collect) {
    pmix_info_t info;
    bool yes = true;
    PMIX_INFO_LOAD(&info, PMIX_COLLECT_DATA, &yes, PMIX_BOOL);
    pmix_status_t rc = PMIx_Fence(nullptr, 0, collect ? &info : nullptr, collect ? 1 : 0);
    PMIX_INFO_DESTRUCT(&info);
    return rc;
}

pmix_status_t put(std::size_t bytes) {
    std::string blob(bytes, 'x');
    pmix_value_t value;
    PMIX_VALUE_LOAD(&value, blob.c_str(), PMIX_STRING);
    pmix_status_t rc = PMIx_Put(PMIX_GLOBAL, "stepmap.bench", &value);
    PMIX_VALUE_DESTRUCT(&value);
    return rc == PMIX_SUCCESS ? PMIx_Commit() : rc;
}

// The key of `rank`, which lives on another node.
pmix_status_t getRemote(const pmix_proc_t &me, pmix_rank_t rank) {
    pmix_proc_t who;
    PMIX_LOAD_PROCID(&who, me.nspace, rank);
    pmix_info_t timeout;
    int seconds = 60;
    PMIX_INFO_LOAD(&timeout, PMIX_TIMEOUT, &seconds, PMIX_INT);
    pmix_value_t *value = nullptr;
    pmix_status_t rc = PMIx_Get(&who, "stepmap.bench", &timeout, 1, &value);
    PMIX_INFO_DESTRUCT(&timeout);
    if (value)
        PMIX_VALUE_RELEASE(value);
    return rc;
}

std::uint32_t jobSize(const pmix_proc_t &me) {
    pmix_proc_t job;
    PMIX_LOAD_PROCID(&job, me.nspace, PMIX_RANK_WILDCARD);
    pmix_value_t *value = nullptr;
    std::uint32_t size = 1;
    if (PMIx_Get(&job, PMIX_JOB_SIZE, nullptr, 0, &value) == PMIX_SUCCESS && value) {
        size = value->data.uint32;
        PMIX_VALUE_RELEASE(value);
    }
    return size;
}

// Runs step, noting when it began and ended in span[0] and span[1].
template <class Step> pmix_status_t timed(long long *span, Step step) {
    span[0] = nowNs();
    pmix_status_t rc = step();
    span[1] = nowNs();
    return rc;
}

} // namespace

int main(int argc, char **argv) {
    if (argc != 3)
        return 2;
    const std::size_t bytes = std::strtoul(argv[1], nullptr, 10);
    const std::uint32_t perNode = static_cast<std::uint32_t>(std::strtoul(argv[2], nullptr, 10));
    long long t[8];
    pmix_proc_t me;
    pmix_status_t rc = timed(&t[0], [&] { return PMIx_Init(&me, nullptr, 0); });
    if (rc != PMIX_SUCCESS)
        return fail("init", rc);
    const std::uint32_t size = jobSize(me);
    const pmix_rank_t other = ((me.rank / perNode + 1) * perNode) % size;
    if ((rc = put(bytes)) != PMIX_SUCCESS)
        return fail("put", rc);
    if ((rc = fence(false)) != PMIX_SUCCESS)
        return fail("first fence", rc);
    if ((rc = timed(&t[2], [] { return fence(false); })) != PMIX_SUCCESS)
        return fail("fence", rc);
    if ((rc = timed(&t[4], [&] { return getRemote(me, other); })) != PMIX_SUCCESS)
        return fail("direct modex", rc);
    if ((rc = timed(&t[6], [] { return fence(true); })) != PMIX_SUCCESS)
        return fail("collecting fence", rc);
    std::printf("init=%lld,%lld fence=%lld,%lld modex=%lld,%lld collect=%lld,%lld\n", t[0], t[1],
                t[2], t[3], t[4], t[5], t[6], t[7]);
    std::fflush(stdout);
    PMIx_Finalize(nullptr, 0);
    return 0;
}
