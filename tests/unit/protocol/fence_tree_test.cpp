// The fence tree (hub/fence_tree.hpp) with real links on loopback and one
// libuv loop here: every node gets every node's data in node order (the
// bytes the hub's star gives), whatever order the nodes fence in; a lost
// child, or one whose contribution is malformed or holds too much, fails
// the fence everywhere, naming the node; a parent that cannot be joined is
// reached through the hub (here the test relays); strangers on a parent's
// listener are closed and change nothing, and a flood of them, from other
// addresses or another local user, does not keep a child out.

#include "protocol/hub/fence_tree.hpp"
#include "protocol/wire/payloads.hpp"
#include "protocol/wire/secret.hpp"

#include "reply_outcome.hpp"
#include <arpa/inet.h>

#include <fcntl.h>
#include <gtest/gtest.h>

#include <csignal>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <deque>
#include <functional>
#include <iostream>
#include <map>
#include <memory>
#include <optional>
#include <set>
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
        // As the node server does (stepd_server/main.cpp): a peer that went
        // away fails a write with EPIPE.
        signal(SIGPIPE, SIG_IGN);
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

    // count servers in a tree of fanOut; parents listen, children join
    // (at the port given in parentPort, else their parent's). adjust
    // changes a node's settings. Every node's viaHub goes through relays_.
    void build(std::uint32_t count, std::uint32_t fanOut,
               std::function<void(hub::FenceTree::Settings &)> adjust = {},
               std::map<std::uint32_t, int> parentPort = {}, std::set<std::uint32_t> late = {}) {
        const hub::TreeShape shape(count, fanOut);
        for (std::uint32_t n = 0; n < count; ++n) {
            auto node = std::make_unique<Node>();
            hub::FenceTree::Settings s{secret_, n, shape, kStatuses};
            s.handshakeDeadlineMs = 300;
            s.log = [raw = node.get()](const std::string &line) { raw->lines.push_back(line); };
            s.viaHub = [this, n](std::uint32_t to, std::string payload) {
                relays_.push_back({to, n, std::move(payload)});
            };
            if (adjust)
                adjust(s);
            node->tree = std::make_unique<hub::FenceTree>(&loop_, std::move(s));
            if (node->tree->hasChildren()) {
                auto port = node->tree->listen(&near_);
                ASSERT_TRUE(port) << port.error().message;
                node->port = *port;
            }
            nodes_.push_back(std::move(node));
        }
        for (std::uint32_t n = 1; n < count; ++n)
            if (!late.count(n))
                nodes_[n]->tree->connectParent("127.0.0.1", parentPort.count(n)
                                                                ? parentPort[n]
                                                                : nodes_[shape.parentOf(n)]->port);
    }

    // Runs the loop, and hands on what the nodes sent through the "hub",
    // one message per turn as the hub's own loop would.
    template <class Pred> bool runUntil(Pred done, int seconds = 10) {
        return protocol_test::runLoopUntil(
            &loop_,
            [&] {
                if (!relays_.empty()) {
                    auto r = std::move(relays_.front());
                    relays_.pop_front();
                    if (r.to < nodes_.size() && nodes_[r.to] && nodes_[r.to]->tree)
                        nodes_[r.to]->tree->relayed(r.from, r.payload);
                }
                return done();
            },
            seconds);
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

    struct Relay {
        std::uint32_t to, from;
        std::string payload;
    };

    uv_loop_t loop_{};
    uv_tcp_t near_{};
    std::string secret_;
    std::vector<std::unique_ptr<Node>> nodes_;
    std::deque<Relay> relays_;
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

// A plain TCP connection from address `from` (127.0.0.x: all loopback) to
// port on 127.0.0.1; -1 if it cannot be made.
int rawConnectFrom(const char *from, int port) {
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    inet_pton(AF_INET, from, &a.sin_addr);
    sockaddr_in to{};
    to.sin_family = AF_INET;
    to.sin_port = htons(static_cast<std::uint16_t>(port));
    inet_pton(AF_INET, "127.0.0.1", &to.sin_addr);
    if (bind(fd, reinterpret_cast<sockaddr *>(&a), sizeof a) != 0 ||
        connect(fd, reinterpret_cast<sockaddr *>(&to), sizeof to) != 0) {
        close(fd);
        return -1;
    }
    return fd;
}

// How many of fds the other end has closed (each counted once, in closed).
std::size_t countClosed(const std::vector<int> &fds, std::vector<bool> &closed) {
    closed.resize(fds.size());
    std::size_t n = 0;
    for (std::size_t i = 0; i < fds.size(); ++i) {
        if (!closed[i])
            closed[i] = peerClosed(fds[i]);
        n += closed[i] ? 1 : 0;
    }
    return n;
}

// A child of the test's own, as node `node`: it says Hello only when told,
// so that a flood can arrive between the parent's challenge and the Hello.
struct HeldChild {
    std::uint32_t node;
    bool challenged = false, welcomed = false, closed = false;
    std::string closedWhy;
    std::vector<wire::Frame> frames; // after the welcome
    uvnet::FrameConnection::Ptr conn;

    HeldChild(uv_loop_t *loop, int port, const std::string &secret, std::uint32_t n) : node(n) {
        uvnet::FrameConnection::Callbacks cb;
        cb.onFrames = [this](uvnet::FrameConnection &, std::vector<wire::Frame> &got) {
            for (auto &f : got)
                if (f.type == wire::MessageType::Challenge)
                    challenged = true;
                else if (f.type == wire::MessageType::Welcome)
                    welcomed = true;
                else
                    frames.push_back(f);
        };
        cb.onClosed = [this](uvnet::FrameConnection &, const std::string &why) {
            closed = true;
            closedWhy = why;
        };
        conn = uvnet::FrameConnection::connect(loop, "127.0.0.1", port, secret, cb);
    }
    void hello() { conn->send(conn->channel().makeHello(node)); }
    void up(std::uint64_t sequence, bool collect, const std::string &records) {
        conn->send(wire::MessageType::TreeUp,
                   wire::encode(wire::TreeUpMsg{sequence, collect, 1, records}));
    }
};

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

TEST_F(FenceTreeTest, AParentThatCannotBeJoinedIsReachedThroughTheHub) {
    // Node 1 looks for its parent where nobody listens: after its retries
    // its parts go to the parent through the hub (here the test relays),
    // and the results come back that way; the step goes on.
    build(3, 2, [](hub::FenceTree::Settings &s) { s.joinRetryMs = 600; }, {{1, unusedPort()}});
    std::vector<Outcome> out;
    const auto started = std::chrono::steady_clock::now();
    ASSERT_TRUE(fenceAll({1, 2, 0}, true, out));
    const auto took = std::chrono::duration_cast<std::chrono::milliseconds>(
        std::chrono::steady_clock::now() - started);
    for (auto &o : out) {
        EXPECT_EQ(*o.status, 0);
        EXPECT_EQ(o.data, "D0D+1D++2");
    }
    // Not the reason: the "unused" port may be taken meanwhile by a test
    // running alongside, whose listener then fails the handshake instead.
    EXPECT_TRUE(nodes_[1]->logged("could not join the fence tree parent node index 0 within 600 "
                                  "ms ("));
    EXPECT_TRUE(nodes_[0]->logged("fence tree child node index 1 comes through srun's hub"));
    // Later fences go the same way, the root first this time.
    ASSERT_TRUE(fenceAll({0, 2, 1}, false, out));
    for (auto &o : out)
        EXPECT_EQ(*o.status, 0);
    EXPECT_EQ(nodes_[1]->tree->fencesDone(), 2u);
    std::cout << "[ measured ] first fence with node 1 through the hub: " << took.count()
              << " ms (600 ms of retries)\n";
}

TEST_F(FenceTreeTest, AParentThatNeverAnswersIsReachedThroughTheHub) {
    // Node 1's parent port takes connections and says nothing (a listener
    // that never accepts): each attempt ends at the handshake deadline.
    int mute = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof a;
    ASSERT_EQ(bind(mute, reinterpret_cast<sockaddr *>(&a), len), 0);
    ASSERT_EQ(listen(mute, 8), 0);
    getsockname(mute, reinterpret_cast<sockaddr *>(&a), &len);
    build(3, 2,
          [](hub::FenceTree::Settings &s) {
              s.joinRetryMs = 600;
              s.handshakeDeadlineMs = 200;
          },
          {{1, ntohs(a.sin_port)}});
    std::vector<Outcome> out;
    ASSERT_TRUE(fenceAll({0, 1, 2}, true, out));
    for (auto &o : out)
        EXPECT_EQ(o.data, "D0D+1D++2");
    EXPECT_TRUE(nodes_[1]->logged("could not join the fence tree parent node index 0 within 600 "
                                  "ms (no welcome within 200 ms); this node's fences reach it "
                                  "through srun's hub"));
    close(mute);
}

TEST_F(FenceTreeTest, AChildThatJoinedMayNotAlsoComeThroughTheHub) {
    build(3, 2);
    std::vector<Outcome> out;
    ASSERT_TRUE(fenceAll({0, 1, 2}, false, out)); // links up
    nodes_[0]->tree->relayed(1, wire::encode(wire::TreeUpMsg{2, false, 1, ""}));
    EXPECT_TRUE(nodes_[0]->logged("the fence tree no longer works: a fence tree message through "
                                  "srun's hub from node index 1, which is no child of this node "
                                  "or joined it directly"));
}

// On a lossy link a child may give up waiting for its Welcome after the
// parent sent it, and join again (or through the hub): the link it left
// carried nothing, and the tree goes on.
TEST_F(FenceTreeTest, AChildThatLeftItsLinkBeforeSendingAnythingMayJoinAgain) {
    build(3, 2, {}, {}, {2}); // 0; 1 2, node 2 joins later
    bool welcomed = false;
    uvnet::FrameConnection::Callbacks cb;
    cb.onFrames = [&](uvnet::FrameConnection &c, std::vector<wire::Frame> &frames) {
        for (auto &f : frames) {
            if (f.type == wire::MessageType::Challenge)
                c.send(c.channel().makeHello(2));
            if (f.type == wire::MessageType::Welcome)
                welcomed = true;
        }
    };
    cb.onClosed = [](uvnet::FrameConnection &, const std::string &) {};
    // Node 2's first link: welcomed, then given up.
    auto first = uvnet::FrameConnection::connect(&loop_, "127.0.0.1", nodes_[0]->port, secret_, cb);
    ASSERT_TRUE(runUntil([&] { return welcomed; }, 5));
    first.reset();
    ASSERT_TRUE(runUntil(
        [&] {
            return nodes_[0]->logged("fence tree child node index 2 closed its link before sending "
                                     "anything");
        },
        5));
    // A second one, welcomed and left open, is replaced by the real one.
    welcomed = false;
    auto second =
        uvnet::FrameConnection::connect(&loop_, "127.0.0.1", nodes_[0]->port, secret_, cb);
    ASSERT_TRUE(runUntil([&] { return welcomed; }, 5));
    nodes_[2]->tree->connectParent("127.0.0.1", nodes_[0]->port);
    std::vector<Outcome> out;
    ASSERT_TRUE(fenceAll({1, 2, 0}, true, out));
    for (auto &o : out) {
        EXPECT_EQ(*o.status, 0);
        EXPECT_EQ(o.data, "D0D+1D++2");
    }
    EXPECT_TRUE(nodes_[0]->logged("fence tree child node index 2 joined again; its earlier link "
                                  "carried nothing and is closed"));
    EXPECT_FALSE(nodes_[0]->logged("the fence tree no longer works"));
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

// A child may hold only so many fences, and bytes, at its parent ahead of
// it (it used to be 1024 fences of up to 256 MiB each): beyond that its
// link ends and the tree breaks, naming it.
TEST_F(FenceTreeTest, AChildMayHoldOnlySoManyFencesAheadOfItsParent) {
    build(3, 2, [](hub::FenceTree::Settings &s) { s.maxFencesPerChild = 2; });
    nodes_[1]->tree.reset(); // node 1 is the test's own
    HeldChild child(&loop_, nodes_[0]->port, secret_, 1);
    ASSERT_TRUE(runUntil([&] { return child.challenged; }));
    child.hello();
    ASSERT_TRUE(runUntil([&] { return child.welcomed; }));
    for (std::uint64_t sequence : {1, 2, 3})
        child.up(sequence, false, "");
    ASSERT_TRUE(runUntil([&] { return child.closed; }, 5));
    EXPECT_TRUE(nodes_[0]->logged("the fence tree no longer works: lost the fence tree link to "
                                  "child node index 1: more than 2 fences ahead of this node"));
}

TEST_F(FenceTreeTest, AChildMayHoldOnlySoManyBytesAheadOfItsParent) {
    build(3, 2, [](hub::FenceTree::Settings &s) { s.maxBytesPerChild = 1000; });
    nodes_[1]->tree.reset();
    HeldChild child(&loop_, nodes_[0]->port, secret_, 1);
    ASSERT_TRUE(runUntil([&] { return child.challenged; }));
    child.hello();
    ASSERT_TRUE(runUntil([&] { return child.welcomed; }));
    std::string records;
    wire::appendRecord(records, {1, std::string(600, 'x')});
    child.up(1, true, records);
    child.up(2, true, records);
    ASSERT_TRUE(runUntil([&] { return child.closed; }, 5));
    EXPECT_TRUE(nodes_[0]->logged("the fence tree no longer works: lost the fence tree link to "
                                  "child node index 1: more than 1000 bytes of fences ahead of "
                                  "this node"));
}

// Between the parent's challenge and the child's Hello (one round trip),
// four other addresses open twice as many connections as the parent lets
// wait (4 children + 8): each address gives way to itself, and then the
// oldest of the busiest address goes, never the child. (The oldest
// connection of all used to go: the child.)
TEST_F(FenceTreeTest, AFloodFromOtherAddressesDoesNotKeepAChildOut) {
    build(3, 2, [](hub::FenceTree::Settings &s) { s.handshakeDeadlineMs = 5000; }); // 0; 1 2
    nodes_[1]->tree.reset();
    HeldChild child(&loop_, nodes_[0]->port, secret_, 1);
    ASSERT_TRUE(runUntil([&] { return child.challenged; }));
    std::vector<int> flood;
    for (const char *from : {"127.0.0.2", "127.0.0.3", "127.0.0.4", "127.0.0.5"})
        for (int i = 0; i < 8; ++i) {
            const int fd = rawConnectFrom(from, nodes_[0]->port);
            if (fd < 0) {
                for (int f : flood)
                    close(f);
                GTEST_SKIP() << "cannot connect from " << from;
            }
            flood.push_back(fd);
        }
    // The parent takes them all: 4 x 2 + 8 wait, the child one of them.
    std::vector<bool> closed;
    EXPECT_TRUE(runUntil([&] { return countClosed(flood, closed) == flood.size() - 15; }, 3));
    EXPECT_FALSE(child.closed) << child.closedWhy;
    child.hello();
    ASSERT_TRUE(runUntil([&] { return child.welcomed || child.closed; }));
    EXPECT_TRUE(child.welcomed) << child.closedWhy;
    // And the tree works: node 1's part from the test.
    std::string records;
    wire::appendRecord(records, {1, "D+1"});
    child.up(1, true, records);
    Outcome f0, f2;
    nodes_[0]->tree->fence(true, "D0", f0.reply());
    nodes_[2]->tree->fence(true, "D++2", f2.reply());
    ASSERT_TRUE(runUntil([&] { return f0.status && f2.status && !child.frames.empty(); }));
    EXPECT_EQ(f0.data, "D0D+1D++2");
    EXPECT_EQ(f2.data, "D0D+1D++2");
    EXPECT_TRUE(nodes_[0]->logged("fence tree listener: closed 127.0.0."));
    for (int fd : flood)
        close(fd);
}

// The same between challenge and Hello from the child's own address, by
// another user of this host (a shared node: everyone's address is the
// node's): each connection is refused at once, by its owner's uid, and
// the log names it.
TEST_F(FenceTreeTest, AnotherLocalUsersFloodIsRefusedAtOnce) {
    if (geteuid() != 0)
        GTEST_SKIP() << "connecting as another user needs root";
    build(3, 2, [](hub::FenceTree::Settings &s) { s.handshakeDeadlineMs = 5000; });
    nodes_[1]->tree.reset();
    HeldChild child(&loop_, nodes_[0]->port, secret_, 1);
    ASSERT_TRUE(runUntil([&] { return child.challenged; }));
    const int port = nodes_[0]->port;
    int verdict[2];
    ASSERT_EQ(pipe2(verdict, O_CLOEXEC), 0);
    const pid_t pid = fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
        // nobody: 4 x 2 + 8 + 4 connections, then whether the parent
        // closed every one within 3 s (the handshake deadline is 5 s).
        if (setresgid(65534, 65534, 65534) != 0 || setresuid(65534, 65534, 65534) != 0)
            _exit(2);
        std::vector<int> fds;
        for (int i = 0; i < 20; ++i)
            fds.push_back(rawConnect(port));
        std::vector<bool> closed;
        const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(3);
        while (countClosed(fds, closed) < fds.size() && std::chrono::steady_clock::now() < until)
            usleep(1000);
        const char answer = countClosed(fds, closed) == fds.size() ? 'y' : 'n';
        _exit(write(verdict[1], &answer, 1) == 1 ? 0 : 3);
    }
    close(verdict[1]);
    fcntl(verdict[0], F_SETFL, O_NONBLOCK);
    char answer = 0;
    EXPECT_TRUE(runUntil([&] { return read(verdict[0], &answer, 1) == 1; }));
    close(verdict[0]);
    int status = 0;
    waitpid(pid, &status, 0);
    EXPECT_EQ(answer, 'y') << "the other user's connections were not all closed at once";
    EXPECT_FALSE(child.closed) << child.closedWhy;
    child.hello();
    ASSERT_TRUE(runUntil([&] { return child.welcomed || child.closed; }));
    EXPECT_TRUE(child.welcomed) << child.closedWhy;
    bool named = false;
    for (auto &line : nodes_[0]->lines)
        named = named || (line.rfind("fence tree listener: refused 127.0.0.1:", 0) == 0 &&
                          line.find(", a connection of uid 65534 on this host (not the step's "
                                    "user)") != std::string::npos);
    EXPECT_TRUE(named);
}

// A sustained flood from another address while the tree forms: the
// children join and the first fence completes at once (measured).
TEST_F(FenceTreeTest, ASustainedFloodFromAnotherAddressDoesNotDelayTheTree) {
    // Nodes 1 and 2 wait for a port nobody listens on until the flood runs.
    build(3, 2, [](hub::FenceTree::Settings &s) { s.joinRetryMs = 600000; },
          {{1, unusedPort()}, {2, unusedPort()}});
    nodes_[1].reset();
    nodes_[2].reset();
    const hub::TreeShape shape(3, 2);
    for (std::uint32_t n : {1, 2}) {
        auto node = std::make_unique<Node>();
        hub::FenceTree::Settings s{secret_, n, shape, kStatuses};
        s.log = [raw = node.get()](const std::string &line) { raw->lines.push_back(line); };
        node->tree = std::make_unique<hub::FenceTree>(&loop_, std::move(s));
        nodes_[n] = std::move(node);
    }
    std::atomic<bool> stop{false};
    std::vector<int> flood;
    const int port = nodes_[0]->port;
    std::thread flooder([&] {
        while (!stop && flood.size() < 3000) {
            const int fd = rawConnectFrom("127.0.0.2", port);
            if (fd >= 0)
                flood.push_back(fd);
        }
    });
    // The parent takes the flood a while before the children come.
    const auto floodFor = std::chrono::steady_clock::now() + std::chrono::milliseconds(300);
    runUntil([&] { return std::chrono::steady_clock::now() > floodFor; });
    const auto started = std::chrono::steady_clock::now();
    for (std::uint32_t n : {1, 2})
        nodes_[n]->tree->connectParent("127.0.0.1", port);
    std::vector<Outcome> out;
    const bool done = fenceAll({1, 2, 0}, true, out);
    const auto took = std::chrono::duration_cast<std::chrono::milliseconds>(
        std::chrono::steady_clock::now() - started);
    stop = true;
    flooder.join();
    ASSERT_TRUE(done);
    for (auto &o : out)
        EXPECT_EQ(o.data, "D0D+1D++2");
    for (std::uint32_t n : {1, 2})
        EXPECT_FALSE(nodes_[n]->logged("could not join")) << n;
    EXPECT_GT(flood.size(), 100u);
    EXPECT_LT(took.count(), 2000);
    std::cout << "[ measured ] children joined and fenced in " << took.count() << " ms while "
              << flood.size() << " connections flooded their parent\n";
    for (int fd : flood)
        close(fd);
}
