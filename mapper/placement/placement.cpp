#include "placement/placement.hpp"

#include <algorithm>

#include "hosts/node_model.hpp"
#include "placement/cpu_count.hpp"
#include "placement/cpu_list.hpp"
#include "placement/slot_errors.hpp"

namespace stepmap::detail {

namespace {

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

Engine::Engine(const Allocation &allocation, const std::vector<NodeSlots> &list)
    : allocation_(allocation), list_(list) {
    nodes_.resize(allocation.nodes.size());
    for (std::size_t i = 0; i < allocation.nodes.size(); ++i) {
        NodeState &node = nodes_[i];
        const AllocatedNode &source = allocation.nodes[i];
        node.allocIndex = static_cast<std::uint32_t>(i);
        node.name = source.name;
        node.model = source.model.get();
        node.cpus = source.slots;
        node.slots = source.slots;
        if (node.model != nullptr) {
            node.available.fill(node.model->puCount());
            node.jobcache = node.available;
        }
    }
    for (const NodeSlots &entry : list) {
        NodeState &node = nodes_[entry.allocIndex];
        node.slots = entry.slots;
        node.slotsMax = entry.maxSlots.value_or(0);
        node.inList = true;
        allModeled_ = allModeled_ && node.model != nullptr;
    }
    std::uint64_t expected = 0;
    for (const NodeSlots &entry : list)
        expected += static_cast<std::uint64_t>(entry.slots);
    procs_.reserve(std::min<std::uint64_t>(expected, kMaxRanks));
}

void Engine::addToMap(std::uint32_t node) {
    if (nodes_[node].mapped)
        return;
    nodes_[node].mapped = true;
    nodes_[node].mapOrder = static_cast<std::uint32_t>(mapOrder_.size());
    mapOrder_.push_back(node);
}

Expected<std::vector<std::uint32_t>> Engine::targetNodes(std::uint32_t &numSlots, bool keepAll) {
    std::vector<std::uint32_t> list;
    list.reserve(list_.size());
    std::int64_t slots = 0;
    for (const NodeSlots &entry : list_) {
        const std::uint32_t index = entry.allocIndex;
        NodeState &node = nodes_[index];
        if (!keepAll && node.slotsMax != 0 && node.slotsInuse >= node.slotsMax)
            continue;
        if (!keepAll && node.slots <= node.slotsInuse && noOversubscribe)
            continue;
        if (node.slots > node.slotsInuse) {
            node.slotsAvailable = node.slots - node.slotsInuse;
            slots += node.slotsAvailable;
        } else {
            node.slotsAvailable = 0;
        }
        if (node.model != nullptr) {
            node.jobcache = node.available;
        }
        list.push_back(index);
    }
    if (list.empty())
        return UserError{"All nodes left to this application context are already filled by the "
                         "ones before it (" +
                         std::to_string(list_.size()) +
                         " nodes, no free slot).\nRequest fewer processes, or add "
                         "--map-by :OVERSUBSCRIBE to place more processes than slots."};
    numSlots = static_cast<std::uint32_t>(std::min<std::int64_t>(slots, 0xffffffff));
    return list;
}

void Engine::computeJobCpuset(std::uint32_t index, const MapOptions &options) {
    jobCpuset_.reset();
    const NodeState &node = nodes_[index];
    if (options.cpuset.empty() || node.model == nullptr)
        return;
    jobCpuset_.emplace(node.model->puCount());
    const auto resolved = resolveIdList(options.cpuset, *node.model, options.useHwthreads);
    if (!resolved)
        return; // checked when the options were resolved
    for (std::uint32_t pu : resolved->pus)
        jobCpuset_->set(pu);
}

std::optional<std::pair<std::uint32_t, std::uint32_t>>
Engine::objectRange(std::uint32_t index, std::uint32_t obj, const MapOptions &options) const {
    if (obj == kNoIndex)
        return std::nullopt;
    if (options.mapDevice) {
        if (deviceGroupsNode_ != index || obj >= deviceGroups_.size())
            return std::nullopt;
        return std::pair{deviceGroups_[obj].firstPu, deviceGroups_[obj].puCount};
    }
    if (!options.mapLevel || nodes_[index].model == nullptr)
        return std::nullopt;
    const HwObject &object = nodes_[index].model->objects(*options.mapLevel)[obj];
    return std::pair{object.firstPu, object.puCount};
}

PuBits Engine::freeCpus(std::uint32_t index) const {
    PuBits free = nodes_[index].available;
    if (jobCpuset_)
        free.andWith(*jobCpuset_);
    return free;
}

std::uint32_t Engine::ncpus(std::uint32_t index, std::uint32_t obj, const MapOptions &options,
                            std::uint32_t stopAt) const {
    const NodeState &node = nodes_[index];
    if (node.model == nullptr)
        return 0;
    return countFree(index, freeCpus(index), obj, options, stopAt);
}

std::uint32_t Engine::countFree(std::uint32_t index, const PuBits &free, std::uint32_t obj,
                                const MapOptions &options, std::uint32_t stopAt) const {
    const NodeModel &model = *nodes_[index].model;
    std::uint32_t first = 0;
    std::uint32_t count = model.puCount();
    if (const auto range = objectRange(index, obj, options)) {
        first = range->first;
        count = range->second;
    }
    return countCpus(model, free, first, count, options.useHwthreads, stopAt);
}

bool Engine::checkAvail(std::uint32_t index, NodeList *list, std::uint32_t obj,
                        MapOptions &options) {
    NodeState &node = nodes_[index];
    bool avail = false;
    if (!options.oversubscribe && node.slots <= node.slotsInuse)
        return false;
    if (node.slotsMax != 0 && node.slotsMax <= node.slotsInuse) {
        if (list != nullptr)
            list->remove(index);
        return false;
    }
    if (options.bind == BindTo::None) {
        target_ = jobCpuset_;
        avail = true;
    } else {
        // Counting past what the question needs is wasted work.
        const auto perRank = static_cast<std::uint32_t>(options.cpusPerRank);
        std::uint32_t needed = kNoBit;
        if (options.pprn > 0)
            needed = static_cast<std::uint32_t>(options.pprn) * perRank;
        else if (!options.overload && options.nprocs < kNoBit / perRank)
            needed = options.nprocs * perRank;
        target_ = freeCpus(index);
        const std::uint32_t cpus =
            node.model == nullptr ? 0 : countFree(index, *target_, obj, options, needed);
        if (const auto range = objectRange(index, obj, options))
            target_->keepRange(range->first, range->second);
        const std::uint32_t fits = cpus / static_cast<std::uint32_t>(options.cpusPerRank);
        if (options.pprn > 0) {
            avail = static_cast<std::uint32_t>(options.pprn) <= fits;
        } else if (options.nprocs <= fits || options.overload) {
            avail = true;
        } else if (fits > 0) {
            options.nprocs = fits;
            avail = true;
        }
    }
    if (avail)
        addToMap(index);
    return avail;
}

std::optional<UserError> Engine::setupProc(std::uint32_t app, std::uint32_t index,
                                           std::uint32_t obj, MapOptions &options) {
    Proc proc;
    proc.node = index;
    proc.app = app;
    proc.obj = obj;
    if (auto error = bindProc(proc, options))
        return error;
    procs_.push_back(proc);
    NodeState &node = nodes_[index];
    ++node.numProcs;
    ++node.slotsInuse;
    if (node.slotsAvailable > 0)
        --node.slotsAvailable;
    return std::nullopt;
}

Expected<int> Engine::checkOversubscribed(std::uint32_t index, const MapOptions &options) {
    NodeState &node = nodes_[index];
    if (!options.oversubscribe && static_cast<std::uint32_t>(node.slots) == node.numProcs)
        return 1;
    if (static_cast<std::uint32_t>(node.slots) < node.numProcs) {
        oversubscribed_ = true;
        if (options.oversubscribe)
            return 0;
        return UserError{"node " + std::string(node.name) + " would run " +
                         std::to_string(node.numProcs) + " processes on " +
                         std::to_string(node.slots) +
                         " slots.\nEither request fewer procs for your application, or use "
                         "--map-by :OVERSUBSCRIBE (or --overbook) to run more procs than slots."};
    }
    return 0;
}

EngineResult Engine::take() {
    EngineResult result;
    result.procs = std::move(procs_);
    result.bindings = std::move(bindings_);
    result.deviceSets = std::move(deviceSets_);
    result.procDevices = std::move(procDevices_);
    result.mapOrder = std::move(mapOrder_);
    result.nodes = std::move(nodes_);
    result.oversubscribed = oversubscribed_;
    return result;
}

std::optional<UserError> Engine::mapApp(std::uint32_t app, std::uint32_t np, MapOptions &options) {
    using Placer = std::optional<UserError> (Engine::*)(std::uint32_t, std::uint32_t, MapOptions &);
    // One placer per policy (map_*.cpp); the object levels and device=
    // share the object placer.
    static constexpr std::pair<MapBy, Placer> kPlacers[] = {
        {MapBy::Slot, &Engine::mapBySlot},       {MapBy::Default, &Engine::mapBySlot},
        {MapBy::Node, &Engine::mapByNode},       {MapBy::PeList, &Engine::mapPeList},
        {MapBy::Ppr, &Engine::mapPpr},           {MapBy::Seq, &Engine::mapSeq},
        {MapBy::Rankfile, &Engine::mapRankfile},
    };
    Placer placer = &Engine::mapByObject;
    for (const auto &[by, candidate] : kPlacers) {
        if (by == options.map)
            placer = candidate;
    }
    if (options.overbook)
        placer = &Engine::mapOverbook;
    return (this->*placer)(app, np, options);
}

Expected<std::vector<std::uint32_t>>
Engine::roundRobinTargets(std::uint32_t np, MapOptions &options, bool boundedByMaxSlots) {
    std::uint32_t numSlots = 0;
    auto list = targetNodes(numSlots, false);
    if (!list || numSlots >= np)
        return list;
    if (!options.oversubscribe)
        return notEnoughSlots(static_cast<int>(np), numSlots);
    if (boundedByMaxSlots) {
        const std::int64_t room = capacity(nodes_, list.value(), np);
        if (room < np)
            return notEnoughMaxSlots(static_cast<int>(np), room);
    }
    unbindForOversubscription(options);
    return list;
}

bool Engine::overloadedWithinSlots(std::uint32_t index, std::uint32_t procs,
                                   std::uint32_t cpusNeeded, const MapOptions &options) const {
    const NodeState &node = nodes_[index];
    return node.model != nullptr && options.bind != BindTo::None && !jobBinding.given &&
           procs <= static_cast<std::uint32_t>(node.slotsAvailable) &&
           cpusNeeded >
               ncpus(index, kNoIndex, options, cpusNeeded < kNoBit ? cpusNeeded + 1 : kNoBit);
}

void Engine::unbindIfOverloaded(std::uint32_t index, std::uint32_t procs, std::uint32_t cpusNeeded,
                                MapOptions &options) {
    if (overloadedWithinSlots(index, procs, cpusNeeded, options)) {
        options.bind = BindTo::None;
        jobBinding = BindingWord{BindTo::None};
    }
}

Expected<Engine::NodeFill> Engine::placeOnNode(std::uint32_t app, std::uint32_t index,
                                               std::uint32_t obj, std::uint32_t count,
                                               MapOptions &options) {
    NodeFill fill;
    while (fill.placed < count) {
        if (auto error = setupProc(app, index, obj, options))
            return *error;
        if (options.mapDevice)
            recordDevice(obj);
        ++fill.placed;
        auto full = checkOversubscribed(index, options);
        if (!full)
            return full.error();
        if (full.value() == 1) {
            fill.full = true;
            break;
        }
    }
    return fill;
}

Expected<std::uint32_t> Engine::takeShare(std::uint32_t app, std::uint32_t index,
                                          std::uint32_t left, NodeList &nodes,
                                          MapOptions &options) {
    const BindTo bind = options.bind;
    unbindIfOverloaded(index, options.nprocs, options.nprocs, options);
    std::uint32_t placed = 0;
    if (checkAvail(index, &nodes, kNoIndex, options)) {
        auto fill = placeOnNode(app, index, kNoIndex, std::min(options.nprocs, left), options);
        if (!fill)
            return fill.error();
        placed = fill.value().placed;
    }
    options.bind = bind;
    return placed;
}

// When a mapper finds more procs than slots and may oversubscribe, a binding
// nobody asked for is dropped (PRRTE: "oversubscribed - don't bind").
void Engine::unbindForOversubscription(MapOptions &options) {
    if (!jobBinding.given) {
        jobBinding = BindingWord{BindTo::None};
        options.bind = BindTo::None;
    }
}

} // namespace stepmap::detail
