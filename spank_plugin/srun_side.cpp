#include "srun_side.hpp"

#include "modex/modex_mode.hpp"
#include "profile/profile_subset.hpp"
#include "profile/profile_yaml.hpp"

#include "allocation_request.hpp"
#include "base/quote.hpp"
#include "hosts/allocation.hpp"
#include "hosts/host_list.hpp"
#include "hosts/node_model.hpp"
#include "hosts/step_nodes.hpp"
#include "job_allocation.hpp"
#include "job_variables.hpp"
#include "mpi_linkage.hpp"
#include "multi_prog.hpp"
#include "placement/parastation_placement.hpp"
#include "plan/job_map.hpp"
#include "planner/planner.hpp"
#include "planner/srun_step_rules.hpp"
#include "plugin_log.hpp"
#include "pmix_request.hpp"
#include "psi_environment.hpp"
#include "request/allocation_shape.hpp"
#include "request/map_policy.hpp"
#include "request/rankfile.hpp"
#include "request/request_options.hpp"
#include "site/site_defaults.hpp"
#include "slurm_release.hpp"
#include "srun/served_decision.hpp"
#include "srun/step_environment.hpp"
#include "srun_command_line.hpp"
#include "user_file.hpp"
#include "wire/frame_channel.hpp"
#include "wire/secret.hpp"

#include <fcntl.h>
#include <netdb.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <memory>
#include <set>
#include <sstream>

extern "C" {
#include <slurm/slurm.h>
}

