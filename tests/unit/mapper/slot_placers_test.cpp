// Placement by slot counts alone (placement/rank_mappers.hpp) and the
// engine's even split of processes past the slots: table-driven.

#include "placement/rank_mappers.hpp"

#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "placement/placement.hpp"

namespace stepmap::detail {
namespace {

std::vector<NodeSlots> slots(std::vector<std::pair<int, std::optional<int>>> counts) {
    static const std::vector<std::string> names = {"a", "b", "c", "d"};
    std::vector<NodeSlots> out;
    for (std::size_t i = 0; i < counts.size(); ++i)
        out.push_back(NodeSlots{static_cast<std::uint32_t>(i), names.at(i), counts[i].first,
                                counts[i].first, counts[i].first, counts[i].second});
    return out;
}

TEST(SlotPlacers, FillSlots) {
    struct Row {
        std::vector<std::pair<int, std::optional<int>>> nodes;
        int np;
        RankNodes expected;
    };
    const std::vector<Row> rows = {
        {{{2, {}}, {3, {}}}, 5, {0, 0, 1, 1, 1}},
        {{{2, {}}, {3, {}}}, 3, {0, 0, 1}},
        {{{0, {}}, {2, {}}}, 2, {1, 1}},
        {{{4, {}}}, 0, {}},
    };
    for (const Row &row : rows)
        EXPECT_EQ(fillSlots(slots(row.nodes), row.np), row.expected);
}

TEST(SlotPlacers, EvenShares) {
    struct Row {
        std::vector<std::int64_t> headroom;
        std::int64_t remaining;
        std::vector<std::int64_t> expected;
    };
    const std::vector<Row> rows = {
        {{10, 10, 10}, 7, {3, 2, 2}},
        {{1, 10, 10}, 7, {1, 3, 3}},
        {{0, 5}, 5, {0, 5}},
        {{2, 2}, 4, {2, 2}},
    };
    for (const Row &row : rows)
        EXPECT_EQ(evenShares(row.headroom, row.remaining), row.expected);
}

TEST(SlotPlacers, EvenSplit) {
    struct Row {
        std::uint32_t remaining;
        std::uint32_t nodes;
        std::vector<std::uint32_t> expected;
    };
    const std::vector<Row> rows = {
        {7, 3, {3, 2, 2}},
        {6, 3, {2, 2, 2}},
        {2, 4, {1, 1, 0, 0}},
    };
    for (const Row &row : rows) {
        EvenSplit split(row.remaining, row.nodes);
        std::vector<std::uint32_t> shares;
        for (std::uint32_t n = 0; n < row.nodes; ++n)
            shares.push_back(split.next());
        EXPECT_EQ(shares, row.expected);
    }
}

TEST(SlotPlacers, MapByNode) {
    struct Row {
        std::vector<std::pair<int, std::optional<int>>> nodes;
        int np;
        bool oversubscribe;
        RankNodes expected;
        std::string error;
    };
    const std::vector<Row> rows = {
        {{{2, {}}, {1, {}}}, 3, false, {0, 1, 0}, ""},
        {{{1, {}}, {1, {}}}, 4, true, {0, 1, 0, 1}, ""},
        {{{1, 2}, {1, {}}}, 5, true, {0, 1, 0, 1, 1}, ""},
        {{{1, {}}, {1, {}}},
         3,
         false,
         {},
         "There are not enough slots available in the system to satisfy the 3 slots that were "
         "requested by the application: the selected nodes have 2 slots.\nEither request fewer "
         "procs for your application, or use --map-by :OVERSUBSCRIBE (or --overbook) to run more "
         "procs than slots."},
        {{{1, 1}, {1, 2}},
         4,
         true,
         {},
         "There are not enough slots available in the system to satisfy the 4 slots that were "
         "requested by the application, even oversubscribed: the max_slots limits of the "
         "selected nodes allow at most 3 procs.\nEither request fewer procs for your "
         "application, or raise max_slots in the hostfile."},
    };
    for (const Row &row : rows) {
        auto out = mapByNode(slots(row.nodes), row.np, row.oversubscribe);
        if (row.error.empty()) {
            ASSERT_TRUE(out.ok()) << out.error().message;
            EXPECT_EQ(out.value(), row.expected);
        } else {
            ASSERT_FALSE(out.ok());
            EXPECT_EQ(out.error().message, row.error);
        }
    }
}

} // namespace
} // namespace stepmap::detail
