#pragma once

// The nodes `make`, `update` and `check` probe: the Slurm allocation this
// runs in (SLURM_JOB_ID and SLURM_JOB_NODELIST, set by salloc and sbatch),
// or the part of it that --nodes names.

#include <optional>
#include <string>
#include <vector>

#include "base/expected.hpp"

namespace stepmap::tools {

struct ProbeTargets {
    std::string jobId;
    std::vector<std::string> nodes; // in the allocation's order, each once
    std::string nodeList;           // the same as a hostlist expression
};

// From the environment; `nodesOption` (a hostlist) must name nodes of the
// allocation only. Errors are sentences to follow "stepmap-profile make: ".
Expected<ProbeTargets> probeTargets(const std::optional<std::string> &nodesOption);

} // namespace stepmap::tools
