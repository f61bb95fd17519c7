// The srun-side rendezvous hub with real TCP connections on loopback: node
// servers that know the step secret complete fences and direct modex
// through it; a peer without the secret is dropped and changes nothing.

#include "../unit/protocol/reply_outcome.hpp"
#include "protocol/hub/rendezvous_hub.hpp"
#include "protocol/uv/frame_connection.hpp"
#include "protocol/wire/payloads.hpp"
#include "protocol/wire/secret.hpp"

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>
#include <uv.h>

#include <atomic>
#include <chrono>
#include <map>
#include <mutex>
#include <thread>

using namespace stepmap;
using namespace stepmap::wire;

namespace {

// A fake node server: connects, answers the challenge, records frames.
struct Peer {
    uvnet::FrameConnection::Ptr conn;
    std::uint32_t node;
    bool helloSent = false;
    bool ready = false; // the hub accepted the hello
    bool closed = false;
    std::string closeReason;
    std::vector<Frame> frames;

    Peer(uv_loop_t *loop, int port, const std::string &secret, std::uint32_t n) : node(n) {
        uvnet::FrameConnection::Callbacks cb;
        cb.onFrames = [this](uvnet::FrameConnection &c, std::vector<Frame> &fs) {
            for (auto &f : fs) {
                if (f.type == MessageType::Challenge) {
                    c.send(c.channel().makeHello(node));
                    helloSent = true;
                } else if (f.type == MessageType::Welcome) {
                    ready = true;
                } else
                    frames.push_back(f);
            }
        };
        cb.onClosed = [this](uvnet::FrameConnection &, const std::string &why) {
            closed = true;
            closeReason = why;
            conn = nullptr;
        };
        conn = uvnet::FrameConnection::connect(loop, "127.0.0.1", port, secret, cb);
    }
    // conn, if still open, closes when the peer goes and frees itself once
    // the loop runs again (TearDown's uv_close of the bare handle would leak it).
};

hub::RendezvousHub::Settings settings() {
    hub::RendezvousHub::Settings s;
    s.host = "127.0.0.1";
    return s;
}

// A plain TCP connection to 127.0.0.x:port (no stepmap protocol); -1 if
// refused.
int rawConnect(int port, const char *ip = "127.0.0.1") {
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_port = htons(static_cast<std::uint16_t>(port));
    inet_pton(AF_INET, ip, &a.sin_addr);
    if (connect(fd, reinterpret_cast<sockaddr *>(&a), sizeof a) != 0) {
        close(fd);
        return -1;
    }
    return fd;
}

// True once the peer closed fd (reads drain whatever it sent first).
bool closedByPeer(int fd, int timeoutMs) {
    auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeoutMs);
    char buf[256];
    while (std::chrono::steady_clock::now() < deadline) {
        pollfd p{fd, POLLIN, 0};
        if (poll(&p, 1, 50) > 0) {
            ssize_t n = recv(fd, buf, sizeof buf, 0);
            if (n <= 0)
                return true;
        }
    }
    return false;
}

// Closes whatever the test left on loop and waits until libuv is done.
void closeLoop(uv_loop_t *loop) {
    uv_walk(
        loop,
        [](uv_handle_t *h, void *) {
            if (!uv_is_closing(h))
                uv_close(h, nullptr);
        },
        nullptr);
    while (uv_loop_close(loop) == UV_EBUSY)
        uv_run(loop, UV_RUN_NOWAIT);
}

template <class Pred> bool runUntil(uv_loop_t *loop, Pred done) {
    return protocol_test::runLoopUntil(loop, done);
}

class HubTest : public ::testing::Test {
protected:
    void SetUp() override {
        uv_loop_init(&loop);
        secret = *decodeSecretHex(generateSecretHex());
        hub::RendezvousHub::Events events;
        events.onAbort = [this](std::uint32_t rank, int status, const std::string &) {
            abortRank = static_cast<int>(rank);
            abortStatus = status;
        };
        events.onFailure = [this](const std::string &) { ++failures; };
        events.onJoined = [this](std::uint32_t node) { joinedMask |= 1 << node; };
        // Ranks 0,2 on node 0; ranks 1,3 on node 1.
        auto started = hub::RendezvousHub::start({0, 1, 0, 1}, 2, secret, events, settings());
        ASSERT_TRUE(started) << started.error().message;
        hub = std::move(started).value();
    }
    void TearDown() override {
        hub.reset();
        closeLoop(&loop);
    }

