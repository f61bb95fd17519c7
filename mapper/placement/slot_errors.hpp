#pragma once

// Internal to the mapper: the "not enough slots" errors the mappers share,
// in mpirun's words, and the check of -n.

#include <cstdint>
#include <optional>
#include <vector>

#include "base/expected.hpp"
#include "placement/node_filter.hpp"

namespace stepmap::detail {

std::int64_t totalSlots(const std::vector<NodeSlots> &nodes);

// The most procs the nodes take when oversubscribing: the sum of max_slots,
// or `unbounded` if some node has none.
std::int64_t oversubscribedCapacity(const std::vector<NodeSlots> &nodes, std::int64_t unbounded);

UserError notEnoughSlots(int np, std::int64_t available);
UserError notEnoughMaxSlots(int np, std::int64_t capacity);

// -n, when given, from 1 to kMaxRanks.
std::optional<UserError> checkProcessCount(const std::optional<int> &np);

} // namespace stepmap::detail
