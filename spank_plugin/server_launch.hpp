#pragma once

// Starting stepmap-stepd from slurmstepd: double fork (slurmstepd reaps its
// children), full privilege drop to the job's user, and a pipe on which the
// server reports readiness and its clients' environments.

#include "expected.hpp"

#include <sys/types.h>

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace stepmap::plugin {

struct ServerLaunch {
    std::string executable;
    std::vector<std::string> args;    // without argv[0]
    std::vector<std::string> environ; // KEY=VALUE, the server's whole environment
    uid_t uid;
    gid_t gid;
    int timeoutSec;
    std::string logFile; // the server's stderr; /dev/null if empty
};

struct RunningServer {
    pid_t pid;
    int pidfd; // owned by the caller
    std::map<std::uint32_t, std::vector<std::pair<std::string, std::string>>> clientEnv;
};

// The server's --ready-fd is the literal "{fd}" in args, replaced here.
Expected<RunningServer> launchServer(const ServerLaunch &launch);

} // namespace stepmap::plugin
