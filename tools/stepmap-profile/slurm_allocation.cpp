#include "slurm_allocation.hpp"

#include <algorithm>
#include <cstdlib>

#include "base/quote.hpp"
#include "hosts/hostlist.hpp"

namespace stepmap::tools {

Expected<ProbeTargets> probeTargets(const std::optional<std::string> &nodesOption) {
    const char *jobId = std::getenv("SLURM_JOB_ID");
    if (jobId == nullptr || *jobId == '\0')
        return UserError{"not inside a Slurm allocation (no SLURM_JOB_ID); run it under salloc or "
                         "sbatch"};
    ProbeTargets targets{jobId, {}, {}};
    const char *allocated = std::getenv("SLURM_JOB_NODELIST");
    if (allocated == nullptr || *allocated == '\0')
        return UserError{"SLURM_JOB_NODELIST is not set in job " + targets.jobId};
    auto allocation = expandHostlist(allocated);
    if (!allocation)
        return UserError{"SLURM_JOB_NODELIST: " + allocation.error().message};
    if (!nodesOption) {
        targets.nodes = std::move(allocation.value());
        targets.nodeList = compressHostlist(targets.nodes);
        return targets;
    }
    auto wanted = expandHostlist(*nodesOption);
    if (!wanted)
        return UserError{"--nodes: " + wanted.error().message};
    for (const std::string &node : *wanted) {
        if (std::find(allocation->begin(), allocation->end(), node) == allocation->end()) {
            return UserError{"--nodes " + quoted(*nodesOption) + ": " + node + " is not in job " +
                             escaped(targets.jobId) + " (" + escaped(allocated) + ")"};
        }
    }
    // In the allocation's order, each once.
    for (const std::string &node : *allocation) {
        if (std::find(wanted->begin(), wanted->end(), node) != wanted->end() &&
            std::find(targets.nodes.begin(), targets.nodes.end(), node) == targets.nodes.end())
            targets.nodes.push_back(node);
    }
    if (targets.nodes.empty())
        return UserError{"--nodes names no node"};
    targets.nodeList = compressHostlist(targets.nodes);
    return targets;
}

} // namespace stepmap::tools
