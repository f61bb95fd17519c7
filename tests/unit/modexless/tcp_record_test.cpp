// The predicted btl tcp records: Open MPI 4.1 against bytes Open MPI 4.1.4
// really committed (tests/fixtures/modexless), Open MPI 5.0 against the
// layout read in the 5.0.10 source (no 5.0 build here to capture from).

#include "modexless/tcp_record.hpp"

#include "captured_machine.hpp"
#include "modexless/record_check.hpp"

#include <gtest/gtest.h>

#include <algorithm>

using namespace stepmap;
using namespace stepmap::modexless;
using namespace stepmap::modexless::test;

TEST(TcpRecord, KeysAndEntrySizesAreOpenMpis) {
    EXPECT_EQ(tcpModexKey(OpenMpiLayout::v41), "btl.tcp.4.1");
    EXPECT_EQ(tcpModexKey(OpenMpiLayout::v50), "btl.tcp.5.0");
    EXPECT_EQ(tcpEntrySize(OpenMpiLayout::v41), 24u);
    EXPECT_EQ(tcpEntrySize(OpenMpiLayout::v50), 32u);
}

// eth0 with an IPv4, a global and a link-local IPv6 address: every byte as
// Open MPI 4.1.4 committed it, for every captured port.
TEST(TcpRecord, OpenMpi41MatchesTheCapturedBytesOfOneInterface) {
    const topology::NodeProfile node = machineProfile("vm");
    for (const auto &[port, bytes] : capturedRecords("vm"))
        EXPECT_EQ(toHex(openMpi41TcpRecord(node, port)), toHex(bytes)) << "port " << port;
}

// Several addresses per interface, a down interface, "lonely": every byte
// but the order of the two global IPv6 addresses of va, which follows the
// kernel's address hash (fd09::2 came first), not anything a profile holds.
TEST(TcpRecord, OpenMpi41MatchesTheCapturedBytesBarTheIpv6HashOrder) {
    topology::NodeProfile node = machineProfile("netns");
    for (const auto &[port, bytes] : capturedRecords("netns"))
        EXPECT_EQ(tcpRecordDifference(OpenMpiLayout::v41, bytes, openMpi41TcpRecord(node, port)),
                  "the same addresses in another order");

    auto va = std::find_if(node.interfaces.begin(), node.interfaces.end(),
                           [](const auto &i) { return i.name == "va"; });
    ASSERT_NE(va, node.interfaces.end());
    ASSERT_EQ(va->addresses.size(), 5u);
    std::swap(va->addresses[3], va->addresses[4]); // fd09::2 first, as the kernel listed
    for (const auto &[port, bytes] : capturedRecords("netns"))
        EXPECT_EQ(toHex(openMpi41TcpRecord(node, port)), toHex(bytes)) << "port " << port;
}

// Open MPI 5.0.10 (btl_tcp_addr.h, btl_tcp_component.c): one
// mca_btl_tcp_modex_addr_t per selected interface, from a zeroed buffer,
// holding the interface's first entry of the interface list (IPv6 first):
// addr[16], ifkindex u32, mask u32 (prefix length), bandwidth u32 (ethtool
// speed in Mb/s, 100 when unknown), port (network order), family, padding.
TEST(TcpRecord, OpenMpi50FollowsTheSourcesLayout) {
    EXPECT_EQ(toHex(openMpi50TcpRecord(machineProfile("vm"), 40000)),
              "fd000000000000000000000000000002" // fd00::2
              "04000000"                         // eth0's ifindex
              "40000000"                         // /64
              "64000000"                         // 100 Mb/s: virtio has no speed
              "9c40"                             // 40000
              "01"                               // IPv6
              "00");
    EXPECT_EQ(toHex(openMpi50TcpRecord(machineProfile("netns"), 41001)),
              "fd090000000000000000000000000001" // va: its first IPv6 address
              "03000000"
              "40000000"
              "10270000" // 10000 Mb/s (veth)
              "a029"     // 41001
              "01"
              "00"
              "0a090201000000000000000000000000" // vc: 10.9.2.1, no IPv6
              "05000000"
              "18000000" // /24
              "10270000"
              "a029"
              "00" // IPv4
              "00");
}

TEST(TcpRecord, NothingSelectedGivesNoRecord) {
    topology::NodeProfile node = machineProfile("vm");
    for (auto &iface : node.interfaces)
        iface.name = "sppp" + iface.name;
    EXPECT_EQ(openMpi41TcpRecord(node, 40000), "");
    EXPECT_EQ(openMpi50TcpRecord(node, 40000), "");
}
