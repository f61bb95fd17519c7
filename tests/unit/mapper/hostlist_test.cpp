#include "hosts/hostlist.hpp"

#include <string>
#include <vector>

#include <gtest/gtest.h>

namespace stepmap {
namespace {

using Names = std::vector<std::string>;

struct ExpandCase {
    std::string expr;
    Names names;
};

TEST(ExpandHostlist, Expands) {
    const std::vector<ExpandCase> cases = {
        {"n1", {"n1"}},
        {"login", {"login"}},
        {"n[1-4,7]", {"n1", "n2", "n3", "n4", "n7"}},
        {"c[001-003]", {"c001", "c002", "c003"}},
        {"c[098-101]", {"c098", "c099", "c100", "c101"}},
        {"n[8-10]", {"n8", "n9", "n10"}},
        {"n[09-10]", {"n09", "n10"}},
        {"a[1-2]b[3-4]", {"a1b3", "a1b4", "a2b3", "a2b4"}},
        {"x,y[1-2]", {"x", "y1", "y2"}},
        {"[1-2]", {"1", "2"}},
        {"rack[1]-node[3,1]", {"rack1-node3", "rack1-node1"}},
        {"ct-0,ct-1", {"ct-0", "ct-1"}},
        {"n1,n1", {"n1", "n1"}},
        {"node.example.com", {"node.example.com"}},
        {"n[0]", {"n0"}},
        {"gpu_[5-6].x", {"gpu_5.x", "gpu_6.x"}},
    };
    for (const ExpandCase &c : cases) {
        const auto names = expandHostlist(c.expr);
        ASSERT_TRUE(names.ok()) << c.expr << ": " << names.error().message;
        EXPECT_EQ(names.value(), c.names) << c.expr;
    }
}

struct ErrorCase {
    std::string expr;
    std::string message;
};

TEST(ExpandHostlist, RejectsMalformedExpressions) {
    const std::vector<ErrorCase> cases = {
        {"", "invalid hostlist '': it is empty"},
        {"n[1-", "invalid hostlist 'n[1-': missing ']'"},
        {"n1]", "invalid hostlist 'n1]': ']' without '['"},
        {"n[3-1]", "invalid hostlist 'n[3-1]': range '3-1' is descending"},
        {"n[a]", "invalid hostlist 'n[a]': 'a' is not a number or range of numbers (at most 9 "
                 "digits each)"},
        {"n[1-2-3]", "invalid hostlist 'n[1-2-3]': '1-2-3' is not a number or range of numbers "
                     "(at most 9 digits each)"},
        {"n[]", "invalid hostlist 'n[]': empty brackets '[]'"},
        {"n[1,]", "invalid hostlist 'n[1,]': '' is not a number or range of numbers (at most 9 "
                  "digits each)"},
        {"n[[1]]", "invalid hostlist 'n[[1]]': nested '['"},
        {"a,,b", "invalid hostlist 'a,,b': empty host name"},
        {"a,", "invalid hostlist 'a,': empty host name"},
        {"a b", "invalid hostlist 'a b': invalid character ' '"},
        {"a:2", "invalid hostlist 'a:2': invalid character ':'"},
        {"n[0000000001]", "invalid hostlist 'n[0000000001]': '0000000001' is not a number or "
                          "range of numbers (at most 9 digits each)"},
        {"n[0-2000000]", "invalid hostlist 'n[0-2000000]': it expands to more than 1048576 "
                         "names"},
        {"a[0-1023]b[0-1024]", "invalid hostlist 'a[0-1023]b[0-1024]': it expands to more "
                               "than 1048576 names"},
    };
    for (const ErrorCase &c : cases) {
        const auto names = expandHostlist(c.expr);
        ASSERT_FALSE(names.ok()) << c.expr;
        EXPECT_EQ(names.error().message, c.message) << c.expr;
    }
}

struct LimitCase {
    std::string expr;
    HostlistLimits limits;
    std::string message;
};

// Each limit is checked before the names are made: these would take
// gigabytes or minutes if they were expanded first.
TEST(ExpandHostlist, RefusesWhatWouldPassItsLimitsBeforeExpanding) {
    const std::string name255(255, 'a');
    const std::string name200(200, 'a');
    const std::vector<LimitCase> cases = {
        {"n[0-999999999]",
         {},
         "invalid hostlist 'n[0-999999999]': it expands to more than 1048576 names"},
        {"n[0-999999],n[0-999999]",
         {},
         "invalid hostlist 'n[0-999999],n[0-999999]': it expands to more than 1048576 names"},
        {"n[0-999][0-999][0-999]",
         {},
         "invalid hostlist 'n[0-999][0-999][0-999]': it expands to more than 1048576 names"},
        {"n[0-99999,0-999999]",
         {},
         "invalid hostlist 'n[0-99999,0-999999]': it expands to more than 1048576 names"},
        {"n[1-5]", {.maxNames = 4}, "invalid hostlist 'n[1-5]': it expands to more than 4 names"},
        {"n[1-3]",
         {.maxNames = 4, .namesSoFar = 2},
         "invalid hostlist 'n[1-3]': with the 2 names before it, the names come to more than 4"},
        {name255 + "b",
         {},
         "invalid hostlist '" + name255.substr(0, 100) + "...': the host name '" +
             name255.substr(0, 40) + "...' is longer than 255 characters"},
        {name255.substr(0, 250) + "[1-100000]",
         {},
         "invalid hostlist '" + name255.substr(0, 100) + "...': the host name '" +
             name255.substr(0, 40) + "...' is longer than 255 characters"},
        {"n[1-3]",
         {.maxNameLength = 1},
         "invalid hostlist 'n[1-3]': the host name 'n[1-3]' is longer than 1 characters"},
        {name200 + "[0-999][0-999]",
         {},
         "invalid hostlist '" + name200.substr(0, 100) +
             "...': its names together are longer than 33554432 characters"},
        {"n\x1b[31m", {}, "invalid hostlist 'n\\x1b[31m': missing ']'"},
        {std::string("n\0x", 3), {}, "invalid hostlist 'n\\x00x': invalid character '\\x00'"},
    };
    for (const LimitCase &c : cases) {
        const auto names = expandHostlist(c.expr, c.limits);
        ASSERT_FALSE(names.ok()) << c.expr;
        EXPECT_EQ(names.error().message, c.message) << c.expr;
    }
}

TEST(ExpandHostlist, ExpandsUpToItsLimits) {
    EXPECT_EQ(expandHostlist("n[1-4]", {.maxNames = 4}).value().size(), 4u);
    EXPECT_EQ(expandHostlist("n[1-2]", {.maxNames = 4, .namesSoFar = 2}).value().size(), 2u);
    const std::string name255(255, 'a');
    EXPECT_EQ(expandHostlist(name255).value(), Names{name255});
    EXPECT_EQ(expandHostlist("n[0-1048575]").value().size(), 1048576u);
}

struct CompressCase {
    Names names;
    std::string expr;
};

TEST(CompressHostlist, Compresses) {
    const std::vector<CompressCase> cases = {
        {{}, ""},
        {{"n1"}, "n1"},
        {{"n1", "n2", "n3", "n7"}, "n[1-3,7]"},
        {{"c001", "c002", "c003"}, "c[001-003]"},
        {{"c099", "c100"}, "c[099-100]"},
        {{"n9", "n10"}, "n[9-10]"},
        {{"n01", "n1"}, "n[01,1]"},
        {{"n3", "n2", "n1"}, "n[3,2,1]"},
        {{"n1", "m1", "n2"}, "n1,m1,n2"},
        {{"login", "n1", "n2"}, "login,n[1-2]"},
        {{"ct-0", "ct-1", "ct-2"}, "ct-[0-2]"},
        {{"a1b3", "a1b4", "a2b3"}, "a1b[3-4],a2b3"},
        {{"n1", "n1"}, "n[1,1]"},
        {{"x1234567890"}, "x1234567890"},
    };
    for (const CompressCase &c : cases)
        EXPECT_EQ(compressHostlist(c.names), c.expr);
}

TEST(CompressHostlist, RoundTrips) {
    const std::vector<Names> cases = {
        {"n1", "n2", "n3", "n7"},    {"c001", "c002", "c010", "c011", "c100"},
        {"n9", "n10", "n11", "n09"}, {"a", "b", "a"},
        {"n0", "n00", "n000"},       {"node12", "node13", "rack1node1", "rack1node2", "x"},
        {"123", "124", "7"},         {"x1234567890", "x1234567891"},
    };
    for (const Names &names : cases) {
        const std::string expr = compressHostlist(names);
        const auto back = expandHostlist(expr);
        ASSERT_TRUE(back.ok()) << expr << ": " << back.error().message;
        EXPECT_EQ(back.value(), names) << expr;
    }
}

TEST(CompressHostlist, RoundTripsExpansions) {
    for (const std::string expr : {"n[1-4,7]", "c[001-128]", "a[1-2]b[3-4]", "x,y[1-2]"}) {
        const auto names = expandHostlist(expr);
        ASSERT_TRUE(names.ok());
        EXPECT_EQ(expandHostlist(compressHostlist(names.value())).value(), names.value());
    }
    EXPECT_EQ(compressHostlist(expandHostlist("c[001-128]").value()), "c[001-128]");
}

TEST(IsValidHostName, AcceptsHostNameCharactersOnly) {
    EXPECT_TRUE(isValidHostName("node-01.cluster_a"));
    EXPECT_FALSE(isValidHostName(""));
    EXPECT_FALSE(isValidHostName("a,b"));
    EXPECT_FALSE(isValidHostName("n[1]"));
    EXPECT_FALSE(isValidHostName("a b"));
    EXPECT_FALSE(isValidHostName("a;b"));
}

} // namespace
} // namespace stepmap
