#pragma once

// The plugin inside slurmstepd: starts this node's stepmap-stepd for the
// step (as the job's user, in the step's cgroup), gives each task the PMIx
// environment, stops the server when the tasks are done, and removes what
// it may have left. Runs as root: everything from the job environment is
// bounded and checked against what Slurm says of the step.
//
// SlurmdParameters=contain_spank (with a job namespace) runs user_init and
// task_exit each in a clone(CLONE_VM) child of slurmstepd: memory is shared,
// but the pid and the descriptor table are the clone's own, and a
// descriptor opened there is gone when it returns. So the server watches
// the pid slurm_spank_init ran in (slurmstepd itself), and a contained
// user_init keeps no descriptor for later hooks: Slurm's end-of-step kill of
// the step's processes stops the server, and a failing task's status is not
// forwarded (srun reports Slurm's own).
//
// Otherwise the server starts while slurmstepd forks the tasks: user_init
// only forks it; the last task_post_fork (the tasks are forked, held
// before exec until it returns) waits for its report and leaves the
// clients' environments in a sealed memfd every task inherited; each task
// takes its own in task_init. A contained user_init waits for the report
// itself, as the tasks then see its memory.

#include "plan/launch_plan.hpp"
#include "site_config.hpp"
#include "stepd/server_launch.hpp"

#include <unistd.h>

#include <map>
#include <optional>
#include <string>
#include <vector>

extern "C" {
#include <slurm/spank.h>
}

namespace stepmap::plugin {

class StepdSide {
public:
    // Constructed in slurm_spank_init, which runs in slurmstepd itself.
    explicit StepdSide(SiteConfig site) : site_(std::move(site)), stepdPid_(getpid()) {}

    int userInit(spank_t sp);
    int taskPostFork(spank_t sp);
    int taskInit(spank_t sp);
    int taskExit(spank_t sp);
    int exit(spank_t sp);

    // What userInit learns of the step (stepd_side.cpp).
    struct StepFacts;
    struct HubAccess;

private:
    // Makes the server's directory and starts the server for this node.
    int startServer(const StepFacts &facts, std::uint32_t node,
                    std::vector<std::uint32_t> localRanks, const std::string &planText,
                    const HubAccess &hub, spank_t sp);
    void addModexSettings(ServerLaunch &launch, spank_t sp) const;
    void addSpawnSettings(ServerLaunch &launch, spank_t sp) const;
    ServerLaunch serverLaunch(const StepFacts &facts, std::uint32_t node,
                              const std::string &planText, const HubAccess &hub, spank_t sp) const;
    // Removes the server's directory with the job user's rights only.
    void removeServerDirectory();
    // The server is ready: its handles kept, its clients' environments
    // known (and, when started ahead of the tasks, left in envFd_).
    bool takeRunningServer(Expected<RunningServer> running, const std::string &where);
    Expected<std::optional<ready::ClientEnvironment>>
    inheritedEnvironment(std::uint32_t rank) const;

    SiteConfig site_;
    pid_t stepdPid_;
    std::int64_t userInitUsec_ = 0; // when user_init began (srun -v's breakdown)
    // Started ahead of the tasks, until the last task_post_fork.
    std::optional<StartingServer> starting_;
    std::string startingWhere_; // "step J.S on NODE", for its messages
    os::UniqueFd envFd_;        // the clients' environments for the tasks (memfd)
    std::vector<std::uint32_t> localRanks_;
    std::uint32_t postForks_ = 0;
    bool active_ = false;
    LaunchPlan plan_;
    std::string tmpdir_;
    uid_t uid_ = 0;
    gid_t gid_ = 0;
    ServerProcess server_;
    os::UniqueFd serverNotices_; // the server's ready socket, for task failures
    std::uint32_t localTasks_ = 0;
    std::uint32_t exitedTasks_ = 0;
    std::map<std::uint32_t, ready::ClientEnvironment> clientEnv_;
};

} // namespace stepmap::plugin
