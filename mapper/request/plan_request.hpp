#pragma once

// What the user asked for: the options of one srun, parsed.

#include <optional>
#include <string_view>
#include <vector>

#include "base/expected.hpp"
#include "hosts/host_list.hpp"
#include "request/map_policy.hpp"
#include "request/parastation_request.hpp"
#include "request/rankfile.hpp"

namespace stepmap {

// One application context of an MPMD line ("-n 2 a : -n 3 b"), with the
// directives given for it alone. Unset fields fall back to the job's.
struct AppRequest {
    std::optional<int> np;                              // unset: the slots of the nodes (as mpirun)
    std::optional<MapPolicy> map;                       // its own --map-by
    std::optional<RankBy> rank;                         // its own --rank-by
    std::optional<BindPolicy> bind;                     // its own --bind-to
    std::optional<std::vector<SequenceEntry>> sequence; // --map-by seq:FILE= of this app
    std::optional<Rankfile> rankfile;                   // --map-by rankfile:FILE= of this app

    bool operator==(const AppRequest &) const = default;
};

struct PlanRequest {
    std::optional<int> np;            // -n; unset: the sum of the final nodes' slots
    std::optional<HostSpec> host;     // --host
    std::optional<HostSpec> hostfile; // --hostfile, parsed
    MapPolicy map;                    // --map-by
    bool overbook = false;            // --overbook (ParaStation)
    std::optional<RankBy> rank;       // --rank-by
    std::optional<BindPolicy> bind;   // --bind-to
    // MPMD: one entry per application context, in command-line order (np
    // above is then unused). Empty: one application of np processes.
    std::vector<AppRequest> apps;
    // --map-by seq: the hosts in rank order (parseSequenceFile of the
    // FILE= or hostfile text). Empty: --host's order, each host repeated by
    // its count.
    std::vector<SequenceEntry> sequence;
    std::optional<Rankfile> rankfile; // --map-by rankfile: parseRankfile of the file
    // --loop-nodes-first, --nodes-sort, --tpp, PSI_* (parastation_request.hpp)
    ParaStationRequest parastation;

    bool operator==(const PlanRequest &) const = default;
};

// A process count as written on the command line ("-n 8"): a positive
// number up to kMaxRanks (launch_plan.hpp). The error names the value.
Expected<int> parseProcessCount(std::string_view value);

// True when the request uses a ParaStation setting beyond a bare
// command-line --overbook (which the planner's own --overbook policy
// places, with the same result): --loop-nodes-first, --nodes-sort, --tpp
// (or PSI_TPP, any value), a PSI_* node pool, or PSI_OVERBOOK. The planner
// then places it as ParaStation does (placement/parastation_placement.hpp).
bool usesParaStationPlacement(const PlanRequest &request);

// True when ParaStation placement pins the request's processes to their
// CPU-slots: unless __PSI_NO_PINPROC or --bind-to none.
bool parastationPins(const PlanRequest &request);

// Whether planning the request uses each node's hardware (cores, caches,
// NUMA): object mappings, ppr, pe-list, rankfile, device, PE=n, any
// --bind-to but none, and ParaStation placement that pins. Without it, srun and stepmap-plan give
// nodes as plain slot counts. (The planner's own check, of what cannot be planned without hardware,
// is narrower.)
bool needsHardware(const PlanRequest &request);

} // namespace stepmap
