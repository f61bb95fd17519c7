#include "stepd/stepd_side.hpp"

#include "job_variables.hpp"
#include "plan/step_bindings.hpp"
#include "stepd/job_namespace.hpp"

#include "os/memory_binding.hpp"
#include "os/step_directory.hpp"
#include "plugin_log.hpp"
#include "protocol/ready/ready_socket.hpp"
#include "protocol/ready/task_notice.hpp"
#include "protocol/timeline/step_timeline.hpp"
#include "protocol/wire/secret.hpp"
#include "stepd/server_log_file.hpp"

#include <fcntl.h>
#include <sched.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>

namespace stepmap::plugin {

// What Slurm says of the step on this node.
struct StepdSide::StepFacts {
    uid_t uid = 0;
    gid_t gid = 0;
    std::uint32_t jobId = 0, stepId = 0, localTasks = 0, totalTasks = 0, nodes = 0;
    const char *stepCores = nullptr; // S_STEP_ALLOC_CORES, Slurm's string
    std::string tag() const { return std::to_string(jobId) + "." + std::to_string(stepId); }
};

// Where srun's hub listens and the step's secret.
struct StepdSide::HubAccess {
    std::string address, secret;
};

namespace {

using StepFacts = StepdSide::StepFacts;
using HubAccess = StepdSide::HubAccess;

// Linux caps one environment string at 128 KiB (MAX_ARG_STRLEN): a larger
// plan never came from srun.
constexpr std::size_t kMaxPlanBytes = 128 * 1024;
constexpr std::size_t kMaxHubBytes = 512;
constexpr std::size_t kMaxSecretBytes = 128;

// A job environment variable of at most maxBytes: nullopt if absent, an
// error if larger. Looks with a small buffer first: a step without stepmap
// pays for one lookup and nothing else.
Expected<std::optional<std::string>> jobVariable(spank_t sp, const char *name,
                                                 std::size_t maxBytes) {
    char small[4096];
    spank_err_t rc = spank_getenv(sp, name, small, sizeof small);
    if (rc == ESPANK_SUCCESS)
        return std::optional<std::string>(small);
    if (rc != ESPANK_NOSPACE)
        return std::optional<std::string>();
    std::string big(maxBytes + 1, '\0');
    if (spank_getenv(sp, name, big.data(), static_cast<int>(big.size())) != ESPANK_SUCCESS)
        return UserError{std::string(name) + " in the job environment is larger than " +
                         std::to_string(maxBytes) + " bytes"};
    big.resize(std::strlen(big.c_str()));
    return std::optional<std::string>(std::move(big));
}

// A node name as part of a file name.
std::string fileNamePart(const std::string &name) {
    std::string out = name.substr(0, 64);
    for (char &c : out)
        if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
              c == '-' || c == '_' || c == '.'))
            c = '_';
    return out;
}

StepFacts readStepFacts(spank_t sp) {
    StepFacts f;
    spank_get_item(sp, S_JOB_UID, &f.uid);
    spank_get_item(sp, S_JOB_GID, &f.gid);
    spank_get_item(sp, S_JOB_ID, &f.jobId);
    spank_get_item(sp, S_JOB_STEPID, &f.stepId);
    spank_get_item(sp, S_JOB_LOCAL_TASK_COUNT, &f.localTasks);
    spank_get_item(sp, S_JOB_TOTAL_TASK_COUNT, &f.totalTasks);
    spank_get_item(sp, S_JOB_NNODES, &f.nodes);
    char *cores = nullptr;
    if (spank_get_item(sp, S_STEP_ALLOC_CORES, &cores) == ESPANK_SUCCESS)
        f.stepCores = cores;
    return f;
}

Expected<void> checkStepFacts(const StepFacts &f) {
    if (f.uid == 0)
        return UserError{"refusing to start the PMIx server for a root job: stepmap's server "
                         "never runs as root; run the job as a regular user"};
    if (!f.stepCores)
        return UserError{"Slurm did not say which cores the step holds on this node"};
    return {};
}

