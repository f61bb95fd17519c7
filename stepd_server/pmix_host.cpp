#include "pmix_host.hpp"

#include "protocol/hub/job_ids.hpp"
#include "protocol/wire/payloads.hpp"

#include "client_admission.hpp"
#include "hosts/hostlist.hpp"
#include "hwloc_handles.hpp"
#include "plan/process_mapping.hpp"
#include "pmix_info_list.hpp"
#include "served_profile_info.hpp"
#include "server_log.hpp"
#include "step_config.hpp"

#include <pmix.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <condition_variable>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <mutex>

namespace stepmap::server {

namespace {

// PMIx gives module callbacks no user pointer; the one host of this process.
PmixHost *theHost = nullptr;

// Waits for a PMIx operation that completes through a callback.
struct OpWait {
    std::mutex m;
    std::condition_variable cv;
    bool done = false;
    pmix_status_t status = PMIX_SUCCESS;

    static void callback(pmix_status_t status, void *cbdata) {
        auto *w = static_cast<OpWait *>(cbdata);
        std::lock_guard lock(w->m);
        w->status = status;
        w->done = true;
        w->cv.notify_all();
    }
    pmix_status_t wait(pmix_status_t rc) {
        if (rc == PMIX_OPERATION_SUCCEEDED)
            return PMIX_SUCCESS;
        if (rc != PMIX_SUCCESS)
            return rc;
        std::unique_lock lock(m);
        cv.wait(lock, [&] { return done; });
        return status;
    }
};

// Locality data of a local process: where it may run (its binding when the
// plan binds it, else the step's CPUs here), its locality string and device
// distances from there. PMIX_CPUSET only for a bound process: Open MPI takes
// its presence to mean "bound".
void addLocalProcData(InfoList &proc, hwloc_topology_t topology, hwloc_const_bitmap_t stepCpus,
                      const CpuBinding *binding, const std::string &procdir) {
    topology::BitmapPtr bound;
    hwloc_const_bitmap_t runsOn = stepCpus;
    if (binding) {
        bound = topology::makeBitmap();
        for (auto cpu : binding->os)
            hwloc_bitmap_set(bound.get(), cpu);
        runsOn = bound.get();
    }
    pmix_cpuset_t cpuset{const_cast<char *>("hwloc"), const_cast<hwloc_bitmap_t>(runsOn)};
    if (binding) {
        char *text = nullptr;
        if (PMIx_server_generate_cpuset_string(&cpuset, &text) == PMIX_SUCCESS && text) {
            proc.addString(PMIX_CPUSET, text);
            free(text);
        }
    }
    char *locality = nullptr;
    if (PMIx_server_generate_locality_string(&cpuset, &locality) == PMIX_SUCCESS && locality) {
        proc.addString(PMIX_LOCALITY_STRING, locality);
        free(locality);
    }
    pmix_topology_t topo{const_cast<char *>("hwloc"), topology};
    pmix_device_distance_t *dist = nullptr;
    size_t ndist = 0;
    if (PMIx_Compute_distances(&topo, &cpuset, nullptr, 0, &dist, &ndist) == PMIX_SUCCESS &&
        ndist > 0) {
        pmix_data_array_t darray{PMIX_DEVICE_DIST, ndist, dist};
        proc.add(PMIX_DEVICE_DISTANCES, &darray, PMIX_DATA_ARRAY);
        PMIX_DEVICE_DIST_FREE(dist, ndist);
    }
    proc.addString(PMIX_PROCDIR, procdir);
}

// A rank writes its connection header right after connecting; munged's
// answer comes after that read. Generous for a loaded node, short for a
// connection that only sits there.
constexpr std::chrono::milliseconds kHandshakeDeadline{5000};

// Where libmunge (and so PMIx's munge security) reaches munged.
constexpr const char *kMungeSocket = "/run/munge/munge.socket.2";

// PMIx 4.2.2 crashes in PMIx_server_init when its only security module
// cannot reach munged; find out first and say so. Why it cannot, if so.
Expected<void> mungeReachable() {
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0)
        return UserError{std::strerror(errno)};
    sockaddr_un addr{};
    addr.sun_family = AF_UNIX;
    std::strncpy(addr.sun_path, kMungeSocket, sizeof addr.sun_path - 1);
    const bool ok = connect(fd, reinterpret_cast<sockaddr *>(&addr), sizeof addr) == 0;
    const int error = errno;
    close(fd);
    if (!ok)
        return UserError{std::strerror(error)};
    return {};
}

void releaseString(void *cbdata) {
    delete static_cast<std::string *>(cbdata);
}

// Completes a PMIx modex callback with bytes the library may hold until it
// calls the release function.
void completeModex(pmix_modex_cbfunc_t cbfunc, void *cbdata, pmix_status_t status,
                   std::string data) {
    auto *owned = new std::string(std::move(data));
    cbfunc(status, owned->data(), owned->size(), cbdata, releaseString, owned);
}

} // namespace

PmixHost::PmixHost(const StepConfig &config, LoopInbox &inbox, hwloc_topology_t topology,
                   hwloc_const_bitmap_t stepCpuset)
    : config_(config), inbox_(inbox), topology_(topology), stepCpuset_(stepCpuset) {
    theHost = this;
}

