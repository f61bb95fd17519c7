// stepmap-stepd: the PMIx server of one step on one node. Started by the
// stepmap SPANK plugin from slurmstepd, as the job's user, inside the step's
// cgroup; leaves when the step ends, when slurmstepd is gone, or when srun's
// rendezvous goes away, removing its files in every case.

#include "client_admission.hpp"
#include "hub_collective.hpp"
#include "modexless/pinned_ports.hpp"
#include "node_cache.hpp"
#include "os/owned_directory.hpp"
#include "os/step_directory.hpp"
#include "os/unique_fd.hpp"
#include "plan/step_bindings.hpp"
#include "pmix_host.hpp"
#include "protocol/ready/ready_report.hpp"
#include "protocol/ready/ready_socket.hpp"
#include "protocol/ready/task_notice.hpp"
#include "protocol/uv/uv_handle.hpp"
#include "server_log.hpp"
#include "step_config.hpp"
#include "step_modex.hpp"
#include "step_topology.hpp"

#include <fcntl.h>
#include <pmix.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <uv.h>

#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <memory>
#include <string>

using namespace stepmap;
using namespace stepmap::server;

namespace {

using ClientEnvironments = std::map<std::uint32_t, std::vector<std::string>>;

// Logs message and tells the plugin (if it is still listening); the ready
// socket is done then.
void reportFailure(os::UniqueFd &ready, const std::string &message) {
    logError(message);
    if (ready) {
        ready::writeReport(ready.get(), ready::encodeReadyFailure(message));
        ready.reset();
    }
}

// Where this server runs, for the per-step log: user and cgroups. It
// starts outside the step's cgroups (slurmstepd starts it before it makes
// them) and is moved there before any task execs: "ran as" says where it
// served.
void logWhereRunning(const char *verb) {
    std::string where = std::string(verb) + " as uid " + std::to_string(getuid()) + " gid " +
                        std::to_string(getgid());
    if (FILE *f = std::fopen("/proc/self/cgroup", "r")) {
        char line[512];
        while (std::fgets(line, sizeof line, f)) {
            std::string l(line);
            if (l.find(":cpuset:") != std::string::npos ||
                l.find(":freezer:") != std::string::npos || l.rfind("0::", 0) == 0)
                where += ", cgroup " + l.substr(0, l.find_last_not_of('\n') + 1);
        }
        std::fclose(f);
    }
    logLine(where);
}

// The plan was made in srun from Slurm's view of the job; the step may hold
// fewer CPUs here. Bind within what it holds (step_bindings.hpp): the plan
// of this node is rewritten so.
Expected<void> resolveBindings(StepConfig &c, const topology::StepTopology &step) {
    std::vector<std::uint32_t> stepCpus;
    for (int cpu = hwloc_bitmap_first(step.cpuset.get()); cpu >= 0;
         cpu = hwloc_bitmap_next(step.cpuset.get(), cpu))
        stepCpus.push_back(static_cast<std::uint32_t>(cpu));
    auto resolved = resolveBindingsOnNode(c.plan, c.nodeIndex, stepCpus);
    if (!resolved)
        return resolved.error();
    if (resolved->narrowed || resolved->unbound)
        logLine("bindings within the step's CPUs: " + std::to_string(resolved->narrowed) +
                " ranks narrowed, " + std::to_string(resolved->unbound) +
                " left unbound (their default binding lay outside the step)");
    return {};
}

// The kernel may hand pinned ports to any outgoing connection when they lie
// among its ephemeral ports: said in the log (modex_ports is the site's).
void warnIfEphemeral(const modexless::PortRange &pinned) {
    auto small = [](const char *path) {
        std::string text(256, '\0');
        os::UniqueFd fd(open(path, O_RDONLY | O_CLOEXEC));
        const ssize_t n = fd ? ::read(fd.get(), text.data(), text.size()) : -1;
        text.resize(n > 0 ? static_cast<std::size_t>(n) : 0);
        return text;
    };
    auto ephemeral =
        modexless::parseLocalPortRange(small("/proc/sys/net/ipv4/ip_local_port_range"));
    if (!ephemeral)
        return;
    if (auto warning = modexless::ephemeralOverlap(
            pinned, *ephemeral, small("/proc/sys/net/ipv4/ip_local_reserved_ports")))
        logLine("modex_ports: " + *warning);
}

// Everything the running server owns; torn down in reverse order.
struct Server {
    explicit Server(StepConfig c) : config(std::move(c)), ready(config.readyFd) {}
    StepConfig config;
    // The plugin's end of it stays open after the report: slurmstepd writes
    // task notices there when a task fails.
    os::UniqueFd ready;
    os::UniqueFd pidfd; // slurmstepd's
    uv_loop_t loop{};
    std::unique_ptr<LoopInbox> inbox;
    std::unique_ptr<PmixHost> host;
    std::unique_ptr<HubCollective> link;
    uvnet::UvHandlePtr<uv_signal_t> sigterm, sigint;
    uvnet::UvHandlePtr<uv_poll_t> parentWatch, notices;
    ready::TaskNoticeReader noticeReader;
    bool holdSeen = false;
    bool stopping = false;
    std::string stopReason;
    int exitCode = 0;
    // Its way to ready, for srun -v's breakdown (the link adds the rest).
    timeline::Recorder marks;