    uv_loop_t loop{};
    std::string secret;
    std::unique_ptr<hub::RendezvousHub> hub;
    std::atomic<int> abortRank{-1}, abortStatus{-1}, failures{0}, joinedMask{0};
};

} // namespace

TEST_F(HubTest, FenceReturnsEveryNodesDataToEveryNode) {
    Peer a(&loop, hub->port(), secret, 0), b(&loop, hub->port(), secret, 1);
    ASSERT_TRUE(runUntil(&loop, [&] { return a.ready && b.ready; }));
    a.conn->send(MessageType::Fence, encode(FenceMsg{"0,1,#0", {0, 1}, true, "AA"}));
    b.conn->send(MessageType::Fence, encode(FenceMsg{"0,1,#0", {0, 1}, true, "BB"}));
    ASSERT_TRUE(runUntil(&loop, [&] { return !a.frames.empty() && !b.frames.empty(); }));
    for (Peer *p : {&a, &b}) {
        ASSERT_EQ(p->frames[0].type, MessageType::FenceDone);
        auto done = decodeFenceDone(p->frames[0].payload);
        ASSERT_TRUE(done);
        EXPECT_EQ(done->fenceId, "0,1,#0");
        EXPECT_EQ(done->data, "AABB");
    }
}

TEST_F(HubTest, EachJoinedServerIsReported) {
    Peer a(&loop, hub->port(), secret, 1);
    ASSERT_TRUE(runUntil(&loop, [&] { return a.ready; }));
    EXPECT_EQ(joinedMask.load(), 0b10);
    Peer intruder(&loop, hub->port(), std::string(32, 'x'), 0);
    runUntil(&loop, [&] { return intruder.closed; });
    EXPECT_EQ(joinedMask.load(), 0b10); // no secret: not a server
    Peer b(&loop, hub->port(), secret, 0);
    ASSERT_TRUE(runUntil(&loop, [&] { return b.ready; }));
    EXPECT_EQ(joinedMask.load(), 0b11);
}

TEST_F(HubTest, TheHubTellsEachChildWhereItsTreeParentListens) {
    // Node 1 joins first; node 0 (the root, its parent) then says where it
    // listens, as seen from the hub: node 1 learns it once both are known.
    Peer child(&loop, hub->port(), secret, 1);
    ASSERT_TRUE(runUntil(&loop, [&] { return child.ready; }));
    Peer root(&loop, hub->port(), secret, 0);
    ASSERT_TRUE(runUntil(&loop, [&] { return root.ready; }));
    root.conn->send(MessageType::TreeListen, encode(TreeListenMsg{4242}));
    ASSERT_TRUE(runUntil(&loop, [&] { return !child.frames.empty(); }));
    ASSERT_EQ(child.frames[0].type, MessageType::TreeParent);
    auto where = decodeTreeParent(child.frames[0].payload);
    ASSERT_TRUE(where);
    EXPECT_EQ(where->parentNode, 0u);
    EXPECT_EQ(where->host, "127.0.0.1");
    EXPECT_EQ(where->port, 4242u);
    EXPECT_EQ(failures.load(), 0);
}

TEST_F(HubTest, ATreeListenerWithoutChildrenIsMalformed) {
    // Node 1 of two has no children: its listener is a lie, and the loss of
    // its server a failure of the step.
    Peer leaf(&loop, hub->port(), secret, 1);
    ASSERT_TRUE(runUntil(&loop, [&] { return leaf.ready; }));
    leaf.conn->send(MessageType::TreeListen, encode(TreeListenMsg{4242}));
    ASSERT_TRUE(runUntil(&loop, [&] { return leaf.closed && failures.load() == 1; }));
}

