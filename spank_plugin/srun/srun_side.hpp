#pragma once

// The plugin inside srun: its SPANK hooks. init runs the chain of values in
// spank_plugin/srun/ (read srun's input once; decide whether stepmap serves;
// ask Slurm; plan; apply the plan to srun, re-executing it if needed) and
// keeps what the later hooks need; local_user_init checks the step Slurm
// created and starts the hub; exit ends the hub and the job. A user error
// ends srun here, at the hook, with the message.

#include "os/unique_fd.hpp"
#include "plan/launch_plan.hpp"
#include "protocol/timeline/critical_path.hpp"
#include "site_config.hpp"
#include "srun/job_allocation.hpp"
#include "srun/served_decision.hpp"
#include "srun/step_hub.hpp"

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

extern "C" {
#include <slurm/spank.h>
}

namespace stepmap::plugin {

// What init leaves for srun's later hooks when stepmap serves the step.
struct ServedStep {
    // Option values the plan was made with, and those salloc/sbatch
    // forwarded (srun hands both to the option callbacks).
    std::map<std::string, std::string> planned;
    std::map<std::string, std::string> forwarded;
    bool profileModex = false; // --modex=profile (or the site's default)
    LaunchPlan plan;
    os::UniqueFd hostfile;   // srun has read it by init_post_opt
    double planMs = 0;       // srun-side cost, without the wait for the allocation
    double allocationMs = 0; // request to grant, when stepmap asked for the job
    // What srun -v says with the plan's cost once srun knows its
    // verbosity: PSI_* variables ignored because an option or an earlier
    // one won, and how --overbook shaped the job stepmap asked for.
    std::vector<std::string> verboseNotes;
    // The job stepmap asked Slurm for, when srun had none; ended with srun.
    std::unique_ptr<JobAllocation> job;
    timeline::SrunMarks marks; // srun -v's breakdown of the critical path
};

class SrunSide {
public:
    explicit SrunSide(SiteConfig site) : site_(std::move(site)) {}

    // slurm_spank_init: plan and early environment. A user error ends srun.
    int init(spank_t sp);
    // Option callback: the value srun parsed must be the one planned with.
    int optionSeen(const std::string &name, const std::string &value);
    int initPostOpt(spank_t sp);
    int localUserInit(spank_t sp);
    int exit(spank_t sp);

private:
    SiteConfig site_;
    ServeDecision serve_;
    std::optional<ServedStep> step_; // none: stepmap does not serve this srun
    std::unique_ptr<StepHub> hub_;   // from local_user_init
};

} // namespace stepmap::plugin
