// The authenticated frame stream between node servers and srun's hub:
// frames pass only with the step's secret, in order, unmodified.

#include "protocol/wire/frame_channel.hpp"
#include "protocol/wire/payloads.hpp"

#include <gtest/gtest.h>

using namespace stepmap::wire;

namespace {

const std::string kSecret(32, 'k');

bool deliver(FrameChannel &to, const std::vector<std::uint8_t> &bytes) {
    return to.feed(reinterpret_cast<const char *>(bytes.data()), bytes.size());
}

// A hub and a server channel after the challenge/hello exchange.
struct Pair {
    FrameChannel hub{kSecret, FrameChannel::Role::Hub};
    FrameChannel server{kSecret, FrameChannel::Role::Server};
    Pair() {
        EXPECT_TRUE(deliver(server, hub.makeChallenge()));
        server.takeFrames();
        EXPECT_TRUE(deliver(hub, server.makeHello(3)));
        hub.takeFrames();
    }
};

} // namespace

TEST(FrameChannel, HelloNamesTheNode) {
    Pair p;
    EXPECT_TRUE(p.hub.established());
    EXPECT_EQ(p.hub.peerNode(), 3u);
}

TEST(FrameChannel, FramesArriveInOrderEvenWhenSplit) {
    Pair p;
    auto a = p.server.seal(MessageType::Abort, encode(AbortMsg{5, 7, "boom"}));
    auto b = p.server.seal(MessageType::Fence, encode(FenceMsg{"x#0", {0, 1}, true, "data"}));
    std::vector<std::uint8_t> both(a);
    both.insert(both.end(), b.begin(), b.end());
    // One byte at a time: the reassembly must not depend on read sizes.
    for (auto byte : both)
        ASSERT_TRUE(p.hub.feed(reinterpret_cast<const char *>(&byte), 1)) << p.hub.error();
    auto frames = p.hub.takeFrames();
    ASSERT_EQ(frames.size(), 2u);
    auto abort = decodeAbort(frames[0].payload);
    ASSERT_TRUE(abort);
    EXPECT_EQ(abort->rank, 5u);
    EXPECT_EQ(abort->status, 7);
    EXPECT_EQ(abort->message, "boom");
    auto fence = decodeFence(frames[1].payload);
    ASSERT_TRUE(fence);
    EXPECT_EQ(fence->fenceId, "x#0");
    EXPECT_EQ(fence->nodes, (std::vector<std::uint32_t>{0, 1}));
    EXPECT_TRUE(fence->collect);
    EXPECT_EQ(fence->data, "data");
}

TEST(FrameChannel, WrongSecretIsRejected) {
    FrameChannel hub{kSecret, FrameChannel::Role::Hub};
    FrameChannel intruder{std::string(32, 'x'), FrameChannel::Role::Server};
    ASSERT_TRUE(deliver(intruder, hub.makeChallenge()));
    EXPECT_FALSE(deliver(hub, intruder.makeHello(0)));
    EXPECT_NE(hub.error().find("authentication failed"), std::string::npos);
    EXPECT_TRUE(hub.takeFrames().empty());
}

TEST(FrameChannel, TamperedPayloadIsRejected) {
    Pair p;
    auto f = p.server.seal(MessageType::Abort, encode(AbortMsg{1, 2, "x"}));
    f[8] ^= 1;
    EXPECT_FALSE(deliver(p.hub, f));
}

TEST(FrameChannel, ReplayedFrameIsRejected) {
    Pair p;
    auto f = p.server.seal(MessageType::Abort, encode(AbortMsg{1, 2, "x"}));
    EXPECT_TRUE(deliver(p.hub, f));
    EXPECT_FALSE(deliver(p.hub, f));
}

TEST(FrameChannel, ReflectedFrameIsRejected) {
    // A frame the hub sent, sent back to it, must not pass as the server's.
    Pair p;
    auto f = p.hub.seal(MessageType::Shutdown, encode(ShutdownMsg{0, "bye"}));
    EXPECT_FALSE(deliver(p.hub, f));
}

TEST(FrameChannel, OversizedLengthIsRejectedBeforeBuffering) {
    FrameChannel hub{kSecret, FrameChannel::Role::Hub};
    const char header[4] = {'\x7f', '\x7f', '\x7f', '\x7f'};
    EXPECT_FALSE(hub.feed(header, 4));
    EXPECT_NE(hub.error().find("malformed frame length"), std::string::npos);
}

TEST(FrameChannel, ServerRequiresChallengeFirst) {
    FrameChannel hub{kSecret, FrameChannel::Role::Hub};
    FrameChannel server{kSecret, FrameChannel::Role::Server};
    hub.makeChallenge();
    EXPECT_FALSE(deliver(server, hub.seal(MessageType::Shutdown, "")));
}

TEST(Payloads, TruncatedOrPaddedPayloadsDoNotDecode) {
    std::string fence = encode(FenceMsg{"id", {0, 2}, false, "abc"});
    for (std::size_t n = 0; n < fence.size(); ++n)
        EXPECT_FALSE(decodeFence(fence.substr(0, n))) << n;
    EXPECT_FALSE(decodeFence(fence + "x"));
    EXPECT_TRUE(decodeFence(fence));

    std::string resp = encode(DmodexResponseMsg{9, 1, -46, "blob"});
    for (std::size_t n = 0; n < resp.size(); ++n)
        EXPECT_FALSE(decodeDmodexResponse(resp.substr(0, n))) << n;
    auto ok = decodeDmodexResponse(resp);
    ASSERT_TRUE(ok);
    EXPECT_EQ(ok->requestId, 9u);
    EXPECT_EQ(ok->status, -46);
    EXPECT_EQ(ok->data, "blob");
}

TEST(Payloads, HugeCountsDoNotDecode) {
    // A node count far beyond the bytes present must fail, not allocate.
    std::string bad = encode(FenceMsg{"id", {}, false, ""});
    bad[6] = '\x7f';
    EXPECT_FALSE(decodeFence(bad));
}
