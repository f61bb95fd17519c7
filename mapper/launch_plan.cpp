#include "launch_plan.hpp"

namespace stepmap {

std::vector<std::uint32_t> LaunchPlan::ranksOn(std::uint32_t node) const {
    std::vector<std::uint32_t> result;
    for (std::size_t rank = 0; rank < ranks.size(); ++rank) {
        if (ranks[rank].node == node)
            result.push_back(static_cast<std::uint32_t>(rank));
    }
    return result;
}

void assignLocalRanks(LaunchPlan &plan) {
    std::vector<std::uint32_t> next(plan.nodes.size(), 0);
    for (RankPlacement &rank : plan.ranks) {
        rank.localRank = next[rank.node]++;
        rank.nodeRank = rank.localRank;
    }
}

} // namespace stepmap
