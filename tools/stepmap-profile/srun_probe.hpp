#pragma once

// One `stepmap-profile probe` per node through srun, for `make`, `update`
// and `check`. srun runs this same executable (/proc/self/exe) on every
// node, one task each, with --label so that its standard output is one
// stream in which every line says which task printed it; each task names
// its node as slurmd does (SLURMD_NODENAME, --name-from-slurmd). srun is
// `srun` from PATH, or the program STEPMAP_SRUN names. The tasks' standard
// error and srun's own messages go to this program's standard error: they
// name the node that failed.

#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "base/expected.hpp"
#include "profile/interconnect_profile.hpp"
#include "slurm_allocation.hpp"

namespace stepmap::tools {

// srun --nodes=N --ntasks=N --ntasks-per-node=1 --nodelist=LIST
//      --kill-on-bad-exit=1 --label --overlap --mpi=none
//      PROBE probe --name-from-slurmd
std::vector<std::string> srunProbeCommand(const std::string &srun, const ProbeTargets &targets,
                                          const std::string &probeExecutable);

// srun --label's output split by task: "3: text" lines go to task 3, in
// order, without the label. A line without a label is an error.
Expected<std::map<unsigned, std::string>> splitLabeledOutput(std::string_view output);

// Each task's output loaded strictly as a profile of one node; together
// exactly one per node of `targets`, in their order.
Expected<std::vector<topology::NodeProfile>> collectProbes(std::string_view output,
                                                           const ProbeTargets &targets);

// Runs the command above and collects what it printed.
Expected<std::vector<topology::NodeProfile>> probeThroughSrun(const ProbeTargets &targets);

} // namespace stepmap::tools
