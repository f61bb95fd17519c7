// The PMIx host with the real OpenPMIx server library, read back by real
// PMIx clients (pmix_query_client, one process per local rank): what the
// step's namespace says about the job, this node and each rank (per-rank
// data only for this node's ranks and the last), the environment each
// local rank gets, and the upcalls (fence, direct modex,
// abort) reaching the node servers' collective on the loop thread.
//
// The step: 3 nodes n1 n2 n3, this server on n2; 7 ranks in 2 applications,
//   rank  0  1  2  3  4  5  6
//   node  n1 n2 n2 n3 n2 n1 n3
//   app   0  0  0  0  1  1  1
// ranks 1 and 2 bound to two CPUs each, rank 4 unbound. One server serves
// the whole suite (PMIx is initialised once per process): the three local
// clients run together once, then rank 1 joins again after the collective
// is gone, as when the server stops.

#include "pmix_host.hpp"
#include "protocol/hub/name_service.hpp"

#include "captured_stderr.hpp"
#include "profiled_node.hpp"
#include "served_profile.hpp"
#include "step_config.hpp"
#include "step_topology.hpp"

#include <gtest/gtest.h>

#include <csignal>
#include <pmix.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <future>
#include <mutex>
#include <optional>
#include <thread>

extern char **environ;

using namespace stepmap;
using namespace stepmap::server;

namespace {

const std::vector<std::uint32_t> kNodeOf = {0, 1, 1, 2, 1, 0, 2};
const std::vector<std::uint32_t> kAppOf = {0, 0, 0, 0, 1, 1, 1};
const std::vector<std::uint32_t> kLocalRanks = {1, 2, 4};
constexpr const char *kNamespace = "stepmap.5.0";

std::string requiredEnv(const char *name) {
    const char *v = std::getenv(name);
    if (!v)
        throw std::runtime_error(std::string(name) + " is not set (run through meson test)");
    return v;
}

// The node servers' side, recorded; called on the loop thread only.
class RecordingCollective : public StepCollective {
public:
    struct Fence {
        std::vector<std::uint32_t> nodes;
        bool collect;
        std::size_t bytes;
    };
    void fence(std::vector<std::uint32_t> nodes, bool collect, std::string data,
               DataReply done) override {
        {
            std::lock_guard lock(mutex_);
            fences_.push_back({nodes, collect, data.size()});
        }
        // As if this node were the only one to contribute.
        done(PMIX_SUCCESS, std::move(data));
    }
    void barrier(const std::string &label, std::vector<std::uint32_t> nodes,
                 DataReply done) override {
        {
            std::lock_guard lock(mutex_);
            barriers_.push_back({label, nodes});
        }
        done(PMIX_SUCCESS, {});
    }
    std::vector<std::pair<std::string, std::vector<std::uint32_t>>> barriers() {
        std::lock_guard lock(mutex_);
        return barriers_;
    }
    void directModex(std::uint32_t rank, DataReply done) override {
        {
            std::lock_guard lock(mutex_);
            modexRanks_.push_back(rank);
        }
        done(PMIX_ERR_NOT_FOUND, {});
    }
    // A spawn answered as srun would once the children's servers joined;
    // a job-wide barrier as if every other node had entered it, naming
    // another.step (with the plan of spawnPlan) among its steps.
    std::string spawnPlan;
    void spawn(wire::SpawnRequestMsg request, SpawnDone done) override {
        {
            std::lock_guard lock(mutex_);
            spawns_.push_back(request);
        }
        done(wire::SpawnReplyMsg{request.id, true, "spawned.step", 1, spawnPlan, ""});
    }
    std::vector<wire::SpawnRequestMsg> spawns() {
        std::lock_guard lock(mutex_);
        return spawns_;
    }
    void jobBarrier(wire::JobBarrierMsg barrier, JobBarrierDone done) override {
        {
            std::lock_guard lock(mutex_);
            jobBarriers_.push_back(barrier);
        }
        done(wire::JobBarrierDoneMsg{
            barrier.label, true, barrier.data, "", {{"another.step", 2, spawnPlan}}});
    }
    std::vector<wire::JobBarrierMsg> jobBarriers() {
        std::lock_guard lock(mutex_);
        return jobBarriers_;
    }
    void otherStepModex(std::uint32_t rank, DataReply done) override {
        {
            std::lock_guard lock(mutex_);
            modexRanks_.push_back(rank);
        }
        done(PMIX_ERR_NOT_FOUND, {});
    }
    void notice(std::uint32_t rank, std::string text) override {
        std::lock_guard lock(mutex_);
        notices_.push_back(std::to_string(rank) + " " + text);
    }
    std::vector<std::string> notices() {
        std::lock_guard lock(mutex_);
        return notices_;
    }
    void abort(std::uint32_t rank, int status, std::string message) override {
        std::lock_guard lock(mutex_);
        aborts_.push_back(std::to_string(rank) + " " + std::to_string(status) + " " + message);
    }
    std::vector<Fence> fences() {
        std::lock_guard lock(mutex_);
        return fences_;
    }
    std::vector<std::uint32_t> modexRanks() {
        std::lock_guard lock(mutex_);
        return modexRanks_;
    }
    std::vector<std::string> aborts() {
        std::lock_guard lock(mutex_);
        return aborts_;
    }
    // The hub's name service, as if this node were the step's only one.
    void names(wire::NameRequestMsg request, NameDone done) override {
        wire::NameReplyMsg reply;
        reply.id = request.id;
        {
            std::lock_guard lock(mutex_);
            nameRequests_.push_back(request);
            if (request.op == wire::NameOp::Publish) {
                std::vector<hub::NameEntry> entries;
                for (std::size_t i = 0; i < request.keys.size(); ++i)
                    entries.push_back({request.keys[i], request.rank, 1,
                                       static_cast<hub::NameScope>(request.scope),
                                       request.firstRead, request.values[i]});
                reply.status = static_cast<std::uint8_t>(nameService_.publish(entries).status);
            } else if (request.op == wire::NameOp::Unpublish) {
                reply.status =
                    static_cast<std::uint8_t>(nameService_.unpublish(request.rank, request.keys));
            } else {
                auto answers = nameService_.lookup({.id = request.id,
                                                    .node = 1,
                                                    .rank = request.rank,
                                                    .keys = request.keys,
                                                    .nodeOnly = request.scope != 0});
                reply.status = static_cast<std::uint8_t>(answers.at(0).status);
                for (const auto &e : answers.at(0).entries)
                    reply.entries.push_back({e.key, e.rank, e.value});
            }
        }
        done(std::move(reply));
    }
    std::vector<wire::NameRequestMsg> nameRequests() {
        std::lock_guard lock(mutex_);
        return nameRequests_;
    }

private:
    hub::NameService nameService_;
    std::vector<std::string> notices_;
    std::vector<wire::SpawnRequestMsg> spawns_;
    std::vector<wire::JobBarrierMsg> jobBarriers_;
    std::vector<std::pair<std::string, std::vector<std::uint32_t>>> barriers_;
    std::vector<wire::NameRequestMsg> nameRequests_;
    std::mutex mutex_;
    std::vector<Fence> fences_;
    std::vector<std::uint32_t> modexRanks_;
    std::vector<std::string> aborts_;
};

// A client process and its output, "KEY=VALUE" lines.
struct Client {
    pid_t pid = -1;
    int out = -1;
    std::string text;
    std::map<std::string, std::string> lines() const {
        std::map<std::string, std::string> m;
        std::size_t at = 0, nl;
        while ((nl = text.find('\n', at)) != std::string::npos) {
            std::string line = text.substr(at, nl - at);
            auto eq = line.find('=');
            m[line.substr(0, eq)] = eq == std::string::npos ? "" : line.substr(eq + 1);
            at = nl + 1;
        }
        return m;
    }
};

Client spawnClient(const std::vector<std::string> &env, const std::vector<std::string> &args) {
    // The rank's variables first: getenv takes the first of a name.
    std::vector<std::string> ordered(env.begin(), env.end());
    for (char **e = environ; *e; ++e)
        ordered.emplace_back(*e);
    std::vector<char *> envp, argv;
    for (auto &e : ordered)
        envp.push_back(e.data());
    envp.push_back(nullptr);
    std::string path = requiredEnv("STEPMAP_PMIX_QUERY_CLIENT");
    std::vector<std::string> argText = {path};
    argText.insert(argText.end(), args.begin(), args.end());
    for (auto &a : argText)
        argv.push_back(a.data());
    argv.push_back(nullptr);
    int pipeFds[2];
    if (pipe2(pipeFds, O_CLOEXEC) != 0)
        throw std::runtime_error("pipe failed");
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_adddup2(&actions, pipeFds[1], 1);
    Client c;
    int rc = posix_spawn(&c.pid, path.c_str(), &actions, nullptr, argv.data(), envp.data());
    posix_spawn_file_actions_destroy(&actions);
    close(pipeFds[1]);
    if (rc != 0) {
        close(pipeFds[0]);
        throw std::runtime_error("cannot start " + path);
    }
    c.out = pipeFds[0];
    return c;
}

// Reads every client's output until all have exited or the deadline
// passed (then they are killed: a hung client fails the suite, not hangs it).
bool collect(std::vector<Client> &clients, std::chrono::seconds limit) {
    auto deadline = std::chrono::steady_clock::now() + limit;
    std::size_t open = clients.size();
    while (open > 0) {
        auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
            deadline - std::chrono::steady_clock::now());
        if (left.count() <= 0)
            break;
        std::vector<pollfd> fds;
        for (auto &c : clients)
            if (c.out >= 0)
                fds.push_back({c.out, POLLIN, 0});
        if (poll(fds.data(), fds.size(), static_cast<int>(left.count())) <= 0)
            continue;
        for (auto &c : clients) {
            if (c.out < 0)
                continue;
            for (auto &p : fds)
                if (p.fd == c.out && p.revents) {
                    char buf[4096];
                    ssize_t n = read(c.out, buf, sizeof buf);
                    if (n > 0) {
                        c.text.append(buf, static_cast<std::size_t>(n));
                    } else {
                        close(c.out);
                        c.out = -1;
                        --open;
                    }
                }
        }
    }
    bool allDone = open == 0;
    for (auto &c : clients) {
        if (c.out >= 0) {
            kill(c.pid, SIGKILL);
            close(c.out);
        }
        waitpid(c.pid, nullptr, 0);
    }
    return allDone;
}

