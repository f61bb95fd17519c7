// The srun-side rendezvous hub with real TCP connections on loopback: node
// servers that know the step secret complete fences and direct modex
// through it; a peer without the secret is dropped and changes nothing.

#include "rendezvous_hub.hpp"
#include "uv/frame_connection.hpp"
#include "wire/payloads.hpp"
#include "wire/secret.hpp"

#include <gtest/gtest.h>
#include <uv.h>

#include <atomic>
#include <chrono>
#include <map>
#include <thread>

using namespace stepmap;
using namespace stepmap::wire;

namespace {

// A fake node server: connects, answers the challenge, records frames.
struct Peer {
    uvnet::FrameConnection *conn = nullptr;
    std::uint32_t node;
    bool ready = false; // hello sent
    bool closed = false;
    std::string closeReason;
    std::vector<Frame> frames;

    Peer(uv_loop_t *loop, int port, const std::string &secret, std::uint32_t n) : node(n) {
        uvnet::FrameConnection::Callbacks cb;
        cb.onFrames = [this](uvnet::FrameConnection &c, std::vector<Frame> &fs) {
            for (auto &f : fs) {
                if (f.type == MessageType::Challenge) {
                    c.send(c.channel().makeHello(node));
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
};

template <class Pred> bool runUntil(uv_loop_t *loop, Pred done) {
    auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    while (!done()) {
        if (std::chrono::steady_clock::now() > deadline)
            return false;
        uv_run(loop, UV_RUN_NOWAIT);
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    return true;
}

class HubTest : public ::testing::Test {
protected:
    void SetUp() override {
        uv_loop_init(&loop);
        secret = *decodeSecretHex(generateSecretHex());
        plugin::RendezvousHub::Events events;
        events.onAbort = [this](std::uint32_t rank, int status, const std::string &) {
            abortRank = static_cast<int>(rank);
            abortStatus = status;
        };
        events.onFailure = [this](const std::string &) { ++failures; };
        std::string error;
        // Ranks 0,2 on node 0; ranks 1,3 on node 1.
        hub = plugin::RendezvousHub::start({0, 1, 0, 1}, 2, secret, events, error);
        ASSERT_TRUE(hub) << error;
    }
    void TearDown() override {
        hub.reset();
        uv_walk(
            &loop,
            [](uv_handle_t *h, void *) {
                if (!uv_is_closing(h))
                    uv_close(h, nullptr);
            },
            nullptr);
        while (uv_loop_close(&loop) == UV_EBUSY)
            uv_run(&loop, UV_RUN_NOWAIT);
    }

    uv_loop_t loop{};
    std::string secret;
    std::unique_ptr<plugin::RendezvousHub> hub;
    std::atomic<int> abortRank{-1}, abortStatus{-1}, failures{0};
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
    plugin::RendezvousHub::Events events;
    events.onFailure = [&](const std::string &why) {
        EXPECT_NE(why.find("node indices 0,1 did not reach srun"), std::string::npos) << why;
        ++failures;
    };
    std::string error;
    auto hub = plugin::RendezvousHub::start({0, 1}, 2, std::string(32, 's'), events, error, 1);
    ASSERT_TRUE(hub) << error;
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
