#pragma once

// The plugin inside srun: computes the launch plan before srun reads its
// options, makes Slurm start exactly that plan, checks the step Slurm
// created, and runs the step's rendezvous hub.

#include "display_map.hpp"
#include "hosts/allocation.hpp"
#include "hub/rendezvous_hub.hpp"
#include "job_allocation.hpp"
#include "options.hpp"
#include "plan/launch_plan.hpp"
#include "plan/plan_report.hpp"
#include "psi_environment.hpp"
#include "replaced_file.hpp"
#include "request/plan_request.hpp"
#include "site_config.hpp"
#include "srun/served_decision.hpp"
#include "srun/step_environment.hpp"
#include "srun_command_line.hpp"
#include "timeline/critical_path.hpp"
#include "timeline/exchange_counters.hpp"
#include "unique_fd.hpp"

#include <atomic>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

extern "C" {
#include <slurm/spank.h>
}

namespace stepmap::plugin {

using hub::RendezvousHub;

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
    [[noreturn]] void refuse(const std::string &message);
    // refuse, after releasing the job stepmap allocated.
    [[noreturn]] void fail(const std::string &message);
    // Runs srun anew with `args` (argv without argv[0]); returns only to fail.
    [[noreturn]] void reexecute(const std::vector<std::string> &args);
    // init's steps once the plan is made (srun_side.cpp).
    // The site's limits (limits.*, allow.*) on the finished plan.
    Expected<bool> withinSitePolicy(const PlanRequest &req, const LaunchPlan &plan) const;
    void writeHostfile();
    void exportPlan();
    void exportModex();
    void displayJobMap(const SrunCommandLine &cmd);
    // --display-map's value, checked before the plan; svg:FILE's picture
    // (srun_display_map.cpp).
    void prepareDisplayMap();
    void drawJobMap(const SrunCommandLine &cmd);
    // allocation_ with every node's model from Slurm, for the picture.
    Expected<Allocation> allocationWithModels(const std::string &job) const;
    // localUserInit's steps.
    bool stepMatchesPlan(spank_t sp, std::uint32_t jobId, std::uint32_t stepId);
    void logPlanCost();
    RendezvousHub::Events hubEvents(std::uint32_t jobId, std::uint32_t stepId);
    bool startHub(std::uint32_t jobId, std::uint32_t stepId);
    // The allocation (asked of Slurm when srun has none), the step's nodes in
    // it, then the plan.
    Expected<bool> plan(const SrunCommandLine &cmd, const EnvironmentValues &environment);
    // The placement request from stepmap's options, files and PSI_* values.
    Expected<bool> buildRequest(const EnvironmentValues &environment, PlanRequest &req);

    SiteConfig site_;
    bool active_ = false;
    std::map<std::string, std::string> planned_;   // option values used for the plan
    std::map<std::string, std::string> forwarded_; // those salloc/sbatch forwarded
    StepmapOptions options_;
    std::optional<std::string> ntasks_;
    std::optional<std::string> multiProgFile_; // srun --multi-prog's configuration
    LaunchPlan plan_;
    PlanRequest request_;
    PlanReport report_;
    Allocation allocation_;    // with node models when the plan needed them
    std::string hostfilePath_; // /proc/self/fd/N of an in-memory file
    os::UniqueFd hostfileFd_;
    double planMs_ = 0;       // srun-side cost, without the wait for the allocation
    double allocationMs_ = 0; // request to grant, when stepmap asked for the job
    // PSI_* variables ignored because an option or an earlier one won;
    // logged with the plan's cost once srun knows its verbosity.
    std::vector<std::string> psiNotes_;
    // Whether and why stepmap serves this srun.
    ServeDecision serve_;
    // srun's variables as set when init ran.
    SrunEnvironment environment_;
    // The site's defaults the plan used ("--map-by core"), named in errors.
    std::vector<std::string> siteDefaults_;
    // --display-map: the text map, or the file the picture goes to (its
    // temporary file created before anything is allocated).
    bool textMap_ = false;
    std::optional<ReplacedFile> mapPicture_;
    std::unique_ptr<RendezvousHub> hub_;
    // srun -v's breakdown of the step's critical path: srun's marks (wall
    // clock) and each node server's timeline, received as it leaves.
    timeline::SrunMarks marks_;
    std::mutex timelinesMutex_;
    std::map<std::uint32_t, std::vector<timeline::Event>> timelines_;
    std::map<std::uint32_t, timeline::ExchangeCounters> exchange_; // under timelinesMutex_
    void logCriticalPath();
    // The job stepmap asked Slurm for, when srun had none; ended with srun.
    std::unique_ptr<JobAllocation> job_;
    std::atomic<int> abortStatus_{-1};
    std::atomic<int> firstFailure_{-1}; // exit status of the first rank that failed
    std::atomic<bool> failed_{false};
    // Set when srun is done with the step (exit): a server lost then, or
    // just before (a task that failed at once makes Slurm end the step
    // under a server still joining), is no reason to kill the step.
    std::mutex endingMutex_;
    std::condition_variable endingChanged_;
    bool stepEnding_ = false;
};

} // namespace stepmap::plugin
