#include "scale_step.hpp"

#include "child_process.hpp"
#include "os/unique_fd.hpp"
#include "plan/launch_plan.hpp"
#include "protocol/hub/rendezvous_hub.hpp"
#include "protocol/ready/ready_report.hpp"
#include "protocol/ready/ready_socket.hpp"
#include "protocol/wire/secret.hpp"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <condition_variable>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>
#include <sstream>

namespace stepmap::bench {

namespace {

using Clock = std::chrono::steady_clock;
using Environments = std::map<std::uint32_t, ready::ClientEnvironment>;
constexpr int kReadyFd = 3; // the server's end of its ready socket

double msSince(Clock::time_point t) {
    return std::chrono::duration<double, std::milli>(Clock::now() - t).count();
}

// nodes x perNode ranks, by slot: ranks 0..perNode-1 on n1, and so on.
LaunchPlan benchPlan(std::uint32_t nodes, std::uint32_t perNode) {
    LaunchPlan plan;
    for (std::uint32_t n = 0; n < nodes; ++n)
        plan.nodes.push_back({"n" + std::to_string(n + 1), static_cast<int>(perNode), {}});
    plan.ranks.resize(static_cast<std::size_t>(nodes) * perNode);
    for (std::size_t r = 0; r < plan.ranks.size(); ++r)
        plan.ranks[r].node = static_cast<std::uint32_t>(r / perNode);
    assignLocalRanks(plan);
    return plan;
}

// The step's directories (one private directory per server, the logs),
// removed with everything in them when the step is done.
class StepTree {
public:
    StepTree(const std::string &workDir, std::optional<RunAs> user) : user_(user) {
        std::string pattern = workDir + "/stepmap-scale.XXXXXX";
        // Another user's servers pass through the root to their directories.
        if (mkdtemp(pattern.data()) && (!user || chmod(pattern.c_str(), 0711) == 0))
            root_ = pattern;
    }
    ~StepTree() {
        std::error_code ignored;
        if (!root_.empty() && !kept_)
            std::filesystem::remove_all(root_, ignored);
    }
    StepTree(const StepTree &) = delete;
    StepTree &operator=(const StepTree &) = delete;

    bool ok() const { return !root_.empty(); }
    // Leaves the logs for a look after a failure; where they are.
    std::string keep() const {
        kept_ = true;
        return root_;
    }
    // A fresh 0700 directory, as the plugin makes for each server.
    std::string serverDir(std::uint32_t node) const {
        std::string dir = root_ + "/server" + std::to_string(node);
        if (mkdir(dir.c_str(), 0700) != 0 ||
            (user_ && chown(dir.c_str(), user_->uid, user_->gid) != 0))
            return {};
        return dir;
    }
    std::string logPath(const std::string &name) const { return root_ + "/" + name + ".log"; }

private:
    std::optional<RunAs> user_;
    std::string root_;
    mutable bool kept_ = false;
};

// The last lines of a server's log, for an error message.
std::string tailOf(const std::string &path) {
    std::ifstream in(path);
    std::stringstream all;
    all << in.rdbuf();
    std::string text = all.str();
    return text.size() > 600 ? text.substr(text.size() - 600) : text;
}

// What the hub reports, seen from the harness's thread.
struct HubWatch {
    std::mutex mutex;
    std::condition_variable changed;
    std::uint32_t joined = 0;
    std::string failure;