// Slurm's own figures of the step bound what the plan may hold, before
// anything is expanded: a plan for another step (or made up) fails here.
Expected<LaunchPlan> decodeStepPlan(const std::string &text, const StepFacts &f) {
    PlanLimits limits;
    limits.maxRanks = f.totalTasks;
    limits.maxNodes = f.nodes;
    auto plan = decodePlan(text, limits);
    if (!plan)
        return UserError{std::string(kPlanVariable) +
                         " in the job environment is damaged: " + plan.error().message};
    if (plan->ranks.size() != f.totalTasks)
        return UserError{std::string(kPlanVariable) + " has " + std::to_string(plan->ranks.size()) +
                         " ranks but Slurm's step has " + std::to_string(f.totalTasks) + " tasks"};
    return plan;
}

// This node in the plan: the one holding this node's tasks (none if it runs
// no task), and its ranks.
struct LocalNode {
    std::optional<std::uint32_t> node;
    std::vector<std::uint32_t> ranks;
};

// Slurm must have put exactly the plan's ranks here.
Expected<LocalNode> findLocalNode(spank_t sp, const LaunchPlan &plan, std::uint32_t localTasks) {
    LocalNode local;
    for (std::uint32_t i = 0; i < localTasks; ++i) {
        uint32_t global = 0;
        if (spank_get_item(sp, S_JOB_LOCAL_TO_GLOBAL_ID, i, &global) != ESPANK_SUCCESS ||
            global >= plan.ranks.size())
            return UserError{"task " + std::to_string(global) + " is not in the plan of " +
                             std::to_string(plan.ranks.size()) + " ranks"};
        std::uint32_t n = plan.ranks[global].node;
        if (local.node && *local.node != n)
            return UserError{"Slurm started ranks of different plan nodes here; the step does not "
                             "match its plan"};
        local.node = n;
        local.ranks.push_back(global);
    }
    if (local.node && plan.ranksOn(*local.node).size() != localTasks)
        return UserError{"Slurm started " + std::to_string(localTasks) + " tasks on " +
                         plan.nodes[*local.node].name + " but the plan has " +
                         std::to_string(plan.ranksOn(*local.node).size())};
    return local;
}

Expected<HubAccess> readHubAccess(spank_t sp) {
    auto hub = jobVariable(sp, kHubVariable, kMaxHubBytes);
    auto secret = jobVariable(sp, kSecretVariable, kMaxSecretBytes);
    if (!hub || !secret || !*hub || !*secret)
        return UserError{
            "the job environment lacks a usable SLURM_STEPMAP_HUB/SLURM_STEPMAP_SECRET "
            "(srun did not load the stepmap plugin?)"};
    return HubAccess{**hub, **secret};
}

// A name nobody can take in advance: 64 bits of the kernel's randomness,
// as hex. Empty if the kernel gave none.
std::string randomSuffix() {
    LogNameRandom random{};
    return wire::fillRandom(random.data(), random.size()) ? hexOf(random) : std::string();
}

} // namespace

// slurm_spank_init in slurmstepd, before Slurm sets up the step's cgroups,
// PAM and the tasks: the server starts here, so that its start overlaps all
// of that; it moves into the step's cgroups before the tasks exec
// (taskPostFork).
int StepdSide::init(spank_t sp) {
    initUsec_ = timeline::nowUsec();
    auto planVar = jobVariable(sp, kPlanVariable, kMaxPlanBytes);
    if (planVar && !*planVar)
        return 0; // not a stepmap step
    active_ = true;
    if (!planVar) {
        return refuse(planVar.error().message);
    }
    const StepFacts facts = readStepFacts(sp);
    uid_ = facts.uid;
    gid_ = facts.gid;
    localTasks_ = facts.localTasks;
    auto checked = checkStepFacts(facts);
    auto plan = checked ? decodeStepPlan(**planVar, facts) : Expected<LaunchPlan>(checked.error());
    if (!plan) {
        return refuse(plan.error().message);
    }
    plan_ = std::move(plan.value());
    auto local = findLocalNode(sp, plan_, localTasks_);
    if (!local) {
        return refuse(local.error().message);
    }
    if (!local->node)
        return 0;
    auto hub = readHubAccess(sp);
    if (!hub) {
        return refuse(hub.error().message);
    }
    localRanks_ = local->ranks;
    return startServer(facts, *local->node, std::move(local->ranks), **planVar, *hub, sp);
}

