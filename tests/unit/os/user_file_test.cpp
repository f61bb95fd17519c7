// readBoundedFile: whole regular files, never more than the limit; FIFOs
// and pipes (`<(cmd)`) read to their writer's end within a deadline;
// devices and directories refused at once, never waited on.

#include "os/user_file.hpp"

#include <fcntl.h>
#include <poll.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
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
std::optional<std::string> readWithin(const std::string &path, int seconds,
                                      std::chrono::milliseconds pipeDeadline = kPipeDeadline) {
    int fds[2];
    if (pipe2(fds, O_CLOEXEC) != 0)
        return "pipe: " + std::string(std::strerror(errno));
    const pid_t child = fork();
    if (child == 0) {
        close(fds[0]);
        const auto text = readBoundedFile(path, kMaxUserFileBytes, pipeDeadline);
        const std::string said = text ? "ok: " + *text : text.error().message;
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

const std::string kNotRegular =
    ", not a regular file; name a regular file, or a command's output as <(command)";

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
// one) would stop srun for good. Now it waits for the deadline only.
TEST_F(ReadBoundedFile, AFifoWithoutAWriterIsRefusedAtTheDeadline) {
    const std::string path = dir_ + "/fifo";
    ASSERT_EQ(mkfifo(path.c_str(), 0600), 0);
    made_.push_back(path);
    const auto said = readWithin(path, 5, std::chrono::milliseconds(300));
    ASSERT_TRUE(said) << "readBoundedFile still waited for a writer after 5 s";
    EXPECT_EQ(*said, "it is a FIFO and nothing wrote to it within 0.3 s; name a regular file, or a "
                     "command's output as <(command)");
}

// A writer that opens, writes and never closes: refused at the deadline too.
TEST_F(ReadBoundedFile, AFifoWhoseWriterNeverFinishesIsRefusedAtTheDeadline) {
    const std::string path = dir_ + "/fifo";
    ASSERT_EQ(mkfifo(path.c_str(), 0600), 0);
    made_.push_back(path);
    // O_RDWR holds the FIFO open without waiting for a reader (Linux).
    const int held = open(path.c_str(), O_RDWR | O_CLOEXEC);
    ASSERT_GE(held, 0);
    ASSERT_EQ(::write(held, "n1\n", 3), 3);
    const auto said = readWithin(path, 5, std::chrono::milliseconds(300));
    close(held);
    ASSERT_TRUE(said) << "readBoundedFile still waited for the writer after 5 s";
    EXPECT_EQ(*said, "it is a FIFO and its writer did not finish within 0.3 s; name a regular "
                     "file, or a command's output as <(command)");
}

// A FIFO whose writer comes, writes and goes, as a script would.
TEST_F(ReadBoundedFile, ReadsAFifoToItsWritersEnd) {
    const std::string path = dir_ + "/fifo";
    ASSERT_EQ(mkfifo(path.c_str(), 0600), 0);
    made_.push_back(path);
    std::thread writer([&] {
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
        std::ofstream(path) << "n1 slots=2\nn2\n";
    });
    const auto text = readBoundedFile(path);
    writer.join();
    ASSERT_TRUE(text) << text.error().message;
    EXPECT_EQ(*text, "n1 slots=2\nn2\n");
}

// A pipe, as `--hostfile <(cmd)` names it (/dev/fd/N).
TEST_F(ReadBoundedFile, ReadsAPipeAsProcessSubstitutionGivesIt) {
    int fds[2];
    ASSERT_EQ(pipe(fds), 0);
    ASSERT_EQ(::write(fds[1], "n1\n", 3), 3);
    close(fds[1]);
    const auto text = readBoundedFile("/dev/fd/" + std::to_string(fds[0]));
    close(fds[0]);
    ASSERT_TRUE(text) << text.error().message;
    EXPECT_EQ(*text, "n1\n");
}

// A pipe past the bound stops at it, without waiting for the writer's end.
TEST_F(ReadBoundedFile, APipePastTheLimitIsRefused) {
    int fds[2];
    ASSERT_EQ(pipe(fds), 0);
    ASSERT_EQ(::write(fds[1], "123456", 6), 6);
    const auto text = readBoundedFile("/dev/fd/" + std::to_string(fds[0]), 5);
    close(fds[0]);
    close(fds[1]);
    ASSERT_FALSE(text);
    EXPECT_EQ(text.error().message, "it is larger than 5 bytes, the most stepmap reads of a file");
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
