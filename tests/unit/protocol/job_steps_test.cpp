// The job hub's record of its steps (job_steps.hpp): spawned steps'
// guests, job-wide ids, the nodes of a job-wide barrier.

#include "protocol/hub/job_steps.hpp"

#include "plan/launch_plan.hpp"
#include "protocol/hub/job_ids.hpp"

#include <gtest/gtest.h>

using namespace stepmap;
using namespace stepmap::hub;

namespace {

// Ranks 0,1 on node 0 and rank 2 on node 1 of a spawned step.
std::string spawnedPlan() {
    LaunchPlan plan;
    plan.nodes = {PlannedNode{"n3", 2, {}}, PlannedNode{"n4", 1, {}}};
    plan.ranks.resize(3);
    plan.ranks[2].node = 1;
    return encodePlan(plan);
}

// A guest's first word names its step and plan; the second, that its
// ranks started, names the step alone.
wire::GuestStepMsg guest(bool started) {
    return {"child.ns", "7.1", started ? std::string() : spawnedPlan(), started};
}

} // namespace

TEST(JobSteps, ASpawnIsCompleteOnceEveryNodeOfItsStepStarted) {
    JobSteps steps("parent.ns", "", {0, 0, 1});
    auto index = steps.open(jobWide(0, 1), 99);
    ASSERT_EQ(index, 1u);
    EXPECT_TRUE(steps.mayJoin(jobWide(1, 5))); // plan not known yet
    ASSERT_EQ(steps.guestJoined(jobWide(1, 0), guest(false)).value(), false);
    EXPECT_FALSE(steps.mayJoin(jobWide(1, 5))); // now it is: two nodes
    ASSERT_EQ(steps.guestJoined(jobWide(1, 1), guest(false)).value(), false);
    ASSERT_EQ(steps.guestJoined(jobWide(1, 0), guest(true)).value(), false);
    ASSERT_EQ(steps.guestJoined(jobWide(1, 1), guest(true)).value(), true);
    auto requester = steps.answer(1);
    ASSERT_TRUE(requester);
    EXPECT_EQ(requester->node, jobWide(0, 1));
    EXPECT_EQ(requester->requestId, 99u);
    EXPECT_FALSE(steps.answer(1)); // once
    EXPECT_EQ(steps.nodeOf(jobWide(1, 2)), jobWide(1, 1));
    EXPECT_EQ(steps.nodeOf(2), 1u);
    EXPECT_FALSE(steps.nodeOf(jobWide(1, 3)));
    EXPECT_EQ(steps.indexOf("child.ns"), 1u);
    EXPECT_EQ(steps.tagOf(1), "7.1");
}

TEST(JobSteps, GuestsThatContradictTheirStepOrRepeatAreRefused) {
    JobSteps steps("parent.ns", "", {0});
    steps.open(0, 1);
    ASSERT_TRUE(steps.guestJoined(jobWide(1, 0), guest(false)));
    EXPECT_FALSE(steps.guestJoined(jobWide(1, 0), guest(false))); // twice
    EXPECT_FALSE(steps.guestJoined(jobWide(1, 1), guest(true)));  // started before joining
    auto other = guest(false);
    other.nspace = "other.ns";
    EXPECT_FALSE(steps.guestJoined(jobWide(1, 1), other));        // another namespace
    EXPECT_FALSE(steps.guestJoined(jobWide(2, 0), guest(false))); // no such spawn
    EXPECT_FALSE(steps.guestJoined(jobWide(0, 0), guest(false))); // the first step's node
    steps.open(0, 2);
    auto reused = guest(false);
    EXPECT_FALSE(steps.guestJoined(jobWide(2, 0), reused)); // step 1's namespace
}

TEST(JobSteps, ABarriersNodesComeFromItsProcessesOfEveryStep) {
    JobSteps steps("parent.ns", "", {0, 1, 1});
    steps.open(0, 1);
    ASSERT_TRUE(steps.guestJoined(jobWide(1, 0), guest(false)));
    auto nodes = steps.nodesOf({{"parent.ns", 2}, {"child.ns", kAllRanks}});
    ASSERT_TRUE(nodes);
    EXPECT_EQ(*nodes, (std::set<std::uint32_t>{1, jobWide(1, 0), jobWide(1, 1)}));
    auto entries = steps.entriesOf({{"parent.ns", 2}, {"child.ns", 0}});
    ASSERT_EQ(entries.size(), 2u);
    EXPECT_EQ(entries[1].nspace, "child.ns");
    EXPECT_EQ(entries[1].index, 1u);
    auto unknown = steps.nodesOf({{"nobody.ns", 0}});
    ASSERT_FALSE(unknown);
    EXPECT_EQ(unknown.error().message, "namespace nobody.ns is no running step of this job");
    auto beyond = steps.nodesOf({{"child.ns", 3}});
    ASSERT_FALSE(beyond);
    EXPECT_EQ(beyond.error().message, "rank 3 of child.ns does not exist (the step has 3)");
    steps.forget(1);
    EXPECT_FALSE(steps.nodesOf({{"child.ns", 0}}));
}

TEST(JobSteps, AJobSpawnsAtMostMaxSpawnedSteps) {
    JobSteps steps("p", "", {0});
    for (std::uint32_t i = 1; i <= kMaxSpawned; ++i)
        ASSERT_EQ(steps.open(0, i), i);
    EXPECT_FALSE(steps.open(0, 0));
}

// Another srun of the job names its own index; nobody waits for it.
TEST(JobSteps, AnotherSrunsStepJoinsUnderAnIndexOfItsOwn) {
    JobSteps steps("p", "", {0});
    EXPECT_TRUE(steps.mayJoin(jobWide(kFirstAttached, 0)));
    EXPECT_FALSE(steps.mayJoin(jobWide(5, 0))); // no spawn opened it
    ASSERT_EQ(steps.guestJoined(jobWide(kFirstAttached, 0), guest(false)).value(), false);
    EXPECT_EQ(steps.indexOf("child.ns"), kFirstAttached);
    EXPECT_FALSE(steps.answer(kFirstAttached));
    EXPECT_TRUE(steps.nodesOf({{"child.ns", 2}}));
}

// Connected steps, as the job-wide barriers say: a failed step ends those
// still connected to it; a disconnect (Open MPI's fence) undoes a connect.
TEST(JobSteps, ConnectsAndDisconnectsCountPerPairOfSteps) {
    JobSteps steps("p", "", {0});
    const std::vector<wire::JobStepEntry> pair = {{"p", 0, ""}, {"c", 1, ""}};
    steps.connect(pair, true);
    steps.connect(pair, true);
    steps.connect({{"c", 1, ""}, {"d", 2, ""}}, true);
    EXPECT_EQ(steps.connectedTo(1), (std::vector<std::uint32_t>{0, 2}));
    steps.connect(pair, false);
    EXPECT_EQ(steps.connectedTo(0), (std::vector<std::uint32_t>{1}));
    steps.connect(pair, false);
    EXPECT_EQ(steps.connectedTo(0), (std::vector<std::uint32_t>{}));
    steps.disconnectAll(2);
    EXPECT_EQ(steps.connectedTo(1), (std::vector<std::uint32_t>{}));
}