int StepdSide::startServer(const StepFacts &facts, std::uint32_t node,
                           std::vector<std::uint32_t> localRanks, const std::string &planText,
                           const HubAccess &hub, spank_t sp) {
    const std::string nodeName = fileNamePart(plan_.nodes[node].name);
    const std::string stepTag = facts.tag();
    const std::string where = "step " + stepTag + " on " + plan_.nodes[node].name;
    // Made by the launch with the job user's file ids, under a name nobody
    // can take in advance; the server checks it is its own and private.
    const std::string suffix = randomSuffix();
    if (suffix.empty()) {
        return refuse("the PMIx server for " + where +
                      " cannot name its directory: the kernel gave no random bytes");
    }
    tmpdir_ = site_.tmpdir + "/stepmap." + stepTag + "." + nodeName + "." + suffix;

    ServerLaunch launch = serverLaunch(facts, node, planText, hub, sp);
    launch.localRanks = std::move(localRanks);
    launch.directory = tmpdir_;
    if (!site_.logDir.empty()) {
        auto path = serverLogPath(site_.logDir, stepTag, nodeName);
        if (path)
            launch.logPath = *path;
        else
            logError(path.error().message + "; the server runs without a log");
    }
    envFd_.reset(memfd_create("stepmap-client-env", MFD_CLOEXEC | MFD_ALLOW_SEALING));
    auto spawned = envFd_ ? spawnServer(std::move(launch))
                          : Expected<StartingServer>(
                                UserError{std::string("memfd_create: ") + std::strerror(errno)});
    if (!spawned) {
        // As the job's user: a directory of that name that is not theirs
        // stays.
        removeServerDirectory();
        return refuse("the PMIx server for " + where +
                      " did not start: " + spawned.error().message);
    }
    if (!spawned->logProblem.empty())
        logError(spawned->logProblem + "; the server runs without a log");
    starting_ = std::move(spawned.value());
    startingWhere_ = where;
    return 0;
}

// What slurmstepd's slurm_spank_init logs reaches only the node's log, and
// srun would say no more than "Plugin initialization failed": the step's
// refusal is said in user_init, whose messages reach srun, and fails the
// step there, before any task is forked.
int StepdSide::refuse(std::string message) {
    refusal_ = std::move(message);
    return 0;
}

int StepdSide::userInit(spank_t) {
    if (refusal_.empty())
        return 0;
    logError(refusal_);
    return -1;
}

bool StepdSide::takeRunningServer(Expected<RunningServer> running, const std::string &where) {
    if (!running) {
        logError("the PMIx server for " + where + " did not start: " + running.error().message);
        removeServerDirectory();
        return false;
    }
    server_ = std::move(running.value().process);
    clientEnv_ = std::move(running.value().clientEnv);
    serverNotices_ = std::move(running.value().notices);
    logDebug("server " + std::to_string(server_.pid()) + " serves " + where);
    return true;
}

// slurmstepd, after each task's fork; the tasks wait before exec until the
// last call returns. The server started meanwhile: its report is awaited
// here, once, and its environments written where every task can read them.
int StepdSide::taskPostFork(spank_t) {
    if (!starting_)
        return 0;
    // The step's cgroups exist and hold slurmstepd now: the server goes
    // there before any task may exec and become its client.
    if (postForks_ == 0) {
        if (auto placed = placeServer(*starting_); !placed) {
            logError("the PMIx server for " + startingWhere_ +
                     " cannot join the step's cgroups: " + placed.error().message);
            starting_->process.stop(200);
            starting_.reset();
            removeServerDirectory();
            return -1;
        }
    }
    if (++postForks_ < localTasks_)
        return 0;
    // The tasks are forked and wait before exec from here until this returns.
    const std::int64_t forked = timeline::nowUsec();
    StartingServer starting = std::move(*starting_);
    starting_.reset();
    if (!takeRunningServer(awaitServer(std::move(starting)), startingWhere_))
        return -1;
    std::map<std::uint32_t, std::vector<std::string>> lines;
    for (const auto &[rank, vars] : clientEnv_)
        for (const auto &[key, value] : vars)
            lines[rank].push_back(key + "=" + value);
    const std::string report = ready::encodeReadyReport(lines);
    // Sealed: a task (the user's) cannot change what its siblings read.
    if (!ready::writeReport(envFd_.get(), report) ||
        fcntl(envFd_.get(), F_ADD_SEALS,
              F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_WRITE | F_SEAL_SEAL) != 0) {
        logError("cannot hand the tasks their PMIx environment: " +
                 std::string(std::strerror(errno)));
        return -1;
    }
    // srun -v shows each node's hold (timeline/critical_path.hpp). Never
    // blocks slurmstepd.
    if (serverNotices_) {
        const std::string line = ready::encodeTaskHold({forked, timeline::nowUsec()});
        (void)send(serverNotices_.get(), line.data(), line.size(), MSG_DONTWAIT | MSG_NOSIGNAL);
    }
    return 0;
}

