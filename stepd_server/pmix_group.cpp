// PMIx groups: PMIx_Group_construct and _destruct, which Open MPI 5 calls
// for every communicator of an MPI-4 session (MPI_Comm_create_from_group
// and what derives from it) and MPI_Intercomm_create_from_groups.
//
// A construct is a job-wide barrier of the members' nodes through the job's
// hub (the same one a connect across steps uses): it carries what the
// library gathered from this node's members (their endpoint data and
// PMIX_GROUP_INFO) and comes back with every node's, and, when a member
// asked for it (PMIX_GROUP_ASSIGN_CONTEXT_ID), with a context id the hub
// gives, unique in the job. The answer always names the members: a PMIx 5
// client reads the membership first and cannot read a reply without it.
//
// Only with a PMIx 5 server library: a 4.2 library answers a construct in
// a form a PMIx 5 client (Open MPI 5) misreads, so there the upcall is not
// offered and Open MPI reports the operation unsupported.

#include "collective_label.hpp"
#include "pmix_host.hpp"
#include "server_log.hpp"
#include "step_config.hpp"

#include <pmix.h>

#include <cstring>
#include <memory>

namespace stepmap::server {

#if PMIX_NUMERIC_VERSION >= 0x00050000

namespace {

// A group's id reaches the hub inside the barrier's label (1 KiB at most).
constexpr std::size_t kMaxGroupId = 256;

// What the library reads back; kept until it calls release.
struct GroupAnswer {
    pmix_info_t *info = nullptr;
    size_t ninfo = 0;
    ~GroupAnswer() {
        if (info)
            PMIX_INFO_FREE(info, ninfo);
    }
};

void releaseAnswer(void *cbdata) {
    delete static_cast<GroupAnswer *>(cbdata);
}

// Hands the library the members, the context id (0: none) and the gathered
// data. Any thread.
void answer(pmix_info_cbfunc_t cbfunc, void *cbdata, pmix_status_t status,
            const pmix_proc_t procs[], size_t nprocs, std::uint64_t contextId,
            const std::string &data) {
    if (!cbfunc)
        return;
    if (status != PMIX_SUCCESS) {
        cbfunc(status, nullptr, 0, cbdata, nullptr, nullptr);
        return;
    }
    auto reply = std::make_unique<GroupAnswer>();
    reply->ninfo = 1 + (contextId ? 1 : 0) + (data.empty() ? 0 : 1);
    PMIX_INFO_CREATE(reply->info, reply->ninfo);
    size_t n = 0;
    pmix_data_array_t members;
    members.type = PMIX_PROC;
    members.size = nprocs;
    members.array = const_cast<pmix_proc_t *>(procs);
    PMIx_Info_load(&reply->info[n++], PMIX_GROUP_MEMBERSHIP, &members, PMIX_DATA_ARRAY);
    if (contextId) {
        size_t id = static_cast<size_t>(contextId);
        PMIx_Info_load(&reply->info[n++], PMIX_GROUP_CONTEXT_ID, &id, PMIX_SIZE);
    }
    if (!data.empty()) {
        pmix_byte_object_t bo;
        bo.bytes = const_cast<char *>(data.data());
        bo.size = data.size();
        PMIx_Info_load(&reply->info[n++], PMIX_GROUP_ENDPT_DATA, &bo, PMIX_BYTE_OBJECT);
    }
    GroupAnswer *kept = reply.release();
    cbfunc(PMIX_SUCCESS, kept->info, kept->ninfo, cbdata, releaseAnswer, kept);
}

struct Directives {
    bool assignContextId = false;
    bool localOnly = false;
    bool barrier = false;
    std::string data;
};

Directives readDirectives(const pmix_info_t info[], size_t ninfo) {
    Directives d;
    for (size_t i = 0; i < ninfo; ++i) {
        if (PMIX_CHECK_KEY(&info[i], PMIX_GROUP_ASSIGN_CONTEXT_ID))
            d.assignContextId = PMIX_INFO_TRUE(&info[i]);
        else if (PMIX_CHECK_KEY(&info[i], PMIX_GROUP_LOCAL_ONLY))
            d.localOnly = PMIX_INFO_TRUE(&info[i]);
        else if (PMIX_CHECK_KEY(&info[i], PMIX_EMBED_BARRIER))
            d.barrier = PMIX_INFO_TRUE(&info[i]);
        else if (PMIX_CHECK_KEY(&info[i], PMIX_GROUP_ENDPT_DATA) &&
                 info[i].value.type == PMIX_BYTE_OBJECT && info[i].value.data.bo.bytes)
            d.data.assign(info[i].value.data.bo.bytes, info[i].value.data.bo.size);
    }
    return d;
}

} // namespace

// PMIx progress thread.
pmix_status_t PmixHost::groupUpcall(pmix_group_operation_t op, char grp[],
                                    const pmix_proc_t procs[], size_t nprocs,
                                    const pmix_info_t directives[], size_t ndirs,
                                    pmix_info_cbfunc_t cbfunc, void *cbdata) {
    try {
        PmixHost *self = current();
        if (!self)
            return PMIX_ERR_NOT_AVAILABLE;
        const std::string id = grp ? std::string(grp, strnlen(grp, kMaxGroupId + 1)) : "";
        if (id.empty() || id.size() > kMaxGroupId || !procs || nprocs == 0 ||
            nprocs > wire::kMaxBarrierProcs) {
            logError("a PMIx group " +
                     (id.empty() ? std::string("without an id") : "'" + id.substr(0, 64) + "'") +
                     " refused: it needs an id of 1 to " + std::to_string(kMaxGroupId) +
                     " characters and 1 to " + std::to_string(wire::kMaxBarrierProcs) +
                     " members (" + std::to_string(nprocs) + " given)");
            return PMIX_ERR_BAD_PARAM;
        }
        // Destruct: only the library's own bookkeeping, as under PRRTE;
        // Open MPI destructs each group right after its construct.
        if (op == PMIX_GROUP_DESTRUCT)
            return PMIX_OPERATION_SUCCEEDED;
        if (op != PMIX_GROUP_CONSTRUCT)
            return PMIX_ERR_NOT_SUPPORTED;
        Directives d = readDirectives(directives, ndirs);
        // The members are copied: the library may free its array once the
        // upcall returns.
        auto members = std::make_shared<std::vector<pmix_proc_t>>(procs, procs + nprocs);
        if ((d.localOnly || !d.barrier) && !d.assignContextId) {
            // Every member is this node's (the library checked) or no one
            // asked to wait for the others: nothing to do together.
            self->inbox_.post([members, cbfunc, cbdata] {
                answer(cbfunc, cbdata, PMIX_SUCCESS, members->data(), members->size(), 0, {});
            });
            return PMIX_SUCCESS;
        }
        wire::JobBarrierMsg barrier;
        barrier.label = acrossLabel("group " + id, procs, nprocs, barrier.procs);
        barrier.collect = true;
        barrier.data = std::move(d.data);
        barrier.assignContextId = d.assignContextId;
        const bool wantsId = d.assignContextId;
        self->barrierAcrossSteps(
            std::move(barrier), [id, members, wantsId, cbfunc, cbdata](pmix_status_t status,
                                                                       wire::JobBarrierDoneMsg m) {
                if (status == PMIX_SUCCESS && wantsId && m.contextId == 0) {
                    logError("PMIx group '" + id + "' failed: the hub gave no context id");
                    status = PMIX_ERROR;
                }
                if (status != PMIX_SUCCESS)
                    answer(cbfunc, cbdata, status, nullptr, 0, 0, {});
                else
                    answer(cbfunc, cbdata, PMIX_SUCCESS, members->data(), members->size(),
                           m.contextId, m.data);
            });
        return PMIX_SUCCESS;
    } catch (...) {
        return PMIX_ERROR;
    }
}

#endif

} // namespace stepmap::server
