// What serving the interconnect profile costs a node server and its
// clients, as the step grows: the PMIx host (stepd_server/pmix_host.hpp)
// of node 0 of an N-node step (4 ranks here, 1 on every other node), with
// no profile, with an entry for every node (2 Ethernet interfaces, one
// RDMA device of one port each) as stepmap.* keys only, and with
// PMIX_FABRIC_DEVICES too; then one real PMIx client of this node joins and
// reads the last node's stepmap.net.interfaces. Each case runs in a fresh
// process (PMIx initialises once per process); the three alternate. Printed
// per case, the median of --reps runs: seconds for start() (PMIx init and
// registration), seconds for the client (PMIx_Init, one Get, finalize),
// the server's and the client's peak resident memory.
//
//   served_profile_bench --client build/tests/unit/server/pmix_query_client
//                        --topology tests/fixtures/topologies/24em64t-2n6c2t-pci.xml
//                        [--nodes 1,64,1024,16384] [--reps 3]

#include "loop_inbox.hpp"
#include "pmix_host.hpp"
#include "profiled_node.hpp"
#include "step_config.hpp"
#include "step_topology.hpp"

#include <fcntl.h>
#include <spawn.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <sstream>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

extern char **environ;

using namespace stepmap;
using namespace stepmap::server;

