#include "loop_inbox.hpp"

#include "server_log.hpp"

namespace stepmap::server {

LoopInbox::LoopInbox(uv_loop_t *loop) {
    uv_async_init(loop, &async_, onAsync);
    async_.data = this;
}

void LoopInbox::post(std::function<void()> fn) {
    {
        std::lock_guard lock(mutex_);
        if (closed_)
            return;
        queue_.push_back(std::move(fn));
    }
    uv_async_send(&async_);
}

void LoopInbox::onAsync(uv_async_t *a) {
    auto *self = static_cast<LoopInbox *>(a->data);
    std::deque<std::function<void()>> work;
    {
        std::lock_guard lock(self->mutex_);
        work.swap(self->queue_);
    }
    // A libuv callback: nothing may escape into libuv.
    for (auto &fn : work) {
        try {
            fn();
        } catch (const std::exception &e) {
            logError(std::string("a task on the server's loop failed: ") + e.what());
        } catch (...) {
            logError("a task on the server's loop failed");
        }
    }
}

void LoopInbox::close() {
    {
        std::lock_guard lock(mutex_);
        closed_ = true;
        queue_.clear();
    }
    uv_close(reinterpret_cast<uv_handle_t *>(&async_), nullptr);
}

} // namespace stepmap::server
