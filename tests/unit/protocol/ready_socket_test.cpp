// The ready socket's two ends (protocol/ready/ready_socket.hpp)
// over a real socketpair.

#include "os/unique_fd.hpp"
#include "protocol/ready/ready_report.hpp"
#include "protocol/ready/ready_socket.hpp"

#include <gtest/gtest.h>
#include <sys/socket.h>

#include <thread>

using namespace stepmap;
using os::UniqueFd;

namespace {

struct SocketPair {
    UniqueFd plugin, server;
    SocketPair() {
        int fds[2];
        EXPECT_EQ(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, fds), 0);
        plugin.reset(fds[0]);
        server.reset(fds[1]);
    }
};

} // namespace

TEST(ReadySocket, ReportIsCompleteAtEndOrError) {
    EXPECT_TRUE(ready::reportComplete("READY\nEND\n"));
    EXPECT_TRUE(ready::reportComplete("ERROR no\n"));
    EXPECT_FALSE(ready::reportComplete("READY\nRANK 0\n"));
    EXPECT_FALSE(ready::reportComplete("ERROR no"));
    EXPECT_FALSE(ready::reportComplete(""));
}

TEST(ReadySocket, WhatTheServerWritesThePluginDecodes) {
    SocketPair p;
    const std::string report = ready::encodeReadyReport({{0, {"PMIX_RANK=0"}}, {2, {}}});
    ASSERT_TRUE(ready::writeReport(p.server.get(), report));
    // The server keeps its end open: the END line completes the report.
    auto text = ready::readReport(p.plugin.get(), 5, 1 << 16);
    ASSERT_TRUE(text) << text.error().message;
    EXPECT_EQ(*text, report);
    auto envs = ready::decodeReadyReport(*text, {0, 2});
    ASSERT_TRUE(envs) << envs.error().message;
    EXPECT_EQ(envs->at(0), (ready::ClientEnvironment{{"PMIX_RANK", "0"}}));
}

TEST(ReadySocket, AFailureLineEndsTheReport) {
    SocketPair p;
    ASSERT_TRUE(ready::writeReport(p.server.get(), ready::encodeReadyFailure("no\nway")));
    auto text = ready::readReport(p.plugin.get(), 5, 1 << 16);
    ASSERT_TRUE(text);
    EXPECT_EQ(*text, "ERROR no way\n");
}

TEST(ReadySocket, ClosedWithoutAWordIsEmpty) {
    SocketPair p;
    p.server.reset();
    auto text = ready::readReport(p.plugin.get(), 5, 1 << 16);
    ASSERT_TRUE(text);
    EXPECT_EQ(*text, "");
}

TEST(ReadySocket, BoundedInSizeAndTime) {
    SocketPair p;
    ASSERT_TRUE(ready::writeReport(p.server.get(), "READY\n" + std::string(100, 'x')));
    auto big = ready::readReport(p.plugin.get(), 5, 64);
    ASSERT_FALSE(big);
    EXPECT_EQ(big.error().message, "the server's ready report is larger than 64 bytes");

    SocketPair q;
    auto late = ready::readReport(q.plugin.get(), 1, 1 << 16);
    ASSERT_FALSE(late);
    EXPECT_EQ(late.error().message, "the server did not report ready within 1 s");
}

TEST(ReadySocket, WriteFailsWhenThePluginIsGone) {
    SocketPair p;
    p.plugin.reset();
    signal(SIGPIPE, SIG_IGN);
    EXPECT_FALSE(ready::writeReport(p.server.get(), "READY\nEND\n"));
}
