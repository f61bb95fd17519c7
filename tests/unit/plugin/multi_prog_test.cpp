// srun --multi-prog files as application contexts.

#include "srun/multi_prog.hpp"

#include <gtest/gtest.h>

using namespace stepmap::plugin;

TEST(MultiProg, ConsecutiveLinesAreApps) {
    auto apps = multiProgApps("# comment\n0-1 ./a x\n\n2 ./b\n3-6\t./c\n", "mp.conf");
    ASSERT_TRUE(apps) << apps.error().message;
    EXPECT_EQ(apps.value(), (std::vector<int>{2, 1, 4}));
}

TEST(MultiProg, OtherLayoutsAreRefusedNamingTheLine) {
    struct Case {
        const char *text, *message;
    };
    for (const auto &tc : std::vector<Case>{
             {"2-3 ./a\n0-1 ./b\n",
              "--multi-prog file mp.conf, line 1: ranks '2-3' do not continue the previous "
              "lines; with stepmap each line is an application context and must give the next "
              "consecutive ranks as N or N-M (here starting at 0)"},
             {"0-1 ./a\n* ./b\n",
              "--multi-prog file mp.conf, line 2: ranks '*' do not continue the previous lines; "
              "with stepmap each line is an application context and must give the next "
              "consecutive ranks as N or N-M (here starting at 2)"},
             {"0,2 ./a\n", "--multi-prog file mp.conf, line 1: ranks '0,2' do not continue the "
                           "previous lines; with stepmap each line is an application context "
                           "and must give the next consecutive ranks as N or N-M (here "
                           "starting at 0)"},
             {"0-1\n", "--multi-prog file mp.conf, line 1: expected 'RANKS PROGRAM [ARGS]'"},
             {"# nothing\n", "--multi-prog file mp.conf names no program"},
             // Numbers too large say the limit.
             {"0-99999999999 ./a\n",
              "--multi-prog file mp.conf, line 1: ranks '0-99999999999' go past rank 16777215: "
              "stepmap places at most 16777216 processes"},
             {"0 ./a\n1-99999999999999999999999 ./b\n",
              "--multi-prog file mp.conf, line 2: ranks '1-99999999999999999999999' go past rank "
              "16777215: stepmap places at most 16777216 processes"},
             // What the file holds is shown escaped.
             {"\x1b[2J ./a\n", "--multi-prog file mp.conf, line 1: ranks '\\x1b[2J' do not "
                               "continue the previous lines; with stepmap each line is an "
                               "application context and must give the next consecutive ranks "
                               "as N or N-M (here starting at 0)"},
         }) {
        auto apps = multiProgApps(tc.text, "mp.conf");
        ASSERT_FALSE(apps) << tc.text;
        EXPECT_EQ(apps.error().message, tc.message);
    }
}
