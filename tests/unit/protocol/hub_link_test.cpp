// A node server's link to srun's hub (hub/hub_link.hpp), with the real hub
// on its own thread and the links on a libuv loop here, over loopback; the
// node's PMIx server is a fake host.

#include "plan/launch_plan.hpp"
#include "protocol/hub/hub_link.hpp"
#include "protocol/hub/job_ids.hpp"
#include "protocol/hub/name_service.hpp"
#include "protocol/hub/rendezvous_hub.hpp"
#include "protocol/wire/payloads.hpp"
#include "protocol/wire/secret.hpp"

#include "reply_outcome.hpp"

#include <gtest/gtest.h>

#include <csignal>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>

#include <atomic>
#include <chrono>
#include <mutex>
#include <numeric>
#include <optional>
#include <thread>

using namespace stepmap;
using stepmap::protocol_test::Outcome;

namespace {

constexpr hub::LinkStatuses kStatuses{0, -1000, -2000};

// This node's PMIx server, as the link sees it.
struct FakeHost : hub::LinkHost {
    bool answer = true; // else the requests stay unanswered
    std::uint32_t node = 0;
    std::vector<std::uint32_t> nodeOfRank{0, 1, 0, 1};
    std::vector<std::pair<std::uint32_t, hub::DataReply>> unanswered;
    std::vector<std::string> lines;
    timeline::ExchangeCounters counted; // what the PMIx side counted

    bool ownsRank(std::uint32_t rank) const override {
        return rank < nodeOfRank.size() && nodeOfRank[rank] == node;
    }
    bool knowsOwners = false; // else every request goes through the hub
    std::optional<std::uint32_t> ownerOf(std::uint32_t rank) const override {
        if (!knowsOwners || rank >= nodeOfRank.size())
            return std::nullopt;
        return nodeOfRank[rank];
    }
    void localModex(std::uint32_t rank, hub::DataReply done) override {
        if (answer)
            done(0, "data of " + std::to_string(rank));
        else
            unanswered.emplace_back(rank, std::move(done));
    }
    hub::LinkStatuses statuses() const override { return kStatuses; }
    std::string statusText(int status) const override { return "status " + std::to_string(status); }
    void log(const std::string &line) override { lines.push_back(line); }
    timeline::ExchangeCounters exchangeCounters() const override { return counted; }
    std::vector<std::pair<std::uint32_t, int>> failedRanks; // as the hub told
    void rankFailed(std::uint32_t rank, int status) override {
        failedRanks.emplace_back(rank, status);
    }
    bool logged(const std::string &line) const {
        return std::find(lines.begin(), lines.end(), line) != lines.end();
    }
};

class HubLinkTest : public ::testing::Test {
public:
    void SetUp() override {
        // As the node server does (stepd_server/main.cpp): a peer that went
        // away fails a write with EPIPE.
        signal(SIGPIPE, SIG_IGN);
        uv_loop_init(&loop_);
        secret_ = *wire::decodeSecretHex(wire::generateSecretHex());
        hub::RendezvousHub::Events events;
        events.onAbort = [this](std::uint32_t rank, int status, const std::string &msg) {
            std::lock_guard lock(mutex_);
            hubSaw_.push_back("abort " + std::to_string(rank) + " " + std::to_string(status) + " " +
                              msg);
        };
        events.onRankExit = [this](std::uint32_t rank, int status) {
            std::lock_guard lock(mutex_);
            hubSaw_.push_back("exit " + std::to_string(rank) + " " + std::to_string(status));
        };
        events.onTimeline = [this](std::uint32_t node, std::vector<timeline::Event> marks) {
            std::lock_guard lock(mutex_);
            timelines_[node] = std::move(marks);
        };
        events.onFailure = [this](const std::string &why) {
            std::lock_guard lock(mutex_);
            hubSaw_.push_back("failure " + why);
        };
        events.onJoined = [this](std::uint32_t node) {
            std::lock_guard lock(mutex_);
            joined_.insert(node);
        };
        events.onNotice = [this](std::uint32_t rank, const std::string &text) {
            std::lock_guard lock(mutex_);
            hubSaw_.push_back("notice " + std::to_string(rank) + " " + text);
        };
        events.onExchange = [this](std::uint32_t node, const timeline::ExchangeCounters &c) {
            std::lock_guard lock(mutex_);
            exchange_[node] = c;
        };
        events_ = events;
        // Ranks 0,2 on node 0; ranks 1,3 on node 1.
        startHub({0, 1, 0, 1}, 2, 16);
    }

    void startHub(std::vector<std::uint32_t> nodeOfRank, std::uint32_t nodeCount,
                  std::uint32_t fanOut, int profileDeadlineMs = 5000) {
        links_.clear();
        hub_.reset();
        nodeOfRank_ = nodeOfRank;
        nodeCount_ = nodeCount;
        hub::RendezvousHub::Settings s;
        s.host = "127.0.0.1";
        s.fenceFanOut = fanOut;
        s.profileDeadlineMs = profileDeadlineMs;
        s.fenceTimeoutSec = fenceTimeoutSec_;
        s.nodeNames = nodeNames_;
        auto started = hub::RendezvousHub::start(nodeOfRank, nodeCount, secret_, events_, s);
        ASSERT_TRUE(started) << started.error().message;
        hub_ = std::move(started).value();
    }

    void TearDown() override {
        links_.clear();
        hub_.reset();
        for (int i = 0; i < 1000 && uv_loop_close(&loop_) == UV_EBUSY; ++i)
            uv_run(&loop_, UV_RUN_NOWAIT);
    }

    hub::HubLink::Settings settings(std::uint32_t node, int port) {
        hub::HubLink::Settings s;
        s.hubHost = "127.0.0.1";
        s.hubPort = port;
        s.secret = secret_;
        s.nodeIndex = node;
        s.dmodexTimeoutSec = 1;
        s.fenceTimeoutSec = fenceTimeoutSec_;
        s.nodeCount = nodeCount_;
        return s;
    }

    hub::HubLink &link(std::uint32_t node, FakeHost &host, std::optional<int> port = {}) {
        host.node = node;
        host.nodeOfRank = nodeOfRank_;
        links_.push_back(std::make_unique<hub::HubLink>(
            &loop_, settings(node, port.value_or(hub_->port())), host,
            [this, node](const std::string &why) { lost_[node] = why; }));
        return *links_.back();
    }

    template <class Pred> bool runUntil(Pred done, int seconds = 10) {
        return protocol_test::runLoopUntil(&loop_, done, seconds);
    }

    // Node 0 asks for rank (of node 1) through the hub; the outcome, or none
    // after 10 s.
    Outcome askForRank(FakeHost &h0, FakeHost &h1, std::uint32_t rank) {
        auto &a = link(0, h0);
        link(1, h1).connect();
        a.connect();
        Outcome m;
        a.directModex(rank, m.reply());
        runUntil([&] { return m.status.has_value(); });
        return m;
    }

    std::vector<std::string> hubSaw() {
        std::lock_guard lock(mutex_);
        return hubSaw_;
    }
    std::set<std::uint32_t> joinedHub() {
        std::lock_guard lock(mutex_);
        return joined_;
    }

    int fenceTimeoutSec_ = 0;
    std::vector<std::string> nodeNames_;
    uv_loop_t loop_{};
    std::string secret_;
    hub::RendezvousHub::Events events_;
    std::vector<std::uint32_t> nodeOfRank_;
    std::uint32_t nodeCount_ = 1;
    std::unique_ptr<hub::RendezvousHub> hub_;
    std::set<std::uint32_t> joined_; // the hub's onJoined
    std::vector<std::unique_ptr<hub::HubLink>> links_;
    std::map<std::uint32_t, std::string> lost_;
    std::mutex mutex_;
    std::vector<std::string> hubSaw_;
    std::map<std::uint32_t, std::vector<timeline::Event>> timelines_;
    std::map<std::uint32_t, timeline::ExchangeCounters> exchange_;
};

} // namespace

