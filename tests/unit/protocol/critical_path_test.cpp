// srun -v's breakdown of a step (timeline/critical_path.hpp): the lines a
// user reads to see where the start-up went, per phase the median over the
// nodes and the slowest node.

#include "protocol/timeline/critical_path.hpp"

#include <gtest/gtest.h>

#include <algorithm>

using namespace stepmap::timeline;

namespace {

constexpr std::int64_t kStart = 1'700'000'000'000'000; // srun started

// A node's timeline, its marks in ms after srun started.
std::vector<Event> node(double launched, double running, double topology, double pmix, double ready,
                        double joined, double fenceIn, double fenceDone, double leaving) {
    auto at = [](double ms) { return kStart + static_cast<std::int64_t>(ms * 1000); };
    return {{Mark::Launched, 0, at(launched)},
            {Mark::Running, 0, at(running)},
            {Mark::TopologyLoaded, 0, at(topology)},
            {Mark::PmixRegistered, 0, at(pmix)},
            {Mark::Ready, 0, at(ready)},
            {Mark::Joined, 0, at(joined)},
            {Mark::FenceEntered, 0, at(fenceIn)},
            {Mark::FenceDone, 0, at(fenceDone)},
            {Mark::Leaving, 0, at(leaving)}};
}

SrunMarks srun() {
    SrunMarks s;
    s.started = kStart;
    s.planMs = 1.25;
    s.allocationMs = 12;
    s.stepCreated = kStart + 40'000;
    s.hubOpen = kStart + 42'500;
    s.exiting = kStart + 900'000;
    return s;
}

} // namespace

TEST(CriticalPath, EachPhaseShowsTheMedianAndTheSlowestNode) {
    std::map<std::uint32_t, std::vector<Event>> nodes;
    nodes[0] = node(200, 210, 230, 250, 251, 255, 500, 501, 700);
    nodes[1] = node(210, 230, 270, 300, 302, 310, 520, 521, 720);
    nodes[2] = node(205, 215, 240, 262, 263, 270, 510, 521.5, 710);
    auto lines = describeCriticalPath(srun(), nodes, {"n1", "n2", "n3"}, 3);
    std::vector<std::string> expected = {
        "critical path in ms after srun's start (per node: the median, then the slowest node; "
        "3 of 3 node servers reported):",
        "  srun: planned in 1.2 (Slurm granted the job after 12.0), step created +40.0, "
        "rendezvous open +42.5",
        "  node server start: slurmstepd starts it +205.0 (slowest n2 +210.0); to main() 10.0 "
        "(slowest n2 20.0), topology 25.0 (slowest n2 40.0), PMIx and namespace 22.0 (slowest "
        "n2 30.0), report to slurmstepd 1.0 (slowest n2 2.0); ready +263.0 (slowest n2 +302.0)",
        "  rendezvous: joined 7.0 (slowest n2 8.0) after ready",
        "  ranks: from ready to their first fence 247.0 (slowest n1 249.0)",
        "  fence 1: last node in +520.0 (n2), then done in 1.0 (slowest n3 1.5)",
        "  teardown: from the last fence to the server's stop 199.0 (slowest n2 199.0); servers "
        "stop +710.0 (slowest n2 +720.0)",
        "  srun's exit hook +900.0"};
    EXPECT_EQ(lines, expected);
}

TEST(CriticalPath, TheTasksHoldBeforeExecIsShownPerNode) {
    std::map<std::uint32_t, std::vector<Event>> nodes;
    auto at = [](double ms) { return kStart + static_cast<std::int64_t>(ms * 1000); };
    nodes[0] = node(200, 210, 230, 250, 251, 255, 500, 501, 700);
    nodes[1] = node(210, 230, 270, 300, 302, 310, 520, 521, 720);
    nodes[0].push_back({Mark::TasksForked, 0, at(240)});
    nodes[0].push_back({Mark::TasksReleased, 0, at(252)});
    nodes[1].push_back({Mark::TasksForked, 0, at(301)});
    nodes[1].push_back({Mark::TasksReleased, 0, at(303.5)});
    auto lines = describeCriticalPath(srun(), nodes, {"n1", "n2"}, 2);
    ASSERT_GE(lines.size(), 4u);
    EXPECT_EQ(lines[3], "  tasks: forked +240.0 (slowest n2 +301.0), held before exec for the "
                        "server 2.5 (slowest n1 12.0)");
    // Without the marks (a contained user_init waits itself) no such line.
    nodes[0].resize(9);
    nodes[1].resize(9);
    for (const auto &line : describeCriticalPath(srun(), nodes, {"n1", "n2"}, 2))
        EXPECT_EQ(line.find("held before exec"), std::string::npos) << line;
}

