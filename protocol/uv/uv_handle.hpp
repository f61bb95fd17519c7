#pragma once

// The one owner of a heap-allocated libuv handle: letting it go closes the
// handle, and the memory is freed in the close callback, when libuv is done
// with it. The loop must run after that (the programs drain it at exit).

#include <uv.h>

#include <memory>
#include <type_traits>

namespace stepmap::uvnet {

template <class Handle> struct UvHandleCloser {
    void operator()(Handle *h) const {
        uv_close(reinterpret_cast<uv_handle_t *>(h),
                 [](uv_handle_t *p) { delete reinterpret_cast<Handle *>(p); });
    }
};

template <class Handle> using UvHandlePtr = std::unique_ptr<Handle, UvHandleCloser<Handle>>;

// A new handle on loop, initialised by libuv's init function (uv_poll_init,
// uv_signal_init, ...) with args, owned; null if init fails.
template <class Handle, class... Args>
UvHandlePtr<Handle> makeHandle(int (*init)(uv_loop_t *, Handle *, Args...), uv_loop_t *loop,
                               std::type_identity_t<Args>... args) {
    auto h = std::make_unique<Handle>();
    if (init(loop, h.get(), args...) != 0)
        return nullptr; // libuv never knew it: a plain delete
    return UvHandlePtr<Handle>(h.release());
}

// A new timer on loop, owned.
inline UvHandlePtr<uv_timer_t> makeTimer(uv_loop_t *loop) {
    return makeHandle(uv_timer_init, loop);
}

} // namespace stepmap::uvnet
