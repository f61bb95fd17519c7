#include "planner/planner_stages.hpp"

#include <algorithm>
#include <string>

#include "base/input_limits.hpp"
#include "placement/cpu_list.hpp"
#include "placement/slot_errors.hpp"
#include "planner/policy_rules.hpp"

namespace stepmap::detail {

namespace {

// PRRTE's default mapping (prte_rmaps_base_map_job): by slot without node
// models, with --overbook or PE=n; by the --bind-to object when only that
// is given; else by core.
MapBy defaultJobMap(const PlanRequest &request, bool modeled, bool useHwthreads) {
    if (!modeled || request.overbook || request.map.pe.value_or(1) > 1)
        return MapBy::Slot;
    const std::optional<BindPolicy> &bind = request.bind;
    if (bindsSomething(bind) || (bind && bind->to == BindTo::None)) {
        const auto level = levelOf(bind->to);
        return level ? mapByOf(*level) : MapBy::Slot;
    }
    // PRRTE settles the default before it counts the processes, so its
    // "np <= 2: core, else package" reads np as 0: core, always (the
    // goldens show it). HWTCPUS makes the CPUs hwthreads.
    return useHwthreads ? MapBy::Hwthread : MapBy::Core;
}

UserError aboveCpus(const NodeSlots &entry) {
    return UserError{"host " + std::string(entry.name) + ": " + std::to_string(entry.requested) +
                     " slots requested, but Slurm allocated only " + std::to_string(entry.cpus) +
                     " CPUs there.\nTo oversubscribe it, add --map-by :OVERSUBSCRIBE (or "
                     "--overbook); otherwise request at most " +
                     std::to_string(entry.cpus) + " slots on " + std::string(entry.name) + "."};
}

// The processes an application without -n starts: the slots the filters
// asked for (a --host count above Slurm's CPUs included, as mpirun counts
// it), or with PE=n the CPUs the nodes hold divided by n (at least 1, at
// most the slots). Counts above Slurm's CPUs need OVERSUBSCRIBE.
Expected<std::uint32_t> slotsCount(const Allocation &allocation, const NodeSelection &nodes, int pe,
                                   const MapOptions &job) {
    std::int64_t slots = 0;
    for (const NodeSlots &entry : nodes.list) {
        if (entry.requested > entry.slots && !job.oversubscribe && pe <= 1)
            return aboveCpus(entry);
        slots += entry.requested;
    }
    if (slots > kMaxRanks)
        return UserError{"too many processes: the selected nodes have " + std::to_string(slots) +
                         " slots, stepmap places at most " + std::to_string(kMaxRanks) +
                         "; give -n"};
    if (pe <= 1 || !nodes.modeled)
        return static_cast<std::uint32_t>(slots);
    std::int64_t cpus = 0;
    for (const NodeSlots &entry : nodes.list) {
        const NodeModel &model = *allocation.nodes[entry.allocIndex].model;
        const std::size_t n =
            job.useHwthreads ? model.puCount() : model.objects(HwLevel::Core).size();
        cpus += static_cast<std::int64_t>(n) / pe;
    }
    return static_cast<std::uint32_t>(std::clamp<std::int64_t>(cpus, 1, totalSlots(nodes.list)));
}

Expected<std::uint32_t> countOne(const Allocation &allocation, const AppPlan &app,
                                 const NodeSelection &nodes, const MapOptions &job) {
    if (app.request.np)
        return static_cast<std::uint32_t>(*app.request.np);
    const MapBy by = app.request.map ? app.request.map->by : job.map;
    if (by == MapBy::Seq || by == MapBy::Rankfile || by == MapBy::Ppr)
        return 0u; // the placer counts them
    if (by == MapBy::PeList && !job.cpuset.empty() && !app.request.map) {
        auto ids = expandIds(job.cpuset);
        return ids ? static_cast<std::uint32_t>(ids->size()) : 1u;
    }
    const int pe = app.request.map && app.request.map->pe ? *app.request.map->pe : job.cpusPerRank;
    return slotsCount(allocation, nodes, pe, job);
}

RankingWord jobRanking(const PlanRequest &request, const MapOptions &job) {
    RankingWord word;
    if (job.userRanked) {
        word.byUser = true;
    } else if (request.rank) {
        word.policy = *request.rank;
        word.given = true;
    } else {
        word.policy = defaultRanking(job.map, job.span);
    }
    return word;
}

BindingWord jobBinding(const PlanRequest &request, const MapOptions &job, bool modeled,
                       std::uint32_t totalProcesses) {
    BindingWord word;
    if (request.bind)
        word = bindingWordOf(*request.bind);
    if (word.given)
        return word;
    if (modeled && job.oversubscribe) {
        // Allowed to oversubscribe and not told how to bind: unbound, as
        // mpirun leaves such a job.
        word.policy = BindTo::None;
    } else if (modeled) {
        word.ifSupported = true;
        word.policy = defaultBinding(job, totalProcesses);
    } else {
        word.policy = BindTo::None;
    }
    return word;
}

// The processes a ppr pattern asks for on the selected nodes (N per node
// or per object), as mpirun counts them before it picks a default binding.
std::uint32_t pprProcesses(const Allocation &allocation, const NodeSelection &nodes,
                           const MapOptions &job) {
    std::int64_t objects = 0;
    for (const NodeSlots &entry : nodes.list) {
        const NodeModel *model = allocation.nodes[entry.allocIndex].model.get();
        if (job.mapNode || model == nullptr || !job.mapLevel)
            objects += 1;
        else
            objects += static_cast<std::int64_t>(model->objects(*job.mapLevel).size());
    }
    return static_cast<std::uint32_t>(
        std::min<std::int64_t>(objects * std::max(job.pprn, 0), kMaxRanks));
}

} // namespace

JobMapping resolveJobMapping(const PlanRequest &request, const JobApps &apps, bool modeled) {
    JobMapping out;
    MapOptions &job = out.options;
    job.oversubscribe = apps.allowOversubscribe;
    job.overbook = request.overbook;
    job.useHwthreads = request.map.hwtcpus.value_or(false) || request.map.by == MapBy::Hwthread;
    job.cpusPerRank = request.map.pe.value_or(1);
    out.word.given = request.map.by != MapBy::Default;
    const MapBy by =
        out.word.given ? request.map.by : defaultJobMap(request, modeled, job.useHwthreads);
    applyMapPolicy(job, request.map, by);
    // Mapping by hwthread counts hwthreads as the CPUs, also when the
    // mapping came from --bind-to hwthread (PRRTE then still counts cores
    // and finds no core inside one hwthread of an SMT core).
    if (by == MapBy::Hwthread)
        job.useHwthreads = true;
    out.word.policy = by;
    out.word.span = request.map.span;
    out.word.ordered = request.map.ordered;
    out.word.subscribeGiven = apps.oversubscribe.has_value() || request.overbook;
    out.word.noOversubscribe = !apps.allowOversubscribe;
    return out;
}

Expected<std::vector<std::uint32_t>> countProcesses(const Allocation &allocation,
                                                    const std::vector<AppPlan> &apps,
                                                    const NodeSelection &nodes,
                                                    const MapOptions &job) {
    std::vector<std::uint32_t> out;
    std::int64_t total = 0;
    for (const AppPlan &app : apps) {
        auto np = countOne(allocation, app, nodes, job);
        if (!np)
            return np.error();
        out.push_back(np.value());
        total += np.value();
    }
    if (total > kMaxRanks)
        return UserError{"too many processes: " + std::to_string(total) +
                         " requested, stepmap places at most " + std::to_string(kMaxRanks)};
    // More processes than slots because a filter asked a node for more than
    // Slurm gave it: say so (the placer would only count slots).
    if (total > totalSlots(nodes.list) && !job.oversubscribe) {
        for (const NodeSlots &entry : nodes.list) {
            if (entry.requested > entry.slots)
                return aboveCpus(entry);
        }
    }
    return out;
}

Expected<JobPolicy> resolveJobPolicy(const Allocation &allocation, const PlanRequest &request,
                                     const NodeSelection &nodes, JobMapping mapping,
                                     std::uint32_t totalProcesses) {
    JobPolicy out{std::move(mapping.options), mapping.word};
    MapOptions &job = out.options;
    out.ranking = jobRanking(request, job);
    job.rank = out.ranking.policy.value_or(RankBy::Slot);
    if (job.map != MapBy::Ppr)
        if (auto error = checkRankNeedsObject(job, ""))
            return *error;
    job.ranksInPlacementOrder = ranksInPlacementOrder(job.map, job.rank);

    if (job.map == MapBy::Ppr && totalProcesses == 0)
        totalProcesses = pprProcesses(allocation, nodes, job);
    out.binding = jobBinding(request, job, nodes.modeled, totalProcesses);
    job.bind = out.binding.policy;
    job.overload = out.binding.overloadAllowed;
    job.limit = request.bind ? request.bind->limit.value_or(0) : 0;
    bindHwthreadForCore(job, nodes.coresAreHwthreads);
    out.binding.policy = job.bind;
    if (auto error = checkBindAbove(job, ""))
        return *error;
    if (auto error = checkCpuBinding(job, out.binding, ""))
        return *error;
    if (nodes.modeled)
        if (auto error = checkPeList(job, nodes.list, allocation, ""))
            return *error;
    return out;
}

} // namespace stepmap::detail
