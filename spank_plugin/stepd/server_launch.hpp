#pragma once

// Starting stepmap-stepd from slurmstepd, which runs this code as root:
// a double fork (slurmstepd reaps its own children), a full and permanent
// drop to the job's user, the job's resource limits, and a socket on which
// the server reports readiness and its clients' environments.
//
// Nothing the server (the job's user) says is trusted for a process: the
// plugin learns the server's process from the fork chain, as a pidfd
// handed over on a socket only root processes held, and signals only that.

#include "base/expected.hpp"
#include "os/unique_fd.hpp"
#include "protocol/ready/ready_report.hpp"

#include <sys/resource.h>
#include <sys/types.h>

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace stepmap::plugin {

struct ServerLaunch {
    std::string executable;
    std::vector<std::string> args;    // without argv[0]; "{fd}" becomes the ready socket's number
    std::vector<std::string> environ; // KEY=VALUE, the server's whole environment
    uid_t uid = 0;
    gid_t gid = 0;
    // The job's soft limits (resource, value), applied after the drop, so
    // never above the hard limits the server inherits.
    std::vector<std::pair<int, rlim_t>> softLimits;
    int timeoutSec = 30;
    // Made by the launch as the job's user before the server runs (root
    // never makes anything in a directory users may write): the server's
    // private directory (mode 0700; must not exist yet), and its log
    // (O_EXCL, never through a link; empty or not made: /dev/null).
    std::string directory;
    std::string logPath;
    // The ranks of this node: the report must give each one's environment.
    std::vector<std::uint32_t> localRanks;
};

// A started server process, named by a pidfd: signals reach exactly the
// process that was forked, even after it exited and its pid was reused.
class ServerProcess {
public:
    ServerProcess() = default;
    ServerProcess(pid_t pid, os::UniqueFd pidfd) : pid_(pid), pidfd_(std::move(pidfd)) {}

    pid_t pid() const { return pid_; }
    explicit operator bool() const { return static_cast<bool>(pidfd_); }
    // SIGTERM, then SIGKILL if it has not exited within waitMs; forgets it.
    void stop(int waitMs);
    // Closes the handle and leaves the process running.
    void forget() { pidfd_.reset(); }

private:
    pid_t pid_ = 0;
    os::UniqueFd pidfd_;
};

struct RunningServer {
    ServerProcess process;
    std::map<std::uint32_t, ready::ClientEnvironment> clientEnv;
    // The ready socket, kept for notices to the server ("X <rank> <status>"
    // when a task fails); written without blocking, never read again.
    os::UniqueFd notices;
};

// The root process between slurmstepd and the server, kept until the
// server is placed: while it has not reaped the server, the server's pid
// cannot name another process, even if the server (the user's) exited.
class PidGuard {
public:
    PidGuard() = default;
    PidGuard(pid_t pid, os::UniqueFd control) : pid_(pid), control_(std::move(control)) {}
    PidGuard(PidGuard &&other) noexcept { *this = std::move(other); }
    PidGuard &operator=(PidGuard &&other) noexcept;
    ~PidGuard() { release(); }

    explicit operator bool() const { return static_cast<bool>(control_); }
    int control() const { return control_.get(); }
    // Lets it go (it exits; reaped here when it is this process's child).
    void release();

private:
    pid_t pid_ = 0;
    os::UniqueFd control_;
};

// A server forked and on its way, its report not read yet: slurmstepd
// sets up the step and forks the tasks meanwhile (stepd_side.hpp).
struct StartingServer {
    ServerProcess process;
    PidGuard guard;     // until placed: process.pid() is the server's for sure
    os::UniqueFd ready; // the plugin's end of the ready socket
    int timeoutSec = 30;
    std::vector<std::uint32_t> localRanks;
    std::string logProblem; // why the server runs without its log, if it does
};

// Moves the starting server into the cgroups slurmstepd itself is in now
// (os/cgroup_membership.hpp), while its pid is guarded; then lets the guard go.
Expected<void> placeServer(StartingServer &starting);

// Forks the server (as launchServer) without waiting for its report.
Expected<StartingServer> spawnServer(ServerLaunch launch);
// Reads the report of a spawned server: its clients' environments, or the
// reason it failed (it is then stopped).
Expected<RunningServer> awaitServer(StartingServer starting);
// Both: starts the server and waits until it is ready.
Expected<RunningServer> launchServer(ServerLaunch launch);

// Runs work in a child process that fully dropped to uid/gid first, so it
// can do no more than the user could; waits at most timeoutMs (then kills
// it). True if work returned true. work runs in a forked child of the
// multithreaded slurmstepd: it may make only async-signal-safe calls
// (os::removeTree does; build what it needs before).
bool runAsUser(uid_t uid, gid_t gid, const std::function<bool()> &work, int timeoutMs);

// The job's soft limits from Slurm's SLURM_RLIMIT_<NAME>=[U]<value>
// variables, as getenv-like lookups give them; unknown or bad values are
// skipped.
std::vector<std::pair<int, rlim_t>>
jobSoftLimits(const std::function<std::optional<std::string>(const char *)> &getenv);

} // namespace stepmap::plugin
