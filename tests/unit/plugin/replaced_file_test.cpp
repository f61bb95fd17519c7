// The file srun writes for --display-map=svg:FILE: created next to FILE
// before anything starts, replacing FILE whole, with the user's umask, and
// leaving nothing behind when srun gives up; refusals say why and the fix.

#include "srun/replaced_file.hpp"

#include <gtest/gtest.h>

#include <dirent.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <set>
#include <sstream>

using namespace stepmap;
using namespace stepmap::plugin;

namespace {

class ReplacedFileTest : public ::testing::Test {
protected:
    void SetUp() override {
        char pattern[] = "/tmp/replaced-file-test-XXXXXX";
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

    static std::string contents(const std::string &path) {
        std::ifstream in(path);
        std::stringstream text;
        text << in.rdbuf();
        return text.str();
    }

    std::string dir_;
};

std::string reason(const Expected<ReplacedFile> &file) {
    return file ? std::string("(created)") : file.error().message;
}

} // namespace

TEST_F(ReplacedFileTest, ReplacesTheFileWholeWithTheUmasksMode) {
    const std::string path = dir_ + "/map.svg";
    { std::ofstream(path) << "old picture"; }
    const mode_t old = umask(027);
    auto file = ReplacedFile::create(path);
    umask(old);
    ASSERT_TRUE(file) << reason(file);
    // Until replaced, a reader sees the old file; the new one is hidden.
    EXPECT_EQ(contents(path), "old picture");
    EXPECT_EQ(names().size(), 2u);
    for (const std::string &name : names()) {
        if (name != "map.svg") {
            EXPECT_EQ(name.rfind(".map.svg.stepmap-", 0), 0u) << name;
        }
    }
    ASSERT_TRUE(file->replace("<svg/>\n"));
    EXPECT_EQ(contents(path), "<svg/>\n");
    EXPECT_EQ(names(), std::set<std::string>{"map.svg"});
    struct stat st {};
    ASSERT_EQ(stat(path.c_str(), &st), 0);
    EXPECT_EQ(st.st_mode & 0777, 0640u);
    EXPECT_FALSE(file->replace("again"));
}

TEST_F(ReplacedFileTest, GivingUpLeavesNothingBehind) {
    const std::string path = dir_ + "/map.svg";
    {
        auto file = ReplacedFile::create(path);
        ASSERT_TRUE(file) << reason(file);
        EXPECT_EQ(names().size(), 1u);
    }
    EXPECT_TRUE(names().empty());
}

TEST_F(ReplacedFileTest, ASymbolicLinkIsReplacedNotFollowed) {
    const std::string target = dir_ + "/target";
    const std::string path = dir_ + "/map.svg";
    { std::ofstream(target) << "kept"; }
    ASSERT_EQ(symlink(target.c_str(), path.c_str()), 0);
    auto file = ReplacedFile::create(path);
    ASSERT_TRUE(file) << reason(file);
    ASSERT_TRUE(file->replace("drawn"));
    EXPECT_EQ(contents(target), "kept");
    struct stat st {};
    ASSERT_EQ(lstat(path.c_str(), &st), 0);
    EXPECT_TRUE(S_ISREG(st.st_mode));
    EXPECT_EQ(contents(path), "drawn");
}

TEST_F(ReplacedFileTest, RefusalsNameTheDirectoryAndTheFix) {
    EXPECT_EQ(reason(ReplacedFile::create(dir_ + "/missing/map.svg")),
              "cannot create a file in '" + dir_ +
                  "/missing': No such file or directory; name a file in an existing directory");
    EXPECT_EQ(reason(ReplacedFile::create(dir_)),
              "'" + dir_ + "' is a directory; name a file in it, e.g. " + dir_ + "/map.svg");
    EXPECT_EQ(reason(ReplacedFile::create(dir_ + "/")),
              "'" + dir_ + "/' is a directory; name a file in it, e.g. " + dir_ + "/map.svg");
    { std::ofstream(dir_ + "/plain") << "x"; }
    EXPECT_EQ(reason(ReplacedFile::create(dir_ + "/plain/map.svg")),
              "cannot create a file in '" + dir_ +
                  "/plain': Not a directory; name a file in an existing directory");
    EXPECT_TRUE(names() == std::set<std::string>{"plain"});
}

TEST_F(ReplacedFileTest, AnUnwritableDirectoryIsRefused) {
    if (geteuid() == 0)
        GTEST_SKIP() << "root writes to any directory";
    ASSERT_EQ(chmod(dir_.c_str(), 0555), 0);
    auto file = ReplacedFile::create(dir_ + "/map.svg");
    chmod(dir_.c_str(), 0700);
    EXPECT_EQ(reason(file), "cannot create a file in '" + dir_ +
                                "': Permission denied; name a file in a directory you can "
                                "write to");
}

TEST(ReplacedFile, ARelativeNameIsInSrunsDirectory) {
    char pattern[] = "/tmp/replaced-file-cwd-XXXXXX";
    ASSERT_NE(mkdtemp(pattern), nullptr);
    char here[4096];
    ASSERT_NE(getcwd(here, sizeof here), nullptr);
    ASSERT_EQ(chdir(pattern), 0);
    {
        auto file = ReplacedFile::create("map.svg");
        ASSERT_TRUE(file) << reason(file);
        EXPECT_TRUE(file->replace("x"));
        EXPECT_EQ(reason(ReplacedFile::create("nowhere/map.svg")),
                  "cannot create a file in 'nowhere': No such file or directory; name a file "
                  "in an existing directory");
    }
    unlink("map.svg");
    ASSERT_EQ(chdir(here), 0);
    EXPECT_EQ(rmdir(pattern), 0);
}
