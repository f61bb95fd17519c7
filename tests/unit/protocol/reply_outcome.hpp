#pragma once

// What the protocol tests share: a fence's or direct modex's outcome as the
// node server would get it, and running a libuv loop until something holds.

#include "protocol/hub/data_reply.hpp"

#include <uv.h>

#include <chrono>
#include <optional>
#include <string>
#include <thread>

namespace stepmap::protocol_test {

struct Outcome {
    std::optional<int> status;
    std::string data;
    hub::DataReply reply() {
        return [this](int s, std::string d) {
            status = s;
            data = std::move(d);
        };
    }
};

// Runs loop until done() or the deadline; done()'s last answer.
template <class Pred> bool runLoopUntil(uv_loop_t *loop, Pred done, int seconds = 10) {
    auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(seconds);
    while (!done()) {
        if (std::chrono::steady_clock::now() > deadline)
            return false;
        uv_run(loop, UV_RUN_NOWAIT);
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    return true;
}

} // namespace stepmap::protocol_test
