// What a node server does for --modex and the interconnect profile
// (step_modex.hpp): its say in the profile rendezvous, checked against the
// fixture sysfs trees (tests/fixtures/sysfs), what it serves once some
// nodes are withheld, the ranks' pinned ports and environments.

#include "step_modex.hpp"

#include "modexless/tcp_record.hpp"
#include "profile/profile_yaml.hpp"

#include <gtest/gtest.h>

#include <cstdlib>
#include <set>

using namespace stepmap;
using namespace stepmap::server;

namespace {

std::string sysfsFixture(const std::string &name) {
    const char *dir = std::getenv("STEPMAP_SYSFS_FIXTURES");
    return std::string(dir ? dir : "") + "/" + name;
}

// The golden profile of a fixture tree: its one node, as `name`.
topology::NodeProfile goldenNode(const std::string &fixture, const std::string &name) {
    auto profile = topology::readProfileFile(sysfsFixture(fixture + ".yaml"));
    EXPECT_TRUE(profile.ok()) << (profile.ok() ? "" : profile.error().message);
    topology::NodeProfile node = profile.ok() ? profile->nodes.at(0) : topology::NodeProfile{};
    node.name = name;
    node.digest = topology::staticDigest(node);
    return node;
}

// Three nodes of two ranks each, ranks round robin (0 and 3 on node 0).
StepConfig threeNodes(modex::ModexMode mode, std::uint32_t nodeIndex, std::string nspace) {
    StepConfig c;
    c.nspace = std::move(nspace);
    c.nodeIndex = nodeIndex;
    c.modex = mode;
    c.modexPorts = "24000-24099";
    for (const char *name : {"ethernet-node", "n2", "n3"})
        c.plan.nodes.push_back({name, 2, std::nullopt});
    for (std::uint32_t r = 0; r < 6; ++r)
        c.plan.ranks.push_back({r % 3, r / 3, r / 3, 0, kUnbound});
    topology::Profile profile;
    profile.nodes = {goldenNode("ethernet", "ethernet-node"), goldenNode("ethernet", "n2"),
                     goldenNode("rdma", "n3")};
    c.profile = profile;
    return c;
}

const std::string kRoot = "ethernet"; // the fixture tree node 0 is probed from

} // namespace

TEST(StepModex, ANodeMatchingItsEntryMayBeServed) {
    auto c = threeNodes(modex::ModexMode::Fence, 0, "stepmap.7.0");
    auto own = StepModex(c).checkOwnNode(sysfsFixture(kRoot), {});
    EXPECT_TRUE(own.usable) << own.reason;
}

TEST(StepModex, ANodeThatChangedSaysWhatChangedAndHowToFixIt) {
    auto c = threeNodes(modex::ModexMode::Fence, 0, "stepmap.7.0");
    auto &entry = c.profile->nodes[0];
    entry.interfaces[0].mtu = 1500;
    entry.digest = topology::staticDigest(entry);
    auto own = StepModex(c).checkOwnNode(sysfsFixture(kRoot), {});
    EXPECT_FALSE(own.usable);
    EXPECT_EQ(own.reason, "ethernet-node changed since it was profiled at 2026-01-01T00:00:00Z: "
                          "interface eth0: MTU was 1500, now 9000; update the profile "
                          "(stepmap-profile update)");
}

TEST(StepModex, ManyChangesAreCountedAfterTheFirstFew) {
    auto c = threeNodes(modex::ModexMode::Fence, 0, "stepmap.7.0");
    auto &entry = c.profile->nodes[0];
    for (int i = 0; i < 6; ++i) {
        topology::NetworkInterface extra = entry.interfaces[0];
        extra.name = "gone" + std::to_string(i);
        extra.ifindex = 100 + static_cast<std::uint32_t>(i);
        extra.mac = "02:00:00:00:00:0" + std::to_string(i);
        extra.addresses.clear();
        entry.interfaces.push_back(extra);
    }
    entry.digest = topology::staticDigest(entry);
    EXPECT_EQ(StepModex(c).checkOwnNode(sysfsFixture(kRoot), {}).reason,
              "ethernet-node changed since it was profiled at 2026-01-01T00:00:00Z: interface "
              "gone0 removed; interface gone1 removed; interface gone2 removed; interface gone3 "
              "removed; and 2 more; update the profile (stepmap-profile update)");
}