PmixHost::~PmixHost() {
    stop();
    theHost = nullptr;
}

Expected<void> PmixHost::start() {
    static pmix_server_module_t module = [] {
        pmix_server_module_t m{};
        m.fence_nb = fenceUpcall;
        m.direct_modex = dmodexUpcall;
        m.abort = abortUpcall;
        m.client_connected = clientConnectedUpcall;
        m.publish = publishUpcall;
        m.lookup = lookupUpcall;
        m.unpublish = unpublishUpcall;
        m.connect = connectUpcall;
        m.disconnect = disconnectUpcall;
        m.spawn = spawnUpcall;
        m.log = logUpcall;
#if PMIX_NUMERIC_VERSION >= 0x00050000
        m.group = groupUpcall;
#endif
        return m;
    }();
    const std::string &node = config_.plan.nodes[config_.nodeIndex].name;
    // Keep all client data in the server's hash store, not in the shared-
    // memory dstore. With the dstore, PMIx 4.2.2 loses a race on direct
    // modex between two ranks of one node: rank A misses B's key in shared
    // memory, B's commit lands (local part in shared memory, remote part in
    // the server's hash), then A's request finds the key only in B's remote
    // scope and is answered NOT_FOUND at once, without waiting; Open MPI's
    // MPI_Init then fails ("PML add procs failed"). The hash store keeps
    // both scopes where that lookup sees them. The clients learn the choice
    // from PMIx_server_setup_fork (PMIX_GDS_MODULE).
    setenv("PMIX_MCA_gds", "hash", 1);
    // PMIx 4.2 serves clients on loopback TCP, where its "native" security
    // believes the uid a client claims: any local user could join the step
    // as one of its ranks. With munge only, a client proves its uid through
    // munged and a claim in any other mode is refused. The clients learn
    // the mode from PMIx_server_setup_fork (PMIX_SECURITY_MODE).
    setenv("PMIX_MCA_psec", config_.clientAuth.c_str(), 1);
    if (auto munge = config_.clientAuth == "munge" ? mungeReachable() : Expected<void>(); !munge)
        return UserError{std::string("client_auth=munge needs munged on this node, but ") +
                         kMungeSocket + " cannot be reached (" + munge.error().message +
                         "); start munged, or set client_auth=native in plugstack.conf (any "
                         "local user could then join the step's PMIx server)"};
    // Only this server's user reaches PMIx's reader, and no connection
    // holds PMIx's thread for longer than this (client_admission.hpp).
    admitOnly(getuid(), kHandshakeDeadline);
    try {
        // Built by hand: an info list would copy the topology value and
        // destroy the hwloc topology with it, while PMIx keeps the pointer.
        std::uint8_t no = 0, yes = 1;
        pmix_info_t init[8];
        // Every path PMIx hands its clients (rendezvous, dstore, the shared
        // topology) starts here, so they resolve wherever the clients live.
        const std::string tmpdir = clientTmpdir(config_);
        PMIX_INFO_LOAD(&init[0], PMIX_SERVER_TMPDIR, tmpdir.c_str(), PMIX_STRING);
        PMIX_INFO_LOAD(&init[1], PMIX_SYSTEM_TMPDIR, tmpdir.c_str(), PMIX_STRING);
        PMIX_INFO_LOAD(&init[2], PMIX_HOSTNAME, node.c_str(), PMIX_STRING);
        PMIX_INFO_LOAD(&init[3], PMIX_SERVER_TOOL_SUPPORT, &no, PMIX_BOOL);
        PMIX_INFO_LOAD(&init[4], PMIX_SERVER_SYSTEM_SUPPORT, &no, PMIX_BOOL);
        PMIX_INFO_LOAD(&init[5], PMIX_SERVER_REMOTE_CONNECTIONS, &no, PMIX_BOOL);
        // Hand the clients the step's topology (XML v1/v2 and hwloc shared
        // memory), not one they would discover themselves.
        PMIX_INFO_LOAD(&init[6], PMIX_SERVER_SHARE_TOPOLOGY, &yes, PMIX_BOOL);
        PMIX_INFO_CONSTRUCT(&init[7]);
        PMIX_LOAD_KEY(init[7].key, PMIX_TOPOLOGY2);
        init[7].value.type = PMIX_TOPO;
        init[7].value.data.topo = &pmixTopology_;
        pmixTopology_.source = const_cast<char *>("hwloc");
        pmixTopology_.topology = topology_;
        pmix_status_t rc = PMIx_server_init(&module, init, 8);
        for (int i = 0; i < 7; ++i)
            PMIX_INFO_DESTRUCT(&init[i]);
        if (rc != PMIX_SUCCESS)
            return UserError{std::string("PMIx_server_init failed: ") + PMIx_Error_string(rc)};
        initialized_ = true;
        auto registered = registerNamespace();
        serveHeldModex(registered ? PMIX_SUCCESS : PMIX_ERR_INIT);
        return registered;
    } catch (const std::exception &e) {
        return UserError{e.what()};
    }
}

