// --map-by slot (and the default without node models): each node's free
// slots in turn, then the rest spread evenly.

#include "placement/placement.hpp"

#include <algorithm>

#include "placement/placement_messages.hpp"
#include "placement/rank_mappers.hpp"

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

// PRRTE's byslot: each node in turn takes its free slots (fewer when its
// free CPUs cannot bind them all); what is left over is spread evenly.
// stepmap's second pass bounds each node by its max_slots, which PRRTE
// checks only before starting on a node.
std::optional<UserError> Engine::mapBySlot(std::uint32_t app, std::uint32_t np,
                                           MapOptions &options) {
    auto list = roundRobinTargets(np, options, true);
    if (!list)
        return list.error();
    std::uint32_t mapped = 0;
    NodeList nodes(list.value(), nodes_.size());
    for (std::uint32_t index : list.value()) {
        computeJobCpuset(index, options);
        options.nprocs = static_cast<std::uint32_t>(std::max(nodes_[index].slotsAvailable, 0));
        auto placed = takeShare(app, index, np - mapped, nodes, options);
        if (!placed)
            return placed.error();
        mapped += placed.value();
        if (mapped == np)
            return std::nullopt;
    }

    // Second pass: the rest spread evenly over the nodes still in the list.
    const std::int64_t remaining = np - mapped;
    const std::vector<std::uint32_t> left = nodes.remaining();
    std::vector<std::int64_t> headroom;
    headroom.reserve(left.size());
    for (std::uint32_t index : left) {
        const NodeState &node = nodes_[index];
        std::int64_t room = options.oversubscribe ? remaining : node.slotsAvailable;
        if (node.slotsMax != 0)
            room = std::min<std::int64_t>(room, std::max(0, node.slotsMax - node.slotsInuse));
        headroom.push_back(room);
    }
    std::int64_t total = 0;
    for (std::int64_t room : headroom)
        total += room;
    if (total < remaining) {
        if (options.bind != BindTo::None)
            return overloadError(app, np, options);
        return failedMap(app, np, mapped, options);
    }
    const std::vector<std::int64_t> shares = evenShares(headroom, remaining);
    for (std::size_t i = 0; i < left.size(); ++i) {
        if (shares[i] == 0)
            continue;
        const std::uint32_t index = left[i];
        computeJobCpuset(index, options);
        options.nprocs = static_cast<std::uint32_t>(shares[i]);
        if (!checkAvail(index, nullptr, kNoIndex, options) ||
            options.nprocs < static_cast<std::uint32_t>(shares[i]))
            return overloadError(app, np, options);
        for (std::int64_t k = 0; k < shares[i]; ++k) {
            if (auto error = setupProc(app, index, kNoIndex, options))
                return error;
            ++mapped;
            if (auto full = checkOversubscribed(index, options); !full)
                return full.error();
        }
    }
    return std::nullopt;
}

} // namespace stepmap::detail
