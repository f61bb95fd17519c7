#pragma once

// What srun hands slurmstepd through the job's environment: the plan, the
// rendezvous address and the step's secret. The names begin with SLURM:
// under --export=NONE or --export=VAR,... srun passes on only its SLURM*
// variables (and SPANK's own), and a stepmap step must stay one there.
// slurmstepd removes them before a task starts.

namespace stepmap::plugin {

inline constexpr const char *kPlanVariable = "SLURM_STEPMAP_PLAN";
inline constexpr const char *kHubVariable = "SLURM_STEPMAP_HUB";
inline constexpr const char *kSecretVariable = "SLURM_STEPMAP_SECRET";
inline constexpr const char *kJobVariables[] = {kPlanVariable, kHubVariable, kSecretVariable};

} // namespace stepmap::plugin
