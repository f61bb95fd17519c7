#pragma once

// Internal to the mapper: the allocation filtered by --host and --hostfile
// (notes/host-filters.md), with each remaining node's slots.

#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

#include "base/expected.hpp"
#include "hosts/allocation.hpp"
#include "request/plan_request.hpp"

namespace stepmap::detail {

struct NodeSlots {
    std::uint32_t allocIndex = 0; // index into Allocation::nodes
    std::string_view name;        // the allocation's name for it
    int cpus = 0;                 // Slurm's CPUs
    int slots = 0;                // caps applied, at most maxSlots
    std::optional<int> maxSlots;  // hostfile max_slots
};

// The nodes to map, in mapping order: the hostfile's order, else --host's,
// else the allocation's. Also checks the allocation itself (names valid and
// unique, CPUs >= 1). Slots above the CPUs need `allowOversubscribe`.
Expected<std::vector<NodeSlots>> filterNodes(const Allocation &allocation,
                                             const PlanRequest &request, bool allowOversubscribe);

} // namespace stepmap::detail
