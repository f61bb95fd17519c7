#pragma once

// The OpenPMIx server of one node of one step: initialises the library,
// registers the step's namespace and this node's clients from the launch
// plan, and turns PMIx upcalls into calls on a StepCollective, on the loop
// thread.

#include "base/expected.hpp"
#include "loop_inbox.hpp"
#include "plan/launch_plan.hpp"
#include "protocol/timeline/exchange_counters.hpp"
#include "protocol/wire/name_payloads.hpp"
#include "protocol/wire/spawn_payloads.hpp"
#include "served_profile.hpp"

#include <hwloc.h>
#include <pmix_server.h>

#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

namespace stepmap::server {

struct StepConfig;

// Whether this build answers PMIx group operations (pmix_group.cpp).
constexpr bool kServesGroups = PMIX_NUMERIC_VERSION >= 0x00050000;

// Completion of a host operation: status and (for fences and direct modex)
// the bytes to hand back to the PMIx library.
using DataReply = std::function<void(pmix_status_t, std::string)>;

// What the node servers do together. Implemented by HubCollective; called on the
// loop thread.
class StepCollective {
public:
    virtual ~StepCollective() = default;
    // nodes: sorted participating node indices.
    virtual void fence(std::vector<std::uint32_t> nodes, bool collect, std::string data,
                       DataReply done) = 0;
    // A barrier of nodes told apart from others over them by label.
    virtual void barrier(const std::string &label, std::vector<std::uint32_t> nodes,
                         DataReply done) = 0;
    virtual void directModex(std::uint32_t rank, DataReply done) = 0;
    virtual void abort(std::uint32_t rank, int status, std::string message) = 0;
    // A line for srun's terminal about rank.
    virtual void notice(std::uint32_t rank, std::string text) = 0;
    // The step's name service (publish, lookup, unpublish); done gets the
    // hub's reply, or nothing if the hub is gone.
    using NameDone = std::function<void(std::optional<wire::NameReplyMsg>)>;
    virtual void names(wire::NameRequestMsg request, NameDone done) = 0;
    // Job-wide operations (hub/job_ids.hpp), served by the hub of the
    // job's first step: a rank's spawn; a collective over processes of
    // several steps; the data of another step's rank (by job-wide id).
    using SpawnDone = std::function<void(std::optional<wire::SpawnReplyMsg>)>;
    virtual void spawn(wire::SpawnRequestMsg request, SpawnDone done) = 0;
    using JobBarrierDone = std::function<void(std::optional<wire::JobBarrierDoneMsg>)>;
    virtual void jobBarrier(wire::JobBarrierMsg barrier, JobBarrierDone done) = 0;
    virtual void otherStepModex(std::uint32_t jobWideRank, DataReply done) = 0;
    // Every rank of this node has called PMIx_Init.
    virtual void ranksStarted() {}
};

// The ranks a PMIx operation names ({PMIX_RANK_WILDCARD}: all of them).
std::vector<pmix_rank_t> ranksNamed(const pmix_proc_t procs[], size_t nprocs);

class PmixHost {
public:
    // topology: the step's hardware on this node, shared with the clients.
    PmixHost(const StepConfig &config, LoopInbox &inbox, hwloc_topology_t topology,
             hwloc_const_bitmap_t stepCpuset);
    ~PmixHost();
    PmixHost(const PmixHost &) = delete;
    PmixHost &operator=(const PmixHost &) = delete;

    void setCollective(StepCollective *c) { collective_ = c; }
    // Runs once, at this node's first fence, before it goes to the other
    // nodes (the modex-less launch checks its ranks' committed records
    // there); the fence fails when it answers false. Loop thread.
    using FenceGate = std::function<void(std::function<void(bool pass)>)>;
    void setFirstFenceGate(FenceGate gate) { firstFenceGate_ = std::move(gate); }
    // What to serve of the interconnect profile (served_profile.hpp); before
    // start(). Without it nothing of a profile is registered.
    void serveProfile(ServedProfile profile) { profile_ = std::move(profile); }

