#pragma once

// The step's rendezvous hub in srun, from local_user_init to srun's exit:
// it tells the nodes where it is, reports aborts and lost servers (the step
// is then killed), collects the node servers' timelines for srun -v, and
// gives srun the status to exit with.

#include "plan/launch_plan.hpp"
#include "protocol/hub/rendezvous_hub.hpp"
#include "protocol/timeline/critical_path.hpp"
#include "protocol/timeline/exchange_counters.hpp"
#include "site_config.hpp"
#include "srun/job_hub_file.hpp"
#include "srun/spawned_steps.hpp"

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

namespace stepmap::plugin {

class StepHub {
public:
    // What the hub needs of the step: the plan (kept by srun's side), the
    // site, and whether the user asked for --modex=profile.
    struct Step {
        const LaunchPlan *plan = nullptr;
        const SiteConfig *site = nullptr;
        bool profileModex = false;
        std::uint32_t jobId = 0;
        std::uint32_t stepId = 0;
    };

    // Starts the hub and sets the variables that tell the nodes where it
    // is and its secret; nullptr after logging why it could not start.
    static std::unique_ptr<StepHub> start(const Step &step);
    ~StepHub();

    // srun is done with the step: ends the hub and logs srun -v's critical
    // path with `marks`. Returns the status srun exits with (a rank's abort
    // status, else the first failed rank's), or -1 to leave srun's own.
    int finish(timeline::SrunMarks marks);
    // A server failed or was lost (the job then ends with status 1).
    bool failed() const { return failed_.load(); }

private:
    explicit StepHub(const Step &step) : step_(step) {}
    hub::RendezvousHub::Events events();
    void logCriticalPath(const timeline::SrunMarks &marks);

    Step step_;
    std::mutex timelinesMutex_;
    std::map<std::uint32_t, std::vector<timeline::Event>> timelines_;
    std::map<std::uint32_t, timeline::ExchangeCounters> exchange_; // under timelinesMutex_
    std::atomic<int> abortStatus_{-1};
    std::atomic<int> firstFailure_{-1}; // exit status of the first rank that failed
    std::atomic<bool> failed_{false};
    // Set when srun is done with the step: a server lost then, or just
    // before (a task that failed at once makes Slurm end the step under a
    // server still joining), is no reason to kill the step.
    std::mutex endingMutex_;
    std::condition_variable endingChanged_;
    bool stepEnding_ = false;
    // The file that makes this srun's hub the job's, while it lives.
    std::unique_ptr<JobHubFile> jobHubFile_;
    // The steps the ranks spawned (ended before the hub).
    std::unique_ptr<SpawnedSteps> spawned_;
    // Last, so that it ends (and its thread with it) before the members its
    // events use.
    std::unique_ptr<hub::RendezvousHub> hub_;
};

} // namespace stepmap::plugin