namespace stepmap::plugin {

namespace {

std::optional<std::string> env(const char *name) {
    const char *v = std::getenv(name);
    return v ? std::optional<std::string>(v) : std::nullopt;
}

// Where the step's rendezvous listens (see RendezvousHub::Settings): the
// site's hub_address, else the address this host uses to reach slurmctld;
// within Slurm's SrunPortRange if the site sets one. One RPC, only for
// stepmap's steps.
RendezvousHub::Settings hubSettings(const SiteConfig &site) {
    RendezvousHub::Settings s;
    s.host = site.hubAddress;
    s.connectDeadlineSec = site.serverStartTimeoutSec;
    if (slurm_conf_t *conf = slurm_release::loadControllerConf()) {
        if (conf->srun_port_range && conf->srun_port_range[0] > 0 &&
            conf->srun_port_range[1] >= conf->srun_port_range[0]) {
            s.portMin = conf->srun_port_range[0];
            s.portMax = conf->srun_port_range[1];
        }
        if (conf->control_cnt > 0 && conf->control_addr && conf->control_addr[0])
            s.toward = conf->control_addr[0];
        slurm_release::freeControllerConf(conf);
    }
    return s;
}

// --multi-prog's file, read with the user's rights (srun runs as the user):
// a regular file of at most kMaxUserFileBytes (a FIFO or a device is
// refused at once, never waited on).
Expected<std::string> readOptionFile(const std::string &option, const std::string &path) {
    auto text = readBoundedFile(path);
    if (!text)
        return unreadableFile(option, path, text.error());
    return text;
}

// The PSI_* variables (and OMP_NUM_THREADS) that are set.
EnvironmentValues psiEnvironment() {
    EnvironmentValues values;
    for (const std::string &name : environmentNamesRead()) {
        if (const char *value = std::getenv(name.c_str()))
            values[name] = value;
    }
    return values;
}

// --hostfile, a seq/rankfile FILE= and PSI_HOSTFILE, read with the user's
// rights (srun runs as the user); the error is the reason alone.
Expected<std::string> readUserFile(const std::string &path) {
    return readBoundedFile(path);
}

// A program linked with a PMI-only MPI (Debian's MPICH): under stepmap's
// PMIx server each of its ranks would start alone, as a singleton. Found
// here, on the submit host, as the nodes would find it (srun's PATH and
// -D); a program not found here, or not an ELF file (a script), is let be.
std::optional<UserError> pmiOnlyProgram(const SrunCommandLine &cmd) {
    if (!cmd.program || cmd.last("multi-prog"))
        return std::nullopt;
    std::string cwd;
    if (const SrunOption *dir = cmd.last("chdir"); dir && dir->value)
        cwd = *dir->value;
    if (cwd.empty() || cwd[0] != '/') {
        char here[4096];
        std::string base = getcwd(here, sizeof here) ? here : "/";
        cwd = cwd.empty() ? base : base + "/" + cwd;
    }
    const char *path = std::getenv("PATH");
    auto program = resolveProgram(*cmd.program, path ? path : "", cwd);
    if (!program)
        return std::nullopt;
    auto needed = neededLibraries(*program);
    if (!needed)
        return std::nullopt;
    auto library = pmiOnlyMpiLibrary(*needed);
    if (!library)
        return std::nullopt;
    return UserError{*cmd.program + " is linked with MPICH (" + *library +
                     "), which talks to its launcher through PMI-1/PMI-2 only; stepmap serves "
                     "PMIx, so each rank would start alone. Run it without stepmap's options as "
                     "`srun --mpi=pmi2 ...`, or use an MPI built with PMIx (Open MPI, or MPICH "
                     "configured --with-pmi=pmix)"};
}

// srun's input variables that shape an allocation, as set.
std::map<std::string, std::string> allocationEnvironment() {
    std::map<std::string, std::string> values;
    for (const std::string &name : allocationVariables())
        if (const char *value = std::getenv(name.c_str());
            value && name != slurm_release::ignoredCpusPerTaskVariable())
            values[name] = value;
    return values;
}

// -N, -w and -x as srun would apply them to the step inside the job.
Expected<StepNodeRequest> stepNodeRequest(const SrunCommandLine &cmd) {
    StepNodeRequest req;
    for (const SrunOption &option : cmd.options) {
        if (option.role != SrunOptionRole::StepNodes)
            continue;
        const std::string value = option.value.value_or("");
        if (option.name == "nodes") {
            auto count = parseNodeCount(option.written, value);
            if (!count)
                return count.error();
            req.count = count.value();
            req.countOption = option.written;
            continue;
        }
        auto names = parseNodeNames(option.written, value,
                                    [](const std::string &path) { return readBoundedFile(path); });
        if (!names)
            return names.error();
        if (option.name == "nodelist") {
            req.include = std::move(names.value());
            req.includeOption = option.written;
        } else {
            req.exclude = std::move(names.value());
            req.excludeOption = option.written;
        }
    }
    return req;
}

// The job srun runs in: its nodes and CPUs from the variables salloc/sbatch
// set, else from Slurm (one RPC), with the environment srun passes on.
Expected<JobFromSlurm> jobAllocation(const JobToRunIn &job) {
    if (job.nodeList && job.cpusPerNode) {
        auto a = allocationOfJobVariables(job);
        if (!a)
            return a.error();
        return JobFromSlurm{std::move(a.value()), {}};
    }
    const std::string &jobId = *job.jobId;
    const uint32_t id = static_cast<uint32_t>(std::strtoul(jobId.c_str(), nullptr, 10));
    auto granted = JobAllocation::lookup(id);
    if (!granted)
        return UserError{"job " + jobId + " (SLURM_JOB_ID or --jobid) is not one Slurm knows: " +
                         granted.error().message};
    return allocationOfLookedUpJob(jobId, granted->nodeList, granted->cpusPerNode);
}

struct NodeTableFree {
    void operator()(node_info_msg_t *table) const { slurm_free_node_info_msg(table); }
};
using NodeTable = std::unique_ptr<node_info_msg_t, NodeTableFree>;

// Slurm's node table: one RPC to slurmctld.
Expected<NodeTable> loadNodeTable() {
    node_info_msg_t *nodes = nullptr;
    if (slurm_load_node(0, &nodes, SHOW_ALL) != SLURM_SUCCESS || !nodes)
        return UserError{std::string("cannot read Slurm's node table: ") +
                         slurm_strerror(slurm_release::lastError())};
    return NodeTable(nodes);
}

// Loads the node table into table unless it holds it already.
Expected<bool> loadNodeTableOnce(NodeTable &table) {
    if (table)
        return true;
    auto loaded = loadNodeTable();
    if (!loaded)
        return loaded.error();
    table = std::move(loaded.value());
    return true;
}

// --nodes-sort's figures for the allocated nodes: Slurm's CPUTot, its
// 1-minute CPULoad (Slurm keeps no 5- or 15-minute load) and AllocCPUs less
// this job's own CPUs there (`ownAllocation`: srun runs inside the job), so
// that PROC counts what other jobs hold.
std::vector<NodeFigures> nodeFigures(const node_info_msg_t &table, const Allocation &alloc,
                                     bool ownAllocation) {
    std::map<std::string, int, std::less<>> ownCpus;
    for (const AllocatedNode &node : alloc.nodes)
        ownCpus[node.name] = ownAllocation ? node.slots : 0;
    std::vector<NodeFigures> figures;
    for (uint32_t i = 0; i < table.record_count; ++i) {
        const node_info_t &n = table.node_array[i];
        if (!n.name)
            continue;
        const auto own = ownCpus.find(std::string_view(n.name));
        if (own == ownCpus.end())
            continue;
        const std::uint16_t allocated = slurm_release::allocatedCpus(n);
        NodeFigures f;
        f.name = n.name;
        f.hardwareThreads = n.cpus;
        f.assignedThreads = std::max(0, static_cast<int>(allocated) - own->second);
        if (n.cpu_load != NO_VAL)
            f.load1 = n.cpu_load / 100.0;
        figures.push_back(std::move(f));
    }
    return figures;
}

// PSI_NODES without an allocation indexes the usable nodes of the cluster
// in Slurm's order (ParaStation's node ids); as names, they are nodes the
// user named, which the allocation request may pass to Slurm.
Expected<NodePool> poolIndicesAsNames(const NodePool &pool, const node_info_msg_t &table) {
    std::vector<std::string> usable;
    for (uint32_t i = 0; i < table.record_count; ++i) {
        const node_info_t &n = table.node_array[i];
        if (!n.name)
            continue;
        uint32_t base = n.node_state & NODE_STATE_BASE;
        if (base == NODE_STATE_DOWN || base == NODE_STATE_FUTURE ||
            (n.node_state & NODE_STATE_DRAIN))
            continue;
        usable.push_back(n.name);
    }
    NodePool named;
    named.kind = NodePool::Kind::Hosts;
    for (std::uint32_t index : pool.indices) {
        if (index >= usable.size())
            return UserError{"PSI_NODES: node " + std::to_string(index) +
                             " does not exist; Slurm has " + std::to_string(usable.size()) +
                             " usable nodes, numbered from 0"};
        named.names.push_back(usable[index]);
    }
    return named;
}

// Each allocated node's model from Slurm: its shape (sockets, cores,
// threads) and the CPUs this job holds there (all of them when srun makes
// its own allocation). Nodes alike share one model.
Expected<bool> attachNodeModels(Allocation &alloc, const node_info_msg_t &table,
                                const std::string &job) {
    const auto jobId = static_cast<std::uint32_t>(std::strtoul(job.c_str(), nullptr, 10));
    auto cpuIds = slurm_release::jobCpuIds(jobId);
    if (!cpuIds)
        return UserError{"cannot read job " + job +
                         "'s CPUs from Slurm: " + cpuIds.error().message};
    std::map<std::string, const node_info_t *, std::less<>> byName;
    for (uint32_t i = 0; i < table.record_count; ++i)
        if (table.node_array[i].name)
            byName[table.node_array[i].name] = &table.node_array[i];
    std::map<std::string, std::shared_ptr<const NodeModel>> shared;
    for (AllocatedNode &node : alloc.nodes) {
        auto it = byName.find(node.name);
        if (it == byName.end())
            return UserError{"Slurm's node table has no node " + node.name};
        const node_info_t &n = *it->second;
        SlurmNodeShape shape;
        shape.sockets = std::max<int>(1, n.sockets);
        shape.coresPerSocket = std::max<int>(1, n.cores);
        shape.threadsPerCore = std::max<int>(1, n.threads);
        auto held = cpuIds->find(node.name);
        if (held == cpuIds->end())
            return UserError{"Slurm names no CPUs of job " + job + " on " + node.name};
        const std::string &ids = held->second;
        std::string key = std::to_string(shape.sockets) + "/" +
                          std::to_string(shape.coresPerSocket) + "/" +
                          std::to_string(shape.threadsPerCore) + "/" + ids;
        auto &model = shared[key];
        if (!model) {
            std::vector<std::uint32_t> idList;
            if (!ids.empty()) {
                auto parsed = parseCpuIdList(ids);
                if (!parsed)
                    return UserError{"Slurm's CPU ids of " + node.name + ": " +
                                     parsed.error().message};
                idList = std::move(parsed.value());
            }
            auto built = buildSlurmNodeModel(shape, idList);
            if (!built)
                return UserError{"node " + node.name + ": " + built.error().message};
            model = std::move(built.value());
        }
        node.model = model;
    }
    return true;
}

} // namespace

void SrunSide::refuse(const std::string &message) {
    logError(refusalMessage(message, serve_, site_.policy));
    mapPicture_.reset(); // its temporary file
    // Nothing has started yet; leaving here guarantees nothing will, even
    // if the site loads the plugin as "optional".
    std::exit(EXIT_FAILURE);
}

namespace {

// srun re-executes itself without -N/-w/-x when the plan replaces them (srun
// ignores SLURM_HOSTFILE next to -w, and 23.11+ refuses -N with the
// arbitrary distribution). The new image finds what the old one prepared:
// "<pid>:<host file fd>:<plan ms>:<allocation ms>:<job>:<watcher fd>" (job
// 0: none). The pid
// makes sure it is this process's, not inherited.
constexpr const char *kReexecVariable = "STEPMAP_SRUN_REEXEC";

struct Reexec {
    int hostfileFd = -1;
    double planMs = 0;
    double allocationMs = 0;
    std::uint32_t job = 0;
    int watcherFd = -1;
};

std::optional<Reexec> takeReexec() {
    const char *value = std::getenv(kReexecVariable);
    if (!value)
        return std::nullopt;
    std::string text = value;
    unsetenv(kReexecVariable);
    unsigned long pid = 0, job = 0;
    Reexec r;
    if (std::sscanf(text.c_str(), "%lu:%d:%lf:%lf:%lu:%d", &pid, &r.hostfileFd, &r.planMs,
                    &r.allocationMs, &job, &r.watcherFd) != 6 ||
        pid != static_cast<unsigned long>(getpid()) || r.hostfileFd < 3)
        return std::nullopt;
    r.job = static_cast<std::uint32_t>(job);
    return r;
}

// PSI_NODES indexes the cluster's nodes when srun has no allocation: the
// allocation request names them.
Expected<bool> namePoolNodes(PlanRequest &req, NodeTable &table) {
    if (!req.parastation.pool || req.parastation.pool->kind != NodePool::Kind::Nodes)
        return true;
    if (auto loaded = loadNodeTableOnce(table); !loaded)
        return loaded.error();
    auto named = poolIndicesAsNames(*req.parastation.pool, *table);
    if (!named)
        return named.error();
    req.parastation.pool = std::move(named.value());
    return true;
}

// -N, -w, -x: the step's nodes within the job, as Slurm would choose them.
Expected<bool> narrowToStepNodes(const SrunCommandLine &cmd, Allocation &alloc) {
    auto stepNodes = stepNodeRequest(cmd);
    if (!stepNodes)
        return stepNodes.error();
    if (stepNodes->any()) {
        auto chosen = selectStepNodes(alloc, stepNodes.value());
        if (!chosen)
            return chosen.error();
        alloc = std::move(chosen.value());
    }
    return true;
}

// srun's -c, or the variable this release's srun reads as -c (which
// sbatch -c sets), as messages name it.
std::optional<CpusPerTask> cpusPerTask(const SrunCommandLine &cmd) {
    if (const SrunOption *c = cmd.last("cpus-per-task"); c && c->value)
        return CpusPerTask{*c->value, c->written + " " + *c->value};
    if (auto v = env(slurm_release::cpusPerTaskVariable()))
        return CpusPerTask{*v, std::string(slurm_release::cpusPerTaskVariable()) + "=" + *v};
    return std::nullopt;
}

// srun's --ntasks-per-node (or --tasks-per-node), as written.
std::optional<WrittenSetting> tasksPerNode(const SrunCommandLine &cmd) {
    const SrunOption *perNode =
        cmd.last("ntasks-per-node") ? cmd.last("ntasks-per-node") : cmd.last("tasks-per-node");
    if (!perNode)
        return std::nullopt;
    return WrittenSetting{perNode->written, perNode->value.value_or("")};
}

} // namespace

int SrunSide::init(spank_t) {
    marks_.started = timeline::nowUsec();
    auto started = std::chrono::steady_clock::now();
    const std::vector<std::string> args = readOwnCommandLine();
    auto cmd = scanSrunCommandLine(args, optionArity());
    environment_ = readSrunEnvironment({"SLURM_MPI_TYPE", "SLURM_NTASKS_PER_NODE", "SLURM_HET_SIZE",
                                        "SLURM_PACK_SIZE", "SLURM_JOB_ID", "SLURM_JOB_NODELIST",
                                        "SLURM_JOB_CPUS_PER_NODE"});
    auto forwarded = forwardedOptions();
    options_ = mergeOptions(cmd.stepmapOptions, forwarded);
    forwarded_ = forwarded;
    planned_ = forwarded;
    for (auto &[k, v] : cmd.stepmapOptions)
        planned_[k] = v;

    if (auto reexec = takeReexec()) {
        // The previous image of this srun planned, allocated and set the
        // environment; only the plan is needed again here.
        wire::initCryptoWithoutExitCleanup();
        auto decoded = decodePlan(env(kPlanVariable).value_or(""));
        if (!decoded)
            refuse("lost the plan across srun's restart: " + decoded.error().message);
        active_ = true;
        plan_ = std::move(decoded.value());
        hostfileFd_.reset(reexec->hostfileFd);
        fcntl(hostfileFd_.get(), F_SETFD, FD_CLOEXEC);
        planMs_ = reexec->planMs;
        allocationMs_ = reexec->allocationMs;
        if (reexec->job) {
            job_ = JobAllocation::adopt(reexec->job, reexec->watcherFd);
            if (!job_)
                refuse("lost job " + std::to_string(reexec->job) + " across srun's restart");
        }
        return 0;
    }

    // What an outer stepmap step handed its tasks is not this step's: an
    // srun inside such a task must not carry it into its own step.
    for (const char *name : kJobVariables)
        unsetenv(name);
    const EnvironmentValues environment = psiEnvironment();
    ServeInput served{args, cmd, options_, firstPsiVariable(environment), environment_};
    serve_ = decideServing(served, site_.policy, slurmMpiDefault,
                           [](const std::string &path) { return readBoundedFile(path); });
    if (!serve_.served)
        return 0;                         // srun behaves exactly as without the plugin
    wire::initCryptoWithoutExitCleanup(); // before any OpenSSL use (see there)
    active_ = true;
    ntasks_ = cmd.ntasks;
    if (cmd.multiProg)
        multiProgFile_ = cmd.program.value_or("");

    if (auto accepted = refuseLayoutOptions(cmd, site_.policy, serve_.engaged); !accepted)
        refuse(accepted.error().message);
    prepareDisplayMap();

    auto planned = plan(cmd, environment);
    if (!planned) {
        if (job_)
            job_->release(1);
        refuse(planned.error().message + siteDefaultsNote(siteDefaults_, site_.policy));
    }

    writeHostfile();
    exportPlan();
    exportModex();
    if (textMap_ || report_.display)
        displayJobMap(cmd);
    if (mapPicture_)
        drawJobMap(cmd);
    // The srun-side cost of stepmap, shown by `srun -v` once srun knows
    // its verbosity (local_user_init).
    planMs_ = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - started)
                  .count() -
              allocationMs_;

