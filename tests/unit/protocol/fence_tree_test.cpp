// The fence tree (hub/fence_tree.hpp) with real links on loopback and one
// libuv loop here: every node gets every node's data in node order (the
// bytes the hub's star gives), whatever order the nodes fence in; a lost
// child, or one whose contribution is malformed, fails the fence
// everywhere, naming the node; a parent that cannot be joined stops the
// server; strangers on a parent's listener are closed and change nothing.

#include "hub/fence_tree.hpp"
#include "wire/payloads.hpp"
#include "wire/secret.hpp"

#include "reply_outcome.hpp"
#include <arpa/inet.h>

#include <gtest/gtest.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <memory>
#include <optional>
#include <thread>

using namespace stepmap;
using stepmap::protocol_test::Outcome;

namespace {

constexpr hub::LinkStatuses kStatuses{0, -1000, -2000};

struct Node {
    std::unique_ptr<hub::FenceTree> tree;
    std::vector<std::string> lines;
    int port = 0; // where it takes its children
    bool logged(const std::string &start) const {
        for (auto &l : lines)
            if (l.rfind(start, 0) == 0)
                return true;
        return false;
    }
};

class FenceTreeTest : public ::testing::Test {
protected:
    void SetUp() override {
        uv_loop_init(&loop_);
        secret_ = *wire::decodeSecretHex(wire::generateSecretHex());
        // The address the trees listen on: a socket bound to loopback, as
        // the hub link's would be.
        uv_tcp_init(&loop_, &near_);
        sockaddr_in a{};
        uv_ip4_addr("127.0.0.1", 0, &a);
        ASSERT_EQ(uv_tcp_bind(&near_, reinterpret_cast<sockaddr *>(&a), 0), 0);
    }
    void TearDown() override {
        nodes_.clear();
        uv_close(reinterpret_cast<uv_handle_t *>(&near_), nullptr);
        for (int i = 0; i < 1000 && uv_loop_close(&loop_) == UV_EBUSY; ++i)
            uv_run(&loop_, UV_RUN_NOWAIT);
    }

    // count servers in a tree of fanOut; parents listen, children join.
    void build(std::uint32_t count, std::uint32_t fanOut) {
        const hub::TreeShape shape(count, fanOut);
        for (std::uint32_t n = 0; n < count; ++n) {
            auto node = std::make_unique<Node>();
            hub::FenceTree::Settings s{secret_, n, shape, kStatuses};
            s.handshakeDeadlineMs = 300;
            s.log = [raw = node.get()](const std::string &line) { raw->lines.push_back(line); };
            node->tree = std::make_unique<hub::FenceTree>(&loop_, std::move(s));
            if (node->tree->hasChildren()) {
                std::string error;
                node->port = node->tree->listen(&near_, error);
                ASSERT_NE(node->port, 0) << error;
            }
            nodes_.push_back(std::move(node));
        }
        for (std::uint32_t n = 1; n < count; ++n)
            nodes_[n]->tree->connectParent("127.0.0.1", nodes_[shape.parentOf(n)]->port);
    }

    template <class Pred> bool runUntil(Pred done, int seconds = 10) {
        return protocol_test::runLoopUntil(&loop_, done, seconds);
    }

    // Every node's fence, in the order given; true once all completed.
    bool fenceAll(const std::vector<std::uint32_t> &order, bool collect,
                  std::vector<Outcome> &out) {
        out.assign(nodes_.size(), Outcome{});
        for (auto n : order) {
            nodes_[n]->tree->fence(collect, "D" + std::string(n, '+') + std::to_string(n),
                                   out[n].reply());
            uv_run(&loop_, UV_RUN_NOWAIT);
        }
        return runUntil([&] {
            for (auto &o : out)
                if (!o.status)
                    return false;
            return true;
        });
    }