// A connection to the PMIx server's port that never says a word, made by
// a process of its own (as another user, when given): whether it got in,
// and whether and when the server closed it.
struct Intruder {
    pid_t pid = -1;
    int report = -1; // 'c' once connected, then 'x' when the server closed it
    bool connected = false;
    std::optional<std::chrono::steady_clock::time_point> closedAt;
};

// The port of PMIX_SERVER_URI* ("...;tcp4://127.0.0.1:PORT") in env.
int serverPort(const std::vector<std::string> &env) {
    for (const auto &var : env)
        if (var.rfind("PMIX_SERVER_URI", 0) == 0) {
            auto colon = var.rfind(':');
            return std::atoi(var.c_str() + colon + 1);
        }
    throw std::runtime_error("no PMIX_SERVER_URI in a rank's environment");
}

// What the server logged, less one line a PMIx 5 server library prints
// (PMIX_ERROR_LOG) for each remote-data request of a PMIx 4.2 client, such
// as this test's: it reads past the request for a field 4.2 does not send,
// then serves the request as asked. Not the server's own words.
std::string withoutCrossVersionNoise(const std::string &text) {
    std::string kept;
    std::size_t at = 0;
    while (at < text.size()) {
        std::size_t end = text.find('\n', at);
        end = end == std::string::npos ? text.size() : end + 1;
        const std::string line = text.substr(at, end - at);
        if (line.find("PMIX ERROR: PMIX_ERR_UNPACK_READ_PAST_END_OF_BUFFER in file "
                      "bfrop_pmix41.c") == std::string::npos)
            kept += line;
        at = end;
    }
    return kept;
}

