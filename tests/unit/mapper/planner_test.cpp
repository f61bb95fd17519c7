// makePlan beyond the seeds' examples: filter order and caps, the
// oversubscription passes, max_slots, relative nodes, and every user error.

#include "planner/planner.hpp"

#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "plan_helpers.hpp"

namespace stepmap {
namespace {

using namespace test; // the plan_helpers.hpp builders
using Hosts = std::vector<std::string>;

struct PlanCase {
    std::string name;
    Allocation allocation;
    PlanRequest request;
    Hosts hosts;
};

TEST(MakePlan, Places) {
    const Allocation n123 = allocation({{"n1", 2}, {"n2", 2}, {"n3", 2}});
    const std::vector<PlanCase> cases = {
        {"no filter, np = sum of slots",
         allocation({{"n1", 2}, {"n2", 3}}),
         {},
         {"n1", "n1", "n2", "n2", "n2"}},
        {"--host order wins over the allocation's",
         n123,
         {.host = host("n3:2,n1:2")},
         {"n3", "n3", "n1", "n1"}},
        {"--host names one slot each", n123, {.host = host("n3,n1")}, {"n3", "n1"}},
        {"--host order wins over the hostfile's (as mpirun's)",
         n123,
         {.host = host("n1:2,n2:2"), .hostfile = hostfile("n2\nn1\nn3\n")},
         {"n1", "n1", "n2", "n2"}},
        {"!^ keeps the allocation's order", n123, {.host = host("!^n2")}, {"n1", "n1", "n3", "n3"}},
        {"caps combine by min (--host smaller)",
         n123,
         {.host = host("n1:1"), .hostfile = hostfile("n1 slots=2\n")},
         {"n1"}},
        {"caps combine by min (hostfile smaller)",
         allocation({{"n1", 4}}),
         {.host = host("n1:3"), .hostfile = hostfile("n1 slots=1\n")},
         {"n1"}},
        {"hostfile without slots= keeps Slurm's",
         allocation({{"n1", 3}}),
         {.hostfile = hostfile("n1\n")},
         times(3, "n1")},
        {"repeated hostfile line counts 1 each",
         allocation({{"n1", 4}}),
         {.hostfile = hostfile("n1\nn1\n")},
         times(2, "n1")},
        {"max_slots bounds Slurm's slots",
         allocation({{"n1", 4}}),
         {.hostfile = hostfile("n1 max_slots=2\n")},
         times(2, "n1")},
        {"-n below the slots leaves nodes out", n123, {.np = 3}, {"n1", "n1", "n2"}},
        {"relative nodes +n<i>", n123, {.host = host("+n2:2,+n0")}, {"n3", "n3", "n1"}},
        {"relative and named mention of one node add up",
         n123,
         {.host = host("+n0,n1")},
         {"n1", "n1"}},
        {"relative nodes in a hostfile", n123, {.hostfile = hostfile("+n1 slots=1\n")}, {"n2"}},
        {"!^ with a relative node", n123, {.host = host("!^+n0")}, {"n2", "n2", "n3", "n3"}},
        {"map-by node, uneven slots skip full nodes",
         allocation({{"a", 3}, {"b", 1}, {"c", 2}}),
         {.map = mapBy("node")},
         {"a", "b", "c", "a", "c", "a"}},
        {"map-by node, fewer procs than nodes",
         n123,
         {.np = 2, .map = mapBy("node")},
         {"n1", "n2"}},
        {"map-by node:OVERSUBSCRIBE loops on past the slots",
         allocation({{"a", 3}, {"b", 1}, {"c", 2}}),
         {.np = 8, .map = mapBy("node:OVERSUBSCRIBE")},
         {"a", "b", "c", "a", "c", "a", "a", "b"}},
        {"map-by node:OVERSUBSCRIBE skips nodes at max_slots",
         allocation({{"a", 3}, {"b", 1}, {"c", 2}}),
         {.np = 8,
          .hostfile = hostfile("a max_slots=3\nb\nc\n"),
          .map = mapBy("node:OVERSUBSCRIBE")},
         {"a", "b", "c", "a", "c", "a", "b", "c"}},
        // PRRTE's byslot second pass, as in the golden group.*.oversub.map
        // (hosts node0:8,node1:4, 16 procs): 4 extra procs, 2 per node, so
        // node0 runs 10 and node1 6. The golden (map-by core, ranked by slot)
        // numbers them node0 0-9, node1 10-15; stepmap keeps placement order
        // (see planner_seed_test.cpp, seed 002).
        {"map-by slot:OVERSUBSCRIBE spreads the extra procs evenly",
         allocation({{"node0", 8}, {"node1", 4}}),
         {.np = 16, .map = mapBy("slot:OVERSUBSCRIBE")},
         concat({times(10, "node0"), times(6, "node1")})},
        {"uneven extras go to the first nodes",
         n123,
         {.np = 10, .map = mapBy(":OVERSUBSCRIBE")},
         concat({times(4, "n1"), times(3, "n2"), times(3, "n3")})},
        // max_slots binds: a may take 1 more, b takes the rest. (PRRTE 5
        // checks max_slots only before it starts on a node and would give a
        // 3 extra procs, past its max_slots; stepmap keeps the bound.)
        {"max_slots bounds the even spread",
         allocation({{"a", 2}, {"b", 2}}),
         {.np = 10, .hostfile = hostfile("a max_slots=3\nb\n"), .map = mapBy(":OVERSUBSCRIBE")},
         concat({times(3, "a"), times(7, "b")})},
        {"--host above Slurm's CPUs with OVERSUBSCRIBE",
         allocation({{"n1", 2}}),
         {.host = host("n1:4"), .map = mapBy(":OVERSUBSCRIBE")},
         times(4, "n1")},
        {"--host above Slurm's CPUs with --overbook",
         allocation({{"n1", 2}}),
         {.host = host("n1:3"), .overbook = true},
         times(3, "n1")},
    };
    for (const PlanCase &c : cases) {
        SCOPED_TRACE(c.name);
        const auto plan = makePlan(c.allocation, c.request);
        ASSERT_TRUE(plan.ok()) << plan.error().message;
        EXPECT_EQ(hostPerRank(plan.value()), c.hosts);
    }
}

TEST(MakePlan, ListsOnlyNodesWithRanksAndTheirSlots) {
    const auto plan = makePlan(allocation({{"n1", 2}, {"n2", 2}, {"n3", 2}}),
                               {.np = 3, .hostfile = hostfile("n3 slots=1 max_slots=4\nn2\nn1\n")});
    ASSERT_TRUE(plan.ok()) << plan.error().message;
    EXPECT_EQ(plan->nodes, (std::vector<PlannedNode>{{"n3", 1, 4}, {"n2", 2, std::nullopt}}));
    EXPECT_EQ(plan->ranks, (std::vector<RankPlacement>{{0, 0, 0}, {1, 0, 0}, {1, 1, 1}}));
    EXPECT_FALSE(plan->oversubscribed);
}

TEST(MakePlan, NumbersLocalRanksPerNode) {
    const auto plan = makePlan(allocation({{"n1", 2}, {"n2", 2}}), {.map = mapBy("node")});
    ASSERT_TRUE(plan.ok());
    EXPECT_EQ(plan->ranks,
              (std::vector<RankPlacement>{{0, 0, 0}, {1, 0, 0}, {0, 1, 1}, {1, 1, 1}}));
    EXPECT_EQ(plan->ranksOn(1), (std::vector<std::uint32_t>{1, 3}));
    EXPECT_EQ(plan->ranksOn(7), (std::vector<std::uint32_t>{}));
}

TEST(MakePlan, FlagsOversubscription) {
    const Allocation two = allocation({{"n1", 2}, {"n2", 2}});
    EXPECT_FALSE(makePlan(two, {.np = 4, .map = mapBy(":OVERSUBSCRIBE")})->oversubscribed);
    EXPECT_TRUE(makePlan(two, {.np = 5, .map = mapBy(":OVERSUBSCRIBE")})->oversubscribed);
    // Above the CPUs Slurm gave, even within the requested slots.
    EXPECT_TRUE(
        makePlan(two, {.host = host("n1:3"), .map = mapBy(":OVERSUBSCRIBE")})->oversubscribed);
    // Above a cap below the CPUs.
    EXPECT_TRUE(makePlan(two, {.np = 3, .host = host("n1:1"), .map = mapBy(":OVERSUBSCRIBE")})
                    ->oversubscribed);
}

TEST(MakePlan, IsDeterministic) {
    const Allocation nodes = allocation({{"a", 3}, {"b", 1}, {"c", 2}, {"d", 5}});
    const PlanRequest request{.np = 40, .host = host("d,b,a:2"), .map = mapBy(":OVERSUBSCRIBE")};
    const auto first = makePlan(nodes, request);
    const auto second = makePlan(nodes, request);
    ASSERT_TRUE(first.ok());
    EXPECT_EQ(first.value(), second.value());
}

struct ErrorCase {
    std::string name;
    Allocation allocation;
    PlanRequest request;
    std::string message;
};

TEST(MakePlan, ReturnsUserErrors) {
    const Allocation n12 = allocation({{"n1", 2}, {"n2", 2}});
    const std::string notEnough5of4 =
        "There are not enough slots available in the system to satisfy the 5 slots that were "
        "requested by the application: the selected nodes have 4 slots.\nEither request fewer "
        "procs for your application, or use --map-by :OVERSUBSCRIBE (or --overbook) to run more "
        "procs than slots.";
    const std::vector<ErrorCase> cases = {
        {"np 0",
         n12,
         {.np = 0},
         "the number of processes must be a positive number, got 0 (use -n N with N >= 1)"},
        {"np negative",
         n12,
         {.np = -3},
         "the number of processes must be a positive number, got -3 (use -n N with N >= 1)"},
        {"np too large",
         n12,
         {.np = kMaxRanks + 1},
         "too many processes: 16777217 requested, stepmap places at most 16777216"},
        {"default np too large",
         allocation({{"big", 20'000'000}}),
         {},
         "too many processes: the selected nodes have 20000000 slots, stepmap places at most "
         "16777216; give -n"},
        {"hosts not allocated, all of them, once each",
         n12,
         {.host = host("n9,n1,n10"), .hostfile = hostfile("n9\nn1\n")},
         "Some of the requested hosts are not included in the current allocation.\n"
         "The requested hosts were:\n  n9,n10\n\nVerify that you have mapped the allocated "
         "resources properly using the --host or --hostfile specification."},
        {"excluded host not allocated",
         n12,
         {.host = host("!^n7")},
         "Some of the requested hosts are not included in the current allocation.\n"
         "The requested hosts were:\n  n7\n\nVerify that you have mapped the allocated "
         "resources properly using the --host or --hostfile specification."},
        {"everything excluded",
         n12,
         {.host = host("!^n[1-2]")},
         "No nodes are left to run on: the --host and --hostfile filters exclude every "
         "allocated node."},
        {"relative node out of range",
         n12,
         {.host = host("+n2")},
         "--host: relative host '+n2' is out of range: the allocation has 2 nodes (+n0 to +n1)"},
        {"relative node out of range in hostfile",
         n12,
         {.hostfile = hostfile("+n5\n")},
         "--hostfile: relative host '+n5' is out of range: the allocation has 2 nodes (+n0 to "
         "+n1)"},
        {"relative and named max_slots conflict",
         n12,
         {.hostfile = hostfile("+n0 max_slots=3\nn1 max_slots=4\n")},
         "--hostfile: host +n0: max_slots=4 conflicts with max_slots=3 given earlier"},
        {"--host above Slurm's CPUs",
         n12,
         {.host = host("n1,n2:3")},
         "host n2: 3 slots requested, but Slurm allocated only 2 CPUs there.\nTo oversubscribe "
         "it, add --map-by :OVERSUBSCRIBE (or --overbook); otherwise request at most 2 slots on "
         "n2."},
        {"--host above Slurm's CPUs by repetition",
         n12,
         {.host = host("n1:2,n1")},
         "host n1: 3 slots requested, but Slurm allocated only 2 CPUs there.\nTo oversubscribe "
         "it, add --map-by :OVERSUBSCRIBE (or --overbook); otherwise request at most 2 slots on "
         "n1."},
        {"NOOVERSUBSCRIBE refuses too",
         n12,
         {.np = 5, .map = mapBy(":NOOVERSUBSCRIBE")},
         notEnough5of4},
        {"map-by node refuses too", n12, {.np = 5, .map = mapBy("node")}, notEnough5of4},
        {"max_slots caps the oversubscription",
         n12,
         {.np = 7,
          .hostfile = hostfile("n1 max_slots=3\nn2 max_slots=3\n"),
          .map = mapBy(":OVERSUBSCRIBE")},
         "There are not enough slots available in the system to satisfy the 7 slots that were "
         "requested by the application, even oversubscribed: the max_slots limits of the "
         "selected nodes allow at most 6 procs.\nEither request fewer procs for your "
         "application, or raise max_slots in the hostfile."},
        {"max_slots caps map-by node too",
         n12,
         {.np = 7,
          .hostfile = hostfile("n1 max_slots=3\nn2 max_slots=3\n"),
          .map = mapBy("node:OVERSUBSCRIBE")},
         "There are not enough slots available in the system to satisfy the 7 slots that were "
         "requested by the application, even oversubscribed: the max_slots limits of the "
         "selected nodes allow at most 6 procs.\nEither request fewer procs for your "
         "application, or raise max_slots in the hostfile."},
        {"--overbook with map-by node",
         n12,
         {.map = mapBy("node"), .overbook = true},
         "--overbook cannot be combined with --map-by node: --overbook places consecutive ranks "
         "on each node. Use --map-by node:OVERSUBSCRIBE to keep round-robin placement past the "
         "slots, or drop --map-by node."},
        {"--overbook with map-by node:OVERSUBSCRIBE",
         n12,
         {.map = mapBy("node:OVERSUBSCRIBE"), .overbook = true},
         "--overbook cannot be combined with --map-by node: --overbook places consecutive ranks "
         "on each node, while --map-by node:OVERSUBSCRIBE already keeps round-robin placement "
         "past the slots. Drop --overbook."},
        {"many hosts not allocated: the first few and a count",
         n12,
         {.host = host("n1,m[1-100000]")},
         "Some of the requested hosts are not included in the current allocation.\n"
         "The requested hosts were:\n  m1,m2,m3,m4,m5 and 99995 more\n\nVerify that you have "
         "mapped the allocated resources properly using the --host or --hostfile "
         "specification."},
        {"ppr past the process limit, refused before placing",
         n12,
         {.map = mapBy("ppr:16000000:node:OVERSUBSCRIBE")},
         "--map-by ppr:16000000:node: the pattern asks for more than 16777216 processes on the 2 "
         "nodes; stepmap places at most 16777216. Lower N, or give -n."},
        {"--overbook with NOOVERSUBSCRIBE",
         n12,
         {.map = mapBy(":NOOVERSUBSCRIBE"), .overbook = true},
         "--overbook oversubscribes when needed, but --map-by says NOOVERSUBSCRIBE: drop one of "
         "them."},
        {"empty allocation", Allocation{}, {}, "the Slurm allocation has no nodes"},
        {"duplicate allocation node",
         allocation({{"n1", 2}, {"n1", 2}}),
         {},
         "the Slurm allocation lists node n1 twice"},
        {"invalid allocation node name",
         allocation({{"n1,n2", 2}}),
         {},
         "the Slurm allocation lists an invalid node name 'n1,n2'"},
        {"allocation node without CPUs",
         allocation({{"n1", 0}}),
         {},
         "the Slurm allocation gives node n1 0 CPUs (expected at least 1)"},
    };
    for (const ErrorCase &c : cases) {
        SCOPED_TRACE(c.name);
        const auto plan = makePlan(c.allocation, c.request);
        ASSERT_FALSE(plan.ok());
        EXPECT_EQ(plan.error().message, c.message);
    }
}

struct CountCase {
    std::string value;
    std::string message;
};

TEST(ParseProcessCount, SaysTheLimitForNumbersTooLarge) {
    EXPECT_EQ(parseProcessCount("8").value(), 8);
    EXPECT_EQ(parseProcessCount("16777216").value(), kMaxRanks);
    const std::vector<CountCase> cases = {
        {"2147483648", "process count '2147483648': stepmap places at most 16777216 processes"},
        {"99999999999999999999999", "process count '99999999999999999999999': stepmap places at "
                                    "most 16777216 processes"},
        {"16777217", "process count '16777217': stepmap places at most 16777216 processes"},
        {"0", "process count '0': expected a positive number, e.g. -n 8"},
        {"-1", "process count '-1': expected a positive number, e.g. -n 8"},
        {"eight", "process count 'eight': expected a positive number, e.g. -n 8"},
    };
    for (const CountCase &c : cases)
        EXPECT_EQ(parseProcessCount(c.value).error().message, c.message);
}

} // namespace
} // namespace stepmap