    // The loop, the inbox and the (not yet started) PMIx server.
    void prepare(const topology::StepTopology &step);
    Expected<ClientEnvironments> startPmix();
    void joinHub();
    // The profile rendezvous: this node's say on its own entry, then the
    // hub's verdict on every node's, before anything is registered.
    Expected<std::vector<std::uint32_t>> awaitProfileVerdict(const StepModex &modex,
                                                             const topology::StepTopology &step);
    // The modex-less launch's check of what its ranks committed.
    void checkRecordsAtFirstFence(const StepModex &modex);
    // A mark on the way to ready: the link's once it holds the marks.
    void mark(timeline::Mark m) {
        if (link)
            link->mark(m);
        else
            marks.record(m);
    }
    void watchNotices();
    void watchSignals();
    void watchSlurmstepd();
    int run();
    void readNotices();
    void stop(const std::string &why, int code);
};

void Server::prepare(const topology::StepTopology &step) {
    uv_loop_init(&loop);
    inbox = std::make_unique<LoopInbox>(&loop);
    host = std::make_unique<PmixHost>(config, *inbox, step.topology.get(), step.cpuset.get());
}

Expected<ClientEnvironments> Server::startPmix() {
    auto started = host->start();
    if (!started)
        return started.error();
    return host->clientEnvironments();
}

void Server::joinHub() {
    link = std::make_unique<HubCollective>(&loop, config, *host, marks,
                                           [this](const std::string &why) { stop(why, 1); });
    host->setCollective(link.get());
    link->connect();
}

Expected<std::vector<std::uint32_t>>
Server::awaitProfileVerdict(const StepModex &modex, const topology::StepTopology &step) {
    const OwnEntryCheck own = modex.checkOwnNode("/", step.interfaceNuma);
    if (!own.usable)
        logLine("interconnect profile entry of this node not served: " + own.reason);
    if (const auto range = modex.portRange())
        warnIfEphemeral(*range);
    // Shared with the callback: a verdict that came after a stop lands here,
    // not in a frame that is gone.
    auto verdict = std::make_shared<std::optional<std::vector<std::uint32_t>>>();
    link->askProfileVerdict(own.usable, own.reason,
                            [verdict](std::vector<std::uint32_t> w) { *verdict = std::move(w); });
    while (!*verdict && !stopping)
        uv_run(&loop, UV_RUN_ONCE);
    if (stopping)
        return UserError{"stopped during the profile rendezvous: " + stopReason};
    mark(timeline::Mark::ProfileAgreed);
    if (!(*verdict)->empty())
        logLine("interconnect profile entries withheld for " + std::to_string((*verdict)->size()) +
                " of the step's nodes");
    return std::move(**verdict);
}

void Server::checkRecordsAtFirstFence(const StepModex &modex) {
    host->setFirstFenceGate([this, expected = modex.expectedLocalRecords()](
                                std::function<void(bool)> pass) {
        auto read = [this](std::uint32_t rank, const std::string &key,
                           std::function<void(std::optional<std::string>)> done) {
            host->committedValue(rank, key, std::move(done));
        };
        checkCommittedRecords(expected, read, [this, pass](std::optional<RecordMismatch> mismatch) {
            if (mismatch) {
                logLine(mismatch->line);
                if (link)
                    link->abort(mismatch->rank, 1, mismatch->line);
            }
            pass(!mismatch);
        });
    });
}

void Server::watchNotices() {
    notices = uvnet::makeHandle(uv_poll_init, &loop, ready.get());
    if (!notices)
        return;
    notices->data = this;
    uv_poll_start(notices.get(), UV_READABLE, [](uv_poll_t *h, int status, int) {
        auto *server = static_cast<Server *>(h->data);
        if (status < 0)
            server->notices.reset();
        else
            server->readNotices();
    });
}

// Notices from slurmstepd, strictly parsed (task_notice.hpp); only ranks of
// this node with a real exit status are passed on.
void Server::readNotices() {
    char buf[256];
    ssize_t n = read(ready.get(), buf, sizeof buf);
    if (n <= 0) {
        if (n < 0 && errno == EINTR)
            return;
        notices.reset();
        return;
    }
    std::vector<ready::TaskExit> exits;
    std::vector<ready::TaskHold> holds;
    const bool more = noticeReader.feed({buf, static_cast<std::size_t>(n)}, exits, &holds);
    // How long the tasks waited for this server, for srun -v (once).
    if (!holds.empty() && link && !holdSeen) {
        holdSeen = true;
        link->mark(timeline::Mark::TasksForked, holds.front().forkedUsec);
        link->mark(timeline::Mark::TasksReleased, holds.front().releasedUsec);
    }
    for (const auto &e : exits)
        if (e.rank < config.plan.ranks.size() &&
            config.plan.ranks[e.rank].node == config.nodeIndex && e.status > 0 && e.status < 256 &&
            link) {
            link->rankExited(e.rank, e.status);
            host->rankFailed(e.rank, e.status);
        }
    if (!more)
        notices.reset();
}

void Server::watchSignals() {
    auto onSignal = [](uv_signal_t *h, int signum) {
        static_cast<Server *>(h->data)->stop("signal " + std::to_string(signum), 0);
    };
    sigterm = uvnet::makeHandle(uv_signal_init, &loop);
    sigint = uvnet::makeHandle(uv_signal_init, &loop);
    sigterm->data = sigint->data = this;
    uv_signal_start(sigterm.get(), onSignal, SIGTERM);
    uv_signal_start(sigint.get(), onSignal, SIGINT);
}

void Server::watchSlurmstepd() {
    if (config.watchPid <= 0)
        return;
    pidfd.reset(static_cast<int>(syscall(SYS_pidfd_open, config.watchPid, 0)));
    if (pidfd)
        parentWatch = uvnet::makeHandle(uv_poll_init, &loop, pidfd.get());
    if (!parentWatch) {
        // Already gone (or pidfds unsupported): do not serve an orphan step.
        stop("cannot watch slurmstepd (pid " + std::to_string(config.watchPid) + ")", 1);
        return;
    }
    parentWatch->data = this;
    uv_poll_start(parentWatch.get(), UV_READABLE, [](uv_poll_t *h, int, int) {
        static_cast<Server *>(h->data)->stop("slurmstepd is gone", 1);
    });
}

void Server::stop(const std::string &why, int code) {
    if (stopping)
        return;
    stopping = true;
    stopReason = why;
    exitCode = code;
    logLine("stopping: " + why);
    if (const std::string refused = admissionSummary(); !refused.empty())
        logLine(refused);
    if (link)
        link->leave();
    sigterm.reset();
    sigint.reset();
    parentWatch.reset();
    notices.reset();
    if (inbox)
        inbox->close();
}

int Server::run() {
    uv_run(&loop, UV_RUN_DEFAULT);
    // Finalize PMIx before the loop goes: its threads may still post work.
    host->setCollective(nullptr);
    link.reset();
    host.reset();
    while (uv_loop_close(&loop) == UV_EBUSY)
        uv_run(&loop, UV_RUN_NOWAIT);
    return exitCode;
}

// The step's hardware: the node's cache when root made one that is still
// this machine's, else hwloc's discovery.
Expected<topology::StepTopology> loadTopology(const StepConfig &c) {
    if (!c.topologyCache.empty() && c.topologyXml.empty()) {
        auto xml = topology::readNodeTopologyCache(c.topologyCache);
        if (xml) {
            auto cached = topology::loadStepTopologyFromMachineXml(c.stepCores, *xml);
            if (cached) {
                logLine("topology from the node's cache " + c.topologyCache);
                return cached;
            }
            xml = cached.error();
        }
        logLine("not using the node's topology cache " + c.topologyCache + ": " +
                xml.error().message + "; discovering the machine");
    }
    return topology::loadStepTopology(c.stepCores, c.topologyXml);
}

// The server from its arguments to its exit status.
int serve(int argc, char **argv) {
    const std::int64_t running = timeline::nowUsec();
    umask(077);
    auto parsed = parseStepConfig(argc, argv);
    if (!parsed) {
        // The ready fd may not be known; the plugin sees the exit status.
        logError("bad invocation: " + parsed.error().message);
        return 2;
    }
    // The server's private directory (made by the plugin) goes when main
    // returns, after PMIx is finalized (Server below), whatever the way out.
    os::OwnedDirectory directory;
    Server s(std::move(parsed.value()));
    StepConfig &c = s.config;
    if (c.launchedAtUsec)
        s.marks.record(timeline::Mark::Launched, 0, c.launchedAtUsec);
    s.marks.record(timeline::Mark::Running, 0, running);
    setLogPrefix("stepmap-stepd[stepmap." + c.stepTag + " " + c.plan.nodes[c.nodeIndex].name + "]");
    setLogLevel(c.logLevel);
    fcntl(s.ready.get(), F_SETFD, FD_CLOEXEC);

    if (getuid() == 0 || geteuid() == 0) {
        reportFailure(s.ready, "refusing to run as root: the PMIx server runs as the job's user");
        return 1;
    }
    // The plugin made the directory with an unpredictable name; it must be
    // ours and private, or another user could read the clients' files.
    if (auto dir = os::openPrivateDirectory(c.tmpdir, getuid()); !dir) {
        reportFailure(s.ready, dir.error().message);
        return 1;
    }
    directory = os::OwnedDirectory(
        c.tmpdir, [](const std::string &path) { logLine("could not remove all of " + path); });

    logWhereRunning("starting");
    auto step = loadTopology(c);
    if (!step) {
        reportFailure(s.ready, step.error().message);
        return 1;
    }
    s.marks.record(timeline::Mark::TopologyLoaded);
    logLine("step CPUs here: " + topology::bitmapListString(step->cpuset.get()));
    if (auto bindings = resolveBindings(c, *step); !bindings) {
        reportFailure(s.ready, bindings.error().message);
        return 1;
    }

    s.prepare(*step);
    // With a profile, every node must know which entries are served before
    // it registers anything: join the rendezvous first.
    const StepModex modex(c);
    const bool profileServed = c.profile || !c.profileProblem.empty();
    bool nodeServed = false;
    if (profileServed) {
        s.joinHub();
        s.watchSignals();
        s.watchSlurmstepd();
        auto verdict = s.awaitProfileVerdict(modex, *step);
        if (!verdict) {
            reportFailure(s.ready, verdict.error().message);
            return s.run();
        }
        nodeServed = std::find(verdict->begin(), verdict->end(), c.nodeIndex) == verdict->end();
        s.host->serveProfile(modex.served(*verdict));
        if (nodeServed && c.modex == modex::ModexMode::Profile)
            s.checkRecordsAtFirstFence(modex);
    }
    auto envs = s.startPmix();
    if (envs)
        for (auto &[rank, vars] : envs.value())
            for (auto &var : modex.clientEnvironment(rank, nodeServed))
                vars.push_back(std::move(var));
    if (!envs) {
        reportFailure(s.ready, envs.error().message);
        s.host.reset();
        return 1;
    }
    s.mark(timeline::Mark::PmixRegistered);
    if (!ready::writeReport(s.ready.get(), ready::encodeReadyReport(envs.value()))) {
        logError("the plugin did not take the client environment; leaving");
        s.host.reset();
        return 1;
    }
    s.mark(timeline::Mark::Ready);
    if (!profileServed) {
        s.joinHub();
        s.watchSignals();
        s.watchSlurmstepd();
    }
    s.watchNotices();
    const int status = s.run();
    logWhereRunning("ran");
    return status;
}

} // namespace