Intruder openIntruder(int port, std::optional<uid_t> as) {
    int fds[2];
    if (pipe2(fds, O_CLOEXEC) != 0)
        throw std::runtime_error("pipe failed");
    Intruder in;
    in.pid = fork();
    if (in.pid == 0) {
        // The server runs in this process: an intruder forked after it
        // accepted (and before it closed) another intruder's connection
        // would hold that socket open too, and the other one would never
        // see the server close it. Keep only the report pipe.
        for (int fd = 3; fd < 4096; ++fd)
            if (fd != fds[1])
                close(fd);
        if (as && (setresgid(*as, *as, *as) != 0 || setresuid(*as, *as, *as) != 0))
            _exit(2);
        int s = socket(AF_INET, SOCK_STREAM, 0);
        sockaddr_in addr{};
        addr.sin_family = AF_INET;
        addr.sin_port = htons(static_cast<std::uint16_t>(port));
        addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        if (connect(s, reinterpret_cast<sockaddr *>(&addr), sizeof addr) != 0)
            _exit(3);
        (void)!write(fds[1], "c", 1);
        char c;
        while (recv(s, &c, 1, 0) > 0) {
        }
        (void)!write(fds[1], "x", 1);
        pause();
        _exit(0);
    }
    close(fds[1]);
    in.report = fds[0];
    pollfd p{in.report, POLLIN, 0};
    char c = 0;
    in.connected = poll(&p, 1, 5000) == 1 && read(in.report, &c, 1) == 1 && c == 'c';
    return in;
}

// Notes whether the server has closed it by now, then ends it.
void endIntruder(Intruder &in) {
    pollfd p{in.report, POLLIN, 0};
    char c = 0;
    // A moment for the intruder to see a close that came as the clients
    // finished (PMIx 5's listener may take the stranger's connection from
    // its backlog late); a connection the server kept is still not closed.
    if (poll(&p, 1, 2000) == 1 && read(in.report, &c, 1) == 1 && c == 'x')
        in.closedAt = std::chrono::steady_clock::now();
    kill(in.pid, SIGKILL);
    waitpid(in.pid, nullptr, 0);
    close(in.report);
}

// The step of the file's comment. Its CPUs on n2 (fixture
// 24em64t-2n6c2t-pci, cores 0-1): core 0 = PUs 0,12 and core 1 = PUs 2,14
// (OS indices); rank 1 is bound to core 0, rank 2 to core 1.
LaunchPlan stepPlan() {
    LaunchPlan plan;
    plan.nodes = {{"n1", 2, std::nullopt}, {"n2", 3, std::nullopt}, {"n3", 2, std::nullopt}};
    plan.ranks.resize(kNodeOf.size());
    for (std::size_t r = 0; r < kNodeOf.size(); ++r) {
        plan.ranks[r].node = kNodeOf[r];
        plan.ranks[r].app = kAppOf[r];
    }
    plan.bindingRequest = BindingRequest::Cpus;
    plan.bindings = {{{0, 1}, {0, 12}}, {{2, 3}, {2, 14}}};
    plan.ranks[1].binding = 0;
    plan.ranks[2].binding = 1;
    assignLocalRanks(plan);
    return plan;
}

// The interconnect profile served (served_profile.hpp): an entry for n2
// (this node) and n3, none for n1; rank keys for rank 0 (n1) and rank 2
// (here).
topology::NodeProfile profiledNode(const std::string &name, const std::string &address) {
    return test::profiledNode(name, name.back(),
                              {test::pciEthernet(0, {{address, 24}, {"fe80::1", 64}})},
                              {test::edrDevice()});
}

// Open MPI 4.1's TCP record is binary; zero bytes must survive.
const std::string kRank0Record("\x0a\x00\x00\x05\x02\x00\x00\x00", 8);
const std::string kRank2Record("\x0a\x00\x00\x06\x00\x10", 6);

ServedProfile servedProfile() {
    ServedProfile served;
    served.nodes = {std::nullopt, profiledNode("n2", "10.0.0.6"), profiledNode("n3", "10.0.0.7")};
    served.rankData[0] = {{"btl.tcp.4.1", kRank0Record}};
    served.rankData[2] = {{"btl.tcp.4.1", kRank2Record}};
    served.rankData[99] = {{"btl.tcp.4.1", "outside the step"}};
    return served;
}

// Everything the suite shares: one server and what its clients were told.
struct Session {
    std::string setupError;
    std::string logged; // what the server logged while the clients ran
    StepConfig config;
    topology::StepTopology step;
    uv_loop_t loop{};
    std::unique_ptr<LoopInbox> inbox;
    std::unique_ptr<PmixHost> host;
    std::thread loopThread;
    RecordingCollective collective;
    std::map<std::uint32_t, std::vector<std::string>> environments;
    std::map<std::uint32_t, std::map<std::string, std::string>> answers;
    timeline::ExchangeCounters counted; // after those clients
    // A client reading the served profile, and what the collective and the
    // counters saw meanwhile.
    std::map<std::string, std::string> profileAnswers;
    // The name clients' answers, by rank, and what the server logged.
    std::map<std::uint32_t, std::map<std::string, std::string>> nameAnswers;
    std::string loggedNames;
    std::string loggedReadingProfile;
    std::size_t fencesBefore = 0, fencesAfter = 0, modexBefore = 0, modexAfter = 0;
    timeline::ExchangeCounters countedAfterProfile;
    // Rank 1 joining again once the collective is gone.
    std::string stoppingError;
    std::string loggedWhileStopping;
    std::map<std::string, std::string> answersWhileStopping;
    // While the clients ran: an idle connection of another user (when the
    // suite runs as root) and one of this user, made before they started.
    std::optional<Intruder> stranger;
    Intruder idleOwn;
    std::chrono::milliseconds clientsTook{0};
};

Session &shared() {
    static Session s;
    return s;
}

class PmixHostTest : public ::testing::Test {
protected:
    static void SetUpTestSuite() {
        // As the node server does (main.cpp): a peer that went away fails
        // a write with EPIPE.
        signal(SIGPIPE, SIG_IGN);
        try {
            startServer();
        } catch (const std::exception &e) {
            shared().setupError = e.what();
            return;
        }
        askWhileStopping();
    }
    static void TearDownTestSuite() {
        if (shared().host) {
            shared().host->stop();
            // Close the inbox from the loop thread; the loop then ends.
            shared().inbox->post([] { shared().inbox->close(); });
            shared().loopThread.join();
            shared().host.reset();
            shared().inbox.reset();
            EXPECT_EQ(uv_loop_close(&shared().loop), 0);
        }
        if (!shared().config.tmpdir.empty())
            std::filesystem::remove_all(shared().config.tmpdir);
    }
    // Last: no collective from here on.
    static void askWhileStopping() {
        try {
            runClientWhileStopping();
        } catch (const std::exception &e) {
            shared().stoppingError = e.what();
        }
    }
    void SetUp() override { ASSERT_EQ(shared().setupError, "") << "the PMIx server did not start"; }

