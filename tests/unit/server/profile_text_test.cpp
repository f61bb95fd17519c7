// The text forms of a node's profile entry the node server serves as
// stepmap.* keys (profile_text.hpp, docs/profile-keys.md), and the PMIx
// forms of single values.

#include "profile_text.hpp"

#include "profiled_node.hpp"

#include <gtest/gtest.h>

using namespace stepmap;
using namespace stepmap::server;

namespace {

topology::NetworkInterface interface(const std::string &name) {
    topology::NetworkInterface i;
    i.name = name;
    i.mtu = 1500;
    i.operstate = "up";
    i.mac = "52:54:00:12:34:56";
    return i;
}

} // namespace

TEST(ProfileText, OneLinePerInterfaceWithUnknownsAsDashes) {
    topology::NodeProfile node;
    auto eth = interface("eth0");
    eth.addresses = {{"10.0.0.5", 24}, {"2001:db8::5", 64}};
    eth.ifindex = 2;
    eth.numaNode = 1;
    auto veth = interface("veth0");
    veth.mac = "none";
    node.interfaces = {eth, veth};
    EXPECT_EQ(interfacesText(node), "eth0 ifindex=2 mtu=1500 mac=52:54:00:12:34:56 numa=1 "
                                    "addresses=10.0.0.5/24,2001:db8::5/64\n"
                                    "veth0 ifindex=- mtu=1500 mac=none numa=- addresses=");
    EXPECT_EQ(interfacesText(topology::NodeProfile{}), "");
}

TEST(ProfileText, OneLinePerRdmaPortTheRateLast) {
    topology::NodeProfile node;
    topology::RdmaDevice mlx = test::edrDevice();
    mlx.ports[0].gids.push_back({1, "fe80:0000:0000:0000:0002:c903:00f1:e9c2"});
    mlx.ports.push_back({2, "DOWN", "Disabled", "Ethernet", "10 Gb/sec (1X QDR)", 0, {}});
    node.rdmaDevices = {mlx, topology::RdmaDevice{"rxe0", "0000:0000:0000:0001", {}}};
    EXPECT_EQ(rdmaDevicesText(node),
              "mlx5_0 guid=0002:c903:00f1:e9c0 port=1 layer=InfiniBand state=ACTIVE lid=7 "
              "gids=0:fe80:0000:0000:0000:0002:c903:00f1:e9c1,1:fe80:0000:0000:0000:0002:c903:"
              "00f1:e9c2 rate=100 Gb/sec (4X EDR)\n"
              "mlx5_0 guid=0002:c903:00f1:e9c0 port=2 layer=Ethernet state=DOWN lid=0 gids= "
              "rate=10 Gb/sec (1X QDR)\n"
              "rxe0 guid=0000:0000:0000:0001");
}

TEST(ProfileText, PciDeviceIdInPmixForm) {
    EXPECT_EQ(pciDeviceId("0000:3b:00.0"), "0000:3b:00:00");
    EXPECT_EQ(pciDeviceId("abc1:0f:23.1"), "abc1:0f:23:01");
}

TEST(ProfileText, PortRatesInBitsPerSecond) {
    EXPECT_EQ(rateBitsPerSecond("100 Gb/sec (4X EDR)"), 100000000000u);
    EXPECT_EQ(rateBitsPerSecond("2.5 Gb/sec (1X SDR)"), 2500000000u);
    for (const char *odd : {"", "fast", "100 Mb/sec", "-1 Gb/sec", "inf Gb/sec", "nan Gb/sec"})
        EXPECT_FALSE(rateBitsPerSecond(odd)) << odd;
}
