// ParaStation placement (seed 004, notes/parastation.md) under Slurm:
// --loop-nodes-first, --overbook with it, --nodes-sort, --tpp and the PSI_*
// node pools, with every user error's exact message. The parsers of the
// option and variable values are tested first.

#include "placement/parastation_placement.hpp"
#include "planner/planner.hpp"
#include "request/parastation_request.hpp"

#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "plan_helpers.hpp"

namespace stepmap {
namespace {

using namespace test; // the plan_helpers.hpp builders
using Hosts = std::vector<std::string>;

// ---------------------------------------------------------------- parsers

TEST(ParseNodesSort, AcceptsEveryCriterionInAnyCase) {
    const std::vector<std::pair<std::string, NodesSort>> cases = {
        {"PROC", NodesSort::Proc},          {"proc", NodesSort::Proc},
        {"LOAD", NodesSort::Load1},         {"load_1", NodesSort::Load1},
        {"Load1", NodesSort::Load1},        {"LOAD_5", NodesSort::Load5},
        {"load_15", NodesSort::Load15},     {"PROC+LOAD", NodesSort::ProcLoad},
        {"proc+load", NodesSort::ProcLoad}, {"NONE", NodesSort::None},
        {"none", NodesSort::None},
    };
    for (const auto &[value, sort] : cases) {
        const auto parsed = parseNodesSort(value, "--nodes-sort");
        ASSERT_TRUE(parsed.ok()) << value << ": " << parsed.error().message;
        EXPECT_EQ(parsed.value(), sort) << value;
    }
    EXPECT_EQ(nodesSortName(NodesSort::ProcLoad), "PROC+LOAD");
    EXPECT_EQ(nodesSortName(NodesSort::Load1), "LOAD_1");
}

struct ErrorCase {
    std::string value;
    std::string message;
};

TEST(ParseNodesSort, RejectsUnknownValuesListingTheAcceptedOnes) {
    const std::string accepted =
        "(accepted, in any case: PROC, LOAD, LOAD_1, LOAD_5, LOAD_15, PROC+LOAD, NONE)";
    const std::vector<std::pair<std::string, ErrorCase>> cases = {
        {"PSI_NODES_SORT", {"busy", "PSI_NODES_SORT 'busy': unknown sort criterion " + accepted}},
        {"PSI_NODES_SORT", {"", "PSI_NODES_SORT '': unknown sort criterion " + accepted}},
        {"--nodes-sort", {"LOAD-5", "--nodes-sort 'LOAD-5': unknown sort criterion " + accepted}},
        {"--nodes-sort",
         {"PROC LOAD", "--nodes-sort 'PROC LOAD': unknown sort criterion " + accepted}},
    };
    for (const auto &[source, c] : cases) {
        const auto parsed = parseNodesSort(c.value, source);
        ASSERT_FALSE(parsed.ok()) << c.value;
        EXPECT_EQ(parsed.error().message, c.message);
    }
}

TEST(ParseThreadsPerProcess, AcceptsPositiveCounts) {
    EXPECT_EQ(parseThreadsPerProcess("1", "--tpp").value(), 1);
    EXPECT_EQ(parseThreadsPerProcess("8", "PSI_TPP").value(), 8);
    EXPECT_EQ(parseThreadsPerProcess("65535", "--tpp").value(), 65535);
    EXPECT_EQ(parseOmpNumThreads("4").value(), 4);
    EXPECT_EQ(parseOmpNumThreads("4,2").value(), 4); // nested: the outer level
}

TEST(ParseThreadsPerProcess, RejectsBadCounts) {
    const std::vector<std::pair<std::string, ErrorCase>> cases = {
        {"--tpp",
         {"0", "--tpp '0': expected a positive number of hardware threads per process, e.g. "
               "--tpp=2"}},
        {"--tpp",
         {"two", "--tpp 'two': expected a positive number of hardware threads per process, "
                 "e.g. --tpp=2"}},
        {"PSI_TPP",
         {"", "PSI_TPP '': expected a positive number of hardware threads per process, e.g. "
              "PSI_TPP=2"}},
        {"PSI_TPP",
         {"-2", "PSI_TPP '-2': expected a positive number of hardware threads per process, "
                "e.g. PSI_TPP=2"}},
        {"--tpp", {"65536", "--tpp '65536': at most 65535 hardware threads per process"}},
        {"--tpp",
         {"99999999999", "--tpp '99999999999': at most 65535 hardware threads per "
                         "process"}},
        {"PSI_TPP",
         {"2147483648", "PSI_TPP '2147483648': at most 65535 hardware threads per "
                        "process"}},
    };
    for (const auto &[source, c] : cases) {
        const auto parsed = parseThreadsPerProcess(c.value, source);
        ASSERT_FALSE(parsed.ok()) << c.value;
        EXPECT_EQ(parsed.error().message, c.message);
    }
    const std::vector<ErrorCase> omp = {
        {"abc", "OMP_NUM_THREADS 'abc': expected a positive number of hardware threads per "
                "process, e.g. OMP_NUM_THREADS=4 (or set PSI_TPP)"},
        {"0", "OMP_NUM_THREADS '0': expected a positive number of hardware threads per "
              "process, e.g. OMP_NUM_THREADS=4 (or set PSI_TPP)"},
        {",4", "OMP_NUM_THREADS ',4': its first level '' is not a positive number of threads "
               "(set PSI_TPP or --tpp to give the threads per process directly)"},
    };
    for (const ErrorCase &c : omp) {
        const auto parsed = parseOmpNumThreads(c.value);
        ASSERT_FALSE(parsed.ok()) << c.value;
        EXPECT_EQ(parsed.error().message, c.message);
    }
}

TEST(ParsePsiNodes, ReadsIndicesAndRanges) {
    // Seed 004: PSI_NODES="0,1,3,17-20".
    const std::vector<std::pair<std::string, std::vector<std::uint32_t>>> cases = {
        {"0,1,3,17-20", {0, 1, 3, 17, 18, 19, 20}},
        {"5", {5}},
        {" 2 , 0-1 ", {2, 0, 1}},
        {"3-3,1,1", {3, 1, 1}},
    };
    for (const auto &[value, indices] : cases) {
        const auto pool = parsePsiNodes(value);
        ASSERT_TRUE(pool.ok()) << value << ": " << pool.error().message;
        EXPECT_EQ(pool->kind, NodePool::Kind::Nodes);
        EXPECT_EQ(pool->indices, indices) << value;
        EXPECT_EQ(pool->describe(), "PSI_NODES");
    }
}

TEST(ParsePsiNodes, RejectsMalformedLists) {
    const std::string expected = " (expected node indices and ranges, e.g. \"0,1,3,17-20\")";
    const std::vector<ErrorCase> cases = {
        {"", "PSI_NODES '': no node indices" + expected},
        {"  ", "PSI_NODES '  ': no node indices" + expected},
        {"0,,1", "PSI_NODES '0,,1': empty item" + expected},
        {"0,", "PSI_NODES '0,': empty item" + expected},
        {"n1", "PSI_NODES 'n1': 'n1' is not a node index or range" + expected},
        {"1-", "PSI_NODES '1-': '1-' is not a node index or range" + expected},
        {"-1", "PSI_NODES '-1': '-1' is not a node index or range" + expected},
        {"1-2-3", "PSI_NODES '1-2-3': '1-2-3' is not a node index or range" + expected},
        {"0 1", "PSI_NODES '0 1': '0 1' is not a node index or range" + expected},
        {"20-17", "PSI_NODES '20-17': range '20-17' ends before it starts (write it as 17-20)"},
        {"0-2000000", "PSI_NODES '0-2000000': '0-2000000': node indices go up to 1048576"},
        {"99999999999", "PSI_NODES '99999999999': '99999999999': node indices go up to 1048576"},
    };
    for (const ErrorCase &c : cases) {
        const auto pool = parsePsiNodes(c.value);
        ASSERT_FALSE(pool.ok()) << c.value;
        EXPECT_EQ(pool.error().message, c.message);
    }
}

TEST(ParsePsiHosts, SplitsAtWhiteSpace) {
    // Seed 004: PSI_HOSTS="node0 node1 node3 node17 node18 node19 node20".
    const auto pool = parsePsiHosts("node0 node1 node3 node17 node18 node19 node20");
    ASSERT_TRUE(pool.ok());
    EXPECT_EQ(pool->names,
              (Hosts{"node0", "node1", "node3", "node17", "node18", "node19", "node20"}));
    EXPECT_EQ(parsePsiHosts("\tn2\n n1  n2 ")->names, (Hosts{"n2", "n1", "n2"}));
    EXPECT_EQ(parsePsiHosts(" ").error().message,
              "PSI_HOSTS ' ': no host names (expected names separated by blanks, e.g. \"n1 "
              "n2\")");
}

TEST(ParsePsiHostfile, OneNamePerLineRepeatsKept) {
    const auto pool = parsePsiHostfile("# nodes\nn2\n  n2  \n\nn1\n#n3\nn4", "hosts.txt");
    ASSERT_TRUE(pool.ok()) << pool.error().message;
    EXPECT_EQ(pool->kind, NodePool::Kind::Hostfile);
    EXPECT_EQ(pool->names, (Hosts{"n2", "n2", "n1", "n4"}));
    EXPECT_EQ(pool->describe(), "PSI_HOSTFILE hosts.txt");

    const std::vector<ErrorCase> cases = {
        {"n1\nn2 n3\n", "PSI_HOSTFILE hosts.txt, line 2: 'n2 n3' names more than one host "
                        "(write one host name per line; list a node k times to run k "
                        "processes there)"},
        {std::string("n1\0 \x1b[2J\n", 8),
         "PSI_HOSTFILE hosts.txt, line 1: 'n1\\x00 \\x1b[2J' names more than one host (write "
         "one host name per line; list a node k times to run k processes there)"},
        {"", "PSI_HOSTFILE hosts.txt: no host names (expected one host name per line)"},
        {"# none\n\n", "PSI_HOSTFILE hosts.txt: no host names (expected one host name per "
                       "line)"},
    };
    for (const ErrorCase &c : cases) {
        const auto parsed = parsePsiHostfile(c.value, "hosts.txt");
        ASSERT_FALSE(parsed.ok()) << c.value;
        EXPECT_EQ(parsed.error().message, c.message);
    }
}

// -------------------------------------------------------------- placement

const Allocation kFourByTwo = allocation({{"n1", 2}, {"n2", 2}, {"n3", 2}, {"n4", 2}});

using PlaceCase = test::PlacementCase;

ParaStationRequest loop() {
    return ParaStationRequest{.loopNodesFirst = true};
}

// PSI_OVERBOOK rather than --overbook: the label messages use.
ParaStationRequest fromEnvironment(ParaStationRequest ps) {
    ps.sources.overbook = "PSI_OVERBOOK";
    ps.sources.loopNodesFirst = "PSI_LOOP_NODES_FIRST";
    ps.sources.nodesSort = "PSI_NODES_SORT";
    ps.sources.threadsPerProcess = "PSI_TPP";
    return ps;
}

ParaStationRequest tpp(int threads, std::string source = "--tpp") {
    ParaStationRequest ps;
    ps.threadsPerProcess = threads;
    ps.sources.threadsPerProcess = std::move(source);
    return ps;
}

ParaStationRequest pool(Expected<NodePool> parsed) {
    EXPECT_TRUE(parsed.ok());
    return ParaStationRequest{.pool = parsed.ok() ? std::optional(parsed.value()) : std::nullopt};
}

const std::string kNotEnough8 =
    "There are not enough slots available in the system to satisfy the 10 slots that were "
    "requested by the application: the selected nodes have 8 slots.\nEither request fewer "
    "procs for your application, or use --overbook (PSI_OVERBOOK) to run more procs than CPUs.";

// Seed 004 "Process placement" and the examples of notes/parastation.md.
TEST(ParaStationPlacement, SeedExamples) {
    const std::vector<PlaceCase> cases = {
        // PSI_LOOP_NODES_FIRST: one process per node per pass, wrapping.
        {"--loop-nodes-first -n 8",
         kFourByTwo,
         {.np = 8, .parastation = loop()},
         {"n1", "n2", "n3", "n4", "n1", "n2", "n3", "n4"},
         ""},
        {"--loop-nodes-first -n 6",
         kFourByTwo,
         {.np = 6, .parastation = loop()},
         {"n1", "n2", "n3", "n4", "n1", "n2"},
         ""},
        {"--loop-nodes-first, np defaults to the CPUs",
         allocation({{"n1", 1}, {"n2", 2}}),
         {.parastation = loop()},
         {"n1", "n2", "n2"},
         ""},
        // ... while a node has a free CPU: full nodes drop out of the passes.
        {"--loop-nodes-first on 4+2 CPUs",
         allocation({{"n1", 4}, {"n2", 2}}),
         {.np = 6, .parastation = loop()},
         {"n1", "n2", "n1", "n2", "n1", "n1"},
         ""},
        // Too few CPUs: the startup is canceled.
        {"--loop-nodes-first -n 10",
         kFourByTwo,
         {.np = 10, .parastation = loop()},
         {},
         kNotEnough8},
        // OVERBOOK + LOOP_NODES_FIRST with enough CPUs: as LOOP_NODES_FIRST.
        {"--overbook --loop-nodes-first -n 8",
         kFourByTwo,
         {.np = 8, .overbook = true, .parastation = loop()},
         {"n1", "n2", "n3", "n4", "n1", "n2", "n3", "n4"},
         ""},
        // More than the CPUs: the cyclic walk; n1 0,4,8; n2 1,5,9; n3 2,6; n4 3,7.
        {"--overbook --loop-nodes-first -n 10",
         kFourByTwo,
         {.np = 10, .overbook = true, .parastation = loop()},
         {"n1", "n2", "n3", "n4", "n1", "n2", "n3", "n4", "n1", "n2"},
         ""},
        // Evenly on all nodes, whatever their CPUs.
        {"--overbook --loop-nodes-first -n 8 on 4+2 CPUs",
         allocation({{"n1", 4}, {"n2", 2}}),
         {.np = 8, .overbook = true, .parastation = loop()},
         {"n1", "n2", "n1", "n2", "n1", "n2", "n1", "n2"},
         ""},
        // Limits are obeyed: n1 leaves the walk at its max_slots.
        {"--overbook --loop-nodes-first -n 10, n1 max_slots=2",
         kFourByTwo,
         {.np = 10,
          .hostfile = hostfile("n1 max_slots=2\nn2\nn3\nn4\n"),
          .overbook = true,
          .parastation = loop()},
         {"n1", "n2", "n3", "n4", "n1", "n2", "n3", "n4", "n2", "n3"},
         ""},
        {"--overbook --loop-nodes-first past every max_slots",
         allocation({{"n1", 2}, {"n2", 2}}),
         {.np = 6,
          .hostfile = hostfile("n1 max_slots=2\nn2 max_slots=3\n"),
          .overbook = true,
          .parastation = loop()},
         {},
         "There are not enough slots available in the system to satisfy the 6 slots that "
         "were requested by the application, even oversubscribed: the max_slots limits of the "
         "selected nodes allow at most 5 procs.\nEither request fewer procs for your "
         "application, or raise max_slots in the hostfile."},
        // PSI_OVERBOOK alone: the even per-CPU split, n1 0-3, n2 4-5, n3 6-7, n4 8-9.
        {"PSI_OVERBOOK -n 10",
         kFourByTwo,
         {.np = 10, .overbook = true, .parastation = fromEnvironment({})},
         concat({times(4, "n1"), times(2, "n2"), times(2, "n3"), times(2, "n4")}),
         ""},
        {"PSI_OVERBOOK -n 6 (enough CPUs: fill)",
         kFourByTwo,
         {.np = 6, .overbook = true, .parastation = fromEnvironment({})},
         concat({times(2, "n1"), times(2, "n2"), times(2, "n3")}),
         ""},
        {"PSI_OVERBOOK -n 10, n1 max_slots=3",
         kFourByTwo,
         {.np = 10,
          .hostfile = hostfile("n1 max_slots=3\nn2\nn3\nn4\n"),
          .overbook = true,
          .parastation = fromEnvironment({})},
         {},
         "PSI_OVERBOOK would place 4 procs on n1, above its max_slots=3.\nEither request fewer "
         "procs for your application, or raise max_slots in the hostfile."},
    };
    for (const PlaceCase &c : cases)
        test::checkPlacement(c);
}

TEST(ParaStationPlacement, OversubscribedFlag) {
    const auto cyclic = makePlan(kFourByTwo, {.np = 10, .overbook = true, .parastation = loop()});
    ASSERT_TRUE(cyclic.ok());
    EXPECT_TRUE(cyclic->oversubscribed);
    EXPECT_EQ(cyclic->ranksOn(0), (std::vector<std::uint32_t>{0, 4, 8}));
    EXPECT_EQ(cyclic->ranksOn(1), (std::vector<std::uint32_t>{1, 5, 9}));
    EXPECT_EQ(cyclic->ranksOn(2), (std::vector<std::uint32_t>{2, 6}));
    EXPECT_EQ(cyclic->ranksOn(3), (std::vector<std::uint32_t>{3, 7}));
    EXPECT_EQ(cyclic->ranks[8], (RankPlacement{0, 2, 2}));
    const auto within = makePlan(kFourByTwo, {.np = 8, .parastation = loop()});
    ASSERT_TRUE(within.ok());
    EXPECT_FALSE(within->oversubscribed);
    EXPECT_EQ(within->nodes[0], (PlannedNode{"n1", 2, std::nullopt}));
}

TEST(ParaStationPlacement, ThreadsPerProcess) {
    const std::vector<PlaceCase> cases = {
        // A node with C CPUs holds floor(C / tpp) processes.
        {"--tpp=2, np defaults to the room",
         kFourByTwo,
         {.parastation = tpp(2)},
         {"n1", "n2", "n3", "n4"},
         ""},
        {"--tpp=2 -n 3", kFourByTwo, {.np = 3, .parastation = tpp(2)}, {"n1", "n2", "n3"}, ""},
        {"--tpp=2 on 3 + 4 CPUs",
         allocation({{"n1", 3}, {"n2", 4}}),
         {.parastation = tpp(2)},
         {"n1", "n2", "n2"},
         ""},
        // Nodes with fewer CPUs than tpp are left out.
        {"--tpp=3 skips a 2-CPU node",
         allocation({{"n1", 4}, {"n2", 2}, {"n3", 6}}),
         {.parastation = tpp(3)},
         {"n1", "n3", "n3"},
         ""},
        {"--tpp=2 --loop-nodes-first",
         allocation({{"n1", 4}, {"n2", 4}}),
         {.parastation = ParaStationRequest{.loopNodesFirst = true, .threadsPerProcess = 2}},
         {"n1", "n2", "n1", "n2"},
         ""},
        {"--tpp=2 -n 5",
         kFourByTwo,
         {.np = 5, .parastation = tpp(2)},
         {},
         "There are not enough slots available in the system to satisfy the 5 slots that were "
         "requested by the application: with --tpp=2 (2 hardware threads per process) the "
         "selected nodes have room for 4 procs.\nEither request fewer procs for your "
         "application, lower --tpp, or use --overbook (PSI_OVERBOOK) to run more procs than "
         "CPUs."},
        // --overbook with tpp: the process slots share the extra processes.
        {"--tpp=2 --overbook -n 6",
         kFourByTwo,
         {.np = 6, .overbook = true, .parastation = tpp(2)},
         {"n1", "n1", "n2", "n2", "n3", "n4"},
         ""},
        {"PSI_TPP=4 on 2-CPU nodes",
         kFourByTwo,
         {.np = 2, .overbook = true, .parastation = tpp(4, "PSI_TPP")},
         {},
         "PSI_TPP=4: no selected node has 4 hardware threads for one process (the most on one "
         "node is 2).\nLower PSI_TPP: a process takes all its hardware threads on one node."},
        {"OMP_NUM_THREADS=3 -n 3",
         kFourByTwo,
         {.np = 3, .parastation = tpp(3, "OMP_NUM_THREADS")},
         {},
         "OMP_NUM_THREADS=3: no selected node has 3 hardware threads for one process (the most "
         "on one node is 2).\nLower OMP_NUM_THREADS: a process takes all its hardware threads "
         "on one node."},
        // --host caps count hardware threads too.
        {"--tpp=2 with --host n1:2,n2:4",
         allocation({{"n1", 4}, {"n2", 4}}),
         {.host = host("n1:2,n2:4"), .parastation = tpp(2)},
         {"n1", "n2", "n2"},
         ""},
    };
    for (const PlaceCase &c : cases)
        test::checkPlacement(c);

    const auto overbooked =
        makePlan(kFourByTwo, {.np = 6, .overbook = true, .parastation = tpp(2)});
    ASSERT_TRUE(overbooked.ok());
    EXPECT_TRUE(overbooked->oversubscribed);
    EXPECT_EQ(overbooked->nodes[0].slots, 1); // process slots
    EXPECT_FALSE(makePlan(kFourByTwo, {.np = 4, .parastation = tpp(2)})->oversubscribed);
}

ParaStationRequest sorted(NodesSort sort, std::vector<NodeFigures> figures) {
    return ParaStationRequest{.nodesSort = sort, .figures = std::move(figures)};
}

NodeFigures figures(std::string name, int hardware, int assigned,
                    std::optional<double> load1 = std::nullopt) {
    return NodeFigures{std::move(name), hardware, assigned, load1, std::nullopt, std::nullopt};
}

TEST(ParaStationPlacement, NodesSort) {
    // PROC: n1 2/2, n2 0/2, n3 1/2, n4 0/2 -> n2, n4 (tie: node id), n3, n1.
    const std::vector<NodeFigures> busy = {figures("n1", 2, 2, 0.5), figures("n2", 2, 0, 1.5),
                                           figures("n3", 2, 1, 0.0), figures("n4", 2, 0, 0.1)};
    const std::vector<PlaceCase> cases = {
        {"PROC",
         kFourByTwo,
         {.parastation = sorted(NodesSort::Proc, busy)},
         concat({times(2, "n2"), times(2, "n4"), times(2, "n3"), times(2, "n1")}),
         ""},
        // LOAD (1 minute): n3 0.0, n4 0.05, n1 0.25, n2 0.75.
        {"LOAD_1",
         kFourByTwo,
         {.np = 4, .parastation = sorted(NodesSort::Load1, busy)},
         {"n3", "n3", "n4", "n4"},
         ""},
        // PROC+LOAD: n1 2.5/2, n2 1.5/2, n3 1/2, n4 0.1/2 -> n4, n3, n2, n1.
        {"PROC+LOAD with --loop-nodes-first",
         kFourByTwo,
         {.np = 4,
          .parastation = ParaStationRequest{.loopNodesFirst = true,
                                            .nodesSort = NodesSort::ProcLoad,
                                            .figures = busy}},
         {"n4", "n3", "n2", "n1"},
         ""},
        // Ratings are per hardware thread; equal ratings: more usable CPUs
        // first, then the allocation's order.
        {"PROC ties: more CPUs first",
         allocation({{"n1", 1}, {"n2", 2}, {"n3", 2}}),
         {.parastation = sorted(NodesSort::Proc,
                                {figures("n1", 4, 2), figures("n2", 2, 1), figures("n3", 8, 4)})},
         {"n2", "n2", "n3", "n3", "n1"},
         ""},
        {"NONE keeps the allocation's order without figures",
         kFourByTwo,
         {.np = 3, .parastation = sorted(NodesSort::None, {})},
         {"n1", "n1", "n2"},
         ""},
        // The sort orders the pool: PSI_HOSTS n4 n1 sorted by PROC.
        {"PSI_HOSTS sorted",
         kFourByTwo,
         {.parastation = ParaStationRequest{.nodesSort = NodesSort::Proc,
                                            .pool = parsePsiHosts("n1 n4").value(),
                                            .figures = busy}},
         {"n4", "n4", "n1", "n1"},
         ""},
        {"LOAD_5 is not known under Slurm",
         kFourByTwo,
         {.parastation = fromEnvironment(sorted(NodesSort::Load5, busy))},
         {},
         "PSI_NODES_SORT=LOAD_5: the 5-minute load average of node n1 is not known (Slurm "
         "reports only the 1-minute load, as CPULoad); use LOAD_1, PROC, PROC+LOAD or NONE"},
        {"LOAD without the load",
         kFourByTwo,
         {.parastation = sorted(NodesSort::Load1, {figures("n1", 2, 0), figures("n2", 2, 0),
                                                   figures("n3", 2, 0), figures("n4", 2, 0)})},
         {},
         "--nodes-sort=LOAD_1: the 1-minute load average of node n1 is not known (Slurm "
         "reports only the 1-minute load, as CPULoad); use LOAD_1, PROC, PROC+LOAD or NONE"},
        {"a node without figures",
         kFourByTwo,
         {.parastation = sorted(NodesSort::Proc, {figures("n1", 2, 0), figures("n2", 2, 0)})},
         {},
         "--nodes-sort=PROC: no load or process figures for node n3 (use --nodes-sort=NONE to "
         "keep the allocation's order)"},
        {"figures without hardware threads",
         allocation({{"n1", 2}}),
         {.parastation = sorted(NodesSort::Proc, {figures("n1", 0, 0)})},
         {},
         "--nodes-sort=PROC: the figures for node n1 give it 0 hardware threads (expected at "
         "least 1)"},
    };
    for (const PlaceCase &c : cases)
        test::checkPlacement(c);
}

const std::string kNotInAllocation =
    "Some of the requested hosts are not included in the current allocation.\n"
    "The requested hosts were:\n  ";

TEST(ParaStationPlacement, NodePools) {
    Allocation node0to20;
    for (int i = 0; i <= 20; ++i)
        node0to20.nodes.push_back(AllocatedNode{"node" + std::to_string(i), 1});
    const Hosts seedNodes = {"node0", "node1", "node3", "node17", "node18", "node19", "node20"};
    const std::vector<PlaceCase> cases = {
        // Seed 004: both forms pick nodes 0, 1, 3 and 17 to 20.
        {"PSI_NODES=0,1,3,17-20",
         node0to20,
         {.parastation = pool(parsePsiNodes("0,1,3,17-20"))},
         seedNodes,
         ""},
        {"PSI_HOSTS=node0 node1 node3 node17 node18 node19 node20",
         node0to20,
         {.parastation = pool(parsePsiHosts("node0 node1 node3 node17 node18 node19 node20"))},
         seedNodes,
         ""},
        // The pool's order, a repeated node once, each with Slurm's CPUs.
        {"PSI_NODES=3,1,3",
         kFourByTwo,
         {.parastation = pool(parsePsiNodes("3,1,3"))},
         {"n4", "n4", "n2", "n2"},
         ""},
        {"PSI_HOSTS=n3 n1 n3",
         kFourByTwo,
         {.parastation = pool(parsePsiHosts("n3 n1 n3"))},
         {"n3", "n3", "n1", "n1"},
         ""},
        // PSI_HOSTFILE: a node listed k times runs up to k processes.
        {"PSI_HOSTFILE n2 n2 n1",
         kFourByTwo,
         {.parastation = pool(parsePsiHostfile("n2\nn1\nn2\n", "hf"))},
         {"n2", "n2", "n1"},
         ""},
        {"PSI_HOSTFILE n2 n2 n1 -n 4",
         kFourByTwo,
         {.np = 4, .parastation = pool(parsePsiHostfile("n2\nn1\nn2\n", "hf"))},
         {},
         "There are not enough slots available in the system to satisfy the 4 slots that were "
         "requested by the application: the selected nodes have 3 slots.\nEither request fewer "
         "procs for your application, or use --overbook (PSI_OVERBOOK) to run more procs than "
         "CPUs."},
        {"PSI_HOSTFILE n1 x3",
         kFourByTwo,
         {.parastation = pool(parsePsiHostfile("n1\nn1\nn1\n", "/home/u/hosts"))},
         {},
         "PSI_HOSTFILE /home/u/hosts lists n1 3 times, but Slurm allocated only 2 CPUs "
         "there.\nList it at most 2 times, or set PSI_OVERBOOK (--overbook) to run more "
         "processes than CPUs."},
        {"PSI_HOSTFILE n1 x3 with PSI_OVERBOOK",
         kFourByTwo,
         {.overbook = true,
          .parastation = fromEnvironment(pool(parsePsiHostfile("n1\nn1\nn1\n", "hf")))},
         times(3, "n1"),
         ""},
        {"PSI_HOSTS with --loop-nodes-first",
         kFourByTwo,
         {.np = 4,
          .parastation =
              ParaStationRequest{.loopNodesFirst = true, .pool = parsePsiHosts("n4 n2").value()}},
         {"n4", "n2", "n4", "n2"},
         ""},
        // Under Slurm the pool filters the allocation.
        {"PSI_HOSTS outside the allocation",
         kFourByTwo,
         {.parastation = pool(parsePsiHosts("n9 n1 n8 n9"))},
         {},
         kNotInAllocation + "n9,n8\n\nVerify that you have mapped the allocated resources "
                            "properly using the PSI_HOSTS specification."},
        {"many PSI_HOSTS outside the allocation: the first few and a count",
         kFourByTwo,
         {.parastation = pool(parsePsiHosts("m1 m2 m3 m4 m5 m6 m7 n1 m6"))},
         {},
         kNotInAllocation + "m1,m2,m3,m4,m5 and 2 more\n\nVerify that you have mapped the "
                            "allocated resources properly using the PSI_HOSTS specification."},
        {"PSI_HOSTFILE outside the allocation",
         kFourByTwo,
         {.parastation = pool(parsePsiHostfile("n5\n", "hf"))},
         {},
         kNotInAllocation + "n5\n\nVerify that you have mapped the allocated resources "
                            "properly using the PSI_HOSTFILE hf specification."},
        {"PSI_NODES out of range",
         kFourByTwo,
         {.parastation = pool(parsePsiNodes("0,4"))},
         {},
         "PSI_NODES: node index 4 is out of range: the allocation has 4 nodes (indices 0 to "
         "3)"},
        // --host (and --hostfile) take precedence over the pool.
        {"--host wins over PSI_HOSTS",
         kFourByTwo,
         {.host = host("n2"), .parastation = pool(parsePsiHosts("n1"))},
         {"n2", "n2"},
         ""},
    };
    for (const PlaceCase &c : cases)
        test::checkPlacement(c);
}

TEST(ParaStationPlacement, RefusesContradictions) {
    const std::vector<PlaceCase> cases = {
        {"--loop-nodes-first --map-by node",
         kFourByTwo,
         {.map = mapBy("node"), .parastation = loop()},
         {},
         "--loop-nodes-first cannot be combined with --map-by node: --loop-nodes-first is "
         "ParaStation's round robin (one process per node per pass) and decides the placement "
         "itself. Drop --map-by, or drop --loop-nodes-first to place with mpirun's policy."},
        {"PSI_LOOP_NODES_FIRST --map-by node:OVERSUBSCRIBE",
         kFourByTwo,
         {.map = mapBy("node:OVERSUBSCRIBE"),
          .overbook = true,
          .parastation = fromEnvironment(loop())},
         {},
         "PSI_LOOP_NODES_FIRST cannot be combined with --map-by node: PSI_LOOP_NODES_FIRST is "
         "ParaStation's round robin (one process per node per pass) and decides the placement "
         "itself. Drop --map-by, or unset PSI_LOOP_NODES_FIRST to place with mpirun's "
         "policy."},
        {"PSI_TPP=2 --map-by node",
         kFourByTwo,
         {.map = mapBy("node"), .parastation = tpp(2, "PSI_TPP")},
         {},
         "PSI_TPP=2 cannot be combined with --map-by node: ParaStation placement fills each "
         "node in turn (round robin with --loop-nodes-first) and decides the placement itself. "
         "Drop --map-by (use --loop-nodes-first for round robin), or unset PSI_TPP to place "
         "with mpirun's policy."},
        {"PSI_OVERBOOK --map-by node",
         kFourByTwo,
         {.map = mapBy("node"), .overbook = true, .parastation = fromEnvironment({})},
         {},
         "PSI_OVERBOOK cannot be combined with --map-by node: ParaStation placement fills each "
         "node in turn (round robin with --loop-nodes-first) and decides the placement itself. "
         "Drop --map-by (use --loop-nodes-first for round robin), or unset PSI_OVERBOOK to "
         "place with mpirun's policy."},
        {"--nodes-sort=LOAD --map-by node",
         kFourByTwo,
         {.map = mapBy("node"), .parastation = sorted(NodesSort::Load1, {})},
         {},
         "--nodes-sort=LOAD_1 cannot be combined with --map-by node: ParaStation placement "
         "fills each node in turn (round robin with --loop-nodes-first) and decides the "
         "placement itself. Drop --map-by (use --loop-nodes-first for round robin), or drop "
         "--nodes-sort to place with mpirun's policy."},
        {"PSI_HOSTS --map-by node",
         kFourByTwo,
         {.map = mapBy("node"), .parastation = pool(parsePsiHosts("n1"))},
         {},
         "PSI_HOSTS cannot be combined with --map-by node: ParaStation placement fills each "
         "node in turn (round robin with --loop-nodes-first) and decides the placement itself. "
         "Drop --map-by (use --loop-nodes-first for round robin), or unset PSI_HOSTS to place "
         "with mpirun's policy."},
        {"--loop-nodes-first --map-by :OVERSUBSCRIBE",
         kFourByTwo,
         {.np = 10, .map = mapBy(":OVERSUBSCRIBE"), .parastation = loop()},
         {},
         "--map-by :OVERSUBSCRIBE cannot be combined with --loop-nodes-first: ParaStation "
         "placement runs more processes than CPUs only with --overbook (PSI_OVERBOOK). Use "
         "--overbook instead of :OVERSUBSCRIBE."},
        {"PSI_OVERBOOK --map-by :NOOVERSUBSCRIBE",
         kFourByTwo,
         {.map = mapBy(":NOOVERSUBSCRIBE"), .overbook = true, .parastation = fromEnvironment({})},
         {},
         "PSI_OVERBOOK oversubscribes when needed, but --map-by says NOOVERSUBSCRIBE: drop one "
         "of them."},
        {"-n 0 --loop-nodes-first",
         kFourByTwo,
         {.np = 0, .parastation = loop()},
         {},
         "the number of processes must be a positive number, got 0 (use -n N with N >= 1)"},
    };
    for (const PlaceCase &c : cases)
        test::checkPlacement(c);

    const std::vector<PlaceCase> mpirunPolicies = {
        {"--tpp=2 --map-by core",
         kFourByTwo,
         {.map = mapBy("core"), .parastation = tpp(2)},
         {},
         "--tpp=2 cannot be combined with --map-by core: ParaStation placement fills each "
         "node in turn (round robin with --loop-nodes-first) and decides the placement itself. "
         "Drop --map-by (use --loop-nodes-first for round robin), or drop --tpp to place with "
         "mpirun's policy."},
        {"--loop-nodes-first --map-by :PE=2",
         kFourByTwo,
         {.map = mapBy(":PE=2"), .parastation = loop()},
         {},
         "--map-by modifiers other than :OVERSUBSCRIBE and :NOOVERSUBSCRIBE cannot be combined "
         "with --loop-nodes-first: ParaStation placement decides the placement itself. Drop "
         "the modifiers, or drop --loop-nodes-first to place with mpirun's policy."},
        {"--loop-nodes-first --rank-by node",
         kFourByTwo,
         {.rank = parseRankBy("node").value(), .parastation = loop()},
         {},
         "--rank-by node cannot be combined with --loop-nodes-first: ParaStation placement "
         "numbers the ranks in placement order. Drop --rank-by, or drop --loop-nodes-first to "
         "place with mpirun's policies."},
        {"PSI_TPP=2 --bind-to core",
         kFourByTwo,
         {.bind = parseBindTo("core").value(), .parastation = tpp(2, "PSI_TPP")},
         {},
         "--bind-to core cannot be combined with PSI_TPP=2: ParaStation placement pins each "
         "process to its CPU-slots itself (PSI_TPP slots per process, physical cores first). "
         "Drop --bind-to to keep that pinning, use --bind-to none (or set __PSI_NO_PINPROC) to "
         "run unpinned, or unset PSI_TPP to place with mpirun's policies."},
        {"--tpp=2 --bind-to none",
         kFourByTwo,
         {.bind = parseBindTo("none").value(), .parastation = tpp(2)},
         {"n1", "n2", "n3", "n4"},
         ""},
        {"PSI_HOSTS with MPMD",
         kFourByTwo,
         {.apps = {AppRequest{.np = 1}, AppRequest{.np = 1}},
          .parastation = pool(parsePsiHosts("n1"))},
         {},
         "several application contexts (MPMD) cannot be combined with PSI_HOSTS: ParaStation "
         "placement places one application. Run one application, or unset PSI_HOSTS to place "
         "with mpirun's policies."},
    };
    for (const PlaceCase &c : mpirunPolicies)
        test::checkPlacement(c);

    // Redundant but consistent: accepted.
    const auto both = makePlan(
        kFourByTwo,
        {.np = 10, .map = mapBy(":OVERSUBSCRIBE"), .overbook = true, .parastation = loop()});
    ASSERT_TRUE(both.ok()) << both.error().message;
    EXPECT_EQ(both->ranksOn(0), (std::vector<std::uint32_t>{0, 4, 8}));
}

TEST(ParaStationPlacement, OnlyParaStationSettingsTakeThisPath) {
    EXPECT_FALSE(usesParaStationPlacement({}));
    EXPECT_FALSE(usesParaStationPlacement({.overbook = true}));     // the planner's --overbook
    EXPECT_TRUE(usesParaStationPlacement({.parastation = tpp(1)})); // --tpp given, even as 1
    EXPECT_TRUE(usesParaStationPlacement({.overbook = true, .parastation = fromEnvironment({})}));
    EXPECT_TRUE(usesParaStationPlacement({.parastation = loop()}));
    EXPECT_TRUE(usesParaStationPlacement({.parastation = tpp(2)}));
    EXPECT_TRUE(usesParaStationPlacement({.parastation = sorted(NodesSort::None, {})}));
    EXPECT_TRUE(usesParaStationPlacement({.parastation = pool(parsePsiHosts("n1"))}));
    EXPECT_FALSE(needsNodeFigures(std::nullopt));
    EXPECT_FALSE(needsNodeFigures(NodesSort::None));
    EXPECT_TRUE(needsNodeFigures(NodesSort::Proc));
}

TEST(ParaStationPlacement, JobMapHeader) {
    const PlanRequest request{.overbook = true, .parastation = loop()};
    JobMapHeader header = jobMapHeader(request, "7.0");
    describeParaStationMapping(header, request);
    EXPECT_EQ(header.mappingPolicy, "BYNODE:OVERBOOK");
    EXPECT_EQ(header.rankingPolicy, "NODE");
    const PlanRequest fill{.parastation = tpp(2)};
    header = jobMapHeader(fill, "7.0");
    describeParaStationMapping(header, fill);
    EXPECT_EQ(header.mappingPolicy, "BYSLOT:NOOVERSUBSCRIBE");
    EXPECT_EQ(header.bindingPolicy, "CPU-SLOT:CORES-FIRST");
    ParaStationRequest mapped = tpp(1);
    mapped.cpuMap = {1, 0};
    const PlanRequest byMap{.parastation = mapped};
    header = jobMapHeader(byMap, "7.0");
    describeParaStationMapping(header, byMap);
    EXPECT_EQ(header.bindingPolicy, "CPU-SLOT:__PSI_CPUMAP");
    const PlanRequest unpinned{.bind = parseBindTo("none").value(), .parastation = tpp(2)};
    header = jobMapHeader(unpinned, "7.0");
    describeParaStationMapping(header, unpinned);
    EXPECT_EQ(header.bindingPolicy, "NONE");
}

// ---------------------------------------------------------------- pinning

// `count` nodes n1.. of one Slurm shape, the job holding `cpus` (Slurm's
// abstract ids; empty: all) on each.
Allocation modeled(int count, SlurmNodeShape shape, std::vector<std::uint32_t> cpus = {}) {
    auto model = buildSlurmNodeModel(shape, cpus);
    EXPECT_TRUE(model.ok()) << model.error().message;
    Allocation result;
    for (int i = 1; i <= count; ++i)
        result.nodes.push_back(AllocatedNode{
            "n" + std::to_string(i), static_cast<int>(model.value()->puCount()), model.value()});
    return result;
}

// Each rank as "node:LOGICAL@OS" of its binding, "node:-" when unbound.
std::vector<std::string> pinnedPerRank(const LaunchPlan &plan) {
    std::vector<std::string> out;
    for (std::uint32_t r = 0; r < plan.ranks.size(); ++r) {
        const CpuBinding *b = plan.bindingOf(r);
        out.push_back(plan.nodes[plan.ranks[r].node].name + ":" +
                      (b ? formatIdList(b->logical) + "@" + formatIdList(b->os) : "-"));
    }
    return out;
}

ParaStationRequest withCpuMap(ParaStationRequest ps, std::vector<std::uint32_t> map) {
    ps.cpuMap = std::move(map);
    return ps;
}

ParaStationRequest unpinned(ParaStationRequest ps) {
    ps.pin = false;
    return ps;
}

struct PinCase {
    std::string name;
    Allocation allocation;
    PlanRequest request;
    std::vector<std::string> expected; // pinnedPerRank
    std::string error;
};

// Seed 004, "Process pinning": each process pinned to its PSI_TPP CPU-slots,
// physical cores first. Slurm's model numbers OS ids threads last (thread t
// of core c on a 4-core socket is OS CPU 4t + c), so a core's first thread
// (logical 2c) is OS CPU c.
TEST(ParaStationPinning, EachProcessTakesItsCpuSlotsCoresFirst) {
    const SlurmNodeShape smt{.sockets = 1, .coresPerSocket = 4, .threadsPerCore = 2};
    const SlurmNodeShape flat{.sockets = 1, .coresPerSocket = 4, .threadsPerCore = 1};
    const std::vector<PinCase> cases = {
        {"one slot each: a core each before any second hardware thread",
         modeled(1, smt),
         {.np = 6, .parastation = tpp(1)},
         {"n1:0@0", "n1:2@1", "n1:4@2", "n1:6@3", "n1:1@4", "n1:3@5"},
         ""},
        {"--tpp=2: two slots, two cores' first threads",
         modeled(1, smt),
         {.np = 3, .parastation = tpp(2)},
         {"n1:0,2@0-1", "n1:4,6@2-3", "n1:1,3@4-5"},
         ""},
        {"--loop-nodes-first: each node's processes count its own slots",
         modeled(2, flat),
         {.np = 4, .parastation = loop()},
         {"n1:0@0", "n2:0@0", "n1:1@1", "n2:1@1"},
         ""},
        {"overbooked: the slots in turn, k or k+1 processes each",
         modeled(1, SlurmNodeShape{.sockets = 1, .coresPerSocket = 2, .threadsPerCore = 1}),
         {.np = 5, .overbook = true, .parastation = fromEnvironment({})},
         {"n1:0@0", "n1:1@1", "n1:0@0", "n1:1@1", "n1:0@0"},
         ""},
        {"the job's CPUs only: cores 1 and 3 held",
         modeled(1, flat, {1, 3}),
         {.parastation = tpp(1)},
         {"n1:1@1", "n1:3@3"},
         ""},
        {"__PSI_NO_PINPROC: unbound",
         modeled(1, flat),
         {.np = 2, .parastation = unpinned(tpp(1))},
         {"n1:-", "n1:-"},
         ""},
        {"--bind-to none: unbound",
         modeled(1, flat),
         {.np = 2, .bind = parseBindTo("none").value(), .parastation = tpp(1)},
         {"n1:-", "n1:-"},
         ""},
        {"no hardware known: unbound",
         allocation({{"n1", 4}}),
         {.np = 2, .parastation = tpp(1)},
         {"n1:-", "n1:-"},
         ""},
        {"__PSI_CPUMAP orders the slots",
         modeled(1, flat),
         {.np = 3, .parastation = withCpuMap(tpp(1), {3, 1, 0, 2})},
         {"n1:3@3", "n1:1@1", "n1:0@0"},
         ""},
        {"__PSI_CPUMAP naming a CPU the job does not hold",
         modeled(1, flat, {0, 1}),
         {.np = 1, .parastation = withCpuMap(tpp(1), {0, 2})},
         {},
         "__PSI_CPUMAP maps CPU-slot 1 to CPU 2, which the job does not hold on n1 (it holds "
         "CPUs 0-1).\nList only CPUs of the job on every node, or unset __PSI_CPUMAP for the "
         "default order (physical cores first)."},
        {"__PSI_CPUMAP too short for the node's processes",
         modeled(1, flat),
         {.np = 2, .parastation = withCpuMap(tpp(1), {2})},
         {},
         "__PSI_CPUMAP lists 1 CPU-slots, but n1 runs 2 processes of 1 CPU-slots each.\nList "
         "at least 2 CPUs, or run fewer processes there."},
        {"__PSI_CPUMAP shared when overbooking",
         modeled(1, flat),
         {.np = 6, .overbook = true, .parastation = withCpuMap(fromEnvironment({}), {2, 0})},
         {"n1:2@2", "n1:0@0", "n1:2@2", "n1:0@0", "n1:2@2", "n1:0@0"},
         ""},
    };
    for (const PinCase &c : cases) {
        SCOPED_TRACE(c.name);
        const auto plan = makeParaStationPlan(c.allocation, c.request);
        if (!c.error.empty()) {
            ASSERT_FALSE(plan.ok());
            EXPECT_EQ(plan.error().message, c.error);
            continue;
        }
        ASSERT_TRUE(plan.ok()) << plan.error().message;
        EXPECT_EQ(pinnedPerRank(plan.value()), c.expected);
        // A map names CPUs the step must hold; the default order narrows to it.
        EXPECT_EQ(plan->bindingRequest, c.request.parastation.cpuMap.empty()
                                            ? BindingRequest::Default
                                            : BindingRequest::Cpus);
    }
}

// Planning asks srun for the nodes' hardware exactly when it will pin.
TEST(ParaStationPinning, PinningNeedsTheNodesHardware) {
    EXPECT_TRUE(needsHardware({.parastation = tpp(2)}));
    EXPECT_TRUE(needsHardware({.parastation = loop()}));
    EXPECT_FALSE(needsHardware({.parastation = unpinned(tpp(2))}));
    EXPECT_FALSE(needsHardware({.bind = parseBindTo("none").value(), .parastation = loop()}));
    EXPECT_FALSE(needsHardware({.overbook = true})); // mpirun's --overbook policy: no pinning
}

} // namespace
} // namespace stepmap