TEST_F(HubLinkTest, FenceAcrossNodesCollectsEveryNodesData) {
    FakeHost h0, h1;
    auto &a = link(0, h0);
    auto &b = link(1, h1);
    a.connect();
    b.connect();
    Outcome fa, fb;
    // Before the hub welcomed them: queued, then sent.
    a.fence({0, 1}, true, "A", fa.reply());
    b.fence({0, 1}, true, "B", fb.reply());
    ASSERT_TRUE(runUntil([&] { return fa.status && fb.status; }));
    EXPECT_EQ(*fa.status, 0);
    EXPECT_EQ(fa.data, "AB");
    EXPECT_EQ(fb.data, "AB");
    EXPECT_TRUE(h0.logged("joined srun's rendezvous"));
}

// Five nodes, one rank each: every node's collecting fence of the whole
// step, and one of nodes 1 and 3; each node's results.
std::vector<std::string> fiveNodeFences(HubLinkTest &t, std::vector<FakeHost> &hosts) {
    std::vector<Outcome> whole(5), part(5);
    for (std::uint32_t n = 0; n < 5; ++n)
        t.link(n, hosts[n]).connect();
    for (std::uint32_t n : {4, 0, 2, 1, 3})
        t.links_[n]->fence({0, 1, 2, 3, 4}, true, "N" + std::to_string(n), whole[n].reply());
    for (std::uint32_t n : {3, 1})
        t.links_[n]->fence({1, 3}, true, "P" + std::to_string(n), part[n].reply());
    t.runUntil([&] {
        return std::all_of(whole.begin(), whole.end(), [](auto &o) { return o.status; }) &&
               part[1].status && part[3].status;
    });
    std::vector<std::string> seen;
    for (auto &o : whole)
        seen.push_back(std::to_string(o.status.value_or(1)) + " " + o.data);
    for (std::uint32_t n : {1, 3})
        seen.push_back(std::to_string(part[n].status.value_or(1)) + " " + part[n].data);
    return seen;
}

TEST_F(HubLinkTest, WholeStepFencesOverTheTreeGiveTheStarsBytes) {
    const std::vector<std::string> expected = {"0 N0N1N2N3N4", "0 N0N1N2N3N4", "0 N0N1N2N3N4",
                                               "0 N0N1N2N3N4", "0 N0N1N2N3N4", "0 P1P3",
                                               "0 P1P3"};
    for (std::uint32_t fanOut : {0u, 2u, 16u}) {
        startHub({0, 1, 2, 3, 4}, 5, fanOut);
        std::vector<FakeHost> hosts(5);
        EXPECT_EQ(fiveNodeFences(*this, hosts), expected) << "fan-out " << fanOut;
    }
}

TEST_F(HubLinkTest, ALostServerFailsTheTreeFenceNamingIt) {
    startHub({0, 1, 2, 3, 4}, 5, 2); // 0; 1 2; 3 4
    std::vector<FakeHost> hosts(5);
    ASSERT_EQ(fiveNodeFences(*this, hosts)[0], "0 N0N1N2N3N4");
    std::vector<Outcome> out(5);
    for (std::uint32_t n : {0, 1, 2, 4})
        links_[n]->fence({0, 1, 2, 3, 4}, false, "", out[n].reply());
    links_[3].reset(); // node 3's server is gone
    ASSERT_TRUE(runUntil([&] { return out[0].status && out[1].status && out[2].status; }));
    EXPECT_EQ(*out[1].status, kStatuses.lostConnection);
    EXPECT_TRUE(std::any_of(hosts[1].lines.begin(), hosts[1].lines.end(), [](auto &l) {
        // The tree's first fence is the servers' address book.
        return l.rfind("fence 3 failed: lost the fence tree link to child node index 3", 0) == 0;
    }));
}

TEST_F(HubLinkTest, AFenceOfThisNodeAloneNeedsNoHub) {
    FakeHost h0;
    Outcome f;
    link(0, h0).fence({0}, true, "x", f.reply());
    ASSERT_TRUE(f.status);
    EXPECT_EQ(*f.status, 0);
    EXPECT_EQ(f.data, "x");
}

TEST_F(HubLinkTest, DirectModexIsAnsweredByTheOwningNode) {
    FakeHost h0, h1;
    Outcome m = askForRank(h0, h1, 3);
    ASSERT_TRUE(m.status);
    EXPECT_EQ(*m.status, 0);
    EXPECT_EQ(m.data, "data of 3");
}

// Once the servers have their address book (the tree's first fence), the
// owner's server answers the asking one directly: srun routes nothing.
TEST_F(HubLinkTest, DirectModexGoesServerToServerOnceTheServersKnowEachOther) {
    FakeHost h0, h1;
    h0.knowsOwners = h1.knowsOwners = true;
    Outcome m = askForRank(h0, h1, 3);
    ASSERT_TRUE(m.status);
    EXPECT_EQ(*m.status, 0);
    EXPECT_EQ(m.data, "data of 3");
    Outcome again;
    links_[0]->directModex(1, again.reply());
    ASSERT_TRUE(runUntil([&] { return again.status.has_value(); }));
    EXPECT_EQ(again.data, "data of 1");
    EXPECT_EQ(hub_->modexRouted(), 0u);
}

// Without the tree there is no address book: the hub routes as before.
TEST_F(HubLinkTest, DirectModexWithoutTheTreeGoesThroughTheHub) {
    startHub({0, 1, 0, 1}, 2, 0);
    FakeHost h0, h1;
    h0.knowsOwners = h1.knowsOwners = true;
    Outcome m = askForRank(h0, h1, 3);
    ASSERT_TRUE(m.status);
    EXPECT_EQ(m.data, "data of 3");
    EXPECT_EQ(hub_->modexRouted(), 1u);
}

// The owner's server leaves: the request its link held goes through the
// hub, which answers that the rank's server is gone.
TEST_F(HubLinkTest, ARequestWhoseOwnerLeftIsAnsweredNotFound) {
    FakeHost h0, h1;
    h0.knowsOwners = h1.knowsOwners = true;
    h1.answer = false;
    auto &a = link(0, h0);
    auto &b = link(1, h1);
    a.connect();
    b.connect();
    Outcome m;
    a.directModex(1, m.reply());
    ASSERT_TRUE(runUntil([&] { return h1.unanswered.size() == 1; }));
    b.leave();
    ASSERT_TRUE(runUntil([&] { return m.status.has_value(); }));
    EXPECT_EQ(*m.status, kStatuses.notFound);
    EXPECT_TRUE(h0.logged("direct modex for rank 1 failed: status -3 (the rank's node's server "
                          "left)"));
    h1.unanswered.clear();
}

TEST_F(HubLinkTest, DirectModexWithoutAnAnswerTimesOut) {
    FakeHost h0, h1;
    h1.answer = false;
    Outcome m = askForRank(h0, h1, 1);
    ASSERT_TRUE(m.status);
    EXPECT_EQ(*m.status, kStatuses.timeout);
    EXPECT_TRUE(h0.logged("direct modex for rank 1 failed: status -1000 (no answer within 1 s)"));
    ASSERT_EQ(h1.unanswered.size(), 1u);
    EXPECT_EQ(h1.unanswered[0].first, 1u);
}

TEST_F(HubLinkTest, AbortsAndFailedRanksReachSrun) {
    FakeHost h0;
    auto &a = link(0, h0);
    a.connect();
    a.abort(2, 5, "bye");
    a.rankExited(0, 3);
    ASSERT_TRUE(runUntil([&] { return hubSaw().size() == 2; }));
    EXPECT_EQ(hubSaw(), (std::vector<std::string>{"abort 2 5 bye", "exit 0 3"}));
}

TEST_F(HubLinkTest, AFailedRankIsToldToEveryOtherServerOfTheStep) {
    FakeHost h0, h1;
    auto &a = link(0, h0);
    auto &b = link(1, h1);
    a.connect();
    b.connect();
    // Both joined once a fence over both completes.
    Outcome fa, fb;
    a.fence({0, 1}, false, "", fa.reply());
    b.fence({0, 1}, false, "", fb.reply());
    ASSERT_TRUE(runUntil([&] { return fa.status && fb.status; }));
    a.rankExited(2, 137);
    ASSERT_TRUE(runUntil([&] { return !h1.failedRanks.empty(); }));
    EXPECT_EQ(h1.failedRanks, (std::vector<std::pair<std::uint32_t, int>>{{2, 137}}));
    EXPECT_TRUE(h0.failedRanks.empty()) << "the failed rank's own server knows already";
}

