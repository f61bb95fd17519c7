#include "plan/process_mapping.hpp"

#include "plan/rank_blocks.hpp"

namespace stepmap {

std::string processMapping(const LaunchPlan &plan) {
    std::vector<std::uint32_t> nodeOfRank;
    nodeOfRank.reserve(plan.ranks.size());
    for (const auto &rank : plan.ranks)
        nodeOfRank.push_back(rank.node);
    // The rank blocks are the same greedy passes (a run of ranks on one
    // node, extended over the next nodes with runs of its length); PMI-2
    // writes a repeated pass out each time.
    std::string text = "(vector";
    for (const detail::RankBlock &block : detail::blocksFromNodes(nodeOfRank)) {
        const std::string pass = ",(" + std::to_string(block.first) + "," +
                                 std::to_string(block.last - block.first + 1) + "," +
                                 std::to_string(block.perNode) + ")";
        for (std::uint32_t i = 0; i < block.repeat; ++i)
            text += pass;
    }
    return text + ")";
}

} // namespace stepmap
