// interconnect_profile.hpp: which fields the digest covers, and the checks
// of single values the prober and the loader share.

#include "profile/interconnect_profile.hpp"

#include <functional>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "profile_test_nodes.hpp"

namespace stepmap::topology {
namespace {

using testing::Change;
using testing::operationalChanges;
using testing::sampleNode;
using testing::staticChanges;

TEST(StaticDigest, IsSha256OfTheStaticFieldsText) {
    const NodeProfile node = sampleNode();
    EXPECT_EQ(staticFieldsText(node),
              "node n1\n"
              "interface eth0 ifindex=2 mtu=1500 mac=52:54:00:12:34:56 pci=0000:00:03.0 numa=0\n"
              "address 10.0.0.5/24\n"
              "rdma mlx5_0 guid=0002:c903:00f1:e9c0\n"
              "port 1 link_layer=InfiniBand lid=7\n"
              "gid 0 fe80:0000:0000:0000:0002:c903:00f1:e9c1\n");
    // printf '%s' "<the text above>" | sha256sum
    EXPECT_EQ(staticDigest(node),
              "sha256:de82f39b7689e7ce69a5c677e1beb0f1f96ab17bf68baa60b5300561b94260cf");
}

// Whether each change to the sample node leaves its digest as it was.
std::vector<bool> digestKept(const std::vector<Change> &changes) {
    const std::string before = staticDigest(sampleNode());
    std::vector<bool> kept;
    for (const Change &change : changes) {
        NodeProfile node = sampleNode();
        change(node);
        kept.push_back(staticDigest(node) == before);
    }
    return kept;
}

TEST(StaticDigest, ChangesWithEveryStaticField) {
    const std::vector<Change> changes = staticChanges();
    EXPECT_EQ(digestKept(changes), std::vector<bool>(changes.size(), false));
}

TEST(StaticDigest, IgnoresWhatChangesAtRunTime) {
    const std::vector<Change> changes = operationalChanges();
    EXPECT_EQ(digestKept(changes), std::vector<bool>(changes.size(), true));
}

TEST(InterfaceAddress, IsParsedIntoCanonicalForm) {
    EXPECT_EQ(parseInterfaceAddress("10.0.0.5/24"), (InterfaceAddress{"10.0.0.5", 24}));
    EXPECT_EQ(parseInterfaceAddress("FE80:0:0::0001/64"), (InterfaceAddress{"fe80::1", 64}));
    EXPECT_EQ(parseInterfaceAddress("::/0"), (InterfaceAddress{"::", 0}));
    for (const char *bad : {"10.0.0.5", "10.0.0.5/33", "10.0.0.5/-1", "10.0.0/8", "fe80::1/129",
                            "/24", "10.0.0.5/", "10.0.0.5/024x", "x/1"})
        EXPECT_EQ(parseInterfaceAddress(bad), std::nullopt) << bad;
}

TEST(ValueChecks, AcceptTheStoredFormsOnly) {
    EXPECT_TRUE(isLinkAddress("52:54:00:12:34:56"));
    EXPECT_TRUE(isLinkAddress("none"));
    EXPECT_TRUE(isLinkAddress("00:00:10:87:fe:80:00:00:00:00:00:00:00:02:c9:03:00:f1:e9:c1"));
    EXPECT_FALSE(isLinkAddress("52:54:00:12:34:5G"));
    EXPECT_FALSE(isLinkAddress("52:54:00:12:34:56:"));
    EXPECT_FALSE(isLinkAddress("52-54-00-12-34-56"));
    EXPECT_TRUE(isPciAddress("0000:3b:00.0"));
    EXPECT_TRUE(isPciAddress("10000:3b:00.7"));
    EXPECT_FALSE(isPciAddress("0000:3b:00.8"));
    EXPECT_FALSE(isPciAddress("3b:00.0"));
    EXPECT_FALSE(isPciAddress("virtual"));
    EXPECT_TRUE(isGuid("0002:c903:00f1:e9c0"));
    EXPECT_FALSE(isGuid("0002c90300f1e9c0"));
    EXPECT_TRUE(isGid("fe80:0000:0000:0000:0002:c903:00f1:e9c1"));
    EXPECT_FALSE(isGid("fe80::2:c903:f1:e9c1"));
    EXPECT_TRUE(isOperstate("lowerlayerdown"));
    EXPECT_FALSE(isOperstate("UP"));
    EXPECT_TRUE(isPortState("ACTIVE"));
    EXPECT_FALSE(isPortState("4: ACTIVE"));
    EXPECT_TRUE(isLinkLayer("Ethernet"));
    EXPECT_FALSE(isLinkLayer("ethernet"));
    EXPECT_TRUE(isUtcTime("2026-11-24T00:30:53Z"));
    EXPECT_FALSE(isUtcTime("2026-11-24 00:30:53"));
    EXPECT_TRUE(isPortRate("100 Gb/sec (4X EDR)"));
    EXPECT_FALSE(isPortRate("100\n"));
    EXPECT_FALSE(isPortRate(""));
    EXPECT_TRUE(isProfileName("node-01.cluster"));
    EXPECT_FALSE(isProfileName("a b"));
    EXPECT_FALSE(isProfileName("a/b"));
    EXPECT_FALSE(isProfileName(std::string(256, 'n')));
}

} // namespace
} // namespace stepmap::topology