TEST_F(HubLinkTest, SrunEndingTheStepStopsTheServer) {
    FakeHost h0, h1;
    link(0, h0).connect();
    link(1, h1).connect();
    ASSERT_TRUE(runUntil([&] {
        return h0.logged("joined srun's rendezvous") && h1.logged("joined srun's rendezvous");
    }));
    std::thread stopper([this] { hub_->shutdown(0, "step done"); });
    bool ended = runUntil([&] { return lost_.size() == 2; });
    stopper.join();
    ASSERT_TRUE(ended);
    EXPECT_EQ(lost_[0], "srun ends the step: step done");
    EXPECT_EQ(lost_[1], "srun ends the step: step done");
}

TEST_F(HubLinkTest, LeavingNeedsNoStopFromTheServer) {
    FakeHost h0;
    auto &a = link(0, h0);
    a.connect();
    ASSERT_TRUE(runUntil([&] { return h0.logged("joined srun's rendezvous"); }));
    a.leave();
    EXPECT_TRUE(h0.logged("served 0 fences, asked 0 and answered 0 direct-modex requests"));
    for (int i = 0; i < 50; ++i) {
        uv_run(&loop_, UV_RUN_NOWAIT);
        std::this_thread::sleep_for(std::chrono::milliseconds(2));
    }
    EXPECT_TRUE(lost_.empty());
}

// srun's hub is one thread and one libuv loop for every server, never a
// thread per node: two thousand servers join it and run a collecting
// whole-step fence (over the tree), every node getting every node's data
// in node order.
TEST_F(HubLinkTest, TwoThousandServersJoinAndFence) {
    constexpr std::uint32_t kNodes = 2048;
    std::vector<std::uint32_t> nodes(kNodes);
    std::iota(nodes.begin(), nodes.end(), 0u);
    startHub(nodes, kNodes, 16);
    std::vector<std::unique_ptr<FakeHost>> hosts;
    std::vector<hub::HubLink *> links;
    for (std::uint32_t n = 0; n < kNodes; ++n) {
        hosts.push_back(std::make_unique<FakeHost>());
        links.push_back(&link(n, *hosts.back()));
        links.back()->connect();
    }
    std::vector<Outcome> outcomes(kNodes);
    std::string expected;
    for (std::uint32_t n = 0; n < kNodes; ++n) {
        links[n]->fence(nodes, true, std::to_string(n) + ";", outcomes[n].reply());
        expected += std::to_string(n) + ";";
    }
    ASSERT_TRUE(runUntil(
        [&] {
            return std::all_of(outcomes.begin(), outcomes.end(),
                               [](const Outcome &o) { return o.status.has_value(); });
        },
        90));
    for (std::uint32_t n = 0; n < kNodes; ++n) {
        ASSERT_EQ(*outcomes[n].status, 0) << "node " << n;
        ASSERT_EQ(outcomes[n].data, expected) << "node " << n;
    }
    EXPECT_TRUE(lost_.empty());
}

// srun -v's breakdown: a leaving server hands the hub its marks, the
// server's own first, then the link's (joined, each fence, leaving), in order.
TEST_F(HubLinkTest, ALeavingServerTellsSrunWhereItsTimeWent) {
    FakeHost h0, h1;
    auto s0 = settings(0, hub_->port());
    s0.timeline.record(timeline::Mark::Running, 0, 1000);
    s0.timeline.record(timeline::Mark::Ready, 0, 2000);
    hub::HubLink a(&loop_, s0, h0, [](const std::string &) {});
    auto &b = link(1, h1);
    a.connect();
    b.connect();
    ASSERT_TRUE(runUntil([&] { return h0.logged("joined srun's rendezvous"); }));
    Outcome fa, fb;
    a.fence({0, 1}, false, "", fa.reply());
    b.fence({0, 1}, false, "", fb.reply());
    ASSERT_TRUE(runUntil([&] { return fa.status && fb.status; }));
    a.leave();
    ASSERT_TRUE(runUntil([&] {
        std::lock_guard lock(mutex_);
        return timelines_.count(0) == 1;
    }));
    std::lock_guard lock(mutex_);
    std::vector<timeline::Mark> marks;
    for (const auto &e : timelines_[0])
        marks.push_back(e.mark);
    using M = timeline::Mark;
    EXPECT_EQ(marks, (std::vector<M>{M::Running, M::Ready, M::Joined, M::FenceEntered, M::FenceDone,
                                     M::Leaving}));
    EXPECT_EQ(timelines_[0][0].usec, 1000);
    for (std::size_t i = 3; i < marks.size(); ++i)
        EXPECT_LE(timelines_[0][i - 1].usec, timelines_[0][i].usec);
    EXPECT_EQ(timelines_.count(1), 0u); // node 1 has not left
}

// The profile rendezvous: no server learns the verdict before every server
// has said whether its own entry matches its node; then all learn the same
// nodes to withhold, and srun hears each server's reason.
TEST_F(HubLinkTest, EveryServerLearnsWhichProfileEntriesAreWithheldOnceAllHaveSaid) {
    std::map<std::uint32_t, std::string> reasons;
    events_.onProfileState = [&](std::uint32_t node, bool usable, const std::string &why) {
        std::lock_guard lock(mutex_);
        reasons[node] = (usable ? "usable" : "stale: ") + why;
    };
    startHub({0, 1, 2}, 3, 16);
    std::vector<FakeHost> hosts(3);
    std::vector<std::optional<std::vector<std::uint32_t>>> verdicts(3);
    for (std::uint32_t n = 0; n < 3; ++n)
        link(n, hosts[n]).connect();
    for (std::uint32_t n = 0; n < 2; ++n)
        links_[n]->askProfileVerdict(n != 1, n == 1 ? "interface veth0 added" : "",
                                     [&verdicts, n](std::vector<std::uint32_t> withheld) {
                                         verdicts[n] = std::move(withheld);
                                     });
    ASSERT_TRUE(runUntil([&] {
        std::lock_guard lock(mutex_);
        return reasons.size() == 2;
    }));
    // A while on the loop: a verdict sent too early would arrive now.
    const auto until = std::chrono::steady_clock::now() + std::chrono::milliseconds(200);
    runUntil([&] { return std::chrono::steady_clock::now() > until; });
    EXPECT_FALSE(verdicts[0] || verdicts[1]);
    links_[2]->askProfileVerdict(true, "", [&verdicts](std::vector<std::uint32_t> withheld) {
        verdicts[2] = std::move(withheld);
    });
    ASSERT_TRUE(runUntil([&] { return verdicts[0] && verdicts[1] && verdicts[2]; }));
    for (const auto &v : verdicts)
        EXPECT_EQ(*v, std::vector<std::uint32_t>{1});
    std::lock_guard lock(mutex_);
    EXPECT_EQ(reasons[1], "stale: interface veth0 added");
    EXPECT_EQ(reasons[0], "usable");
    EXPECT_TRUE(lost_.empty());
}

// A server that never says (an older stepmap, or no profile reached it)
// does not hold the others: once the deadline after the first say passes,
// it is withheld, srun hears why, and if it speaks later it is told the same.
TEST_F(HubLinkTest, AServerThatNeverSaysIsWithheldAfterTheDeadline) {
    std::map<std::uint32_t, std::string> reasons;
    events_.onProfileState = [&](std::uint32_t node, bool usable, const std::string &why) {
        std::lock_guard lock(mutex_);
        reasons[node] = (usable ? "usable" : "withheld: ") + why;
    };
    startHub({0, 1, 2}, 3, 16, 300);
    std::vector<FakeHost> hosts(3);
    std::vector<std::optional<std::vector<std::uint32_t>>> verdicts(3);
    for (std::uint32_t n = 0; n < 3; ++n)
        link(n, hosts[n]).connect();
    for (std::uint32_t n : {0u, 1u})
        links_[n]->askProfileVerdict(
            true, "", [&verdicts, n](std::vector<std::uint32_t> w) { verdicts[n] = std::move(w); });
    ASSERT_TRUE(runUntil([&] { return verdicts[0] && verdicts[1]; }));
    EXPECT_EQ(*verdicts[0], std::vector<std::uint32_t>{2});
    EXPECT_EQ(*verdicts[1], std::vector<std::uint32_t>{2});
    {
        std::lock_guard lock(mutex_);
        EXPECT_EQ(reasons[2], "withheld: its server did not take part in the profile rendezvous "
                              "within 300 ms of the first (no profile reached it, or it runs an "
                              "older stepmap)");
    }
    links_[2]->askProfileVerdict(
        true, "", [&verdicts](std::vector<std::uint32_t> w) { verdicts[2] = std::move(w); });
    ASSERT_TRUE(runUntil([&] { return verdicts[2].has_value(); }));
    EXPECT_EQ(*verdicts[2], std::vector<std::uint32_t>{2});
    EXPECT_TRUE(lost_.empty());
}

