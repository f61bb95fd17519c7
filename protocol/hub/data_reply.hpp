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
    int notFound = -3; // the rank's step has ended: the hub answers so
};

// The status the hub answers a direct modex with itself (on the wire,
// outside every library's codes): the rank's step has ended, or its
// server left. The link hands it on as LinkStatuses::notFound.
constexpr int kHubRankGone = -2147483647 - 1;

} // namespace stepmap::hub
