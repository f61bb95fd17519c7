#pragma once

// What the user asked for: the options of one srun, parsed.

#include <optional>
#include <string_view>

#include "expected.hpp"
#include "host_list.hpp"
#include "map_policy.hpp"
#include "parastation_request.hpp"

namespace stepmap {

struct PlanRequest {
    std::optional<int> np;            // -n; unset: the sum of the final nodes' slots
    std::optional<HostSpec> host;     // --host
    std::optional<HostSpec> hostfile; // --hostfile, parsed
    MapPolicy map;                    // --map-by
    bool overbook = false;            // --overbook (ParaStation)
    // --loop-nodes-first, --nodes-sort, --tpp, PSI_* (parastation_request.hpp)
    ParaStationRequest parastation;

    bool operator==(const PlanRequest &) const = default;
};

// A process count as written on the command line ("-n 8"): a positive
// number up to kMaxRanks (launch_plan.hpp). The error names the value.
Expected<int> parseProcessCount(std::string_view value);

} // namespace stepmap
