// --map-by an object level (hwthread .. package) or device=.

#include "placement/placement.hpp"

#include <algorithm>

#include "base/quote.hpp"
#include "placement/placement_messages.hpp"

namespace stepmap::detail {

// The walk of one mapByObject call over the nodes, round after round.
struct Engine::ObjectWalk {
    NodeList nodes;
    std::vector<std::uint32_t> cursor; // per node: objects used, where SPAN resumes
    std::uint32_t np = 0;
    std::uint32_t mapped = 0;
    bool nowrap = false;     // devices not SHARED: one pass, one process each
    bool interleave = false; // SPAN: one process per node per trip
    bool firstPass = true;
    bool allFull = true;    // no node took a process this round
    bool outOfCpus = false; // the last node lacked CPUs for a binding
    EvenSplit split;        // the procs past the slots, over the nodes
};

namespace {

UserError noObjects(const NodeState &node, const MapOptions &options) {
    return UserError{"--map-by " + mapName(options) + ": node " + std::string(node.name) +
                     " has no " +
                     (options.mapDevice ? escaped(options.device) + " device"
                                        : std::string(hwLevelName(*options.mapLevel))) +
                     " among the CPUs the job holds there.\nMap by a level every node has (e.g. "
                     "core) or by slot."};
}

} // namespace

Expected<std::uint32_t> Engine::objectTargets(std::uint32_t index, const MapOptions &options) {
    if (options.mapDevice) {
        if (auto error = loadDeviceGroups(index, options))
            return *error;
        return static_cast<std::uint32_t>(deviceGroups_.size());
    }
    const NodeModel *model = nodes_[index].model;
    return model == nullptr ? 0u
                            : static_cast<std::uint32_t>(model->objects(*options.mapLevel).size());
}

// Devices given one process each: there must be a group per process.
std::optional<UserError> Engine::checkDeviceGroups(const std::vector<std::uint32_t> &list,
                                                   std::uint32_t np, const MapOptions &options) {
    std::uint32_t groups = 0;
    for (std::uint32_t index : list) {
        auto count = objectTargets(index, options);
        if (!count)
            return count.error();
        groups += count.value();
    }
    if (groups > 0 && groups < np)
        return UserError{
            "--map-by device=" + escaped(options.device) + ": " + std::to_string(np) +
            " processes but only " + std::to_string(groups) + " " +
            (options.ndev > 1 ? "groups of " + std::to_string(options.ndev) + " devices"
                              : std::string("devices")) +
            " on the nodes, and each is given to one process.\nRequest at most " +
            std::to_string(groups) + " processes, or add :SHARED to let processes share devices."};
    return std::nullopt;
}

Expected<Engine::ObjectStep> Engine::placeOnObject(std::uint32_t app, std::uint32_t index,
                                                   std::uint32_t obj, NodeList &nodes,
                                                   MapOptions &options) {
    const auto perRank = static_cast<std::uint32_t>(options.cpusPerRank);
    if (options.bind != BindTo::None && !options.overload &&
        ncpus(index, obj, options, perRank) < perRank)
        return ObjectStep::NoCpu;
    options.nprocs = 1;
    if (!checkAvail(index, &nodes, obj, options))
        return ObjectStep::NodeFull;
    if (auto error = setupProc(app, index, obj, options))
        return *error;
    if (options.mapDevice)
        recordDevice(obj);
    auto full = checkOversubscribed(index, options);
    if (!full)
        return full.error();
    if (full.value() == 1) {
        nodes.remove(index);
        return ObjectStep::PlacedNodeFull;
    }
    return ObjectStep::Placed;
}

// One node's turn: round robin over its objects until its budget is
// placed (without SPAN, round after round while processes fit).
std::optional<UserError> Engine::mapObjectsOfNode(std::uint32_t app, std::uint32_t index,
                                                  ObjectWalk &walk, MapOptions &options) {
    const NodeState &node = nodes_[index];
    walk.outOfCpus = false;
    computeJobCpuset(index, options);
    auto count = objectTargets(index, options);
    if (!count)
        return count.error();
    const std::uint32_t nobjs = count.value();
    if (nobjs == 0)
        return noObjects(node, options);
    std::uint32_t budget = 0;
    std::uint32_t start = 0;
    if (walk.interleave) {
        budget = (options.oversubscribe || node.slotsAvailable > 0) ? 1 : 0;
        start = walk.cursor[index] % nobjs;
    } else if (walk.firstPass || !options.oversubscribe) {
        budget = static_cast<std::uint32_t>(std::max(node.slotsAvailable, 0));
    } else {
        budget = walk.split.next();
    }
    std::uint32_t placed = 0;
    bool again = true;
    while (again) {
        for (std::uint32_t i = 0; i < nobjs && walk.mapped < walk.np; ++i) {
            if (placed >= budget)
                return std::nullopt;
            auto step = placeOnObject(app, index, (start + i) % nobjs, walk.nodes, options);
            if (!step)
                return step.error();
            if (step.value() == ObjectStep::NoCpu) {
                walk.outOfCpus = true;
                continue;
            }
            if (step.value() == ObjectStep::NodeFull)
                return std::nullopt;
            ++walk.mapped;
            ++placed;
            ++walk.cursor[index];
            if (step.value() == ObjectStep::PlacedNodeFull)
                return std::nullopt;
            walk.allFull = false;
        }
        again = walk.mapped < walk.np && !walk.allFull && !walk.outOfCpus && !options.span &&
                !walk.nowrap;
    }
    return std::nullopt;
}

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
    ObjectWalk walk{NodeList(list.value(), nodes_.size()),
                    std::vector<std::uint32_t>(nodes_.size(), 0), np};
    walk.nowrap = options.mapDevice && !options.shared;
    walk.interleave = options.span && !walk.nowrap;
    if (walk.nowrap)
        if (auto error = checkDeviceGroups(list.value(), np, options))
            return error;
    bool wasFirst = false;
    do {
        walk.allFull = true;
        if (!walk.firstPass && options.oversubscribe && !walk.interleave) {
            if (walk.nodes.empty())
                break;
            walk.split = EvenSplit(np - walk.mapped, static_cast<std::uint32_t>(walk.nodes.size()));
        }
        for (std::uint32_t index : walk.nodes.order()) {
            if (walk.mapped == np)
                break;
            if (!walk.nodes.contains(index))
                continue;
            if (auto error = mapObjectsOfNode(app, index, walk, options))
                return error;
        }
        if (walk.nowrap)
            break;
        wasFirst = walk.firstPass;
        walk.firstPass = false;
    } while (walk.mapped < np && (!walk.allFull || (options.oversubscribe && wasFirst)));
    if (walk.mapped == np)
        return std::nullopt;
    if (walk.outOfCpus)
        return overloadError(app, np, options);
    return failedMap(app, np, walk.mapped, options);
}

} // namespace stepmap::detail
