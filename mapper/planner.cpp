#include "planner.hpp"

#include <algorithm>
#include <string>

#include "node_filter.hpp"
#include "parastation_placement.hpp"
#include "rank_mappers.hpp"
#include "slot_errors.hpp"

namespace stepmap {

namespace {

std::optional<UserError> checkPolicy(const PlanRequest &request) {
    if (request.np && *request.np < 1)
        return UserError{"the number of processes must be a positive number, got " +
                         std::to_string(*request.np) + " (use -n N with N >= 1)"};
    if (request.np && *request.np > kMaxRanks)
        return UserError{"too many processes: " + std::to_string(*request.np) +
                         " requested, stepmap places at most " + std::to_string(kMaxRanks)};
    if (request.overbook && request.map.by == MapBy::Node)
        return UserError{"--overbook cannot be combined with --map-by node: --overbook places "
                         "consecutive ranks on each node. Use --map-by node:OVERSUBSCRIBE to "
                         "keep round-robin placement past the slots, or drop --map-by node."};
    if (request.overbook && request.map.oversubscribe == false)
        return UserError{"--overbook oversubscribes when needed, but --map-by says "
                         "NOOVERSUBSCRIBE: drop one of them."};
    return std::nullopt;
}

LaunchPlan assemble(const std::vector<detail::NodeSlots> &nodes,
                    const detail::RankNodes &rankNodes) {
    std::vector<std::uint32_t> counts(nodes.size(), 0);
    for (std::uint32_t node : rankNodes)
        ++counts[node];

    LaunchPlan plan;
    std::vector<std::uint32_t> planIndex(nodes.size(), 0);
    for (std::size_t i = 0; i < nodes.size(); ++i) {
        if (counts[i] == 0)
            continue;
        planIndex[i] = static_cast<std::uint32_t>(plan.nodes.size());
        plan.nodes.push_back(
            PlannedNode{std::string(nodes[i].name), nodes[i].slots, nodes[i].maxSlots});
        const auto room = static_cast<std::uint32_t>(std::min(nodes[i].slots, nodes[i].cpus));
        plan.oversubscribed = plan.oversubscribed || counts[i] > room;
    }
    plan.ranks.reserve(rankNodes.size());
    for (std::uint32_t node : rankNodes)
        plan.ranks.push_back(RankPlacement{planIndex[node], 0, 0});
    assignLocalRanks(plan);
    return plan;
}

} // namespace

Expected<LaunchPlan> makePlan(const Allocation &allocation, const PlanRequest &request) {
    if (usesParaStationPlacement(request))
        return makeParaStationPlan(allocation, request);
    if (auto error = checkPolicy(request))
        return *error;
    const bool oversubscribe = request.overbook || request.map.oversubscribe.value_or(false);

    auto nodes = detail::filterNodes(allocation, request, oversubscribe);
    if (!nodes)
        return nodes.error();

    const std::int64_t slots = detail::totalSlots(nodes.value());
    if (!request.np && slots > kMaxRanks)
        return UserError{"too many processes: the selected nodes have " + std::to_string(slots) +
                         " slots, stepmap places at most " + std::to_string(kMaxRanks) +
                         "; give -n"};
    const int np = request.np ? *request.np : static_cast<int>(slots);

    Expected<detail::RankNodes> rankNodes =
        request.overbook                ? detail::mapOverbook(nodes.value(), np)
        : request.map.by == MapBy::Node ? detail::mapByNode(nodes.value(), np, oversubscribe)
                                        : detail::mapBySlot(nodes.value(), np, oversubscribe);
    if (!rankNodes)
        return rankNodes.error();
    return assemble(nodes.value(), rankNodes.value());
}

} // namespace stepmap
