// readBoundedFile: whole regular files, never more than the limit; FIFOs,
// devices and directories refused at once, never waited on.

#include "user_file.hpp"

#include <fcntl.h>
#include <poll.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <optional>
#include <string>
#include <thread>

#include <gtest/gtest.h>

namespace stepmap {
namespace {

class ReadBoundedFile : public ::testing::Test {
protected:
    void SetUp() override {
        char pattern[] = "/tmp/user_file_test.XXXXXX";
        ASSERT_NE(mkdtemp(pattern), nullptr);
        dir_ = pattern;
    }
    void TearDown() override {
        for (const std::string &path : made_)
            std::remove(path.c_str());
        rmdir(dir_.c_str());
    }
    std::string write(const std::string &name, const std::string &text) {
        const std::string path = dir_ + "/" + name;
        std::ofstream(path, std::ios::binary) << text;
        made_.push_back(path);
        return path;
    }

    std::string dir_;
    std::vector<std::string> made_;
};

// readBoundedFile(path) in a child, killed after `seconds`: a read that
// blocks shows as nullopt (a failed test), not as a test that never ends.
// Else "ok" or the error's message.
std::optional<std::string> readWithin(const std::string &path, int seconds) {
    int fds[2];
    if (pipe2(fds, O_CLOEXEC) != 0)
        return "pipe: " + std::string(std::strerror(errno));
    const pid_t child = fork();
    if (child == 0) {
        close(fds[0]);
        const auto text = readBoundedFile(path);
        const std::string said = text ? std::string("ok") : text.error().message;
        const ssize_t put = write(fds[1], said.data(), said.size());
        _exit(put == static_cast<ssize_t>(said.size()) ? 0 : 1);
    }
    close(fds[1]);
    pollfd ready{fds[0], POLLIN, 0};
    const int polled = poll(&ready, 1, seconds * 1000);
    std::optional<std::string> said;
    if (polled == 1) {
        char buf[512];
        const ssize_t got = read(fds[0], buf, sizeof buf);
        said = std::string(buf, got > 0 ? static_cast<std::size_t>(got) : 0);
    }
    close(fds[0]);
    kill(child, SIGKILL);
    waitpid(child, nullptr, 0);
    return said;
}

const std::string kNotRegular = ", not a regular file; stepmap reads only regular files (to use a "
                                "command's output, write it to a file and name that file)";

TEST_F(ReadBoundedFile, ReadsAWholeFileUpToTheLimit) {
    const std::string text = "n1 slots=2\nn2\n" + std::string(200000, '#');
    EXPECT_EQ(readBoundedFile(write("hosts", text)).value(), text);
    EXPECT_EQ(readBoundedFile(write("exact", "12345"), 5).value(), "12345");
    EXPECT_EQ(readBoundedFile(write("empty", "")).value(), "");
    EXPECT_EQ(readBoundedFile(write("nul", std::string("a\0b", 3))).value(),
              std::string("a\0b", 3));
}

TEST_F(ReadBoundedFile, RefusesMoreThanTheLimit) {
    EXPECT_EQ(readBoundedFile(write("big", "123456"), 5).error().message,
              "it is larger than 5 bytes, the most stepmap reads of a file");
    // A sparse file one byte past the default limit costs the limit to read.
    const std::string sparse = write("sparse", "");
    ASSERT_EQ(truncate(sparse.c_str(), static_cast<off_t>(kMaxUserFileBytes + 1)), 0);
    EXPECT_EQ(readBoundedFile(sparse).error().message,
              "it is larger than 16 MiB, the most stepmap reads of a file");
}

// The hang this guards against: open() of a FIFO without a writer waits
// for one, so `--hostfile FIFO` (or a host file another user replaced with
// one) would stop srun for good.
TEST_F(ReadBoundedFile, RefusesAFifoWithoutAWriterAtOnce) {
    const std::string path = dir_ + "/fifo";
    ASSERT_EQ(mkfifo(path.c_str(), 0600), 0);
    made_.push_back(path);
    const auto said = readWithin(path, 5);
    ASSERT_TRUE(said) << "readBoundedFile still waited for a writer after 5 s";
    EXPECT_EQ(*said, "it is a FIFO" + kNotRegular);
}

// With a writer, a FIFO would read; it is still refused, so that whether
// srun hangs does not depend on who writes when.
TEST_F(ReadBoundedFile, RefusesAFifoWithAWriter) {
    const std::string path = dir_ + "/fifo";
    ASSERT_EQ(mkfifo(path.c_str(), 0600), 0);
    made_.push_back(path);
    // O_RDWR holds the FIFO open without waiting for a reader (Linux).
    const int held = open(path.c_str(), O_RDWR | O_CLOEXEC);
    ASSERT_GE(held, 0);
    ASSERT_EQ(::write(held, "n1\n", 3), 3);
    EXPECT_EQ(readBoundedFile(path).error().message, "it is a FIFO" + kNotRegular);
    close(held);
}

// A pipe, as `--hostfile <(cmd)` names it (/dev/fd/N).
TEST_F(ReadBoundedFile, RefusesAPipe) {
    int fds[2];
    ASSERT_EQ(pipe(fds), 0);
    ASSERT_EQ(::write(fds[1], "n1\n", 3), 3);
    EXPECT_EQ(readBoundedFile("/dev/fd/" + std::to_string(fds[0])).error().message,
              "it is a FIFO" + kNotRegular);
    close(fds[0]);
    close(fds[1]);
}

TEST_F(ReadBoundedFile, RefusesDevicesAndDirectories) {
    EXPECT_EQ(readBoundedFile("/dev/zero").error().message,
              "it is a character device" + kNotRegular);
    EXPECT_EQ(readBoundedFile("/dev/urandom").error().message,
              "it is a character device" + kNotRegular);
    EXPECT_EQ(readBoundedFile(dir_).error().message, "it is a directory" + kNotRegular);
}

TEST_F(ReadBoundedFile, GivesTheSystemsReason) {
    EXPECT_EQ(readBoundedFile(dir_ + "/missing").error().message, "No such file or directory");
    EXPECT_EQ(readBoundedFile(write("plain", "x") + "/below").error().message, "Not a directory");
}

// What is left on a descriptor (a child's pipe) is still read, bounded.
TEST(ReadBoundedDescriptor, ReadsAPipeUpToTheLimit) {
    int fds[2];
    ASSERT_EQ(pipe(fds), 0);
    std::signal(SIGPIPE, SIG_IGN);
    std::thread writer([&] {
        const std::string block(4096, 'x');
        while (::write(fds[1], block.data(), block.size()) > 0) {
        }
    });
    const auto text = readBoundedDescriptor(fds[0], 100000);
    close(fds[0]); // the writer sees EPIPE
    writer.join();
    close(fds[1]);
    ASSERT_FALSE(text.ok());
    EXPECT_EQ(text.error().message, "it is larger than 100000 bytes, the most stepmap reads of "
                                    "a file");
}

TEST(FormatByteSize, UsesTheLargestExactUnit) {
    EXPECT_EQ(formatByteSize(16u << 20), "16 MiB");
    EXPECT_EQ(formatByteSize(128u << 10), "128 KiB");
    EXPECT_EQ(formatByteSize(1000), "1000 bytes");
    EXPECT_EQ(formatByteSize(1), "1 byte");
}

} // namespace
} // namespace stepmap
