#include "placement/placement.hpp"

#include <algorithm>

#include "base/quote.hpp"
#include "placement/cpu_list.hpp"
#include "placement/node_model.hpp"
#include "placement/slot_errors.hpp"

namespace stepmap::detail {

namespace {

// Cores (or PUs, with hwthreads) of `bits` inside [first, first + count).
// A core counts only when all its PUs are in the set, as hwloc's
// get_nbobjs_inside_cpuset does. With stopAtOne: 0 or 1.
std::uint32_t countCpus(const NodeModel &model, const PuBits &bits, std::uint32_t first,
                        std::uint32_t count, bool hwthreads, std::uint32_t stopAt = kNoBit) {
    std::uint32_t n = 0;
    std::uint32_t pu = bits.next(first);
    if (hwthreads) {
        while (pu != kNoBit && pu < first + count && n < stopAt) {
            ++n;
            pu = bits.next(pu + 1);
        }
        return n;
    }
    const auto &cores = model.objects(HwLevel::Core);
    while (pu != kNoBit && pu < first + count && n < stopAt) {
        const HwObject &core = cores[model.objectOf(HwLevel::Core, pu)];
        if (core.firstPu >= first && core.firstPu + core.puCount <= first + count &&
            bits.allInRange(core.firstPu, core.puCount))
            ++n;
        pu = bits.next(core.firstPu + core.puCount);
    }
    return n;
}

// The first core (or PU) of `bits` inside [first, first + count), as a PU
// range, or nothing.
std::optional<std::pair<std::uint32_t, std::uint32_t>>
firstCpuInside(const NodeModel &model, const PuBits &bits, std::uint32_t first, std::uint32_t count,
               bool hwthreads) {
    std::uint32_t pu = bits.next(first);
    while (pu != kNoBit && pu < first + count) {
        if (hwthreads)
            return std::pair{pu, 1u};
        const HwObject &core = model.objects(HwLevel::Core)[model.objectOf(HwLevel::Core, pu)];
        if (core.firstPu >= first && core.firstPu + core.puCount <= first + count &&
            bits.allInRange(core.firstPu, core.puCount))
            return std::pair{core.firstPu, core.puCount};
        pu = bits.next(core.firstPu + core.puCount);
    }
    return std::nullopt;
}

std::string bindingName(BindTo to) {
    std::string word(bindToWord(to));
    for (char &c : word)
        c = static_cast<char>(c >= 'A' && c <= 'Z' ? c - 'A' + 'a' : c);
    return word;
}

} // namespace

std::string formatMapping(const MappingWord &word) {
    std::string out(mapByWord(word.policy));
    if (word.noOversubscribe)
        out += ":NOOVERSUBSCRIBE";
    else if (word.subscribeGiven)
        out += ":OVERSUBSCRIBE";
    if (word.span)
        out += ":SPAN";
    if (word.ordered)
        out += ":ORDERED";
    return out;
}

std::string formatRanking(const RankingWord &word) {
    if (word.byUser)
        return "BYUSER";
    if (!word.policy)
        return "UNKNOWN";
    return std::string(rankByWord(*word.policy));
}

std::string formatBinding(const BindingWord &word) {
    std::string out = word.policy == BindTo::Default ? std::string("UNKNOWN")
                                                     : std::string(bindToWord(word.policy));
    if (word.ifSupported && word.overloadAllowed)
        out += ":IF-SUPPORTED:OVERLOAD-ALLOWED";
    else if (word.overloadAllowed)
        out += ":OVERLOAD-ALLOWED";
    else if (word.ifSupported)
        out += ":IF-SUPPORTED";
    return out;
}

int depthOf(BindTo to) {
    switch (to) {
    case BindTo::Default:
    case BindTo::None:
        return 1;
    case BindTo::Package:
        return 2;
    case BindTo::Numa:
        return 3;
    case BindTo::L3Cache:
        return 4;
    case BindTo::L2Cache:
        return 5;
    case BindTo::L1Cache:
        return 6;
    case BindTo::Core:
        return 7;
    case BindTo::Hwthread:
        return 8;
    }
    return 1;
}

int depthOf(MapBy by) {
    switch (by) {
    case MapBy::Package:
        return 2;
    case MapBy::Numa:
        return 3;
    case MapBy::L3Cache:
        return 4;
    case MapBy::L2Cache:
        return 5;
    case MapBy::L1Cache:
        return 6;
    case MapBy::Core:
        return 7;
    case MapBy::Hwthread:
        return 8;
    default:
        return 1;
    }
}

std::optional<HwLevel> levelOf(MapBy by) {
    switch (by) {
    case MapBy::Package:
        return HwLevel::Package;
    case MapBy::Numa:
        return HwLevel::Numa;
    case MapBy::L3Cache:
        return HwLevel::L3Cache;
    case MapBy::L2Cache:
        return HwLevel::L2Cache;
    case MapBy::L1Cache:
        return HwLevel::L1Cache;
    case MapBy::Core:
        return HwLevel::Core;
    case MapBy::Hwthread:
        return HwLevel::Pu;
    default:
        return std::nullopt;
    }
}

std::optional<HwLevel> levelOf(BindTo to) {
    switch (to) {
    case BindTo::Package:
        return HwLevel::Package;
    case BindTo::Numa:
        return HwLevel::Numa;
    case BindTo::L3Cache:
        return HwLevel::L3Cache;
    case BindTo::L2Cache:
        return HwLevel::L2Cache;
    case BindTo::L1Cache:
        return HwLevel::L1Cache;
    case BindTo::Core:
        return HwLevel::Core;
    case BindTo::Hwthread:
        return HwLevel::Pu;
    default:
        return std::nullopt;
    }
}

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
            node.jobcacheFull = node.available.count() == node.model->puCount();
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
    jobCpusetSet_ = false;
    const NodeState &node = nodes_[index];
    if (options.cpuset.empty() || node.model == nullptr)
        return;
    jobCpuset_.clear(node.model->puCount());
    jobCpusetSet_ = true;
    const auto resolved = resolveIdList(options.cpuset, *node.model, options.useHwthreads);
    if (!resolved)
        return; // checked when the options were resolved
    for (std::uint32_t pu : resolved->pus)
        jobCpuset_.set(pu);
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

std::uint32_t Engine::ncpus(std::uint32_t index, std::uint32_t obj, const MapOptions &options,
                            std::uint32_t stopAt) {
    const NodeState &node = nodes_[index];
    if (node.model == nullptr)
        return 0;
    scratch_ = node.available;
    if (jobCpusetSet_)
        scratch_.andWith(jobCpuset_);
    std::uint32_t first = 0;
    std::uint32_t count = node.model->puCount();
    if (const auto range = objectRange(index, obj, options)) {
        first = range->first;
        count = range->second;
    }
    return countCpus(*node.model, scratch_, first, count, options.useHwthreads, stopAt);
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
        targetSet_ = jobCpusetSet_;
        if (jobCpusetSet_)
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
        const std::uint32_t cpus = ncpus(index, obj, options, needed);
        // ncpus left scratch_ = available (and job cpuset); narrow to obj.
        target_ = scratch_;
        if (const auto range = objectRange(index, obj, options))
            target_.keepRange(range->first, range->second);
        targetSet_ = true;
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

std::optional<UserError> Engine::bindProc(Proc &proc, MapOptions &options) {
    if (options.map == MapBy::Rankfile)
        return std::nullopt; // the rankfile mapper binds from the file
    const NodeState &node = nodes_[proc.node];
    if (options.bind == BindTo::None) {
        if (!options.cpuset.empty() && node.model != nullptr)
            return bindToCpuset(proc, options);
        return std::nullopt;
    }
    if (node.model == nullptr)
        return std::nullopt; // the planner refuses binding without topology
    if (options.map == MapBy::PeList)
        return bindToCpuset(proc, options);
    if (options.cpusPerRank > 1)
        return bindMultiple(proc, options);
    return bindGeneric(proc, options);
}

std::uint32_t Engine::internBits(const NodeModel &model, const PuBits &bits) {
    const std::vector<std::uint32_t> pus = bits.bits();
    CpuBinding binding{model.logicalOf(pus), model.osOf(pus)};
    std::string key = formatIdList(binding.logical);
    if (binding.os != binding.logical) {
        key += '@';
        key += formatIdList(binding.os);
    }
    const auto [it, inserted] =
        bindingIndex_.emplace(std::move(key), static_cast<std::uint32_t>(bindings_.size()));
    if (inserted)
        bindings_.push_back(std::move(binding));
    return it->second;
}

std::uint32_t Engine::internObject(std::uint32_t index, HwLevel level, std::uint32_t obj,
                                   const MapOptions &options) {
    NodeState &node = nodes_[index];
    const NodeModel &model = *node.model;
    const HwObject &object = model.objects(level)[obj];
    const bool pelist = !options.cpuset.empty() && jobCpusetSet_;
    if (node.jobcacheFull && !pelist) {
        auto &perLevel = objectBinding_[&model];
        if (perLevel.empty())
            perLevel.resize(kHwLevelCount);
        auto &cache = perLevel[static_cast<std::size_t>(level)];
        if (cache.empty())
            cache.assign(model.objects(level).size(), kUnbound);
        if (cache[obj] == kUnbound) {
            scratch_.clear(model.puCount());
            scratch_.setRange(object.firstPu, object.puCount);
            cache[obj] = internBits(model, scratch_);
        }
        return cache[obj];
    }
    scratch_ = node.jobcache;
    scratch_.keepRange(object.firstPu, object.puCount);
    if (pelist)
        scratch_.andWith(jobCpuset_);
    if (!scratch_.any()) {
        scratch_.clear(model.puCount());
        scratch_.setRange(object.firstPu, object.puCount);
    }
    return internBits(model, scratch_);
}

std::optional<UserError> Engine::bindGeneric(Proc &proc, MapOptions &options) {
    NodeState &node = nodes_[proc.node];
    const NodeModel &model = *node.model;
    const HwLevel hwb = *levelOf(options.bind);
    if (!targetSet_)
        return UserError{"internal error: binding without a target set"};
    // baseset = target limited to the object the process was mapped to.
    PuBits &base = base_;
    base = target_;
    if (const auto range = objectRange(proc.node, proc.obj, options))
        base.keepRange(range->first, range->second);
    const auto &objects = model.objects(hwb);
    if (objects.empty()) {
        if (jobBinding.given)
            return UserError{"--bind-to " + bindingName(options.bind) + ": node " +
                             std::string(node.name) + " has no " + std::string(hwLevelName(hwb)) +
                             " among the CPUs the job holds there; bind to a level it has (e.g. "
                             "core) or to none"};
        return std::nullopt;
    }
    const bool countPus = options.useHwthreads || hwb == HwLevel::Pu;
    PuBits &freeBase = freeBase_;
    freeBase = node.available;
    freeBase.andWith(base);
    auto &counters = node.objectProcs;
    const auto limitReached = [&](std::uint32_t n) {
        if (options.limit <= 0)
            return false;
        if (counters.empty())
            counters.resize(kHwLevelCount);
        auto &level = counters[static_cast<std::size_t>(hwb)];
        if (level.empty())
            level.assign(objects.size(), 0);
        return level[n] >= static_cast<std::uint32_t>(options.limit);
    };
    std::uint32_t target = kNoIndex;
    const auto usable = [&](std::uint32_t n) {
        return !limitReached(n) &&
               countCpus(model, freeBase, objects[n].firstPu, objects[n].puCount, countPus, 1) > 0;
    };
    if (model.inPuOrder(hwb)) {
        std::uint32_t pu = freeBase.next(0);
        while (pu != kNoBit) {
            const std::uint32_t n = model.objectOf(hwb, pu);
            if (n == kNoIndex) {
                pu = freeBase.next(pu + 1);
                continue;
            }
            if (usable(n)) {
                target = n;
                break;
            }
            pu = freeBase.next(objects[n].firstPu + objects[n].puCount);
        }
    } else {
        for (std::uint32_t n = 0; n < objects.size() && target == kNoIndex; ++n) {
            if (usable(n))
                target = n;
        }
    }
    if (target == kNoIndex) {
        if (options.overload) {
            // Overloaded: the object carrying the fewest processes, nothing
            // consumed.
            if (counters.empty())
                counters.resize(kHwLevelCount);
            auto &level = counters[static_cast<std::size_t>(hwb)];
            if (level.empty())
                level.assign(objects.size(), 0);
            std::uint32_t least = 0;
            for (std::uint32_t n = 1; n < objects.size(); ++n) {
                if (level[n] < level[least])
                    least = n;
            }
            ++level[least];
            proc.binding = internObject(proc.node, hwb, least, options);
            return std::nullopt;
        }
        if (!jobBinding.ifSupported)
            return UserError{"node " + std::string(node.name) +
                             ": no free CPU is left to bind another process to (--bind-to " +
                             bindingName(options.bind) +
                             ").\nRequest fewer processes, add :overload-allowed to --bind-to to "
                             "bind several processes per CPU, or add :if-supported to run them "
                             "unbound."};
        return std::nullopt;
    }
    if (options.limit > 0)
        ++counters[static_cast<std::size_t>(hwb)][target];
    proc.binding = internObject(proc.node, hwb, target, options);

    // Take one CPU (core, or PU with hwthreads) of the target out of the
    // available set: processes bound to a wide object are counted one CPU
    // each, so the node reads as overloaded once they outnumber its CPUs.
    const HwObject &object = objects[target];
    auto cpu =
        firstCpuInside(model, freeBase, object.firstPu, object.puCount, options.useHwthreads);
    if (!cpu) {
        // Bound to a PU finer than a core: take the core covering it.
        const std::uint32_t pu = freeBase.next(object.firstPu);
        if (pu != kNoBit && pu < object.firstPu + object.puCount) {
            const HwObject &core = model.objects(HwLevel::Core)[model.objectOf(HwLevel::Core, pu)];
            cpu = std::pair{core.firstPu, core.puCount};
        }
    }
    if (!cpu)
        return std::nullopt;
    node.available.resetRange(cpu->first, cpu->second);
    if (!node.available.any() && options.overload)
        node.available = node.jobcache;
    return std::nullopt;
}

std::optional<UserError> Engine::bindMultiple(Proc &proc, MapOptions &options) {
    NodeState &node = nodes_[proc.node];
    const NodeModel &model = *node.model;
    if (!targetSet_)
        return UserError{"internal error: binding without a target set"};
    PuBits base = target_;
    if (const auto range = objectRange(proc.node, proc.obj, options))
        base.keepRange(range->first, range->second);
    const auto needed = static_cast<std::uint32_t>(options.cpusPerRank);
    PuBits avail;
    bool found = false;
    if (!objectRange(proc.node, proc.obj, options)) {
        // Keep the CPUs of one process inside one package.
        for (const HwObject &package : model.objects(HwLevel::Package)) {
            avail = base;
            avail.keepRange(package.firstPu, package.puCount);
            avail.andWith(node.available);
            if (countCpus(model, avail, 0, model.puCount(), options.useHwthreads) >= needed) {
                found = true;
                break;
            }
        }
        if (!found)
            return UserError{"node " + std::string(node.name) + ": no package has " +
                             std::to_string(needed) + " free " +
                             (options.useHwthreads ? "hwthreads" : "cores") +
                             " left for a process with PE=" + std::to_string(needed) +
                             " (a process's CPUs stay within one package).\nRequest fewer "
                             "processes or fewer CPUs per process."};
    } else {
        avail = base;
        avail.andWith(node.available);
    }
    PuBits result(model.puCount());
    std::uint32_t taken = 0;
    std::uint32_t from = 0;
    while (taken < needed) {
        const auto cpu =
            firstCpuInside(model, avail, from, model.puCount() - from, options.useHwthreads);
        if (!cpu)
            break;
        result.setRange(cpu->first, cpu->second);
        node.available.resetRange(cpu->first, cpu->second);
        target_.resetRange(cpu->first, cpu->second);
        from = cpu->first + cpu->second;
        ++taken;
    }
    if (!result.any())
        return UserError{"node " + std::string(node.name) + ": not enough free " +
                         (options.useHwthreads ? "hwthreads" : "cores") +
                         " for a process with PE=" + std::to_string(needed) +
                         ".\nRequest fewer processes or fewer CPUs per process."};
    proc.binding = internBits(model, result);
    return std::nullopt;
}

std::optional<UserError> Engine::bindToCpuset(Proc &proc, MapOptions &options) {
    NodeState &node = nodes_[proc.node];
    const NodeModel &model = *node.model;
    if (options.cpuset.empty())
        return UserError{"--map-by pe-list=" + escaped(options.peListGiven) + ": node " +
                         std::string(node.name) +
                         " was given more processes than the list has CPUs; list more CPUs or "
                         "request fewer processes"};
    auto ids = expandIds(options.cpuset);
    if (!ids || ids->empty())
        return UserError{"--map-by pe-list=" + escaped(options.peListGiven) + ": invalid list"};
    const std::uint32_t first = ids->front();
    PuBits set(model.puCount());
    if (options.ordered) {
        auto one = resolveId(first, model, options.useHwthreads);
        if (!one)
            return UserError{"--map-by pe-list=" + escaped(options.peListGiven) + ": " +
                             one.error().message};
        for (std::uint32_t pu : one->pus)
            set.set(pu);
    } else if (targetSet_) {
        set = target_;
    }
    if (!set.any())
        return UserError{"--map-by pe-list=" + escaped(options.peListGiven) +
                         ": the job holds none of "
                         "these CPUs on node " +
                         std::string(node.name) + "; list CPUs the job holds there"};
    bool onePackage = false;
    for (const HwObject &package : model.objects(HwLevel::Package)) {
        PuBits inside = set;
        inside.keepRange(package.firstPu, package.puCount);
        if (inside == set) {
            onePackage = true;
            break;
        }
    }
    if (!onePackage && !model.objects(HwLevel::Package).empty())
        return UserError{"--map-by pe-list=" + escaped(options.peListGiven) +
                         ": the CPUs span more than "
                         "one package on node " +
                         std::string(node.name) +
                         ", and a process is bound within one package; list CPUs of one "
                         "package (or use :ORDERED to bind each process to one CPU)"};
    proc.binding = internBits(model, set);
    // One CPU of the list is used up per process placed.
    std::vector<std::uint32_t> rest(ids->begin() + 1, ids->end());
    options.cpuset.clear();
    for (std::uint32_t id : rest) {
        if (!options.cpuset.empty())
            options.cpuset += ',';
        options.cpuset += std::to_string(id);
    }
    if (auto used = resolveId(first, model, options.useHwthreads)) {
        for (std::uint32_t pu : used->pus)
            node.available.reset(pu);
    }
    return std::nullopt;
}

std::optional<UserError> Engine::rankApp(std::uint32_t app, std::uint32_t np,
                                         const MapOptions &options, std::size_t firstProc) {
    if (options.userRanked)
        return std::nullopt;
    // The application's processes, grouped by node in job-map order, each
    // node's in placement order.
    std::vector<std::uint32_t> mine;
    std::vector<std::uint32_t> start(mapOrder_.size() + 1, 0);
    const auto first = static_cast<std::uint32_t>(firstProc);
    for (std::uint32_t p = first; p < procs_.size(); ++p) {
        if (procs_[p].app == app)
            ++start[nodes_[procs_[p].node].mapOrder + 1];
    }
    for (std::size_t i = 1; i < start.size(); ++i)
        start[i] += start[i - 1];
    mine.resize(start.back());
    {
        std::vector<std::uint32_t> fill(start.begin(), start.end() - 1);
        for (std::uint32_t p = first; p < procs_.size(); ++p) {
            if (procs_[p].app == app)
                mine[fill[nodes_[procs_[p].node].mapOrder]++] = p;
        }
    }
    std::uint32_t rank = options.startRank;
    const std::uint32_t end = options.startRank + np;
    const auto give = [&](std::uint32_t p) { procs_[p].rank = rank++; };

    if (options.ranksInPlacementOrder) {
        // stepmap: map-by slot ranked by slot and map-by node ranked by node
        // number the processes in the order they were placed (seed 002).
        for (std::uint32_t p = first; p < procs_.size(); ++p) {
            if (procs_[p].app == app)
                give(p);
        }
    } else if (options.rank == RankBy::Slot) {
        for (std::uint32_t p : mine)
            give(p);
    } else if (options.rank == RankBy::Node) {
        std::vector<std::uint32_t> cursor(start.begin(), start.end() - 1);
        std::vector<std::uint32_t> active;
        for (std::uint32_t n = 0; n + 1 < start.size(); ++n) {
            if (start[n] < start[n + 1])
                active.push_back(n);
        }
        std::vector<std::uint32_t> next;
        while (!active.empty() && rank < end) {
            next.clear();
            for (std::uint32_t n : active) {
                give(mine[cursor[n]++]);
                if (cursor[n] < start[n + 1])
                    next.push_back(n);
            }
            active.swap(next);
        }
    } else {
        // fill / span: by the object each process was mapped to.
        if (!options.mapLevel)
            return UserError{"--rank-by " + std::string(rankByWord(options.rank)) +
                             " needs processes mapped to objects; map by an object (e.g. "
                             "--map-by core)"};
        const HwLevel level = *options.mapLevel;
        struct Queue {
            std::uint32_t begin;
            std::uint32_t end;
        };
        std::vector<std::uint32_t> byObject;
        std::vector<Queue> queues; // per (node, object) in node, object order
        for (std::uint32_t n = 0; n + 1 < start.size(); ++n) {
            const NodeModel &model = *nodes_[mapOrder_[n]].model;
            const std::size_t objects = model.objects(level).size();
            std::vector<std::uint32_t> count(objects + 1, 0);
            for (std::uint32_t k = start[n]; k < start[n + 1]; ++k) {
                const std::uint32_t obj = procs_[mine[k]].obj;
                if (obj == kNoIndex || obj >= objects)
                    return UserError{"--rank-by " + std::string(rankByWord(options.rank)) +
                                     " needs every process mapped to a " +
                                     std::string(hwLevelName(level)) +
                                     "; map by that object (e.g. --map-by " +
                                     std::string(hwLevelName(level)) + ")"};
                ++count[obj + 1];
            }
            for (std::size_t o = 1; o < count.size(); ++o)
                count[o] += count[o - 1];
            const auto base = static_cast<std::uint32_t>(byObject.size());
            byObject.resize(byObject.size() + (start[n + 1] - start[n]));
            std::vector<std::uint32_t> fill(count.begin(), count.end() - 1);
            for (std::uint32_t k = start[n]; k < start[n + 1]; ++k)
                byObject[base + fill[procs_[mine[k]].obj]++] = mine[k];
            for (std::size_t o = 0; o < objects; ++o) {
                if (count[o] < count[o + 1])
                    queues.push_back(Queue{base + count[o], base + count[o + 1]});
            }
        }
        if (options.rank == RankBy::Fill) {
            for (std::uint32_t p : byObject)
                give(p);
        } else {
            std::vector<Queue> next;
            while (!queues.empty() && rank < end) {
                next.clear();
                for (Queue &queue : queues) {
                    give(byObject[queue.begin++]);
                    if (queue.begin < queue.end)
                        next.push_back(queue);
                }
                queues.swap(next);
            }
        }
    }
    if (rank != end)
        return UserError{"internal error: ranked " + std::to_string(rank - options.startRank) +
                         " of " + std::to_string(np) + " processes"};
    return std::nullopt;
}

EngineResult Engine::take() {
    EngineResult result;
    result.procs = std::move(procs_);
    result.bindings = std::move(bindings_);
    result.deviceSets = std::move(deviceSets_);
    result.procDevices = std::move(procDevices_);
    result.mapOrder = std::move(mapOrder_);
    result.oversubscribed = oversubscribed_;
    return result;
}

} // namespace stepmap::detail