TEST_F(HubTest, DirectModexIsRoutedToTheOwnerAndBack) {
    Peer a(&loop, hub->port(), secret, 0), b(&loop, hub->port(), secret, 1);
    ASSERT_TRUE(runUntil(&loop, [&] { return a.ready && b.ready; }));
    // Give the hub time to see both hellos before asking for rank 3 (node 1).
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    uv_run(&loop, UV_RUN_NOWAIT);
    a.conn->send(MessageType::DmodexRequest, encode(DmodexRequestMsg{42, 0, 3}));
    ASSERT_TRUE(runUntil(&loop, [&] { return !b.frames.empty(); }));
    auto req = decodeDmodexRequest(b.frames[0].payload);
    ASSERT_TRUE(req);
    EXPECT_EQ(req->rank, 3u);
    b.conn->send(MessageType::DmodexResponse,
                 encode(DmodexResponseMsg{req->requestId, req->originNode, 0, "rank3-data"}));
    ASSERT_TRUE(runUntil(&loop, [&] { return !a.frames.empty(); }));
    auto resp = decodeDmodexResponse(a.frames[0].payload);
    ASSERT_TRUE(resp);
    EXPECT_EQ(resp->requestId, 42u);
    EXPECT_EQ(resp->data, "rank3-data");
}

TEST_F(HubTest, DirectModexWaitsForTheOwnersServer) {
    // Rank 3 lives on node 1, whose server connects only after the request.
    Peer a(&loop, hub->port(), secret, 0);
    ASSERT_TRUE(runUntil(&loop, [&] { return a.ready; }));
    a.conn->send(MessageType::DmodexRequest, encode(DmodexRequestMsg{7, 0, 3}));
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    uv_run(&loop, UV_RUN_NOWAIT);
    EXPECT_TRUE(a.frames.empty());
    Peer b(&loop, hub->port(), secret, 1);
    ASSERT_TRUE(runUntil(&loop, [&] { return !b.frames.empty(); }));
    auto req = decodeDmodexRequest(b.frames[0].payload);
    ASSERT_TRUE(req);
    EXPECT_EQ(req->requestId, 7u);
    EXPECT_EQ(req->rank, 3u);
}

TEST(HubDeadline, AServerThatNeverConnectsIsAFailure) {
    std::atomic<int> failures{0};
    hub::RendezvousHub::Events events;
    events.onFailure = [&](const std::string &why) {
        EXPECT_NE(why.find("node indices 0,1 did not reach srun"), std::string::npos) << why;
        ++failures;
    };
    auto s = settings();
    s.connectDeadlineSec = 1;
    auto started = hub::RendezvousHub::start({0, 1}, 2, std::string(32, 's'), events, s);
    ASSERT_TRUE(started) << started.error().message;
    auto hub = std::move(started).value();
    auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
    while (failures.load() == 0 && std::chrono::steady_clock::now() < deadline)
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
    EXPECT_EQ(failures.load(), 1);
}

TEST_F(HubTest, AbortIsReported) {
    Peer a(&loop, hub->port(), secret, 0);
    ASSERT_TRUE(runUntil(&loop, [&] { return a.ready; }));
    a.conn->send(MessageType::Abort, encode(AbortMsg{2, 7, "bye"}));
    ASSERT_TRUE(runUntil(&loop, [&] { return abortStatus.load() >= 0; }));
    EXPECT_EQ(abortRank.load(), 2);
    EXPECT_EQ(abortStatus.load(), 7);
}

TEST_F(HubTest, PeerWithoutTheSecretIsDroppedQuietly) {
    Peer intruder(&loop, hub->port(), std::string(32, 'x'), 0);
    ASSERT_TRUE(runUntil(&loop, [&] { return intruder.closed; }));
    EXPECT_EQ(failures.load(), 0);
    // The real server of that node can still join and work.
    Peer a(&loop, hub->port(), secret, 0), b(&loop, hub->port(), secret, 1);
    ASSERT_TRUE(runUntil(&loop, [&] { return a.ready && b.ready; }));
    a.conn->send(MessageType::Fence, encode(FenceMsg{"f", {0, 1}, false, ""}));
    b.conn->send(MessageType::Fence, encode(FenceMsg{"f", {0, 1}, false, ""}));
    ASSERT_TRUE(runUntil(&loop, [&] { return !a.frames.empty() && !b.frames.empty(); }));
}

TEST_F(HubTest, LosingAServerIsAFailure) {
    {
        Peer a(&loop, hub->port(), secret, 1);
        ASSERT_TRUE(runUntil(&loop, [&] { return a.ready; }));
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
        uv_run(&loop, UV_RUN_NOWAIT);
        a.conn->close("crash");
        runUntil(&loop, [&] { return a.closed; });
    }
    ASSERT_TRUE(runUntil(&loop, [&] { return failures.load() > 0; }));
}