// In a task, before exec: this rank's environment from the memfd the last
// task_post_fork wrote (none when user_init waited for the server itself).
Expected<std::optional<ready::ClientEnvironment>>
StepdSide::inheritedEnvironment(std::uint32_t rank) const {
    if (!envFd_)
        return std::optional<ready::ClientEnvironment>();
    const std::size_t cap = ready::maxReadyReportBytes(localRanks_.size());
    std::string text(cap + 1, '\0');
    std::size_t have = 0;
    while (have < text.size()) {
        ssize_t n =
            pread(envFd_.get(), text.data() + have, text.size() - have, static_cast<off_t>(have));
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            break;
        have += static_cast<std::size_t>(n);
    }
    if (have == 0 || have > cap)
        return UserError{"the PMIx environment of rank " + std::to_string(rank) +
                         " was not handed over (" + std::to_string(have) + " bytes)"};
    text.resize(have);
    auto env = ready::decodeRankEnvironment(text, rank);
    if (!env)
        return env.error();
    return std::optional<ready::ClientEnvironment>(std::move(env.value()));
}

// --modex and the profile srun shipped, for the server. A profile too large
// to pass on is left out (the step never fails because of a profile).
void StepdSide::addModexSettings(ServerLaunch &launch, spank_t sp) const {
    // "MODE:BASE-END" from srun; the server checks both, and that srun's
    // range lies within this node's.
    auto mode = jobVariable(sp, kModexVariable, 64);
    if (mode && *mode && !(*mode)->empty()) {
        const std::string &text = **mode;
        const auto colon = text.find(':');
        launch.args.insert(launch.args.end(),
                           {"--modex", text.substr(0, colon), "--modex-ports",
                            colon == std::string::npos ? site_.modexPorts : text.substr(colon + 1),
                            "--site-modex-ports", site_.modexPorts});
    }
    // Open MPI publishes the interfaces the first two select: the server
    // predicts the ranks' TCP records with the same choice; the ports Slurm
    // reserved for the step (MpiParams=ports) are the ranks' to pin.
    for (auto [variable, arg] : {std::pair{"OMPI_MCA_btl_tcp_if_include", "--tcp-if-include"},
                                 std::pair{"OMPI_MCA_btl_tcp_if_exclude", "--tcp-if-exclude"},
                                 std::pair{"SLURM_STEP_RESV_PORTS", "--resv-ports"}}) {
        auto value = jobVariable(sp, variable, 4096);
        if (value && *value && !(*value)->empty())
            launch.args.insert(launch.args.end(), {arg, **value});
    }
    // The pieces srun cut it into, passed on as pieces (STEPMAP_PROFILE,
    // STEPMAP_PROFILE_1, ...: the server joins them).
    std::vector<std::string> pieces;
    for (std::size_t piece = 0; piece < std::size(kProfileVariables); ++piece) {
        auto text = jobVariable(sp, kProfileVariables[piece], kProfilePieceBytes);
        if (!text) {
            // Said to the server too, so that it takes part in the profile
            // rendezvous (the others wait for every node's say).
            logError(text.error().message + "; the step runs without the interconnect profile");
            launch.environ.push_back("STEPMAP_PROFILE=");
            return;
        }
        if (!*text)
            break;
        pieces.push_back(std::string("STEPMAP_PROFILE") +
                         (piece ? "_" + std::to_string(piece) : "") + "=" + **text);
    }
    launch.environ.insert(launch.environ.end(), pieces.begin(), pieces.end());
}

// A spawned step's link to the job's hub, as the srun that spawned it set
// them; the server checks them.
void StepdSide::addSpawnSettings(ServerLaunch &launch, spank_t sp) const {
    auto hub = jobVariable(sp, kJobHubVariable, kMaxHubBytes);
    auto secret = jobVariable(sp, kJobSecretVariable, kMaxSecretBytes);
    auto step = jobVariable(sp, kJobStepVariable, 16);
    if (!hub || !secret || !step || !*hub || !*secret || !*step)
        return;
    launch.args.insert(launch.args.end(), {"--job-hub", **hub, "--job-step", **step});
    launch.environ.push_back("STEPMAP_JOB_SECRET=" + **secret);
    auto parent = jobVariable(sp, kSpawnParentVariable, 300);
    if (parent && *parent)
        launch.args.insert(launch.args.end(), {"--spawn-parent", **parent});
}

