// The binder: a process bound to an object of the binding level (or to
// CPUs: PE=n, pe-list), one CPU taken from the node's free set each.

#include "placement/placement.hpp"

#include <algorithm>

#include "base/quote.hpp"
#include "placement/cpu_count.hpp"
#include "placement/cpu_list.hpp"
#include "placement/placement_messages.hpp"
#include "placement/policy_words.hpp"

namespace stepmap::detail {

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
    PuBits whole(model.puCount());
    whole.setRange(object.firstPu, object.puCount);
    const bool pelist = !options.cpuset.empty() && jobCpuset_;
    if (!pelist) {
        // The object's whole set, as mpirun binds (also where earlier
        // applications took some of its CPUs): the same for every node of
        // this model.
        auto &perLevel = objectBinding_[&model];
        if (perLevel.empty())
            perLevel.resize(kHwLevelCount);
        auto &cache = perLevel[static_cast<std::size_t>(level)];
        if (cache.empty())
            cache.assign(model.objects(level).size(), kUnbound);
        if (cache[obj] == kUnbound)
            cache[obj] = internBits(model, whole);
        return cache[obj];
    }
    PuBits held = *jobCpuset_;
    held.keepRange(object.firstPu, object.puCount);
    return internBits(model, held.any() ? held : whole);
}

namespace {

// A node's processes per object of `level` (binding LIMIT, overload).
std::vector<std::uint32_t> &levelCounters(NodeState &node, HwLevel level, std::size_t objects) {
    if (node.objectProcs.empty())
        node.objectProcs.resize(kHwLevelCount);
    auto &counters = node.objectProcs[static_cast<std::size_t>(level)];
    if (counters.empty())
        counters.assign(objects, 0);
    return counters;
}

// The first object of `level` (in PU order) with a free CPU in `free` and
// below the LIMIT, or kNoIndex.
std::uint32_t firstUsableObject(NodeState &node, HwLevel level, const PuBits &free, int limit,
                                bool countPus) {
    const NodeModel &model = *node.model;
    const auto &objects = model.objects(level);
    const auto usable = [&](std::uint32_t n) {
        if (limit > 0 &&
            levelCounters(node, level, objects.size())[n] >= static_cast<std::uint32_t>(limit))
            return false;
        return countCpus(model, free, objects[n].firstPu, objects[n].puCount, countPus, 1) > 0;
    };
    if (!model.inPuOrder(level)) {
        for (std::uint32_t n = 0; n < objects.size(); ++n) {
            if (usable(n))
                return n;
        }
        return kNoIndex;
    }
    std::uint32_t pu = free.next(0);
    while (pu != kNoBit) {
        const std::uint32_t n = model.objectOf(level, pu);
        if (n == kNoIndex) {
            pu = free.next(pu + 1);
            continue;
        }
        if (usable(n))
            return n;
        pu = free.next(objects[n].firstPu + objects[n].puCount);
    }
    return kNoIndex;
}

// Takes one CPU (core, or PU with hwthreads) of `object` out of the node's
// available set: processes bound to a wide object are counted one CPU
// each, so the node reads as overloaded once they outnumber its CPUs.
void takeOneCpu(NodeState &node, const PuBits &free, const HwObject &object,
                const MapOptions &options) {
    const NodeModel &model = *node.model;
    auto cpu = firstCpuInside(model, free, object.firstPu, object.puCount, options.useHwthreads);
    if (!cpu) {
        // Bound to a PU finer than a core: take the core covering it.
        const std::uint32_t pu = free.next(object.firstPu);
        if (pu != kNoBit && pu < object.firstPu + object.puCount) {
            const HwObject &core = model.objects(HwLevel::Core)[model.objectOf(HwLevel::Core, pu)];
            cpu = std::pair{core.firstPu, core.puCount};
        }
    }
    if (!cpu)
        return;
    node.available.resetRange(cpu->first, cpu->second);
    if (!node.available.any() && options.overload)
        node.available = node.jobcache;
}

} // namespace

std::optional<UserError> Engine::bindGeneric(Proc &proc, MapOptions &options) {
    NodeState &node = nodes_[proc.node];
    const NodeModel &model = *node.model;
    const HwLevel hwb = *levelOf(options.bind);
    if (!target_)
        return UserError{"internal error: binding without a target set"};
    const auto &objects = model.objects(hwb);
    if (objects.empty()) {
        if (jobBinding.given)
            return UserError{"--bind-to " + lowerWord(bindToWord(options.bind)) + ": node " +
                             std::string(node.name) + " has no " + std::string(hwLevelName(hwb)) +
                             " among the CPUs the job holds there; bind to a level it has (e.g. "
                             "core) or to none"};
        return std::nullopt;
    }
    // The free CPUs of the target, limited to the object the process was
    // mapped to (PRRTE's baseset).
    PuBits free = *target_;
    if (const auto range = objectRange(proc.node, proc.obj, options))
        free.keepRange(range->first, range->second);
    free.andWith(node.available);
    const bool countPus = options.useHwthreads || hwb == HwLevel::Pu;
    const std::uint32_t target = firstUsableObject(node, hwb, free, options.limit, countPus);
    if (target == kNoIndex) {
        if (options.overload) {
            // Overloaded: the object carrying the fewest processes, nothing
            // consumed.
            auto &counters = levelCounters(node, hwb, objects.size());
            const auto least = static_cast<std::uint32_t>(
                std::min_element(counters.begin(), counters.end()) - counters.begin());
            ++counters[least];
            proc.binding = internObject(proc.node, hwb, least, options);
            return std::nullopt;
        }
        if (!jobBinding.ifSupported)
            return noFreeCpu(node.name, options.bind);
        return std::nullopt;
    }
    if (options.limit > 0)
        ++levelCounters(node, hwb, objects.size())[target];
    proc.binding = internObject(proc.node, hwb, target, options);
    takeOneCpu(node, free, objects[target], options);
    return std::nullopt;
}

std::optional<UserError> Engine::bindMultiple(Proc &proc, MapOptions &options) {
    NodeState &node = nodes_[proc.node];
    const NodeModel &model = *node.model;
    if (!target_)
        return UserError{"internal error: binding without a target set"};
    PuBits base = *target_;
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
        target_->resetRange(cpu->first, cpu->second);
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
    } else if (target_) {
        set = *target_;
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

} // namespace stepmap::detail
