#include "planner/planner.hpp"

#include "placement/parastation_placement.hpp"
#include "plan/job_map.hpp"
#include "planner/planner_stages.hpp"

namespace stepmap {

namespace {

Expected<PlanResult> planParaStation(const Allocation &allocation, const PlanRequest &request) {
    auto plan = makeParaStationPlan(allocation, request);
    if (!plan)
        return plan.error();
    JobMapHeader header = jobMapHeader(request, "N/A");
    describeParaStationMapping(header, request);
    PlanResult out{std::move(plan.value()), PlanReport{}};
    out.report.mappingPolicy = header.mappingPolicy;
    out.report.rankingPolicy = header.rankingPolicy;
    out.report.bindingPolicy = header.bindingPolicy;
    return out;
}

} // namespace

namespace detail {

Expected<ResolvedJob> resolveJob(const Allocation &allocation, const PlanRequest &request) {
    auto apps = resolveApps(request);
    if (!apps)
        return apps.error();
    auto nodes = selectNodes(allocation, request, apps.value());
    if (!nodes)
        return nodes.error();
    JobMapping mapping = resolveJobMapping(request, apps.value(), nodes.value().modeled);
    auto counts = countProcesses(allocation, apps.value().apps, nodes.value(), mapping.options);
    if (!counts)
        return counts.error();
    std::uint32_t total = 0;
    for (std::size_t a = 0; a < counts.value().size(); ++a) {
        apps.value().apps[a].np = counts.value()[a];
        total += counts.value()[a];
    }
    auto policy = resolveJobPolicy(allocation, request, nodes.value(), std::move(mapping), total);
    if (!policy)
        return policy.error();
    return ResolvedJob{std::move(apps.value()), std::move(nodes.value()),
                       std::move(policy.value())};
}

} // namespace detail

// The stages of planner_stages.hpp, in order; each stage's error is the
// plan's.
Expected<PlanResult> planJob(const Allocation &allocation, const PlanRequest &request) {
    if (usesParaStationPlacement(request))
        return planParaStation(allocation, request);
    auto job = detail::resolveJob(allocation, request);
    if (!job)
        return job.error();
    const detail::ResolvedJob &resolved = job.value();
    auto placed =
        detail::placeApps(allocation, request, resolved.nodes, resolved.policy, resolved.apps.apps);
    if (!placed)
        return placed.error();
    PlanResult out;
    out.report = detail::buildReport(request, resolved.apps.apps, resolved.policy, placed.value());
    auto plan = detail::assemblePlan(std::move(placed.value().result), request);
    if (!plan)
        return plan.error();
    out.plan = std::move(plan.value());
    return out;
}

Expected<LaunchPlan> makePlan(const Allocation &allocation, const PlanRequest &request) {
    auto result = planJob(allocation, request);
    if (!result)
        return result.error();
    return std::move(result.value().plan);
}

} // namespace stepmap