    hub::RendezvousHub::Events events() {
        hub::RendezvousHub::Events e;
        e.onJoined = [this](std::uint32_t) {
            std::lock_guard lock(mutex);
            ++joined;
            changed.notify_all();
        };
        e.onFailure = [this](const std::string &why) {
            std::lock_guard lock(mutex);
            if (failure.empty())
                failure = why;
            changed.notify_all();
        };
        return e;
    }
    // Empty once `count` servers joined; else why not.
    std::string waitJoined(std::uint32_t count, Clock::time_point deadline) {
        std::unique_lock lock(mutex);
        changed.wait_until(lock, deadline, [&] { return joined >= count || !failure.empty(); });
        if (!failure.empty())
            return failure;
        return joined >= count ? std::string()
                               : std::to_string(count - joined) + " servers did not join in time";
    }
};

// The running servers; any still running when this goes are killed.
struct ServerSet {
    std::vector<pid_t> pids;
    std::vector<os::UniqueFd> ready; // the harness's end of each ready socket
    ~ServerSet() {
        for (auto pid : pids)
            kill(pid, SIGKILL);
        reapAll(pids, Clock::now());
    }
};

// Starts one stepmap-stepd per node, as the plugin does in slurmstepd.
Expected<void> spawnServers(const ScaleSetup &s, const StepTree &tree, const std::string &hub,
                            const std::vector<std::string> &env, ServerSet &out) {
    for (std::uint32_t n = 0; n < s.nodes; ++n) {
        const std::string dir = tree.serverDir(n);
        int pair[2];
        if (dir.empty() || socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, pair) != 0)
            return UserError{"cannot make server " + std::to_string(n) + "'s directory or socket"};
        os::UniqueFd mine(pair[0]), theirs(pair[1]);
        os::UniqueFd log(open(tree.logPath("server" + std::to_string(n)).c_str(),
                              O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600));
        std::vector<std::string> args = {"--step",         "1.0",
                                         "--node-index",   std::to_string(n),
                                         "--tmpdir",       dir,
                                         "--hub",          hub,
                                         "--ready-fd",     std::to_string(kReadyFd),
                                         "--step-cores",   s.stepCores,
                                         "--topology-xml", s.topologyXml,
                                         "--client-auth",  "native"};
        // As the plugin passes it; every relay on this machine.
        if (s.fanOut > 0 && s.relayPorts != "none")
            args.insert(args.end(),
                        {"--relay", std::to_string(s.fanOut) + ":" + s.relayPorts + "@127.0.0.1"});
        ChildSpec spec{s.stepd,
                       std::move(args),
                       env,
                       {{1, log.get()}, {2, log.get()}, {kReadyFd, theirs.get()}},
                       s.user};
        auto pid = spawnChild(spec);
        if (!pid)
            return pid.error();
        out.pids.push_back(*pid);
        out.ready.push_back(std::move(mine));
    }
    return {};
}

// Every server's ready report: the PMIx environment of each rank.
Expected<Environments> readReports(const ScaleSetup &s, const StepTree &tree,
                                   const LaunchPlan &plan, ServerSet &servers) {
    Environments all;
    for (std::uint32_t n = 0; n < s.nodes; ++n) {
        const auto local = plan.ranksOn(n);
        auto text = ready::readReport(servers.ready[n].get(), s.timeoutSec,
                                      ready::maxReadyReportBytes(local.size()));
        auto report =
            text ? ready::decodeReadyReport(*text, local) : Expected<Environments>(text.error());
        if (!report)
            return UserError{"server " + std::to_string(n) + ": " + report.error().message + "\n" +
                             tailOf(tree.logPath("server" + std::to_string(n)))};
        all.merge(report.value());
    }
    return all;
}

struct Span {
    long long begin = 0, end = 0;
};
struct ClientTimes {
    Span init, fence, modex, collect;
};

// A client's line (scale_client's output); nullopt if it is not one.
std::optional<ClientTimes> parseTimes(const std::string &line) {
    ClientTimes t;
    if (std::sscanf(line.c_str(),
                    "init=%lld,%lld fence=%lld,%lld modex=%lld,%lld collect=%lld,%lld",
                    &t.init.begin, &t.init.end, &t.fence.begin, &t.fence.end, &t.modex.begin,
                    &t.modex.end, &t.collect.begin, &t.collect.end) != 8)
        return std::nullopt;
    return t;
}

// A collective's time: from the last rank entering to the last leaving.
double collectiveMs(const std::vector<ClientTimes> &all, Span ClientTimes::*which) {
    long long lastIn = 0, lastOut = 0;
    for (const auto &t : all) {
        lastIn = std::max(lastIn, (t.*which).begin);
        lastOut = std::max(lastOut, (t.*which).end);
    }
    return static_cast<double>(lastOut - lastIn) / 1e6;
}

void fillClientFigures(const std::vector<ClientTimes> &all, StepFigures &f) {
    f.fence = collectiveMs(all, &ClientTimes::fence);
    f.collect = collectiveMs(all, &ClientTimes::collect);
    std::vector<double> modex;
    for (const auto &t : all)
        modex.push_back(static_cast<double>(t.modex.end - t.modex.begin) / 1e6);
    std::sort(modex.begin(), modex.end());
    f.modexMedian = modex[modex.size() / 2];
    f.modexMax = modex.back();
}

// One scale_client per rank, run to the end; their times fill f.
Expected<void> runClients(const ScaleSetup &s, const StepTree &tree, const Environments &envs,
                          StepFigures &f) {
    os::UniqueFd log(
        open(tree.logPath("clients").c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600));
    std::vector<pid_t> pids;
    std::vector<os::UniqueFd> outs;
    Expected<void> result;
    for (const auto &[rank, vars] : envs) {
        int pipeFds[2];
        if (pipe2(pipeFds, O_CLOEXEC) != 0) {
            result = UserError{"cannot make a pipe for rank " + std::to_string(rank)};
            break;
        }
        os::UniqueFd readEnd(pipeFds[0]), writeEnd(pipeFds[1]);
        ChildSpec spec{s.client,
                       {std::to_string(s.keyBytes), std::to_string(s.ranksPerNode)},
                       {},
                       {{1, writeEnd.get()}, {2, log.get()}},
                       s.user};
        for (const auto &[key, value] : vars)
            spec.env.push_back(key + "=" + value);
        auto pid = spawnChild(spec);
        if (!pid) {
            result = pid.error();
            break;
        }
        pids.push_back(*pid);
        outs.push_back(std::move(readEnd));
    }
    std::vector<int> fds;
    for (auto &fd : outs)
        fds.push_back(fd.get());
    std::vector<std::string> texts;
    const auto deadline = Clock::now() + std::chrono::seconds(s.timeoutSec);
    const bool complete = result && readAll(fds, texts, deadline);
    reapAll(pids, complete ? deadline : Clock::now());
    if (!result)
        return result;
    if (!complete)
        return UserError{"the clients did not finish within " + std::to_string(s.timeoutSec) +
                         " s:\n" + tailOf(tree.logPath("clients"))};
    std::vector<ClientTimes> all;
    for (std::size_t i = 0; i < texts.size(); ++i) {
        auto t = parseTimes(texts[i]);
        if (!t)
            return UserError{"client " + std::to_string(i) + ": '" + texts[i] + "'\n" +
                             tailOf(tree.logPath("clients"))};
        all.push_back(*t);
    }
    fillClientFigures(all, f);
    return {};
}

// A loopback port nobody listens on now (the kernel's pick, let go).
int freeLoopbackPort() {
    os::UniqueFd fd(socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof a;
    if (!fd || bind(fd.get(), reinterpret_cast<sockaddr *>(&a), len) != 0 ||
        getsockname(fd.get(), reinterpret_cast<sockaddr *>(&a), &len) != 0)
        return -1;
    return ntohs(a.sin_port);
}

// The hub's view of the plan: the node of each rank.
std::vector<std::uint32_t> nodeOfRanks(const LaunchPlan &plan) {
    std::vector<std::uint32_t> out(plan.ranks.size());
    std::transform(plan.ranks.begin(), plan.ranks.end(), out.begin(),
                   [](const RankPlacement &r) { return r.node; });
    return out;
}

// The step in tree's directories.
Expected<StepFigures> runStepIn(const ScaleSetup &s, const StepTree &tree) {
    const LaunchPlan plan = benchPlan(s.nodes, s.ranksPerNode);
    const std::string secretHex = wire::generateSecretHex();
    HubWatch watch;
    hub::RendezvousHub::Settings settings;
    settings.host = "127.0.0.1";
    settings.connectDeadlineSec = s.timeoutSec;
    settings.fenceFanOut = s.fanOut;
    // Hundreds of servers starting at once on a few cores may take seconds
    // between connecting and saying hello; on a cluster each has its own.
    settings.handshakeDeadlineMs = s.timeoutSec * 1000;
    const auto startHub = [&] {
        return hub::RendezvousHub::start(nodeOfRanks(plan), s.nodes,
                                         *wire::decodeSecretHex(secretHex), watch.events(),
                                         settings);
    };
    std::vector<std::string> env = {"STEPMAP_PLAN=" + encodePlan(plan),
                                    "STEPMAP_SECRET=" + secretHex};
    std::unique_ptr<hub::RendezvousHub> hub;
    std::string hubAddress;
    if (s.joinTogether) {
        // Servers try srun's port until it answers (every 250 ms, 30 s at
        // most); children wait for their parent's welcome as long.
        const int port = freeLoopbackPort();
        if (port <= 0)
            return UserError{"no free port for srun's hub"};
        settings.portMin = settings.portMax = static_cast<std::uint16_t>(port);
        hubAddress = "127.0.0.1:" + std::to_string(port);
        env.push_back("STEPMAP_BENCH_RELAY_WAIT_MS=" + std::to_string(s.timeoutSec * 1000));
    } else {
        auto listening = startHub();
        if (!listening)
            return listening.error();
        hub = std::move(listening).value();
        hubAddress = hub->address();
    }

    StepFigures f;
    ServerSet servers;
    auto started = Clock::now();
    auto spawned = spawnServers(s, tree, hubAddress, env, servers);
    if (!spawned)
        return spawned.error();
    auto envs = readReports(s, tree, plan, servers);
    if (!envs)
        return envs.error();
    if (s.joinTogether) {
        auto listening = startHub();
        if (!listening)
            return listening.error();
        hub = std::move(listening).value();
        started = Clock::now();
    }
    const auto deadline = Clock::now() + std::chrono::seconds(s.timeoutSec);
    if (auto why = watch.waitJoined(s.nodes, deadline); !why.empty())
        return UserError{why};
    f.start = msSince(started);
    f.hubStartCpu = hub->cpuMs();
    f.hubJoins = static_cast<double>(hub->directJoins() + hub->relayedJoinFrames());

    const double hubCpuBefore = hub->cpuMs();
    const auto routedBefore = hub->modexRouted();
    if (auto ran = runClients(s, tree, *envs, f); !ran)
        return ran.error();
    f.hubRunCpu = hub->cpuMs() - hubCpuBefore;
    f.hubRouted = static_cast<double>(hub->modexRouted() - routedBefore);

    const auto stopping = Clock::now();
    hub->shutdown(0, "bench step done");
    const bool gone = reapAll(servers.pids, Clock::now() + std::chrono::seconds(s.timeoutSec));
    f.stop = msSince(stopping);
    servers.pids.clear();
    if (!gone)
        return UserError{"servers still running " + std::to_string(s.timeoutSec) +
                         " s after the hub's shutdown"};
    std::lock_guard lock(watch.mutex);
    if (!watch.failure.empty())
        return UserError{"the hub reported: " + watch.failure};
    return f;
}

} // namespace

Expected<StepFigures> runStep(const ScaleSetup &s) {
    StepTree tree(s.workDir, s.user);
    if (!tree.ok())
        return UserError{"cannot make a directory under " + s.workDir};
    auto figures = runStepIn(s, tree);
    if (!figures)
        return UserError{figures.error().message + " (logs kept in " + tree.keep() + ")"};
    return figures;
}

} // namespace stepmap::bench
