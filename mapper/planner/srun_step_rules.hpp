#pragma once

// The rules srun's own options put on a plan made inside srun. The SPANK
// plugin gathers the inputs (srun's command line and environment, the job
// Slurm granted); these functions decide, from values to a value or the
// user's error.

#include <optional>
#include <string>

#include "base/expected.hpp"
#include "hosts/allocation.hpp"
#include "plan/launch_plan.hpp"
#include "request/plan_request.hpp"

namespace stepmap {

// An srun option or variable as the user wrote it, for its messages:
// `source` names it ("-c", "--ntasks-per-node", "SLURM_CPUS_PER_TASK").
struct WrittenSetting {
    std::string source;
    std::string value;

    bool operator==(const WrittenSetting &) const = default;
};

// Slurm already left the nodes "--host !^..." (or a hostfile's exclusion)
// excludes out of the job it granted: each exclusion keeps only the nodes
// that were granted, and one left with none is dropped, so the filter has
// nothing left to remove.
PlanRequest keepExclusionsOfGrantedNodes(PlanRequest request, const Allocation &granted);

// srun's -c: each rank takes that many of a node's CPUs, so the plan counts
// slots as Slurm will (slotsForCpusPerTask). `cpusPerTask` is the option's
// value, or that of the variable srun reads as -c, with the setting named
// as messages say it. Unchanged without one, or when --tpp or PE=n count
// the CPUs of a rank themselves.
struct CpusPerTask {
    std::string value;
    std::string named; // "-c 4", "SLURM_CPUS_PER_TASK=4"

    bool operator==(const CpusPerTask &) const = default;
};
Expected<Allocation> divideSlotsByCpusPerTask(Allocation allocation, const PlanRequest &request,
                                              const std::optional<CpusPerTask> &cpusPerTask);

// srun's --ntasks-per-node (as written, "--ntasks-per-node" "2") must
// describe the plan: every node of it runs that many ranks, else the error
// names the first node that does not.
Expected<void> checkTasksPerNode(const LaunchPlan &plan,
                                 const std::optional<WrittenSetting> &tasksPerNode);

} // namespace stepmap
