#pragma once

// Internal to the mapper: placement by slot counts alone (no hardware),
// shared by the engine's by-node and --overbook placers (placement.hpp) and
// ParaStation's placement. Each takes the filtered nodes in mapping order
// and returns, for every rank in rank order, the index of its node in that
// list. All are O(nodes + np).

#include <cstdint>
#include <string>
#include <vector>

#include "base/expected.hpp"
#include "placement/node_filter.hpp"

namespace stepmap::detail {

using RankNodes = std::vector<std::uint32_t>;

// Each node's slots in order, np at most the slots' sum: the procs of
// --overbook and ParaStation's placement while the slots suffice.
RankNodes fillSlots(const std::vector<NodeSlots> &nodes, int np);

// Splits `remaining` procs over nodes that can take at most headroom[i]
// more, as evenly as possible; the first nodes take one more when it does
// not divide (PRRTE's byslot second pass, bounded). Requires
// sum(headroom) >= remaining. O(n log remaining).
std::vector<std::int64_t> evenShares(const std::vector<std::int64_t> &headroom,
                                     std::int64_t remaining);

// --map-by node: one proc per node per round, skipping nodes whose slots
// are used up; past the slots (only with oversubscribe) the rounds go on
// over the nodes below their max_slots.
Expected<RankNodes> mapByNode(const std::vector<NodeSlots> &nodes, int np, bool oversubscribe);

// --overbook (ParaStation): as map-by slot while the slots suffice; else
// every slot (CPU) takes np / slots procs and the first np % slots CPUs in
// list order one more, each node its CPUs' sum as consecutive ranks. A node
// whose share passes its max_slots is an error.
Expected<RankNodes> mapOverbook(const std::vector<NodeSlots> &nodes, int np);

// Past the slots: every slot np / total procs, the first np % total slots
// in list order one more, each node the sum of its slots' shares; a node
// above its max_slots is an error naming `source` (the option or variable).
Expected<RankNodes> overbookEvenly(const std::vector<NodeSlots> &nodes, int np,
                                   const std::string &source);

} // namespace stepmap::detail
