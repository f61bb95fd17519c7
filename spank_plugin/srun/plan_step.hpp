#pragma once

// srun's plan as a chain of values (like mapper/planner/planner_stages.hpp):
// the request from stepmap's options, srun's and the environment, then the
// plan inside the job Slurm gave. Pure: files are read through the caller's
// reader; Slurm is asked elsewhere (slurm_queries.hpp), between the two.

#include "base/expected.hpp"
#include "hosts/allocation.hpp"
#include "hosts/step_nodes.hpp"
#include "options.hpp"
#include "plan/launch_plan.hpp"
#include "plan/plan_report.hpp"
#include "planner/srun_step_rules.hpp"
#include "request/plan_request.hpp"
#include "request/request_options.hpp"
#include "site/site_policy.hpp"
#include "srun/psi_environment.hpp"
#include "srun/srun_command_line.hpp"
#include "srun/step_environment.hpp"

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace stepmap::plugin {

// Reads a user's file (--hostfile, --multi-prog's, seq/rankfile FILE=,
// PSI_HOSTFILE, -w's file), the error the reason alone.
using StepFileReader = std::function<Expected<std::string>(const std::string &path)>;

// 1. stepmap's options as written, with the site's default placement
// (stepmap.yaml: defaults.*) where the user gave none. Below the
// environment: ParaStation placement from PSI_* or its options decides the
// mapping itself, so the site's map_by, rank_by and bind_to then stay out.
struct WrittenRequest {
    RequestOptions options;
    // The site's defaults used ("--map-by core"), for errors to name.
    std::vector<std::string> siteDefaults;
};
WrittenRequest writtenRequest(const StepmapOptions &options, const EnvironmentValues &psi,
                              const SitePolicy &policy);

// 2. The placement request: the written options, -n, --multi-prog's file
// (each line an application context) and --overbook, --loop-nodes-first,
// --nodes-sort, --tpp and their PSI_* equivalents (options win).
struct StepRequest {
    PlanRequest request;
    // PSI_* variables ignored because an option or an earlier one won.
    std::vector<std::string> psiNotes;
};
struct StepRequestInput {
    std::optional<std::string> ntasks;        // -n as written
    std::optional<std::string> multiProgFile; // srun --multi-prog's configuration
    StepmapOptions options;
    EnvironmentValues psi;
};
Expected<StepRequest> buildStepRequest(const WrittenRequest &written, const StepRequestInput &input,
                                       const StepFileReader &readFile);

// A step only the site's serve: pmix engaged counts its tasks as srun does
// (the user wrote an srun command, not an mpirun one): -n, else the job's
// SLURM_NTASKS (or SLURM_NPROCS), else one per node.
struct SrunTaskCount {
    bool applies = false;
    std::optional<int> jobTasks; // SLURM_NTASKS / SLURM_NPROCS
};
Expected<SrunTaskCount> srunTaskCount(const PlanRequest &request, bool bySitePolicy,
                                      const SrunEnvironment &environment);

// -N, -w and -x as srun would apply them to the step inside the job.
Expected<StepNodeRequest> stepNodeRequest(const SrunCommandLine &cmd,
                                          const StepFileReader &readFile);

// srun's -c, or the variable this release's srun reads as -c
// (`cpusPerTaskVariable`, which sbatch -c sets), as messages name it.
std::optional<CpusPerTask> cpusPerTask(const SrunCommandLine &cmd,
                                       const SrunEnvironment &environment,
                                       const std::string &cpusPerTaskVariable);
// srun's --ntasks-per-node (or --tasks-per-node), as written.
std::optional<WrittenSetting> tasksPerNode(const SrunCommandLine &cmd);

// 3. The plan inside the job's nodes (with what Slurm said of them): -c
// divides the slots, then the mapper plans; srun's --ntasks-per-node and
// the site's limits must agree with the plan.
struct StepRules {
    std::optional<CpusPerTask> cpusPerTask;
    std::optional<WrittenSetting> tasksPerNode;
    // What asked for overbooking, for the site's allow.overbook
    // ("--overbook", "PSI_OVERBOOK"); none when not overbooking.
    std::optional<std::string> overbookBy;
};
struct PlannedStep {
    LaunchPlan plan;
    PlanReport report;
    Allocation allocation; // with node models when the plan needed them
    PlanRequest request;
};
Expected<PlannedStep> planStep(PlanRequest request, Allocation allocation, const StepRules &rules,
                               const SitePolicy &policy);

// 4. The step Slurm created (local_user_init) must be the plan's: as many
// tasks and nodes; the error says both.
struct CreatedStep {
    std::uint32_t jobId = 0;
    std::uint32_t stepId = 0;
    std::uint32_t tasks = 0;
    std::uint32_t nodes = 0;
};
Expected<void> checkStepAgainstPlan(const LaunchPlan &plan, const CreatedStep &step);

} // namespace stepmap::plugin
