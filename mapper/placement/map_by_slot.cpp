#include "placement/rank_mappers.hpp"

#include <algorithm>

#include "placement/slot_errors.hpp"

namespace stepmap::detail {

// Splits `remaining` procs over nodes that can take at most headroom[i]
// more, as evenly as possible: every node gets min(headroom, L) for the
// largest level L that does not overshoot, and the rest go one each to the
// first nodes in order that can still take one. With no limits this is
// remaining / n each, the first remaining % n nodes one more (PRRTE).
// Requires sum(headroom) >= remaining. O(n log remaining).
std::vector<std::int64_t> evenShares(const std::vector<std::int64_t> &headroom,
                                     std::int64_t remaining) {
    const auto placedAtLevel = [&](std::int64_t level) {
        std::int64_t sum = 0;
        for (std::int64_t room : headroom)
            sum += std::min(room, level);
        return sum;
    };
    std::int64_t low = 0; // placedAtLevel(low) <= remaining
    std::int64_t high = remaining + 1;
    while (high - low > 1) {
        const std::int64_t middle = low + (high - low) / 2;
        if (placedAtLevel(middle) <= remaining)
            low = middle;
        else
            high = middle;
    }
    std::vector<std::int64_t> shares;
    shares.reserve(headroom.size());
    std::int64_t left = remaining;
    for (std::int64_t room : headroom) {
        shares.push_back(std::min(room, low));
        left -= shares.back();
    }
    for (std::size_t i = 0; i < headroom.size() && left > 0; ++i) {
        if (headroom[i] > low) {
            ++shares[i];
            --left;
        }
    }
    return shares;
}

Expected<RankNodes> mapBySlot(const std::vector<NodeSlots> &nodes, int np, bool oversubscribe) {
    const std::int64_t total = totalSlots(nodes);
    if (np > total && !oversubscribe)
        return notEnoughSlots(np, total);
    if (np > total && oversubscribedCapacity(nodes, np) < np)
        return notEnoughMaxSlots(np, oversubscribedCapacity(nodes, np));

    RankNodes ranks;
    ranks.reserve(static_cast<std::size_t>(np));
    // First pass: each node's slots, in order.
    for (std::uint32_t i = 0; i < nodes.size() && ranks.size() < static_cast<std::size_t>(np);
         ++i) {
        const auto take = std::min<std::size_t>(static_cast<std::size_t>(nodes[i].slots),
                                                static_cast<std::size_t>(np) - ranks.size());
        ranks.insert(ranks.end(), take, i);
    }
    if (ranks.size() == static_cast<std::size_t>(np))
        return ranks;

    // Second pass: the rest spread evenly, bounded by max_slots.
    const std::int64_t remaining = np - static_cast<std::int64_t>(ranks.size());
    std::vector<std::int64_t> headroom;
    headroom.reserve(nodes.size());
    for (const NodeSlots &node : nodes)
        headroom.push_back(node.maxSlots ? *node.maxSlots - node.slots : remaining);
    const std::vector<std::int64_t> shares = evenShares(headroom, remaining);
    for (std::uint32_t i = 0; i < nodes.size(); ++i)
        ranks.insert(ranks.end(), static_cast<std::size_t>(shares[i]), i);
    return ranks;
}

} // namespace stepmap::detail
