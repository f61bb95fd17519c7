// parseIdRanges / expandIdRanges (base/id_list.hpp): the one parser of
// "0-3,8" lists, and the messages each of its callers words from its
// faults (parseCpuIdList's are in node_model_test.cpp).

#include "base/id_list.hpp"

#include <cstdint>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "placement/cpu_list.hpp"

namespace stepmap {
namespace {

using Ids = std::vector<std::uint32_t>;
using Kind = IdListFault::Kind;

struct ListCase {
    std::string text;
    Ids ids; // in the order written
};

TEST(ParseIdRanges, ExpandsInTheOrderWritten) {
    const IdListLimits limits{.maxId = 100, .maxCount = 10};
    const std::vector<ListCase> cases = {
        {"0", {0}},
        {"0-3,8", {0, 1, 2, 3, 8}},
        {"1,0-2", {1, 0, 1, 2}},
        {"5-5", {5}},
        {"007", {7}},
        {"100", {100}},
        {"0-9", {0, 1, 2, 3, 4, 5, 6, 7, 8, 9}},
    };
    for (const ListCase &c : cases) {
        const IdRanges parsed = parseIdRanges(c.text, limits);
        ASSERT_FALSE(parsed.fault) << c.text;
        EXPECT_EQ(parsed.count, c.ids.size()) << c.text;
        EXPECT_EQ(expandIdRanges(parsed), c.ids) << c.text;
    }
}

struct FaultCase {
    std::string text;
    Kind kind;
    std::string item;
    std::uint64_t id = 0;
};

TEST(ParseIdRanges, NamesTheFirstFaultyItem) {
    const IdListLimits limits{.maxId = 100, .maxCount = 10};
    const std::vector<FaultCase> cases = {
        {"", Kind::NotARange, ""},
        {"1,", Kind::NotARange, ""},
        {",1", Kind::NotARange, ""},
        {"1,,2", Kind::NotARange, ""},
        {"0,101", Kind::IdTooHigh, "101", 101},
        {"0-4294967295", Kind::IdTooHigh, "0-4294967295", 4294967295},
        {"0-9,10", Kind::TooMany, "10"},
        {"0-5,0-5", Kind::TooMany, "0-5"},
        {"x,0-200", Kind::NotARange, "x"},
    };
    for (const FaultCase &c : cases) {
        const IdRanges parsed = parseIdRanges(c.text, limits);
        ASSERT_TRUE(parsed.fault) << c.text;
        EXPECT_EQ(parsed.fault->kind, c.kind) << c.text;
        EXPECT_EQ(parsed.fault->item, c.item) << c.text;
        EXPECT_EQ(parsed.fault->id, c.id) << c.text;
    }
    // One item that is no range: the fault names all of it.
    for (const std::string text :
         {"a", "1-x", "3-1", "-1", "1-", "1-2-3", " 1", "+1", "0-4294967296"}) {
        const IdRanges parsed = parseIdRanges(text, limits);
        ASSERT_TRUE(parsed.fault) << text;
        EXPECT_EQ(parsed.fault->kind, Kind::NotARange) << text;
        EXPECT_EQ(parsed.fault->item, text);
    }
}

TEST(ParseIdRanges, CountsBeforeExpanding) {
    // 2^32 ids named 100 times: refused without allocating.
    std::string text = "0-4294967295";
    for (int i = 0; i < 100; ++i)
        text += ",0-4294967295";
    const IdListLimits limits{.maxId = UINT32_MAX, .maxCount = std::size_t{1} << 24};
    const IdRanges parsed = parseIdRanges(text, limits);
    ASSERT_TRUE(parsed.fault);
    EXPECT_EQ(parsed.fault->kind, Kind::TooMany);
    EXPECT_TRUE(parsed.ranges.empty());
}

struct MessageCase {
    std::string text;
    std::string message;
};

// The user's CPU lists (pe-list, rankfile and sequence-file slots): ids up
// to 2^24, at most a node's CPUs, in the order written.
TEST(ExpandIds, KeepsItsMessages) {
    EXPECT_EQ(detail::expandIds("1,0-2").value(), (Ids{1, 0, 1, 2}));
    const std::vector<MessageCase> cases = {
        {"", "CPU list '': '' is not N or N-M"},
        {"1-x", "CPU list '1-x': '1-x' is not N or N-M"},
        {"16777217", "CPU list '16777217': '16777217' is not N or N-M"},
        {"0-16777217", "CPU list '0-16777217': '0-16777217' is not N or N-M"},
        {"0-65535,0", "CPU list '0-65535,0' names more than 65536 CPUs, the most stepmap takes "
                      "for a node"},
    };
    for (const MessageCase &c : cases) {
        const auto ids = detail::expandIds(c.text);
        ASSERT_FALSE(ids.ok()) << c.text;
        EXPECT_EQ(ids.error().message, c.message);
    }
    EXPECT_EQ(detail::expandIds("16777216").value(), Ids{16777216});
}

} // namespace
} // namespace stepmap