// The exchange counters: the server's own (fences, its clients' direct
// modex) and the link's (network bytes, requests answered for other
// nodes), logged as it leaves and sent to srun's hub.
TEST_F(HubLinkTest, ALeavingServerCountsWhatItExchanged) {
    FakeHost h0, h1;
    h0.counted.dataFences = 1;
    h0.counted.modexRemote = 1;
    auto &a = link(0, h0);
    auto &b = link(1, h1);
    a.connect();
    b.connect();
    Outcome fa, fb, m;
    a.fence({0, 1}, true, "AAA", fa.reply());
    b.fence({0, 1}, true, "B", fb.reply());
    a.directModex(1, m.reply()); // answered "data of 1", 9 bytes
    ASSERT_TRUE(runUntil([&] { return fa.status && fb.status && m.status; }));
    a.leave();
    b.leave();
    ASSERT_TRUE(runUntil([&] {
        std::lock_guard lock(mutex_);
        return exchange_.size() == 2;
    }));
    EXPECT_TRUE(h0.logged("exchange: 1 data fence (4 bytes), 0 barriers, 1 direct modex (0 "
                          "local, 1 remote), 0 answered for other nodes; network: 3 bytes sent, "
                          "13 received"));
    EXPECT_TRUE(h1.logged("exchange: 0 data fences (4 bytes), 0 barriers, 0 direct modex (0 "
                          "local, 0 remote), 1 answered for other nodes; network: 10 bytes sent, "
                          "4 received"));
    std::lock_guard lock(mutex_);
    EXPECT_EQ(exchange_[0], (timeline::ExchangeCounters{1, 0, 4, 0, 1, 0, 3, 13}));
    EXPECT_EQ(exchange_[1], (timeline::ExchangeCounters{0, 0, 4, 0, 0, 1, 10, 4}));
}

// A fence of this node alone sends nothing over the network.
TEST_F(HubLinkTest, AFenceOfThisNodeAloneCountsNoNetworkBytes) {
    FakeHost h0;
    auto &a = link(0, h0);
    Outcome f;
    a.fence({0}, true, "xy", f.reply());
    ASSERT_TRUE(f.status);
    a.leave();
    EXPECT_TRUE(h0.logged("exchange: 0 data fences (2 bytes), 0 barriers, 0 direct modex (0 "
                          "local, 0 remote), 0 answered for other nodes; network: 0 bytes sent, 0 "
                          "received"));
}

TEST_F(HubLinkTest, NoHubFailsWhatWaitsAndStopsTheServer) {
    // A port nobody listens on.
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof a;
    ASSERT_EQ(bind(fd, reinterpret_cast<sockaddr *>(&a), len), 0);
    getsockname(fd, reinterpret_cast<sockaddr *>(&a), &len);
    const int port = ntohs(a.sin_port);
    close(fd);

    FakeHost h0;
    hub::HubLink::Settings s = settings(0, port);
    s.joinRetryMs = 600;
    hub::HubLink l(&loop_, s, h0, [this](const std::string &why) { lost_[0] = why; });
    l.connect();
    Outcome f;
    l.fence({0, 1}, false, "", f.reply());
    ASSERT_TRUE(runUntil([&] { return lost_.count(0) == 1; }));
    EXPECT_EQ(lost_[0].rfind("connection to srun's rendezvous at 127.0.0.1:" +
                                 std::to_string(port) + " ended: connection failed: ",
                             0),
              0u)
        << lost_[0];
    ASSERT_TRUE(f.status);
    EXPECT_EQ(*f.status, kStatuses.lostConnection);
    EXPECT_FALSE(h0.lines.empty());
    EXPECT_EQ(h0.lines[0].rfind("could not join srun's rendezvous (connection failed: ", 0), 0u)
        << h0.lines[0];
}

// A hub that takes the connection and never says a word (its listener
// never accepts): a server stopped then waits once for the Welcome it will
// not get, and goes. (It used to wait again and again, so the server stayed
// until slurmstepd killed it.)
TEST_F(HubLinkTest, AServerStoppedBeforeAnyWelcomeStillStops) {
    int mute = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof a;
    ASSERT_EQ(bind(mute, reinterpret_cast<sockaddr *>(&a), len), 0);
    ASSERT_EQ(listen(mute, 4), 0);
    getsockname(mute, reinterpret_cast<sockaddr *>(&a), &len);

    FakeHost h0;
    auto &l = link(0, h0, ntohs(a.sin_port));
    l.connect();
    // The test takes the connection only to watch it; it sends nothing.
    int taken = -1;
    ASSERT_TRUE(
        runUntil([&] { return (taken = accept4(mute, nullptr, nullptr, SOCK_CLOEXEC)) >= 0; }, 5));
    const auto started = std::chrono::steady_clock::now();
    l.leave();
    // The link closes its end: the hub's side reads the end of the stream.
    auto closedByServer = [&] {
        pollfd p{taken, POLLIN, 0};
        char buf[64];
        return poll(&p, 1, 0) > 0 && recv(taken, buf, sizeof buf, MSG_DONTWAIT) == 0;
    };
    EXPECT_TRUE(runUntil(closedByServer, 5)) << "the server still waits for the Welcome";
    const auto took = std::chrono::duration_cast<std::chrono::milliseconds>(
        std::chrono::steady_clock::now() - started);
    EXPECT_LT(took.count(), 2000) << "the plugin's stop allows 2 s";
    close(taken);
    close(mute);
}

// A hub of the test's own on the link's loop: welcomes the server, then asks
// it for a rank it does not hold. The link refuses and the server stops.
TEST_F(HubLinkTest, ARequestForAnotherNodesRankEndsTheLink) {
    auto listener = uvnet::makeHandle(uv_tcp_init, &loop_);
    sockaddr_in addr{};
    uv_ip4_addr("127.0.0.1", 0, &addr);
    ASSERT_EQ(uv_tcp_bind(listener.get(), reinterpret_cast<const sockaddr *>(&addr), 0), 0);
    int len = sizeof addr;
    uv_tcp_getsockname(listener.get(), reinterpret_cast<sockaddr *>(&addr), &len);
    struct FakeHub {
        std::string secret;
        uvnet::FrameConnection::Ptr conn;
        std::string closed;
    } fake{secret_, nullptr, {}};
    listener->data = &fake;
    ASSERT_EQ(uv_listen(reinterpret_cast<uv_stream_t *>(listener.get()), 4,
                        [](uv_stream_t *server, int) {
                            auto *f = static_cast<FakeHub *>(server->data);
                            uvnet::FrameConnection::Callbacks cb;
                            cb.onFrames = [](uvnet::FrameConnection &c,
                                             std::vector<wire::Frame> &) {
                                // The Hello: welcome it, then ask for rank 1 (node 1's).
                                c.send(wire::MessageType::Welcome, std::string());
                                c.send(wire::MessageType::DmodexRequest,
                                       wire::encode(wire::DmodexRequestMsg{9, 1, 1}));
                            };
                            cb.onClosed = [f](uvnet::FrameConnection &, const std::string &why) {
                                f->closed = why;
                            };
                            f->conn = uvnet::FrameConnection::accept(server, f->secret, cb);
                        }),
              0);

    FakeHost h0;
    auto &a = link(0, h0, ntohs(addr.sin_port));
    a.connect();
    ASSERT_TRUE(runUntil([&] { return lost_.count(0) == 1 && !fake.closed.empty(); }));
    EXPECT_EQ(lost_[0], "connection to srun's rendezvous at 127.0.0.1:" +
                            std::to_string(ntohs(addr.sin_port)) +
                            " ended: malformed direct modex request");
    EXPECT_EQ(fake.closed, "peer closed the connection");
    EXPECT_TRUE(h0.logged("joined srun's rendezvous"));
    // Both go before fake does; TearDown's loop frees them.
    fake.conn.reset();
    listener.reset();
}