// The server's firewall. Errors a user can cause are values; what throws is
// a resource failure (no memory for hwloc, the kernel out of random bytes,
// HMAC failing) that nothing inside could have caught sooner.
int main(int argc, char **argv) {
    // What a site checks of an install: which PMIx the server hosts and
    // whether it serves groups (pmix_group.cpp).
    if (argc == 2 && std::strcmp(argv[1], "--version") == 0) {
        std::printf("stepmap-stepd %s, PMIx %s; PMIx groups (MPI-4 sessions): %s\n",
                    STEPMAP_VERSION, PMIx_Get_version(),
                    stepmap::server::kServesGroups ? "served" : "not served (needs PMIx 5)");
        return 0;
    }
    // A peer that went away (another node's server, srun, a PMIx client)
    // must fail the write to it with EPIPE, not kill the server: libuv
    // writes with write(2), which raises SIGPIPE.
    std::signal(SIGPIPE, SIG_IGN);
    try {
        // Root, once per slurmd start (the plugin's slurmd init): the
        // node's topology for every step's server (topology/node_cache.hpp).
        if (argc == 3 && std::strcmp(argv[1], "--write-topology-cache") == 0) {
            auto written = stepmap::topology::writeNodeTopologyCache(argv[2]);
            if (!written) {
                logError(written.error().message);
                return 1;
            }
            return 0;
        }
        return serve(argc, argv);
    } catch (const std::exception &e) {
        logError(std::string("stopping: ") + e.what());
    } catch (...) {
        logError("stopping: an unknown exception");
    }
    return 1;
}
