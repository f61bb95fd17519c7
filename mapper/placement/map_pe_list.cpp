// --map-by pe-list=LIST: each node takes as many processes as the list
// names CPUs.

#include "placement/placement.hpp"

#include <algorithm>

#include "base/quote.hpp"
#include "placement/cpu_list.hpp"

namespace stepmap::detail {

// PRRTE's pe-list mapper: each node takes as many procs as the list names
// CPUs, every proc bound to the whole list (one CPU of it used up each).
std::optional<UserError> Engine::mapPeList(std::uint32_t app, std::uint32_t np,
                                           MapOptions &options) {
    auto list = roundRobinTargets(np, options, false);
    if (!list)
        return list.error();
    const std::string savecpuset = options.cpuset;
    const auto listSize = [&] {
        auto ids = expandIds(savecpuset);
        return ids ? static_cast<std::uint32_t>(ids->size()) : 0u;
    }();
    NodeList nodes(list.value(), nodes_.size());
    std::uint32_t mapped = 0;
    std::optional<EvenSplit> second; // the pass past the slots
    while (true) {
        for (std::uint32_t index : nodes.order()) {
            if (!nodes.contains(index))
                continue;
            const NodeState &node = nodes_[index];
            const auto freeSlots = static_cast<std::uint32_t>(std::max(node.slotsAvailable, 0));
            options.cpuset = savecpuset;
            computeJobCpuset(index, options);
            if (second)
                options.nprocs = second->next();
            else if (options.ordered || !options.overload)
                options.nprocs = listSize;
            else
                options.nprocs = freeSlots;
            if (!options.oversubscribe)
                options.nprocs = std::min(options.nprocs, freeSlots);
            auto placed = takeShare(app, index, np - mapped, nodes, options);
            if (!placed)
                return placed.error();
            mapped += placed.value();
            if (mapped == np) {
                options.cpuset = savecpuset;
                return std::nullopt;
            }
        }
        if (!options.oversubscribe || second || nodes.empty())
            break;
        second = EvenSplit(np - mapped, static_cast<std::uint32_t>(nodes.size()));
    }
    options.cpuset = savecpuset;
    return UserError{"--map-by pe-list=" + escaped(options.peListGiven) + ": application context " +
                     std::to_string(app) + " needs " + std::to_string(np) +
                     " processes, but the listed CPUs hold only " + std::to_string(mapped) +
                     " on the nodes (one per CPU per node).\nList more CPUs, request fewer "
                     "processes, or add :OVERSUBSCRIBE."};
}

} // namespace stepmap::detail
