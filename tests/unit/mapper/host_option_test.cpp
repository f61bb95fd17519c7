#include "hosts/host_list.hpp"

#include <optional>
#include <string>
#include <vector>

#include <gtest/gtest.h>

namespace stepmap {
namespace {

constexpr std::optional<int> kSlurm = std::nullopt; // no cap: Slurm's slots

HostEntry entry(std::string name, std::optional<int> slots, std::optional<int> maxSlots = {}) {
    return HostEntry{std::move(name), slots, maxSlots};
}

struct OptionCase {
    std::string value;
    HostSpec expected;
};

TEST(ParseHostOption, ParsesFiltersCapsAndExclusions) {
    const std::vector<OptionCase> cases = {
        {"a", {false, {entry("a", kSlurm)}}},
        {"a,b:2,c:3", {false, {entry("a", kSlurm), entry("b", 2), entry("c", 3)}}},
        // seed 002: a repeated name adds up, a mention without :N counting 1.
        {"a:2,a", {false, {entry("a", 3)}}},
        {"node01.example.com:2,node01.example.com", {false, {entry("node01.example.com", 3)}}},
        {"a,a", {false, {entry("a", 2)}}},
        {"b,a,b", {false, {entry("b", 2), entry("a", kSlurm)}}},
        // Hostlist ranges: every expanded name gets the :N.
        {"n[1-2]:2", {false, {entry("n1", 2), entry("n2", 2)}}},
        {"n[1,3]:2,x", {false, {entry("n1", 2), entry("n3", 2), entry("x", kSlurm)}}},
        {"n[1-2],n1:4", {false, {entry("n1", 5), entry("n2", kSlurm)}}},
        // seed 000 "SUPPORT FOR !^": the !^ covers the whole list.
        {"!^foo,bar,baz",
         {true, {entry("foo", kSlurm), entry("bar", kSlurm), entry("baz", kSlurm)}}},
        {"!^n[1-2]", {true, {entry("n1", kSlurm), entry("n2", kSlurm)}}},
        {"!^a,a", {true, {entry("a", 2)}}},
        // Relative nodes are kept for the planner to resolve.
        {"+n0,+n2:3", {false, {entry("+n0", kSlurm), entry("+n2", 3)}}},
    };
    for (const OptionCase &c : cases) {
        const auto spec = parseHostOption(c.value);
        ASSERT_TRUE(spec.ok()) << c.value << ": " << spec.error().message;
        EXPECT_EQ(spec.value(), c.expected) << c.value;
    }
}

struct ErrorCase {
    std::string value;
    std::string message;
};

TEST(ParseHostOption, RejectsBadValuesNamingThem) {
    const std::vector<ErrorCase> cases = {
        {"", "--host: empty host list (expected e.g. --host a,b:2 or --host '!^a')"},
        {"!^", "--host '!^': no hosts listed after '!^'"},
        {"a,,b", "--host 'a,,b': empty entry (check for a stray ',')"},
        {"a,", "--host 'a,': empty entry (check for a stray ',')"},
        {"a:x,b", "--host 'a:x,b': 'a:x' has an invalid slot count 'x' (expected NAME or NAME:N "
                  "with N a positive number)"},
        {"a:0", "--host 'a:0': 'a:0' has an invalid slot count '0' (expected NAME or NAME:N with "
                "N a positive number)"},
        {"a:", "--host 'a:': 'a:' has an invalid slot count '' (expected NAME or NAME:N with N a "
               "positive number)"},
        {"a:-1", "--host 'a:-1': 'a:-1' has an invalid slot count '-1' (expected NAME or NAME:N "
                 "with N a positive number)"},
        {"!^a:2", "--host '!^a:2': 'a:2': an excluded host takes no slot count"},
        {"n[1-", "--host 'n[1-': invalid hostlist 'n[1-': missing ']'"},
        {"a b", "--host 'a b': invalid hostlist 'a b': invalid character ' '"},
        {":2", "--host ':2': invalid hostlist '': it is empty"},
        {"+e:2", "--host '+e:2': relative host '+e': empty-node requests (+e) are not supported "
                 "yet; name the nodes or use +n<i> for the i-th allocated node"},
        {"+x", "--host '+x': invalid relative host '+x' (expected +n<i>, the i-th allocated node "
               "counting from 0)"},
        {"a:16777216,a:1", "--host 'a:16777216,a:1': host a: the slot counts add up to "
                           "16777217, above 16777216, the most processes stepmap places"},
        // Numbers too large say the limit.
        {"n1:99999999999999", "--host 'n1:99999999999999': 'n1:99999999999999': the slot count "
                              "is above 16777216, the most processes stepmap places"},
        {"n1:16777217", "--host 'n1:16777217': 'n1:16777217': the slot count is above 16777216, "
                        "the most processes stepmap places"},
        // Names are counted over the whole list before they are made.
        {"n[0-999999],m[0-999999]",
         "--host 'n[0-999999],m[0-999999]': invalid hostlist 'm[0-999999]': with the 1000000 "
         "names before it, the names come to more than 1048576"},
        {std::string("a\x1b]0;title\x07"), "--host 'a\\x1b]0;title\\x07': invalid hostlist "
                                           "'a\\x1b]0;title\\x07': invalid character '\\x1b'"},
    };
    for (const ErrorCase &c : cases) {
        const auto spec = parseHostOption(c.value);
        ASSERT_FALSE(spec.ok()) << c.value;
        EXPECT_EQ(spec.error().message, c.message);
    }
}

} // namespace
} // namespace stepmap
