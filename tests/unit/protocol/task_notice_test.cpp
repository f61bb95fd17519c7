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
