#pragma once

// The one owner of a heap-allocated libuv handle: letting it go closes the
// handle, and the memory is freed in the close callback, when libuv is done
// with it. The loop must run after that (the server drains it at exit).

#include <uv.h>

#include <memory>

namespace stepmap::uvnet {

template <class Handle> struct UvHandleCloser {
    void operator()(Handle *h) const {
        uv_close(reinterpret_cast<uv_handle_t *>(h),
                 [](uv_handle_t *p) { delete reinterpret_cast<Handle *>(p); });
    }
};

template <class Handle> using UvHandlePtr = std::unique_ptr<Handle, UvHandleCloser<Handle>>;

// A new timer on loop, owned.
inline UvHandlePtr<uv_timer_t> makeTimer(uv_loop_t *loop) {
    auto *t = new uv_timer_t{};
    uv_timer_init(loop, t);
    return UvHandlePtr<uv_timer_t>(t);
}

} // namespace stepmap::uvnet