    // -N, -w, -x and --ntasks-per-node chose the nodes (and were checked
    // against the plan); srun must not apply them again to the step, which
    // the host file now lays out: run srun anew without them.
    std::vector<SrunOptionRole> replaced = {SrunOptionRole::StepNodes,
                                            SrunOptionRole::TasksPerNode};
    if (cmd.mpi && isPmixType(cmd.mpi->c_str()))
        replaced.push_back(SrunOptionRole::MpiType); // the site serves it (refuseLayoutOptions)
    std::vector<std::string> rest = argumentsWithout(args, cmd, replaced);
    if (rest != args)
        reexecute(rest);
    return 0;
}

// Make Slurm start exactly the plan: one line per rank, in rank order, with
// the arbitrary distribution (set before srun reads its environment, so the
// inherited task and node counts give way to the hostfile).
void SrunSide::writeHostfile() {
    // The host file lives in memory (a memfd srun opens as /proc/self/fd/N):
    // no file on disk that an srun failing later could leave behind.
    hostfileFd_.reset(memfd_create("stepmap-hostfile", MFD_CLOEXEC));
    if (!hostfileFd_)
        fail(std::string("cannot create the step's host file: ") + std::strerror(errno));
    const int fd = hostfileFd_.get();
    hostfilePath_ = "/proc/self/fd/" + std::to_string(fd);
    std::string lines;
    for (auto &r : plan_.ranks)
        lines += plan_.nodes[r.node].name + "\n";
    if (write(fd, lines.data(), lines.size()) != static_cast<ssize_t>(lines.size()))
        fail("cannot write the step's host file");
    lseek(fd, 0, SEEK_SET);
}

