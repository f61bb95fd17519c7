// The libuv handle owner (uv/uv_handle.hpp) and a FrameConnection's owner
// pointer: letting go closes, and the loop then closes with nothing left.

#include "protocol/uv/frame_connection.hpp"
#include "protocol/uv/uv_handle.hpp"

#include <gtest/gtest.h>

using namespace stepmap;

namespace {

// Runs loop until nothing is left on it; false if something stays open.
bool drains(uv_loop_t *loop) {
    for (int i = 0; i < 100; ++i) {
        uv_run(loop, UV_RUN_NOWAIT);
        if (uv_loop_close(loop) == 0)
            return true;
    }
    return false;
}

} // namespace

TEST(UvHandle, LettingGoClosesTheHandle) {
    uv_loop_t loop{};
    uv_loop_init(&loop);
    auto timer = uvnet::makeTimer(&loop);
    ASSERT_TRUE(timer);
    int fired = 0;
    timer->data = &fired;
    uv_timer_start(
        timer.get(), [](uv_timer_t *t) { ++*static_cast<int *>(t->data); }, 0, 1);
    uv_run(&loop, UV_RUN_NOWAIT);
    EXPECT_GT(fired, 0);
    EXPECT_EQ(uv_loop_close(&loop), UV_EBUSY);
    timer.reset();
    EXPECT_TRUE(drains(&loop));
}

TEST(UvHandle, AFailedInitGivesNoHandle) {
    uv_loop_t loop{};
    uv_loop_init(&loop);
    EXPECT_FALSE(uvnet::makeHandle(uv_poll_init, &loop, -1));
    auto sig = uvnet::makeHandle(uv_signal_init, &loop);
    EXPECT_TRUE(sig);
    sig.reset();
    EXPECT_TRUE(drains(&loop));
}

TEST(FrameConnectionOwner, ReleaseClosesQuietly) {
    uv_loop_t loop{};
    uv_loop_init(&loop);
    int closedCalls = 0;
    uvnet::FrameConnection::Callbacks cb;
    cb.onClosed = [&](uvnet::FrameConnection &, const std::string &) { ++closedCalls; };
    // Port 1 on loopback: the connect is under way when the owner lets go.
    auto c = uvnet::FrameConnection::connect(&loop, "127.0.0.1", 1, std::string(32, 's'), cb);
    ASSERT_TRUE(c);
    EXPECT_EQ(c->state(), uvnet::FrameConnection::State::Connecting);
    c.reset();
    EXPECT_TRUE(drains(&loop));
    EXPECT_EQ(closedCalls, 0);
}

TEST(FrameConnectionOwner, AFailedConnectIsReportedOnceAndFreed) {
    uv_loop_t loop{};
    uv_loop_init(&loop);
    std::vector<std::string> reasons;
    uvnet::FrameConnection::Callbacks cb;
    uvnet::FrameConnection::Ptr c;
    cb.onClosed = [&](uvnet::FrameConnection &, const std::string &why) {
        reasons.push_back(why);
        c.reset(); // the owner lets go inside the callback
    };
    c = uvnet::FrameConnection::connect(&loop, "127.0.0.1", 1, std::string(32, 's'), cb);
    for (int i = 0; i < 200 && reasons.empty(); ++i)
        uv_run(&loop, UV_RUN_ONCE);
    ASSERT_EQ(reasons.size(), 1u);
    EXPECT_EQ(reasons[0].rfind("connection failed: ", 0), 0u) << reasons[0];
    EXPECT_FALSE(c);
    EXPECT_TRUE(drains(&loop));
}
