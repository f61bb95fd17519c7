// Which interfaces and addresses Open MPI's btl tcp publishes, by its default
// rules (modexless/README.md), on made-up nodes.

#include "modexless/interface_selection.hpp"

#include <arpa/inet.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

using namespace stepmap;
using namespace stepmap::modexless;
using topology::NetworkInterface;
using topology::NodeProfile;

namespace {

NetworkInterface iface(std::string name, std::uint32_t ifindex,
                       std::vector<topology::InterfaceAddress> addresses, bool up = true) {
    NetworkInterface i;
    i.name = std::move(name);
    i.ifindex = ifindex;
    i.adminUp = up;
    i.addresses = std::move(addresses);
    return i;
}

// "name:kernelIndex:address/prefix" per published entry.
std::vector<std::string> describe(const std::vector<PublishedAddress> &entries,
                                  const NodeProfile &node) {
    std::vector<std::string> out;
    for (const PublishedAddress &e : entries) {
        char text[INET6_ADDRSTRLEN] = {};
        inet_ntop(e.family == AddressFamily::ipv4 ? AF_INET : AF_INET6, e.address.data(), text,
                  sizeof text);
        std::string name;
        for (const auto &i : node.interfaces)
            if (i.ifindex == e.kernelIndex)
                name = i.name;
        out.push_back(name + ":" + std::to_string(e.kernelIndex) + ":" + text + "/" +
                      std::to_string(e.prefixLength));
    }
    return out;
}

} // namespace

TEST(InterfaceSelection, DefaultExcludeMatchesNamePrefixesAndLoopbackHolders) {
    NodeProfile node;
    node.interfaces = {iface("lb0", 7, {{"127.0.0.2", 8}}), iface("eth0", 2, {{"10.0.0.1", 24}})};
    EXPECT_TRUE(excludedByDefault("lo", node));
    EXPECT_TRUE(excludedByDefault("lonely", node)); // Open MPI compares strlen("lo") bytes
    EXPECT_TRUE(excludedByDefault("sppp3", node));
    EXPECT_TRUE(excludedByDefault("lb0", node));  // holds 127.0.0.2
    EXPECT_TRUE(excludedByDefault("lb0x", node)); // starts with it
    EXPECT_FALSE(excludedByDefault("eth0", node));
    EXPECT_FALSE(excludedByDefault("l", node));
}

TEST(InterfaceSelection, Ipv6GlobalFirstThenIpv4OfUpInterfacesByIfindex) {
    NodeProfile node;
    node.interfaces = {
        iface("ib0", 5, {{"10.1.0.1", 16}, {"fe80::1", 64}}),
        iface("eth0", 3, {{"10.0.0.1", 24}, {"2001:db8::1", 64}, {"fec0::1", 64}}),
        iface("eth1", 4, {{"10.2.0.1", 24}, {"2001:db8:2::1", 64}}, false),
        iface("eth2", 0, {{"10.3.0.1", 24}}), // no kernel index known
    };
    EXPECT_EQ(describe(openMpiInterfaceList(node), node),
              (std::vector<std::string>{"eth0:3:2001:db8::1/64", "eth1:4:2001:db8:2::1/64",
                                        "eth0:3:10.0.0.1/24", "ib0:5:10.1.0.1/16"}));
    // 4.1: per interface in order of first appearance, all its entries.
    EXPECT_EQ(describe(openMpi41Addresses(node), node),
              (std::vector<std::string>{"eth0:3:2001:db8::1/64", "eth0:3:10.0.0.1/24",
                                        "eth1:4:2001:db8:2::1/64", "ib0:5:10.1.0.1/16"}));
    // 5.0: per interface its first entry.
    EXPECT_EQ(describe(openMpi50Addresses(node), node),
              (std::vector<std::string>{"eth0:3:2001:db8::1/64", "eth1:4:2001:db8:2::1/64",
                                        "ib0:5:10.1.0.1/16"}));
}

TEST(InterfaceSelection, EveryIpv4AddressRepeatsTheFirst) {
    NodeProfile node;
    node.interfaces = {iface("eth0", 2, {{"10.0.0.1", 24}, {"10.0.0.9", 24}, {"10.5.0.1", 16}})};
    EXPECT_EQ(describe(openMpi41Addresses(node), node),
              (std::vector<std::string>{"eth0:2:10.0.0.1/24", "eth0:2:10.0.0.1/24",
                                        "eth0:2:10.0.0.1/24"}));
}

TEST(InterfaceSelection, BandwidthIsTheSpeedOr100) {
    NodeProfile node;
    node.interfaces = {iface("eth0", 2, {{"10.0.0.1", 24}}), iface("eth1", 3, {{"10.1.0.1", 24}})};
    node.interfaces[0].speedMbps = 25000;
    const auto entries = openMpi50Addresses(node);
    ASSERT_EQ(entries.size(), 2u);
    EXPECT_EQ(entries[0].bandwidthMbps, 25000u);
    EXPECT_EQ(entries[1].bandwidthMbps, 100u);
}