// The plan and the settings it needs, in the environment srun and the
// nodes read.
void SrunSide::exportPlan() {
    auto changes =
        planEnvironment(plan_, request_, hostfilePath_, slurm_release::cpusPerTaskVariable());
    if (!changes)
        fail(changes.error().message);
    applyToEnvironment(changes.value());
}

// --modex, and the step's nodes' entries of the site's interconnect profile
// for their servers. Without --modex=profile a profile that cannot be used
// is only reported: the step never fails because of one.
void SrunSide::exportModex() {
    auto mode = modex::ModexMode::Fence;
    // --modex (or sbatch's), else the site's default.
    if (options_.modex || site_.policy.modex) {
        const std::string source =
            options_.modex ? "--modex" : "defaults.modex in " + site_.policy.path;
        auto parsed =
            modex::parseModexMode(options_.modex.value_or(site_.policy.modex.value_or("")), source);
        if (!parsed)
            fail(parsed.error().message);
        mode = *parsed;
    }
    const bool needed = mode == modex::ModexMode::Profile;
    // With its port range: every node must pin the same ports.
    if (mode != modex::ModexMode::Fence)
        setenv(kModexVariable,
               (std::string(modex::modexModeName(mode)) + ":" + site_.modexPorts).c_str(), 1);
    if (site_.profile.empty()) {
        if (needed)
            fail("--modex=profile needs the site's interconnect profile, and plugstack.conf "
                 "names none (profile=FILE, made with stepmap-profile make); use --modex=async");
        return;
    }
    auto unusable = [&](const std::string &why) {
        if (needed)
            fail("--modex=profile cannot use the site's interconnect profile: " + why +
                 "; use --modex=async, or ask the site to update the profile");
        logVerbose("not serving the site's interconnect profile: " + why);
    };
    auto profile = topology::readProfileFile(site_.profile);
    if (!profile) {
        // A broken site file is the site's to fix: said on every srun, not
        // only with -v (a node without an entry is no fault).
        if (needed)
            return unusable(profile.error().message);
        logInfo("not serving the site's interconnect profile: " + profile.error().message);
        return;
    }
    std::vector<std::string> names;
    for (const auto &node : plan_.nodes)
        names.push_back(node.name);
    const topology::Profile ours = topology::profileOfNodes(*profile, names);
    if (ours.nodes.empty())
        return unusable(site_.profile + " has no entry for the step's nodes");
    const std::string text = topology::writeProfileYaml(ours);
    // In pieces (job_variables.hpp), and within what srun's own re-exec and
    // slurmstepd's start of the server can carry.
    const std::size_t most = std::min(std::size(kProfileVariables) * kProfilePieceBytes,
                                      static_cast<std::size_t>(sysconf(_SC_ARG_MAX)) / 2);
    if (text.size() > most)
        return unusable("the entries of the step's " + std::to_string(ours.nodes.size()) +
                        " nodes take " + std::to_string(text.size()) + " bytes, more than the " +
                        std::to_string(most) + " the job environment can carry");
    for (std::size_t at = 0, piece = 0; at < text.size(); at += kProfilePieceBytes, ++piece)
        setenv(kProfileVariables[piece], text.substr(at, kProfilePieceBytes).c_str(), 1);
}

