// profile_diff.hpp: every static change to a node is a stale difference,
// every operational one a note, each in a sentence naming what changed.

#include "profile/profile_diff.hpp"

#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "profile_test_nodes.hpp"

namespace stepmap::topology {
namespace {

using testing::Change;
using testing::sampleNode;
using Differences = std::vector<ProfileDifference>;

Differences afterChange(const Change &change) {
    NodeProfile live = sampleNode();
    change(live);
    live.digest = staticDigest(live);
    return profileDifferences(sampleNode(), live);
}

TEST(ProfileDiff, TheSameNodeHasNoDifferences) {
    NodeProfile live = sampleNode();
    live.profiledAt = "2030-01-01T00:00:00Z";
    live.method = "sysfs+hwloc";
    EXPECT_EQ(profileDifferences(sampleNode(), live), Differences{});
}

TEST(ProfileDiff, EveryStaticChangeIsStale) {
    for (std::size_t i = 0; const Change &change : testing::staticChanges()) {
        const Differences differences = afterChange(change);
        EXPECT_TRUE(anyStale(differences)) << "static change " << i;
        ++i;
    }
}

TEST(ProfileDiff, OperationalChangesAreNotesOnly) {
    for (std::size_t i = 0; const Change &change : testing::operationalChanges()) {
        const Differences differences = afterChange(change);
        EXPECT_FALSE(anyStale(differences)) << "operational change " << i;
        ++i;
    }
}

TEST(ProfileDiff, InterfaceChangesAreNamed) {
    EXPECT_EQ(
        afterChange([](NodeProfile &n) {
            NetworkInterface &eth0 = n.interfaces[0];
            eth0.mtu = 9000;
            eth0.ifindex = 3;
            eth0.mac = "52:54:00:12:34:57";
            eth0.pciAddress.reset();
            eth0.numaNode.reset();
            eth0.addresses = {{"10.0.0.6", 24}};
        }),
        (Differences{{true, "interface eth0: address 10.0.0.5/24 removed"},
                     {true, "interface eth0: address 10.0.0.6/24 added"},
                     {true, "interface eth0: ifindex was 2, now 3"},
                     {true, "interface eth0: MTU was 1500, now 9000"},
                     {true, "interface eth0: MAC was 52:54:00:12:34:56, now 52:54:00:12:34:57"},
                     {true, "interface eth0: PCI address was 0000:00:03.0, now none"},
                     {true, "interface eth0: NUMA node was 0, now unknown"}}));
}

TEST(ProfileDiff, InterfacesAddedRemovedAndRenamed) {
    EXPECT_EQ(afterChange([](NodeProfile &n) {
                  n.interfaces.push_back(n.interfaces[0]);
                  n.interfaces[1].name = "veth0";
                  n.interfaces[1].mac = "a2:5b:1c:00:00:01";
              }),
              (Differences{{true, "interface veth0 added"}}));
    EXPECT_EQ(afterChange([](NodeProfile &n) { n.interfaces.clear(); }),
              (Differences{{true, "interface eth0 removed"}}));
    // Same MAC, new name: renamed, and what else changed with it.
    EXPECT_EQ(afterChange([](NodeProfile &n) {
                  n.interfaces[0].name = "ens3";
                  n.interfaces[0].ifindex = 5;
              }),
              (Differences{{true, "interface eth0 renamed to ens3"},
                           {true, "interface ens3: ifindex was 2, now 5"}}));
    // No MAC to follow: removed and added.
    NodeProfile recorded = sampleNode();
    recorded.interfaces[0].mac = "none";
    NodeProfile live = recorded;
    live.interfaces[0].name = "tun0";
    EXPECT_EQ(profileDifferences(recorded, live),
              (Differences{{true, "interface eth0 removed"}, {true, "interface tun0 added"}}));
}

TEST(ProfileDiff, RdmaChangesAreNamed) {
    EXPECT_EQ(
        afterChange([](NodeProfile &n) {
            RdmaDevice &device = n.rdmaDevices[0];
            device.nodeGuid = "0002:c903:00f1:e9c1";
            device.ports[0].lid = 8;
            device.ports[0].linkLayer = "Ethernet";
            device.ports[0].gids[0].gid = "fe80:0000:0000:0000:0002:c903:00f1:e9c2";
            device.ports[0].gids.push_back({3, "fe80:0000:0000:0000:0002:c903:00f1:e9c3"});
            device.ports.push_back(device.ports[0]);
            device.ports[1].number = 2;
            n.rdmaDevices.push_back({"mlx5_1", "0002:c903:00f1:e9d0", {}});
        }),
        (Differences{{true, "RDMA device mlx5_1 added"},
                     {true, "RDMA device mlx5_0: node GUID was 0002:c903:00f1:e9c0, now "
                            "0002:c903:00f1:e9c1"},
                     {true, "RDMA device mlx5_0 port 2 added"},
                     {true, "RDMA device mlx5_0 port 1: link layer was InfiniBand, now Ethernet"},
                     {true, "RDMA device mlx5_0 port 1: LID was 7, now 8"},
                     {true, "RDMA device mlx5_0 port 1: GID 3 added"},
                     {true, "RDMA device mlx5_0 port 1: GID 0 was "
                            "fe80:0000:0000:0000:0002:c903:00f1:e9c1, now "
                            "fe80:0000:0000:0000:0002:c903:00f1:e9c2"}}));
    EXPECT_EQ(afterChange([](NodeProfile &n) { n.rdmaDevices.clear(); }),
              (Differences{{true, "RDMA device mlx5_0 removed"}}));
}

TEST(ProfileDiff, OperationalChangesAreNotesAfterStaleOnes) {
    EXPECT_EQ(afterChange([](NodeProfile &n) {
                  n.interfaces[0].operstate = "down";
                  n.interfaces[0].adminUp = false;
                  n.interfaces[0].speedMbps.reset();
                  n.interfaces[0].mtu = 9000;
                  n.rdmaDevices[0].ports[0].state = "DOWN";
                  n.rdmaDevices[0].ports[0].physState = "Polling";
                  n.rdmaDevices[0].ports[0].rate = "10 Gb/sec (4X)";
              }),
              (Differences{
                  {true, "interface eth0: MTU was 1500, now 9000"},
                  {false, "interface eth0: operstate was up, now down"},
                  {false, "interface eth0: administrative state was up, now down"},
                  {false, "interface eth0: speed was 10000 Mb/s, now unknown"},
                  {false, "RDMA device mlx5_0 port 1: state was ACTIVE, now DOWN"},
                  {false, "RDMA device mlx5_0 port 1: physical state was LinkUp, now Polling"},
                  {false, "RDMA device mlx5_0 port 1: rate was 100 Gb/sec (4X EDR), now 10 Gb/sec "
                          "(4X)"}}));
}

TEST(ProfileDiff, WhatNoSentenceCoversIsStaleByTheDigest) {
    // The same interfaces in another order: no field differs, the static
    // text (and so the digest) does.
    NodeProfile recorded = sampleNode();
    recorded.interfaces.push_back(recorded.interfaces[0]);
    recorded.interfaces[1].name = "eth1";
    recorded.interfaces[1].mac = "52:54:00:12:34:57";
    NodeProfile live = recorded;
    std::swap(live.interfaces[0], live.interfaces[1]);
    const Differences differences = profileDifferences(recorded, live);
    ASSERT_EQ(differences.size(), 1u);
    EXPECT_TRUE(differences[0].stale);
    EXPECT_EQ(differences[0].text.substr(0, 38), "static fields differ (digest was sha25");
}

TEST(ProfileDiff, ADifferentNodeNameIsStale) {
    EXPECT_EQ(afterChange([](NodeProfile &n) { n.name = "n2"; }),
              (Differences{{true, "node: name was n1, now n2"}}));
}

} // namespace
} // namespace stepmap::topology
