#include "stepd_side.hpp"

#include "plugin_log.hpp"
#include "server_launch.hpp"

#include <ftw.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

extern char **environ;

namespace stepmap::plugin {

namespace {

std::optional<std::string> jobEnv(spank_t sp, const char *name) {
    char buf[1 << 16];
    // The plan of a large step may not fit; ask for its size first.
    if (spank_getenv(sp, name, buf, sizeof buf) == ESPANK_SUCCESS)
        return std::string(buf);
    std::vector<char> big(64u << 20);
    if (spank_getenv(sp, name, big.data(), static_cast<int>(big.size())) == ESPANK_SUCCESS)
        return std::string(big.data());
    return std::nullopt;
}

// Root side: removes the server's directory if the server could not. Only a
// real directory owned by the job's user is touched, and links are not
// followed, so a user cannot point this at anything else.
void removeServerDir(const std::string &dir, uid_t uid) {
    struct stat st {};
    if (dir.empty() || lstat(dir.c_str(), &st) != 0 || !S_ISDIR(st.st_mode) || st.st_uid != uid)
        return;
    nftw(
        dir.c_str(),
        [](const char *path, const struct stat *, int, struct FTW *) { return remove(path); }, 16,
        FTW_DEPTH | FTW_PHYS | FTW_MOUNT);
}

} // namespace

int StepdSide::userInit(spank_t sp) {
    auto planText = jobEnv(sp, "STEPMAP_PLAN");
    if (!planText)
        return 0; // not a stepmap step
    active_ = true;
    auto plan = decodePlan(*planText);
    if (!plan) {
        logError("STEPMAP_PLAN in the job environment is damaged: " + plan.error().message);
        return -1;
    }
    plan_ = std::move(plan.value());

    uint32_t jobId = 0, stepId = 0;
    gid_t gid = 0;
    spank_get_item(sp, S_JOB_UID, &uid_);
    spank_get_item(sp, S_JOB_GID, &gid);
    spank_get_item(sp, S_JOB_ID, &jobId);
    spank_get_item(sp, S_JOB_STEPID, &stepId);
    spank_get_item(sp, S_JOB_LOCAL_TASK_COUNT, &localTasks_);
    char *stepCores = nullptr;
    if (spank_get_item(sp, S_STEP_ALLOC_CORES, &stepCores) != ESPANK_SUCCESS || !stepCores) {
        logError("Slurm did not say which cores the step holds on this node");
        return -1;
    }

    // Which plan node is this? The one holding this node's tasks; and Slurm
    // must have put exactly the plan's ranks here.
    std::optional<std::uint32_t> node;
    for (std::uint32_t i = 0; i < localTasks_; ++i) {
        uint32_t global = 0;
        if (spank_get_item(sp, S_JOB_LOCAL_TO_GLOBAL_ID, i, &global) != ESPANK_SUCCESS ||
            global >= plan_.ranks.size()) {
            logError("task " + std::to_string(global) + " is not in the plan of " +
                     std::to_string(plan_.ranks.size()) + " ranks");
            return -1;
        }
        std::uint32_t n = plan_.ranks[global].node;
        if (node && *node != n) {
            logError("Slurm started ranks of different plan nodes here; the step does not "
                     "match its plan");
            return -1;
        }
        node = n;
    }
    if (!node)
        return 0;
    if (plan_.ranksOn(*node).size() != localTasks_) {
        logError("Slurm started " + std::to_string(localTasks_) + " tasks on " +
                 plan_.nodes[*node].name + " but the plan has " +
                 std::to_string(plan_.ranksOn(*node).size()));
        return -1;
    }
    if (uid_ == 0) {
        logError("refusing to start the PMIx server for a root job: stepmap's server never runs "
                 "as root; run the job as a regular user");
        return -1;
    }

    std::string nodeName = plan_.nodes[*node].name;
    std::string stepTag = std::to_string(jobId) + "." + std::to_string(stepId);
    tmpdir_ = site_.tmpdir + "/stepmap." + std::to_string(uid_) + "." + stepTag + "." + nodeName;

    auto hub = jobEnv(sp, "STEPMAP_HUB");
    auto secret = jobEnv(sp, "STEPMAP_SECRET");
    if (!hub || !secret) {
        logError("the job environment lacks STEPMAP_HUB/STEPMAP_SECRET (srun did not load the "
                 "stepmap plugin?)");
        return -1;
    }

    ServerLaunch launch;
    launch.executable = site_.server;
    launch.args = {"--step-cores",
                   stepCores,
                   "--nspace",
                   "stepmap." + stepTag,
                   "--node-index",
                   std::to_string(*node),
                   "--tmpdir",
                   tmpdir_,
                   "--hub",
                   *hub,
                   "--ready-fd",
                   "{fd}",
                   "--watch-pid",
                   std::to_string(getpid()),
                   "--dmodex-timeout",
                   std::to_string(site_.dmodexTimeoutSec)};
    launch.environ = {"STEPMAP_PLAN=" + *planText, "STEPMAP_SECRET=" + *secret,
                      "PATH=/usr/bin:/bin"};
    launch.uid = uid_;
    launch.gid = gid;
    launch.timeoutSec = site_.serverStartTimeoutSec;
    if (!site_.logDir.empty())
        launch.logFile = site_.logDir + "/stepmap-stepd." + stepTag + "." + nodeName + ".log";
    auto running = launchServer(launch);
    if (!running) {
        logError("the PMIx server for step " + stepTag + " on " + nodeName +
                 " did not start: " + running.error().message);
        removeServerDir(tmpdir_, uid_);
        return -1;
    }
    serverPid_ = running.value().pid;
    serverPidfd_ = running.value().pidfd;
    clientEnv_ = std::move(running.value().clientEnv);
    logDebug("server " + std::to_string(serverPid_) + " serves step " + stepTag + " on " +
             nodeName);
    return 0;
}

int StepdSide::taskInit(spank_t sp) {
    if (!active_)
        return 0;
    uint32_t global = 0;
    if (spank_get_item(sp, S_TASK_GLOBAL_ID, &global) != ESPANK_SUCCESS)
        return -1;
    auto it = clientEnv_.find(global);
    if (it == clientEnv_.end()) {
        logError("no PMIx environment for rank " + std::to_string(global));
        return -1;
    }
    for (auto &[key, value] : it->second)
        if (spank_setenv(sp, key.c_str(), value.c_str(), 1) != ESPANK_SUCCESS)
            return -1;
    // The binding of the plan, exactly; unbound ranks keep the step's cgroup.
    if (const CpuBinding *b = plan_.bindingOf(global)) {
        cpu_set_t set;
        CPU_ZERO(&set);
        for (auto cpu : b->os)
            if (cpu < CPU_SETSIZE)
                CPU_SET(cpu, &set);
        if (sched_setaffinity(0, sizeof set, &set) != 0) {
            logError("cannot bind rank " + std::to_string(global) +
                     " to its planned CPUs: " + std::strerror(errno));
            return -1;
        }
    }
    return 0;
}

void StepdSide::stopServer(int waitMs) {
    if (serverPidfd_ < 0)
        return;
    syscall(SYS_pidfd_send_signal, serverPidfd_, SIGTERM, nullptr, 0);
    pollfd p{serverPidfd_, POLLIN, 0};
    if (poll(&p, 1, waitMs) == 0)
        syscall(SYS_pidfd_send_signal, serverPidfd_, SIGKILL, nullptr, 0);
    close(serverPidfd_);
    serverPidfd_ = -1;
}

int StepdSide::taskExit(spank_t) {
    if (!active_)
        return 0;
    // Slurm SIGKILLs the server right after the last task; stop it first so
    // it finalizes PMIx and removes its files.
    if (++exitedTasks_ == localTasks_)
        stopServer(2000);
    return 0;
}

int StepdSide::exit(spank_t) {
    if (!active_)
        return 0;
    stopServer(200);
    removeServerDir(tmpdir_, uid_);
    return 0;
}

} // namespace stepmap::plugin
