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

Expected<void> checked(int n) {
    if (n < 0)
        return UserError{"negative: " + std::to_string(n)};
    return {};
}

TEST(ExpectedVoid, SucceedsOrCarriesTheError) {
    struct Case {
        int input;
        bool ok;
        std::string message;
    };
    const Case cases[] = {{1, true, ""}, {0, true, ""}, {-2, false, "negative: -2"}};
    for (const Case &c : cases) {
        SCOPED_TRACE(c.input);
        const Expected<void> result = checked(c.input);
        EXPECT_EQ(result.ok(), c.ok);
        EXPECT_EQ(static_cast<bool>(result), c.ok);
        if (!c.ok) {
            EXPECT_EQ(result.error().message, c.message);
        }
    }
}

TEST(ExpectedVoid, ErrorOfSuccessAborts) {
    const Expected<void> result;
    EXPECT_DEATH((void)result.error(), "");
}

} // namespace
} // namespace stepmap