// --display-map: mpirun's job map, on srun's stderr.
void SrunSide::displayJobMap(const SrunCommandLine &cmd) {
    auto job = env("SLURM_JOB_ID");
    JobMapHeader header = reportedJobMapHeader(report_, job ? *job : "N/A");
    describeParaStationMapping(header, request_);
    std::string map = formatJobMap(plan_, header, allocation_,
                                   JobMapOptions{BoundStyle::Prrte, report_.hwthreadCpus});
    // srun plans with the job's CPUs; a step that takes only its tasks'
    // share of a node (-c, --exact) may hold fewer, unknown until Slurm
    // creates it. Say so rather than show CPUs that may not be the ones.
    const bool bound = std::any_of(plan_.ranks.begin(), plan_.ranks.end(),
                                   [](const RankPlacement &r) { return r.binding != kUnbound; });
    if (bound && (cmd.last("cpus-per-task") || cmd.last("exact") ||
                  env(slurm_release::cpusPerTaskVariable()) || env("SLURM_EXACT")))
        map += "Bindings above are within the job's CPUs; with -c or --exact the step may "
               "hold fewer on a node, and each node binds within those it holds (its node "
               "server logs where that narrows a binding).\n";
    std::fwrite(map.data(), 1, map.size(), stderr);
    std::fflush(stderr);
}

Expected<Allocation> SrunSide::allocationWithModels(const std::string &job) const {
    Allocation alloc = allocation_;
    NodeTable table;
    if (auto loaded = loadNodeTableOnce(table); !loaded)
        return loaded.error();
    if (auto attached = attachNodeModels(alloc, *table, job); !attached)
        return attached.error();
    return alloc;
}

void SrunSide::fail(const std::string &message) {
    if (job_)
        job_->release(1);
    refuse(message);
}

void SrunSide::reexecute(const std::vector<std::string> &args) {
    int flags = fcntl(hostfileFd_.get(), F_GETFD);
    fcntl(hostfileFd_.get(), F_SETFD, flags & ~FD_CLOEXEC);
    int watcher = job_ ? job_->keepAcrossExec() : -1;
    char value[128];
    std::snprintf(value, sizeof value, "%ld:%d:%.3f:%.3f:%lu:%d", static_cast<long>(getpid()),
                  hostfileFd_.get(), planMs_, allocationMs_,
                  static_cast<unsigned long>(job_ ? job_->jobId() : 0), watcher);
    setenv(kReexecVariable, value, 1);
    std::vector<char *> argv;
    static char srunName[] = "srun";
    argv.push_back(srunName);
    for (const std::string &a : args)
        argv.push_back(const_cast<char *>(a.c_str()));
    argv.push_back(nullptr);
    std::fflush(nullptr);
    // By its real path: the process keeps the name "srun" (pkill, killall,
    // ps -C see it as before); /proc/self/exe only if that is gone.
    char self[4096];
    ssize_t len = readlink("/proc/self/exe", self, sizeof self - 1);
    if (len > 0) {
        self[len] = '\0';
        execv(self, argv.data());
    }
    execv("/proc/self/exe", argv.data());
    fail(std::string("cannot restart srun without its -N/-w/-x options: ") + std::strerror(errno));
}

