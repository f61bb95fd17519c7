#pragma once

// What the hub link and the fence tree hand back to the node server: a
// status in the node library's codes and the bytes.

#include <functional>
#include <string>

namespace stepmap::hub {

// Completion of a fence or direct modex: a status (the node library's code)
// and the bytes to hand back.
using DataReply = std::function<void(int status, std::string data)>;

// The statuses the link reports on its own, in the node library's codes.
struct LinkStatuses {
    int success = 0;
    int timeout = -1;
    int lostConnection = -2;
};

} // namespace stepmap::hub
