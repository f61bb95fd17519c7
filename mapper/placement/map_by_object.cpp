#include "placement/placement.hpp"

#include <algorithm>

#include "base/quote.hpp"
#include "placement/placement_messages.hpp"

namespace stepmap::detail {

// PRRTE's object mapper (map_targets): without SPAN each node in turn takes
// its free slots, one proc per object round robin over its objects; with
// SPAN one proc per node per trip around the list, each node resuming at
// its next object. Procs past the slots (OVERSUBSCRIBE) are spread evenly.
// Mapping by device the targets are the node's device groups, and unless
// SHARED each is given to one process only (one pass).
std::optional<UserError> Engine::mapByObject(std::uint32_t app, std::uint32_t np,
                                             MapOptions &options) {
    auto list = roundRobinTargets(np, options, false);
    if (!list)
        return list.error();
    const bool devices = options.mapDevice;
    const bool nowrap = devices && !options.shared;
    if (devices && !options.shared) {
        std::uint32_t groups = 0;
        for (std::uint32_t index : list.value()) {
            if (auto error = loadDeviceGroups(index, options))
                return error;
            groups += static_cast<std::uint32_t>(deviceGroups_.size());
        }
        if (groups > 0 && groups < np)
            return UserError{
                "--map-by device=" + escaped(options.device) + ": " + std::to_string(np) +
                " processes but only " + std::to_string(groups) + " " +
                (options.ndev > 1 ? "groups of " + std::to_string(options.ndev) + " devices"
                                  : std::string("devices")) +
                " on the nodes, and each is given to one process.\nRequest at most " +
                std::to_string(groups) +
                " processes, or add :SHARED to let processes share devices."};
    }
    NodeList nodes(list.value(), nodes_.size());
    std::vector<std::uint32_t> cursor(nodes_.size(), 0);
    const bool interleave = options.span && !nowrap;
    std::uint32_t mapped = 0;
    bool firstPass = true;
    bool wasFirst = false;
    bool allFull = true;
    bool outOfCpus = false;
    std::uint32_t extra = 0;
    std::uint32_t extraNodes = 0;
    do {
        allFull = true;
        if (!firstPass && options.oversubscribe && !interleave) {
            if (nodes.empty())
                break;
            const std::uint32_t remaining = np - mapped;
            const auto size = static_cast<std::uint32_t>(nodes.size());
            extra = remaining / size;
            extraNodes = 0;
            if (remaining % size != 0) {
                extraNodes = remaining - extra * size;
                ++extra;
            }
        }
        for (std::uint32_t index : nodes.order()) {
            if (mapped == np)
                break;
            if (!nodes.contains(index))
                continue;
            NodeState &node = nodes_[index];
            outOfCpus = false;
            computeJobCpuset(index, options);
            std::uint32_t nobjs = 0;
            if (devices) {
                if (auto error = loadDeviceGroups(index, options))
                    return error;
                nobjs = static_cast<std::uint32_t>(deviceGroups_.size());
            } else if (node.model != nullptr) {
                nobjs = static_cast<std::uint32_t>(node.model->objects(*options.mapLevel).size());
            }
            if (nobjs == 0)
                return UserError{
                    "--map-by " + mapName(options) + ": node " + std::string(node.name) +
                    " has no " +
                    (devices ? escaped(options.device) + " device"
                             : std::string(hwLevelName(*options.mapLevel))) +
                    " among the CPUs the job holds there.\nMap by a level every node has (e.g. "
                    "core) or by slot."};
            std::uint32_t budget = 0;
            std::uint32_t start = 0;
            if (interleave) {
                budget = (options.oversubscribe || node.slotsAvailable > 0) ? 1 : 0;
                start = cursor[index] % nobjs;
            } else if (firstPass || !options.oversubscribe) {
                budget = static_cast<std::uint32_t>(std::max(node.slotsAvailable, 0));
            } else {
                budget = extra;
                if (extraNodes > 0 && --extraNodes == 0)
                    --extra;
            }
            bool nodeFull = false;
            std::uint32_t placed = 0;
            bool again = true;
            while (again) {
                again = false;
                for (std::uint32_t i = 0; i < nobjs && mapped < np && !nodeFull; ++i) {
                    const std::uint32_t obj = start == 0 ? i : (start + i) % nobjs;
                    if (placed >= budget) {
                        nodeFull = true;
                        break;
                    }
                    if (options.bind != BindTo::None && !options.overload &&
                        ncpus(index, obj, options,
                              static_cast<std::uint32_t>(options.cpusPerRank)) <
                            static_cast<std::uint32_t>(options.cpusPerRank)) {
                        outOfCpus = true;
                        continue;
                    }
                    options.nprocs = 1;
                    if (!checkAvail(index, &nodes, obj, options)) {
                        nodeFull = true;
                        break;
                    }
                    if (auto error = setupProc(app, index, obj, options))
                        return error;
                    if (devices)
                        recordDevice(obj);
                    ++mapped;
                    ++placed;
                    ++cursor[index];
                    auto full = checkOversubscribed(index, options);
                    if (!full)
                        return full.error();
                    if (full.value() == 1) {
                        nodes.remove(index);
                        nodeFull = true;
                        break;
                    }
                    allFull = false;
                }
                if (mapped < np && !allFull && !nodeFull && !outOfCpus && !options.span && !nowrap)
                    again = true;
            }
        }
        if (nowrap)
            break;
        wasFirst = firstPass;
        firstPass = false;
    } while (mapped < np && (!allFull || (options.oversubscribe && wasFirst)));
    if (mapped == np)
        return std::nullopt;
    if (outOfCpus)
        return overloadError(app, np, options);
    return failedMap(app, np, mapped, options);
}

std::optional<UserError> Engine::mapByDevice(std::uint32_t app, std::uint32_t np,
                                             MapOptions &options) {
    return mapByObject(app, np, options);
}

} // namespace stepmap::detail