Expected<bool> SrunSide::plan(const SrunCommandLine &cmd, const EnvironmentValues &environment) {
    if (auto refused = pmiOnlyProgram(cmd))
        return *refused;
    PlanRequest req;
    auto built = buildRequest(environment, req);
    if (!built)
        return built.error();
    NodeTable table; // Slurm's node table, loaded only when needed

    // A step only the site's serve: pmix engaged counts its tasks as srun
    // does (the user wrote an srun command, not an mpirun one): -n, else the
    // job's SLURM_NTASKS, else one per node.
    const bool srunTaskCount = serve_.bySitePolicy && !req.np && req.apps.empty();
    std::optional<int> jobTasks;
    if (srunTaskCount)
        for (const char *name : {"SLURM_NTASKS", "SLURM_NPROCS"})
            if (auto value = env(name); value && !jobTasks) {
                auto n = parseProcessCount(*value);
                if (!n)
                    return UserError{std::string(name) + "=" + *value + ": " + n.error().message};
                jobTasks = n.value();
            }

    Allocation alloc;
    const JobToRunIn job = jobToRunIn(cmd, environment_);
    applyToEnvironment(job.changes);
    const std::optional<std::string> &jobId = job.jobId;
    if (srunTaskCount && !jobId) {
        auto stepNodes = stepNodeRequest(cmd);
        req.np = jobTasks ? *jobTasks : (stepNodes && stepNodes->count ? stepNodes->count->min : 1);
    }
    if (jobId) {
        auto a = jobAllocation(job);
        if (!a)
            return a.error();
        alloc = std::move(a->allocation);
        applyToEnvironment(a->changes);
    } else {
        // No allocation yet: ask Slurm's scheduler for one shaped by what the
        // user asked, then plan inside it as inside salloc.
        if (auto named = namePoolNodes(req, table); !named)
            return named.error();
        auto shape = allocationShapeFor(req);
        if (!shape)
            return shape.error();
        auto areq = allocationRequestFor(
            cmd, allocationEnvironment(), shape.value(), cmd.program.value_or("srun"),
            [](const std::string &path) { return readBoundedFile(path); });
        if (!areq)
            return areq.error();
        const auto asked = std::chrono::steady_clock::now();
        auto granted = JobAllocation::request(areq.value());
        allocationMs_ =
            std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - asked)
                .count();
        if (!granted)
            return granted.error();
        job_ = std::move(granted.value());
        job_->exportJobVariables();
        auto a = allocationFromSlurm(job_->nodeList(), job_->cpusPerNode());
        if (!a)
            return UserError{"cannot read job " + std::to_string(job_->jobId()) +
                             "'s allocation: " + a.error().message};
        alloc = std::move(a.value());
        req = keepExclusionsOfGrantedNodes(std::move(req), alloc);
    }
    // A job stepmap asked for was shaped by -N, -w, -x already: the step is all of it.
    if (!job_)
        if (auto chosen = narrowToStepNodes(cmd, alloc); !chosen)
            return chosen.error();
    if (srunTaskCount && !req.np)
        req.np = jobTasks ? *jobTasks : static_cast<int>(alloc.nodes.size());

    // Sorting by load or processes needs Slurm's node table; nothing else
    // does, so only then does srun ask slurmctld.
    if (needsNodeFigures(req.parastation.nodesSort)) {
        if (auto loaded = loadNodeTableOnce(table); !loaded)
            return loaded.error();
        req.parastation.figures = nodeFigures(*table, alloc, true);
    }
    if (needsHardware(req)) {
        if (auto loaded = loadNodeTableOnce(table); !loaded)
            return loaded.error();
        auto attached = attachNodeModels(alloc, *table,
                                         job_ ? std::to_string(job_->jobId()) : jobId.value_or(""));
        if (!attached)
            return attached.error();
    }
    auto divided = divideSlotsByCpusPerTask(std::move(alloc), req, cpusPerTask(cmd));
    if (!divided)
        return divided.error();
    alloc = std::move(divided.value());
    auto p = planJob(alloc, req);
    if (!p)
        return p.error();
    if (auto agreed = checkTasksPerNode(p.value().plan, tasksPerNode(cmd)); !agreed)
        return agreed.error();
    if (auto within = withinSitePolicy(req, p.value().plan); !within)
        return within.error();
    plan_ = std::move(p.value().plan);
    report_ = std::move(p.value().report);
    allocation_ = std::move(alloc);
    request_ = std::move(req);
    return true;
}

namespace {

// The site's default placement (stepmap.yaml: defaults.*) where the user
// gave none. Below the environment: ParaStation placement from PSI_* or its
// options decides the mapping itself (and refuses most of mpirun's), so the
// site's map_by, rank_by and bind_to then stay out.
// Returns the defaults it used, as "--map-by core", for errors to name.
std::vector<std::string> applySiteDefaults(const SitePolicy &policy, const StepmapOptions &options,
                                           const EnvironmentValues &environment, AppOptions &app) {
    const bool parastation = options.overbook || options.loopNodesFirst || options.nodesSort ||
                             options.tpp || firstPsiVariable(environment).has_value();
    return fillSiteDefaults(policy, app, parastation);
}

} // namespace

Expected<bool> SrunSide::withinSitePolicy(const PlanRequest &req, const LaunchPlan &plan) const {
    std::optional<std::string> overbookBy;
    if (req.overbook)
        overbookBy = options_.overbook ? "--overbook" : "PSI_OVERBOOK";
    return checkSitePolicy(site_.policy, plan, overbookBy);
}

