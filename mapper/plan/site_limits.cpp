#include "plan/site_limits.hpp"

#include <vector>

namespace stepmap {

namespace {

std::string where(const SiteLimits &limits, const char *key, const std::string &value) {
    return "(" + std::string(key) + ": " + value +
           (limits.source.empty() ? "" : " in " + limits.source) + ")";
}

} // namespace

Expected<void> checkSiteLimits(const LaunchPlan &plan, const SiteLimits &limits) {
    const std::size_t ranks = plan.ranks.size();
    if (limits.maxRanks > 0 && ranks > static_cast<std::size_t>(limits.maxRanks))
        return UserError{
            "the plan has " + std::to_string(ranks) + " ranks; this cluster allows at most " +
            std::to_string(limits.maxRanks) + " in a step " +
            where(limits, "limits.ranks", std::to_string(limits.maxRanks)) + "; run fewer ranks"};
    std::vector<std::size_t> onNode(plan.nodes.size(), 0);
    for (const RankPlacement &r : plan.ranks)
        if (r.node < onNode.size())
            ++onNode[r.node];
    for (std::size_t n = 0; n < plan.nodes.size(); ++n) {
        const PlannedNode &node = plan.nodes[n];
        if (limits.maxRanksPerNode > 0 &&
            onNode[n] > static_cast<std::size_t>(limits.maxRanksPerNode))
            return UserError{
                "the plan puts " + std::to_string(onNode[n]) + " ranks on " + node.name +
                "; this cluster allows at most " + std::to_string(limits.maxRanksPerNode) +
                " on a node " +
                where(limits, "limits.ranks_per_node", std::to_string(limits.maxRanksPerNode)) +
                "; spread the ranks over more nodes or run fewer"};
        if (!limits.allowOversubscribe && onNode[n] > static_cast<std::size_t>(node.slots))
            return UserError{"the plan puts " + std::to_string(onNode[n]) + " ranks on " +
                             node.name + ", which has " + std::to_string(node.slots) +
                             " slots, and this cluster does not allow oversubscribing " +
                             where(limits, "allow.oversubscribe", "false") + "; run at most " +
                             std::to_string(node.slots) + " ranks there, or use more nodes"};
    }
    if (!limits.allowOversubscribe && plan.oversubscribed)
        return UserError{"the plan runs more ranks on a node than it has CPUs, and this cluster "
                         "does not allow oversubscribing " +
                         where(limits, "allow.oversubscribe", "false") +
                         "; run fewer ranks or use more nodes"};
    return {};
}

} // namespace stepmap