// A node whose fence tree parent cannot be joined (here node 0 tells the
// hub a port nobody listens on) sends its parts through srun's hub, which
// hands them to the parent and its results back: the fences complete. (The
// server used to stop, and srun to end the step.) Node 0 is the test's own.
TEST_F(HubLinkTest, ANodeThatCannotJoinItsTreeParentFencesThroughTheHub) {
    startHub({0, 1, 2}, 3, 2); // 0; 1 2
    struct FakeRoot {
        std::string secret;
        int port;
        std::map<std::uint32_t, wire::TreeUpMsg> ups;
        std::string closed;
        uvnet::FrameConnection::Ptr conn;
    } root{secret_, 0, {}, {}, nullptr};
    {
        int fd = socket(AF_INET, SOCK_STREAM, 0);
        sockaddr_in a{};
        a.sin_family = AF_INET;
        a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        socklen_t len = sizeof a;
        ASSERT_EQ(bind(fd, reinterpret_cast<sockaddr *>(&a), len), 0);
        getsockname(fd, reinterpret_cast<sockaddr *>(&a), &len);
        root.port = ntohs(a.sin_port);
        close(fd);
    }
    uvnet::FrameConnection::Callbacks cb;
    cb.onFrames = [&root](uvnet::FrameConnection &c, std::vector<wire::Frame> &frames) {
        for (auto &f : frames)
            if (f.type == wire::MessageType::Challenge) {
                c.send(c.channel().makeHello(0));
            } else if (f.type == wire::MessageType::Welcome) {
                c.send(wire::MessageType::TreeListen,
                       wire::encode(wire::TreeListenMsg{static_cast<std::uint32_t>(root.port)}));
            } else if (f.type == wire::MessageType::TreeRelay) {
                auto m = wire::decodeTreeRelay(f.payload);
                auto up = m ? wire::decodeTreeUp(m->payload) : std::nullopt;
                if (up)
                    root.ups[m->node] = *up;
            }
    };
    cb.onClosed = [&root](uvnet::FrameConnection &, const std::string &why) { root.closed = why; };
    root.conn = uvnet::FrameConnection::connect(&loop_, "127.0.0.1", hub_->port(), secret_, cb);

    std::vector<FakeHost> hosts(3);
    for (std::uint32_t n : {1, 2}) {
        auto s = settings(n, hub_->port());
        s.treeJoinRetryMs = 500;
        hosts[n].node = n;
        hosts[n].nodeOfRank = nodeOfRank_;
        links_.push_back(std::make_unique<hub::HubLink>(
            &loop_, s, hosts[n], [this, n](const std::string &why) { lost_[n] = why; }));
        links_.back()->connect();
    }
    std::vector<Outcome> out(3);
    links_[0]->fence({0, 1, 2}, true, "N1", out[1].reply());
    links_[1]->fence({0, 1, 2}, true, "N2", out[2].reply());
    ASSERT_TRUE(runUntil([&] { return root.ups.size() == 2; }));
    // The root's part: every node's data in node order, down through the hub.
    std::string all = "N0";
    for (std::uint32_t n : {1, 2}) {
        auto records = wire::decodeRecords(root.ups[n].records, 1, 3);
        ASSERT_TRUE(records);
        all += (*records)[0].data;
    }
    for (std::uint32_t n : {1, 2})
        root.conn->send(wire::MessageType::TreeRelay,
                        wire::encode(wire::TreeRelayMsg{
                            n, wire::encode(wire::TreeDownMsg{root.ups[n].sequence, 0, all})}));
    ASSERT_TRUE(runUntil([&] { return out[1].status && out[2].status; }));
    for (std::uint32_t n : {1, 2}) {
        EXPECT_EQ(*out[n].status, 0);
        EXPECT_EQ(out[n].data, "N0N1N2");
        EXPECT_TRUE(std::any_of(hosts[n].lines.begin(), hosts[n].lines.end(), [](auto &l) {
            return l.rfind("could not join the fence tree parent node index 0 within 500 ms", 0) ==
                   0;
        }));
    }
    EXPECT_TRUE(lost_.empty());
    EXPECT_EQ(root.closed, "");
    // A relay to a node that is no tree neighbour ends the sender's link.
    root.conn->send(wire::MessageType::TreeRelay, wire::encode(wire::TreeRelayMsg{0, "x"}));
    ASSERT_TRUE(runUntil([&] { return !root.closed.empty(); }));
    links_.clear();
    root.conn.reset();
}

// A tree parent tells the hub where it takes its children; the log says too.
TEST_F(HubLinkTest, ATreeParentLogsWhereItTakesItsChildren) {
    startHub({0, 1}, 2, 2);
    FakeHost h0, h1;
    link(0, h0).connect();
    link(1, h1).connect();
    Outcome f0, f1;
    links_[0]->fence({0, 1}, false, "", f0.reply());
    links_[1]->fence({0, 1}, false, "", f1.reply());
    ASSERT_TRUE(runUntil([&] { return f0.status && f1.status; }));
    EXPECT_TRUE(std::any_of(h0.lines.begin(), h0.lines.end(), [](auto &l) {
        return l.rfind("taking its fence tree children on port ", 0) == 0;
    }));
}

namespace {

wire::NameRequestMsg nameRequest(wire::NameOp op, std::uint32_t rank, std::vector<std::string> keys,
                                 std::vector<std::string> values = {}) {
    wire::NameRequestMsg m;
    m.op = op;
    m.rank = rank;
    m.keys = std::move(keys);
    m.values = std::move(values);
    return m;
}

} // namespace

// MPI_Comm_accept's side looks its peer's port up waiting; the connecting
// side on another node publishes it later: the hub answers the lookup then.
TEST_F(HubLinkTest, AWaitingLookupIsAnsweredWhenAnotherNodePublishes) {
    FakeHost h0, h1;
    auto &a = link(0, h0);
    auto &b = link(1, h1);
    a.connect();
    b.connect();
    std::optional<wire::NameReplyMsg> looked, published;
    bool lookedDone = false, publishedDone = false;
    auto lookup = nameRequest(wire::NameOp::Lookup, 1, {"port:connect"});
    lookup.wait = true;
    b.names(lookup, [&](std::optional<wire::NameReplyMsg> r) {
        looked = std::move(r);
        lookedDone = true;
    });
    // Let the lookup reach the hub and wait there before anything is published.
    runUntil([] { return false; }, 1);
    EXPECT_FALSE(lookedDone);
    auto publish = nameRequest(wire::NameOp::Publish, 2, {"port:connect"}, {"members"});
    publish.firstRead = true;
    a.names(publish, [&](std::optional<wire::NameReplyMsg> r) {
        published = std::move(r);
        publishedDone = true;
    });
    ASSERT_TRUE(runUntil([&] { return lookedDone && publishedDone; }));
    ASSERT_TRUE(published && looked);
    EXPECT_EQ(published->status, static_cast<std::uint8_t>(hub::NameStatus::Ok));
    EXPECT_EQ(looked->status, static_cast<std::uint8_t>(hub::NameStatus::Ok));
    ASSERT_EQ(looked->entries.size(), 1u);
    EXPECT_EQ(looked->entries[0].value, "members");
    EXPECT_EQ(looked->entries[0].rank, 2u);
}