namespace {

constexpr int kLocalRanks = 4;

struct Options {
    std::string client, topology;
    std::vector<std::uint32_t> nodes = {1, 64, 1024, 16384};
    int reps = 3;
};

// One run's figures.
struct Figures {
    double startSec = 0, clientSec = 0;
    double serverMiB = 0, clientMiB = 0;
};

double peakMiB() {
    std::ifstream status("/proc/self/status");
    for (std::string line; std::getline(status, line);)
        if (line.rfind("VmHWM:", 0) == 0)
            return std::stod(line.substr(6)) / 1024.0;
    return 0;
}

LaunchPlan stepPlan(std::uint32_t nodes) {
    LaunchPlan plan;
    for (std::uint32_t n = 0; n < nodes; ++n)
        plan.nodes.push_back({"node" + std::to_string(n), n == 0 ? kLocalRanks : 1, std::nullopt});
    const auto here = static_cast<std::uint32_t>(kLocalRanks);
    plan.ranks.resize(here + nodes - 1);
    for (std::uint32_t r = here; r < plan.ranks.size(); ++r)
        plan.ranks[r].node = r - here + 1;
    assignLocalRanks(plan);
    return plan;
}

topology::NodeProfile profiledNode(std::uint32_t n) {
    const std::string host = std::to_string(n % 250 + 1);
    std::vector<topology::NetworkInterface> interfaces;
    for (int i = 0; i < 2; ++i)
        interfaces.push_back(test::pciEthernet(i, {{"10." + std::to_string(i) + ".0." + host, 16},
                                                   {"fe80::5" + std::to_string(i), 64}}));
    return test::profiledNode("node" + std::to_string(n), 'a', interfaces, {test::edrDevice()});
}

// Rank 0's client: joins, reads the last node's interfaces (its answer in
// `out`); its peak memory.
double runClient(const Options &o, const std::vector<std::string> &env, std::uint32_t lastNode,
                 const std::string &out, double &seconds) {
    std::vector<std::string> vars(env);
    for (char **e = environ; *e; ++e)
        vars.emplace_back(*e);
    std::vector<char *> envp, argv;
    for (auto &v : vars)
        envp.push_back(v.data());
    envp.push_back(nullptr);
    std::string query = "node:node" + std::to_string(lastNode) + "/stepmap.net.interfaces";
    std::string path = o.client;
    argv = {path.data(), query.data(), nullptr};
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_addopen(&actions, 1, out.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
    const auto t0 = std::chrono::steady_clock::now();
    pid_t pid = -1;
    int rc = posix_spawn(&pid, path.c_str(), &actions, nullptr, argv.data(), envp.data());
    posix_spawn_file_actions_destroy(&actions);
    if (rc != 0)
        throw std::runtime_error("cannot start " + path);
    int status = 0;
    rusage usage{};
    wait4(pid, &status, 0, &usage);
    seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
        throw std::runtime_error("the client failed");
    return static_cast<double>(usage.ru_maxrss) / 1024.0;
}

enum class Served { None, StepmapKeys, WithDevices };
constexpr Served kCases[] = {Served::None, Served::StepmapKeys, Served::WithDevices};
constexpr const char *kCaseNames[] = {"none", "stepmap", "+devices"};

// One case, in this (fresh) process: "start client serverMiB clientMiB".
std::string runCase(const Options &o, std::uint32_t nodes, Served what) {
    const bool served = what != Served::None;
    char dir[] = "/tmp/stepmap-served-bench-XXXXXX";
    if (!mkdtemp(dir))
        throw std::runtime_error("mkdtemp failed");
    StepConfig config;
    config.tmpdir = dir;
    config.nspace = "stepmap.1.0";
    config.nodeIndex = 0;
    config.plan = stepPlan(nodes);
    config.clientAuth = "native";
    auto step = topology::loadStepTopology("0-1", o.topology);
    if (!step)
        throw std::runtime_error(step.error().message);
    uv_loop_t loop{};
    uv_loop_init(&loop);
    auto inbox = std::make_unique<LoopInbox>(&loop);
    auto host =
        std::make_unique<PmixHost>(config, *inbox, step->topology.get(), step->cpuset.get());
    if (served) {
        ServedProfile profile;
        for (std::uint32_t n = 0; n < nodes; ++n)
            profile.nodes.push_back(profiledNode(n));
        profile.fabricDevices = what == Served::WithDevices;
        host->serveProfile(std::move(profile));
    }
    std::thread loopThread([&loop] { uv_run(&loop, UV_RUN_DEFAULT); });
    Figures f;
    const auto t0 = std::chrono::steady_clock::now();
    auto started = host->start();
    f.startSec = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    if (!started)
        throw std::runtime_error(started.error().message);
    auto envs = host->clientEnvironments();
    if (!envs)
        throw std::runtime_error(envs.error().message);
    const std::string answer = std::string(dir) + "/client.out";
    f.clientMiB = runClient(o, envs.value().at(0), nodes - 1, answer, f.clientSec);
    std::ifstream answered(answer);
    const std::string text((std::istreambuf_iterator<char>(answered)),
                           std::istreambuf_iterator<char>());
    if (text.find(served ? "=eth0 ifindex=2 " : "=!NOT-FOUND") == std::string::npos)
        throw std::runtime_error("the client was told: " + text);
    f.serverMiB = peakMiB();
    host->stop();
    inbox->post([&inbox] { inbox->close(); });
    loopThread.join();
    std::filesystem::remove_all(dir);
    std::ostringstream out;
    out << f.startSec << " " << f.clientSec << " " << f.serverMiB << " " << f.clientMiB;
    return out.str();
}

// Runs one case in a child process; its figures.
Figures forkCase(const Options &o, std::uint32_t nodes, Served what) {
    int fds[2];
    if (pipe(fds) != 0)
        throw std::runtime_error("pipe failed");
    pid_t pid = fork();
    if (pid == 0) {
        close(fds[0]);
        // Quiet: the server's refusals of the unserved node's key.
        int null = open("/dev/null", O_WRONLY);
        dup2(null, 2);
        std::string line;
        try {
            line = runCase(o, nodes, what);
        } catch (const std::exception &e) {
            line = std::string("! ") + e.what();
        }
        (void)!write(fds[1], line.data(), line.size());
        _exit(0);
    }
    close(fds[1]);
    std::string text;
    char buf[512];
    for (ssize_t n; (n = read(fds[0], buf, sizeof buf)) > 0;)
        text.append(buf, static_cast<std::size_t>(n));
    close(fds[0]);
    waitpid(pid, nullptr, 0);
    if (text.empty() || text[0] == '!')
        throw std::runtime_error("case failed: " + text);
    Figures f;
    std::istringstream in(text);
    in >> f.startSec >> f.clientSec >> f.serverMiB >> f.clientMiB;
    return f;
}

double median(std::vector<double> v) {
    std::sort(v.begin(), v.end());
    return v[(v.size() - 1) / 2];
}

Options parse(int argc, char **argv) {
    Options o;
    for (int i = 1; i + 1 < argc; i += 2) {
        std::string a = argv[i], v = argv[i + 1];
        if (a == "--client")
            o.client = v;
        else if (a == "--topology")
            o.topology = v;
        else if (a == "--reps")
            o.reps = std::max(1, std::stoi(v));
        else if (a == "--nodes") {
            o.nodes.clear();
            std::istringstream list(v);
            for (std::string n; std::getline(list, n, ',');)
                o.nodes.push_back(static_cast<std::uint32_t>(std::max(1, std::stoi(n))));
        } else
            throw std::runtime_error("unknown option " + a);
    }
    if (o.client.empty() || o.topology.empty())
        throw std::runtime_error("usage: served_profile_bench --client PATH --topology XML "
                                 "[--nodes 1,64,...] [--reps 3]");
    return o;
}

} // namespace

int main(int argc, char **argv) {
    try {
        const Options o = parse(argc, argv);
        std::printf("node 0 of N nodes (%d ranks here, 1 on each other node); median of %d runs, "
                    "the profile cases alternating\n",
                    kLocalRanks, o.reps);
        std::printf("%7s %9s %9s %10s %11s %11s\n", "nodes", "profile", "start s", "client s",
                    "server MiB", "client MiB");
        for (std::uint32_t nodes : o.nodes) {
            std::vector<Figures> runs[std::size(kCases)];
            for (int r = 0; r < o.reps; ++r)
                for (std::size_t c = 0; c < std::size(kCases); ++c)
                    runs[c].push_back(forkCase(o, nodes, kCases[c]));
            for (std::size_t c = 0; c < std::size(kCases); ++c) {
                std::vector<double> start, client, server, clientMem;
                for (const auto &f : runs[c]) {
                    start.push_back(f.startSec);
                    client.push_back(f.clientSec);
                    server.push_back(f.serverMiB);
                    clientMem.push_back(f.clientMiB);
                }
                std::printf("%7u %9s %9.3f %10.3f %11.1f %11.1f\n", nodes, kCaseNames[c],
                            median(start), median(client), median(server), median(clientMem));
            }
        }
        return 0;
    } catch (const std::exception &e) {
        std::fprintf(stderr, "served_profile_bench: %s\n", e.what());
        return 1;
    }
}