TEST(CriticalPath, NodesThatDidNotReportAreCountedAndLeftOut) {
    std::map<std::uint32_t, std::vector<Event>> nodes;
    nodes[1] = node(200, 210, 230, 250, 251, 255, 500, 501, 700);
    auto lines = describeCriticalPath(srun(), nodes, {"n1", "n2"}, 2);
    ASSERT_GE(lines.size(), 3u);
    EXPECT_NE(lines[0].find("1 of 2 node servers reported"), std::string::npos);
    EXPECT_EQ(lines[4], "  ranks: from ready to their first fence 249.0 (n2)");
}

TEST(CriticalPath, WithoutAnyServerOnlySrunsPartIsShown) {
    auto lines = describeCriticalPath(srun(), {}, {"n1"}, 1);
    ASSERT_EQ(lines.size(), 3u);
    EXPECT_NE(lines[0].find("0 of 1 node servers reported"), std::string::npos);
    EXPECT_EQ(lines[2], "  srun's exit hook +900.0");
}

// With a profile, a server joins before it registers and waits there for
// every node's say: the wait shows as its own line, not as a join after ready.
TEST(CriticalPath, TheProfileRendezvousShowsWhatItCost) {
    std::map<std::uint32_t, std::vector<Event>> nodes;
    auto at = [](double ms) { return kStart + static_cast<std::int64_t>(ms * 1000); };
    nodes[0] = node(200, 210, 230, 260, 261, 235, 500, 501, 700);
    nodes[0].push_back({Mark::ProfileAgreed, 0, at(250)});
    nodes[1] = node(210, 230, 240, 270, 272, 244, 520, 521, 720);
    nodes[1].push_back({Mark::ProfileAgreed, 0, at(250)});
    auto lines = describeCriticalPath(srun(), nodes, {"n1", "n2"}, 2);
    ASSERT_GE(lines.size(), 4u);
    // Of two nodes, the median is the lower.
    EXPECT_EQ(lines[3], "  profile rendezvous (part of PMIx and namespace above): joined 4.0 "
                        "(slowest n1 5.0) after topology, every node's say in 10.0 (slowest n1 "
                        "20.0)");
}

// The timelines come from the network: a fence index far beyond what a node
// server records must not make srun print (and loop over) that many fences
// at exit. The small index comes first, so a regression fails at once
// rather than spending hours on 2^32 fences.
TEST(CriticalPath, FencesBeyondWhatAServerRecordsAreLeftOut) {
    const std::uint32_t indices[] = {Recorder::kMaxFences, Recorder::kMaxFences + 4, 0xfffffffe,
                                     0xffffffff};
    std::map<std::uint32_t, std::vector<Event>> honest;
    honest[0] = node(200, 210, 230, 250, 251, 255, 500, 501, 700);
    const auto expected = describeCriticalPath(srun(), honest, {"n1"}, 1);
    for (std::uint32_t index : indices) {
        SCOPED_TRACE("fence index " + std::to_string(index));
        auto nodes = honest;
        nodes[0].push_back({Mark::FenceEntered, index, kStart + 600'000});
        nodes[0].push_back({Mark::FenceDone, index, kStart + 601'000});
        ASSERT_EQ(describeCriticalPath(srun(), nodes, {"n1"}, 1), expected);
    }
}

// The last fence a server keeps is still shown.
TEST(CriticalPath, TheLastRecordedFenceIsShown) {
    std::map<std::uint32_t, std::vector<Event>> nodes;
    nodes[0] = node(200, 210, 230, 250, 251, 255, 500, 501, 700);
    const std::uint32_t last = Recorder::kMaxFences - 1;
    nodes[0].push_back({Mark::FenceEntered, last, kStart + 600'000});
    nodes[0].push_back({Mark::FenceDone, last, kStart + 601'000});
    const auto lines = describeCriticalPath(srun(), nodes, {"n1"}, 1);
    std::size_t fenceLines = 0;
    for (const auto &line : lines)
        fenceLines += line.rfind("  fence ", 0) == 0;
    EXPECT_EQ(fenceLines, Recorder::kMaxFences);
    EXPECT_NE(std::find(lines.begin(), lines.end(),
                        "  fence 16: last node in +600.0 (n1), then done in 1.0 (n1)"),
              lines.end());
}