namespace {

// "a,b,c" of a list of ranks.
std::string rankList(const std::vector<std::uint32_t> &ranks) {
    std::string text;
    for (std::size_t i = 0; i < ranks.size(); ++i)
        text += (i ? "," : "") + std::to_string(ranks[i]);
    return text;
}

// The step's node names in plan order (node id order), comma-separated.
std::string nodeList(const LaunchPlan &plan) {
    std::string text;
    for (std::size_t n = 0; n < plan.nodes.size(); ++n)
        text += (n ? "," : "") + plan.nodes[n].name;
    return text;
}

// Application contexts (MPMD): size and leader (lowest rank) of each.
void addAppInfo(InfoList &job, const LaunchPlan &plan, std::uint32_t apps) {
    const auto np = static_cast<std::uint32_t>(plan.ranks.size());
    std::vector<std::uint32_t> appSize(apps, 0), appLeader(apps, np);
    for (std::uint32_t r = 0; r < np; ++r) {
        const std::uint32_t a = plan.ranks[r].app;
        ++appSize[a];
        appLeader[a] = std::min(appLeader[a], r);
    }
    for (std::uint32_t a = 0; a < apps; ++a) {
        InfoList app;
        app.addU32(PMIX_APPNUM, a);
        app.addU32(PMIX_APP_SIZE, appSize[a]);
        app.addRank(PMIX_APPLDR, appLeader[a] < np ? appLeader[a] : 0);
        job.addList(PMIX_APP_INFO_ARRAY, app);
    }
}

// The job's and this node's data. The node list goes as text, not as
// PMIX_NODE_MAP and PMIX_PROC_MAP: from those PMIx 4.2.2 stores every
// rank's PMIX_HOSTNAME and every node's peer list, one hash entry each,
// copied to every client (a 1M-rank step: O(ranks) on every node).
// What any step's namespace says of itself: id, sizes, nodes, apps.
void addStepShape(InfoList &job, const std::string &nspace, const LaunchPlan &plan) {
    const auto np = static_cast<std::uint32_t>(plan.ranks.size());
    job.addString(PMIX_JOBID, nspace);
    job.addU32(PMIX_JOB_SIZE, np);
    job.addU32(PMIX_MAX_PROCS, np);
    const std::uint32_t apps = std::max<std::uint32_t>(1, plan.appCount());
    job.addU32(PMIX_JOB_NUM_APPS, apps);
    job.addU32(PMIX_NUM_NODES, static_cast<std::uint32_t>(plan.nodes.size()));
    job.addString(PMIX_NODE_LIST, nodeList(plan));
    addAppInfo(job, plan, apps);
}

void addJobInfo(InfoList &job, const StepConfig &config, const std::vector<std::uint32_t> &local) {
    const LaunchPlan &plan = config.plan;
    const auto np = static_cast<std::uint32_t>(plan.ranks.size());
    addStepShape(job, config.nspace, plan);
    job.addU32(PMIX_UNIV_SIZE, np);
    // As Slurm's mpi/pmix gives it: PMI-2 shims find their node's ranks in
    // it. A few triples for regular layouts, one string for all clients.
    job.addString(PMIX_ANL_MAP, processMapping(plan));
    job.addString(PMIX_TMPDIR, clientTmpdir(config));
    job.addString(PMIX_NSDIR, clientTmpdir(config));
    job.addBool(PMIX_TDIR_RMCLEAN, true);
    job.addU32(PMIX_LOCAL_SIZE, static_cast<std::uint32_t>(local.size()));
    if (!local.empty()) {
        job.addString(PMIX_LOCAL_PEERS, rankList(local));
        job.addRank(PMIX_LOCALLDR, local.front());
    }
    job.addU32(PMIX_NODEID, config.nodeIndex);
    // A spawned step: who spawned it (PRRTE gives it per process; the
    // job's value serves every rank's PMIx_Get alike).
    if (!config.parentNspace.empty()) {
        pmix_proc_t parent;
        PMIX_LOAD_PROCID(&parent, config.parentNspace.c_str(), config.parentRank);
        job.add(PMIX_PARENT_ID, &parent, PMIX_PROC);
        job.addBool(PMIX_SPAWNED, true);
    }
}

// Where rank r runs, as PMIx names it.
void addPlacement(InfoList &proc, const LaunchPlan &plan, std::uint32_t r) {
    const RankPlacement &p = plan.ranks[r];
    proc.addRank(PMIX_RANK, r);
    proc.addU32(PMIX_APPNUM, p.app);
    proc.addU16(PMIX_LOCAL_RANK, static_cast<std::uint16_t>(p.localRank));
    proc.addU16(PMIX_NODE_RANK, static_cast<std::uint16_t>(p.nodeRank));
    proc.addU32(PMIX_NODEID, p.node);
    proc.addString(PMIX_HOSTNAME, plan.nodes[p.node].name);
}

// Per-rank data of this node's ranks only. PMIx 4.2.2 keeps one hash entry
// per rank and key and hands every local client a copy of all of them at
// PMIx_Init: data for every rank of a 1M-rank step cost each node 10 GiB
// and 80 s. A remote rank's per-rank keys are then "not found" (the client
// asks the server, which answers at once, without a direct modex); Open
// MPI asks only for its local peers' (its remote peers' host names are
// optional, for messages, and come with the modex). One exception: PMIx
// 4.2.2 fails every client's PMIx_Init ("NOT-FOUND") when the step's last
// rank has no per-rank data (its job-data packing returns the last rank's
// lookup status), so that rank's placement is always given.
//
// A served profile's rank keys (rankData) go into the same entries, and
// into an entry of their own for any other rank, with its placement:
// PMIx 4.2.2 answers an entry without PMIX_APPNUM with application 0.
void addProcInfo(InfoList &job, const StepConfig &config, const std::vector<std::uint32_t> &local,
                 hwloc_topology_t topology, hwloc_const_bitmap_t stepCpus,
                 const RankKeys &rankData) {
    const LaunchPlan &plan = config.plan;
    const auto addServed = [&rankData](InfoList &proc, std::uint32_t r) {
        if (auto it = rankData.find(r); it != rankData.end())
            addRankKeys(proc, it->second);
    };
    for (std::uint32_t r : local) {
        InfoList proc;
        addPlacement(proc, plan, r);
        addLocalProcData(proc, topology, stepCpus, plan.bindingOf(r), clientTmpdir(config));
        addServed(proc, r);
        job.addList(PMIX_PROC_DATA, proc);
    }
    const auto last = static_cast<std::uint32_t>(plan.ranks.size() - 1);
    if (plan.ranks[last].node != config.nodeIndex) {
        InfoList proc;
        addPlacement(proc, plan, last);
        addServed(proc, last);
        job.addList(PMIX_PROC_DATA, proc);
    }
    for (const auto &[r, keys] : rankData) {
        if (r >= last || plan.ranks[r].node == config.nodeIndex)
            continue; // the last rank's and local ranks' are above; none outside the step
        InfoList proc;
        addPlacement(proc, plan, r);
        addRankKeys(proc, keys);
        job.addList(PMIX_PROC_DATA, proc);
    }
}

Expected<void> registerLocalClients(const pmix_nspace_t ns,
                                    const std::vector<std::uint32_t> &local) {
    for (std::uint32_t r : local) {
        pmix_proc_t proc;
        PMIX_LOAD_PROCID(&proc, ns, r);
        OpWait cw;
        pmix_status_t rc = cw.wait(
            PMIx_server_register_client(&proc, getuid(), getgid(), nullptr, OpWait::callback, &cw));
        if (rc != PMIX_SUCCESS)
            return UserError{"registering rank " + std::to_string(r) +
                             " failed: " + PMIx_Error_string(rc)};
    }
    return {};
}

} // namespace

