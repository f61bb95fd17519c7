// interface_numa.hpp: the NUMA node hwloc gives each network interface of
// the shipped machines (tests/fixtures/topologies), and how the prober
// takes it: only for the live root, never for a fixture tree.

#include "interface_numa.hpp"

#include <cstdlib>
#include <string>

#include <gtest/gtest.h>

#include "profile_test_files.hpp"

namespace stepmap::topology {
namespace {

using Numa = std::map<std::string, std::optional<int>>;

NodeTopology shipped(const std::string &file) {
    const char *dir = std::getenv("STEPMAP_TOPOLOGIES");
    EXPECT_NE(dir, nullptr);
    auto topology = NodeTopology::fromXmlFile(std::string(dir ? dir : "") + "/" + file);
    EXPECT_TRUE(topology.ok()) << topology.error().message;
    return std::move(topology.value());
}

TEST(InterfaceNuma, EachInterfaceHasTheNumaNodeOfItsPackage) {
    // lstopo: the host bridge with eth0, eth1 and ib0 hangs under package 1.
    EXPECT_EQ(interfaceNumaNodes(shipped("32em64t-2n8c2t-pci-normalio.xml")),
              (Numa{{"eth0", 1}, {"eth1", 1}, {"ib0", 1}}));
    // Four groups of four packages, one NUMA node and two interfaces each.
    EXPECT_EQ(interfaceNumaNodes(shipped("96em64t-4n4d3ca2co-pci.xml")), (Numa{{"eth0", 0},
                                                                               {"eth1", 0},
                                                                               {"eth2", 1},
                                                                               {"eth3", 1},
                                                                               {"eth4", 2},
                                                                               {"eth5", 2},
                                                                               {"eth6", 3},
                                                                               {"eth7", 3}}));
}

TEST(InterfaceNuma, AMachineWithoutNetworkDevicesGivesNone) {
    EXPECT_EQ(interfaceNumaNodes(shipped("16amd64-8n2c-cpusets.xml")), Numa{});
}

TEST(InterfaceNuma, AFixtureRootKeepsSysfs) {
    // The fixture's eth0 is on NUMA node 0 in sysfs; the topology says 1.
    ProbeOptions options{testing::sysfsFixtures() + "/ethernet", "e", testing::kFixtureTime};
    const auto node = probeNodeWithHwloc(options, shipped("32em64t-2n8c2t-pci-normalio.xml"));
    ASSERT_TRUE(node.ok()) << node.error().message;
    EXPECT_EQ(node->interfaces.at(0).numaNode, 0);
    EXPECT_EQ(node->method, "sysfs");
}

TEST(InterfaceNuma, TheProberTakesTheGivenNumaNodes) {
    ProbeOptions options{testing::sysfsFixtures() + "/veth", "v", testing::kFixtureTime};
    options.method = "sysfs+hwloc";
    options.numaNodes = Numa{{"veth0", 3}, {"eth9", 1}};
    const auto node = probeNode(options);
    ASSERT_TRUE(node.ok()) << node.error().message;
    EXPECT_EQ(node->interfaces.at(0).numaNode, 3);
    EXPECT_EQ(node->interfaces.at(1).numaNode, std::nullopt); // not listed: sysfs
    EXPECT_EQ(node->method, "sysfs+hwloc");
    EXPECT_EQ(node->digest, staticDigest(*node));
}

TEST(InterfaceNuma, TheLiveNodeIsProbedWithHwloc) {
    // This machine: whatever it has, the method says hwloc was asked and
    // every interface hwloc lists has hwloc's NUMA node.
    const auto topology = NodeTopology::fromThisMachine();
    ASSERT_TRUE(topology.ok()) << topology.error().message;
    const auto node = probeNodeWithHwloc({"/", "live", ""}, *topology);
    ASSERT_TRUE(node.ok()) << node.error().message;
    EXPECT_EQ(node->method, "sysfs+hwloc");
    const Numa numa = interfaceNumaNodes(*topology);
    for (const NetworkInterface &interface : node->interfaces) {
        if (numa.count(interface.name) != 0) {
            EXPECT_EQ(interface.numaNode, numa.at(interface.name)) << interface.name;
        }
    }
}

} // namespace
} // namespace stepmap::topology
