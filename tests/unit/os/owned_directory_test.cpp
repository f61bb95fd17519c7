// The owner of the server's directory (os/owned_directory.hpp):
// the tree goes with the owner, whatever the way out.

#include "os/owned_directory.hpp"
#include "os/step_directory.hpp"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fstream>

using namespace stepmap;

namespace {

bool exists(const std::string &path) {
    struct stat st {};
    return lstat(path.c_str(), &st) == 0;
}

std::string makeTree() {
    auto dir = os::makePrivateDirectory("/tmp", "owned-directory-test.");
    EXPECT_TRUE(dir);
    mkdir((*dir + "/sub").c_str(), 0700);
    std::ofstream(*dir + "/sub/file") << "x";
    EXPECT_EQ(symlink("/etc", (*dir + "/link").c_str()), 0);
    return *dir;
}

} // namespace

TEST(OwnedDirectory, RemovedWithTheOwner) {
    const std::string path = makeTree();
    {
        os::OwnedDirectory dir(path);
        EXPECT_EQ(dir.path(), path);
    }
    EXPECT_FALSE(exists(path));
    EXPECT_TRUE(exists("/etc/passwd")); // the link was removed, not followed
}

TEST(OwnedDirectory, MovedOwnershipRemovesOnce) {
    const std::string path = makeTree();
    int incomplete = 0;
    os::OwnedDirectory outer;
    {
        os::OwnedDirectory inner(path, [&](const std::string &) { ++incomplete; });
        outer = std::move(inner);
        EXPECT_TRUE(inner.path().empty());
    }
    EXPECT_TRUE(exists(path));
    EXPECT_TRUE(outer.remove());
    EXPECT_FALSE(exists(path));
    EXPECT_TRUE(outer.remove()); // nothing left to own
    EXPECT_EQ(incomplete, 0);
}

TEST(OwnedDirectory, ReleasedIsKept) {
    const std::string path = makeTree();
    {
        os::OwnedDirectory dir(path);
        EXPECT_EQ(dir.release(), path);
    }
    EXPECT_TRUE(exists(path));
    EXPECT_TRUE(os::removeTree(path));
}

TEST(OwnedDirectory, AnIncompleteRemovalIsReported) {
    // A file where the directory should be: not removed, and said so.
    const std::string dir = makeTree();
    const std::string file = dir + "/sub/file";
    std::string told;
    {
        os::OwnedDirectory owned(file, [&](const std::string &path) { told = path; });
    }
    EXPECT_EQ(told, file);
    EXPECT_TRUE(exists(file));
    EXPECT_TRUE(os::removeTree(dir));
}

TEST(OwnedDirectory, AlreadyGoneIsNoFailure) {
    std::string told;
    {
        os::OwnedDirectory owned("/nonexistent/stepmap-owned",
                                 [&](const std::string &path) { told = path; });
    }
    EXPECT_TRUE(told.empty());
}