Expected<bool> SrunSide::buildRequest(const EnvironmentValues &environment, PlanRequest &req) {
    std::optional<int> np;
    if (ntasks_) {
        auto parsed = parseProcessCount(*ntasks_);
        if (!parsed)
            return UserError{"-n/--ntasks: " + parsed.error().message};
        np = parsed.value();
    }
    RequestOptions written;
    written.host = options_.host;
    written.hostfile = options_.hostfile;
    written.apps = {AppOptions{std::nullopt, options_.mapBy, options_.rankBy, options_.bindTo}};
    siteDefaults_ = applySiteDefaults(site_.policy, options_, environment, written.apps.front());
    // srun's messages quote values and put the option and value before any
    // parser's message (mapper/request/request_options.hpp).
    constexpr OptionWording kWording{.quoteValues = true, .mapFileNamesValue = false};
    auto built = stepmap::buildRequest(written, readUserFile, kWording);
    if (!built)
        return built.error();
    req = std::move(built.value());
    req.np = np;
    if (multiProgFile_) {
        // srun --multi-prog: each line of its file is an application context.
        auto text = readOptionFile("--multi-prog's file", *multiProgFile_);
        if (!text)
            return text.error();
        auto apps = multiProgApps(text.value(), *multiProgFile_);
        if (!apps)
            return apps.error();
        int total = 0;
        for (int n : apps.value()) {
            AppRequest app;
            app.np = n;
            req.apps.push_back(app);
            total += n;
        }
        if (req.np && *req.np != total)
            return UserError{"-n " + std::to_string(*req.np) + " differs from the " +
                             std::to_string(total) + " ranks of --multi-prog file " +
                             quoted(*multiProgFile_, kShownPathBytes) + "; give -n " +
                             std::to_string(total)};
        req.np.reset();
    }
    // --overbook, --loop-nodes-first, --nodes-sort, --tpp and their PSI_*
    // equivalents (options win).
    auto notes = applyParaStationEnvironment(options_, environment, readUserFile, req);
    if (!notes)
        return notes.error();
    psiNotes_ = std::move(notes.value());
    return true;
}

int SrunSide::optionSeen(const std::string &name, const std::string &value) {
    if (!active_) {
        // init found no stepmap option, yet srun parsed one: our reading of
        // the command line missed it, so no plan was made for this step.
        logError("could not read --" + name +
                 " from srun's command line before srun parsed it; write it as --" + name +
                 (value.empty() ? "" : "=" + value) + " before the program name");
        return -1;
    }
    // srun first hands over what salloc/sbatch forwarded, then its own
    // command line's value, which the plan was made with (it wins).
    auto it = planned_.find(name);
    auto from = forwarded_.find(name);
    const bool forwardedValue = from != forwarded_.end() && from->second == value;
    if ((it == planned_.end() || it->second != value) && !forwardedValue) {
        logError("--" + name + " '" + value +
                 "' differs from the value the plan was made with; write each stepmap option "
                 "once, as --name=value");
        return -1;
    }
    return 0;
}

int SrunSide::initPostOpt(spank_t) {
    // srun has read the host file by now.
    hostfileFd_.reset();
    return 0;
}

int SrunSide::localUserInit(spank_t sp) {
    if (!active_) {
        if (!serve_.unservedNote.empty())
            logVerbose(serve_.unservedNote);
        return 0;
    }
    if (serve_.bySitePolicy)
        logVerbose("serving this PMIx step with the site's defaults (serve: pmix in " +
                   site_.policy.path + ")");
    uint32_t jobId = 0, stepId = 0;
    spank_get_item(sp, S_JOB_ID, &jobId);
    spank_get_item(sp, S_JOB_STEPID, &stepId);
    marks_.stepCreated = timeline::nowUsec();
    if (!stepMatchesPlan(sp, jobId, stepId))
        return -1;
    logPlanCost();
    return startHub(jobId, stepId) ? 0 : -1;
}

bool SrunSide::stepMatchesPlan(spank_t sp, std::uint32_t jobId, std::uint32_t stepId) {
    uint32_t tasks = 0, nnodes = 0;
    spank_get_item(sp, S_JOB_TOTAL_TASK_COUNT, &tasks);
    spank_get_item(sp, S_JOB_NNODES, &nnodes);
    std::set<std::uint32_t> used;
    for (auto &r : plan_.ranks)
        used.insert(r.node);
    if (tasks == plan_.ranks.size() && nnodes == used.size())
        return true;
    logError("Slurm created step " + std::to_string(jobId) + "." + std::to_string(stepId) +
             " with " + std::to_string(tasks) + " tasks on " + std::to_string(nnodes) +
             " nodes, but the plan has " + std::to_string(plan_.ranks.size()) + " tasks on " +
             std::to_string(used.size()) +
             " nodes; not starting a layout that differs from the plan (is -n consistent "
             "with --host/--hostfile?)");
    return false;
}

// srun -v: what planning cost srun.
void SrunSide::logPlanCost() {
    char line[160];
    if (allocationMs_ > 0)
        std::snprintf(line, sizeof line,
                      "planned %zu ranks on %zu nodes in %.3f ms (and waited %.3f ms for "
                      "Slurm to grant the job)",
                      plan_.ranks.size(), plan_.nodes.size(), planMs_, allocationMs_);
    else
        std::snprintf(line, sizeof line, "planned %zu ranks on %zu nodes in %.3f ms",
                      plan_.ranks.size(), plan_.nodes.size(), planMs_);
    logVerbose(line);
    for (const std::string &note : psiNotes_)
        logVerbose(note);
}