TEST(HubListening, BindsOnlyToTheAddressTheNodesUse) {
    auto started = hub::RendezvousHub::start({0}, 1, std::string(32, 's'), {}, settings());
    ASSERT_TRUE(started) << started.error().message;
    auto hub = std::move(started).value();
    EXPECT_EQ(hub->address(), "127.0.0.1:" + std::to_string(hub->port()));
    int ok = rawConnect(hub->port(), "127.0.0.1");
    EXPECT_GE(ok, 0);
    close(ok);
    // Another address of this host: nothing listens there.
    int other = rawConnect(hub->port(), "127.0.0.2");
    EXPECT_LT(other, 0);
    if (other >= 0)
        close(other);
}

TEST(HubListening, WithoutAnAddressListensWhereTheRouteToSlurmctldLeaves) {
    hub::RendezvousHub::Settings s;
    s.toward = "127.0.0.1"; // slurmctld on this host: the route is loopback
    auto started = hub::RendezvousHub::start({0}, 1, std::string(32, 's'), {}, s);
    ASSERT_TRUE(started) << started.error().message;
    auto hub = std::move(started).value();
    EXPECT_EQ(hub->address(), "127.0.0.1:" + std::to_string(hub->port()));
}

TEST(HubListening, StaysInsideSrunPortRange) {
    // A port that is free now.
    int probe = socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    inet_pton(AF_INET, "127.0.0.1", &a.sin_addr);
    ASSERT_EQ(bind(probe, reinterpret_cast<sockaddr *>(&a), sizeof a), 0);
    socklen_t len = sizeof a;
    getsockname(probe, reinterpret_cast<sockaddr *>(&a), &len);
    const auto port = ntohs(a.sin_port);
    close(probe);

    auto s = settings();
    s.portMin = s.portMax = port;
    auto started = hub::RendezvousHub::start({0}, 1, std::string(32, 's'), {}, s);
    ASSERT_TRUE(started) << started.error().message;
    auto hub = std::move(started).value();
    EXPECT_EQ(hub->port(), port);
    // The range is taken now: a second hub says so.
    auto second = hub::RendezvousHub::start({0}, 1, std::string(32, 's'), {}, s);
    ASSERT_FALSE(second);
    const std::string &error = second.error().message;
    EXPECT_NE(error.find("no free port in SrunPortRange " + std::to_string(port)),
              std::string::npos)
        << error;
}

TEST_F(HubTest, HugeFrameBeforeAuthenticationIsDroppedAtOnce) {
    int fd = rawConnect(hub->port());
    ASSERT_GE(fd, 0);
    // A 256 MiB frame announced by someone without the secret: dropped as
    // soon as its length is read, nothing buffered.
    const unsigned char header[] = {0x10, 0x00, 0x00, 0x00, 0x03};
    ASSERT_EQ(send(fd, header, sizeof header, MSG_NOSIGNAL), static_cast<ssize_t>(sizeof header));
    EXPECT_TRUE(closedByPeer(fd, 2000));
    close(fd);
    EXPECT_EQ(failures.load(), 0);
}

TEST_F(HubTest, IdleConnectionsDoNotLockTheServersOut) {
    std::vector<int> idle;
    for (int i = 0; i < 300; ++i) {
        int fd = rawConnect(hub->port());
        if (fd >= 0)
            idle.push_back(fd);
    }
    EXPECT_GE(idle.size(), 200u);
    Peer a(&loop, hub->port(), secret, 0), b(&loop, hub->port(), secret, 1);
    ASSERT_TRUE(runUntil(&loop, [&] { return a.ready && b.ready; }));
    a.conn->send(MessageType::Fence, encode(FenceMsg{"f", {0, 1}, false, ""}));
    b.conn->send(MessageType::Fence, encode(FenceMsg{"f", {0, 1}, false, ""}));
    ASSERT_TRUE(runUntil(&loop, [&] { return !a.frames.empty() && !b.frames.empty(); }));
    EXPECT_EQ(failures.load(), 0);
    // Most of the idle ones were let go to make room.
    int closed = 0;
    for (int fd : idle) {
        closed += closedByPeer(fd, 5) ? 1 : 0;
        close(fd);
    }
    EXPECT_GE(closed, 200);
}