Expected<void> PmixHost::registerNamespace() {
    const auto local = config_.plan.ranksOn(config_.nodeIndex);
    InfoList job;
    addJobInfo(job, config_, local);
    // More ranks here than the step's CPUs: Open MPI then yields when idle
    // instead of spinning (as under mpirun, which sets it for such a node).
    // Open MPI takes the key's presence to mean so: none otherwise.
    const int cpusHere = hwloc_bitmap_weight(stepCpuset_);
    if (cpusHere > 0 && local.size() > static_cast<std::size_t>(cpusHere))
        job.addBool(PMIX_NODE_OVERSUBSCRIBED, true);
    addServedNodes(job, config_.plan, profile_);
    addProcInfo(job, config_, local, topology_, stepCpuset_, profile_.rankData);

    pmix_data_array_t arr;
    job.convert(arr);
    pmix_nspace_t ns;
    PMIX_LOAD_NSPACE(ns, config_.nspace.c_str());
    OpWait wait;
    pmix_status_t rc = wait.wait(PMIx_server_register_nspace(ns, static_cast<int>(local.size()),
                                                             static_cast<pmix_info_t *>(arr.array),
                                                             arr.size, OpWait::callback, &wait));
    PMIx_Data_array_destruct(&arr);
    if (rc != PMIX_SUCCESS)
        return UserError{std::string("registering namespace ") + config_.nspace + " on " +
                         config_.plan.nodes[config_.nodeIndex].name +
                         " failed: " + PMIx_Error_string(rc)};
    return registerLocalClients(ns, local);
}

// Spawned steps are small: up to this many ranks, each one's placement is
// registered (host name, node), as Open MPI asks for a new peer's.
constexpr std::size_t kPlacedRanksOfOtherSteps = 4096;

Expected<void> PmixHost::registerOtherNamespace(const std::string &nspace, const LaunchPlan &plan) {
    const auto np = static_cast<std::uint32_t>(plan.ranks.size());
    InfoList job;
    addStepShape(job, nspace, plan);
    for (std::uint32_t r = 0; r < np; ++r) {
        if (np > kPlacedRanksOfOtherSteps && r + 1 < np)
            continue; // the last rank's always (see addProcInfo)
        InfoList proc;
        addPlacement(proc, plan, r);
        job.addList(PMIX_PROC_DATA, proc);
    }
    pmix_data_array_t arr;
    job.convert(arr);
    pmix_nspace_t ns;
    PMIX_LOAD_NSPACE(ns, nspace.c_str());
    OpWait wait;
    pmix_status_t rc = wait.wait(PMIx_server_register_nspace(
        ns, 0, static_cast<pmix_info_t *>(arr.array), arr.size, OpWait::callback, &wait));
    PMIx_Data_array_destruct(&arr);
    if (rc != PMIX_SUCCESS)
        return UserError{"registering the job's other step " + nspace +
                         " failed: " + PMIx_Error_string(rc)};
    return {};
}