TEST_F(HubLinkTest, AWaitingLookupTimesOut) {
    FakeHost h0;
    auto &a = link(0, h0);
    a.connect();
    auto lookup = nameRequest(wire::NameOp::Lookup, 0, {"never"});
    lookup.wait = true;
    lookup.timeoutSec = 1;
    std::optional<wire::NameReplyMsg> looked;
    bool done = false;
    a.names(lookup, [&](std::optional<wire::NameReplyMsg> r) {
        looked = std::move(r);
        done = true;
    });
    ASSERT_TRUE(runUntil([&] { return done; }, 10));
    ASSERT_TRUE(looked);
    EXPECT_EQ(looked->status, static_cast<std::uint8_t>(hub::NameStatus::TimedOut));
}

// A server may publish only as its own ranks: naming another node's rank
// ends its link (srun ends the step), as any malformed request does.
TEST_F(HubLinkTest, PublishingAsAnotherNodesRankEndsTheLink) {
    FakeHost h0;
    auto &a = link(0, h0);
    a.connect();
    bool done = false;
    std::optional<wire::NameReplyMsg> reply;
    a.names(nameRequest(wire::NameOp::Publish, 1, {"k"}, {"v"}),
            [&](std::optional<wire::NameReplyMsg> r) {
                reply = std::move(r);
                done = true;
            });
    ASSERT_TRUE(runUntil([&] { return done; }));
    EXPECT_FALSE(reply);
    EXPECT_TRUE(lost_.count(0));
}

// What a rank asked for that the step does not serve reaches srun's
// terminal, at most kMaxNoticesPerServer lines from one server.
TEST_F(HubLinkTest, NoticesReachSrunAndAreBoundedPerServer) {
    FakeHost h0;
    auto &a = link(0, h0);
    a.connect();
    for (int i = 0; i < 40; ++i)
        a.notice(2, "spawn refused " + std::to_string(i));
    const auto bound = hub::RendezvousHub::kMaxNoticesPerServer;
    ASSERT_TRUE(runUntil([&] { return hubSaw().size() >= bound; }));
    runUntil([] { return false; }, 1); // more would have arrived by now
    const auto saw = hubSaw();
    ASSERT_EQ(saw.size(), bound);
    EXPECT_EQ(saw[0], "notice 2 spawn refused 0");
    EXPECT_TRUE(lost_.empty());
}

// A fence that outlives the deadline ends the step, naming the nodes that
// never entered it; the nodes that did are not named.
TEST_F(HubLinkTest, AFenceOutlivingTheDeadlineNamesTheNodesThatNeverEnteredIt) {
    fenceTimeoutSec_ = 1;
    nodeNames_ = {"n1", "n2", "n3"};
    startHub({0, 1, 2}, 3, 16); // the tree: whole-step fences never pass the hub
    FakeHost h0, h1, h2;
    auto &a = link(0, h0);
    auto &b = link(1, h1);
    link(2, h2).connect(); // joined, but its ranks never reach the fence
    a.connect();
    b.connect();
    Outcome first, second;
    a.fence({0, 1, 2}, false, {}, first.reply());
    b.fence({0, 1, 2}, false, {}, second.reply());
    auto failed = [&] {
        for (const auto &line : hubSaw())
            if (line.rfind("failure ", 0) == 0)
                return true;
        return false;
    };
    ASSERT_TRUE(runUntil(failed, 10));
    std::string failure;
    for (const auto &line : hubSaw())
        if (line.rfind("failure ", 0) == 0)
            failure = line;
    EXPECT_EQ(failure, "failure a fence of 3 nodes did not complete in 1 s (fence_timeout=): n3 "
                       "has not entered it (a rank there has not reached MPI_Init's exchange "
                       "or the fence, e.g. MPI_Barrier, the others wait in)");
    bool told = false;
    for (const auto &line : h0.lines)
        told = told || line.find("has not completed in 1 s; asking srun which nodes never "
                                 "entered it") != std::string::npos;
    EXPECT_TRUE(told);
    links_.clear(); // their fences fail now, logging to the hosts of this test
}

TEST_F(HubLinkTest, AFenceThatCompletesInTimeEndsNothing) {
    fenceTimeoutSec_ = 1;
    startHub({0, 1}, 2, 16);
    FakeHost h0, h1;
    auto &a = link(0, h0);
    auto &b = link(1, h1);
    a.connect();
    b.connect();
    Outcome first, second;
    a.fence({0, 1}, false, {}, first.reply());
    b.fence({0, 1}, false, {}, second.reply());
    ASSERT_TRUE(runUntil([&] { return first.status && second.status; }));
    runUntil([] { return false; }, 2); // past the deadline
    for (const auto &line : hubSaw())
        EXPECT_NE(line.rfind("failure ", 0), 0u) << line;
}

// A spawn through the real hub: the rank's link asks, srun (the events)
// starts step 1, whose server joins as a guest with its own key, says its
// ranks started, and the rank gets the children's namespace; then both
// steps meet in a job-wide barrier that names them. A guest with the
// job's own secret instead of its key never joins.
TEST_F(HubLinkTest, ASpawnedStepsServerJoinsWithItsOwnKeyAndMeetsItsSpawner) {
    std::vector<std::uint32_t> spawned;
    events_.onSpawn = [&](std::uint32_t index, const wire::SpawnRequestMsg &, const std::string &) {
        std::lock_guard lock(mutex_);
        spawned.push_back(index);
    };
    hub::RendezvousHub::Settings s;
    s.host = "127.0.0.1";
    s.nspace = "parent.ns";
    auto started = hub::RendezvousHub::start({0, 1, 0, 1}, 2, secret_, events_, s);
    ASSERT_TRUE(started) << started.error().message;
    hub_ = std::move(started).value();
    nodeOfRank_ = {0, 1, 0, 1};
    nodeCount_ = 2;

    FakeHost h0, h1, guest, impostor;
    auto &parent = link(0, h0);
    link(1, h1).connect();
    parent.connect();
    std::optional<wire::SpawnReplyMsg> reply;
    bool answered = false;
    wire::SpawnRequestMsg request;
    request.rank = 0;
    request.parentNspace = "parent.ns";
    request.apps.push_back({"./child", {"./child"}, {}, "/tmp", 1, {}});
    parent.spawn(request, [&](std::optional<wire::SpawnReplyMsg> r) {
        reply = std::move(r);
        answered = true;
    });
    ASSERT_TRUE(runUntil([&] {
        std::lock_guard lock(mutex_);
        return !spawned.empty();
    }));
    ASSERT_EQ(spawned[0], 1u);

    // Step 1: one rank on one node.
    LaunchPlan childPlan;
    childPlan.nodes = {PlannedNode{"n3", 1, {}}};
    childPlan.ranks.resize(1);
    const std::string planText = encodePlan(childPlan);
    auto guestSettings = settings(hub::jobWide(1, 0), hub_->port());
    guestSettings.secret = hub::guestKey(secret_, 1);
    guestSettings.nodeCount = 1;
    auto wrongSettings = guestSettings;
    wrongSettings.secret = secret_; // the job's secret is not step 1's key
    wrongSettings.joinRetryMs = 200;
    impostor.node = hub::jobWide(1, 0);
    links_.push_back(std::make_unique<hub::HubLink>(
        &loop_, wrongSettings, impostor, [this](const std::string &why) { lost_[99] = why; }));
    auto &wrong = *links_.back();
    wrong.connect();
    ASSERT_TRUE(runUntil([&] { return lost_.count(99) > 0; }));

    guest.node = hub::jobWide(1, 0);
    links_.push_back(std::make_unique<hub::HubLink>(
        &loop_, guestSettings, guest, [this](const std::string &why) { lost_[100] = why; }));
    auto &child = *links_.back();
    child.guestStep({"child.ns", "7.1", planText, false});
    child.connect();
    child.guestStep({"child.ns", "7.1", {}, true});
    ASSERT_TRUE(runUntil([&] { return answered; }));
    ASSERT_TRUE(reply);
    EXPECT_TRUE(reply->ok) << reply->message;
    EXPECT_EQ(reply->nspace, "child.ns");
    EXPECT_EQ(reply->index, 1u);

    std::optional<wire::JobBarrierDoneMsg> fromParent, fromChild;
    const wire::JobBarrierMsg barrier{
        "connect", {{"child.ns", hub::kAllRanks}, {"parent.ns", 0}}, false, {}};
    parent.jobBarrier(barrier, [&](auto m) { fromParent = std::move(m); });
    child.jobBarrier(barrier, [&](auto m) { fromChild = std::move(m); });
    ASSERT_TRUE(runUntil([&] { return fromParent && fromChild; }));
    EXPECT_TRUE(fromParent->ok) << fromParent->message;
    EXPECT_TRUE(fromChild->ok) << fromChild->message;
    ASSERT_EQ(fromChild->steps.size(), 2u);
    EXPECT_EQ(fromChild->steps[0].nspace, "parent.ns");
    EXPECT_EQ(fromChild->steps[1].nspace, "child.ns");
    EXPECT_EQ(fromChild->steps[1].plan, planText);
}

