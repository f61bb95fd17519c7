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

struct FileCase {
    std::string text;
    std::vector<HostEntry> entries;
};

TEST(ParseHostfile, ParsesLines) {
    const std::vector<FileCase> cases = {
        // seed 000's hostfile "ct".
        {"###################\n# Hostfile ct\nct-0 slots=4\nct-1 slots=4\n###################\n",
         {entry("ct-0", 4), entry("ct-1", 4)}},
        // seed 002's my-hosts.
        {"node0 slots=2 max_slots=20\nnode1 slots=2 max_slots=20\n",
         {entry("node0", 2, 20), entry("node1", 2, 20)}},
        // seed 002's commented example: no slots= keeps Slurm's count.
        {"# This is an example hostfile. Comments begin with #.\n#\nfoo.example.com\n"
         "# We want to allow launching a maximum of 2 processes on this host\n"
         "bar.example.com slots=2\n",
         {entry("foo.example.com", kSlurm), entry("bar.example.com", 2)}},
        {"node03", {entry("node03", kSlurm)}},
        {"  a\tslots=3   # trailing comment\r\n\n\t\nb max_slots=5\n",
         {entry("a", 3), entry("b", kSlurm, 5)}},
        // A repeated line adds a slot to the first line's slots= (only the
        // first line may give slots=, as in PRRTE).
        {"a\na\n", {entry("a", 2)}},
        {"a slots=2\nb\na\n", {entry("a", 3), entry("b", kSlurm)}},
        {"a max_slots=4\na max_slots=4\n", {entry("a", 2, 4)}},
        {"a slots=1 max_slots=4\na\n", {entry("a", 2, 4)}},
        // Hostlist expressions and relative nodes.
        {"n[1-3] slots=2\n", {entry("n1", 2), entry("n2", 2), entry("n3", 2)}},
        {"+n1 slots=2\n+n0\n", {entry("+n1", 2), entry("+n0", kSlurm)}},
        {"last-line-without-newline slots=1", {entry("last-line-without-newline", 1)}},
    };
    for (const FileCase &c : cases) {
        const auto spec = parseHostfile(c.text, "hf");
        ASSERT_TRUE(spec.ok()) << c.text << ": " << spec.error().message;
        EXPECT_FALSE(spec->exclude);
        EXPECT_EQ(spec->entries, c.entries) << c.text;
    }
}

struct ErrorCase {
    std::string text;
    std::string message;
};

