#include "slurm_allocation.hpp"

#include <cstdlib>
#include <set>

#include "base/quote.hpp"
#include "hosts/hostlist.hpp"

namespace stepmap::tools {

Expected<ProbeTargets> probeTargets(const std::optional<std::string> &nodesOption) {
    const char *jobId = std::getenv("SLURM_JOB_ID");
    if (jobId == nullptr || *jobId == '\0')
        return UserError{"not inside a Slurm allocation (no SLURM_JOB_ID); run it under salloc or "
                         "sbatch"};
    ProbeTargets targets{jobId, {}, {}};
    const char *nodeListVariable = std::getenv("SLURM_JOB_NODELIST");
    if (nodeListVariable == nullptr || *nodeListVariable == '\0')
        return UserError{"SLURM_JOB_NODELIST is not set in job " + targets.jobId};
    auto allocation = expandHostlist(nodeListVariable);
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
    const std::set<std::string> allocated(allocation->begin(), allocation->end());
    const std::set<std::string> wantedSet(wanted->begin(), wanted->end());
    for (const std::string &node : *wanted) {
        if (allocated.count(node) == 0) {
            return UserError{"--nodes " + quoted(*nodesOption) + ": " + node + " is not in job " +
                             escaped(targets.jobId) + " (" + escaped(nodeListVariable) + ")"};
        }
    }
    // In the allocation's order, each once.
    std::set<std::string> taken;
    for (const std::string &node : *allocation) {
        if (wantedSet.count(node) != 0 && taken.insert(node).second)
            targets.nodes.push_back(node);
    }
    if (targets.nodes.empty())
        return UserError{"--nodes names no node"};
    targets.nodeList = compressHostlist(targets.nodes);
    return targets;
}

} // namespace stepmap::tools