    static void startServer() {
        char dir[] = "/tmp/stepmap-pmix-host-XXXXXX";
        if (!mkdtemp(dir))
            throw std::runtime_error("mkdtemp failed");
        shared().config.tmpdir = dir;
        auto step = topology::loadStepTopology("0-1", requiredEnv("STEPMAP_TOPOLOGIES") +
                                                          "/24em64t-2n6c2t-pci.xml");
        if (!step)
            throw std::runtime_error(step.error().message);
        shared().step = std::move(step.value());
        shared().config.nspace = kNamespace;
        shared().config.nodeIndex = 1;
        shared().config.plan = stepPlan();
        shared().config.clientAuth = "native"; // no munged needed
        uv_loop_init(&shared().loop);
        shared().inbox = std::make_unique<LoopInbox>(&shared().loop);
        shared().host =
            std::make_unique<PmixHost>(shared().config, *shared().inbox,
                                       shared().step.topology.get(), shared().step.cpuset.get());
        shared().host->setCollective(&shared().collective);
        shared().collective.spawnPlan = encodePlan(shared().config.plan);
        shared().host->serveProfile(servedProfile());
        shared().loopThread = std::thread([] { uv_run(&shared().loop, UV_RUN_DEFAULT); });
        if (auto started = shared().host->start(); !started)
            throw std::runtime_error(started.error().message);
        auto envs = shared().host->clientEnvironments();
        if (!envs)
            throw std::runtime_error(envs.error().message);
        shared().environments = envs.value();
        runClients();
        shared().counted = countersNow();
        runProfileClient();
        runNameClients();
    }

    // Ranks 1, 2 and 4 one after the other: publish, look up, unpublish,
    // connect (the hub's name service answers as RecordingCollective::names).
    static void runNameClients() {
        const std::map<std::uint32_t, std::vector<std::string>> steps = {
            {1,
             {"publish/svc/port-1", "publish-int/count/42", "publish/svc/again", "lookup/count",
              "unpublish/svc"}},
            {2,
             {"lookup/svc", "lookup/count", "publish/svc/port-2", "connect-with/3", "connect-other",
              "spawn/3"}},
            {4, {"lookup/svc"}},
        };
        test::CapturedStderr log;
        for (const auto &[rank, args] : steps) {
            std::vector<Client> clients = {spawnClient(shared().environments.at(rank), args)};
            if (!collect(clients, std::chrono::seconds(20)))
                throw std::runtime_error("a PMIx client did not finish in time");
            shared().nameAnswers[rank] = clients[0].lines();
        }
        shared().loggedNames = withoutCrossVersionNoise(log.text());
    }

    // The host's counters, read on the loop thread.
    static timeline::ExchangeCounters countersNow() {
        std::promise<timeline::ExchangeCounters> counters;
        shared().inbox->post(
            [&counters] { counters.set_value(shared().host->exchangeCounters()); });
        return counters.get_future().get();
    }

    // What the served profile's queries are answered: rank 1 asks about
    // every node and two ranks' keys.
    static std::vector<std::string> profileQueries() {
        std::vector<std::string> q;
        for (const char *node : {"n1", "n2", "n3"})
            for (const char *key : {kProfileDigestKey, kProfileTimeKey, kNetInterfacesKey,
                                    kRdmaDevicesKey, PMIX_FABRIC_DEVICES})
                q.push_back(std::string("node:") + node + "/" + key);
        q.push_back("0/btl.tcp.4.1");
        q.push_back("2/btl.tcp.4.1");
        return q;
    }

    static void runProfileClient() {
        shared().fencesBefore = shared().collective.fences().size();
        shared().modexBefore = shared().collective.modexRanks().size();
        std::vector<Client> clients = {spawnClient(shared().environments.at(1), profileQueries())};
        test::CapturedStderr log;
        bool finished = collect(clients, std::chrono::seconds(20));
        shared().loggedReadingProfile = withoutCrossVersionNoise(log.text());
        shared().profileAnswers = clients[0].lines();
        shared().fencesAfter = shared().collective.fences().size();
        shared().modexAfter = shared().collective.modexRanks().size();
        shared().countedAfterProfile = countersNow();
        if (!finished)
            throw std::runtime_error("a PMIx client did not finish in time");
    }

    // Every query, asked by each local client, then the upcalls.
    static std::vector<std::string> queries() {
        std::vector<std::string> q;
        for (const char *key :
             {PMIX_JOBID, PMIX_UNIV_SIZE, PMIX_JOB_SIZE, PMIX_MAX_PROCS, PMIX_JOB_NUM_APPS,
              PMIX_NUM_NODES, PMIX_NODE_LIST, PMIX_ANL_MAP, PMIX_TMPDIR, PMIX_NSDIR})
            q.push_back(std::string("*/") + key);
        for (const char *key : {PMIX_LOCAL_SIZE, PMIX_LOCAL_PEERS, PMIX_LOCALLDR, PMIX_NODEID})
            q.push_back(std::string("node/") + key);
        for (const char *key : {PMIX_APP_SIZE, PMIX_APPLDR})
            for (int app = 0; app < 2; ++app)
                q.push_back("app" + std::to_string(app) + "/" + key);
        for (std::size_t r = 0; r < kNodeOf.size(); ++r)
            for (const char *key :
                 {PMIX_HOSTNAME, PMIX_LOCAL_RANK, PMIX_NODE_RANK, PMIX_APPNUM, PMIX_NODEID})
                q.push_back(std::to_string(r) + "/" + key);
        for (std::uint32_t r : kLocalRanks)
            for (const char *key : {PMIX_CPUSET, PMIX_LOCALITY_STRING, PMIX_PROCDIR})
                q.push_back(std::to_string(r) + "/" + key);
        q.push_back("fence");
        for (std::uint32_t r : kLocalRanks)
            q.push_back(std::to_string(r) + "/stepmap.test");
        return q;
    }

