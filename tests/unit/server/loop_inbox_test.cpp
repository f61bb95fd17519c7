// Work handed from other threads (PMIx's progress thread) to the libuv
// loop: it runs on the loop's thread, in the order each thread posted it,
// and nothing runs once the inbox is closed.

#include "loop_inbox.hpp"

#include <gtest/gtest.h>

#include <thread>
#include <vector>

using namespace stepmap::server;

namespace {

struct Loop {
    uv_loop_t loop{};
    Loop() { uv_loop_init(&loop); }
    ~Loop() {
        uv_run(&loop, UV_RUN_DEFAULT);
        EXPECT_EQ(uv_loop_close(&loop), 0);
    }
};

} // namespace

TEST(LoopInbox, WorkFromOtherThreadsRunsOnTheLoopThreadInPostingOrder) {
    constexpr int kThreads = 4, kEach = 500;
    Loop l;
    LoopInbox inbox(&l.loop);
    const auto loopThread = std::this_thread::get_id();
    std::vector<std::vector<int>> seen(kThreads);
    int total = 0;
    bool allOnLoopThread = true;
    std::vector<std::thread> posters;
    for (int t = 0; t < kThreads; ++t)
        posters.emplace_back([&, t] {
            for (int i = 0; i < kEach; ++i)
                inbox.post([&, t, i] {
                    allOnLoopThread = allOnLoopThread && std::this_thread::get_id() == loopThread;
                    seen[t].push_back(i);
                    if (++total == kThreads * kEach)
                        inbox.close();
                });
        });
    // Returns once the last item closed the inbox (its handle kept the loop alive).
    uv_run(&l.loop, UV_RUN_DEFAULT);
    for (auto &p : posters)
        p.join();
    EXPECT_TRUE(allOnLoopThread);
    EXPECT_EQ(total, kThreads * kEach);
    for (int t = 0; t < kThreads; ++t) {
        ASSERT_EQ(seen[t].size(), static_cast<std::size_t>(kEach));
        for (int i = 0; i < kEach; ++i)
            ASSERT_EQ(seen[t][i], i) << "thread " << t;
    }
}

TEST(LoopInbox, NothingRunsOutsideTheLoop) {
    Loop l;
    LoopInbox inbox(&l.loop);
    int ran = 0;
    std::thread([&] { inbox.post([&] { ++ran; }); }).join();
    EXPECT_EQ(ran, 0);
    uv_run(&l.loop, UV_RUN_NOWAIT);
    EXPECT_EQ(ran, 1);
    inbox.close();
}

TEST(LoopInbox, ClosingDropsPendingWorkAndRefusesMore) {
    Loop l;
    LoopInbox inbox(&l.loop);
    int ran = 0;
    inbox.post([&] { ++ran; });
    inbox.close();
    inbox.post([&] { ++ran; });
    uv_run(&l.loop, UV_RUN_DEFAULT);
    EXPECT_EQ(ran, 0);
}

TEST(LoopInbox, WorkMayPostMoreWork) {
    Loop l;
    LoopInbox inbox(&l.loop);
    std::vector<int> order;
    inbox.post([&] {
        order.push_back(1);
        inbox.post([&] {
            order.push_back(3);
            inbox.close();
        });
    });
    inbox.post([&] { order.push_back(2); });
    uv_run(&l.loop, UV_RUN_DEFAULT);
    EXPECT_EQ(order, (std::vector<int>{1, 2, 3}));
}
