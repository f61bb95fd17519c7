#pragma once

// Hands work from other threads (PMIx's progress thread calls our upcalls)
// to the libuv loop thread. post() may be called from any thread; the posted
// functions run on the loop thread, in order.

#include <uv.h>

#include <deque>
#include <functional>
#include <mutex>

namespace stepmap::server {

class LoopInbox {
public:
    explicit LoopInbox(uv_loop_t *loop);
    LoopInbox(const LoopInbox &) = delete;
    LoopInbox &operator=(const LoopInbox &) = delete;

    void post(std::function<void()> fn);
    // Loop thread: stop accepting work and close the async handle.
    void close();

private:
    static void onAsync(uv_async_t *a);

    uv_async_t async_{};
    std::mutex mutex_;
    std::deque<std::function<void()>> queue_;
    bool closed_ = false;
};

} // namespace stepmap::server
