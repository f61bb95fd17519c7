#pragma once

// What srun hands slurmstepd through the job's environment: the plan, the
// rendezvous address, the step's secret, the modex mode and the profile. The names begin with
// SLURM: under --export=NONE or --export=VAR,... srun passes on only its SLURM* variables (and
// SPANK's own), and a stepmap step must stay one there. slurmstepd removes them before a task
// starts.

#include <cstddef>

namespace stepmap::plugin {

inline constexpr const char *kPlanVariable = "SLURM_STEPMAP_PLAN";
inline constexpr const char *kHubVariable = "SLURM_STEPMAP_HUB";
inline constexpr const char *kSecretVariable = "SLURM_STEPMAP_SECRET";
// --modex (modex/modex_mode.hpp) when not the MPI library's own, and the
// step's nodes' entries of the site's interconnect profile (YAML), cut into
// pieces: Linux caps one environment string at 128 KiB (MAX_ARG_STRLEN).
// The first piece is SLURM_STEPMAP_PROFILE, the next ones _1, _2, ...
inline constexpr const char *kModexVariable = "SLURM_STEPMAP_MODEX";
inline constexpr const char *kProfileVariables[] = {
    "SLURM_STEPMAP_PROFILE",    "SLURM_STEPMAP_PROFILE_1",  "SLURM_STEPMAP_PROFILE_2",
    "SLURM_STEPMAP_PROFILE_3",  "SLURM_STEPMAP_PROFILE_4",  "SLURM_STEPMAP_PROFILE_5",
    "SLURM_STEPMAP_PROFILE_6",  "SLURM_STEPMAP_PROFILE_7",  "SLURM_STEPMAP_PROFILE_8",
    "SLURM_STEPMAP_PROFILE_9",  "SLURM_STEPMAP_PROFILE_10", "SLURM_STEPMAP_PROFILE_11",
    "SLURM_STEPMAP_PROFILE_12", "SLURM_STEPMAP_PROFILE_13", "SLURM_STEPMAP_PROFILE_14",
    "SLURM_STEPMAP_PROFILE_15"};
inline constexpr std::size_t kProfilePieceBytes = 120 * 1024;
// A spawned step (protocol/hub/job_ids.hpp), set by the srun that spawns
// in the environment of the srun it starts: the job's hub ("HOST:PORT")
// and its secret, the step's index, and the rank that spawned it
// ("NSPACE:RANK").
inline constexpr const char *kJobHubVariable = "SLURM_STEPMAP_JOB_HUB";
inline constexpr const char *kJobSecretVariable = "SLURM_STEPMAP_JOB_SECRET";
inline constexpr const char *kJobStepVariable = "SLURM_STEPMAP_JOB_STEP";
inline constexpr const char *kSpawnParentVariable = "SLURM_STEPMAP_SPAWN_PARENT";
inline bool isSpawnVariable(const char *name) {
    return name == kJobHubVariable || name == kJobSecretVariable || name == kJobStepVariable ||
           name == kSpawnParentVariable;
}
// --with-ft's mode ("ulfm"), when recovery from a failed rank is on.
inline constexpr const char *kFaultToleranceVariable = "SLURM_STEPMAP_FT";
// The fence tree's fan-out srun's hub welcomes the servers with, when the
// step has a tree: servers below its second level join through their
// parent (protocol/hub/hub_relay.hpp).
inline constexpr const char *kTreeVariable = "SLURM_STEPMAP_TREE";
inline constexpr const char *kJobVariables[] = {
    kPlanVariable,           kHubVariable,          kSecretVariable,       kModexVariable,
    kProfileVariables[0],    kProfileVariables[1],  kProfileVariables[2],  kProfileVariables[3],
    kProfileVariables[4],    kProfileVariables[5],  kProfileVariables[6],  kProfileVariables[7],
    kProfileVariables[8],    kProfileVariables[9],  kProfileVariables[10], kProfileVariables[11],
    kProfileVariables[12],   kProfileVariables[13], kProfileVariables[14], kProfileVariables[15],
    kJobHubVariable,         kJobSecretVariable,    kJobStepVariable,      kSpawnParentVariable,
    kFaultToleranceVariable, kTreeVariable};

} // namespace stepmap::plugin