    uv_loop_t loop_{};
    uv_tcp_t near_{};
    std::string secret_;
    std::vector<std::unique_ptr<Node>> nodes_;
};

// A plain TCP connection to port on loopback.
int rawConnect(int port) {
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_port = htons(static_cast<std::uint16_t>(port));
    inet_pton(AF_INET, "127.0.0.1", &a.sin_addr);
    if (connect(fd, reinterpret_cast<sockaddr *>(&a), sizeof a) != 0) {
        close(fd);
        return -1;
    }
    return fd;
}

// A loopback port nobody listens on (bound a moment, then let go).
int unusedPort() {
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof a;
    bind(fd, reinterpret_cast<sockaddr *>(&a), len);
    getsockname(fd, reinterpret_cast<sockaddr *>(&a), &len);
    close(fd);
    return ntohs(a.sin_port);
}

// True once the other end closed fd (what it sent first is drained).
bool peerClosed(int fd) {
    pollfd p{fd, POLLIN, 0};
    char buf[256];
    return poll(&p, 1, 0) > 0 && recv(fd, buf, sizeof buf, MSG_DONTWAIT) == 0;
}

} // namespace

TEST_F(FenceTreeTest, EveryNodeGetsEveryNodesDataInNodeOrder) {
    build(7, 2); // 0; 1 2; 3 4 5 6
    std::string expected;
    for (std::uint32_t n = 0; n < 7; ++n)
        expected += "D" + std::string(n, '+') + std::to_string(n);
    std::vector<Outcome> out;
    // Leaves first, the root last, some before their links are up.
    ASSERT_TRUE(fenceAll({6, 3, 5, 2, 4, 1, 0}, true, out));
    for (auto &o : out) {
        EXPECT_EQ(*o.status, 0);
        EXPECT_EQ(o.data, expected);
    }
    // Then one without data, and another collecting one, the root first.
    ASSERT_TRUE(fenceAll({0, 1, 2, 3, 4, 5, 6}, false, out));
    for (auto &o : out) {
        EXPECT_EQ(*o.status, 0);
        EXPECT_EQ(o.data, "");
    }
    ASSERT_TRUE(fenceAll({0, 4, 1, 6, 2, 3, 5}, true, out));
    for (auto &o : out)
        EXPECT_EQ(o.data, expected);
    EXPECT_EQ(nodes_[3]->tree->fencesDone(), 3u);
}

TEST_F(FenceTreeTest, ALostChildFailsTheFenceEverywhereNamingIt) {
    build(7, 2);
    std::vector<Outcome> out;
    ASSERT_TRUE(fenceAll({0, 1, 2, 3, 4, 5, 6}, false, out)); // links up
    out.assign(7, Outcome{});
    for (std::uint32_t n : {0, 1, 2, 4, 5, 6})
        nodes_[n]->tree->fence(true, "x", out[n].reply());
    nodes_[3]->tree.reset(); // node 3's server is gone
    ASSERT_TRUE(runUntil([&] {
        for (std::uint32_t n : {0, 1, 2, 4, 5, 6})
            if (!out[n].status)
                return false;
        return true;
    }));
    for (std::uint32_t n : {0, 1, 2, 4, 5, 6})
        EXPECT_EQ(*out[n].status, kStatuses.lostConnection) << n;
    EXPECT_TRUE(
        nodes_[1]->logged("fence 2 failed: lost the fence tree link to child node index 3"));
    EXPECT_TRUE(
        nodes_[0]->logged("fence 2 failed: lost the fence tree link to child node index 1"));
    EXPECT_TRUE(
        nodes_[4]->logged("fence 2 failed: lost the fence tree link to parent node index 1"));
    // Later fences fail at once, saying why.
    Outcome later;
    nodes_[0]->tree->fence(false, "", later.reply());
    ASSERT_TRUE(later.status);
    EXPECT_EQ(*later.status, kStatuses.lostConnection);
    EXPECT_TRUE(
        nodes_[0]->logged("fence 3 failed: lost the fence tree link to child node index 1"));
}

