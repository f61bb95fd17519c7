#include "placement/placement.hpp"

#include <algorithm>

#include "base/quote.hpp"
#include "placement/slot_errors.hpp"

namespace stepmap::detail {

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
    // The targets of a node: itself, its device groups or its objects.
    const auto targets = [&](std::uint32_t index) -> Expected<std::uint32_t> {
        if (options.mapNode)
            return 1u;
        if (options.mapDevice) {
            if (auto error = loadDeviceGroups(index, options))
                return *error;
            return static_cast<std::uint32_t>(deviceGroups_.size());
        }
        const NodeModel *model = nodes_[index].model;
        return model == nullptr
                   ? 0u
                   : static_cast<std::uint32_t>(model->objects(*options.mapLevel).size());
    };
    if (np == 0) {
        // Counted before anything is placed, against the process limit
        // left after the earlier application contexts.
        const std::uint64_t room = static_cast<std::uint64_t>(kMaxRanks) - mappedCount();
        std::uint64_t total = 0;
        for (std::uint32_t index : list.value()) {
            auto count = targets(index);
            if (!count)
                return count.error();
            total += std::uint64_t{pprn} * count.value();
            if (total > room)
                return UserError{pattern + ": the pattern asks for more than " +
                                 std::to_string(room) + " processes on the " +
                                 std::to_string(list->size()) + " nodes; stepmap places at most " +
                                 std::to_string(kMaxRanks) + ". Lower N, or give -n."};
        }
        np = static_cast<std::uint32_t>(total);
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
            return UserError{pattern + ": node " + std::string(node.name) + " has no " +
                             (options.mapDevice ? escaped(options.device) + " device" : object) +
                             " among the CPUs the job holds there.\nUse an object every node "
                             "has (e.g. core)."};
        options.nprocs = pprn * nobjs;
        if (options.nprocs > static_cast<std::uint32_t>(std::max(node.slotsAvailable, 0)) &&
            !options.oversubscribe)
            continue;
        if (node.model != nullptr && !jobBinding.given && options.bind != BindTo::None &&
            options.nprocs <= static_cast<std::uint32_t>(node.slotsAvailable) &&
            options.nprocs * static_cast<std::uint32_t>(options.cpusPerRank) >
                ncpus(index, kNoIndex, options)) {
            options.bind = BindTo::None;
            jobBinding = BindingWord{BindTo::None};
        }
        bool nextNode = false;
        if (options.mapNode) {
            if (!checkAvail(index, &nodes, kNoIndex, options)) {
                options.bind = savebind;
                continue;
            }
            for (std::uint32_t j = 0; j < pprn && mapped < np; ++j) {
                if (auto error = setupProc(app, index, kNoIndex, options))
                    return error;
                ++mapped;
                auto full = checkOversubscribed(index, options);
                if (!full)
                    return full.error();
                if (full.value() == 1)
                    break;
            }
        } else {
            for (std::uint32_t obj = 0; obj < nobjs && mapped < np && !nextNode; ++obj) {
                if (!checkAvail(index, &nodes, obj, options))
                    continue;
                for (std::uint32_t j = 0; j < pprn && mapped < np; ++j) {
                    if (auto error = setupProc(app, index, obj, options))
                        return error;
                    if (options.mapDevice)
                        recordDevice(obj);
                    ++mapped;
                    auto full = checkOversubscribed(index, options);
                    if (!full)
                        return full.error();
                    if (full.value() == 1) {
                        nextNode = true;
                        break;
                    }
                }
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