ServerLaunch StepdSide::serverLaunch(const StepFacts &facts, std::uint32_t node,
                                     const std::string &planText, const HubAccess &hub,
                                     spank_t sp) const {
    ServerLaunch launch;
    launch.executable = site_.server;
    launch.args = {"--step-cores",
                   facts.stepCores,
                   "--step",
                   facts.tag(),
                   "--node-index",
                   std::to_string(node),
                   "--tmpdir",
                   tmpdir_,
                   "--hub",
                   hub.address,
                   "--ready-fd",
                   "{fd}",
                   "--watch-pid",
                   std::to_string(stepdPid_),
                   "--launched-at",
                   std::to_string(initUsec_),
                   "--dmodex-timeout",
                   std::to_string(site_.dmodexTimeoutSec),
                   "--fence-timeout",
                   std::to_string(site_.fenceTimeoutSec),
                   "--client-auth",
                   site_.clientAuth,
                   "--client-mount-namespace",
                   tasksInOtherMountNamespace(facts.jobId) ? "other" : "same"};
    launch.environ = {"STEPMAP_PLAN=" + planText, "STEPMAP_SECRET=" + hub.secret,
                      "PATH=/usr/bin:/bin"};
    addModexSettings(launch, sp);
    addSpawnSettings(launch, sp);
    // --with-ft, as srun checked it; the server checks it again.
    if (auto ft = jobVariable(sp, kFaultToleranceVariable, 16); ft && *ft && !(*ft)->empty())
        launch.args.insert(launch.args.end(), {"--with-ft", **ft});
    // The tree srun welcomes with, and this node's relay_ports: the server
    // checks both (a spawned step's servers join the job's hub directly).
    if (auto tree = jobVariable(sp, kTreeVariable, 8);
        tree && *tree && !(*tree)->empty() && site_.relayPorts != "none" && !launch.args.empty() &&
        std::find(launch.args.begin(), launch.args.end(), "--job-hub") == launch.args.end())
        launch.args.insert(launch.args.end(), {"--relay", **tree + ":" + site_.relayPorts});
    // Root's per-boot topology of this node; the server checks it is still
    // this machine's and root's alone before it serves it.
    if (!site_.topologyCache.empty() && !launch.args.empty())
        launch.args.insert(launch.args.end(),
                           {"--topology-cache", site_.topologyCache + "/node-topology.xml"});
    // The site's log.level; the server's default is info.
    if (site_.policy.logLevel != LogLevel::Info) {
        launch.args.push_back("--log-level");
        launch.args.push_back(site_.policy.logLevel == LogLevel::Error ? "error" : "debug");
    }
    launch.uid = uid_;
    launch.gid = gid_;
    launch.softLimits = jobSoftLimits([sp](const char *name) -> std::optional<std::string> {
        auto v = jobVariable(sp, name, 64);
        return v ? *v : std::nullopt;
    });
    launch.timeoutSec = site_.serverStartTimeoutSec;
    return launch;
}

