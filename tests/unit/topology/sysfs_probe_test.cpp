// sysfs_probe.hpp: fixture trees (tests/fixtures/sysfs) probed into the
// golden YAML beside them, byte for byte; broken trees made on the fly give
// errors naming the path.

#include "profile/sysfs_probe.hpp"

#include <filesystem>
#include <fstream>
#include <string>

#include <gtest/gtest.h>

#include "profile/profile_yaml.hpp"
#include "profile_test_files.hpp"

namespace stepmap::topology {
namespace {

namespace fs = std::filesystem;
using testing::fileText;
using testing::kFixtureTime;
using testing::kFixtureTrees;
using testing::sysfsFixtures;

Expected<NodeProfile> probeFixture(const std::string &root, const std::string &name) {
    return probeNode({root, name, kFixtureTime});
}

TEST(SysfsProbe, FixtureTreesGiveTheirGoldenYaml) {
    for (const std::string tree : kFixtureTrees) {
        const auto node = probeFixture(sysfsFixtures() + "/" + tree, tree + "-node");
        ASSERT_TRUE(node.ok()) << node.error().message;
        EXPECT_EQ(writeProfileYaml(Profile{kProfileFormatVersion, {*node}}),
                  fileText(sysfsFixtures() + "/" + tree + ".yaml"))
            << tree;
    }
}

TEST(SysfsProbe, ReadsWhatEachFixtureHolds) {
    const auto rdma = probeFixture(sysfsFixtures() + "/rdma", "r").value();
    ASSERT_EQ(rdma.rdmaDevices.size(), 1u);
    const RdmaPort &port = rdma.rdmaDevices[0].ports.at(0);
    EXPECT_EQ(port.lid, 7);          // sysfs writes "0x7"
    EXPECT_EQ(port.state, "ACTIVE"); // "4: ACTIVE"
    EXPECT_EQ(port.gids, (std::vector<RdmaGid>{{0, "fe80:0000:0000:0000:0002:c903:00f1:e9c1"},
                                               {2, "fec0:0000:0000:0001:0002:c903:00f1:e9c1"}}));
    EXPECT_EQ(rdma.interfaces.at(0).numaNode, 1);

    const auto veth = probeFixture(sysfsFixtures() + "/veth", "v").value();
    ASSERT_EQ(veth.interfaces.size(), 2u);
    EXPECT_EQ(veth.interfaces[1].speedMbps, std::nullopt);
    EXPECT_EQ(veth.interfaces[1].pciAddress, std::nullopt);
    EXPECT_EQ(veth.interfaces[1].numaNode, std::nullopt);

    EXPECT_EQ(veth.interfaces[1].ifindex, 6u);
    EXPECT_TRUE(veth.interfaces[1].adminUp); // up, but its peer is not: lowerlayerdown

    const auto ethernet = probeFixture(sysfsFixtures() + "/ethernet", "e").value();
    ASSERT_EQ(ethernet.interfaces.size(), 1u); // lo left out
    EXPECT_EQ(ethernet.interfaces[0].ifindex, 2u);
    EXPECT_EQ(ethernet.interfaces[0].pciAddress, "0000:00:03.0");
    EXPECT_EQ(ethernet.digest, staticDigest(ethernet));
}

// A copy of a fixture tree in a fresh directory, to break.
class BrokenTree : public ::testing::Test {
protected:
    void SetUp() override {
        root_ = fs::temp_directory_path() /
                ("stepmap-sysfs-" + std::to_string(::getpid()) + "-" +
                 ::testing::UnitTest::GetInstance()->current_test_info()->name());
        fs::remove_all(root_);
        fs::copy(sysfsFixtures() + "/ethernet", root_,
                 fs::copy_options::recursive | fs::copy_options::copy_symlinks);
    }
    void TearDown() override { fs::remove_all(root_); }

    std::string eth0() const {
        return root_.string() + "/sys/devices/pci0000:00/0000:00:03.0/net/eth0";
    }

    void write(const std::string &path, const std::string &text) const {
        fs::remove(path);
        std::ofstream(path) << text;
    }

    // With eth0's device link pointing at `target`, the probe still finds
    // the fixture's PCI function 0000:00:03.0 and its NUMA node 0.
    void expectPciFunctionThrough(const std::string &target) const {
        fs::remove(eth0() + "/device");
        fs::create_symlink(target, eth0() + "/device");
        const auto node = probeFixture(root_.string(), "n1");
        ASSERT_TRUE(node.ok()) << node.error().message;
        EXPECT_EQ(node->interfaces.at(0).pciAddress, "0000:00:03.0");
        EXPECT_EQ(node->interfaces.at(0).numaNode, 0);
    }

    std::string probeError() const {
        const auto node = probeFixture(root_.string(), "n1");
        EXPECT_FALSE(node.ok());
        return node.ok() ? std::string() : node.error().message;
    }