    static void runClients() {
        test::CapturedStderr log;
        const int port = serverPort(shared().environments.at(kLocalRanks[0]));
        if (geteuid() == 0)
            shared().stranger = openIntruder(port, 65534);
        shared().idleOwn = openIntruder(port, std::nullopt);
        const auto started = std::chrono::steady_clock::now();
        std::vector<Client> clients;
        for (std::uint32_t r : kLocalRanks) {
            auto args = queries();
            if (r == 1)
                args.push_back("remote/3");
            if (r == 2) {
                args.push_back(std::string("node:n1/") + PMIX_LOCAL_SIZE);
                args.push_back("remote/99");
            }
            if (r == 4) {
                args.push_back("fence-with/0");
                args.push_back("abort");
            }
            clients.push_back(spawnClient(shared().environments.at(r), args));
        }
        bool finished = collect(clients, std::chrono::seconds(20));
        shared().clientsTook = std::chrono::duration_cast<std::chrono::milliseconds>(
            std::chrono::steady_clock::now() - started);
        if (shared().stranger)
            endIntruder(*shared().stranger);
        endIntruder(shared().idleOwn);
        shared().logged = withoutCrossVersionNoise(log.text());
        for (std::size_t i = 0; i < clients.size(); ++i)
            shared().answers[kLocalRanks[i]] = clients[i].lines();
        if (!finished)
            throw std::runtime_error("a PMIx client did not finish in time");
    }

    // A rank that asks for data once the node servers' collective is gone
    // (the server is stopping): it is refused, and the server says why.
    static void runClientWhileStopping() {
        std::promise<void> detached;
        shared().inbox->post([&detached] {
            shared().host->setCollective(nullptr);
            detached.set_value();
        });
        detached.get_future().wait();
        std::vector<Client> clients = {
            spawnClient(shared().environments.at(1), {"remote/5", "fence-with/3"})};
        test::CapturedStderr log;
        bool finished = collect(clients, std::chrono::seconds(20));
        shared().loggedWhileStopping = withoutCrossVersionNoise(log.text());
        shared().answersWhileStopping = clients[0].lines();
        if (!finished)
            throw std::runtime_error("a PMIx client did not finish in time");
    }

    // What rank `client` was told for `query`.
    static std::string answer(std::uint32_t client, const std::string &query) {
        auto &lines = shared().answers[client];
        auto it = lines.find(query);
        return it == lines.end() ? "(no answer)" : it->second;
    }
    // Every local client was told `value` for `query`.
    static void expectAll(const std::string &query, const std::string &value) {
        for (std::uint32_t r : kLocalRanks)
            EXPECT_EQ(answer(r, query), value) << "rank " << r << " asking " << query;
    }
};

} // namespace

TEST_F(PmixHostTest, OnlyLocalRanksGetAnEnvironment) {
    std::vector<std::uint32_t> ranks;
    for (auto &[rank, env] : shared().environments)
        ranks.push_back(rank);
    EXPECT_EQ(ranks, kLocalRanks);
}

TEST_F(PmixHostTest, EachLocalRankIsToldItsNamespaceRankAndSecurity) {
    for (std::uint32_t r : kLocalRanks) {
        const auto &env = shared().environments.at(r);
        auto has = [&](const std::string &entry) {
            return std::find(env.begin(), env.end(), entry) != env.end();
        };
        EXPECT_TRUE(has(std::string("PMIX_NAMESPACE=") + kNamespace)) << r;
        EXPECT_TRUE(has("PMIX_RANK=" + std::to_string(r))) << r;
        EXPECT_TRUE(has("PMIX_SECURITY_MODE=native")) << r;
        EXPECT_TRUE(has("PMIX_GDS_MODULE=hash")) << r;
    }
}

TEST_F(PmixHostTest, EachLocalRankJoins) {
    for (std::uint32_t r : kLocalRanks)
        EXPECT_EQ(answer(r, "me"), std::to_string(r));
}

TEST_F(PmixHostTest, AnotherUsersConnectionIsClosedBeforePmixReadsIt) {
    // PMIx 4.2.2 would read its header on its one progress thread, blocking
    // every rank of the node for as long as the connection sits there.
    if (!shared().stranger)
        GTEST_SKIP() << "needs root, to connect as another user";
    ASSERT_TRUE(shared().stranger->connected);
    EXPECT_TRUE(shared().stranger->closedAt) << "the server kept another user's connection";
    EXPECT_NE(shared().logged.find("refused a PMIx connection from 127.0.0.1:"), std::string::npos)
        << shared().logged;
    EXPECT_NE(shared().logged.find("uid 65534: only the job's user may connect"), std::string::npos)
        << shared().logged;
}

TEST_F(PmixHostTest, AnIdleConnectionOfTheUsersOwnHoldsPmixOnlyUntilTheDeadline) {
    // Made before the ranks started, it is PMIx's first to read: the ranks
    // wait for its deadline (5 s), not for it to go away.
    ASSERT_TRUE(shared().idleOwn.connected);
    EXPECT_TRUE(shared().idleOwn.closedAt) << "the server still waits for its header";
    EXPECT_LT(shared().clientsTook, std::chrono::seconds(15));
}

TEST_F(PmixHostTest, JobData) {
    expectAll(std::string("*/") + PMIX_JOBID, kNamespace);
    for (const char *key : {PMIX_UNIV_SIZE, PMIX_JOB_SIZE, PMIX_MAX_PROCS})
        expectAll(std::string("*/") + key, "7");
    expectAll(std::string("*/") + PMIX_JOB_NUM_APPS, "2");
    expectAll(std::string("*/") + PMIX_NUM_NODES, "3");
    expectAll(std::string("*/") + PMIX_NODE_LIST, "n1,n2,n3");
    // Ranks 0..6 on nodes 0,1,1,2,1,0,2, as Slurm's mpi/pmix would write it.
    expectAll(std::string("*/") + PMIX_ANL_MAP,
              "(vector,(0,1,1),(1,1,2),(2,1,1),(1,1,1),(0,1,1),(2,1,1))");
    expectAll(std::string("*/") + PMIX_TMPDIR, shared().config.tmpdir);
    expectAll(std::string("*/") + PMIX_NSDIR, shared().config.tmpdir);
}