int StepdSide::taskInit(spank_t sp) {
    if (!active_)
        return 0;
    // The plan, the rendezvous and its secret are for the node servers: a
    // task must not hand them on (an srun inside it would try to serve the
    // outer plan).
    for (const char *name : kJobVariables)
        spank_unsetenv(sp, name);
    uint32_t global = 0;
    if (spank_get_item(sp, S_TASK_GLOBAL_ID, &global) != ESPANK_SUCCESS)
        return -1;
    auto inherited = inheritedEnvironment(global);
    if (!inherited) {
        logError(inherited.error().message);
        return -1;
    }
    const ready::ClientEnvironment *vars = inherited->has_value() ? &**inherited : nullptr;
    if (!vars) {
        auto it = clientEnv_.find(global);
        if (it == clientEnv_.end()) {
            logError("no PMIx environment for rank " + std::to_string(global));
            return -1;
        }
        vars = &it->second;
    }
    // The site's variables first (task_env=), so that PMIx's own win.
    for (const auto &[key, value] : site_.taskEnv)
        if (spank_setenv(sp, key.c_str(), value.c_str(), 1) != ESPANK_SUCCESS)
            return -1;
    for (auto &[key, value] : *vars)
        if (spank_setenv(sp, key.c_str(), value.c_str(), 1) != ESPANK_SUCCESS)
            return -1;
    // The plan's binding within the CPUs this task may use (the step's
    // cgroup), resolved as the node server resolved it for PMIX_CPUSET
    // (step_bindings.hpp); unbound ranks keep the step's cgroup.
    if (plan_.bindingOf(global)) {
        cpu_set_t allowed;
        CPU_ZERO(&allowed);
        if (sched_getaffinity(0, sizeof allowed, &allowed) != 0) {
            logError(std::string("cannot read the CPUs of rank ") + std::to_string(global) + ": " +
                     std::strerror(errno));
            return -1;
        }
        std::vector<std::uint32_t> stepCpus;
        for (std::uint32_t cpu = 0; cpu < CPU_SETSIZE; ++cpu)
            if (CPU_ISSET(cpu, &allowed))
                stepCpus.push_back(cpu);
        auto binding = bindingWithinStep(plan_, global, stepCpus);
        if (!binding) {
            logError(binding.error().message);
            return -1;
        }
        if (binding->has_value()) {
            cpu_set_t set;
            CPU_ZERO(&set);
            for (auto cpu : (*binding)->os)
                if (cpu < CPU_SETSIZE)
                    CPU_SET(cpu, &set);
            if (sched_setaffinity(0, sizeof set, &set) != 0) {
                logError("cannot bind rank " + std::to_string(global) +
                         " to its planned CPUs: " + std::strerror(errno));
                return -1;
            }
            // ParaStation's pinning binds memory too (unless
            // __PSI_NO_BINDMEM): to the NUMA nodes of the rank's CPUs.
            if (plan_.bindMemory) {
                auto nodes = numaNodesOfCpus((*binding)->os);
                Expected<void> bound =
                    nodes ? bindMemoryToNodes(nodes.value()) : Expected<void>(nodes.error());
                if (!bound) {
                    logError("cannot bind the memory of rank " + std::to_string(global) + ": " +
                             bound.error().message +
                             " (set __PSI_NO_BINDMEM to run without memory binding)");
                    return -1;
                }
            }
        }
    }
    return 0;
}

int StepdSide::taskExit(spank_t sp) {
    if (!active_)
        return 0;
    // A failed task: its node server tells srun, which exits with the first
    // such status as mpirun does (Slurm's kill of the other tasks would
    // otherwise make srun's status 128 + SIGTERM). Never blocks slurmstepd.
    int status = 0;
    uint32_t global = 0;
    if (serverNotices_ && spank_get_item(sp, S_TASK_EXIT_STATUS, &status) == ESPANK_SUCCESS &&
        spank_get_item(sp, S_TASK_GLOBAL_ID, &global) == ESPANK_SUCCESS) {
        int code = WIFEXITED(status)     ? WEXITSTATUS(status)
                   : WIFSIGNALED(status) ? 128 + WTERMSIG(status)
                                         : 0;
        if (code != 0) {
            const std::string line = ready::encodeTaskExit({global, code});
            (void)send(serverNotices_.get(), line.data(), line.size(), MSG_DONTWAIT | MSG_NOSIGNAL);
        }
    }
    // Slurm SIGKILLs the server right after the last task; stop it first so
    // it finalizes PMIx and removes its files.
    if (++exitedTasks_ == localTasks_)
        server_.stop(2000);
    return 0;
}

int StepdSide::exit(spank_t) {
    if (!active_)
        return 0;
    if (starting_) { // the tasks never got that far
        starting_->process.stop(200);
        starting_.reset();
    }
    server_.stop(200);
    removeServerDirectory();
    return 0;
}

void StepdSide::removeServerDirectory() {
    if (tmpdir_.empty() || uid_ == 0)
        return;
    // The directory and everything in it belong to the job's user, who may
    // change it while we remove it: remove it as that user, so nothing
    // else can be reached whatever they swap in.
    const std::string dir = tmpdir_;
    if (!runAsUser(
            uid_, gid_, [&dir] { return os::removeTree(dir); }, 5000))
        logError("could not remove the server's directory " + dir);
    tmpdir_.clear();
}

} // namespace stepmap::plugin
