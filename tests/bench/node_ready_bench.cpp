// What one node server (stepmap-stepd) costs from the plan text to "ready",
// as the plan grows: 64-core nodes, map-by core, bind-to core (each local
// rank gets a cpuset), 1 to 16,384 nodes (64 to 1,048,576 ranks); the server
// serving node 0, then a middle node. Each case runs the real server in a
// fresh process (so peaks do not mix) the way the plugin starts it: the plan
// in STEPMAP_PLAN, a ready socket, a private directory, a hub to join (this
// program listens and only accepts). Printed per case, the median of
// --reps runs: seconds to the ready report, seconds until it connected to
// the hub, its peak resident memory (VmHWM, read once it has connected, the
// largest of the runs), and time and memory as ratios to the first case.
//
//   node_ready_bench --server build/stepd_server/stepmap-stepd [--nodes 1,16,...]
//                    [--reps 3] [--user nobody] [--timeout 300]
// As root the server runs as --user (it refuses root).

#include "child_process.hpp"
#include "node_topology.hpp"
#include "planner/planner.hpp"
#include "protocol/ready/ready_socket.hpp"
#include "request/map_policy.hpp"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <pwd.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

using namespace stepmap;

namespace {

constexpr int kCores = 64;
// Two packages of 32 cores, two hardware threads each.
constexpr const char *kNodeShape = "pack:2 core:32 pu:2";

struct Options {
    std::string server;
    std::vector<int> nodes = {1, 16, 256, 2048, 16384};
    std::string user = "nobody";
    int reps = 3;
    int timeoutSec = 300;
};

struct Outcome {
    double readySec = 0, linkedSec = 0;
    long hwmKiB = 0;
};

[[noreturn]] void fail(const std::string &why) {
    std::fprintf(stderr, "node_ready_bench: %s\n", why.c_str());
    std::exit(1);
}

Options parseOptions(int argc, char **argv) {
    Options o;
    if (const char *s = std::getenv("STEPMAP_SERVER"))
        o.server = s;
    for (int i = 1; i + 1 < argc; i += 2) {
        std::string key = argv[i], value = argv[i + 1];
        if (key == "--server") {
            o.server = value;
        } else if (key == "--user") {
            o.user = value;
        } else if (key == "--reps") {
            o.reps = std::max(1, std::stoi(value));
        } else if (key == "--timeout") {
            o.timeoutSec = std::stoi(value);
        } else if (key == "--nodes") {
            o.nodes.clear();
            std::stringstream list(value);
            for (std::string n; std::getline(list, n, ',');)
                o.nodes.push_back(std::stoi(n));
        } else {
            fail("unknown option " + key);
        }
    }
    if (argc % 2 == 0)
        fail("options come in pairs: --server PATH [--nodes N,N...] [--reps R] [--user U] "
             "[--timeout S]");
    if (o.server.empty())
        fail("give --server PATH (or STEPMAP_SERVER)");
    return o;
}

// The plan srun would make: `nodes` nodes of the model, every core a rank,
// bound to it.
std::string planText(int nodes, const std::shared_ptr<const NodeModel> &model) {
    Allocation allocation;
    for (int i = 0; i < nodes; ++i)
        allocation.nodes.push_back(AllocatedNode{"n" + std::to_string(i), kCores, model});
    PlanRequest request{.np = nodes * kCores, .map = parseMapBy("core").value()};
    request.bind = parseBindTo("core").value();
    auto plan = makePlan(allocation, request);
    if (!plan)
        fail("planning failed: " + plan.error().message);
    return encodePlan(plan.value());
}

// A loopback listener standing in for srun's hub.
int listenLoopback(int &port) {
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof addr;
    if (fd < 0 || bind(fd, reinterpret_cast<sockaddr *>(&addr), len) != 0 || listen(fd, 4) != 0 ||
        getsockname(fd, reinterpret_cast<sockaddr *>(&addr), &len) != 0)
        fail(std::string("cannot listen on loopback: ") + std::strerror(errno));
    port = ntohs(addr.sin_port);
    return fd;
}

long peakKiB(pid_t pid) {
    std::ifstream status("/proc/" + std::to_string(pid) + "/status");
    for (std::string line; std::getline(status, line);)
        if (line.rfind("VmHWM:", 0) == 0)
            return std::stol(line.substr(6));
    return -1;
}

// The user the server runs as: ourselves, or `name` when we are root.
std::pair<uid_t, gid_t> serverUser(const std::string &name) {
    if (getuid() != 0)
        return {getuid(), getgid()};
    const passwd *pw = getpwnam(name.c_str());
    if (!pw)
        fail("no user " + name + " to run the server as (it refuses root)");
    return {pw->pw_uid, pw->pw_gid};
}

struct Case {
    std::string plan;
    int nodeIndex = 0;
    std::string topologyXml;
};

// The server as the plugin starts it: as its user, the ready socket on fd 3.
pid_t spawnServer(const Options &o, const Case &c, const std::string &dir, int readyFd, int hubPort,
                  int logFd) {
    constexpr int kReadyFd = 3;
    bench::ChildSpec spec{o.server,
                          {"--step", "1.0", "--node-index", std::to_string(c.nodeIndex), "--tmpdir",
                           dir, "--hub", "127.0.0.1:" + std::to_string(hubPort), "--ready-fd",
                           std::to_string(kReadyFd), "--step-cores", "0-63", "--topology-xml",
                           c.topologyXml, "--client-auth", "native"},
                          {"STEPMAP_PLAN=" + c.plan, "STEPMAP_SECRET=" + std::string(64, 'a')},
                          {{2, logFd}, {kReadyFd, readyFd}},
                          std::nullopt};
    if (getuid() == 0) {
        auto [uid, gid] = serverUser(o.user);
        spec.user = bench::RunAs{uid, gid};
    }
    auto pid = bench::spawnChild(spec);
    if (!pid)
        fail(pid.error().message);
    return *pid;
}

bool waitReadable(int fd, int timeoutSec) {
    pollfd p{fd, POLLIN, 0};
    return poll(&p, 1, timeoutSec * 1000) == 1;
}

// Runs one server until it has joined the hub, then stops it.
Outcome runCase(const Options &o, const Case &c) {
    auto [uid, gid] = serverUser(o.user);
    char dir[] = "/tmp/stepmap-bench-XXXXXX";
    if (!mkdtemp(dir) || chown(dir, uid, gid) != 0)
        fail("cannot make the server's directory");
    int pair[2];
    if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, pair) != 0)
        fail("socketpair failed");
    int hubPort = 0;
    int hub = listenLoopback(hubPort);
    // The server's log, shown only when it fails.
    FILE *log = std::tmpfile();
    if (!log)
        fail("cannot make a log file");
    fcntl(fileno(log), F_SETFD, FD_CLOEXEC);
    const auto start = std::chrono::steady_clock::now();
    pid_t pid = spawnServer(o, c, dir, pair[1], hubPort, fileno(log));
    close(pair[1]);
    auto since = [&] {
        return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    };
    Outcome out;
    auto report = ready::readReport(pair[0], o.timeoutSec, std::size_t{64} << 20);
    out.readySec = since();
    std::string problem;
    if (!report || report->rfind("READY", 0) != 0)
        problem = report ? "the server reported: " + report->substr(0, 300)
                         : "no ready report: " + report.error().message;
    int link = -1;
    if (problem.empty() && waitReadable(hub, o.timeoutSec))
        link = accept4(hub, nullptr, nullptr, SOCK_CLOEXEC);
    out.linkedSec = since();
    out.hwmKiB = peakKiB(pid);
    if (problem.empty() && link < 0)
        problem = "the server did not join the hub";
    kill(pid, problem.empty() ? SIGTERM : SIGKILL);
    waitpid(pid, nullptr, 0);
    for (int fd : {pair[0], hub, link})
        if (fd >= 0)
            close(fd);
    std::filesystem::remove_all(dir);
    if (!problem.empty()) {
        std::rewind(log);
        for (char line[512]; std::fgets(line, sizeof line, log);)
            std::fputs(line, stderr);
        fail(problem);
    }
    std::fclose(log);
    return out;
}

