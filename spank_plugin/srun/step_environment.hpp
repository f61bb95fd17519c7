#pragma once

// What the srun side reads from srun's environment and writes to it, as
// values: the functions here only compute; applyToEnvironment is the one
// that calls setenv/unsetenv.

#include "base/expected.hpp"
#include "hosts/allocation.hpp"
#include "plan/launch_plan.hpp"
#include "request/plan_request.hpp"
#include "srun/srun_command_line.hpp"

#include <map>
#include <optional>
#include <string>
#include <vector>

namespace stepmap::plugin {

// srun's variables by name, as set (a snapshot of those the srun side reads).
using SrunEnvironment = std::map<std::string, std::string>;

// The snapshot of `names` that are set in this process's environment.
SrunEnvironment readSrunEnvironment(const std::vector<std::string> &names);

// One change to srun's environment: set `value` (keeping a value already
// set unless `overwrite`), or unset the variable when there is no value.
struct EnvironmentChange {
    std::string name;
    std::optional<std::string> value;
    bool overwrite = true;

    bool operator==(const EnvironmentChange &) const = default;
};
using EnvironmentChanges = std::vector<EnvironmentChange>;

// Makes the changes, in order.
void applyToEnvironment(const EnvironmentChanges &changes);

// The job srun runs in: --jobid (srun's own option wins), else the one
// salloc/sbatch set (SLURM_JOB_ID); none without an allocation. The job's
// node and CPU variables describe it only when they are that job's.
struct JobToRunIn {
    std::optional<std::string> jobId;
    std::optional<std::string> nodeList;    // SLURM_JOB_NODELIST, if the job's
    std::optional<std::string> cpusPerNode; // SLURM_JOB_CPUS_PER_NODE, if the job's
    // --jobid names another job than SLURM_JOB_ID: srun must not pass the
    // other job's variables on (unset).
    EnvironmentChanges changes;

    bool operator==(const JobToRunIn &) const = default;
};
JobToRunIn jobToRunIn(const SrunCommandLine &cmd, const SrunEnvironment &environment);

// The job's allocation from its variables (nodeList and cpusPerNode given).
Expected<Allocation> allocationOfJobVariables(const JobToRunIn &job);
// The same from what Slurm says of the job; the variables srun then passes
// on to the step are set from it (JobToRunIn had none).
struct JobFromSlurm {
    Allocation allocation;
    EnvironmentChanges changes; // SLURM_JOB_NODELIST, SLURM_JOB_CPUS_PER_NODE
};
Expected<JobFromSlurm> allocationOfLookedUpJob(const std::string &jobId,
                                               const std::string &nodeList,
                                               const std::string &cpusPerNode);

// The step's host file: one line per rank, in rank order, naming its node.
std::string hostfileText(const LaunchPlan &plan);

// The plan and the settings it needs, in the environment srun and the nodes
// read: the host file (one line per rank), the arbitrary distribution, no
// Slurm MPI plugin or binding, a failed rank ending the step (unless
// -K/--kill-on-bad-exit was given), overcommit when the plan oversubscribes,
// --tpp's CPUs per task (through `cpusPerTaskVariable`, the one this
// release's srun reads as -c), SLURM_IMMEDIATE under a PSI_* variable
// without PSI_WAIT, and the plan itself (SLURM_STEPMAP_PLAN).
// Fails when the encoded plan exceeds what one environment string may hold.
Expected<EnvironmentChanges> planEnvironment(const LaunchPlan &plan, const PlanRequest &request,
                                             const std::string &hostfilePath,
                                             const std::string &cpusPerTaskVariable);

// --with-ft=ulfm, as mpirun's: no failed rank ends the step (Slurm's
// -K0, whatever KillOnBadExit says), Open MPI's fault tolerance on
// (OMPI_MCA_mpi_ft_enable=1, unless set), and the node servers told
// (SLURM_STEPMAP_FT). Refused with an explicit -K/--kill-on-bad-exit other
// than 0. "none" or no option: no change.
Expected<EnvironmentChanges> faultToleranceEnvironment(const std::optional<std::string> &mode,
                                                       const SrunCommandLine &cmd);

} // namespace stepmap::plugin
