// PMIX_ANL_MAP as Slurm's mpi/pmix writes it, for the layouts srun and
// stepmap make: what a PMI-2 shim reads to find each node's ranks.

#include "plan/process_mapping.hpp"

#include <gtest/gtest.h>

using namespace stepmap;

namespace {

LaunchPlan planOf(const std::vector<std::uint32_t> &nodeOfRank) {
    LaunchPlan plan;
    std::uint32_t nodes = 0;
    for (auto n : nodeOfRank)
        nodes = std::max(nodes, n + 1);
    plan.nodes.resize(nodes);
    for (auto n : nodeOfRank)
        plan.ranks.push_back(RankPlacement{n, 0, 0, 0, kUnbound});
    return plan;
}

} // namespace

TEST(ProcessMapping, TheLayoutsOfATable) {
    struct Row {
        const char *layout;
        std::vector<std::uint32_t> nodeOfRank;
        const char *expected;
    };
    const Row rows[] = {
        {"one rank", {0}, "(vector,(0,1,1))"},
        {"block, 2 nodes x 2", {0, 0, 1, 1}, "(vector,(0,2,2))"},
        {"cyclic over 4 nodes, 8 ranks", {0, 1, 2, 3, 0, 1, 2, 3}, "(vector,(0,4,1),(0,4,1))"},
        {"uneven block", {0, 0, 0, 1, 1}, "(vector,(0,1,3),(1,1,2))"},
        {"cyclic, uneven end", {0, 1, 0}, "(vector,(0,2,1),(0,1,1))"},
        {"nodes out of order", {1, 0}, "(vector,(1,1,1),(0,1,1))"},
        {"block 2 then one node", {0, 0, 1, 1, 2}, "(vector,(0,2,2),(2,1,1))"},
    };
    for (const Row &row : rows)
        EXPECT_EQ(processMapping(planOf(row.nodeOfRank)), row.expected) << row.layout;
}

TEST(ProcessMapping, ExpandsBackToEveryRanksNode) {
    // Reading the triples in order gives each rank's node back.
    const std::vector<std::uint32_t> layout = {0, 1, 1, 2, 2, 0, 1, 1, 2, 2, 3};
    const std::string text = processMapping(planOf(layout));
    std::vector<std::uint32_t> back;
    unsigned first, count, depth;
    const char *p = text.c_str() + std::string("(vector").size();
    int used = 0;
    while (std::sscanf(p, ",(%u,%u,%u)%n", &first, &count, &depth, &used) == 3) {
        for (unsigned n = first; n < first + count; ++n)
            for (unsigned d = 0; d < depth; ++d)
                back.push_back(n);
        p += used;
    }
    EXPECT_STREQ(p, ")");
    EXPECT_EQ(back, layout) << text;
}