Expected<std::map<std::uint32_t, std::vector<std::string>>> PmixHost::clientEnvironments() {
    std::map<std::uint32_t, std::vector<std::string>> out;
    pmix_nspace_t ns;
    PMIX_LOAD_NSPACE(ns, config_.nspace.c_str());
    for (std::uint32_t r = 0; r < config_.plan.ranks.size(); ++r) {
        if (config_.plan.ranks[r].node != config_.nodeIndex)
            continue;
        pmix_proc_t proc;
        PMIX_LOAD_PROCID(&proc, ns, r);
        char **env = nullptr;
        pmix_status_t rc = PMIx_server_setup_fork(&proc, &env);
        if (rc != PMIX_SUCCESS)
            return UserError{"PMIx_server_setup_fork for rank " + std::to_string(r) +
                             " failed: " + PMIx_Error_string(rc)};
        auto &vars = out[r];
        for (char **e = env; e && *e; ++e) {
            vars.emplace_back(*e);
            free(*e);
        }
        free(env);
    }
    return out;
}

PmixHost *PmixHost::current() {
    return theHost;
}

std::vector<pmix_rank_t> ranksNamed(const pmix_proc_t procs[], size_t nprocs) {
    std::vector<pmix_rank_t> ranks;
    for (size_t i = 0; i < nprocs; ++i) {
        if (procs[i].rank == PMIX_RANK_WILDCARD)
            return {PMIX_RANK_WILDCARD};
        ranks.push_back(procs[i].rank);
    }
    return ranks;
}

std::vector<std::uint32_t> PmixHost::participants(const std::vector<pmix_rank_t> &ranks) const {
    const auto &plan = config_.plan;
    std::vector<std::uint32_t> nodes;
    // A node takes part while one of its ranks in the set is alive; a
    // failed rank is known only with --with-ft=ulfm (else the step ends).
    if (ranks.size() == 1 && ranks[0] == PMIX_RANK_WILDCARD) {
        for (std::uint32_t n = 0; n < plan.nodes.size(); ++n)
            if (!deadNodes_.count(n))
                nodes.push_back(n);
        return nodes;
    }
    for (pmix_rank_t r : ranks)
        if (r < plan.ranks.size() && !failed_.count(r))
            nodes.push_back(plan.ranks[r].node);
    std::sort(nodes.begin(), nodes.end());
    nodes.erase(std::unique(nodes.begin(), nodes.end()), nodes.end());
    return nodes;
}

// PMIx progress thread.
pmix_status_t PmixHost::fenceUpcall(const pmix_proc_t procs[], size_t nprocs,
                                    const pmix_info_t info[], size_t ninfo, char *data,
                                    size_t ndata, pmix_modex_cbfunc_t cbfunc, void *cbdata) {
    try {
        PmixHost *self = theHost;
        if (!self)
            return PMIX_ERR_NOT_AVAILABLE;
        bool collect = false;
        for (size_t i = 0; i < ninfo; ++i)
            if (PMIX_CHECK_KEY(&info[i], PMIX_COLLECT_DATA))
                collect = PMIX_INFO_TRUE(&info[i]);
        std::string bytes(data ? data : "", data ? ndata : 0);
        for (size_t i = 0; i < nprocs; ++i)
            if (self->otherStep(procs[i])) {
                // MPI_Comm_disconnect fences a spawner with its children.
                self->joinAcrossSteps("fence", procs, nprocs, collect, std::move(bytes),
                                      [cbfunc, cbdata](pmix_status_t st, std::string all) {
                                          if (cbfunc)
                                              completeModex(cbfunc, cbdata, st, std::move(all));
                                      });
                return PMIX_SUCCESS;
            }
        self->inbox_.post([self, ranks = ranksNamed(procs, nprocs), collect,
                           bytes = std::move(bytes), cbfunc, cbdata]() mutable {
            auto nodes = self->participants(ranks);
            ++(collect ? self->counters_.dataFences : self->counters_.barriers);
            logDebug(std::string(collect ? "fence with data" : "barrier") + " over " +
                     std::to_string(nodes.size()) + " nodes, " + std::to_string(bytes.size()) +
                     " bytes from this node's ranks");
            auto forward = [self, nodes = std::move(nodes), collect, bytes = std::move(bytes),
                            cbfunc, cbdata]() mutable {
                if (!self->collective_) {
                    logError("a fence failed: the server is stopping");
                    completeModex(cbfunc, cbdata, PMIX_ERR_NOT_AVAILABLE, {});
                    return;
                }
                self->collective_->fence(std::move(nodes), collect, std::move(bytes),
                                         [cbfunc, cbdata](pmix_status_t st, std::string all) {
                                             if (cbfunc)
                                                 completeModex(cbfunc, cbdata, st, std::move(all));
                                         });
            };
            if (!self->firstFenceGate_) {
                forward();
                return;
            }
            auto gate = std::move(self->firstFenceGate_);
            self->firstFenceGate_ = nullptr;
            gate([forward = std::move(forward), cbfunc, cbdata](bool pass) mutable {
                if (pass)
                    forward();
                else
                    completeModex(cbfunc, cbdata, PMIX_ERROR, {});
            });
        });
        return PMIX_SUCCESS;
    } catch (...) {
        return PMIX_ERROR;
    }
}

