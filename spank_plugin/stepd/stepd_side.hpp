#pragma once

// The plugin inside slurmstepd: starts this node's stepmap-stepd for the
// step (as the job's user, in the step's cgroups), gives each task the PMIx
// environment, stops the server when the tasks are done, and removes what
// it may have left. Runs as root: everything from the job environment is
// bounded and checked against what Slurm says of the step.
//
// The server starts in slurm_spank_init, the step's first hook, so that its
// start overlaps slurmstepd's own set-up (the step's cgroups, PAM, the
// tasks' fork). It lands where slurmstepd is then, outside the step's
// cgroups (cgroup v1's cpuset: the node's root one): the first
// task_post_fork, when the cgroups exist and hold slurmstepd and no task
// has exec'd yet, moves it into slurmstepd's own cgroups, while its
// process is guarded (server_launch.hpp: PidGuard). The last task_post_fork
// (the tasks are forked, held before exec until it returns) waits for its
// report and leaves the clients' environments in a sealed memfd every task
// inherited; each task takes its own in task_init. If the step fails before
// that, the exit hook stops the server and removes its directory. A step
// refused in slurm_spank_init (a damaged plan, ...) fails in user_init,
// whose message reaches srun.
//
// SlurmdParameters=contain_spank (24.05+, with a job namespace) runs
// user_init, task_post_fork and task_exit each in a clone(CLONE_VM) child
// of slurmstepd: memory is shared, the descriptor table is a copy. What
// they use was opened in slurm_spank_init, in slurmstepd itself, so it is
// in both; the server watches the pid slurm_spank_init ran in.

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

    int init(spank_t sp);
    int userInit(spank_t sp);
    int taskPostFork(spank_t sp);
    int taskInit(spank_t sp);
    int taskExit(spank_t sp);
    int exit(spank_t sp);

    // What init learns of the step (stepd_side.cpp).
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

    // Keeps why the step cannot be served, for userInit to say; returns 0.
    int refuse(std::string message);

    SiteConfig site_;
    pid_t stepdPid_;
    std::string refusal_;
    std::int64_t initUsec_ = 0; // when slurm_spank_init began (srun -v's breakdown)
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
