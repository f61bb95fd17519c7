// The server's private directory: unpredictable names, the ownership check,
// and removal that never follows a link, even one swapped in mid-walk.

#include "os/step_directory.hpp"

#include <gtest/gtest.h>

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <string>
#include <thread>

using namespace stepmap::os;

namespace {

std::string scratch() {
    auto dir = makePrivateDirectory("/tmp", "stepmap-test-dir.");
    EXPECT_TRUE(dir);
    return dir ? dir.value() : std::string();
}

void touch(const std::string &path) {
    int fd = open(path.c_str(), O_WRONLY | O_CREAT | O_CLOEXEC, 0600);
    ASSERT_GE(fd, 0) << path;
    close(fd);
}

bool exists(const std::string &path) {
    struct stat st {};
    return lstat(path.c_str(), &st) == 0;
}

} // namespace

TEST(StepDirectory, NamesAreNewAndPrivate) {
    auto a = makePrivateDirectory("/tmp", "stepmap.1.2.n1.");
    auto b = makePrivateDirectory("/tmp", "stepmap.1.2.n1.");
    ASSERT_TRUE(a && b);
    EXPECT_NE(a.value(), b.value());
    EXPECT_EQ(a.value().rfind("/tmp/stepmap.1.2.n1.", 0), 0u);
    struct stat st {};
    ASSERT_EQ(stat(a.value().c_str(), &st), 0);
    EXPECT_EQ(st.st_mode & 0777, 0700u);
    EXPECT_TRUE(openPrivateDirectory(a.value(), getuid()));
    EXPECT_TRUE(removeTree(a.value()));
    EXPECT_TRUE(removeTree(b.value()));
    EXPECT_FALSE(exists(a.value()));
}

TEST(StepDirectory, PrefixWithSlashIsRefused) {
    EXPECT_FALSE(makePrivateDirectory("/tmp", "../etc/x"));
}

TEST(StepDirectory, ForeignOrOpenOrLinkedDirectoryIsRefused) {
    std::string d = scratch();
    auto wrongOwner = openPrivateDirectory(d, getuid() + 1);
    ASSERT_FALSE(wrongOwner);
    EXPECT_NE(wrongOwner.error().message.find("is not a private directory of uid"),
              std::string::npos);
    chmod(d.c_str(), 0755);
    EXPECT_FALSE(openPrivateDirectory(d, getuid()));
    chmod(d.c_str(), 0700);
    std::string link = d + ".link";
    ASSERT_EQ(symlink(d.c_str(), link.c_str()), 0);
    EXPECT_FALSE(openPrivateDirectory(link, getuid()));
    unlink(link.c_str());
    removeTree(d);
}

TEST(StepDirectory, RemovesNestedTreeAndLinksWithoutFollowing) {
    std::string victim = scratch();
    touch(victim + "/keep");
    std::string d = scratch();
    ASSERT_EQ(mkdir((d + "/a").c_str(), 0700), 0);
    ASSERT_EQ(mkdir((d + "/a/b").c_str(), 0700), 0);
    touch(d + "/a/b/f");
    touch(d + "/g");
    ASSERT_EQ(symlink(victim.c_str(), (d + "/a/to-victim").c_str()), 0);
    ASSERT_EQ(symlink((victim + "/keep").c_str(), (d + "/file-link").c_str()), 0);
    EXPECT_TRUE(removeTree(d));
    EXPECT_FALSE(exists(d));
    EXPECT_TRUE(exists(victim + "/keep"));
    removeTree(victim);
}

// More entries than one read of the directory returns, with long names:
// the removal sweeps until the tree is empty.
TEST(StepDirectory, RemovesDirectoriesOfManyEntries) {
    std::string d = scratch();
    const std::string pad(100, 'n');
    for (int i = 0; i < 20; ++i) {
        const std::string sub = d + "/" + pad + std::to_string(i);
        ASSERT_EQ(mkdir(sub.c_str(), 0700), 0);
        for (int j = 0; j < 50; ++j)
            touch(sub + "/" + pad + std::to_string(j));
        touch(d + "/file" + std::to_string(i));
    }
    EXPECT_TRUE(removeTree(d));
    EXPECT_FALSE(exists(d));
}

// What cannot go is said, after everything else went. Root can remove
// anything: as root the case runs in a child that is another user.
TEST(StepDirectory, AnEntryThatCannotGoFailsTheRemoval) {
    auto run = [] {
        auto made = makePrivateDirectory("/tmp", "stepmap-test-dir.");
        if (!made)
            return 1;
        const std::string d = *made;
        mkdir((d + "/locked").c_str(), 0700);
        close(open((d + "/locked/stays").c_str(), O_WRONLY | O_CREAT | O_CLOEXEC, 0600));
        close(open((d + "/goes").c_str(), O_WRONLY | O_CREAT | O_CLOEXEC, 0600));
        chmod((d + "/locked").c_str(), 0500);
        int failures = removeTree(d) ? 2 : 0;
        failures |= exists(d + "/goes") ? 4 : 0;
        failures |= exists(d + "/locked/stays") ? 0 : 8;
        chmod((d + "/locked").c_str(), 0700);
        failures |= removeTree(d) ? 0 : 16;
        return failures;
    };
    if (getuid() != 0) {
        EXPECT_EQ(run(), 0);
        return;
    }
    pid_t child = fork();
    if (child == 0)
        _exit(setresgid(65534, 65534, 65534) == 0 && setresuid(65534, 65534, 65534) == 0 ? run()
                                                                                         : 32);
    int status = 0;
    ASSERT_EQ(waitpid(child, &status, 0), child);
    ASSERT_TRUE(WIFEXITED(status));
    EXPECT_EQ(WEXITSTATUS(status), 0);
}

TEST(StepDirectory, RemovingAMissingTreeSucceeds) {
    EXPECT_TRUE(removeTree("/tmp/stepmap-test-dir.does-not-exist"));
}

// A process of the user swaps a subdirectory for a link to another
// directory while the tree is being removed: nothing outside the tree may
// go, whoever runs the removal (root did, in slurmstepd's exit hook).
TEST(StepDirectory, SwappingInALinkDuringRemovalReachesNothingOutside) {
    std::string victim = scratch();
    for (int i = 0; i < 20; ++i)
        touch(victim + "/f" + std::to_string(i));
    for (int round = 0; round < 200; ++round) {
        std::string d = scratch();
        ASSERT_EQ(mkdir((d + "/sub").c_str(), 0700), 0);
        for (int i = 0; i < 50; ++i)
            touch(d + "/sub/f" + std::to_string(i));
        std::atomic<bool> stop{false};
        std::thread swapper([&] {
            const std::string sub = d + "/sub", moved = d + "/moved", link = d + "/sub";
            while (!stop) {
                if (rename(sub.c_str(), moved.c_str()) == 0)
                    (void)!symlink(victim.c_str(), link.c_str());
                unlink(link.c_str());
                (void)!rename(moved.c_str(), sub.c_str());
            }
        });
        removeTree(d);
        stop = true;
        swapper.join();
        removeTree(d);
        for (int i = 0; i < 20; ++i)
            ASSERT_TRUE(exists(victim + "/f" + std::to_string(i)))
                << "round " << round << " removed a file outside the tree";
    }
    removeTree(victim);
}