TEST_F(HubLinkTest, GroupConstructsGetOneContextIdPerGroupTheSameOnEveryMember) {
    links_.clear();
    hub_.reset();
    hub::RendezvousHub::Settings s;
    s.host = "127.0.0.1";
    s.nspace = "stepmap.test";
    auto started = hub::RendezvousHub::start({0, 1, 0, 1}, 2, secret_, events_, s);
    ASSERT_TRUE(started) << started.error().message;
    hub_ = std::move(started).value();
    FakeHost h0, h1;
    auto &a = link(0, h0);
    auto &b = link(1, h1);
    a.connect();
    b.connect();
    // Two groups over the same processes, told apart by their ids, and a
    // third that asks for no context id.
    auto group = [](const std::string &label, bool assign) {
        wire::JobBarrierMsg m{label, {{"stepmap.test", 0}, {"stepmap.test", 1}}, true, label};
        m.assignContextId = assign;
        return m;
    };
    std::map<std::string, std::optional<wire::JobBarrierDoneMsg>> atA, atB;
    for (const char *label : {"group one", "group two", "group plain"}) {
        const bool assign = std::string(label) != "group plain";
        a.jobBarrier(group(label, assign), [&, label](auto m) { atA[label] = std::move(m); });
        b.jobBarrier(group(label, assign), [&, label](auto m) { atB[label] = std::move(m); });
    }
    ASSERT_TRUE(runUntil([&] { return atA.size() == 3 && atB.size() == 3; }));
    for (const char *label : {"group one", "group two", "group plain"}) {
        ASSERT_TRUE(atA[label] && atB[label]) << label;
        EXPECT_TRUE(atA[label]->ok) << atA[label]->message;
        EXPECT_EQ(atA[label]->contextId, atB[label]->contextId) << label;
        EXPECT_EQ(atA[label]->data, std::string(label) + label) << "both nodes' data";
    }
    EXPECT_NE(atA["group one"]->contextId, 0u);
    EXPECT_NE(atA["group two"]->contextId, 0u);
    EXPECT_NE(atA["group one"]->contextId, atA["group two"]->contextId);
    EXPECT_EQ(atA["group plain"]->contextId, 0u);
}

// Joining through the tree (hub/hub_relay.hpp): every node below the root's
// children reaches srun through its tree parent, so srun takes the root and
// its fan-out children only.
namespace {

// A port nobody listens on now (the kernel's pick, let go at once).
int freePort() {
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof a;
    bind(fd, reinterpret_cast<sockaddr *>(&a), sizeof a);
    getsockname(fd, reinterpret_cast<sockaddr *>(&a), &len);
    close(fd);
    return ntohs(a.sin_port);
}

class RelayTest : public HubLinkTest {
public:
    // nodes servers, one rank each, fan-out fanOut; each takes its relayed
    // children on a port of its own (they share one machine here).
    void startRelayedStep(std::uint32_t nodes, std::uint32_t fanOut) {
        std::vector<std::uint32_t> ranks(nodes);
        std::iota(ranks.begin(), ranks.end(), 0u);
        startHub(ranks, nodes, fanOut);
        fanOut_ = fanOut;
        ports_.clear();
        for (std::uint32_t n = 0; n < nodes; ++n)
            ports_.push_back(freePort());
        hosts_.clear();
        for (std::uint32_t n = 0; n < nodes; ++n)
            hosts_.push_back(std::make_unique<FakeHost>());
    }
    hub::HubLink &relayedLink(std::uint32_t node) {
        auto s = settings(node, hub_->port());
        s.relayFanOut = fanOut_;
        s.relayListenPort = ports_[node];
        s.relayWaitMs = 400;
        hub::TreeShape shape(nodeCount_, fanOut_);
        if (shape.joinsThroughParent(node)) {
            s.relayHost = "127.0.0.1";
            s.relayPort = ports_[shape.parentOf(node)];
        }
        hosts_[node]->node = node;
        hosts_[node]->nodeOfRank = nodeOfRank_;
        links_.push_back(std::make_unique<hub::HubLink>(
            &loop_, s, *hosts_[node], [this, node](const std::string &why) { lost_[node] = why; }));
        return *links_.back();
    }
    // A collecting fence of every node; each node's result.
    std::vector<std::string> wholeFence(const std::vector<std::uint32_t> &who) {
        std::vector<std::uint32_t> nodes(nodeCount_);
        std::iota(nodes.begin(), nodes.end(), 0u);
        std::vector<Outcome> out(who.size());
        for (std::size_t i = 0; i < who.size(); ++i)
            links_[i]->fence(nodes, true, std::to_string(who[i]) + ";", out[i].reply());
        runUntil(
            [&] { return std::all_of(out.begin(), out.end(), [](auto &o) { return o.status; }); });
        std::vector<std::string> seen;
        for (auto &o : out)
            seen.push_back(std::to_string(o.status.value_or(1)) + " " + o.data);
        return seen;
    }
    bool joinedThroughParent(std::uint32_t node) const {
        return hosts_[node]->logged("joined srun's rendezvous through its tree parent");
    }

    std::uint32_t fanOut_ = 2;
    std::vector<int> ports_;
    std::vector<std::unique_ptr<FakeHost>> hosts_;
};

} // namespace

TEST_F(RelayTest, SrunTakesTheRootAndItsChildrenTheRestJoinThroughTheirParent) {
    // 0; 1 2; 3 4 | 5 6; 7 8 | 9 under node 3 (depth 3).
    startRelayedStep(10, 2);
    for (std::uint32_t n = 0; n < 10; ++n)
        relayedLink(n).connect();
    std::vector<std::uint32_t> all(10);
    std::iota(all.begin(), all.end(), 0u);
    const auto seen = wholeFence(all);
    for (std::uint32_t n = 0; n < 10; ++n)
        EXPECT_EQ(seen[n], "0 0;1;2;3;4;5;6;7;8;9;") << "node " << n;
    EXPECT_EQ(hub_->directJoins(), 3u);
    for (std::uint32_t n = 3; n < 10; ++n)
        EXPECT_TRUE(joinedThroughParent(n)) << "node " << n;
    // The relays told srun of the seven joins below them together: a
    // frame per subtree that came in at once, not one per server.
    EXPECT_GE(hub_->relayedJoinFrames(), 2u);
    EXPECT_LT(hub_->relayedJoinFrames(), 7u);
    EXPECT_FALSE(joinedThroughParent(1));
    // What goes through srun still does, both ways, from any depth: a fence
    // of a few nodes, a direct modex srun routes, an abort.
    Outcome part9, part4;
    links_[9]->fence({4, 9}, true, "n9", part9.reply());
    links_[4]->fence({4, 9}, true, "n4", part4.reply());
    Outcome asked;
    links_[9]->directModex(5, asked.reply());
    links_[8]->abort(8, 3, "bad input");
    ASSERT_TRUE(runUntil([&] { return part9.status && part4.status && asked.status; }));
    EXPECT_EQ(part9.data, "n4n9");
    EXPECT_EQ(*asked.status, 0);
    EXPECT_EQ(asked.data, "data of 5");
    ASSERT_TRUE(runUntil([&] {
        auto saw = hubSaw();
        return std::find(saw.begin(), saw.end(), "abort 8 3 bad input") != saw.end();
    }));
    EXPECT_TRUE(lost_.empty());
    // srun ending the step reaches every server through the relays.
    std::thread stopper([this] { hub_->shutdown(0, "step done"); });
    bool ended = runUntil([&] { return lost_.size() == 10; });
    stopper.join();
    ASSERT_TRUE(ended) << lost_.size();
    for (std::uint32_t n = 0; n < 10; ++n)
        EXPECT_EQ(lost_[n], "srun ends the step: step done") << "node " << n;
    // Then each server leaves, and nothing of the links keeps its loop
    // running (a relay's port, its sweep, a child's wait for a welcome):
    // the server's process ends at once, not when a timer fires.
    for (auto &l : links_)
        l->leave();
    const auto left = std::chrono::steady_clock::now();
    EXPECT_TRUE(runUntil([&] { return !uv_loop_alive(&loop_); }, 5));
    EXPECT_LT(std::chrono::steady_clock::now() - left, std::chrono::milliseconds(500));
}

