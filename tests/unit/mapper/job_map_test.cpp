#include "plan/job_map.hpp"

#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "plan_helpers.hpp"
#include "planner/planner.hpp"

namespace stepmap {
namespace {

using test::allocation;
using test::hostfile;
using test::mapBy;

// PRRTE's goldens print "Total slots allocated N" with the number replaced.
std::string normalizeTotal(std::string map) {
    const std::string label = "Total slots allocated ";
    const std::size_t at = map.find(label);
    if (at == std::string::npos)
        return map;
    const std::size_t digits = at + label.size();
    const std::size_t end = map.find_first_not_of("0123456789", digits);
    return map.substr(0, digits) + "N" + map.substr(end);
}

std::vector<std::string> linesStartingWith(const std::string &text, const std::string &prefix) {
    std::vector<std::string> lines;
    std::istringstream in(text);
    for (std::string line; std::getline(in, line);) {
        if (line.rfind(prefix, 0) == 0)
            lines.push_back(line);
    }
    return lines;
}

const Allocation kEven = allocation({{"node0", 8}, {"node1", 8}, {"node2", 8}});
const std::string kJobId = "prterun-JOBID@N";

// tests/fixtures/prrte-offline/golden/test-topo/
// matrix.test-topo.even.m-slot.r-slot.b-none.n7.map (hosts node0:8,node1:8,
// node2:8, -n 7, --map-by slot --rank-by slot --bind-to none), verbatim.
const std::string kGoldenSlotN7 =
    "\n"
    "========================   JOB MAP   ========================\n"
    "Data for JOB prterun-JOBID@N offset 0 Total slots allocated N\n"
    "    Mapping policy: BYSLOT:NOOVERSUBSCRIBE  Ranking policy: SLOT Binding policy: NONE\n"
    "    Cpu set: N/A  PPR: N/A  Cpus-per-rank: N/A  Cpu Type: CORE\n"
    "\n"
    "\n"
    "Data for node: node0\tNum slots: 8\tMax slots: 0\tNum procs: 7\n"
    "        Process jobid: prterun-JOBID@N App: 0 Process rank: 0 Bound: N/A\n"
    "        Process jobid: prterun-JOBID@N App: 0 Process rank: 1 Bound: N/A\n"
    "        Process jobid: prterun-JOBID@N App: 0 Process rank: 2 Bound: N/A\n"
    "        Process jobid: prterun-JOBID@N App: 0 Process rank: 3 Bound: N/A\n"
    "        Process jobid: prterun-JOBID@N App: 0 Process rank: 4 Bound: N/A\n"
    "        Process jobid: prterun-JOBID@N App: 0 Process rank: 5 Bound: N/A\n"
    "        Process jobid: prterun-JOBID@N App: 0 Process rank: 6 Bound: N/A\n";

TEST(FormatJobMap, MatchesPrrteGoldenForMapBySlot) {
    const PlanRequest request{.np = 7, .map = mapBy("slot")};
    const auto plan = makePlan(kEven, request);
    ASSERT_TRUE(plan.ok());
    EXPECT_EQ(normalizeTotal(formatJobMap(plan.value(), jobMapHeader(request, kJobId))),
              kGoldenSlotN7);
}

// matrix.test-topo.even.m-node.r-slot.b-none.n7.map: the golden ranks by
// slot (node0 0-2, node1 3-4, node2 5-6); stepmap ranks in placement order
// (the seed 002 rule), node0 0,3,6, node1 1,4, node2 2,5. The per-node lines
// agree.
TEST(FormatJobMap, MatchesPrrteGoldenNodeLinesForMapByNode) {
    const PlanRequest request{.np = 7, .map = mapBy("node")};
    const auto plan = makePlan(kEven, request);
    ASSERT_TRUE(plan.ok());
    const std::string map = formatJobMap(plan.value(), jobMapHeader(request, kJobId));
    EXPECT_EQ(linesStartingWith(map, "Data for node:"),
              (std::vector<std::string>{
                  "Data for node: node0\tNum slots: 8\tMax slots: 0\tNum procs: 3",
                  "Data for node: node1\tNum slots: 8\tMax slots: 0\tNum procs: 2",
                  "Data for node: node2\tNum slots: 8\tMax slots: 0\tNum procs: 2",
              }));
    EXPECT_NE(map.find("    Mapping policy: BYNODE:NOOVERSUBSCRIBE  Ranking policy: NODE "
                       "Binding policy: NONE\n"),
              std::string::npos);
}

TEST(FormatJobMap, PrintsEveryNodeAndRank) {
    const PlanRequest request{.np = 5,
                              .hostfile = hostfile("n2 slots=2 max_slots=4\nn1\n"),
                              .map = mapBy("node:OVERSUBSCRIBE")};
    const auto plan = makePlan(allocation({{"n1", 1}, {"n2", 2}}), request);
    ASSERT_TRUE(plan.ok()) << plan.error().message;
    EXPECT_EQ(formatJobMap(plan.value(), jobMapHeader(request, "1234.0")),
              "\n"
              "========================   JOB MAP   ========================\n"
              "Data for JOB 1234.0 offset 0 Total slots allocated 3\n"
              "    Mapping policy: BYNODE:OVERSUBSCRIBE  Ranking policy: NODE Binding policy: "
              "NONE\n"
              "    Cpu set: N/A  PPR: N/A  Cpus-per-rank: N/A  Cpu Type: CORE\n"
              "\n"
              "\n"
              "Data for node: n2\tNum slots: 2\tMax slots: 4\tNum procs: 3\n"
              "        Process jobid: 1234.0 App: 0 Process rank: 0 Bound: N/A\n"
              "        Process jobid: 1234.0 App: 0 Process rank: 2 Bound: N/A\n"
              "        Process jobid: 1234.0 App: 0 Process rank: 3 Bound: N/A\n"
              "\n"
              "Data for node: n1\tNum slots: 1\tMax slots: 0\tNum procs: 2\n"
              "        Process jobid: 1234.0 App: 0 Process rank: 1 Bound: N/A\n"
              "        Process jobid: 1234.0 App: 0 Process rank: 4 Bound: N/A\n");
}

TEST(FormatJobMap, DefaultHeaderSaysNotAvailable) {
    const auto plan = makePlan(allocation({{"n1", 1}}), {});
    ASSERT_TRUE(plan.ok());
    EXPECT_EQ(formatJobMap(plan.value()),
              "\n"
              "========================   JOB MAP   ========================\n"
              "Data for JOB N/A offset 0 Total slots allocated 1\n"
              "    Mapping policy: N/A  Ranking policy: N/A Binding policy: NONE\n"
              "    Cpu set: N/A  PPR: N/A  Cpus-per-rank: N/A  Cpu Type: CORE\n"
              "\n"
              "\n"
              "Data for node: n1\tNum slots: 1\tMax slots: 0\tNum procs: 1\n"
              "        Process jobid: N/A App: 0 Process rank: 0 Bound: N/A\n");
}

TEST(JobMapHeader, NamesThePolicies) {
    EXPECT_EQ(jobMapHeader({}, "j").mappingPolicy, "BYSLOT:NOOVERSUBSCRIBE");
    EXPECT_EQ(jobMapHeader({.map = mapBy(":OVERSUBSCRIBE")}, "j").mappingPolicy,
              "BYSLOT:OVERSUBSCRIBE");
    EXPECT_EQ(jobMapHeader({.map = mapBy("node")}, "j").rankingPolicy, "NODE");
    EXPECT_EQ(jobMapHeader({.overbook = true}, "j").mappingPolicy, "BYSLOT:OVERBOOK");
    EXPECT_EQ(jobMapHeader({}, "j").rankingPolicy, "SLOT");
    EXPECT_EQ(jobMapHeader({}, "j").jobId, "j");
}

} // namespace
} // namespace stepmap
