#pragma once

// A site's limits on what a plan may be (stepmap.yaml(5): limits.ranks,
// limits.ranks_per_node, allow.oversubscribe), checked on the finished plan
// so that every way of asking (options, PSI_*, a site default) meets them.

#include <string>

#include "base/expected.hpp"
#include "plan/launch_plan.hpp"

namespace stepmap {

struct SiteLimits {
    int maxRanks = 0;        // 0: no limit
    int maxRanksPerNode = 0; // 0: no limit
    bool allowOversubscribe = true;
    // Where the limits come from, named in every refusal ("/etc/slurm/stepmap.yaml").
    std::string source;
};

// The first limit the plan breaks, as an error naming the limit, where it is
// set, the node and the way out; success when it breaks none.
Expected<void> checkSiteLimits(const LaunchPlan &plan, const SiteLimits &limits);

} // namespace stepmap
