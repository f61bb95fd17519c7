#include "placement/slot_errors.hpp"

#include <string>

#include "base/input_limits.hpp"

namespace stepmap::detail {

std::int64_t totalSlots(const std::vector<NodeSlots> &nodes) {
    std::int64_t total = 0;
    for (const NodeSlots &node : nodes)
        total += node.slots;
    return total;
}

std::int64_t oversubscribedCapacity(const std::vector<NodeSlots> &nodes, std::int64_t unbounded) {
    std::int64_t capacity = 0;
    for (const NodeSlots &node : nodes) {
        if (!node.maxSlots)
            return unbounded;
        capacity += *node.maxSlots;
    }
    return capacity;
}

UserError notEnoughSlots(int np, std::int64_t available) {
    return UserError{"There are not enough slots available in the system to satisfy the " +
                     std::to_string(np) +
                     " slots that were requested by the application: the selected nodes have " +
                     std::to_string(available) +
                     " slots.\nEither request fewer procs for your application, or use --map-by "
                     ":OVERSUBSCRIBE (or --overbook) to run more procs than slots."};
}

UserError notEnoughMaxSlots(int np, std::int64_t capacity) {
    return UserError{"There are not enough slots available in the system to satisfy the " +
                     std::to_string(np) +
                     " slots that were requested by the application, even oversubscribed: the "
                     "max_slots limits of the selected nodes allow at most " +
                     std::to_string(capacity) +
                     " procs.\nEither request fewer procs for your application, or raise "
                     "max_slots in the hostfile."};
}

std::optional<UserError> checkProcessCount(const std::optional<int> &np) {
    if (np && *np < 1)
        return UserError{"the number of processes must be a positive number, got " +
                         std::to_string(*np) + " (use -n N with N >= 1)"};
    if (np && *np > kMaxRanks)
        return UserError{"too many processes: " + std::to_string(*np) +
                         " requested, stepmap places at most " + std::to_string(kMaxRanks)};
    return std::nullopt;
}

} // namespace stepmap::detail