// PMIx progress thread.
pmix_status_t PmixHost::dmodexUpcall(const pmix_proc_t *proc, const pmix_info_t[], size_t,
                                     pmix_modex_cbfunc_t cbfunc, void *cbdata) {
    try {
        PmixHost *self = theHost;
        // No rank (PMIx asks so for node-level data of a node this server
        // does not hold: each server registers only its own node's).
        if (self && proc && (proc->rank == PMIX_RANK_UNDEF || proc->rank == PMIX_RANK_WILDCARD)) {
            logError("refusing a direct-modex request for another node's data: a node server "
                     "holds only its own node's");
            return PMIX_ERR_NOT_FOUND;
        }
        if (self && proc && self->otherStep(*proc)) {
            // A rank of another step of the job (after a spawn's connect).
            const std::string nspace(proc->nspace, strnlen(proc->nspace, PMIX_MAX_NSLEN));
            const std::uint32_t rank = proc->rank;
            self->inbox_.post([self, nspace, rank, cbfunc, cbdata] {
                auto it = self->otherSteps_.find(nspace);
                if (it == self->otherSteps_.end() || !self->collective_ || rank > hub::kLocalMask) {
                    logError("direct modex for rank " + std::to_string(rank) + " of " + nspace +
                             " refused: not a step this one is connected to");
                    completeModex(cbfunc, cbdata, PMIX_ERR_NOT_FOUND, {});
                    return;
                }
                ++self->counters_.modexRemote;
                self->collective_->otherStepModex(
                    hub::jobWide(it->second, rank),
                    [cbfunc, cbdata](pmix_status_t st, std::string bytes) {
                        if (cbfunc)
                            completeModex(cbfunc, cbdata, st, std::move(bytes));
                    });
            });
            return PMIX_SUCCESS;
        }
        if (!self || !proc || proc->rank >= self->config_.plan.ranks.size()) {
            // Logged from this thread: the loop may be gone.
            logError("refusing a direct-modex request for rank " +
                     (proc ? std::to_string(proc->rank) : std::string("?")) +
                     ": not a rank of this step");
            return PMIX_ERR_BAD_PARAM;
        }
        std::uint32_t rank = proc->rank;
        self->inbox_.post([self, rank, cbfunc, cbdata] {
            const bool ownRank = self->config_.plan.ranks[rank].node == self->config_.nodeIndex;
            ++(ownRank ? self->counters_.modexLocal : self->counters_.modexRemote);
            logDebug("direct modex for rank " + std::to_string(rank) +
                     (ownRank ? " (this node's)" : " (asked of its node)"));
            if (!self->collective_) {
                logError("direct modex for rank " + std::to_string(rank) +
                         " failed: the server is stopping");
                completeModex(cbfunc, cbdata, PMIX_ERR_NOT_AVAILABLE, {});
                return;
            }
            self->collective_->directModex(
                rank, [cbfunc, cbdata](pmix_status_t st, std::string bytes) {
                    if (cbfunc)
                        completeModex(cbfunc, cbdata, st, std::move(bytes));
                });
        });
        return PMIX_SUCCESS;
    } catch (...) {
        return PMIX_ERROR;
    }
}

// PMIx progress thread: a local rank finished PMIx_Init's handshake.
pmix_status_t PmixHost::clientConnectedUpcall(const pmix_proc_t *proc, void *,
                                              pmix_op_cbfunc_t cbfunc, void *cbdata) {
    try {
        PmixHost *self = theHost;
        if (!self || !proc || self->otherStep(*proc))
            return PMIX_ERR_BAD_PARAM;
        const std::uint32_t rank = proc->rank;
        self->inbox_.post([self, rank, cbfunc, cbdata] {
            const auto local = self->config_.plan.ranksOn(self->config_.nodeIndex);
            if (std::binary_search(local.begin(), local.end(), rank) &&
                self->connected_.insert(rank).second && self->connected_.size() == local.size() &&
                self->collective_)
                self->collective_->ranksStarted();
            if (cbfunc)
                cbfunc(PMIX_SUCCESS, cbdata);
        });
        return PMIX_SUCCESS;
    } catch (...) {
        return PMIX_ERROR;
    }
}

