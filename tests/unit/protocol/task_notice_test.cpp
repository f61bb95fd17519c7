// Task notices on the ready socket (protocol/ready/task_notice.hpp):
// what slurmstepd writes, the server reads back; anything else is ignored.

#include "protocol/ready/task_notice.hpp"

#include <gtest/gtest.h>

using namespace stepmap::ready;

TEST(TaskNotice, RoundTrip) {
    EXPECT_EQ(encodeTaskExit({7, 139}), "X 7 139\n");
    auto back = decodeTaskExit("X 7 139");
    ASSERT_TRUE(back);
    EXPECT_EQ(back->rank, 7u);
    EXPECT_EQ(back->status, 139);
}

TEST(TaskNotice, AHoldRoundTripsAndIsBounded) {
    EXPECT_EQ(encodeTaskHold({100, 250}), "H 100 250\n");
    auto back = decodeTaskHold("H 100 250");
    ASSERT_TRUE(back);
    EXPECT_EQ(back->forkedUsec, 100);
    EXPECT_EQ(back->releasedUsec, 250);
    for (const char *line :
         {"H 100", "H 0 5", "H 250 100", "H 1 3600000002", "H 1 2 ", "H -1 2", "X 1 2"})
        EXPECT_FALSE(decodeTaskHold(line)) << line;
    TaskNoticeReader reader;
    std::vector<TaskExit> exits;
    std::vector<TaskHold> holds;
    EXPECT_TRUE(reader.feed("H 5 9\nX 3 4\n", exits, &holds));
    ASSERT_EQ(holds.size(), 1u);
    EXPECT_EQ(holds[0].releasedUsec, 9);
    ASSERT_EQ(exits.size(), 1u);
}

TEST(TaskNotice, MalformedLinesAreIgnored) {
    for (const char *line : {"", "X", "X 1", "Y 1 2", "X 1 2 ", "X 1 2x", "X a 2"})
        EXPECT_FALSE(decodeTaskExit(line)) << line;
}

TEST(TaskNotice, ReaderJoinsSplitLines) {
    TaskNoticeReader reader;
    std::vector<TaskExit> out;
    EXPECT_TRUE(reader.feed("X 1 ", out));
    EXPECT_TRUE(out.empty());
    EXPECT_TRUE(reader.feed("2\nbad\nX 3 4\n", out));
    ASSERT_EQ(out.size(), 2u);
    EXPECT_EQ(out[0].rank, 1u);
    EXPECT_EQ(out[0].status, 2);
    EXPECT_EQ(out[1].rank, 3u);
    EXPECT_EQ(out[1].status, 4);
}

TEST(TaskNotice, ReaderGivesUpOnAnEndlessLine) {
    TaskNoticeReader reader;
    std::vector<TaskExit> out;
    EXPECT_TRUE(reader.feed(std::string(64, 'x'), out));
    EXPECT_FALSE(reader.feed("x", out));
    EXPECT_TRUE(out.empty());
}
