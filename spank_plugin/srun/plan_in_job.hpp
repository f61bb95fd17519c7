#pragma once

// From srun's input to the plan: the request (pure, plan_step.hpp), the job
// (asked of Slurm when srun has none, slurm_queries.hpp), the step's nodes
// in it and what Slurm says of them, then the plan (pure).

#include "base/expected.hpp"
#include "site/site_policy.hpp"
#include "srun/job_allocation.hpp"
#include "srun/plan_step.hpp"
#include "srun/srun_input.hpp"

#include <memory>
#include <string>
#include <vector>

namespace stepmap::plugin {

// The job stepmap asks Slurm for when srun has none (released if srun
// fails), and how long Slurm took to grant it.
struct OwnJob {
    std::unique_ptr<JobAllocation> job;
    double allocationMs = 0;
};

struct PlanOutcome {
    PlannedStep step;
    std::vector<std::string> verboseNotes; // for srun -v (ServedStep's)
};

// The plan for srun's step. `own` receives the job stepmap asked Slurm
// for, even when planning then fails, so that the caller releases it.
// Changes srun's environment only as srun needs for the job it runs in
// (the job's variables: step_environment.hpp's JobToRunIn, JobFromSlurm,
// JobAllocation::exportJobVariables).
Expected<PlanOutcome> planInJob(const SrunInput &input, const WrittenRequest &written,
                                const SitePolicy &policy, bool bySitePolicy, OwnJob &own);

} // namespace stepmap::plugin