TEST(StepModex, ANodeWithoutAnEntryOrAProfileSaysSo) {
    auto c = threeNodes(modex::ModexMode::Fence, 0, "stepmap.7.0");
    c.profile->nodes.erase(c.profile->nodes.begin());
    EXPECT_EQ(StepModex(c).checkOwnNode(sysfsFixture(kRoot), {}).reason,
              "the profile has no entry for ethernet-node");
    c.profile.reset();
    c.profileProblem = "STEPMAP_PROFILE:3: nodes: not a list";
    EXPECT_EQ(StepModex(c).checkOwnNode(sysfsFixture(kRoot), {}).reason,
              "the profile srun shipped cannot be read: STEPMAP_PROFILE:3: nodes: not a list");
}

// Why a node's ranks cannot go modex-less, named: a job that picks Open
// MPI's interfaces itself; a port range too small for the step (nodes 0 and
// 1 share their addresses, as one machine: a port per rank).
TEST(StepModex, WhyANodeCannotGoModexlessIsNamed) {
    struct Case {
        std::string include, ports, reason, sitePorts = "";
    } cases[] = {
        {"", "24000-24099",
         "srun asked for modex_ports=24000-24099, not within this node's "
         "modex_ports=24050-24999 (plugstack.conf differs between srun's host and the nodes)",
         "24050-24999"},
        {"lo", "24000-24099",
         "the job sets OMPI_MCA_btl_tcp_if_include=lo, and --modex=profile predicts Open MPI's "
         "TCP records for its default interfaces only"},
        {"", "24000-24000",
         "modex_ports=24000-24000 holds 1 port, and the step needs 6 (one per rank: its nodes "
         "share addresses)"},
    };
    for (const auto &tc : cases) {
        auto c = threeNodes(modex::ModexMode::Profile, 0, "stepmap.7.0");
        c.tcpIfInclude = tc.include;
        c.modexPorts = tc.ports;
        c.siteModexPorts = tc.sitePorts;
        auto own = StepModex(c).checkOwnNode(sysfsFixture(kRoot), {});
        EXPECT_FALSE(own.usable);
        EXPECT_EQ(own.reason, tc.reason);
    }
}

TEST(StepModex, PortsAreTheSameOnEveryNodeDistinctAndInTheRange) {
    std::set<std::uint16_t> seen;
    for (std::uint32_t r = 0; r < 6; ++r) {
        auto on0 = threeNodes(modex::ModexMode::Profile, 0, "stepmap.7.0");
        auto on2 = threeNodes(modex::ModexMode::Profile, 2, "stepmap.7.0");
        auto p = StepModex(on0).port(r);
        ASSERT_TRUE(p);
        EXPECT_EQ(p, StepModex(on2).port(r));
        EXPECT_GE(*p, 24000);
        EXPECT_LE(*p, 24099);
        seen.insert(*p);
    }
    EXPECT_EQ(seen.size(), 6u); // nodes share addresses: one port per rank
}

TEST(StepModex, NodesOfTheirOwnAddressesReuseThePortsOfOtherNodes) {
    auto c = threeNodes(modex::ModexMode::Profile, 0, "stepmap.7.0");
    c.profile->nodes.erase(c.profile->nodes.begin() + 1); // n2 no longer like node 0
    StepModex m(c);
    // Index on the node: rank 0 and 1 are each their node's first.
    EXPECT_EQ(m.port(0), m.port(1));
    EXPECT_NE(m.port(0), m.port(3));
}

// Slurm's reserved ports (MpiParams=ports), the same on every node, by the
// rank's index on its node, where nodes have addresses of their own.
TEST(StepModex, SlurmsReservedPortsAreTakenWhereNodesHaveTheirOwnAddresses) {
    auto c = threeNodes(modex::ModexMode::Profile, 0, "stepmap.7.0");
    c.profile->nodes.erase(c.profile->nodes.begin() + 1); // n2 no longer like node 0
    c.reservedPorts = "12000-12001";
    StepModex m(c);
    EXPECT_EQ(m.port(0), std::optional<std::uint16_t>(12000)); // first on node 0
    EXPECT_EQ(m.port(3), std::optional<std::uint16_t>(12001)); // second on node 0
    EXPECT_EQ(m.port(2), std::optional<std::uint16_t>(12000)); // first on node 2
    c.reservedPorts = "12000";
    EXPECT_EQ(StepModex(c).checkOwnNode(sysfsFixture(kRoot), {}).reason,
              "Slurm reserved 1 port for the step (SLURM_STEP_RESV_PORTS=12000), and its "
              "fullest node runs 2 ranks");
    // Nodes sharing one machine's addresses would collide on them: the
    // site's range, one port per rank.
    auto shared = threeNodes(modex::ModexMode::Profile, 0, "stepmap.7.0");
    shared.reservedPorts = "12000-12001";
    EXPECT_GE(*StepModex(shared).port(3), 24000);
}