// PMIx progress thread. The client stays blocked until cbfunc runs; we
// release it once the hub has been told, so the step ends with its status.
void PmixHost::rankFailed(std::uint32_t rank, int status) {
    if (!config_.faultTolerant || rank >= config_.plan.ranks.size() || !failed_.insert(rank).second)
        return;
    const std::uint32_t node = config_.plan.ranks[rank].node;
    if (++failedOnNode_[node] == config_.plan.ranksOn(node).size())
        deadNodes_.insert(node);
    // As PRRTE reports a failed process of a recoverable job: the dead
    // process as source and affected process, its exit code, and not for
    // the default handlers (Open MPI's aborts; ULFM registers for these).
    const bool signalled = status > 128;
    const pmix_status_t event =
        signalled ? PMIX_ERR_PROC_ABORTED_BY_SIG : PMIX_ERR_PROC_TERM_WO_SYNC;
    pmix_proc_t dead;
    PMIX_LOAD_PROCID(&dead, config_.nspace.c_str(), rank);
    pmix_info_t *info = nullptr;
    PMIX_INFO_CREATE(info, 3);
    PMIx_Info_load(&info[0], PMIX_EVENT_AFFECTED_PROC, &dead, PMIX_PROC);
    bool yes = true;
    PMIx_Info_load(&info[1], PMIX_EVENT_NON_DEFAULT, &yes, PMIX_BOOL);
    int code = status;
    PMIx_Info_load(&info[2], PMIX_EXIT_CODE, &code, PMIX_INT);
    const pmix_status_t rc = PMIx_Notify_event(
        event, &dead, PMIX_RANGE_LOCAL, info, 3,
        [](pmix_status_t, void *cbdata) {
            pmix_info_t *sent = static_cast<pmix_info_t *>(cbdata);
            PMIX_INFO_FREE(sent, 3);
        },
        info);
    if (rc != PMIX_SUCCESS) {
        PMIX_INFO_FREE(info, 3);
        if (rc != PMIX_OPERATION_SUCCEEDED)
            logError("could not tell this node's ranks that rank " + std::to_string(rank) +
                     " failed: " + PMIx_Error_string(rc));
    }
    logLine("rank " + std::to_string(rank) + " failed (" +
            (signalled ? "signal " + std::to_string(status - 128)
                       : "exit status " + std::to_string(status)) +
            "); the step goes on (--with-ft=ulfm), told this node's ranks");
}

// PMIx progress thread. PMIx_Log: Open MPI 5 sends its help messages this
// way (MPI_Abort's, an unsupported call's, a warning) for the runtime to
// print; without this upcall the library answers success and drops them.
// Text for stderr goes to srun's terminal as a notice, as mpirun prints
// it: reliably, before the abort that often follows (the library calls
// upcalls in its clients' order, and both go to srun on one link). Help
// that asks for aggregation (PMIX_LOG_AGG) goes once per file and topic
// from this node. Anything else, and help beyond kForwardedLogs, is
// answered "not supported", on which Open MPI prints it on the process's
// own stderr (which Slurm forwards to srun).
void PmixHost::logUpcall(const pmix_proc_t *client, const pmix_info_t data[], size_t ndata,
                         const pmix_info_t directives[], size_t ndirs, pmix_op_cbfunc_t cbfunc,
                         void *cbdata) {
    if (!cbfunc)
        return;
    PmixHost *self = current();
    std::vector<std::string> texts;
    bool onlyStderr = ndata > 0 && data;
    for (size_t i = 0; i < ndata && onlyStderr; ++i) {
        if (!PMIX_CHECK_KEY(&data[i], PMIX_LOG_STDERR) || data[i].value.type != PMIX_STRING ||
            !data[i].value.data.string) {
            onlyStderr = false;
            break;
        }
        const size_t length = strnlen(data[i].value.data.string, wire::kMaxNoticeText);
        if (length >= wire::kMaxNoticeText) {
            onlyStderr = false; // too long for a notice: the client prints it whole
            break;
        }
        std::string text(data[i].value.data.string, length);
        while (!text.empty() && text.back() == '\n')
            text.pop_back();
        texts.push_back(std::move(text));
    }
    bool aggregate = false;
    std::string topic;
    for (size_t i = 0; i < ndirs && directives; ++i) {
        if (PMIX_CHECK_KEY(&directives[i], PMIX_LOG_AGG))
            aggregate = PMIX_INFO_TRUE(&directives[i]);
        else if ((PMIX_CHECK_KEY(&directives[i], PMIX_LOG_KEY) ||
                  PMIX_CHECK_KEY(&directives[i], PMIX_LOG_VAL)) &&
                 directives[i].value.type == PMIX_STRING && directives[i].value.data.string)
            topic += std::string(directives[i].value.data.string,
                                 strnlen(directives[i].value.data.string, 256)) +
                     "/";
    }
    const bool ours = self && client && !self->otherStep(*client) &&
                      client->rank < self->config_.plan.ranks.size() &&
                      self->config_.plan.ranks[client->rank].node == self->config_.nodeIndex;
    if (!ours || !onlyStderr) {
        if (self)
            self->inbox_.post([cbfunc, cbdata] { cbfunc(PMIX_ERR_NOT_SUPPORTED, cbdata); });
        else
            cbfunc(PMIX_ERR_NOT_SUPPORTED, cbdata);
        return;
    }
    const std::uint32_t rank = client->rank;
    self->inbox_.post([self, rank, texts = std::move(texts), aggregate, topic = std::move(topic),
                       cbfunc, cbdata] {
        if (aggregate && !topic.empty() && self->helpTopics_.count(topic)) {
            cbfunc(PMIX_SUCCESS, cbdata); // said already from this node
            return;
        }
        if (!self->collective_ || self->forwardedLogs_ + texts.size() > kForwardedLogs) {
            cbfunc(PMIX_ERR_NOT_SUPPORTED, cbdata);
            return;
        }
        if (aggregate && !topic.empty())
            self->helpTopics_.insert(topic);
        for (const std::string &text : texts)
            self->collective_->notice(rank, text);
        self->forwardedLogs_ += texts.size();
        cbfunc(PMIX_SUCCESS, cbdata);
    });
}

