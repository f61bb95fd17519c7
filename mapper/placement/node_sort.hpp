#pragma once

// Internal to the mapper: --nodes-sort / PSI_NODES_SORT, ParaStation's
// ordering of the node list (psmgmt's getCandidateList / compareNodes).

#include <optional>
#include <string_view>
#include <vector>

#include "base/expected.hpp"
#include "placement/node_filter.hpp"
#include "request/parastation_request.hpp"

namespace stepmap::detail {

// Sorts `nodes` by rating, lowest first:
//   PROC       assignedThreads / hardwareThreads
//   LOAD_x     x-minute load / hardwareThreads
//   PROC+LOAD  (assignedThreads + 1-minute load) / hardwareThreads
// with figures looked up by node name. Ties: more usable CPUs first (the
// node's slots here, psmgmt's free hardware threads), then the lower
// allocation index (psmgmt's node id). NONE leaves the order alone.
// Errors, naming `source` ("--nodes-sort" or "PSI_NODES_SORT"): a node
// without figures, a figure with no hardware threads, a load average that
// is not known. O(n log n).
std::optional<UserError> sortNodes(std::vector<NodeSlots> &nodes, NodesSort sort,
                                   const std::vector<NodeFigures> &figures,
                                   std::string_view source);

} // namespace stepmap::detail
