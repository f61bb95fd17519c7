// How messages show text from users and files: escaped, cut, listed.

#include "base/quote.hpp"

#include <string>
#include <vector>

#include <gtest/gtest.h>

namespace stepmap {
namespace {

struct EscapeCase {
    std::string text;
    std::string shown;
};

TEST(Escaped, EscapesControlCharactersNulAndInvalidUtf8) {
    const std::vector<EscapeCase> cases = {
        {"n1", "n1"},
        {"", ""},
        {std::string("a\0b", 3), "a\\x00b"},
        {"a\nb\tc\rd", "a\\nb\\tc\\rd"},
        {"\x1b[31mred", "\\x1b[31mred"},
        {"del\x7f", "del\\x7f"},
        {"caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80", "caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80"},
        {"\xff\xfe", "\\xff\\xfe"},
        {"\xc3", "\\xc3"},                            // cut short
        {"\xc3(", "\\xc3("},                          // bad continuation
        {"\xc0\xaf", "\\xc0\\xaf"},                   // overlong '/'
        {"\xed\xa0\x80", "\\xed\\xa0\\x80"},          // surrogate
        {"\xf4\x90\x80\x80", "\\xf4\\x90\\x80\\x80"}, // above U+10FFFF
        {"\xc2\x9b"
         "31m",
         "\\xc2\\x9b"
         "31m"}, // C1 CSI
        {"back\\slash 'q'", "back\\slash 'q'"},
    };
    for (const EscapeCase &c : cases)
        EXPECT_EQ(escaped(c.text), c.shown) << c.shown;
}

TEST(Escaped, CutsLongTextNeverInsideACharacter) {
    EXPECT_EQ(escaped(std::string(100, 'a')), std::string(100, 'a'));
    EXPECT_EQ(escaped(std::string(101, 'a')), std::string(100, 'a') + "...");
    EXPECT_EQ(escaped(std::string(1 << 20, 'a')).size(), 103u);
    EXPECT_EQ(escaped("abcdef", 3), "abc...");
    EXPECT_EQ(escaped("ab\xc3\xa9", 3), "ab...");
    EXPECT_EQ(escaped(std::string(5, '\0'), 2), "\\x00\\x00...");
}

TEST(Quoted, QuotesTheEscapedText) {
    EXPECT_EQ(stepmap::quoted("n[1-4]"), "'n[1-4]'");
    EXPECT_EQ(stepmap::quoted(std::string("x\0", 2)), "'x\\x00'");
    EXPECT_EQ(stepmap::quoted("abcdef", 4), "'abcd...'");
}

TEST(ListedNames, ListsTheFirstDistinctNamesAndCountsTheRest) {
    using Names = std::vector<std::string>;
    EXPECT_EQ(listedNames(Names{}), "");
    EXPECT_EQ(listedNames(Names{"a", "b", "a"}), "a,b");
    EXPECT_EQ(listedNames(Names{"n1", "n2", "n3", "n4", "n5"}), "n1,n2,n3,n4,n5");
    EXPECT_EQ(listedNames(Names{"n1", "n2", "n3", "n4", "n5", "n6", "n6", "n7"}),
              "n1,n2,n3,n4,n5 and 2 more");
    EXPECT_EQ(listedNames(Names{"a", "b", "c"}, 1), "a and 2 more");
    EXPECT_EQ(listedNames(Names{"bad\nname"}), "bad\\nname");
    Names many;
    for (int i = 0; i < 100000; ++i)
        many.push_back("node" + std::to_string(i));
    EXPECT_EQ(listedNames(many), "node0,node1,node2,node3,node4 and 99995 more");
}

} // namespace
} // namespace stepmap
