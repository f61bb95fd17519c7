// The rules srun's own options put on a plan (planner/srun_step_rules.hpp):
// tables of inputs and the value or message each gives.

#include "planner/srun_step_rules.hpp"

#include "hosts/host_list.hpp"
#include "plan_helpers.hpp"

#include <gtest/gtest.h>

#include <optional>
#include <string>
#include <vector>

namespace stepmap {
namespace {

using test::allocation;
using Names = std::vector<std::string>;

std::optional<HostSpec> hosts(const std::string &value) {
    return parseHostOption(value).value();
}

Names entryNames(const std::optional<HostSpec> &spec) {
    Names names;
    if (spec)
        for (const HostEntry &e : spec->entries)
            names.push_back(e.name);
    return names;
}

TEST(KeepExclusionsOfGrantedNodes, Table) {
    struct Case {
        std::string host; // --host as given
        Names granted;    // the job Slurm granted
        bool kept;        // the filter is left
        Names names;      // its entries then
    };
    const Case cases[] = {
        {"!^n1,n5", {"n1", "n2"}, true, {"n1"}},
        {"!^n5,n6", {"n1", "n2"}, false, {}},
        {"!^n1,n2", {"n1", "n2", "n3"}, true, {"n1", "n2"}},
        // Not an exclusion: a filter the plan applies, untouched.
        {"n1,n5", {"n1", "n2"}, true, {"n1", "n5"}},
    };
    for (const Case &c : cases) {
        SCOPED_TRACE(c.host);
        PlanRequest request;
        request.host = hosts(c.host);
        Allocation granted;
        for (const std::string &name : c.granted)
            granted.nodes.push_back(AllocatedNode{name, 2});
        const PlanRequest kept = keepExclusionsOfGrantedNodes(request, granted);
        EXPECT_EQ(kept.host.has_value(), c.kept);
        EXPECT_EQ(entryNames(kept.host), c.names);
        EXPECT_FALSE(kept.hostfile.has_value());
    }
}

TEST(KeepExclusionsOfGrantedNodes, AppliesToTheHostfileToo) {
    PlanRequest request;
    request.hostfile = hosts("!^n3,n9");
    const PlanRequest kept =
        keepExclusionsOfGrantedNodes(request, allocation({{"n3", 4}, {"n4", 4}}));
    EXPECT_EQ(entryNames(kept.hostfile), (Names{"n3"}));
}

TEST(DivideSlotsByCpusPerTask, Table) {
    struct Case {
        std::string what;
        std::optional<CpusPerTask> cpus;
        std::optional<int> tpp; // --tpp
        std::optional<int> pe;  // PE=n
        std::vector<int> slots; // of n1 (8 CPUs), n2 (3 CPUs); empty: error
        std::string error;
    };
    const Case cases[] = {
        {"no -c", std::nullopt, std::nullopt, std::nullopt, {8, 3}, ""},
        {"-c 2", CpusPerTask{"2", "-c 2"}, std::nullopt, std::nullopt, {4, 1}, ""},
        {"-c 4 drops n2", CpusPerTask{"4", "-c 4"}, std::nullopt, std::nullopt, {2}, ""},
        {"the variable",
         CpusPerTask{"2", "SLURM_CPUS_PER_TASK=2"},
         std::nullopt,
         std::nullopt,
         {4, 1},
         ""},
        {"--tpp counts its own", CpusPerTask{"4", "-c 4"}, 2, std::nullopt, {8, 3}, ""},
        {"PE=n counts its own", CpusPerTask{"4", "-c 4"}, std::nullopt, 2, {8, 3}, ""},
        {"no node is big enough",
         CpusPerTask{"9", "--cpus-per-task 9"},
         std::nullopt,
         std::nullopt,
         {},
         "--cpus-per-task 9: no node of the job has 9 CPUs for one rank; ask for fewer CPUs per "
         "task or a job with more CPUs per node"},
        {"not a number",
         CpusPerTask{"x", "SLURM_CPUS_PER_TASK=x"},
         std::nullopt,
         std::nullopt,
         {},
         "SLURM_CPUS_PER_TASK=x: process count 'x': expected a positive number, e.g. -n 8"},
    };
    for (const Case &c : cases) {
        SCOPED_TRACE(c.what);
        PlanRequest request;
        request.parastation.threadsPerProcess = c.tpp;
        request.map.pe = c.pe;
        auto divided =
            divideSlotsByCpusPerTask(allocation({{"n1", 8}, {"n2", 3}}), request, c.cpus);
        if (c.slots.empty()) {
            ASSERT_FALSE(divided);
            EXPECT_EQ(divided.error().message, c.error);
            continue;
        }
        ASSERT_TRUE(divided) << divided.error().message;
        std::vector<int> slots;
        for (const AllocatedNode &node : divided->nodes)
            slots.push_back(node.slots);
        EXPECT_EQ(slots, c.slots);
    }
}

TEST(CheckTasksPerNode, Table) {
    // Ranks 0-2 on n1, 3-4 on n2.
    LaunchPlan plan;
    plan.nodes = {PlannedNode{"n1", 3}, PlannedNode{"n2", 2}};
    for (std::uint32_t node : {0u, 0u, 0u, 1u, 1u})
        plan.ranks.push_back(RankPlacement{node});
    LaunchPlan even;
    even.nodes = {PlannedNode{"n1", 2}, PlannedNode{"n2", 2}};
    for (std::uint32_t node : {0u, 0u, 1u, 1u})
        even.ranks.push_back(RankPlacement{node});
    struct Case {
        std::string what;
        const LaunchPlan *plan;
        std::optional<WrittenSetting> perNode;
        std::string error; // empty: agreed
    };
    const Case cases[] = {
        {"not given", &plan, std::nullopt, ""},
        {"agrees", &even, WrittenSetting{"--ntasks-per-node", "2"}, ""},
        {"first node differs", &plan, WrittenSetting{"--ntasks-per-node", "2"},
         "--ntasks-per-node 2 disagrees with the plan, which puts 3 ranks on n1; drop "
         "--ntasks-per-node or change the placement options"},
        {"second node differs", &plan, WrittenSetting{"--tasks-per-node", "3"},
         "--tasks-per-node 3 disagrees with the plan, which puts 2 ranks on n2; drop "
         "--tasks-per-node or change the placement options"},
        {"no value", &even, WrittenSetting{"--ntasks-per-node", ""},
         "--ntasks-per-node  disagrees with the plan, which puts 2 ranks on n1; drop "
         "--ntasks-per-node or change the placement options"},
    };
    for (const Case &c : cases) {
        SCOPED_TRACE(c.what);
        const Expected<void> agreed = checkTasksPerNode(*c.plan, c.perNode);
        EXPECT_EQ(agreed.ok(), c.error.empty());
        if (!agreed) {
            EXPECT_EQ(agreed.error().message, c.error);
        }
    }
}

} // namespace
} // namespace stepmap
