#pragma once

// The processes server_scale starts (node servers, PMIx clients): started
// with their own variables ahead of the harness's environment and chosen
// descriptors in place, read and reaped within deadlines so that a hung
// child fails a run instead of hanging it.

#include "base/expected.hpp"

#include <sys/types.h>

#include <chrono>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace stepmap::bench {

struct RunAs {
    uid_t uid;
    gid_t gid;
};

struct ChildSpec {
    std::string path;
    std::vector<std::string> args;
    std::vector<std::string> env; // "KEY=VALUE", ahead of the harness's own
    // (child descriptor, parent descriptor) pairs: stdout, stderr, a socket.
    std::vector<std::pair<int, int>> fds;
    // Whom the child runs as, if not the harness's user (the node server
    // refuses root).
    std::optional<RunAs> user;
};

// The child's pid, or why it could not start (errno-style).
Expected<pid_t> spawnChild(const ChildSpec &spec);

// Reads every descriptor of outs until each reaches its end or the deadline
// passes; texts[i] gets what outs[i] gave. False on the deadline.
bool readAll(const std::vector<int> &outs, std::vector<std::string> &texts,
             std::chrono::steady_clock::time_point deadline);

// Reaps every pid; those still running at the deadline are killed
// (SIGKILL) and reaped. False if any had to be killed.
bool reapAll(const std::vector<pid_t> &pids, std::chrono::steady_clock::time_point deadline);

} // namespace stepmap::bench