TEST_F(FenceTreeTest, StrangersOnTheListenerAreClosedAndChangeNothing) {
    build(3, 2); // 0; 1 2
    // Bytes that are no frame (a length far beyond the limit).
    int garbage = rawConnect(nodes_[0]->port);
    ASSERT_GE(garbage, 0);
    ASSERT_EQ(write(garbage, "GET / HTTP/1.0\r\n\r\n", 18), 18);
    // A peer that says nothing: closed at the handshake deadline.
    int silent = rawConnect(nodes_[0]->port);
    ASSERT_GE(silent, 0);
    // A peer without the secret, and one with it that is no child of node 0.
    std::vector<std::string> closedWhy;
    uvnet::FrameConnection::Callbacks cb;
    cb.onFrames = [](uvnet::FrameConnection &c, std::vector<wire::Frame> &frames) {
        for (auto &f : frames)
            if (f.type == wire::MessageType::Challenge)
                c.send(c.channel().makeHello(5));
    };
    cb.onClosed = [&](uvnet::FrameConnection &, const std::string &why) {
        closedWhy.push_back(why);
    };
    auto forger = uvnet::FrameConnection::connect(&loop_, "127.0.0.1", nodes_[0]->port,
                                                  std::string(32, 'f'), cb);
    auto stranger =
        uvnet::FrameConnection::connect(&loop_, "127.0.0.1", nodes_[0]->port, secret_, cb);
    EXPECT_TRUE(runUntil([&] { return peerClosed(garbage) && peerClosed(silent); }, 5));
    EXPECT_TRUE(runUntil([&] { return closedWhy.size() == 2; }, 5));
    close(garbage);
    close(silent);
    std::vector<Outcome> out;
    ASSERT_TRUE(fenceAll({1, 2, 0}, true, out));
    for (auto &o : out)
        EXPECT_EQ(o.data, "D0D+1D++2");
}

TEST_F(FenceTreeTest, AParentThatCannotBeJoinedStopsTheServer) {
    // Node 1's parent listens nowhere: its fence fails, and the server is
    // told to go (its parent would wait for it with no link to see it gone).
    std::string unreachable;
    hub::FenceTree::Settings s{secret_, 1, hub::TreeShape(2, 2), kStatuses};
    s.joinRetryMs = 600;
    std::vector<std::string> lines;
    s.log = [&](const std::string &line) { lines.push_back(line); };
    s.onUnreachableParent = [&](const std::string &why) { unreachable = why; };
    hub::FenceTree child(&loop_, std::move(s));
    Outcome f;
    child.fence(false, "", f.reply());
    child.connectParent("127.0.0.1", unusedPort());
    ASSERT_TRUE(runUntil([&] { return !unreachable.empty(); }, 5));
    EXPECT_EQ(unreachable.rfind("could not join the fence tree parent node index 0: ", 0), 0u)
        << unreachable;
    ASSERT_TRUE(f.status);
    EXPECT_EQ(*f.status, kStatuses.lostConnection);
    ASSERT_FALSE(lines.empty());
    EXPECT_EQ(lines[0].rfind("could not join the fence tree parent node index 0 (", 0), 0u)
        << lines[0];
}

TEST_F(FenceTreeTest, AChildsMalformedContributionBreaksTheTreeNamingIt) {
    build(3, 2);             // 0; 1 2
    nodes_[1]->tree.reset(); // node 1 is an impostor with the secret instead
    bool welcomed = false;
    uvnet::FrameConnection::Callbacks cb;
    cb.onFrames = [&](uvnet::FrameConnection &c, std::vector<wire::Frame> &frames) {
        for (auto &f : frames)
            if (f.type == wire::MessageType::Challenge) {
                c.send(c.channel().makeHello(1));
            } else if (f.type == wire::MessageType::Welcome) {
                welcomed = true;
                // Node 1's subtree is one node, not five.
                c.send(wire::MessageType::TreeUp, wire::encode(wire::TreeUpMsg{1, false, 5, ""}));
            }
    };
    cb.onClosed = [](uvnet::FrameConnection &, const std::string &) {};
    auto impostor =
        uvnet::FrameConnection::connect(&loop_, "127.0.0.1", nodes_[0]->port, secret_, cb);
    Outcome f;
    nodes_[0]->tree->fence(false, "", f.reply());
    ASSERT_TRUE(runUntil([&] { return f.status.has_value(); }, 5));
    EXPECT_TRUE(welcomed);
    EXPECT_EQ(*f.status, kStatuses.lostConnection);
    EXPECT_TRUE(nodes_[0]->logged("fence 1 failed: lost the fence tree link to child node index "
                                  "1: malformed fence tree contribution"));
}
