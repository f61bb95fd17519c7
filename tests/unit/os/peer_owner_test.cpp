// The owner of a TCP connection's other end, as the kernel's socket
// diagnostics tell it: what the node server's PMIx listener admits by.

#include "os/peer_owner.hpp"
#include "os/unique_fd.hpp"

#include <gtest/gtest.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

using namespace stepmap;
using namespace stepmap::os;

namespace {

// A loopback listener on a port of the kernel's choosing.
struct Listener {
    UniqueFd fd{socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0)};
    sockaddr_in addr{};
    Listener() {
        addr.sin_family = AF_INET;
        addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        socklen_t length = sizeof addr;
        if (bind(fd.get(), reinterpret_cast<sockaddr *>(&addr), sizeof addr) != 0 ||
            listen(fd.get(), 8) != 0 ||
            getsockname(fd.get(), reinterpret_cast<sockaddr *>(&addr), &length) != 0)
            ADD_FAILURE() << "cannot listen on loopback";
    }
    UniqueFd connectFromHere() const {
        UniqueFd c(socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
        if (connect(c.get(), reinterpret_cast<const sockaddr *>(&addr), sizeof addr) != 0)
            ADD_FAILURE() << "cannot connect";
        return c;
    }
    UniqueFd accepted() const {
        return UniqueFd(accept4(fd.get(), nullptr, nullptr, SOCK_CLOEXEC));
    }
};

} // namespace

TEST(PeerOwner, AConnectionOfThisProcessIsOursAndOnThisHost) {
    Listener l;
    auto client = l.connectFromHere();
    auto server = l.accepted();
    ASSERT_TRUE(server);
    auto owner = tcpPeerOwner(server.get());
    ASSERT_TRUE(owner) << owner.error().message;
    EXPECT_TRUE(owner->onThisHost);
    EXPECT_EQ(owner->uid, getuid());
    // And the other way round: the listener's end, seen from the client.
    auto back = tcpPeerOwner(client.get());
    ASSERT_TRUE(back) << back.error().message;
    EXPECT_TRUE(back->onThisHost);
    EXPECT_EQ(back->uid, getuid());
}

TEST(PeerOwner, AnotherUsersConnectionNamesThatUser) {
    if (geteuid() != 0)
        GTEST_SKIP() << "needs root, to connect as another user";
    Listener l;
    int ready[2];
    ASSERT_EQ(pipe(ready), 0);
    const pid_t child = fork();
    if (child == 0) {
        if (setresgid(65534, 65534, 65534) != 0 || setresuid(65534, 65534, 65534) != 0)
            _exit(2);
        auto c = l.connectFromHere();
        (void)!write(ready[1], "c", 1);
        pause();
        _exit(0);
    }
    char c = 0;
    ASSERT_EQ(read(ready[0], &c, 1), 1);
    auto server = l.accepted();
    auto owner = tcpPeerOwner(server.get());
    kill(child, SIGKILL);
    waitpid(child, nullptr, 0);
    close(ready[0]);
    close(ready[1]);
    ASSERT_TRUE(owner) << owner.error().message;
    EXPECT_TRUE(owner->onThisHost);
    EXPECT_EQ(owner->uid, 65534u);
}

TEST(PeerOwner, APeerWhoseSocketIsGoneIsNotOursToTrust) {
    // Closed before it is looked at: the lookup finds no live socket of that
    // address (or a closing one the kernel gives no owner, uid 0), never one
    // that would pass as the job's user.
    Listener l;
    { auto client = l.connectFromHere(); }
    auto server = l.accepted();
    auto owner = tcpPeerOwner(server.get());
    ASSERT_TRUE(owner) << owner.error().message;
    if (owner->onThisHost) {
        EXPECT_EQ(owner->uid, 0u);
    }
}

TEST(PeerOwner, ANonTcpDescriptorIsAnError) {
    int pair[2];
    ASSERT_EQ(socketpair(AF_UNIX, SOCK_STREAM, 0, pair), 0);
    EXPECT_FALSE(tcpPeerOwner(pair[0]));
    close(pair[0]);
    close(pair[1]);
    UniqueFd unconnected(socket(AF_INET, SOCK_STREAM, 0));
    EXPECT_FALSE(tcpPeerOwner(unconnected.get()));
}
