#include "hosts/allocation.hpp"

#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "plan_helpers.hpp"

namespace stepmap {
namespace {

using test::allocation;

struct SlurmCase {
    std::string nodeList;
    std::string cpusPerNode;
    Allocation expected;
};

TEST(AllocationFromSlurm, ReadsNodeListAndCpuCounts) {
    const std::vector<SlurmCase> cases = {
        {"n1", "4", allocation({{"n1", 4}})},
        {"n[1-4]", "2(x3),4", allocation({{"n1", 2}, {"n2", 2}, {"n3", 2}, {"n4", 4}})},
        {"n[1-3]", "8,1,8", allocation({{"n1", 8}, {"n2", 1}, {"n3", 8}})},
        {"c[001-002],gpu1", "64(x2),128", allocation({{"c001", 64}, {"c002", 64}, {"gpu1", 128}})},
        {"ct-[0-1]", "4(x2)", allocation({{"ct-0", 4}, {"ct-1", 4}})},
    };
    for (const SlurmCase &c : cases) {
        const auto result = allocationFromSlurm(c.nodeList, c.cpusPerNode);
        ASSERT_TRUE(result.ok()) << c.nodeList << ": " << result.error().message;
        EXPECT_EQ(result.value(), c.expected) << c.nodeList << " " << c.cpusPerNode;
    }
}

struct ErrorCase {
    std::string nodeList;
    std::string cpusPerNode;
    std::string message;
};

TEST(AllocationFromSlurm, RejectsMismatchesAndMalformedValues) {
    const std::vector<ErrorCase> cases = {
        {"n[1-4]", "2(x3)",
         "Slurm CPU counts per node '2(x3)' describe 3 nodes, but the node list 'n[1-4]' has 4"},
        {"n[1-2]", "2(x3)",
         "Slurm CPU counts per node '2(x3)' describe more nodes than the node list 'n[1-2]' has "
         "(2)"},
        {"n[1-2]", "2,2,2",
         "Slurm CPU counts per node '2,2,2' describe more nodes than the node list 'n[1-2]' has "
         "(2)"},
        {"n[1-2]", "2(x2",
         "invalid Slurm CPU counts per node '2(x2': '2(x2' is not N or N(xR) "
         "with N, R >= 1"},
        {"n[1-2]", "0(x2)",
         "invalid Slurm CPU counts per node '0(x2)': '0(x2)' is not N or "
         "N(xR) with N, R >= 1"},
        {"n[1-2]", "2(x0)",
         "invalid Slurm CPU counts per node '2(x0)': '2(x0)' is not N or "
         "N(xR) with N, R >= 1"},
        {"n[1-2]", "", "invalid Slurm CPU counts per node '': '' is not N or N(xR) with N, R >= 1"},
        {"n[1-2]", "2,,2",
         "invalid Slurm CPU counts per node '2,,2': '' is not N or N(xR) with "
         "N, R >= 1"},
        {"n[1-2]", "-2(x2)",
         "invalid Slurm CPU counts per node '-2(x2)': '-2(x2)' is not N or "
         "N(xR) with N, R >= 1"},
        {"n[1-", "2", "Slurm node list: invalid hostlist 'n[1-': missing ']'"},
        // Numbers too large say the limit.
        {"n[1-2]", "99999999999(x2)",
         "invalid Slurm CPU counts per node '99999999999(x2)': '99999999999(x2)' gives a node "
         "more than 16777216 CPUs, the most processes stepmap places"},
        {"n1", "16777217",
         "invalid Slurm CPU counts per node '16777217': '16777217' gives a node more than "
         "16777216 CPUs, the most processes stepmap places"},
    };
    for (const ErrorCase &c : cases) {
        const auto result = allocationFromSlurm(c.nodeList, c.cpusPerNode);
        ASSERT_FALSE(result.ok()) << c.nodeList << " " << c.cpusPerNode;
        EXPECT_EQ(result.error().message, c.message);
    }
}

TEST(SlotsForCpusPerTask, EachRankTakesItsCpusOfANode) {
    // srun -c 2 in a job of 4, 3 and 1 CPUs: 2, 1 and no rank.
    auto alloc = allocationFromSlurm("n[1-3]", "4,3,1");
    ASSERT_TRUE(alloc.ok());
    auto divided = slotsForCpusPerTask(alloc.value(), 2, "-c 2");
    ASSERT_TRUE(divided.ok()) << divided.error().message;
    ASSERT_EQ(divided->nodes.size(), 2u);
    EXPECT_EQ(divided->nodes[0].name, "n1");
    EXPECT_EQ(divided->nodes[0].slots, 2);
    EXPECT_EQ(divided->nodes[1].name, "n2");
    EXPECT_EQ(divided->nodes[1].slots, 1);
    // One CPU per task changes nothing.
    EXPECT_EQ(slotsForCpusPerTask(alloc.value(), 1, "-c 1").value(), alloc.value());
}

TEST(SlotsForCpusPerTask, NoNodeBigEnoughNamesTheSetting) {
    auto alloc = allocationFromSlurm("n[1-2]", "2(x2)");
    ASSERT_TRUE(alloc.ok());
    auto divided = slotsForCpusPerTask(alloc.value(), 4, "SLURM_CPUS_PER_TASK=4");
    ASSERT_FALSE(divided.ok());
    EXPECT_EQ(divided.error().message,
              "SLURM_CPUS_PER_TASK=4: no node of the job has 4 CPUs for one rank; ask for fewer "
              "CPUs per task or a job with more CPUs per node");
}

} // namespace
} // namespace stepmap