TEST(HubHandshake, ASilentPeerIsClosedAfterTheDeadline) {
    auto s = settings();
    s.handshakeDeadlineMs = 300;
    auto listening = hub::RendezvousHub::start({0}, 1, std::string(32, 's'), {}, s);
    ASSERT_TRUE(listening) << listening.error().message;
    auto hub = std::move(listening).value();
    int fd = rawConnect(hub->port());
    ASSERT_GE(fd, 0);
    auto started = std::chrono::steady_clock::now();
    EXPECT_TRUE(closedByPeer(fd, 3000));
    EXPECT_GE(std::chrono::steady_clock::now() - started, std::chrono::milliseconds(250));
    close(fd);
}

// One host floods the hub with connections while the servers of 16 nodes
// join from another: the flood evicts only its own connections, so every
// server's hello is accepted (a flood used to push out servers that had
// already sent their hello).
TEST(HubFlood, AFloodFromOneHostDoesNotEvictOtherHostsServers) {
    std::vector<std::uint32_t> nodeOfRank;
    for (std::uint32_t n = 0; n < 16; ++n)
        nodeOfRank.push_back(n);
    const std::string secret = *decodeSecretHex(generateSecretHex());
    std::atomic<int> failures{0};
    hub::RendezvousHub::Events events;
    events.onFailure = [&](const std::string &) { ++failures; };
    auto started = hub::RendezvousHub::start(nodeOfRank, 16, secret, events, settings());
    ASSERT_TRUE(started) << started.error().message;
    auto hub = std::move(started).value();

    std::atomic<bool> stop{false};
    std::vector<int> flood;
    std::thread flooder([&] {
        while (!stop && flood.size() < 3000) {
            int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
            sockaddr_in from{};
            from.sin_family = AF_INET;
            inet_pton(AF_INET, "127.0.0.2", &from.sin_addr);
            sockaddr_in to{};
            to.sin_family = AF_INET;
            to.sin_port = htons(static_cast<std::uint16_t>(hub->port()));
            inet_pton(AF_INET, "127.0.0.1", &to.sin_addr);
            if (bind(fd, reinterpret_cast<sockaddr *>(&from), sizeof from) != 0 ||
                connect(fd, reinterpret_cast<sockaddr *>(&to), sizeof to) != 0) {
                close(fd);
                continue;
            }
            flood.push_back(fd);
        }
    });
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    uv_loop_t loop{};
    uv_loop_init(&loop);
    {
        std::vector<std::unique_ptr<Peer>> peers;
        for (std::uint32_t n = 0; n < 16; ++n)
            peers.push_back(std::make_unique<Peer>(&loop, hub->port(), secret, n));
        EXPECT_TRUE(runUntil(&loop, [&] {
            for (auto &p : peers)
                if (!p->ready)
                    return false;
            return true;
        }));
        for (auto &p : peers)
            EXPECT_FALSE(p->closed) << "node " << p->node << ": " << p->closeReason;
        stop = true;
        flooder.join();
        EXPECT_GT(flood.size(), 100u);
        EXPECT_EQ(failures.load(), 0);
        hub.reset(); // before the peers leave: that would be a lost server
    }
    for (int fd : flood)
        close(fd);
    closeLoop(&loop);
}

namespace {

// A hub with the limits a test sets, and what srun is told when the step
// fails (the reason names the server and the rule it broke).
class HubLimits : public ::testing::Test {
protected:
    void start(std::vector<std::uint32_t> nodeOfRank, std::uint32_t nodeCount,
               hub::RendezvousHub::Settings s) {
        uv_loop_init(&loop);
        secret = *decodeSecretHex(generateSecretHex());
        hub::RendezvousHub::Events events;
        events.onFailure = [this](const std::string &why) {
            std::lock_guard lock(mutex);
            failures.push_back(why);
        };
        auto started = hub::RendezvousHub::start(nodeOfRank, nodeCount, secret, events, s);
        ASSERT_TRUE(started) << started.error().message;
        hub = std::move(started).value();
    }
    void TearDown() override {
        hub.reset();
        closeLoop(&loop);
    }
    // True once srun was told exactly why.
    bool failedWith(const std::string &why) {
        return runUntil(&loop, [&] {
            std::lock_guard lock(mutex);
            return std::find(failures.begin(), failures.end(), why) != failures.end();
        });
    }
    std::vector<std::string> failed() {
        std::lock_guard lock(mutex);
        return failures;
    }