TEST_F(PmixHostTest, ThisNodesData) {
    expectAll(std::string("node/") + PMIX_LOCAL_SIZE, "3");
    expectAll(std::string("node/") + PMIX_LOCAL_PEERS, "1,2,4");
    expectAll(std::string("node/") + PMIX_LOCALLDR, "1");
    expectAll(std::string("node/") + PMIX_NODEID, "1");
}

// Another node's data is not registered here (the node list and count are,
// JobData); PMIx asks the host, which refuses and says why.
TEST_F(PmixHostTest, AnotherNodesDataIsNotFound) {
    EXPECT_EQ(answer(2, std::string("node:n1/") + PMIX_LOCAL_SIZE), "!NOT-FOUND");
}

TEST_F(PmixHostTest, ApplicationData) {
    expectAll(std::string("app0/") + PMIX_APP_SIZE, "4");
    expectAll(std::string("app1/") + PMIX_APP_SIZE, "3");
    expectAll(std::string("app0/") + PMIX_APPLDR, "0");
    expectAll(std::string("app1/") + PMIX_APPLDR, "4");
}

// Each rank's index among its node's ranks.
const std::vector<std::string> kLocalRankOf = {"0", "0", "1", "0", "2", "1", "1"};

TEST_F(PmixHostTest, LocalRanksPlacement) {
    for (std::uint32_t r : kLocalRanks) {
        const std::string q = std::to_string(r) + "/";
        expectAll(q + PMIX_HOSTNAME, "n2");
        expectAll(q + PMIX_APPNUM, std::to_string(kAppOf[r]));
        expectAll(q + PMIX_LOCAL_RANK, kLocalRankOf[r]);
        expectAll(q + PMIX_NODE_RANK, kLocalRankOf[r]);
        expectAll(q + PMIX_NODEID, "1");
    }
}

// Only this node's ranks have per-rank data here (a big step would cost
// every node O(ranks)): another node's rank is "not found", answered at
// once (no direct modex: ARemoteRanksDataIsAskedOfTheCollective). Rank 0
// has served keys, and so its placement (AServedRanksPlacementIsKnown).
TEST_F(PmixHostTest, RemoteRanksPlacementIsNotFound) {
    for (std::uint32_t r : {3u, 5u})
        for (const char *key :
             {PMIX_HOSTNAME, PMIX_APPNUM, PMIX_LOCAL_RANK, PMIX_NODE_RANK, PMIX_NODEID})
            expectAll(std::to_string(r) + "/" + key, "!NOT-FOUND");
}

// A remote rank with served keys (rank 0, n1) has its placement too:
// without it, PMIx would answer application 0 for any rank.
TEST_F(PmixHostTest, AServedRanksPlacementIsKnown) {
    expectAll(std::string("0/") + PMIX_HOSTNAME, "n1");
    expectAll(std::string("0/") + PMIX_APPNUM, "0");
    expectAll(std::string("0/") + PMIX_LOCAL_RANK, "0");
    expectAll(std::string("0/") + PMIX_NODE_RANK, "0");
}

// The step's last rank is the exception PMIx 4.2.2 needs (pmix_host.cpp):
// its placement is given on every node (its PMIX_NODEID, as any remote
// rank's, PMIx answers from this node's data: not found).
TEST_F(PmixHostTest, TheLastRanksPlacementIsKnownEverywhere) {
    expectAll(std::string("6/") + PMIX_HOSTNAME, "n3");
    expectAll(std::string("6/") + PMIX_APPNUM, "1");
    expectAll(std::string("6/") + PMIX_LOCAL_RANK, "1");
    expectAll(std::string("6/") + PMIX_NODE_RANK, "1");
    expectAll(std::string("6/") + PMIX_NODEID, "!NOT-FOUND");
}

TEST_F(PmixHostTest, BoundRanksGetTheirCpusetAndUnboundRanksNone) {
    EXPECT_EQ(answer(1, std::string("1/") + PMIX_CPUSET), "hwloc:0,12");
    EXPECT_EQ(answer(2, std::string("2/") + PMIX_CPUSET), "hwloc:2,14");
    // Open MPI takes a PMIX_CPUSET to mean "bound".
    EXPECT_EQ(answer(4, std::string("4/") + PMIX_CPUSET), "!NOT-FOUND");
}

// A bound rank is local to its binding; an unbound one to the step's CPUs here.
TEST_F(PmixHostTest, LocalRanksGetLocalityAndTheirDirectory) {
    const std::map<std::uint32_t, std::string> locality = {
        {1, "SK0:L30:L20:L10:CR0:HT0-1:NM0"},
        {2, "SK0:L30:L21:L11:CR1:HT2-3:NM0"},
        {4, "SK0:L30:L20-1:L10-1:CR0-1:HT0-3:NM0"}};
    for (auto &[r, where] : locality) {
        const std::string q = std::to_string(r) + "/";
        EXPECT_EQ(answer(r, q + PMIX_LOCALITY_STRING), where) << r;
        EXPECT_EQ(answer(r, q + PMIX_PROCDIR), shared().config.tmpdir) << r;
    }
}

TEST_F(PmixHostTest, AFenceOfTheWholeJobSpansEveryNodeAndCarriesTheData) {
    expectAll("fence", "ok");
    auto fences = shared().collective.fences();
    ASSERT_GE(fences.size(), 1u);
    EXPECT_EQ(fences[0].nodes, (std::vector<std::uint32_t>{0, 1, 2}));
    EXPECT_TRUE(fences[0].collect);
    EXPECT_GT(fences[0].bytes, 0u);
    // What the fence returned is what every local rank reads afterwards.
    for (std::uint32_t r : kLocalRanks)
        expectAll(std::to_string(r) + "/stepmap.test", std::to_string(r));
}

// Rank 4 (n2) fences with rank 0 (n1), after the whole job's fence.
TEST_F(PmixHostTest, AFenceOfSomeRanksSpansTheirNodes) {
    EXPECT_EQ(answer(4, "fence-with/0"), "ok");
    auto fences = shared().collective.fences();
    ASSERT_EQ(fences.size(), 2u);
    EXPECT_EQ(fences[1].nodes, (std::vector<std::uint32_t>{0, 1}));
    EXPECT_FALSE(fences[1].collect);
}