TEST(StepModex, WherePortsBeginFollowsTheStepSecretNotItsNumber) {
    // Another user who knows the job and step numbers (squeue shows them)
    // must not be able to bind a rank's port first.
    auto ports = [](const std::string &nspace, const std::string &secret, std::uint32_t node) {
        std::vector<std::uint16_t> out;
        auto c = threeNodes(modex::ModexMode::Profile, node, nspace);
        c.secret = secret;
        for (std::uint32_t r = 0; r < 6; ++r)
            out.push_back(*StepModex(c).port(r));
        return out;
    };
    const std::string one(32, '\1'), two(32, '\2');
    // The same secret: the same ports whatever the step's number, on every node.
    EXPECT_EQ(ports("stepmap.7.0", one, 0), ports("stepmap.8.3", one, 0));
    EXPECT_EQ(ports("stepmap.7.0", one, 0), ports("stepmap.7.0", one, 2));
    // Another secret: other ports (these two draw different offsets).
    EXPECT_NE(ports("stepmap.7.0", one, 0), ports("stepmap.7.0", two, 0));
    // The offsets drawn by 200 secrets spread over the 100-port range.
    std::set<std::uint16_t> firsts;
    for (int i = 0; i < 200; ++i)
        firsts.insert(ports("stepmap.7.0", std::string(31, 'x') + static_cast<char>(i), 0)[0]);
    EXPECT_GT(firsts.size(), 60u);
}

TEST(StepModex, WhatIsServedLeavesOutWithheldNodes) {
    auto c = threeNodes(modex::ModexMode::Profile, 0, "stepmap.7.0");
    StepModex m(c);
    ServedProfile served = m.served({1});
    ASSERT_EQ(served.nodes.size(), 3u);
    EXPECT_TRUE(served.nodes[0]);
    EXPECT_FALSE(served.nodes[1]);
    EXPECT_TRUE(served.nodes[2]);
    // Predicted records for the other nodes' ranks that are served: node 2's
    // ranks 2 and 5; not this node's own (0, 3) nor withheld node 1's.
    std::set<std::uint32_t> ranks;
    for (const auto &[rank, keys] : served.rankData)
        ranks.insert(rank);
    EXPECT_EQ(ranks, (std::set<std::uint32_t>{2, 5}));
    const auto &keys = served.rankData.at(2);
    ASSERT_EQ(keys.size(), 2u);
    EXPECT_EQ(keys[0].first, "btl.tcp.4.1");
    EXPECT_EQ(keys[0].second, modexless::openMpi41TcpRecord(*served.nodes[2], *m.port(2)));
    EXPECT_EQ(keys[1].first, "btl.tcp.5.0");
}

TEST(StepModex, WithoutModexlessOnlyTheEntriesAreServed) {
    auto c = threeNodes(modex::ModexMode::Async, 0, "stepmap.7.0");
    ServedProfile served = StepModex(c).served({});
    EXPECT_TRUE(served.rankData.empty());
    EXPECT_TRUE(served.nodes[1]);
}

TEST(StepModex, EachModeGivesTheRanksItsEnvironment) {
    auto fence = threeNodes(modex::ModexMode::Fence, 0, "stepmap.7.0");
    EXPECT_TRUE(StepModex(fence).clientEnvironment(0, true).empty());
    const std::vector<std::string> async = {"OMPI_MCA_pmix_base_async_modex=1",
                                            "OMPI_MCA_pmix_base_collect_data=0"};
    auto a = threeNodes(modex::ModexMode::Async, 0, "stepmap.7.0");
    EXPECT_EQ(StepModex(a).clientEnvironment(0, true), async);
    auto p = threeNodes(modex::ModexMode::Profile, 0, "stepmap.7.0");
    StepModex m(p);
    const auto env = m.clientEnvironment(3, true);
    const std::string pinned = "OMPI_MCA_btl_tcp_port_min_v4=" + std::to_string(*m.port(3));
    EXPECT_NE(std::find(env.begin(), env.end(), pinned), env.end());
    // A withheld node's ranks fall back to fetching at first contact.
    EXPECT_EQ(m.clientEnvironment(3, false), async);
}

TEST(StepModex, ThisNodesRanksAreExpectedToCommitTheirPredictedRecords) {
    auto c = threeNodes(modex::ModexMode::Profile, 0, "stepmap.7.0");
    StepModex m(c);
    auto expected = m.expectedLocalRecords();
    ASSERT_EQ(expected.size(), 2u);
    EXPECT_EQ(expected[0].rank, 0u);
    EXPECT_EQ(expected[1].rank, 3u);
    EXPECT_EQ(expected[1].v41, modexless::openMpi41TcpRecord(c.profile->nodes[0], *m.port(3)));
}