    uv_loop_t loop{};
    std::string secret;
    std::unique_ptr<hub::RendezvousHub> hub;
    std::mutex mutex;
    std::vector<std::string> failures;
};

} // namespace

// A fence naming a node without a server would never complete (and hold
// its data in srun until the step ends): the server that opens one is cut,
// as is one whose list is out of order or leaves itself out.
TEST_F(HubLimits, AFenceMayNameOnlyTheStepsServers) {
    start({0, 1, 0, 1}, 2, settings());
    const std::vector<std::vector<std::uint32_t>> bad = {{0, 7}, {1, 0}, {0, 0, 1}, {1}};
    for (const auto &nodes : bad) {
        Peer a(&loop, hub->port(), secret, 0);
        ASSERT_TRUE(runUntil(&loop, [&] { return a.ready; }));
        a.conn->send(MessageType::Fence, encode(FenceMsg{"f", nodes, false, ""}));
        EXPECT_TRUE(failedWith("lost the stepmap server of node index 0: fence f names nodes "
                               "that are not the step's servers, or not in order"))
            << nodes.size();
        ASSERT_TRUE(runUntil(&loop, [&] { return a.closed; }));
    }
}

TEST_F(HubLimits, TheServersOfAFenceMustAgreeOnItsNodes) {
    start({0, 1, 2}, 3, settings());
    Peer a(&loop, hub->port(), secret, 0), b(&loop, hub->port(), secret, 1);
    ASSERT_TRUE(runUntil(&loop, [&] { return a.ready && b.ready; }));
    a.conn->send(MessageType::Fence, encode(FenceMsg{"f", {0, 1}, false, ""}));
    b.conn->send(MessageType::Fence, encode(FenceMsg{"f", {0, 1, 2}, false, ""}));
    EXPECT_TRUE(failedWith("lost the stepmap server of node index 1: fence f names other nodes "
                           "than the servers that opened it"));
}

// Fences a server opened that the others have not completed stay in srun:
// only so many, and so many bytes. A completed one no longer counts.
TEST_F(HubLimits, AServerMayKeepOnlySoManyFencesOpen) {
    auto s = settings();
    s.maxOpenFencesPerServer = 3;
    start({0, 1}, 2, s);
    Peer a(&loop, hub->port(), secret, 0), b(&loop, hub->port(), secret, 1);
    ASSERT_TRUE(runUntil(&loop, [&] { return a.ready && b.ready; }));
    for (const char *id : {"f1", "f2", "f3"})
        a.conn->send(MessageType::Fence, encode(FenceMsg{id, {0, 1}, false, ""}));
    b.conn->send(MessageType::Fence, encode(FenceMsg{"f1", {0, 1}, false, ""}));
    ASSERT_TRUE(runUntil(&loop, [&] { return !a.frames.empty(); })); // f1 done
    a.conn->send(MessageType::Fence, encode(FenceMsg{"f4", {0, 1}, false, ""}));
    a.conn->send(MessageType::Fence, encode(FenceMsg{"f5", {0, 1}, false, ""}));
    EXPECT_TRUE(failedWith("lost the stepmap server of node index 0: more than 3 fences or " +
                           std::to_string(2 * std::size_t{kMaxFrameSize}) +
                           " bytes of fences open that the other servers have not completed"));
    EXPECT_EQ(failed().size(), 1u); // f4 was still allowed
}

TEST_F(HubLimits, AServerMayKeepOnlySoManyBytesInOpenFences) {
    auto s = settings();
    s.maxFenceBytesPerServer = 1000;
    start({0, 1}, 2, s);
    Peer a(&loop, hub->port(), secret, 0);
    ASSERT_TRUE(runUntil(&loop, [&] { return a.ready; }));
    a.conn->send(MessageType::Fence, encode(FenceMsg{"f1", {0, 1}, true, std::string(600, 'x')}));
    a.conn->send(MessageType::Fence, encode(FenceMsg{"f2", {0, 1}, true, std::string(600, 'x')}));
    EXPECT_TRUE(failedWith("lost the stepmap server of node index 0: more than 64 fences or 1000 "
                           "bytes of fences open that the other servers have not completed"));
}

