#include "placement/placement.hpp"

#include <algorithm>

#include "base/quote.hpp"
#include "placement/cpu_list.hpp"

namespace stepmap::detail {

// PRRTE's pe-list mapper: each node takes as many procs as the list names
// CPUs, every proc bound to the whole list (one CPU of it used up each).
std::optional<UserError> Engine::mapByCpu(std::uint32_t app, std::uint32_t np,
                                          MapOptions &options) {
    auto list = roundRobinTargets(np, options, false);
    if (!list)
        return list.error();
    const BindTo savebind = options.bind;
    const std::string savecpuset = options.cpuset;
    const auto listSize = [&] {
        auto ids = expandIds(savecpuset);
        return ids ? static_cast<std::uint32_t>(ids->size()) : 0u;
    }();
    NodeList nodes(list.value(), nodes_.size());
    std::uint32_t mapped = 0;
    bool second = false;
    std::uint32_t extra = 0;
    std::uint32_t extraNodes = 0;
    while (true) {
        for (std::uint32_t index : nodes.order()) {
            if (!nodes.contains(index))
                continue;
            NodeState &node = nodes_[index];
            options.cpuset = savecpuset;
            computeJobCpuset(index, options);
            if (second) {
                options.nprocs = extra;
                if (extraNodes > 0 && --extraNodes == 0)
                    --extra;
            } else if (options.ordered || !options.overload) {
                options.nprocs = listSize;
            } else {
                options.nprocs = static_cast<std::uint32_t>(std::max(node.slotsAvailable, 0));
            }
            if (!options.oversubscribe)
                options.nprocs = std::min(
                    options.nprocs, static_cast<std::uint32_t>(std::max(node.slotsAvailable, 0)));
            if (node.model != nullptr && !jobBinding.given && options.bind != BindTo::None &&
                options.nprocs <= static_cast<std::uint32_t>(node.slotsAvailable) &&
                options.nprocs > ncpus(index, kNoIndex, options, options.nprocs + 1)) {
                options.bind = BindTo::None;
                jobBinding = BindingWord{BindTo::None};
            }
            if (!checkAvail(index, &nodes, kNoIndex, options)) {
                options.bind = savebind;
                continue;
            }
            for (std::uint32_t i = 0; i < options.nprocs && mapped < np; ++i) {
                if (auto error = setupProc(app, index, kNoIndex, options)) {
                    options.cpuset = savecpuset;
                    return error;
                }
                ++mapped;
                auto full = checkOversubscribed(index, options);
                if (!full)
                    return full.error();
                if (full.value() == 1)
                    break;
            }
            options.bind = savebind;
            if (mapped == np) {
                options.cpuset = savecpuset;
                return std::nullopt;
            }
        }
        if (!options.oversubscribe || second || nodes.empty())
            break;
        const std::uint32_t remaining = np - mapped;
        const auto size = static_cast<std::uint32_t>(nodes.size());
        extra = remaining / size;
        extraNodes = 0;
        if (remaining % size != 0) {
            extraNodes = remaining - extra * size;
            ++extra;
        }
        second = true;
    }
    options.cpuset = savecpuset;
    return UserError{"--map-by pe-list=" + escaped(options.peListGiven) + ": application context " +
                     std::to_string(app) + " needs " + std::to_string(np) +
                     " processes, but the listed CPUs hold only " + std::to_string(mapped) +
                     " on the nodes (one per CPU per node).\nList more CPUs, request fewer "
                     "processes, or add :OVERSUBSCRIBE."};
}

} // namespace stepmap::detail