pmix_status_t PmixHost::abortUpcall(const pmix_proc_t *proc, void *, int status, const char msg[],
                                    pmix_proc_t[], size_t, pmix_op_cbfunc_t cbfunc, void *cbdata) {
    try {
        PmixHost *self = theHost;
        if (!self || !proc)
            return PMIX_ERR_BAD_PARAM;
        std::uint32_t rank = proc->rank;
        std::string text = msg ? msg : "";
        self->inbox_.post([self, rank, status, text = std::move(text), cbfunc, cbdata] {
            if (self->collective_)
                self->collective_->abort(rank, status, text);
            if (cbfunc)
                cbfunc(PMIX_SUCCESS, cbdata);
        });
        return PMIX_SUCCESS;
    } catch (...) {
        return PMIX_ERROR;
    }
}

namespace {

struct LocalModexRequest {
    DataReply done;
    LoopInbox *inbox;
};

// PMIx progress thread.
void localModexDone(pmix_status_t status, char *data, size_t sz, void *cbdata) {
    auto *req = static_cast<LocalModexRequest *>(cbdata);
    std::string bytes(data ? data : "", data ? sz : 0);
    req->inbox->post([req, status, bytes = std::move(bytes)]() mutable {
        req->done(status, std::move(bytes));
        delete req;
    });
}

// A committed value as bytes: a byte object's or a string's.
std::optional<std::string> valueBytes(const pmix_value_t *v) {
    if (v && v->type == PMIX_BYTE_OBJECT)
        return std::string(v->data.bo.bytes ? v->data.bo.bytes : "",
                           v->data.bo.bytes ? v->data.bo.size : 0);
    if (v && v->type == PMIX_STRING && v->data.string)
        return std::string(v->data.string);
    return std::nullopt;
}

struct CommittedRequest {
    std::function<void(std::optional<std::string>)> done;
    LoopInbox *inbox;
};

// PMIx progress thread.
void committedDone(pmix_status_t status, pmix_value_t *value, void *cbdata) {
    auto *req = static_cast<CommittedRequest *>(cbdata);
    std::optional<std::string> bytes =
        status == PMIX_SUCCESS ? valueBytes(value) : std::optional<std::string>();
    req->inbox->post([req, bytes = std::move(bytes)]() mutable {
        req->done(std::move(bytes));
        delete req;
    });
}

} // namespace

void PmixHost::committedValue(std::uint32_t rank, const std::string &key,
                              std::function<void(std::optional<std::string>)> done) {
    pmix_proc_t proc;
    pmix_nspace_t ns;
    PMIX_LOAD_NSPACE(ns, config_.nspace.c_str());
    PMIX_LOAD_PROCID(&proc, ns, rank);
    // Only what the server holds already: never a request to another node.
    pmix_info_t immediate;
    bool yes = true;
    PMIX_INFO_LOAD(&immediate, PMIX_IMMEDIATE, &yes, PMIX_BOOL);
    auto *req = new CommittedRequest{std::move(done), &inbox_};
    pmix_status_t rc = PMIx_Get_nb(&proc, key.c_str(), &immediate, 1, committedDone, req);
    PMIX_INFO_DESTRUCT(&immediate);
    if (rc != PMIX_SUCCESS) {
        req->done(std::nullopt);
        delete req;
    }
}

void PmixHost::serveHeldModex(pmix_status_t status) {
    serving_ = status == PMIX_SUCCESS;
    auto held = std::move(heldModex_);
    heldModex_.clear();
    for (auto &[rank, done] : held) {
        if (serving_)
            localModex(rank, std::move(done));
        else
            done(status, {});
    }
}

void PmixHost::localModex(std::uint32_t rank, DataReply done) {
    // With a profile, this server joins srun's rendezvous before PMIx
    // serves: another node's request waits until it does.
    if (!serving_) {
        heldModex_.emplace_back(rank, std::move(done));
        return;
    }
    pmix_proc_t proc;
    pmix_nspace_t ns;
    PMIX_LOAD_NSPACE(ns, config_.nspace.c_str());
    PMIX_LOAD_PROCID(&proc, ns, rank);
    auto *req = new LocalModexRequest{std::move(done), &inbox_};
    pmix_status_t rc = PMIx_server_dmodex_request(&proc, localModexDone, req);
    if (rc != PMIX_SUCCESS) {
        req->done(rc, {});
        delete req;
    }
}

void PmixHost::stop() {
    if (!initialized_)
        return;
    initialized_ = false;
    PMIx_server_finalize();
}

} // namespace stepmap::server
