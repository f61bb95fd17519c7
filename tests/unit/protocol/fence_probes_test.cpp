// The fence deadline's verdict: which nodes a stuck fence waits for.

#include "protocol/hub/fence_probes.hpp"

#include <gtest/gtest.h>

using namespace stepmap::hub;

TEST(FenceNodes, NamesAsEveryNodeOfTheFenceWritesThem) {
    EXPECT_EQ(fenceNodes("0,1,3,#2", 4), (std::vector<std::uint32_t>{0, 1, 3}));
    EXPECT_EQ(fenceNodes("all#7", 3), (std::vector<std::uint32_t>{0, 1, 2}));
    for (const char *bad : {"#1", "0,1,#", "0,1,#x", "1,0,#1", "0,4,#1", "0,1#1", "0,,1,#1", "0,1,",
                            "a,#1", "al#1", "all#x"})
        EXPECT_FALSE(fenceNodes(bad, 4)) << bad;
}

TEST(FenceProbes, TheNodesThatNeverEnteredAreNamed) {
    FenceProbes probes({"n1", "n2", "n3", "n4"}, 300, 64);
    auto start = probes.stuck("0,1,2,3,#0", {0, 1, 2, 3}, {0, 1, 2, 3});
    EXPECT_EQ(start.ask, (std::vector<std::uint32_t>{0, 1, 2, 3}));
    EXPECT_FALSE(start.verdict);
    EXPECT_FALSE(probes.answer("0,1,2,3,#0", 0, true, true));
    EXPECT_FALSE(probes.answer("0,1,2,3,#0", 3, false, false));
    EXPECT_FALSE(probes.answer("0,1,2,3,#0", 3, false, false)); // answered already
    EXPECT_FALSE(probes.answer("0,1,2,3,#0", 1, false, false));
    auto verdict = probes.answer("0,1,2,3,#0", 2, true, true);
    ASSERT_TRUE(verdict);
    EXPECT_EQ(*verdict, "a fence of 4 nodes did not complete in 300 s (fence_timeout=): n2, n4 "
                        "have not entered it (a rank there has not reached MPI_Init's exchange "
                        "or the fence, e.g. MPI_Barrier, the others wait in)");
}

TEST(FenceProbes, ANodeWithoutAServerCannotHaveEnteredIt) {
    FenceProbes probes({}, 5, 64);
    auto start = probes.stuck("0,1,#3", {0, 1}, {});
    EXPECT_TRUE(start.ask.empty());
    ASSERT_TRUE(start.verdict);
    EXPECT_NE(start.verdict->find("node index 0, node index 1 have not entered it"),
              std::string::npos)
        << *start.verdict;
}

TEST(FenceProbes, EveryNodeInsideIsSaidToo) {
    FenceProbes probes({"n1", "n2"}, 5, 64);
    probes.stuck("0,1,#0", {0, 1}, {0, 1});
    probes.answer("0,1,#0", 0, true, true);
    auto verdict = probes.answer("0,1,#0", 1, true, true);
    ASSERT_TRUE(verdict);
    EXPECT_EQ(*verdict, "a fence of 2 nodes did not complete in 5 s (fence_timeout=): every node "
                        "entered it, yet it did not complete between them");
}

TEST(FenceProbes, OneProbeAFenceAndABoundOnThem) {
    FenceProbes probes({}, 5, 1);
    EXPECT_EQ(probes.stuck("0,1,#0", {0, 1}, {0, 1}).ask.size(), 2u);
    EXPECT_TRUE(probes.stuck("0,1,#0", {0, 1}, {0, 1}).ask.empty()); // probed already
    EXPECT_TRUE(probes.stuck("0,1,#1", {0, 1}, {0, 1}).ask.empty()); // too many
    EXPECT_FALSE(probes.answer("9,#0", 0, true, true));              // never asked
}

TEST(FenceProbes, AFenceThatCompletedLateEndsNothing) {
    FenceProbes probes({"n1", "n2"}, 5, 64);
    probes.stuck("0,1,#0", {0, 1}, {0, 1});
    // n1 still waits, n2 has seen it complete (just after the deadline).
    EXPECT_FALSE(probes.answer("0,1,#0", 0, true, true));
    EXPECT_FALSE(probes.answer("0,1,#0", 1, true, false));
    // The probe is over: a second report of the fence starts a new one.
    EXPECT_EQ(probes.stuck("0,1,#0", {0, 1}, {0, 1}).ask.size(), 2u);
}