// srun -v: where the step's time went, srun's marks and every node's.
void SrunSide::logCriticalPath() {
    marks_.planMs = planMs_;
    marks_.allocationMs = allocationMs_;
    std::vector<std::string> names;
    names.reserve(plan_.nodes.size());
    for (const auto &n : plan_.nodes)
        names.push_back(n.name);
    std::lock_guard<std::mutex> lock(timelinesMutex_);
    for (const auto &line :
         timeline::describeCriticalPath(marks_, timelines_, names, plan_.nodes.size()))
        logVerbose(line);
    if (!exchange_.empty())
        logVerbose(timeline::describeStepExchange(exchange_, plan_.nodes.size()));
}

// What srun does when the hub reports (on the hub's thread).
RendezvousHub::Events SrunSide::hubEvents(std::uint32_t jobId, std::uint32_t stepId) {
    RendezvousHub::Events events;
    events.onAbort = [this, jobId, stepId](std::uint32_t rank, int status, const std::string &msg) {
        int expected = -1;
        if (!abortStatus_.compare_exchange_strong(expected, status))
            return;
        logError("rank " + std::to_string(rank) + " called abort with status " +
                 std::to_string(status) + (msg.empty() ? "" : ": " + msg) + "; ending the step");
        slurm_release::killJobStep(jobId, stepId, SIGKILL);
    };
    events.onTimeline = [this](std::uint32_t node, std::vector<timeline::Event> marks) {
        std::lock_guard<std::mutex> lock(timelinesMutex_);
        timelines_[node] = std::move(marks);
    };
    // A node whose profile entry does not match it: said by its server
    // (its log has the differences); nobody serves that entry.
    // With --modex=profile the user asked for it: said without -v too.
    events.onProfileState = [this](std::uint32_t node, bool usable, const std::string &why) {
        if (usable || node >= plan_.nodes.size())
            return;
        const std::string line =
            "interconnect profile entry of " + plan_.nodes[node].name + " not served: " + why;
        if (options_.modex.value_or(site_.policy.modex.value_or("")) == "profile")
            logInfo(line + "; its ranks exchange their data at first contact instead");
        else
            logVerbose(line);
    };
    events.onExchange = [this](std::uint32_t node, const timeline::ExchangeCounters &counters) {
        std::lock_guard<std::mutex> lock(timelinesMutex_);
        exchange_[node] = counters;
    };
    events.onRankExit = [this](std::uint32_t, int status) {
        int expected = -1;
        firstFailure_.compare_exchange_strong(expected, status);
    };
    events.onFailure = [this, jobId, stepId](const std::string &why) {
        if (failed_.exchange(true) || abortStatus_.load() >= 0)
            return;
        // Give a step Slurm is ending anyway a moment to end on its own
        // (its tasks' statuses are then srun's to report), else end it.
        std::unique_lock<std::mutex> lock(endingMutex_);
        if (endingChanged_.wait_for(lock, std::chrono::seconds(1), [this] { return stepEnding_; }))
            return;
        lock.unlock();
        logError(why + "; ending the step");
        slurm_release::killJobStep(jobId, stepId, SIGKILL);
    };
    return events;
}

// Starts the step's hub and tells the nodes where it is and the secret.
bool SrunSide::startHub(std::uint32_t jobId, std::uint32_t stepId) {
    const auto hubStarted = std::chrono::steady_clock::now();
    std::vector<std::uint32_t> nodeOfRank;
    for (auto &r : plan_.ranks)
        nodeOfRank.push_back(r.node);
    std::string secret = wire::generateSecretHex();
    std::string error;
    hub_ = RendezvousHub::start(nodeOfRank, static_cast<std::uint32_t>(plan_.nodes.size()),
                                *wire::decodeSecretHex(secret), hubEvents(jobId, stepId),
                                hubSettings(site_), error);
    if (!hub_) {
        logError(error + " (set hub_address= in plugstack.conf to the address the nodes use "
                         "to reach this host)");
        return false;
    }
    const std::string address = hub_->address();
    const double hubMs =
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - hubStarted)
            .count();
    char cost[32];
    std::snprintf(cost, sizeof cost, "%.3f", hubMs);
    logVerbose("rendezvous of step " + std::to_string(jobId) + "." + std::to_string(stepId) +
               " at " + address + " (ready in " + cost + " ms)");
    setenv(kHubVariable, address.c_str(), 1);
    setenv(kSecretVariable, secret.c_str(), 1);
    marks_.hubOpen = timeline::nowUsec();
    return true;
}

int SrunSide::exit(spank_t) {
    if (!active_)
        return 0;
    marks_.exiting = timeline::nowUsec();
    hostfileFd_.reset();
    {
        std::lock_guard<std::mutex> lock(endingMutex_);
        stepEnding_ = true;
    }
    endingChanged_.notify_all();
    if (hub_) {
        hub_->shutdown(0, "srun is done");
        hub_.reset();
        logCriticalPath();
    }
    int status = abortStatus_.load();
    // As mpirun: the status of the first rank that failed, not srun's
    // (128 + SIGTERM once Slurm killed the others on its failure).
    if (status < 0)
        status = firstFailure_.load();
    if (job_) {
        // srun's own allocation would end here, with srun's status; the
        // plugin knows the application's abort status, else success.
        job_->release(status >= 0 ? status : (failed_.load() ? 1 : 0));
        job_.reset();
    }
    if (status >= 0) {
        // srun would report the killed ranks' signal; the step's status is
        // the one the application aborted with, as under mpirun.
        std::fflush(nullptr);
        std::_Exit(status);
    }
    return 0;
}

} // namespace stepmap::plugin
