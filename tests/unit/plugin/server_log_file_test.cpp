// A node server's log in a log directory every user may write to: a name
// nobody can predict, so that another user cannot make it first (the old
// "stepmap-stepd.<job>.<step>.<node>.log" could be, and the server then ran
// without a log); a new private file, never one that is there or a link.

#include "stepd/server_log_file.hpp"

#include <gtest/gtest.h>

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <regex>
#include <set>

using namespace stepmap;
using namespace stepmap::plugin;

namespace {

const std::regex kLogName(R"(stepmap-stepd\.12\.0\.n1\.[0-9a-f]{16}\.log)");

TEST(ServerLogName, EndsInTheRandomBytesInHex) {
    struct Case {
        std::string stepTag, node;
        LogNameRandom random;
        std::string name;
    };
    const Case cases[] = {
        {"12.0", "n1", {0, 1, 2, 3, 4, 5, 6, 7}, "stepmap-stepd.12.0.n1.0001020304050607.log"},
        {"4294967294.3",
         "node-7.cluster",
         {0xff, 0xfe, 0xa0, 0x0a, 0x10, 0x99, 0xc3, 0x5d},
         "stepmap-stepd.4294967294.3.node-7.cluster.fffea00a1099c35d.log"},
        {"1.0", "n_x", {}, "stepmap-stepd.1.0.n_x.0000000000000000.log"},
    };
    for (const auto &c : cases)
        EXPECT_EQ(serverLogName(c.stepTag, c.node, c.random), c.name);
}

class CreateServerLog : public ::testing::Test {
protected:
    void SetUp() override {
        char pattern[] = "/tmp/server-log-file-test-XXXXXX";
        ASSERT_NE(mkdtemp(pattern), nullptr);
        dir_ = pattern;
    }
    void TearDown() override {
        for (const std::string &name : names())
            unlink((dir_ + "/" + name).c_str());
        rmdir(dir_.c_str());
    }
    std::set<std::string> names() const {
        std::set<std::string> found;
        if (DIR *d = opendir(dir_.c_str())) {
            while (dirent *e = readdir(d))
                if (std::string(e->d_name) != "." && std::string(e->d_name) != "..")
                    found.insert(e->d_name);
            closedir(d);
        }
        return found;
    }

    std::string dir_;
};

TEST_F(CreateServerLog, MakesAPrivateFileUnderAFreshNameEachTime) {
    auto first = createServerLog(dir_, "12.0", "n1");
    auto second = createServerLog(dir_, "12.0", "n1");
    ASSERT_TRUE(first) << first.error().message;
    ASSERT_TRUE(second) << second.error().message;
    const auto made = names();
    ASSERT_EQ(made.size(), 2u); // two names: the randomness differs
    for (const std::string &name : made) {
        EXPECT_TRUE(std::regex_match(name, kLogName)) << name;
        struct stat st {};
        ASSERT_EQ(stat((dir_ + "/" + name).c_str(), &st), 0);
        EXPECT_TRUE(S_ISREG(st.st_mode));
        EXPECT_EQ(st.st_mode & 07777, 0600u) << name;
        EXPECT_EQ(st.st_uid, geteuid());
    }
    // Opened for appending: what the server writes lands in its file.
    ASSERT_EQ(write(first->get(), "up\n", 3), 3);
    struct stat st {};
    ASSERT_EQ(fstat(first->get(), &st), 0);
    EXPECT_EQ(st.st_size, 3);
    EXPECT_NE(fcntl(first->get(), F_GETFL) & O_APPEND, 0);
}

// What another user of a shared (1777) log directory could do before the
// step: make the predictable names, empty files or links. The server still
// gets a log of its own, and the planted files stay as they were.
TEST_F(CreateServerLog, PlantedFilesAndLinksUnderTheOldNamesChangeNothing) {
    const std::string planted = dir_ + "/stepmap-stepd.12.0.n1.log";
    std::ofstream(planted).flush();
    const std::string target = dir_ + "/target";
    std::ofstream(target).flush();
    ASSERT_EQ(symlink(target.c_str(), (dir_ + "/stepmap-stepd.12.0.n1.0.log").c_str()), 0);

    auto log = createServerLog(dir_, "12.0", "n1");
    ASSERT_TRUE(log) << log.error().message;
    ASSERT_EQ(write(log->get(), "up\n", 3), 3);

    std::set<std::string> ours;
    for (const std::string &name : names())
        if (std::regex_match(name, kLogName))
            ours.insert(name);
    ASSERT_EQ(ours.size(), 1u);
    struct stat st {};
    ASSERT_EQ(stat(planted.c_str(), &st), 0);
    EXPECT_EQ(st.st_size, 0);
    ASSERT_EQ(stat(target.c_str(), &st), 0);
    EXPECT_EQ(st.st_size, 0);
}

TEST_F(CreateServerLog, AnErrorNamesThePathAndTheReason) {
    const std::string missing = dir_ + "/missing";
    auto log = createServerLog(missing, "12.0", "n1");
    ASSERT_FALSE(log);
    const std::string &message = log.error().message;
    EXPECT_EQ(
        message.rfind("cannot create the server's log " + missing + "/stepmap-stepd.12.0.n1.", 0),
        0u)
        << message;
    EXPECT_NE(message.find(".log: No such file or directory"), std::string::npos) << message;
}

} // namespace
