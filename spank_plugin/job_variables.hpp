#pragma once

// What srun hands slurmstepd through the job's environment: the plan, the
// rendezvous address, the step's secret, the modex mode and the profile. The names begin with
// SLURM: under --export=NONE or --export=VAR,... srun passes on only its SLURM* variables (and
// SPANK's own), and a stepmap step must stay one there. slurmstepd removes them before a task
// starts.

namespace stepmap::plugin {

inline constexpr const char *kPlanVariable = "SLURM_STEPMAP_PLAN";
inline constexpr const char *kHubVariable = "SLURM_STEPMAP_HUB";
inline constexpr const char *kSecretVariable = "SLURM_STEPMAP_SECRET";
// --modex (modex/modex_mode.hpp) when not the MPI library's own, and the
// step's nodes' entries of the site's interconnect profile (YAML).
inline constexpr const char *kModexVariable = "SLURM_STEPMAP_MODEX";
inline constexpr const char *kProfileVariable = "SLURM_STEPMAP_PROFILE";
inline constexpr const char *kJobVariables[] = {kPlanVariable, kHubVariable, kSecretVariable,
                                                kModexVariable, kProfileVariable};

} // namespace stepmap::plugin