// The median times and the largest peak of `reps` runs of one case.
Outcome measure(const Options &o, const Case &c) {
    std::vector<Outcome> runs;
    for (int i = 0; i < o.reps; ++i)
        runs.push_back(runCase(o, c));
    auto median = [&](double Outcome::*field) {
        std::vector<double> v;
        for (const Outcome &r : runs)
            v.push_back(r.*field);
        std::sort(v.begin(), v.end());
        return v[v.size() / 2];
    };
    Outcome out{median(&Outcome::readySec), median(&Outcome::linkedSec), 0};
    for (const Outcome &r : runs)
        out.hwmKiB = std::max(out.hwmKiB, r.hwmKiB);
    return out;
}

std::string writeTopology() {
    auto topo = topology::NodeTopology::fromSynthetic(kNodeShape);
    auto xml = topo ? topo->exportXml() : Expected<std::string>(topo.error());
    if (!xml)
        fail("cannot build the node topology: " + xml.error().message);
    char path[] = "/tmp/stepmap-bench-topology-XXXXXX";
    int fd = mkstemp(path);
    if (fd < 0 || write(fd, xml->data(), xml->size()) != static_cast<ssize_t>(xml->size()) ||
        fchmod(fd, 0644) != 0)
        fail("cannot write the node topology");
    close(fd);
    return path;
}

} // namespace

int main(int argc, char **argv) {
    const Options o = parseOptions(argc, argv);
    signal(SIGPIPE, SIG_IGN);
    const std::string xml = writeTopology();
    auto model = topology::NodeTopology::fromXmlFile(xml)->nodeModel();
    if (!model)
        fail("no node model: " + model.error().message);
    std::printf("node: %s, %d ranks, bound to cores; server %s; median of %d runs\n", kNodeShape,
                kCores, o.server.c_str(), o.reps);
    std::printf("%9s %6s %6s %8s %9s %10s %8s %8s\n", "ranks", "nodes", "node", "ready s",
                "joined s", "VmHWM MiB", "x time", "x mem");
    std::optional<Outcome> small;
    for (int nodes : o.nodes) {
        Case c{planText(nodes, model.value()), 0, xml};
        for (int index : nodes > 1 ? std::vector<int>{0, nodes / 2} : std::vector<int>{0}) {
            c.nodeIndex = index;
            Outcome r = measure(o, c);
            if (!small)
                small = r;
            std::printf("%9d %6d %6d %8.3f %9.3f %10.1f %8.2f %8.2f\n", nodes * kCores, nodes,
                        index, r.readySec, r.linkedSec, r.hwmKiB / 1024.0,
                        r.linkedSec / small->linkedSec,
                        static_cast<double>(r.hwmKiB) / static_cast<double>(small->hwmKiB));
            std::fflush(stdout);
        }
    }
    std::printf("x time, x mem: against the first case (%d node%s)\n", o.nodes.front(),
                o.nodes.front() == 1 ? "" : "s");
    std::remove(xml.c_str());
    return 0;
}