    fs::path root_;
};

TEST_F(BrokenTree, ABadValueNamesTheFile) {
    write(eth0() + "/mtu", "jumbo\n");
    EXPECT_EQ(probeError(), root_.string() + "/sys/class/net/eth0/mtu: 'jumbo' is not a number");
}

TEST_F(BrokenTree, ABadMacNamesTheFile) {
    write(eth0() + "/address", "52:54:00\n");
    EXPECT_EQ(probeError(),
              root_.string() + "/sys/class/net/eth0/address: '52:54:00' is not a MAC address");
}

TEST_F(BrokenTree, AnInterfaceDownByTheAdministratorIsRead) {
    write(eth0() + "/flags", "0x1002\n");
    const auto node = probeFixture(root_.string(), "n1");
    ASSERT_TRUE(node.ok()) << node.error().message;
    EXPECT_FALSE(node->interfaces.at(0).adminUp);
}

TEST_F(BrokenTree, BadFlagsOrIndexNameTheFile) {
    write(eth0() + "/flags", "up\n");
    EXPECT_EQ(probeError(), root_.string() + "/sys/class/net/eth0/flags: 'up' is not a number");
    write(eth0() + "/flags", "0x1003\n");
    write(eth0() + "/ifindex", "0\n");
    EXPECT_EQ(probeError(),
              root_.string() + "/sys/class/net/eth0/ifindex: '0' is not an interface index");
    fs::remove(eth0() + "/ifindex");
    EXPECT_EQ(probeError(), root_.string() + "/sys/class/net/eth0/ifindex: missing or unreadable");
}

TEST_F(BrokenTree, AnOversizedFileIsRefused) {
    write(eth0() + "/operstate", std::string(5000, 'u'));
    EXPECT_EQ(probeError(),
              root_.string() + "/sys/class/net/eth0/operstate: longer than 4096 bytes");
}

TEST_F(BrokenTree, AMissingFileIsNamed) {
    fs::remove(eth0() + "/mtu");
    EXPECT_EQ(probeError(), root_.string() + "/sys/class/net/eth0/mtu: missing or unreadable");
}

TEST_F(BrokenTree, ALinkAboveTheRootIsRefused) {
    fs::remove(eth0() + "/device");
    fs::create_symlink("../../../../../../../../../etc", eth0() + "/device");
    EXPECT_EQ(probeError(), root_.string() +
                                "/sys/class/net/eth0/device: a symbolic link "
                                "leads outside " +
                                root_.string() + "/");
}

TEST_F(BrokenTree, AnAbsoluteLinkStaysInsideTheRoot) {
    // "/sys/devices/..." inside a fixture means the fixture's own sys.
    expectPciFunctionThrough("/sys/devices/pci0000:00/0000:00:03.0");
}

TEST_F(BrokenTree, AVirtioInterfaceHasThePciFunctionAboveIt) {
    // virtio-net: net/eth0/device is the virtio node under the PCI function.
    fs::create_directory(root_.string() + "/sys/devices/pci0000:00/0000:00:03.0/virtio2");
    expectPciFunctionThrough("../../../0000:00:03.0/virtio2");
}

TEST_F(BrokenTree, ALinkLoopIsRefused) {
    fs::remove(eth0() + "/device");
    fs::create_symlink("device", eth0() + "/device");
    EXPECT_EQ(probeError(), root_.string() + "/sys/class/net/eth0/device: too many symbolic links");
}

TEST_F(BrokenTree, ABadAddressLineIsNamed) {
    write(root_.string() + "/ipv4_addresses", "eth0 10.0.0.5\n");
    EXPECT_EQ(probeError(), root_.string() + "/ipv4_addresses: 'eth0 10.0.0.5' is not "
                                             "'<interface> <IPv4 address>/<prefix length>'");
}

TEST_F(BrokenTree, AFileBesideTheInterfacesIsNoInterface) {
    write(root_.string() + "/sys/class/net/bonding_masters", "bond0\n");
    const auto node = probeFixture(root_.string(), "n1");
    ASSERT_TRUE(node.ok()) << node.error().message;
    ASSERT_EQ(node->interfaces.size(), 1u);
    EXPECT_EQ(node->interfaces[0].name, "eth0");
}

TEST_F(BrokenTree, NoInterfacesIsAnError) {
    fs::remove_all(root_ / "sys/class/net");
    EXPECT_EQ(probeError(), root_.string() + "/sys/class/net: no network interfaces there");
}

TEST(SysfsProbe, TheNodeNameMustBeAName) {
    EXPECT_EQ(probeNode({sysfsFixtures() + "/veth", "", kFixtureTime}).error().message,
              "node name '' is not a host name");
}

TEST(SysfsProbe, ProbingTwiceGivesTheSameBytes) {
    const std::string root = sysfsFixtures() + "/rdma";
    EXPECT_EQ(writeProfileYaml({1, {probeFixture(root, "a").value()}}),
              writeProfileYaml({1, {probeFixture(root, "a").value()}}));
}

} // namespace
} // namespace stepmap::topology
