// readBoundedFile: whole files, FIFOs and devices, never more than the
// limit.

#include "user_file.hpp"

#include <sys/stat.h>
#include <unistd.h>

#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <fstream>
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
    // Endless devices stop at the limit.
    EXPECT_EQ(readBoundedFile("/dev/zero").error().message,
              "it is larger than 16 MiB, the most stepmap reads of a file");
    EXPECT_EQ(readBoundedFile("/dev/urandom", 1 << 20).error().message,
              "it is larger than 1 MiB, the most stepmap reads of a file");
}

TEST_F(ReadBoundedFile, ReadsAFifo) {
    const std::string path = dir_ + "/fifo";
    ASSERT_EQ(mkfifo(path.c_str(), 0600), 0);
    made_.push_back(path);
    std::thread writer([&] { std::ofstream(path) << "n1\nn2\n"; });
    const auto text = readBoundedFile(path);
    writer.join();
    EXPECT_EQ(text.value(), "n1\nn2\n");
}

TEST_F(ReadBoundedFile, RefusesAnEndlessFifo) {
    const std::string path = dir_ + "/fifo";
    ASSERT_EQ(mkfifo(path.c_str(), 0600), 0);
    made_.push_back(path);
    // The writer sees EPIPE, not a signal, once the reader stops.
    std::signal(SIGPIPE, SIG_IGN);
    std::thread writer([&] {
        std::ofstream out(path);
        const std::string block(4096, 'x');
        while (out << block) {
        }
    });
    const auto text = readBoundedFile(path, 100000);
    ASSERT_FALSE(text.ok());
    EXPECT_EQ(text.error().message, "it is larger than 100000 bytes, the most stepmap reads of "
                                    "a file");
    writer.join();
}

TEST_F(ReadBoundedFile, GivesTheSystemsReason) {
    EXPECT_EQ(readBoundedFile(dir_ + "/missing").error().message, "No such file or directory");
    EXPECT_EQ(readBoundedFile(dir_).error().message, "Is a directory");
}

TEST(FormatByteSize, UsesTheLargestExactUnit) {
    EXPECT_EQ(formatByteSize(16u << 20), "16 MiB");
    EXPECT_EQ(formatByteSize(128u << 10), "128 KiB");
    EXPECT_EQ(formatByteSize(1000), "1000 bytes");
    EXPECT_EQ(formatByteSize(1), "1 byte");
}

} // namespace
} // namespace stepmap
