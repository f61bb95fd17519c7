// The mappers of the placement engine (placement.hpp): PRRTE's round_robin
// (slot, node, object, pe-list), ppr, seq and rank_file components, and
// ParaStation's --overbook.

#include "placement/placement.hpp"

#include <algorithm>
#include <unordered_map>

#include "base/quote.hpp"
#include "hosts/host_names.hpp"
#include "placement/cpu_list.hpp"
#include "placement/rank_mappers.hpp"
#include "placement/slot_errors.hpp"

namespace stepmap::detail {

namespace {

std::string lowerWord(std::string_view word) {
    std::string out(word);
    for (char &c : out)
        c = static_cast<char>(c >= 'A' && c <= 'Z' ? c - 'A' + 'a' : c);
    return out;
}

std::string mapName(const MapOptions &options) {
    if (options.map == MapBy::PeList)
        return "pe-list=" + escaped(options.peListGiven);
    std::string word(mapByWord(options.map));
    if (word.rfind("BY", 0) == 0)
        word = word.substr(2);
    return lowerWord(word);
}

UserError overloadError(std::uint32_t app, std::uint32_t np, const MapOptions &options) {
    return UserError{"Binding application context " + std::to_string(app) + " (" +
                     std::to_string(np) + " processes, --map-by " + mapName(options) +
                     ", --bind-to " + lowerWord(bindToWord(options.bind)) +
                     ") would bind processes to more CPUs than the job holds.\nAdd "
                     ":overload-allowed to --bind-to to bind several processes per CPU, bind to "
                     "none, or request fewer processes."};
}

UserError failedMap(std::uint32_t app, std::uint32_t np, std::uint32_t placed,
                    const MapOptions &options) {
    return UserError{"Could not place application context " + std::to_string(app) + ": " +
                     std::to_string(placed) + " of " + std::to_string(np) +
                     " processes fit with --map-by " + mapName(options) + " and --bind-to " +
                     lowerWord(bindToWord(options.bind)) +
                     ".\nRequest fewer processes, allow oversubscription (--map-by "
                     ":OVERSUBSCRIBE) or overloading (--bind-to ...:overload-allowed)."};
}

// The most procs the list takes when oversubscribing (max_slots), or
// `unbounded`.
std::int64_t capacity(const std::vector<NodeState> &nodes, const std::vector<std::uint32_t> &list,
                      std::int64_t unbounded) {
    std::int64_t total = 0;
    for (std::uint32_t index : list) {
        const NodeState &node = nodes[index];
        if (node.slotsMax == 0)
            return unbounded;
        total += std::max(0, node.slotsMax - node.slotsInuse);
    }
    return total;
}

} // namespace

std::optional<UserError> Engine::mapApp(std::uint32_t app, std::uint32_t np, MapOptions &options) {
    if (options.overbook)
        return mapOverbook(app, np, options);
    switch (options.map) {
    case MapBy::Slot:
    case MapBy::Default:
        return mapBySlot(app, np, options);
    case MapBy::Node:
        return mapByNode(app, np, options);
    case MapBy::PeList:
        return mapByCpu(app, np, options);
    case MapBy::Ppr:
        return mapPpr(app, np, options);
    case MapBy::Seq:
        return mapSeq(app, np, options);
    case MapBy::Rankfile:
        return mapRankfile(app, np, options);
    case MapBy::Device:
        return mapByDevice(app, np, options);
    default:
        return mapByObject(app, np, options);
    }
}

// When a mapper finds more procs than slots and may oversubscribe, a binding
// nobody asked for is dropped (PRRTE: "oversubscribed - don't bind").
void Engine::unbindForOversubscription(MapOptions &options) {
    if (!jobBinding.given) {
        jobBinding = BindingWord{BindTo::None};
        options.bind = BindTo::None;
    }
}

// PRRTE's byslot: each node in turn takes its free slots (fewer when its
// free CPUs cannot bind them all); what is left over is spread evenly.
// stepmap's second pass bounds each node by its max_slots, which PRRTE
// checks only before starting on a node.
std::optional<UserError> Engine::mapBySlot(std::uint32_t app, std::uint32_t np,
                                           MapOptions &options) {
    std::uint32_t numSlots = 0;
    auto list = targetNodes(numSlots, false);
    if (!list)
        return list.error();
    if (numSlots < np) {
        if (!options.oversubscribe)
            return notEnoughSlots(static_cast<int>(np), numSlots);
        const std::int64_t room = capacity(nodes_, list.value(), np);
        if (room < np)
            return notEnoughMaxSlots(static_cast<int>(np), room);
        unbindForOversubscription(options);
    }
    const BindTo savebind = options.bind;
    std::uint32_t mapped = 0;
    NodeList nodes(list.value(), nodes_.size());
    for (std::uint32_t index : list.value()) {
        NodeState &node = nodes_[index];
        computeJobCpuset(index, options);
        options.nprocs = static_cast<std::uint32_t>(std::max(node.slotsAvailable, 0));
        if (node.model != nullptr && options.bind != BindTo::None && !jobBinding.given &&
            options.nprocs <= static_cast<std::uint32_t>(node.slotsAvailable) &&
            options.nprocs > ncpus(index, kNoIndex, options, options.nprocs + 1)) {
            // More procs than CPUs but within the slots: overloaded, not
            // oversubscribed - run this node's procs unbound.
            options.bind = BindTo::None;
            jobBinding = BindingWord{BindTo::None};
        }
        if (!checkAvail(index, &nodes, kNoIndex, options)) {
            options.bind = savebind;
            continue;
        }
        for (std::uint32_t i = 0; i < options.nprocs && mapped < np; ++i) {
            if (auto error = setupProc(app, index, kNoIndex, options))
                return error;
            ++mapped;
            auto full = checkOversubscribed(index, options);
            if (!full)
                return full.error();
            if (full.value() == 1)
                break;
        }
        options.bind = savebind;
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

// By node, as seed 002 describes it: one proc per node per round, skipping
// nodes whose slots are used up, then (OVERSUBSCRIBE) on around the nodes
// below their max_slots. PRRTE instead gives each node the average and
// caps it by its free slots, which differs when nodes have different free
// slots (README: "Deliberate differences").
std::optional<UserError> Engine::mapByNode(std::uint32_t app, std::uint32_t np,
                                           MapOptions &options) {
    std::uint32_t numSlots = 0;
    auto list = targetNodes(numSlots, false);
    if (!list)
        return list.error();
    if (numSlots < np) {
        if (!options.oversubscribe)
            return notEnoughSlots(static_cast<int>(np), numSlots);
        const std::int64_t room = capacity(nodes_, list.value(), np);
        if (room < np)
            return notEnoughMaxSlots(static_cast<int>(np), room);
        unbindForOversubscription(options);
    }
    const std::vector<NodeSlots> slots = slotView(list.value());
    auto order = detail::mapByNode(slots, static_cast<int>(np), options.oversubscribe);
    if (!order)
        return order.error();
    return placeInOrder(app, slots, order.value(), options);
}

std::vector<NodeSlots> Engine::slotView(const std::vector<std::uint32_t> &list) const {
    std::vector<NodeSlots> slots;
    slots.reserve(list.size());
    for (std::uint32_t index : list) {
        const NodeState &node = nodes_[index];
        std::optional<int> maxSlots;
        if (node.slotsMax != 0)
            maxSlots = std::max(0, node.slotsMax - node.slotsInuse);
        slots.push_back(
            NodeSlots{index, node.name, node.cpus, std::max(node.slotsAvailable, 0), maxSlots});
    }
    return slots;
}

std::optional<UserError> Engine::placeInOrder(std::uint32_t app,
                                              const std::vector<NodeSlots> &slots,
                                              const std::vector<std::uint32_t> &order,
                                              MapOptions &options) {
    std::vector<std::uint32_t> nodeOfProc;
    nodeOfProc.reserve(order.size());
    for (std::uint32_t position : order)
        nodeOfProc.push_back(slots[position].allocIndex);
    return placeSequence(app, nodeOfProc, options);
}

// Procs on the given nodes in the given order, bound one by one. A node
// given more procs than it has free CPUs (within its slots) runs its procs
// unbound unless the binding was asked for, as PRRTE decides per node.
std::optional<UserError> Engine::placeSequence(std::uint32_t app,
                                               const std::vector<std::uint32_t> &nodeOfProc,
                                               MapOptions &options) {
    const BindTo savebind = options.bind;
    std::vector<std::uint32_t> count;
    std::vector<bool> unbound;
    if (options.bind != BindTo::None && !jobBinding.given) {
        count.assign(nodes_.size(), 0);
        for (std::uint32_t index : nodeOfProc)
            ++count[index];
        unbound.assign(nodes_.size(), false);
        for (std::uint32_t index = 0; index < nodes_.size(); ++index) {
            if (count[index] == 0 || nodes_[index].model == nullptr)
                continue;
            computeJobCpuset(index, options);
            if (count[index] <= static_cast<std::uint32_t>(nodes_[index].slotsAvailable) &&
                count[index] > ncpus(index, kNoIndex, options, count[index] + 1)) {
                unbound[index] = true;
                jobBinding = BindingWord{BindTo::None};
            }
        }
    }
    for (std::uint32_t index : nodeOfProc) {
        options.bind = !unbound.empty() && unbound[index] ? BindTo::None : savebind;
        options.nprocs = 1;
        if (options.bind != BindTo::None)
            computeJobCpuset(index, options);
        if (!checkAvail(index, nullptr, kNoIndex, options)) {
            // Its CPUs are all taken: bind it nowhere if allowed to.
            if (options.bind == BindTo::None || !jobBinding.ifSupported) {
                options.bind = savebind;
                return UserError{"node " + std::string(nodes_[index].name) +
                                 ": no free CPU is left to bind another process to (--bind-to " +
                                 lowerWord(bindToWord(savebind)) +
                                 ").\nRequest fewer processes, add :overload-allowed to "
                                 "--bind-to to bind several processes per CPU, or add "
                                 ":if-supported to run them unbound."};
            }
            options.bind = BindTo::None;
            checkAvail(index, nullptr, kNoIndex, options);
        }
        if (auto error = setupProc(app, index, kNoIndex, options)) {
            options.bind = savebind;
            return error;
        }
        if (auto full = checkOversubscribed(index, options); !full) {
            options.bind = savebind;
            return full.error();
        }
    }
    options.bind = savebind;
    return std::nullopt;
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

// PRRTE's pe-list mapper: each node takes as many procs as the list names
// CPUs, every proc bound to the whole list (one CPU of it used up each).
std::optional<UserError> Engine::mapByCpu(std::uint32_t app, std::uint32_t np,
                                          MapOptions &options) {
    std::uint32_t numSlots = 0;
    auto list = targetNodes(numSlots, false);
    if (!list)
        return list.error();
    if (numSlots < np) {
        if (!options.oversubscribe)
            return notEnoughSlots(static_cast<int>(np), numSlots);
        unbindForOversubscription(options);
    }
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

// PRRTE's object mapper (map_targets): without SPAN each node in turn takes
// its free slots, one proc per object round robin over its objects; with
// SPAN one proc per node per trip around the list, each node resuming at
// its next object. Procs past the slots (OVERSUBSCRIBE) are spread evenly.
// Mapping by device the targets are the node's device groups, and unless
// SHARED each is given to one process only (one pass).
std::optional<UserError> Engine::mapByObject(std::uint32_t app, std::uint32_t np,
                                             MapOptions &options) {
    std::uint32_t numSlots = 0;
    auto list = targetNodes(numSlots, false);
    if (!list)
        return list.error();
    if (numSlots < np) {
        if (!options.oversubscribe)
            return notEnoughSlots(static_cast<int>(np), numSlots);
        unbindForOversubscription(options);
    }
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

std::optional<UserError> Engine::mapSeq(std::uint32_t app, std::uint32_t np, MapOptions &options) {
    const std::vector<SequenceEntry> &entries = *options.sequence;
    std::size_t cursor = options.sequenceShared ? sequenceCursor_ : 0;
    std::unordered_map<std::string_view, std::uint32_t> byName;
    for (std::uint32_t i = 0; i < nodes_.size(); ++i)
        byName.emplace(nodes_[i].name, i);
    if (np == 0)
        np = static_cast<std::uint32_t>(entries.size() - std::min(entries.size(), cursor));
    const BindTo savebind = options.bind;
    for (std::uint32_t n = 0; n < np;) {
        if (cursor >= entries.size())
            return UserError{"--map-by seq: application context " + std::to_string(app) +
                             " needs " + std::to_string(np) +
                             " processes, but the sequence has only " + std::to_string(n) +
                             " usable host lines left for it (one per rank).\nList one host per "
                             "rank, or request fewer processes."};
        const SequenceEntry &entry = entries[cursor];
        std::optional<std::uint32_t> found;
        if (const auto relative = relativeNodeIndex(entry.host)) {
            if (*relative < list_.size())
                found = list_[*relative].allocIndex;
        } else if (const auto named = byName.find(entry.host); named != byName.end()) {
            found = named->second;
        }
        if (!found)
            return UserError{"--map-by seq: host " + quoted(entry.host) + " (line " +
                             std::to_string(cursor + 1) +
                             " of the sequence) is not in the allocation.\nList only allocated "
                             "nodes."};
        const std::uint32_t index = *found;
        NodeState &node = nodes_[index];
        ++cursor;
        computeJobCpuset(index, options);
        options.nprocs = 1;
        const bool ownCpus = !entry.cpus.empty();
        if (ownCpus)
            options.bind = BindTo::None;
        if (!checkAvail(index, nullptr, kNoIndex, options)) {
            options.bind = savebind;
            continue; // this line's node is full: try the next line
        }
        if (auto error = setupProc(app, index, kNoIndex, options))
            return error;
        options.bind = savebind;
        Proc &proc = procs_.back();
        if (ownCpus) {
            if (node.model == nullptr)
                return UserError{"--map-by seq: line " + std::to_string(cursor) +
                                 " binds to CPUs " + escaped(entry.cpus) +
                                 ", but the hardware of node " + std::string(node.name) +
                                 " is unknown"};
            auto cpus = resolveSlotList(entry.cpus, *node.model, options.useHwthreads);
            if (!cpus)
                return UserError{"--map-by seq: line " + std::to_string(cursor) + ": " +
                                 cpus.error().message};
            PuBits bits(node.model->puCount());
            for (std::uint32_t pu : cpus->pus)
                bits.set(pu);
            if (!cpus->notHeld.empty() || (!options.overload && !bits.isSubsetOf(node.available)))
                return UserError{"--map-by seq: line " + std::to_string(cursor) + " binds rank " +
                                 std::to_string(options.startRank + n) + " to CPUs " +
                                 escaped(entry.cpus) + " of node " + std::string(node.name) +
                                 ", but they are not all free for the job (free: " +
                                 formatIdList(node.model->logicalOf(node.available.bits())) +
                                 ").\nGive each rank CPUs of its own, or add :overload-allowed "
                                 "to --bind-to."};
            proc.binding = internBits(*node.model, bits);
            node.available.andNot(bits);
        }
        proc.rank = options.startRank + n;
        if (auto full = checkOversubscribed(index, options); !full)
            return full.error();
        ++n;
    }
    if (options.sequenceShared)
        sequenceCursor_ = cursor;
    return std::nullopt;
}

std::optional<UserError> Engine::mapRankfile(std::uint32_t app, std::uint32_t np,
                                             MapOptions &options) {
    const Rankfile &file = *options.rankfile;
    std::uint32_t numSlots = 0;
    auto list = targetNodes(numSlots, true);
    if (!list)
        return list.error();
    const std::vector<std::uint32_t> order = list.value();
    NodeList nodes(order, nodes_.size());
    std::unordered_map<std::string_view, std::uint32_t> byName;
    for (std::uint32_t index : order)
        byName.emplace(nodes_[index].name, index);
    if (np == 0)
        np = static_cast<std::uint32_t>(file.entries.size());
    const std::string where = "rankfile " + escaped(file.fileName, kShownPathBytes);
    for (std::uint32_t k = 0; k < np; ++k) {
        const std::uint32_t wanted = options.rankfileGlobal ? options.startRank + k : k;
        const auto it = std::lower_bound(
            file.entries.begin(), file.entries.end(), wanted,
            [](const RankfileEntry &entry, std::uint32_t rank) { return entry.rank < rank; });
        if (it == file.entries.end() || it->rank != wanted)
            return UserError{where + " has no line for rank " + std::to_string(wanted) +
                             ": with --map-by rankfile every rank needs one (rank " +
                             std::to_string(wanted) + "=HOST slot=CPUS)"};
        std::optional<std::uint32_t> found;
        if (const auto relative = relativeNodeIndex(it->host)) {
            if (*relative >= order.size())
                return UserError{where + ": rank " + std::to_string(wanted) + " names +n" +
                                 std::to_string(*relative) + ", but the job has " +
                                 std::to_string(order.size()) + " nodes (+n0 to +n" +
                                 std::to_string(order.size() - 1) + ")"};
            found = order[*relative];
        } else if (const auto named = byName.find(it->host); named != byName.end()) {
            found = named->second;
        }
        if (!found)
            return UserError{where + ": rank " + std::to_string(wanted) + " is assigned to host " +
                             escaped(it->host) +
                             ", which is not among the job's nodes (after --host and "
                             "--hostfile).\nAssign ranks to allocated nodes only."};
        const std::uint32_t index = *found;
        NodeState &node = nodes_[index];
        computeJobCpuset(index, options);
        options.nprocs = 1;
        if (!checkAvail(index, &nodes, kNoIndex, options))
            return UserError{where + ": rank " + std::to_string(wanted) + " goes to " +
                             escaped(it->host) + ", which has no free slot left (" +
                             std::to_string(node.slots) +
                             " slots).\nMove ranks to other nodes, or add --map-by "
                             ":OVERSUBSCRIBE."};
        if (auto error = setupProc(app, index, kNoIndex, options))
            return error;
        if (auto full = checkOversubscribed(index, options); !full)
            return full.error();
        Proc &proc = procs_.back();
        proc.rank = options.startRank + k;
        if (!it->slots.empty() && (jobBinding.policy != BindTo::None || options.overload)) {
            if (node.model == nullptr)
                return UserError{where + ": rank " + std::to_string(wanted) + " binds to slot=" +
                                 escaped(it->slots) + ", but the hardware of node " +
                                 std::string(node.name) + " is unknown"};
            auto cpus = resolveSlotList(it->slots, *node.model, options.useHwthreads);
            if (!cpus)
                return UserError{where + ": rank " + std::to_string(wanted) + ": " +
                                 cpus.error().message};
            PuBits bits(node.model->puCount());
            for (std::uint32_t pu : cpus->pus)
                bits.set(pu);
            if (!cpus->notHeld.empty() || !bits.any())
                return UserError{where + ": rank " + std::to_string(wanted) + " slot=" +
                                 escaped(it->slots) + " names CPUs the job does not hold on " +
                                 std::string(node.name) + " (it holds " +
                                 formatIdList(node.model->logicalOf(node.jobcache.bits())) + ")"};
            if (!options.overload && !bits.isSubsetOf(node.available)) {
                PuBits taken = bits;
                taken.andNot(node.available);
                return UserError{where + ": rank " + std::to_string(wanted) +
                                 " slot=" + escaped(it->slots) + " on " + std::string(node.name) +
                                 " overlaps CPUs already given to another rank (" +
                                 formatIdList(node.model->logicalOf(taken.bits())) +
                                 ").\nGive each rank CPUs of its own, or add :overload-allowed "
                                 "to --bind-to."};
            }
            proc.binding = internBits(*node.model, bits);
            node.available.andNot(bits);
        }
    }
    return std::nullopt;
}

std::optional<UserError> Engine::mapByDevice(std::uint32_t app, std::uint32_t np,
                                             MapOptions &options) {
    return mapByObject(app, np, options);
}

void Engine::recordDevice(std::uint32_t group) {
    if (procDevices_.size() < procs_.size())
        procDevices_.resize(procs_.size(), kUnbound);
    const std::string &names = deviceGroups_[group].names;
    const auto [it, inserted] =
        deviceSetIndex_.emplace(names, static_cast<std::uint32_t>(deviceSets_.size()));
    if (inserted)
        deviceSets_.push_back(names);
    procDevices_[procs_.size() - 1] = it->second;
}

// PRRTE's device enumerator (rmaps_base_devices.c): the node's devices of
// the class (gpu, network) or the one named, reordered across packages
// (or another level) with INTERLEAVE, handed out NDEV at a time; a group's
// locality is the smallest object holding all its devices' CPUs.
std::optional<UserError> Engine::loadDeviceGroups(std::uint32_t index, const MapOptions &options) {
    if (deviceGroupsNode_ == index)
        return std::nullopt;
    deviceGroups_.clear();
    deviceGroupsNode_ = index;
    const NodeState &node = nodes_[index];
    if (node.model == nullptr)
        return std::nullopt;
    const NodeModel &model = *node.model;
    const std::string wanted = lowerWord(options.device);
    std::optional<DeviceKind> kind;
    if (wanted == "gpu")
        kind = DeviceKind::Gpu;
    else if (wanted == "network" || wanted == "openfabrics" || wanted == "fabric" ||
             wanted == "nic")
        kind = DeviceKind::Network;
    std::vector<const HwDevice *> devices;
    for (const HwDevice &device : model.devices()) {
        if (kind ? device.kind == *kind : device.name == options.device)
            devices.push_back(&device);
    }
    if (devices.empty())
        return std::nullopt;
    if (kind == DeviceKind::Gpu) {
        for (const HwDevice *device : devices) {
            if (device->uuid.empty())
                return UserError{
                    "--map-by device=" + escaped(options.device) + ": GPU " + device->name +
                    " of node " + std::string(node.name) +
                    " carries no vendor identity (hwloc saw it without its NVML, RSMI or Level "
                    "Zero backend), so no process could be told which GPU is its own.\nUse an "
                    "hwloc built with the vendor's backend, or place by --map-by numa or "
                    "package."};
        }
    }
    const auto puOf = [](const HwDevice *device) { return device->firstPu; };
    if (!options.interleave.empty()) {
        HwLevel level = HwLevel::Package;
        if (options.interleave == "numa")
            level = HwLevel::Numa;
        else if (options.interleave == "l3cache")
            level = HwLevel::L3Cache;
        else if (options.interleave == "l2cache")
            level = HwLevel::L2Cache;
        else if (options.interleave == "l1cache")
            level = HwLevel::L1Cache;
        std::vector<std::uint32_t> keys;
        std::vector<std::vector<const HwDevice *>> groups;
        for (const HwDevice *device : devices) {
            const std::uint32_t key =
                device->puCount == 0 ? kNoIndex : model.objectOf(level, puOf(device));
            const auto found = std::find(keys.begin(), keys.end(), key);
            if (found == keys.end()) {
                keys.push_back(key);
                groups.push_back({device});
            } else {
                groups[static_cast<std::size_t>(found - keys.begin())].push_back(device);
            }
        }
        devices.clear();
        for (std::size_t round = 0; devices.size() < model.devices().size(); ++round) {
            bool any = false;
            for (const auto &group : groups) {
                if (round < group.size()) {
                    devices.push_back(group[round]);
                    any = true;
                }
            }
            if (!any)
                break;
        }
    }
    const auto per = static_cast<std::size_t>(options.ndev);
    for (std::size_t g = 0; g + per <= devices.size(); g += per) {
        DeviceGroup group;
        std::uint32_t first = kNoIndex;
        std::uint32_t end = 0;
        bool local = true;
        for (std::size_t m = 0; m < per; ++m) {
            const HwDevice *device = devices[g + m];
            if (!group.names.empty())
                group.names += ',';
            group.names += device->name;
            if (device->puCount == 0) {
                local = false;
                continue;
            }
            first = std::min(first, device->firstPu);
            end = std::max(end, device->firstPu + device->puCount);
        }
        if (!local || first == kNoIndex) {
            first = 0;
            end = model.puCount();
        } else if (per > 1) {
            // The smallest object holding them all (else the whole node).
            std::uint32_t bestFirst = 0;
            std::uint32_t bestEnd = model.puCount();
            for (std::size_t level = 0; level < kHwLevelCount; ++level) {
                for (const HwObject &object : model.objects(static_cast<HwLevel>(level))) {
                    if (object.firstPu <= first && object.firstPu + object.puCount >= end &&
                        object.puCount < bestEnd - bestFirst) {
                        bestFirst = object.firstPu;
                        bestEnd = object.firstPu + object.puCount;
                    }
                }
            }
            first = bestFirst;
            end = bestEnd;
        }
        group.firstPu = first;
        group.puCount = end - first;
        // A binding wider than the devices' locality would bind the process
        // away from them.
        if (options.bind != BindTo::None) {
            for (const HwObject &object : model.objects(*levelOf(options.bind))) {
                const std::uint32_t objectEnd = object.firstPu + object.puCount;
                const bool intersects = object.firstPu < end && first < objectEnd;
                const bool wider = object.firstPu <= first && objectEnd >= end &&
                                   (object.firstPu != first || objectEnd != end);
                if (intersects && wider)
                    return UserError{
                        "--bind-to " + lowerWord(bindToWord(options.bind)) +
                        " binds wider than the CPUs the " + escaped(options.device) +
                        " devices of node " + std::string(node.name) +
                        " are local to.\nBind to their locality or below (e.g. --bind-to core), "
                        "or give each process several devices (NDEV=n)."};
            }
        }
        deviceGroups_.push_back(std::move(group));
    }
    return std::nullopt;
}

} // namespace stepmap::detail
