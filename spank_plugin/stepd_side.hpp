#pragma once

// The plugin inside slurmstepd: starts this node's stepmap-stepd for the
// step (as the job's user, in the step's cgroup), gives each task the PMIx
// environment, stops the server when the tasks are done, and removes what
// it may have left.

#include "launch_plan.hpp"
#include "site_config.hpp"

#include <map>
#include <string>
#include <vector>

extern "C" {
#include <slurm/spank.h>
}

namespace stepmap::plugin {

class StepdSide {
public:
    explicit StepdSide(SiteConfig site) : site_(std::move(site)) {}

    int userInit(spank_t sp);
    int taskInit(spank_t sp);
    int taskExit(spank_t sp);
    int exit(spank_t sp);

private:
    void stopServer(int waitMs);

    SiteConfig site_;
    bool active_ = false;
    LaunchPlan plan_;
    std::string tmpdir_;
    uid_t uid_ = 0;
    int serverPidfd_ = -1;
    pid_t serverPid_ = 0;
    std::uint32_t localTasks_ = 0;
    std::uint32_t exitedTasks_ = 0;
    std::map<std::uint32_t, std::vector<std::pair<std::string, std::string>>> clientEnv_;
};

} // namespace stepmap::plugin