    // Initialises the server and registers the namespace and local clients.
    Expected<void> start();
    // Per local rank, the environment its task must get (KEY=VALUE).
    Expected<std::map<std::uint32_t, std::vector<std::string>>> clientEnvironments();
    // Owner side of a direct modex: asks the local library for rank's data.
    void localModex(std::uint32_t rank, DataReply done);
    // What local rank committed under key (a byte object or string), or
    // nothing; asked of this server's store alone. Loop thread.
    void committedValue(std::uint32_t rank, const std::string &key,
                        std::function<void(std::optional<std::string>)> done);
    // A rank failed (its exit status, 1-255): with --with-ft=ulfm, this
    // node's ranks are told (the events Open MPI's ULFM listens for) and
    // later fences leave out the nodes whose ranks all failed; else nothing.
    // Loop thread.
    void rankFailed(std::uint32_t rank, int status);
    void stop();
    // The fences and direct-modex requests of this node's clients so far.
    // Loop thread.
    const timeline::ExchangeCounters &exchangeCounters() const { return counters_; }

private:
    static pmix_status_t fenceUpcall(const pmix_proc_t procs[], size_t nprocs,
                                     const pmix_info_t info[], size_t ninfo, char *data,
                                     size_t ndata, pmix_modex_cbfunc_t cbfunc, void *cbdata);
    static pmix_status_t dmodexUpcall(const pmix_proc_t *proc, const pmix_info_t info[],
                                      size_t ninfo, pmix_modex_cbfunc_t cbfunc, void *cbdata);
    // Name publishing and connect/disconnect (pmix_dynamic.cpp).
    static pmix_status_t publishUpcall(const pmix_proc_t *proc, const pmix_info_t info[],
                                       size_t ninfo, pmix_op_cbfunc_t cbfunc, void *cbdata);
    static pmix_status_t lookupUpcall(const pmix_proc_t *proc, char **keys,
                                      const pmix_info_t info[], size_t ninfo,
                                      pmix_lookup_cbfunc_t cbfunc, void *cbdata);
    static pmix_status_t unpublishUpcall(const pmix_proc_t *proc, char **keys,
                                         const pmix_info_t info[], size_t ninfo,
                                         pmix_op_cbfunc_t cbfunc, void *cbdata);
    static pmix_status_t connectUpcall(const pmix_proc_t procs[], size_t nprocs,
                                       const pmix_info_t info[], size_t ninfo,
                                       pmix_op_cbfunc_t cbfunc, void *cbdata);
    // PMIx_Spawn (MPI_Comm_spawn): to srun, which starts the processes as a
    // new step of the job (pmix_spawn.cpp).
    static pmix_status_t spawnUpcall(const pmix_proc_t *proc, const pmix_info_t jobInfo[],
                                     size_t ninfo, const pmix_app_t apps[], size_t napps,
                                     pmix_spawn_cbfunc_t cbfunc, void *cbdata);
    static pmix_status_t disconnectUpcall(const pmix_proc_t procs[], size_t nprocs,
                                          const pmix_info_t info[], size_t ninfo,
                                          pmix_op_cbfunc_t cbfunc, void *cbdata);
#if PMIX_NUMERIC_VERSION >= 0x00050000
    // PMIx_Group_construct/_destruct (pmix_group.cpp): a job-wide barrier
    // of the members' nodes, with a context id from the job's hub.
    static pmix_status_t groupUpcall(pmix_group_operation_t op, char grp[],
                                     const pmix_proc_t procs[], size_t nprocs,
                                     const pmix_info_t directives[], size_t ndirs,
                                     pmix_info_cbfunc_t cbfunc, void *cbdata);
#endif
    // The host the upcalls serve (PMIx gives them no user pointer).
    static PmixHost *current();
    // A request of a rank of this node (proc), for the hub; the answer
    // comes back on the loop thread. False when proc is not one.
    bool askNames(const pmix_proc_t *proc, wire::NameRequestMsg request,
                  StepCollective::NameDone done);
    // connect/disconnect among this step's processes: a barrier of their
    // nodes; another step's namespace is refused.
    pmix_status_t joinProcesses(const char *what, const pmix_proc_t procs[], size_t nprocs,
                                pmix_op_cbfunc_t cbfunc, void *cbdata);

