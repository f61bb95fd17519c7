#include "planner/planner_stages.hpp"

#include <algorithm>

#include "planner/policy_rules.hpp"

namespace stepmap::detail {

namespace {

// How firmly the request asks for its bindings (launch_plan.hpp): CPU-exact
// requests, then object bindings the user named, else mpirun's default.
BindingRequest bindingRequestOf(const PlanRequest &request) {
    BindingRequest out = BindingRequest::Default;
    auto consider = [&out](const MapPolicy *map, const std::optional<BindPolicy> &bind,
                           bool namesCpus) {
        BindingRequest here = BindingRequest::Default;
        if (bindsSomething(bind))
            here = bind->to == BindTo::Core || bind->to == BindTo::Hwthread
                       ? BindingRequest::Cpus
                       : BindingRequest::Objects;
        if (namesCpus || (map && (map->pe.value_or(1) > 1 || map->by == MapBy::PeList)))
            here = BindingRequest::Cpus;
        out = std::max(out, here);
    };
    bool namesCpus = false;
    for (const SequenceEntry &entry : request.sequence)
        namesCpus = namesCpus || !entry.cpus.empty();
    if (request.rankfile)
        for (const RankfileEntry &entry : request.rankfile->entries)
            namesCpus = namesCpus || !entry.slots.empty();
    consider(&request.map, request.bind, namesCpus);
    for (const AppRequest &app : request.apps) {
        bool appCpus = false;
        if (app.rankfile)
            for (const RankfileEntry &entry : app.rankfile->entries)
                appCpus = appCpus || !entry.slots.empty();
        if (app.sequence)
            for (const SequenceEntry &entry : *app.sequence)
                appCpus = appCpus || !entry.cpus.empty();
        consider(app.map ? &*app.map : nullptr, app.bind ? app.bind : request.bind, appCpus);
    }
    return out;
}

} // namespace

Expected<LaunchPlan> assemblePlan(EngineResult result, const PlanRequest &request) {
    const std::vector<NodeState> &states = result.nodes;
    std::vector<std::uint32_t> count(states.size(), 0);
    for (const Proc &proc : result.procs)
        ++count[proc.node];
    LaunchPlan plan;
    std::vector<std::uint32_t> planIndex(states.size(), 0);
    for (std::uint32_t index : result.mapOrder) {
        if (count[index] == 0)
            continue;
        const NodeState &node = states[index];
        planIndex[index] = static_cast<std::uint32_t>(plan.nodes.size());
        std::optional<int> maxSlots;
        if (node.slotsMax != 0)
            maxSlots = node.slotsMax;
        plan.nodes.push_back(PlannedNode{std::string(node.name), node.slots, maxSlots});
        const auto room = static_cast<std::uint32_t>(std::min(node.slots, node.cpus));
        plan.oversubscribed = plan.oversubscribed || count[index] > room;
    }
    plan.ranks.assign(result.procs.size(), RankPlacement{});
    std::vector<bool> seen(result.procs.size(), false);
    for (const Proc &proc : result.procs) {
        if (proc.rank >= plan.ranks.size() || seen[proc.rank])
            return UserError{"internal error: the ranking numbered a process twice or out of "
                             "range"};
        seen[proc.rank] = true;
        plan.ranks[proc.rank] = RankPlacement{planIndex[proc.node], 0, 0, proc.app, proc.binding};
    }
    result.procs = {};
    plan.bindings = std::move(result.bindings);
    plan.bindingRequest = bindingRequestOf(request);
    if (!result.procDevices.empty()) {
        plan.deviceSets = std::move(result.deviceSets);
        plan.rankDevices = std::move(result.procDevices);
    }
    assignLocalRanks(plan);
    return plan;
}

PlanReport buildReport(const PlanRequest &request, const std::vector<AppPlan> &apps,
                       const JobPolicy &job, const PlacedJob &placed) {
    PlanReport report;
    report.mappingPolicy =
        request.overbook ? std::string("BYSLOT:OVERBOOK") : formatMapping(placed.mapping);
    report.rankingPolicy = formatRanking(job.ranking);
    report.bindingPolicy = formatBinding(placed.binding);
    // One line per application when any differs from the job or another.
    const auto differs = [&](const AppWords &shown) {
        const AppWords &first = placed.apps.front();
        return !(shown.mapping == placed.mapping) || !(shown.ranking == job.ranking) ||
               !(shown.binding == placed.binding) || !(shown.mapping == first.mapping) ||
               !(shown.ranking == first.ranking) || !(shown.binding == first.binding);
    };
    if (placed.perApp && std::any_of(placed.apps.begin(), placed.apps.end(), differs)) {
        for (const AppWords &shown : placed.apps)
            report.apps.push_back(AppPolicyReport{shown.mapper, formatMapping(shown.mapping),
                                                  formatRanking(shown.ranking),
                                                  formatBinding(shown.binding)});
    }
    if (request.map.by == MapBy::PeList)
        report.cpuSet = request.map.peList;
    if (request.map.by == MapBy::Ppr)
        report.ppr = request.map.pprText;
    if (request.map.pe)
        report.cpusPerRank = std::to_string(*request.map.pe);
    report.hwthreadCpus = job.options.useHwthreads;
    report.cpuType = job.options.useHwthreads ? "HWT" : "CORE";
    report.display = request.map.display;
    for (const AppPlan &app : apps)
        report.display = report.display || (app.request.map && app.request.map->display);
    report.reportBindings = request.bind && request.bind->report;
    return report;
}

} // namespace stepmap::detail
