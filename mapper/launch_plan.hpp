#pragma once

// The mapper's answer: which nodes run the step and where each rank goes.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "expected.hpp"

namespace stepmap {

// The most ranks a plan may hold: makePlan refuses more processes, decodePlan
// more ranks.
inline constexpr int kMaxRanks = 1 << 24;

struct PlannedNode {
    std::string name;
    int slots = 0;               // slots the mapper used for the node (caps applied)
    std::optional<int> maxSlots; // hostfile max_slots, if given

    bool operator==(const PlannedNode &) const = default;
};

struct RankPlacement {
    std::uint32_t node = 0;      // index into LaunchPlan::nodes
    std::uint32_t localRank = 0; // index among the node's ranks, in rank order
    std::uint32_t nodeRank = 0;  // the same as localRank (one app per job)

    bool operator==(const RankPlacement &) const = default;
};

struct LaunchPlan {
    // Every node that runs at least one rank, in mapping order (the order of
    // the filtered node list).
    std::vector<PlannedNode> nodes;
    std::vector<RankPlacement> ranks; // indexed by rank
    // Some node runs more ranks than its slots or its Slurm CPUs.
    bool oversubscribed = false;

    // The ranks placed on `node`, ascending. O(ranks).
    std::vector<std::uint32_t> ranksOn(std::uint32_t node) const;

    bool operator==(const LaunchPlan &) const = default;
};

// Compact ASCII, no spaces or newlines, for an environment variable:
//   SM1;<nodes>;<slots>;<max_slots>;<oversubscribed>;<ranks>
// <nodes>: node names, hostlist-compressed ("n[1-4]").
// <slots>: one count per node, runs written "value*repeat" ("2*3,4").
// <max_slots>: likewise, '-' for none ("-*4").
// <oversubscribed>: 0 or 1.
// <ranks>: the node of each rank in rank order, as blocks
//   "F[-L][*P][xR]": R times (default 1) over nodes F..L (default F), P
//   consecutive ranks (default 1) on each. Slot mapping 4 nodes x 2:
//   "0-3*2"; node mapping 4 nodes, 8 ranks: "0-3x2".
// localRank and nodeRank are not encoded; decodePlan recomputes them. Node
// names must be valid host names (isValidHostName), as makePlan's are.
// The length grows with the number of blocks: tens of bytes when slot counts
// come in runs (Slurm's "N(xR)" shape; 1M ranks on 16k nodes: "0-16383*64"),
// but up to one block per run of ranks (~2.8 MB for map-by node over 16k
// nodes alternating 1 and 64 slots). Callers must check the length against
// their limit (Linux: 128 KiB per environment string).
std::string encodePlan(const LaunchPlan &plan);

// Strict inverse of encodePlan: any malformed, inconsistent or oversized
// input (more than kMaxRanks ranks, node indices out of range, duplicate
// node names, counts not matching the nodes, no nodes, no ranks) is an
// error starting with "invalid stepmap plan".
Expected<LaunchPlan> decodePlan(std::string_view text);

// Fills localRank and nodeRank from each rank's node. O(nodes + ranks).
void assignLocalRanks(LaunchPlan &plan);

} // namespace stepmap
