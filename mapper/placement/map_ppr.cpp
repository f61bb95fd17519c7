// --map-by ppr:N:OBJECT: N processes on each object (or node, or device
// group) of every node with slots for them.

#include "placement/placement.hpp"

#include <algorithm>

#include "base/quote.hpp"
#include "placement/slot_errors.hpp"

namespace stepmap::detail {

// The processes a pattern places when no -n bounds it: counted before
// anything is placed, against the process limit left after the earlier
// application contexts.
template <class Targets>
Expected<std::uint32_t> Engine::pprCount(const std::vector<std::uint32_t> &list, std::uint32_t pprn,
                                         const std::string &pattern, Targets targets) const {
    const std::uint64_t room = static_cast<std::uint64_t>(kMaxRanks) - mappedCount();
    std::uint64_t total = 0;
    for (std::uint32_t index : list) {
        auto count = targets(index);
        if (!count)
            return count.error();
        total += std::uint64_t{pprn} * count.value();
        if (total > room)
            return UserError{pattern + ": the pattern asks for more than " + std::to_string(room) +
                             " processes on the " + std::to_string(list.size()) +
                             " nodes; stepmap places at most " + std::to_string(kMaxRanks) +
                             ". Lower N, or give -n."};
    }
    return static_cast<std::uint32_t>(total);
}

// PRRTE's ppr mapper: N procs on each object (or node) of every node that
// has slots for all of them, until np are placed.
std::optional<UserError> Engine::mapPpr(std::uint32_t app, std::uint32_t np, MapOptions &options) {
    std::uint32_t numSlots = 0;
    auto list = targetNodes(numSlots, false);
    if (!list)
        return list.error();
    const auto pprn = static_cast<std::uint32_t>(options.pprn);
    const std::string object = options.mapNode     ? std::string("node")
                               : options.mapDevice ? "device=" + escaped(options.device)
                                                   : std::string(hwLevelName(*options.mapLevel));
    const std::string pattern = "--map-by ppr:" + std::to_string(pprn) + ":" + object;
    const auto targets = [&](std::uint32_t index) -> Expected<std::uint32_t> {
        return options.mapNode ? 1u : objectTargets(index, options);
    };
    const auto noObject = [&](const NodeState &node) {
        return UserError{pattern + ": node " + std::string(node.name) + " has no " +
                         (options.mapDevice ? escaped(options.device) + " device" : object) +
                         " among the CPUs the job holds there.\nUse an object every node "
                         "has (e.g. core)."};
    };
    if (np == 0) {
        auto count = pprCount(list.value(), pprn, pattern, targets);
        if (!count)
            return count.error();
        np = count.value();
        if (np == 0 && !list.value().empty())
            return noObject(nodes_[list.value().front()]);
    }
    if (numSlots < np) {
        if (!options.oversubscribe)
            return notEnoughSlots(static_cast<int>(np), numSlots);
        unbindForOversubscription(options);
    }
    const BindTo savebind = options.bind;
    NodeList nodes(list.value(), nodes_.size());
    std::uint32_t mapped = 0;
    for (std::uint32_t index : list.value()) {
        if (mapped == np)
            break;
        NodeState &node = nodes_[index];
        computeJobCpuset(index, options);
        auto count = targets(index);
        if (!count)
            return count.error();
        const std::uint32_t nobjs = count.value();
        if (nobjs == 0)
            return noObject(node);
        // A node with fewer free slots than the pattern asks still takes
        // what its slots hold, object by object (mpirun's ppr mapper).
        options.nprocs = pprn * nobjs;
        unbindIfOverloaded(index, options.nprocs,
                           options.nprocs * static_cast<std::uint32_t>(options.cpusPerRank),
                           options);
        if (options.mapNode) {
            if (!checkAvail(index, &nodes, kNoIndex, options)) {
                options.bind = savebind;
                continue;
            }
            auto fill = placeOnNode(app, index, kNoIndex, std::min(pprn, np - mapped), options);
            if (!fill)
                return fill.error();
            mapped += fill.value().placed;
        } else {
            for (std::uint32_t obj = 0; obj < nobjs && mapped < np; ++obj) {
                if (!checkAvail(index, &nodes, obj, options))
                    continue;
                auto fill = placeOnNode(app, index, obj, std::min(pprn, np - mapped), options);
                if (!fill)
                    return fill.error();
                mapped += fill.value().placed;
                if (fill.value().full)
                    break;
            }
        }
        options.bind = savebind;
    }
    if (mapped < np)
        return UserError{pattern + ": application context " + std::to_string(app) + " asks for " +
                         std::to_string(np) + " processes, but the pattern places only " +
                         std::to_string(mapped) +
                         " on the nodes (every node needs a free slot for each process it "
                         "takes).\nRequest at most " +
                         std::to_string(mapped) + " processes, or change the pattern."};
    return std::nullopt;
}

} // namespace stepmap::detail