TEST_F(RelayTest, AChildWhoseParentTakesNobodyJoinsSrunDirectly) {
    startRelayedStep(5, 1); // a chain: 0 1 2 3 4
    // Node 2's relay port is someone else's: node 2 cannot take node 3,
    // which joins srun itself; node 4 still goes through node 3.
    int squatter = socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    a.sin_port = htons(static_cast<std::uint16_t>(ports_[2]));
    ASSERT_EQ(bind(squatter, reinterpret_cast<sockaddr *>(&a), sizeof a), 0);
    ASSERT_EQ(listen(squatter, 8), 0);
    for (std::uint32_t n = 0; n < 5; ++n)
        relayedLink(n).connect();
    const auto seen = wholeFence({0, 1, 2, 3, 4});
    for (auto &s : seen)
        EXPECT_EQ(s, "0 0;1;2;3;4;");
    close(squatter);
    EXPECT_EQ(hub_->directJoins(), 3u); // 0, 1 and 3
    EXPECT_TRUE(joinedThroughParent(2));
    EXPECT_FALSE(joinedThroughParent(3));
    EXPECT_TRUE(joinedThroughParent(4));
    EXPECT_TRUE(hosts_[3]->logged("joined srun's rendezvous"));
    EXPECT_TRUE(lost_.empty());
}

TEST_F(RelayTest, ChildrenOfAParentThatLeavesFirstJoinSrunDirectly) {
    startRelayedStep(4, 1); // 0 1 2 3: 2 through 1, 3 through 2
    for (std::uint32_t n = 0; n < 4; ++n)
        relayedLink(n).connect();
    ASSERT_EQ(wholeFence({0, 1, 2, 3})[3], "0 0;1;2;3;");
    // Node 1's tasks end first: it leaves; node 2 (and with it node 3,
    // still through node 2) stay in the step.
    links_[1]->leave();
    ASSERT_TRUE(
        runUntil([&] { return hosts_[2]->logged("joined srun's rendezvous again, directly"); }));
    Outcome f0, f2, f3;
    links_[0]->fence({0, 2, 3}, true, "a", f0.reply());
    links_[2]->fence({0, 2, 3}, true, "b", f2.reply());
    links_[3]->fence({0, 2, 3}, true, "c", f3.reply());
    ASSERT_TRUE(runUntil([&] { return f0.status && f2.status && f3.status; }))
        << ::testing::PrintToString(hosts_[2]->lines) << ::testing::PrintToString(hosts_[3]->lines)
        << ::testing::PrintToString(hosts_[1]->lines) << ::testing::PrintToString(hubSaw());
    EXPECT_EQ(f3.data, "abc");
    EXPECT_EQ(*f3.status, 0);
    links_[3]->rankExited(3, 7);
    ASSERT_TRUE(runUntil([&] {
        auto saw = hubSaw();
        return std::find(saw.begin(), saw.end(), "exit 3 7") != saw.end();
    }));
    for (auto &line : hubSaw())
        EXPECT_EQ(line.rfind("failure", 0), std::string::npos) << line;
    EXPECT_TRUE(lost_.empty());
}

TEST_F(RelayTest, ARelayThatIsLostTakesItsChildrenAndSrunNamesIt) {
    startRelayedStep(7, 2); // 3, 4 through 1; 5, 6 through 2
    for (std::uint32_t n = 0; n < 7; ++n)
        relayedLink(n).connect();
    ASSERT_EQ(wholeFence({0, 1, 2, 3, 4, 5, 6})[0], "0 0;1;2;3;4;5;6;");
    links_[1].reset(); // node 1's server dies
    ASSERT_TRUE(runUntil([&] {
        for (auto &line : hubSaw())
            if (line.rfind("failure lost the stepmap server of node index 1:", 0) == 0)
                return true;
        return false;
    }));
    bool named = false;
    for (auto &line : hubSaw())
        named = named || line.find("with the link of 2 servers that joined srun through it") !=
                             std::string::npos;
    EXPECT_TRUE(named);
}

TEST_F(RelayTest, AStrangerOnTheRelayPortCannotJoinAsAChild) {
    startRelayedStep(4, 1);
    for (std::uint32_t n = 0; n < 4; ++n)
        relayedLink(n).connect();
    ASSERT_EQ(wholeFence({0, 1, 2, 3})[0], "0 0;1;2;3;");
    // Without the step's secret: the relay drops it, nothing reaches srun.
    std::string other = *wire::decodeSecretHex(wire::generateSecretHex());
    FakeHost intruder;
    auto s = settings(2, ports_[1]);
    s.secret = other;
    s.joinRetryMs = 300;
    std::optional<std::string> gone;
    hub::HubLink bad(&loop_, s, intruder, [&](const std::string &why) { gone = why; });
    bad.connect();
    ASSERT_TRUE(runUntil([&] { return gone.has_value(); }));
    Outcome f[4];
    for (std::uint32_t n = 0; n < 4; ++n)
        links_[n]->fence({0, 1, 2, 3}, true, std::to_string(n), f[n].reply());
    ASSERT_TRUE(runUntil([&] { return f[0].status && f[3].status; }));
    EXPECT_EQ(f[3].data, "0123");
    for (auto &line : hubSaw())
        EXPECT_EQ(line.rfind("failure", 0), std::string::npos) << line;
}

// srun takes relayed joins only from a server's own link, and only of its
// own subtree: a server cannot join others in its place.
TEST_F(RelayTest, SrunTakesRelayedJoinsOnlyOfTheSendersSubtree) {
    startRelayedStep(10, 2); // 0; 1 2; 3 4 | 5 6; ...
    struct Raw {
        std::string closed;
        bool welcomed = false;
        uvnet::FrameConnection::Ptr conn;
    } raw;
    uvnet::FrameConnection::Callbacks cb;
    cb.onFrames = [&raw](uvnet::FrameConnection &c, std::vector<wire::Frame> &frames) {
        for (auto &f : frames)
            if (f.type == wire::MessageType::Challenge)
                c.send(c.channel().makeHello(1));
            else if (f.type == wire::MessageType::Welcome)
                raw.welcomed = true;
    };
    cb.onClosed = [&raw](uvnet::FrameConnection &, const std::string &why) { raw.closed = why; };
    raw.conn = uvnet::FrameConnection::connect(&loop_, "127.0.0.1", hub_->port(), secret_, cb);
    ASSERT_TRUE(runUntil([&] { return raw.welcomed; }));
    raw.conn->send(wire::MessageType::JoinedBelow,
                   wire::encode(wire::JoinedBelowMsg{{{3, "127.0.0.1"}, {7, "127.0.0.1"}}}));
    ASSERT_TRUE(runUntil([&] { return joinedHub().count(7) > 0; }));
    EXPECT_EQ(joinedHub(), (std::set<std::uint32_t>{1, 3, 7}));
    EXPECT_EQ(raw.closed, "");
    // Node 2 is its sibling, not below it: the link ends, node 2 not in.
    raw.conn->send(wire::MessageType::JoinedBelow,
                   wire::encode(wire::JoinedBelowMsg{{{2, "127.0.0.1"}}}));
    ASSERT_TRUE(runUntil([&] { return !raw.closed.empty(); }));
    EXPECT_EQ(joinedHub().count(2), 0u);
    raw.conn.reset();
}
