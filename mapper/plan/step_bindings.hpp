#pragma once

// The plan's bindings on one node, resolved against the CPUs the step
// really holds there. srun plans from Slurm's view of the job's CPUs; the
// step's cgroup on a node may hold fewer (Slurm grants a step its tasks'
// share). As PRRTE binds within its allocation, a binding means the bound
// CPUs inside the step; how a shortfall ends depends on how firmly the
// binding was asked for (LaunchPlan::bindingRequest):
//   Default: the CPUs inside the step; none there: unbound (the step's CPUs);
//   Objects: the CPUs inside the step; none there: an error;
//   Cpus:    every planned CPU must be in the step, else an error.
// The node server and the task (in slurmstepd) both call this with the same
// CPUs, so PMIX_CPUSET, the locality and the affinity agree.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "base/expected.hpp"
#include "plan/launch_plan.hpp"

namespace stepmap {

// One rank's binding within the step: its planned CPUs inside stepCpus (OS
// indices, ascending), or nullopt when it is not bound or is left unbound.
// O(size of its CPU set): a task resolves only its own rank.
Expected<std::optional<CpuBinding>> bindingWithinStep(const LaunchPlan &plan, std::uint32_t rank,
                                                      const std::vector<std::uint32_t> &stepCpus);

struct ResolvedBindings {
    std::uint32_t narrowed = 0; // ranks bound to fewer CPUs than planned
    std::uint32_t unbound = 0;  // ranks left on the step's CPUs
};

// Rewrites the bindings of `node`'s ranks in `plan` (for the node server); stepCpus: the step's
// CPUs there as OS indices, ascending. The error names the node, the rank
// and both CPU lists.
Expected<ResolvedBindings> resolveBindingsOnNode(LaunchPlan &plan, std::uint32_t node,
                                                 const std::vector<std::uint32_t> &stepCpus);

} // namespace stepmap
