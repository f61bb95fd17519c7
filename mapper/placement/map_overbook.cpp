// --overbook (ParaStation): by slot while the slots suffice, else evenly
// over the CPUs.

#include "placement/rank_mappers.hpp"

#include <algorithm>
#include <string>

#include "placement/placement.hpp"
#include "placement/slot_errors.hpp"

namespace stepmap::detail {

Expected<RankNodes> overbookEvenly(const std::vector<NodeSlots> &nodes, int np,
                                   const std::string &source) {
    // psmgmt deals the procs over the CPUs in node-list order, round after
    // round: each CPU gets np / total, the first np % total CPUs one more.
    const std::int64_t total = totalSlots(nodes);
    const std::int64_t perCpu = np / total;
    const std::int64_t extra = np % total;
    RankNodes ranks;
    ranks.reserve(static_cast<std::size_t>(np));
    std::int64_t firstCpu = 0;
    for (std::uint32_t i = 0; i < nodes.size(); ++i) {
        const NodeSlots &node = nodes[i];
        const std::int64_t extraHere = std::clamp<std::int64_t>(extra - firstCpu, 0, node.slots);
        const std::int64_t count = perCpu * node.slots + extraHere;
        firstCpu += node.slots;
        if (node.maxSlots && count > *node.maxSlots)
            return UserError{source + " would place " + std::to_string(count) + " procs on " +
                             std::string(node.name) +
                             ", above its max_slots=" + std::to_string(*node.maxSlots) +
                             ".\nEither request fewer procs for your application, or raise "
                             "max_slots in the hostfile."};
        ranks.insert(ranks.end(), static_cast<std::size_t>(count), i);
    }
    return ranks;
}

RankNodes fillSlots(const std::vector<NodeSlots> &nodes, int np) {
    RankNodes ranks;
    ranks.reserve(static_cast<std::size_t>(np));
    for (std::uint32_t i = 0; i < nodes.size() && ranks.size() < static_cast<std::size_t>(np);
         ++i) {
        const auto take = std::min<std::size_t>(static_cast<std::size_t>(nodes[i].slots),
                                                static_cast<std::size_t>(np) - ranks.size());
        ranks.insert(ranks.end(), take, i);
    }
    return ranks;
}

Expected<RankNodes> mapOverbook(const std::vector<NodeSlots> &nodes, int np) {
    if (np <= totalSlots(nodes))
        return fillSlots(nodes, np);
    return overbookEvenly(nodes, np, "--overbook");
}

std::optional<UserError> Engine::mapOverbook(std::uint32_t app, std::uint32_t np,
                                             MapOptions &options) {
    std::uint32_t numSlots = 0;
    auto list = targetNodes(numSlots, false);
    if (!list)
        return list.error();
    const std::vector<NodeSlots> slots = slotView(list.value());
    if (numSlots < np)
        unbindForOversubscription(options);
    auto order = detail::mapOverbook(slots, static_cast<int>(np));
    if (!order)
        return order.error();
    return placeInOrder(app, slots, order.value(), options);
}

} // namespace stepmap::detail