    static pmix_status_t clientConnectedUpcall(const pmix_proc_t *proc, void *serverObject,
                                               pmix_op_cbfunc_t cbfunc, void *cbdata);
    // PMIx_Log: stderr text to srun's terminal, the rest "not supported"
    // (the client prints it).
    static void logUpcall(const pmix_proc_t *client, const pmix_info_t data[], size_t ndata,
                          const pmix_info_t directives[], size_t ndirs, pmix_op_cbfunc_t cbfunc,
                          void *cbdata);
    static pmix_status_t abortUpcall(const pmix_proc_t *proc, void *serverObject, int status,
                                     const char msg[], pmix_proc_t procs[], size_t nprocs,
                                     pmix_op_cbfunc_t cbfunc, void *cbdata);

    Expected<void> registerNamespace();
    // Another step of the job (spawned, or the spawner), so that the
    // library knows its ranks live elsewhere and asks for their data
    // (direct modex, through the job's hub). Loop thread.
    Expected<void> registerOtherNamespace(const std::string &nspace, const LaunchPlan &plan);
    // Registers the steps not known yet; false (logged) if one fails.
    bool learnSteps(const std::vector<wire::JobStepEntry> &steps);
    // Whether a process is of another step than this one. Any thread.
    bool otherStep(const pmix_proc_t &proc) const;
    // A connect, disconnect or fence over processes of several steps: a
    // job-wide barrier through the job's hub; done gets every node's data
    // once each has registered the others' namespaces. Any thread.
    void joinAcrossSteps(const char *what, const pmix_proc_t procs[], size_t nprocs, bool collect,
                         std::string data, DataReply done);
    // The same for a barrier already made (a group construct's, which may
    // ask the hub for a context id); done gets the hub's whole answer.
    using AcrossStepsDone = std::function<void(pmix_status_t, wire::JobBarrierDoneMsg)>;
    void barrierAcrossSteps(wire::JobBarrierMsg barrier, AcrossStepsDone done);
    // A rank's spawn, on the loop thread.
    void spawn(std::uint32_t rank, wire::SpawnRequestMsg request, pmix_spawn_cbfunc_t cbfunc,
               void *cbdata);
    // The nodes with a live rank of the set ({WILDCARD}: the step). Loop
    // thread.
    std::vector<std::uint32_t> participants(const std::vector<pmix_rank_t> &ranks) const;

    const StepConfig &config_;
    LoopInbox &inbox_;
    StepCollective *collective_ = nullptr;
    FenceGate firstFenceGate_;
    hwloc_topology_t topology_;
    pmix_topology_t pmixTopology_{}; // PMIx keeps a pointer to this
    hwloc_const_bitmap_t stepCpuset_;
    bool initialized_ = false;
    // Other nodes' direct-modex requests that came before the namespace
    // was registered, answered once it is (serveHeldModex).
    bool serving_ = false;
    std::vector<std::pair<std::uint32_t, DataReply>> heldModex_;
    void serveHeldModex(pmix_status_t status);
    ServedProfile profile_;
    timeline::ExchangeCounters counters_; // loop thread
    // The job's other steps this server registered: namespace -> index
    // (hub/job_ids.hpp). Loop thread.
    std::map<std::string, std::uint32_t> otherSteps_;
    std::set<std::uint32_t> connected_; // local ranks past PMIx_Init; loop thread
    std::set<std::uint32_t> failed_;    // ranks reported failed (--with-ft); loop thread
    std::map<std::uint32_t, std::size_t> failedOnNode_; // of them, per node; loop thread
    std::set<std::uint32_t> deadNodes_;                 // nodes whose ranks all failed
    // PMIx_Log texts sent to srun, and the help topics among them; beyond
    // the bound the clients print their own (srun takes 16 notices a node).
    static constexpr std::size_t kForwardedLogs = 12;
    std::size_t forwardedLogs_ = 0;    // loop thread
    std::set<std::string> helpTopics_; // loop thread
};

} // namespace stepmap::server
