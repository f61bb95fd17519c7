#include "base/expected.hpp"

#include <string>
#include <vector>

#include <gtest/gtest.h>

namespace stepmap {
namespace {

TEST(Expected, HoldsValue) {
    Expected<std::vector<int>> result(std::vector<int>{1, 2});
    ASSERT_TRUE(result.ok());
    EXPECT_TRUE(static_cast<bool>(result));
    EXPECT_EQ(result.value(), (std::vector<int>{1, 2}));
    EXPECT_EQ(result->size(), 2u);
    result.value().push_back(3);
    EXPECT_EQ((*result).size(), 3u);
}

TEST(Expected, HoldsError) {
    Expected<int> result(UserError{"bad input"});
    EXPECT_FALSE(result.ok());
    EXPECT_FALSE(static_cast<bool>(result));
    EXPECT_EQ(result.error().message, "bad input");
}

TEST(Expected, ValueOfErrorAborts) {
    const Expected<std::string> result(UserError{"no"});
    EXPECT_DEATH((void)result.value(), "");
}

TEST(Expected, ErrorOfValueAborts) {
    const Expected<std::string> result(std::string("yes"));
    EXPECT_DEATH((void)result.error(), "");
}

TEST(Expected, MovesValueOut) {
    Expected<std::string> result(std::string("payload"));
    std::string taken = std::move(result).value();
    EXPECT_EQ(taken, "payload");
}

} // namespace
} // namespace stepmap