TEST_F(PmixHostTest, ARemoteRanksDataIsAskedOfTheCollective) {
    EXPECT_EQ(shared().collective.modexRanks(), (std::vector<std::uint32_t>{3}));
    EXPECT_EQ(answer(1, "remote/3").rfind("!", 0), 0u) << answer(1, "remote/3");
}

TEST_F(PmixHostTest, AnAbortReachesTheCollectiveAndReleasesTheRank) {
    EXPECT_EQ(shared().collective.aborts(), (std::vector<std::string>{"4 7 test abort"}));
    EXPECT_EQ(answer(4, "abort"), "SUCCESS");
}

TEST_F(PmixHostTest, ThisNodeServesItsRanksDataToOtherNodes) {
    std::promise<std::pair<pmix_status_t, std::size_t>> reply;
    shared().inbox->post([&reply] {
        shared().host->localModex(2, [&reply](pmix_status_t status, std::string bytes) {
            reply.set_value({status, bytes.size()});
        });
    });
    auto answered = reply.get_future();
    ASSERT_EQ(answered.wait_for(std::chrono::seconds(5)), std::future_status::ready);
    auto [status, size] = answered.get();
    EXPECT_EQ(status, PMIX_SUCCESS) << PMIx_Error_string(status);
    EXPECT_GT(size, 0u);
}

// What a local rank committed, as its server reads it back (the modex-less
// launch checks each rank's TCP record so); nothing for a key it never put.
TEST_F(PmixHostTest, TheServerReadsWhatALocalRankCommitted) {
    auto read = [](std::uint32_t rank, const std::string &key) {
        std::promise<std::optional<std::string>> reply;
        shared().inbox->post([&] {
            shared().host->committedValue(
                rank, key, [&reply](std::optional<std::string> v) { reply.set_value(v); });
        });
        auto answered = reply.get_future();
        EXPECT_EQ(answered.wait_for(std::chrono::seconds(5)), std::future_status::ready);
        return answered.get();
    };
    EXPECT_EQ(read(2, "stepmap.test"), std::optional<std::string>("2"));
    EXPECT_EQ(read(4, "stepmap.test"), std::optional<std::string>("4"));
    EXPECT_EQ(read(2, "stepmap.never"), std::nullopt);
    // Another node's rank: not asked of anyone, just not here.
    EXPECT_EQ(read(3, "stepmap.test"), std::nullopt);
}

TEST_F(PmixHostTest, DataOfARankOutsideTheStepIsRefusedAndLogged) {
    EXPECT_EQ(answer(2, "remote/99"), "!BAD-PARAM");
    // After rank 2's question about another node (AnotherNodesDataIsNotFound);
    // the refused stranger's line (AnotherUsersConnection...) aside.
    std::string logged;
    for (std::size_t at = 0, nl; (nl = shared().logged.find('\n', at)) != std::string::npos;
         at = nl + 1)
        if (shared().logged.compare(at, 40, "stepmap-stepd: refused a PMIx connection") != 0)
            logged += shared().logged.substr(at, nl + 1 - at);
    EXPECT_EQ(
        logged,
        "stepmap-stepd: refusing a direct-modex request for another node's data: a node server "
        "holds only its own node's\n"
        "stepmap-stepd: refusing a direct-modex request for rank 99: not a rank of this step\n");
    for (std::uint32_t rank : shared().collective.modexRanks())
        EXPECT_NE(rank, 99u);
}

TEST_F(PmixHostTest, WhileStoppingRequestsFailAndAreLogged) {
    ASSERT_EQ(shared().stoppingError, "");
    EXPECT_EQ(shared().answersWhileStopping,
              (std::map<std::string, std::string>{{"me", "1"},
                                                  {"remote/5", "!NOT_AVAILABLE"},
                                                  {"fence-with/3", "!NOT_AVAILABLE"}}));
    EXPECT_EQ(shared().loggedWhileStopping,
              "stepmap-stepd: direct modex for rank 5 failed: the server is stopping\n"
              "stepmap-stepd: a fence failed: the server is stopping\n");
}

// The served profile (docs/profile-keys.md). Rank 1 (n2) reads n3's entry
// from its own server's data: no fence, no direct modex.
TEST_F(PmixHostTest, AnotherNodesProfileIsReadWithoutAnyExchange) {
    const auto &a = shared().profileAnswers;
    const auto at = [&a](const std::string &q) {
        auto it = a.find(q);
        return it == a.end() ? std::string("(no answer)") : it->second;
    };
    EXPECT_EQ(at(std::string("node:n3/") + kProfileDigestKey), "sha256:" + std::string(64, '3'));
    EXPECT_EQ(at(std::string("node:n3/") + kProfileTimeKey), "2026-11-24T00:30:53Z");
    EXPECT_EQ(at(std::string("node:n3/") + kNetInterfacesKey),
              "eth0 ifindex=2 mtu=9000 mac=52:54:00:12:34:50 numa=0 "
              "addresses=10.0.0.7/24,fe80::1/64");
    EXPECT_EQ(at(std::string("node:n3/") + kRdmaDevicesKey),
              "mlx5_0 guid=0002:c903:00f1:e9c0 port=1 layer=InfiniBand state=ACTIVE lid=7 "
              "gids=0:fe80:0000:0000:0000:0002:c903:00f1:e9c1 rate=100 Gb/sec (4X EDR)");
    EXPECT_EQ(at(std::string("node:n3/") + PMIX_FABRIC_DEVICES),
              "{pmix.fabdev={pmix.fabdev.nm=eth0;pmix.fabdev.type=Ethernet;"
              "pmix.fabdev.addr=52:54:00:12:34:50;pmix.fabdev.mtu=9000;"
              "pmix.fabdev.speed=25000000000;pmix.fabdev.state=up;"
              "pmix.fabdev.pcidevid=0000:3b:00:00};"
              "pmix.fabdev={pmix.fabdev.nm=mlx5_0;pmix.fabdev.type=InfiniBand;"
              "pmix.fabdev.addr=0002:c903:00f1:e9c0;pmix.fabdev.speed=100000000000;"
              "pmix.fabdev.state=up}}");
    // This node's own entry, by its name.
    EXPECT_EQ(at(std::string("node:n2/") + kProfileDigestKey), "sha256:" + std::string(64, '2'));
    EXPECT_EQ(at(std::string("node:n2/") + kNetInterfacesKey),
              "eth0 ifindex=2 mtu=9000 mac=52:54:00:12:34:50 numa=0 "
              "addresses=10.0.0.6/24,fe80::1/64");
    EXPECT_EQ(shared().fencesAfter, shared().fencesBefore);
    EXPECT_EQ(shared().modexAfter, shared().modexBefore);
}

