// parseIndexList (step_topology.hpp): Slurm's core lists, through the
// mapper's one id-list parser, with this library's message.

#include "step_topology.hpp"

#include <string>
#include <vector>

#include <gtest/gtest.h>

namespace stepmap::topology {
namespace {

TEST(ParseIndexList, ExpandsInTheOrderWritten) {
    EXPECT_EQ(parseIndexList("0-1,4").value(), (std::vector<unsigned>{0, 1, 4}));
    EXPECT_EQ(parseIndexList("3,1-2,1").value(), (std::vector<unsigned>{3, 1, 2, 1}));
    EXPECT_EQ(parseIndexList("4294967295").value(), (std::vector<unsigned>{4294967295u}));
    EXPECT_EQ(parseIndexList("0-1048576").value().size(), 1048577u);
}

TEST(ParseIndexList, RefusesWhatIsNoList) {
    for (const std::string text :
         {"", "a", "1,", "2-1", "1-2-3", "4294967296", "0-1048577", "0-1048576,0"}) {
        const auto parsed = parseIndexList(text);
        ASSERT_FALSE(parsed.ok()) << text;
        EXPECT_EQ(parsed.error().message, "bad index list '" + text + "'");
    }
}

} // namespace
} // namespace stepmap::topology
