// The one owner of a file descriptor (os/unique_fd.hpp).

#include "os/unique_fd.hpp"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <unistd.h>

using stepmap::os::UniqueFd;

namespace {

bool isOpen(int fd) {
    return fcntl(fd, F_GETFD) != -1;
}

} // namespace

TEST(UniqueFd, ClosesWhenTheOwnerGoes) {
    int raw;
    {
        UniqueFd fd(open("/dev/null", O_RDONLY | O_CLOEXEC));
        ASSERT_TRUE(fd);
        raw = fd.get();
        EXPECT_TRUE(isOpen(raw));
    }
    EXPECT_FALSE(isOpen(raw));
}

TEST(UniqueFd, MovingHandsOverOwnership) {
    UniqueFd a(open("/dev/null", O_RDONLY | O_CLOEXEC));
    const int raw = a.get();
    UniqueFd b(std::move(a));
    EXPECT_FALSE(a);
    EXPECT_EQ(b.get(), raw);
    UniqueFd c;
    c = std::move(b);
    EXPECT_EQ(c.get(), raw);
    EXPECT_TRUE(isOpen(raw));
}

TEST(UniqueFd, AssigningClosesWhatWasHeld) {
    UniqueFd a(open("/dev/null", O_RDONLY | O_CLOEXEC));
    const int first = a.get();
    a = UniqueFd(open("/dev/null", O_RDONLY | O_CLOEXEC));
    ASSERT_NE(first, a.get()); // opened before the first one was closed
    EXPECT_FALSE(isOpen(first));
    a.reset();
    EXPECT_FALSE(a);
}

TEST(UniqueFd, ReleaseKeepsTheDescriptorOpen) {
    UniqueFd a(open("/dev/null", O_RDONLY | O_CLOEXEC));
    const int raw = a.release();
    EXPECT_FALSE(a);
    EXPECT_TRUE(isOpen(raw));
    close(raw);
}

TEST(UniqueFd, AFailedOpenOwnsNothing) {
    UniqueFd a(open("/nonexistent/stepmap", O_RDONLY));
    EXPECT_FALSE(a);
    EXPECT_EQ(a.get(), -1);
}
