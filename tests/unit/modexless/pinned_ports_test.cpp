// The pinned listen ports: the documented range, Slurm's reserved ports, and
// the bind test run before the tasks start.

#include "modexless/pinned_ports.hpp"

#include <gtest/gtest.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

using namespace stepmap;
using namespace stepmap::modexless;

TEST(PinnedPorts, ParsesBaseDashEnd) {
    auto range = parsePortRange("40000-40999", "modexless_ports");
    ASSERT_TRUE(range.ok());
    EXPECT_EQ(*range, (PortRange{40000, 40999}));
    EXPECT_EQ(*parsePortRange("1-65535", "x"), (PortRange{1, 65535}));
    EXPECT_EQ(*parsePortRange("5000-5000", "x"), (PortRange{5000, 5000}));
}

TEST(PinnedPorts, RefusesEveryOtherRangeText) {
    for (const char *bad : {"", "40000", "40000-", "-40000", "40999-40000", "0-10", "1-65536",
                            " 1-2", "1-2 ", "1--2", "+1-2", "1-+2", "a-b", "1-2-3", "1,2"})
        EXPECT_EQ(parsePortRange(bad, "modexless_ports").error().message,
                  std::string("modexless_ports=") + bad +
                      ": expected a port range BASE-END with 1 <= BASE <= END <= 65535, "
                      "e.g. 40000-40999")
            << bad;
}

TEST(PinnedPorts, ParsesSlurmsReservedPorts) {
    EXPECT_EQ(*parseReservedPorts("12000-12003"),
              (std::vector<std::uint16_t>{12000, 12001, 12002, 12003}));
    EXPECT_EQ(*parseReservedPorts("12000,12004-12005,12009"),
              (std::vector<std::uint16_t>{12000, 12004, 12005, 12009}));
    for (const char *bad : {"", ",", "12000,", ",12000", "12000-11999", "x", "12000;12001"})
        EXPECT_EQ(parseReservedPorts(bad).error().message,
                  std::string("SLURM_STEP_RESV_PORTS=") + bad +
                      ": expected ports or port ranges separated by commas, e.g. 12000-12015 "
                      "or 12000,12004-12007")
            << bad;
}

// A port a listening socket holds is not free; once it is closed it is.
TEST(PinnedPorts, PortIsFreeBindsLikeBtlTcp) {
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    ASSERT_GE(fd, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    ASSERT_EQ(bind(fd, reinterpret_cast<sockaddr *>(&a), sizeof a), 0);
    ASSERT_EQ(listen(fd, 1), 0);
    socklen_t length = sizeof a;
    ASSERT_EQ(getsockname(fd, reinterpret_cast<sockaddr *>(&a), &length), 0);
    const std::uint16_t port = ntohs(a.sin_port);
    EXPECT_FALSE(portIsFree(port));
    close(fd);
    EXPECT_TRUE(portIsFree(port));
}

TEST(PinnedPorts, ParsesTheKernelsEphemeralRange) {
    EXPECT_EQ(*parseLocalPortRange("32768\t60999\n"), (PortRange{32768, 60999}));
    EXPECT_EQ(*parseLocalPortRange("1024 65535"), (PortRange{1024, 65535}));
    for (const char *bad : {"", "32768", "60999\t32768", "a\tb", "0\t10"})
        EXPECT_EQ(parseLocalPortRange(bad).error().message,
                  std::string("net.ipv4.ip_local_port_range '") + bad +
                      "': expected two ports, the first not above the second")
            << bad;
}

// Seen here: ranks pinned to 45000-45003 failed to bind now and then, a
// port taken by some connection's ephemeral end; below 32768 never.
TEST(PinnedPorts, WarnsWhenPinnedPortsAreEphemeral) {
    const PortRange ephemeral{32768, 60999};
    EXPECT_EQ(ephemeralOverlap({20000, 32767}, ephemeral, ""), std::nullopt);
    EXPECT_EQ(ephemeralOverlap({40000, 40003}, ephemeral, "40000-40003\n"), std::nullopt);
    EXPECT_EQ(ephemeralOverlap({32760, 32770}, ephemeral, "32770"),
              "the port range 32760-32770 shares 2 ports with the kernel's ephemeral ports "
              "32768-60999 (net.ipv4.ip_local_port_range): any outgoing connection may take a "
              "rank's port; choose a range outside it or add it to "
              "net.ipv4.ip_local_reserved_ports");
}
