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
    int slots = 0;                // the filters' count, at most Slurm's CPUs and maxSlots
    int requested = 0;            // the filters' count as asked (-n's default sums these)
    std::optional<int> maxSlots;  // hostfile max_slots
};

// How the filters count slots.
enum class HostCounts {
    // mpirun's: a node named with --host has as many slots as it is named
    // (or its :N), as mpirun gives it inside an allocation; a count above
    // Slurm's CPUs is capped there (NodeSlots::requested keeps it).
    Mpirun,
    // ParaStation's node pool: --host without :N keeps Slurm's count, and
    // a count above Slurm's CPUs stands where `allowAboveCpus` (overbook),
    // else it is an error naming the host.
    Pool,
};

// The nodes to map, in mapping order: --host's, else the hostfile's, else
// the allocation's. A hostfile line's slots=N caps Slurm's count; no count
// keeps Slurm's; max_slots bounds it. Also checks the allocation itself
// (names valid and unique, CPUs >= 1).
Expected<std::vector<NodeSlots>> filterNodes(const Allocation &allocation,
                                             const PlanRequest &request,
                                             HostCounts counts = HostCounts::Mpirun,
                                             bool allowAboveCpus = false);

} // namespace stepmap::detail