TEST(ParseHostfile, RejectsBadLinesNamingFileAndLine) {
    const std::vector<ErrorCase> cases = {
        {"a\nb\nc slot=2\n", "hostfile my_hosts, line 3: unknown attribute 'slot=2' (expected "
                             "slots=N or max_slots=M)"},
        {"a slots\n", "hostfile my_hosts, line 1: unknown attribute 'slots' (expected slots=N or "
                      "max_slots=M)"},
        {"a max-slots=3\n", "hostfile my_hosts, line 1: unknown attribute 'max-slots=3' "
                            "(expected slots=N or max_slots=M)"},
        {"a cpu=3\n", "hostfile my_hosts, line 1: unknown attribute 'cpu=3' (expected slots=N "
                      "or max_slots=M)"},
        {"# c\n\na slots=0\n", "hostfile my_hosts, line 3: 'slots=0': slots must be a positive "
                               "number"},
        {"a slots=x\n", "hostfile my_hosts, line 1: 'slots=x': slots must be a positive number"},
        {"a slots=\n", "hostfile my_hosts, line 1: 'slots=': slots must be a positive number"},
        {"a max_slots=-1\n", "hostfile my_hosts, line 1: 'max_slots=-1': max_slots must be a "
                             "positive number"},
        {"a slots=2 slots=3\n", "hostfile my_hosts, line 1: 'slots' is given twice"},
        {"a slots=4 max_slots=2\n", "hostfile my_hosts, line 1: max_slots=2 is less than "
                                    "slots=4"},
        {"a max_slots=4\na max_slots=20\n", "hostfile my_hosts, line 2: host a: max_slots=20 "
                                            "conflicts with max_slots=4 given earlier"},
        {"a slots=2 max_slots=2\na\n", "hostfile my_hosts, line 2: host a: the slot counts add "
                                       "up to 3, above max_slots=2"},
        {"n[1-\n", "hostfile my_hosts, line 1: invalid hostlist 'n[1-': missing ']'"},
        {"user@a\n", "hostfile my_hosts, line 1: 'user@a': user@host entries are not supported "
                     "(name the host only)"},
        {"+e\n", "hostfile my_hosts, line 1: relative host '+e': empty-node requests (+e) are "
                 "not supported yet; name the nodes or use +n<i> for the i-th allocated node"},
        {"max_slots=2 slots=1\n", "hostfile my_hosts, line 1: invalid hostlist 'max_slots=2': "
                                  "invalid character '='"},
        // PRRTE refuses a second definition of a slot count.
        {"n1 slots=1\nn1 slots=1\n",
         "hostfile my_hosts, line 2: host n1 is listed again with slots= (first on line 1): a "
         "host's slot count is defined once; give slots= on one line, or repeat the host without "
         "slots= to add one slot per line"},
        {"n1\n# c\nn[0-2] slots=4\n",
         "hostfile my_hosts, line 3: host n1 is listed again with slots= (first on line 1): a "
         "host's slot count is defined once; give slots= on one line, or repeat the host without "
         "slots= to add one slot per line"},
        {"n[1,1] slots=2\n",
         "hostfile my_hosts, line 1: host n1 is listed again with slots= (first on line 1): a "
         "host's slot count is defined once; give slots= on one line, or repeat the host without "
         "slots= to add one slot per line"},
        // Numbers too large say the limit.
        {"a slots=99999999999\n", "hostfile my_hosts, line 1: 'slots=99999999999': slots is "
                                  "above 16777216, the most processes stepmap places"},
        {"a max_slots=16777217\n", "hostfile my_hosts, line 1: 'max_slots=16777217': max_slots "
                                   "is above 16777216, the most processes stepmap places"},
        // What the file holds is shown escaped: a NUL no longer cuts the
        // message, escapes reach no terminal.
        {std::string("n1\0bad slots=1\n", 15),
         "hostfile my_hosts, line 1: invalid hostlist 'n1\\x00bad': invalid character '\\x00'"},
        {"n\x1b[31mred slots=1\n",
         "hostfile my_hosts, line 1: invalid hostlist 'n\\x1b[31mred': missing ']'"},
        {"a sl\xffots=1\n", "hostfile my_hosts, line 1: unknown attribute 'sl\\xffots=1' "
                            "(expected slots=N or max_slots=M)"},
        {"", "hostfile my_hosts: no hosts listed (only blank lines and comments)"},
        {"# only\n\n   # comments\n", "hostfile my_hosts: no hosts listed (only blank lines and "
                                      "comments)"},
    };
    for (const ErrorCase &c : cases) {
        const auto spec = parseHostfile(c.text, "my_hosts");
        ASSERT_FALSE(spec.ok()) << c.text;
        EXPECT_EQ(spec.error().message, c.message);
    }
}

// File names are shown whole (up to PATH_MAX), escaped.
TEST(ParseHostfile, NamesTheFileWhole) {
    const std::string name = "/home/user/" + std::string(300, 'd') + "/hosts\n";
    EXPECT_EQ(parseHostfile("", name).error().message,
              "hostfile /home/user/" + std::string(300, 'd') +
                  "/hosts\\n: no hosts listed (only blank lines and comments)");
}

// Lines of large hostlists cost their names: at most 1048576 in all, repeats
// included, or a 16 MiB file of "n[0-999999]" lines would take hours.
TEST(ParseHostfile, CountsNamesOverAllLines) {
    std::string text;
    for (int i = 0; i < 1000; ++i)
        text += "n[0-599999]\n";
    const auto spec = parseHostfile(text, "big");
    ASSERT_FALSE(spec.ok());
    EXPECT_EQ(spec.error().message,
              "hostfile big, line 2: invalid hostlist 'n[0-599999]': with the 600000 names "
              "before it, the names come to more than 1048576");
    EXPECT_EQ(parseHostfile("n[0-599999]\nm[0-399999]\n", "big").value().entries.size(), 1000000u);
}

} // namespace
} // namespace stepmap
