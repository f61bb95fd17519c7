// What the server logs when a rank's committed TCP record is not the one
// predicted from the profile.

#include "modexless/record_check.hpp"

#include <gtest/gtest.h>

#include <arpa/inet.h>

using namespace stepmap::modexless;

namespace {

PublishedAddress v4(const char *text, std::uint16_t index, std::uint32_t prefix = 24) {
    PublishedAddress a;
    a.kernelIndex = index;
    a.family = AddressFamily::ipv4;
    inet_pton(AF_INET, text, a.address.data());
    a.prefixLength = prefix;
    a.bandwidthMbps = 100;
    return a;
}

PublishedAddress v6(const char *text, std::uint16_t index) {
    PublishedAddress a;
    a.kernelIndex = index;
    a.family = AddressFamily::ipv6;
    inet_pton(AF_INET6, text, a.address.data());
    a.prefixLength = 64;
    a.bandwidthMbps = 100;
    return a;
}

std::optional<std::string> difference(OpenMpiLayout layout,
                                      const std::vector<PublishedAddress> &committed,
                                      std::uint16_t committedPort,
                                      const std::vector<PublishedAddress> &expected,
                                      std::uint16_t expectedPort) {
    return tcpRecordDifference(layout, tcpRecord(layout, committed, committedPort),
                               tcpRecord(layout, expected, expectedPort));
}

const std::vector<PublishedAddress> kTwo{v6("fd00::2", 4), v4("192.0.2.2", 4)};

} // namespace

TEST(RecordCheck, EqualRecordsHaveNoDifference) {
    for (auto layout : {OpenMpiLayout::v41, OpenMpiLayout::v50})
        EXPECT_EQ(difference(layout, kTwo, 40003, kTwo, 40003), std::nullopt);
}

TEST(RecordCheck, NamesWhatDiffersCommittedValueFirst) {
    using L = OpenMpiLayout;
    EXPECT_EQ(difference(L::v41, kTwo, 41003, kTwo, 40003), "port 41003 vs 40003");
    EXPECT_EQ(difference(L::v41, {v4("10.0.0.1", 2)}, 40000, kTwo, 40000), "1 address vs 2");
    EXPECT_EQ(difference(L::v41, {kTwo[0], v4("192.0.2.9", 4)}, 40000, kTwo, 40000),
              "address 192.0.2.9 vs 192.0.2.2 in entry 2");
    EXPECT_EQ(difference(L::v50, {kTwo[0], v4("192.0.2.2", 5)}, 40000, kTwo, 40000),
              "kernel index 5 vs 4 in entry 2");
    EXPECT_EQ(difference(L::v41, {v4("192.0.2.2", 4)}, 40000, {v6("fd00::2", 4)}, 40000),
              "family IPv4 vs IPv6");
    EXPECT_EQ(difference(L::v50, {v4("192.0.2.2", 4, 16)}, 40000, {v4("192.0.2.2", 4)}, 40000),
              "netmask /16 vs /24");
    EXPECT_EQ(difference(L::v41, {kTwo[1], kTwo[0]}, 40000, kTwo, 40000),
              "the same addresses in another order");
    EXPECT_EQ(difference(L::v50, {v4("192.0.2.2", 4)}, 40001, {v4("192.0.2.2", 5)}, 40000),
              "kernel index 4 vs 5, port 40001 vs 40000");
}

TEST(RecordCheck, RecordsOfNoWholeEntryAreNamedBySize) {
    std::string bytes = tcpRecord(OpenMpiLayout::v41, kTwo, 40000);
    EXPECT_EQ(tcpRecordDifference(OpenMpiLayout::v41, bytes + "xy", bytes),
              "a record of 50 bytes vs 48, not whole 24-byte entries");
}

TEST(RecordCheck, UnusedBytesAreCompared) {
    std::string bytes = tcpRecord(OpenMpiLayout::v41, kTwo, 40000);
    std::string changed = bytes;
    changed[23] = 1;
    EXPECT_EQ(tcpRecordDifference(OpenMpiLayout::v41, changed, bytes), "unused bytes in entry 1");
}

TEST(RecordCheck, LogLine) {
    EXPECT_EQ(tcpRecordMismatchLine(3, "port 41003 vs 40003"),
              "rank 3 published a TCP record that differs from the profile's: port 41003 vs "
              "40003; its peers were handed the profile's and would wait on it, so the step "
              "ends (the profile is out of date, or Open MPI reads interface settings stepmap "
              "does not see, e.g. btl_tcp_if_include in an mca-params.conf; run it with "
              "--modex=async)");
}

TEST(RecordCheck, AnExpectedRecordOfNoWholeEntryIsNamedBySizeToo) {
    std::string bytes = tcpRecord(OpenMpiLayout::v50, kTwo, 40000);
    EXPECT_EQ(tcpRecordDifference(OpenMpiLayout::v50, bytes, bytes + "x"),
              "a record of 64 bytes vs 65, not whole 32-byte entries");
}
