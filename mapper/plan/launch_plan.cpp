#include "plan/launch_plan.hpp"

#include <algorithm>

namespace stepmap {

std::vector<std::uint32_t> LaunchPlan::ranksOn(std::uint32_t node) const {
    std::vector<std::uint32_t> result;
    for (std::size_t rank = 0; rank < ranks.size(); ++rank) {
        if (ranks[rank].node == node)
            result.push_back(static_cast<std::uint32_t>(rank));
    }
    return result;
}

const CpuBinding *LaunchPlan::bindingOf(std::uint32_t rank) const {
    const std::uint32_t index = ranks[rank].binding;
    return index == kUnbound ? nullptr : &bindings[index];
}

std::string_view LaunchPlan::devicesOf(std::uint32_t rank) const {
    if (rank >= rankDevices.size() || rankDevices[rank] == kUnbound)
        return {};
    return deviceSets[rankDevices[rank]];
}

std::uint32_t LaunchPlan::appCount() const {
    std::uint32_t count = ranks.empty() ? 0 : 1;
    for (const RankPlacement &rank : ranks)
        count = std::max(count, rank.app + 1);
    return count;
}

void assignLocalRanks(LaunchPlan &plan) {
    std::vector<std::uint32_t> next(plan.nodes.size(), 0);
    for (RankPlacement &rank : plan.ranks) {
        rank.localRank = next[rank.node]++;
        rank.nodeRank = rank.localRank;
    }
}

} // namespace stepmap
