// The worked examples of the seeds (shared/seeds 000, 002, 004) and of
// notes/parastation.md, under Slurm: the allocation each example implies is
// written out, and where stepmap's reading under a resource manager differs
// from the seed's (resource-manager-less) output, the comment says why.

#include "planner/planner.hpp"

#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "plan_helpers.hpp"

namespace stepmap {
namespace {

using namespace test; // the plan_helpers.hpp builders
using Hosts = std::vector<std::string>;

const std::string kNotInAllocation =
    "Some of the requested hosts are not included in the current allocation.\n"
    "The requested hosts were:\n  ";
const std::string kVerify = "\n\nVerify that you have mapped the allocated resources properly "
                            "using the --host or --hostfile specification.";

using SeedCase = test::PlacementCase;

// Seed 000, "RESOURCE MANAGER EXAMPLES": `qsh -pe cre 8` gave ct-1 and ct-0
// four slots each, ct-1 first (the order mpirun prints them in). The seed
// (Open MPI 1.x) ran 4 copies for "-host ct-0"; Open MPI 5's mpirun, run
// inside an allocation (tests/conformance/prrte_live), gives a host named
// once one slot, as seed 002 says of --host: stepmap does what mpirun does.
TEST(SeedRmExamples, Seed000) {
    const Allocation rm = allocation({{"ct-1", 4}, {"ct-0", 4}});
    const std::vector<SeedCase> cases = {
        {"mpirun hostname", rm, {}, concat({times(4, "ct-1"), times(4, "ct-0")}), ""},
        {"mpirun -np 6 hostname", rm, {.np = 6}, concat({times(4, "ct-1"), times(2, "ct-0")}), ""},
        {"mpirun -host ct-0 hostname", rm, {.host = host("ct-0")}, {"ct-0"}, ""},
        {"mpirun -host ct-1 hostname", rm, {.host = host("ct-1")}, {"ct-1"}, ""},
        {"mpirun -host ct-0:4 hostname", rm, {.host = host("ct-0:4")}, times(4, "ct-0"), ""},
        {"mpirun -hostfile hf.0 hostname (ct-0 slots=2)",
         rm,
         {.hostfile = hostfile("ct-0 slots=2\n")},
         times(2, "ct-0"),
         ""},
        {"mpirun -host ct-2 hostname",
         rm,
         {.host = host("ct-2")},
         {},
         kNotInAllocation + "ct-2" + kVerify},
    };
    for (const SeedCase &c : cases)
        test::checkPlacement(c);
}

// Seed 000's examples without a resource manager, replayed under Slurm on
// the three nodes they describe (ct-0..ct-2, 4 processors each) with the
// hostfile "ct". Under Slurm --host is a filter whose names count slots as
// without one (1 a mention, or :N), as Open MPI 5's mpirun does inside an
// allocation: the seed's outputs again.
TEST(SeedNoRmExamplesUnderSlurm, Seed000) {
    const Allocation three = allocation({{"ct-0", 4}, {"ct-1", 4}, {"ct-2", 4}});
    const std::string ct = "###################\n# Hostfile ct\nct-0 slots=4\nct-1 slots=4\n"
                           "###################\n";
    const std::vector<SeedCase> cases = {
        {"mpirun -hostfile ct",
         three,
         {.hostfile = hostfile(ct)},
         concat({times(4, "ct-0"), times(4, "ct-1")}),
         ""},
        {"mpirun -host ct-1,ct-2", three, {.host = host("ct-1,ct-2")}, {"ct-1", "ct-2"}, ""},
        {"mpirun -host ct-1:1,ct-2:1 (the seed's output)",
         three,
         {.host = host("ct-1:1,ct-2:1")},
         {"ct-1", "ct-2"},
         ""},
        {"mpirun -hostfile ct -host ct-1",
         three,
         {.host = host("ct-1"), .hostfile = hostfile(ct)},
         {"ct-1"},
         ""},
        {"mpirun -hostfile ct -host ct-2",
         three,
         {.host = host("ct-2"), .hostfile = hostfile(ct)},
         {},
         "Some of the hosts requested with --host are not listed in the hostfile.\n"
         "The requested hosts were:\n  ct-2\n\n"
         "A node must pass both --host and --hostfile: add it to the hostfile or remove it "
         "from --host."},
        // "SUPPORT FOR !^"
        {"mpirun --host !^ct-0",
         three,
         {.host = host("!^ct-0")},
         concat({times(4, "ct-1"), times(4, "ct-2")}),
         ""},
        {"mpirun --host !^ct-0,ct-2", three, {.host = host("!^ct-0,ct-2")}, times(4, "ct-1"), ""},
        {"mpirun --host !^ct-0 --hostfile ct",
         three,
         {.host = host("!^ct-0"), .hostfile = hostfile(ct)},
         times(4, "ct-1"),
         ""},
    };
    for (const SeedCase &c : cases)
        test::checkPlacement(c);
}

// Seed 002, my-hosts "node0 slots=2 max_slots=20", "node1 slots=2
// max_slots=20", in a Slurm allocation with 2 CPUs on each node.
//
// The seed prints its -n 8 examples without :OVERSUBSCRIBE, yet its own text
// says mpirun aborts on oversubscription without it, PRRTE 5 defaults to
// NOOVERSUBSCRIBE (rmaps_base_map_job.c), and notes/host-filters.md rule 9
// makes it an error: stepmap requires :OVERSUBSCRIBE here.
//
// With it, --map-by slot places the seed's counts (the second pass spreads
// the 4 extra procs evenly, as PRRTE's byslot mapper does) but numbers the
// ranks node by node, as Open MPI 5's mpirun prints them (node0: 0-3, node1:
// 4-7; tests/conformance/prrte_live), where the seed's example shows 0,1
// node0; 2,3 node1; 4,5 node0; 6,7 node1. Its rule ("maximize the number of
// adjacent ranks in MPI_COMM_WORLD on the same host") reads as mpirun does.
TEST(SeedSchedulingExamples, Seed002Node0Node1) {
    const Allocation twoByTwo = allocation({{"node0", 2}, {"node1", 2}});
    const HostSpec myHosts = hostfile("node0 slots=2 max_slots=20\nnode1 slots=2 max_slots=20\n");
    const std::vector<SeedCase> cases = {
        {"-n 8 --map-by slot:OVERSUBSCRIBE",
         twoByTwo,
         {.np = 8, .hostfile = myHosts, .map = mapBy("slot:OVERSUBSCRIBE")},
         {"node0", "node0", "node0", "node0", "node1", "node1", "node1", "node1"},
         ""},
        {"-n 8 --map-by node:OVERSUBSCRIBE",
         twoByTwo,
         {.np = 8, .hostfile = myHosts, .map = mapBy("node:OVERSUBSCRIBE")},
         {"node0", "node1", "node0", "node1", "node0", "node1", "node0", "node1"},
         ""},
        {"-n 8 --map-by slot (no OVERSUBSCRIBE)",
         twoByTwo,
         {.np = 8, .hostfile = myHosts, .map = mapBy("slot")},
         {},
         "There are not enough slots available in the system to satisfy the 8 slots that were "
         "requested by the application: the selected nodes have 4 slots.\nEither request fewer "
         "procs for your application, or use --map-by :OVERSUBSCRIBE (or --overbook) to run "
         "more procs than slots."},
        {"-n 8 --map-by node (no OVERSUBSCRIBE)",
         twoByTwo,
         {.np = 8, .hostfile = myHosts, .map = mapBy("node")},
         {},
         "There are not enough slots available in the system to satisfy the 8 slots that were "
         "requested by the application: the selected nodes have 4 slots.\nEither request fewer "
         "procs for your application, or use --map-by :OVERSUBSCRIBE (or --overbook) to run "
         "more procs than slots."},
        {"-n 4 --map-by node, within the slots",
         twoByTwo,
         {.np = 4, .hostfile = myHosts, .map = mapBy("node")},
         {"node0", "node1", "node0", "node1"},
         ""},
    };
    for (const SeedCase &c : cases)
        test::checkPlacement(c);

    const auto plan =
        makePlan(twoByTwo, {.np = 8, .hostfile = myHosts, .map = mapBy("slot:OVERSUBSCRIBE")});
    ASSERT_TRUE(plan.ok());
    EXPECT_TRUE(plan->oversubscribed);
    EXPECT_EQ(plan->nodes[0], (PlannedNode{"node0", 2, 20}));
    EXPECT_EQ(plan->ranksOn(0), (std::vector<std::uint32_t>{0, 1, 2, 3}));
    EXPECT_EQ(plan->ranksOn(1), (std::vector<std::uint32_t>{4, 5, 6, 7}));
}

// Seed 002's other examples, each in the Slurm allocation it implies.
TEST(SeedSchedulingExamples, Seed002HostAndHostfile) {
    const Allocation node01to04 =
        allocation({{"node01", 2}, {"node02", 2}, {"node03", 2}, {"node04", 2}});
    const Allocation node1to4 =
        allocation({{"node1", 2}, {"node2", 2}, {"node3", 2}, {"node4", 2}});
    const Allocation abc1 = allocation({{"a", 1}, {"b", 1}, {"c", 1}});
    const Allocation abc4 = allocation({{"a", 4}, {"b", 4}, {"c", 4}});
    const Allocation node01 = allocation({{"node01.example.com", 4}});
    const Allocation localhost2 = allocation({{"localhost", 2}});
    const std::vector<SeedCase> cases = {
        // "Exclusionary" hostfile in a scheduler job of node01..node04.
        {"-n 1 --hostfile my_hosts (node03)",
         node01to04,
         {.np = 1, .hostfile = hostfile("node03\n")},
         {"node03"},
         ""},
        {"-n 1 --hostfile my_hosts (node17)",
         node01to04,
         {.np = 1, .hostfile = hostfile("node17\n")},
         {},
         kNotInAllocation + "node17" + kVerify},
        // --host filtering a hostfile of node1..node4.
        {"-n 1 --hostfile my_hosts --host node3",
         node1to4,
         {.np = 1, .host = host("node3"), .hostfile = hostfile("node1\nnode2\nnode3\nnode4\n")},
         {"node3"},
         ""},
        {"-n 1 --hostfile my_hosts --host node17",
         node1to4,
         {.np = 1, .host = host("node17"), .hostfile = hostfile("node1\nnode2\nnode3\nnode4\n")},
         {},
         kNotInAllocation + "node17" + kVerify},
        // "-n 3 --host a,b,c": one copy on each (one CPU each under Slurm).
        {"-n 3 --host a,b,c", abc1, {.np = 3, .host = host("a,b,c")}, {"a", "b", "c"}, ""},
        // "--host a,b:2,c:3": one copy on a, two on b, three on c, also
        // where Slurm gave each node more CPUs.
        {"--host a,b:2,c:3 (4 CPUs each)",
         abc4,
         {.host = host("a,b:2,c:3")},
         {"a", "b", "b", "c", "c", "c"},
         ""},
        {"--host a,b:2,c:3 (a has 1 CPU)",
         allocation({{"a", 1}, {"b", 4}, {"c", 4}}),
         {.host = host("a,b:2,c:3")},
         {"a", "b", "b", "c", "c", "c"},
         ""},
        // "node01.example.com:2,node01.example.com" = 3 slots.
        {"--host node01.example.com:2,node01.example.com",
         node01,
         {.host = host("node01.example.com:2,node01.example.com")},
         times(3, "node01.example.com"),
         ""},
        {"--host node01.example.com:2",
         node01,
         {.host = host("node01.example.com:2")},
         times(2, "node01.example.com"),
         ""},
        // Oversubscribing: "localhost slots=2", -n 4.
        {"-n 4 --hostfile (localhost slots=2) --map-by :OVERSUBSCRIBE",
         localhost2,
         {.np = 4, .hostfile = hostfile("localhost slots=2\n"), .map = mapBy(":OVERSUBSCRIBE")},
         times(4, "localhost"),
         ""},
        {"-n 4 --hostfile (localhost) without OVERSUBSCRIBE",
         localhost2,
         {.np = 4, .hostfile = hostfile("localhost\n")},
         {},
         "There are not enough slots available in the system to satisfy the 4 slots that were "
         "requested by the application: the selected nodes have 2 slots.\nEither request fewer "
         "procs for your application, or use --map-by :OVERSUBSCRIBE (or --overbook) to run "
         "more procs than slots."},
        // "localhost slots=4" on 2 cores: the seed's "lie". Under Slurm a
        // count above the allocated CPUs is oversubscription: refused
        // without :OVERSUBSCRIBE, naming the host.
        {"-n 4 --hostfile (localhost slots=4)",
         localhost2,
         {.np = 4, .hostfile = hostfile("localhost slots=4\n")},
         {},
         "host localhost: 4 slots requested, but Slurm allocated only 2 CPUs there.\nTo "
         "oversubscribe it, add --map-by :OVERSUBSCRIBE (or --overbook); otherwise request at "
         "most 2 slots on localhost."},
        {"-n 4 --hostfile (localhost slots=4) --map-by :OVERSUBSCRIBE",
         localhost2,
         {.np = 4, .hostfile = hostfile("localhost slots=4\n"), .map = mapBy(":OVERSUBSCRIBE")},
         times(4, "localhost"),
         ""},
    };
    for (const SeedCase &c : cases)
        test::checkPlacement(c);
}

// notes/parastation.md "Placement" (seed 004): 4 nodes x 2 CPUs.
TEST(ParaStationExamples, Overbook) {
    const Allocation fourByTwo = allocation({{"n1", 2}, {"n2", 2}, {"n3", 2}, {"n4", 2}});
    const std::vector<SeedCase> cases = {
        // OVERBOOK, 10 procs: n1 ranks 0-3, n2 4-5, n3 6-7, n4 8-9.
        {"--overbook -n 10",
         fourByTwo,
         {.np = 10, .overbook = true},
         concat({times(4, "n1"), times(2, "n2"), times(2, "n3"), times(2, "n4")}),
         ""},
        // OVERBOOK with enough free CPUs: as without it (fill n1, then n2...).
        {"--overbook -n 6",
         fourByTwo,
         {.np = 6, .overbook = true},
         concat({times(2, "n1"), times(2, "n2"), times(2, "n3")}),
         ""},
        {"-n 6",
         fourByTwo,
         {.np = 6},
         concat({times(2, "n1"), times(2, "n2"), times(2, "n3")}),
         ""},
        {"--overbook -n 8",
         fourByTwo,
         {.np = 8, .overbook = true},
         concat({times(2, "n1"), times(2, "n2"), times(2, "n3"), times(2, "n4")}),
         ""},
        // Every CPU gets k = 16 / 8 = 2; no extras.
        {"--overbook -n 16",
         fourByTwo,
         {.np = 16, .overbook = true},
         concat({times(4, "n1"), times(4, "n2"), times(4, "n3"), times(4, "n4")}),
         ""},
        // 11 = 8 CPUs x 1 + 3 extras on the first three CPUs (n1's two, n2's first).
        {"--overbook -n 11",
         fourByTwo,
         {.np = 11, .overbook = true},
         concat({times(4, "n1"), times(3, "n2"), times(2, "n3"), times(2, "n4")}),
         ""},
        // Neither switch and too few CPUs: fail.
        {"-n 10 without --overbook",
         fourByTwo,
         {.np = 10},
         {},
         "There are not enough slots available in the system to satisfy the 10 slots that were "
         "requested by the application: the selected nodes have 8 slots.\nEither request fewer "
         "procs for your application, or use --map-by :OVERSUBSCRIBE (or --overbook) to run "
         "more procs than slots."},
        // Uneven nodes: 4 + 2 CPUs, 9 procs: k = 1, 3 extras on n1's first CPUs.
        {"--overbook -n 9 on 4+2 CPUs",
         allocation({{"n1", 4}, {"n2", 2}}),
         {.np = 9, .overbook = true},
         concat({times(7, "n1"), times(2, "n2")}),
         ""},
        // Administrator limits (max_slots) still bound each node.
        {"--overbook -n 10, n1 max_slots=3",
         fourByTwo,
         {.np = 10, .hostfile = hostfile("n1 max_slots=3\nn2\nn3\nn4\n"), .overbook = true},
         {},
         "--overbook would place 4 procs on n1, above its max_slots=3.\nEither request fewer "
         "procs for your application, or raise max_slots in the hostfile."},
    };
    for (const SeedCase &c : cases)
        test::checkPlacement(c);

    const auto plan = makePlan(fourByTwo, {.np = 10, .overbook = true});
    ASSERT_TRUE(plan.ok());
    EXPECT_TRUE(plan->oversubscribed);
    EXPECT_EQ(plan->ranksOn(0), (std::vector<std::uint32_t>{0, 1, 2, 3}));
    EXPECT_EQ(plan->ranks[3], (RankPlacement{0, 3, 3}));
    EXPECT_EQ(plan->ranks[4], (RankPlacement{1, 0, 0}));
    EXPECT_FALSE(makePlan(fourByTwo, {.np = 8, .overbook = true})->oversubscribed);
}

// The --overbook --loop-nodes-first example (n1 0,4,8; n2 1,5,9; n3 2,6;
// n4 3,7) is not in this cut; with equal CPU counts --map-by
// node:OVERSUBSCRIBE places exactly that, which this checks.
TEST(ParaStationExamples, LoopNodesFirstMatchesMapByNodeOversubscribe) {
    const Allocation fourByTwo = allocation({{"n1", 2}, {"n2", 2}, {"n3", 2}, {"n4", 2}});
    const auto plan = makePlan(fourByTwo, {.np = 10, .map = mapBy("node:OVERSUBSCRIBE")});
    ASSERT_TRUE(plan.ok()) << plan.error().message;
    EXPECT_EQ(plan->ranksOn(0), (std::vector<std::uint32_t>{0, 4, 8}));
    EXPECT_EQ(plan->ranksOn(1), (std::vector<std::uint32_t>{1, 5, 9}));
    EXPECT_EQ(plan->ranksOn(2), (std::vector<std::uint32_t>{2, 6}));
    EXPECT_EQ(plan->ranksOn(3), (std::vector<std::uint32_t>{3, 7}));
}

} // namespace
} // namespace stepmap