// n1 has no entry (none, or withheld as stale): its keys are not found.
TEST_F(PmixHostTest, ANodeWithoutAnEntryHasNoProfileKeys) {
    for (const char *key : {kProfileDigestKey, kProfileTimeKey, kNetInterfacesKey, kRdmaDevicesKey,
                            PMIX_FABRIC_DEVICES})
        EXPECT_EQ(shared().profileAnswers[std::string("node:n1/") + key], "!NOT-FOUND") << key;
    EXPECT_EQ(shared().modexAfter, shared().modexBefore);
    std::string refusals;
    for (int i = 0; i < 5; ++i)
        refusals += "stepmap-stepd: refusing a direct-modex request for another node's data: a "
                    "node server holds only its own node's\n";
    EXPECT_EQ(shared().loggedReadingProfile, refusals);
}

// A served rank key is answered from this node's data, for a remote rank
// (0, on n1) as for a local one (2), bytes intact.
TEST_F(PmixHostTest, ServedRankKeysAreAnsweredWithoutADirectModex) {
    EXPECT_EQ(shared().profileAnswers["0/btl.tcp.4.1"], "0x0a00000502000000");
    EXPECT_EQ(shared().profileAnswers["2/btl.tcp.4.1"], "0x0a0000060010");
    EXPECT_EQ(shared().modexAfter, shared().modexBefore);
    EXPECT_EQ(shared().countedAfterProfile, shared().counted);
}

// The clients of runClients: one collecting fence of the whole job, one
// fence of two ranks without data, one direct modex for rank 3 (n3); the
// request for rank 99 (not of the step) and another node's data are
// refused before they count.
TEST_F(PmixHostTest, APublishedNameIsFoundByAnotherRankWithItsTypeAndPublisher) {
    auto &names = shared().nameAnswers;
    EXPECT_EQ(names[1]["publish/svc/port-1"], "ok");
    EXPECT_EQ(names[1]["publish-int/count/42"], "ok");
    EXPECT_EQ(names[1]["lookup/count"], "42 from 1");
    EXPECT_EQ(names[2]["lookup/count"], "42 from 1");
    EXPECT_EQ(names[4]["lookup/svc"], "port-2 from 2");
}

TEST_F(PmixHostTest, ANameIsPublishedOnceUntilItsPublisherUnpublishesIt) {
    auto &names = shared().nameAnswers;
    EXPECT_EQ(names[1]["publish/svc/again"], "!EXISTS");
    EXPECT_EQ(names[1]["unpublish/svc"], "ok");
    EXPECT_EQ(names[2]["lookup/svc"], "!NOT-FOUND");
    EXPECT_EQ(names[2]["publish/svc/port-2"], "ok");
    // Each request names the rank that made it: a server cannot publish as
    // another node's rank.
    for (const auto &request : shared().collective.nameRequests())
        EXPECT_TRUE(request.rank == 1 || request.rank == 2 || request.rank == 4) << request.rank;
}

TEST_F(PmixHostTest, ConnectingRanksOfTheStepIsABarrierOfTheirNodes) {
    EXPECT_EQ(shared().nameAnswers[2]["connect-with/3"], "ok");
    // Named by the processes it joins, so that it never meets a fence or
    // another connect over the same nodes.
    const auto barriers = shared().collective.barriers();
    ASSERT_EQ(barriers.size(), 1u);
    EXPECT_EQ(barriers[0].first, "connect 2,3");
    EXPECT_EQ(barriers[0].second, (std::vector<std::uint32_t>{1, 2}));
}

// Another step's processes (a spawner's children): a barrier through the
// job's hub, named by every process it joins, after which the other
// step's namespace is registered here.
TEST_F(PmixHostTest, ConnectingToAnotherStepIsAJobWideBarrier) {
    EXPECT_EQ(shared().nameAnswers[2]["connect-other"], "ok");
    const auto barriers = shared().collective.jobBarriers();
    ASSERT_EQ(barriers.size(), 1u);
    const std::string self = shared().config.nspace;
    EXPECT_EQ(barriers[0].label, "connect another.step:0," + self + ":2,");
    EXPECT_EQ(barriers[0].procs,
              (std::vector<std::pair<std::string, std::uint32_t>>{{"another.step", 0}, {self, 2}}));
    EXPECT_NE(shared().loggedNames.find("registered the job's step another.step"),
              std::string::npos)
        << shared().loggedNames;
}

// MPI_Comm_spawn goes to srun (through the hub) with what the rank asked,
// and the rank learns the children's namespace from srun's answer.
TEST_F(PmixHostTest, ASpawnGoesToSrunAndAnswersTheChildrensNamespace) {
    EXPECT_EQ(shared().nameAnswers[2]["spawn/3"], "ok:spawned.step");
    const auto spawns = shared().collective.spawns();
    ASSERT_EQ(spawns.size(), 1u);
    ASSERT_EQ(spawns[0].apps.size(), 1u);
    EXPECT_EQ(spawns[0].apps[0].cmd, "/bin/true");
    EXPECT_EQ(spawns[0].apps[0].maxprocs, 3u);
    EXPECT_EQ(spawns[0].rank, 2u);
    EXPECT_EQ(spawns[0].parentNspace, shared().config.nspace);
    EXPECT_FALSE(spawns[0].apps[0].cwd.empty()); // the client fills it in
    EXPECT_NE(shared().loggedNames.find("rank 2 spawned 3 x /bin/true as spawned.step"),
              std::string::npos)
        << shared().loggedNames;
}

TEST_F(PmixHostTest, FencesAndDirectModexAreCounted) {
    const auto &c = shared().counted;
    EXPECT_EQ(c.dataFences, 1u);
    EXPECT_EQ(c.barriers, 1u);
    EXPECT_EQ(c.modexLocal, 0u);
    EXPECT_EQ(c.modexRemote, 1u);
    // The link counts bytes and requests answered for other nodes.
    EXPECT_EQ(c.fenceBytes, 0u);
    EXPECT_EQ(c.modexAnswered, 0u);
}