// Requests for a server that has not joined wait in srun: only so many.
TEST_F(HubLimits, DirectModexRequestsWaitingForAServerAreCapped) {
    auto s = settings();
    s.maxWaitingRequestsPerServer = 3;
    start({0, 1, 0, 1}, 2, s);
    Peer a(&loop, hub->port(), secret, 0);
    ASSERT_TRUE(runUntil(&loop, [&] { return a.ready; }));
    for (std::uint64_t id = 1; id <= 4; ++id)
        a.conn->send(MessageType::DmodexRequest, encode(DmodexRequestMsg{id, 0, 3}));
    EXPECT_TRUE(failedWith("lost the stepmap server of node index 0: more than 3 direct-modex "
                           "requests waiting for servers that have not joined"));
}

// Fence tree messages go through the hub only between a child and its
// parent (0; 1 2; 3), either way, tagged with where they came from.
TEST_F(HubLimits, TreeRelaysGoOnlyBetweenTreeNeighbours) {
    auto s = settings();
    s.fenceFanOut = 2;
    start({0, 1, 2, 3}, 4, s);
    std::vector<std::unique_ptr<Peer>> peers;
    for (std::uint32_t n = 0; n < 4; ++n)
        peers.push_back(std::make_unique<Peer>(&loop, hub->port(), secret, n));
    ASSERT_TRUE(runUntil(&loop, [&] {
        return std::all_of(peers.begin(), peers.end(), [](auto &p) { return p->ready; });
    }));
    auto relayed = [](Peer &p) -> std::optional<TreeRelayMsg> {
        for (auto &f : p.frames)
            if (f.type == MessageType::TreeRelay)
                return decodeTreeRelay(f.payload);
        return std::nullopt;
    };
    peers[3]->conn->send(MessageType::TreeRelay, encode(TreeRelayMsg{1, "up"}));
    ASSERT_TRUE(runUntil(&loop, [&] { return relayed(*peers[1]).has_value(); }));
    EXPECT_EQ(relayed(*peers[1])->node, 3u);
    EXPECT_EQ(relayed(*peers[1])->payload, "up");
    peers[1]->conn->send(MessageType::TreeRelay, encode(TreeRelayMsg{3, "down"}));
    ASSERT_TRUE(runUntil(&loop, [&] { return relayed(*peers[3]).has_value(); }));
    EXPECT_EQ(relayed(*peers[3])->node, 1u);
    EXPECT_EQ(relayed(*peers[3])->payload, "down");
    peers[2]->conn->send(MessageType::TreeRelay, encode(TreeRelayMsg{3, "not mine"}));
    EXPECT_TRUE(failedWith("lost the stepmap server of node index 2: malformed fence tree relay"));
}

// A server that does not read what srun sends it cannot make srun hold
// more for it than the budget (here others send it direct-modex answers).
TEST_F(HubLimits, AServerThatDoesNotReadIsCut) {
    auto s = settings();
    s.maxQueuedBytesPerServer = 1u << 20;
    start({0, 1}, 2, s);
    Peer a(&loop, hub->port(), secret, 0);
    ASSERT_TRUE(runUntil(&loop, [&] { return a.ready; }));
    // Node 1's server by hand: its Hello, then it never reads again.
    int fd = rawConnect(hub->port());
    ASSERT_GE(fd, 0);
    FrameChannel channel(secret, FrameChannel::Role::Server);
    char buf[256];
    while (channel.takeFrames().empty()) {
        const ssize_t n = recv(fd, buf, sizeof buf, 0);
        ASSERT_GT(n, 0);
        ASSERT_TRUE(channel.feed(buf, static_cast<std::size_t>(n)));
    }
    const auto hello = channel.makeHello(1);
    ASSERT_EQ(send(fd, hello.data(), hello.size(), MSG_NOSIGNAL),
              static_cast<ssize_t>(hello.size()));
    const std::string big(4u << 20, 'd');
    for (int i = 0; i < 16; ++i)
        a.conn->send(MessageType::DmodexResponse, encode(DmodexResponseMsg{1, 1, 0, big}));
    EXPECT_TRUE(runUntil(&loop, [&] {
        std::lock_guard lock(mutex);
        return !failures.empty();
    }));
    auto why = failed();
    ASSERT_FALSE(why.empty());
    EXPECT_EQ(why[0].rfind("lost the stepmap server of node index 1: it does not read what srun "
                           "sends it (",
                           0),
              0u)
        << why[0];
    close(fd);
}
