// --map-by node: one process per node per round (by slot counts, then
// placed by the engine).

#include "placement/rank_mappers.hpp"

#include "placement/placement.hpp"
#include "placement/slot_errors.hpp"

namespace stepmap::detail {

namespace {

// Round robin over `active`, one proc per node per round, until np ranks
// are placed; a node leaves once it holds `limit(node)` procs. Every visit
// places a proc, so the work is O(active + placed).
template <class Limit>
void roundRobin(std::vector<std::uint32_t> active, std::vector<std::int64_t> &counts,
                RankNodes &ranks, std::size_t np, Limit limit) {
    std::vector<std::uint32_t> next;
    while (ranks.size() < np && !active.empty()) {
        next.clear();
        for (std::uint32_t node : active) {
            if (ranks.size() == np)
                return;
            ranks.push_back(node);
            if (++counts[node] < limit(node))
                next.push_back(node);
        }
        active.swap(next);
    }
}

} // namespace

Expected<RankNodes> mapByNode(const std::vector<NodeSlots> &nodes, int np, bool oversubscribe) {
    const std::int64_t total = totalSlots(nodes);
    if (np > total && !oversubscribe)
        return notEnoughSlots(np, total);
    if (np > total && oversubscribedCapacity(nodes, np) < np)
        return notEnoughMaxSlots(np, oversubscribedCapacity(nodes, np));

    const auto target = static_cast<std::size_t>(np);
    RankNodes ranks;
    ranks.reserve(target);
    std::vector<std::int64_t> counts(nodes.size(), 0);

    // Within the slots.
    std::vector<std::uint32_t> active;
    active.reserve(nodes.size());
    for (std::uint32_t i = 0; i < nodes.size(); ++i) {
        if (nodes[i].slots > 0)
            active.push_back(i);
    }
    roundRobin(active, counts, ranks, target,
               [&](std::uint32_t node) { return std::int64_t{nodes[node].slots}; });
    if (ranks.size() == target)
        return ranks;

    // Past the slots, up to max_slots.
    active.clear();
    for (std::uint32_t i = 0; i < nodes.size(); ++i) {
        if (!nodes[i].maxSlots || counts[i] < *nodes[i].maxSlots)
            active.push_back(i);
    }
    roundRobin(active, counts, ranks, target, [&](std::uint32_t node) {
        return nodes[node].maxSlots ? std::int64_t{*nodes[node].maxSlots} : std::int64_t{np};
    });
    return ranks;
}

// By node, as seed 002 describes it: one proc per node per round, skipping
// nodes whose slots are used up, then (OVERSUBSCRIBE) on around the nodes
// below their max_slots. PRRTE instead gives each node the average and
// caps it by its free slots, which differs when nodes have different free
// slots (README: "Deliberate differences").
std::optional<UserError> Engine::mapByNode(std::uint32_t app, std::uint32_t np,
                                           MapOptions &options) {
    auto list = roundRobinTargets(np, options, true);
    if (!list)
        return list.error();
    const std::vector<NodeSlots> slots = slotView(list.value());
    auto order = detail::mapByNode(slots, static_cast<int>(np), options.oversubscribe);
    if (!order)
        return order.error();
    return placeInOrder(app, slots, order.value(), options);
}

} // namespace stepmap::detail
