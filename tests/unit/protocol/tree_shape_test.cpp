// The fence tree's shape (hub/tree_shape.hpp): who is whose parent and
// child, subtree sizes and depth, for the node counts and fan-outs a step
// can have; and the tree messages' strict codecs (wire/payloads.hpp).

#include "protocol/hub/tree_shape.hpp"
#include "protocol/wire/message.hpp"
#include "protocol/wire/payloads.hpp"

#include <gtest/gtest.h>

#include <cmath>

using namespace stepmap;
using stepmap::hub::TreeShape;

TEST(TreeShape, SmallTreesByHand) {
    // 7 nodes, fan-out 2:      0
    //                        1   2
    //                       3 4 5 6
    TreeShape t(7, 2);
    EXPECT_EQ(t.childrenOf(0), (std::vector<std::uint32_t>{1, 2}));
    EXPECT_EQ(t.childrenOf(2), (std::vector<std::uint32_t>{5, 6}));
    EXPECT_TRUE(t.childrenOf(3).empty());
    EXPECT_EQ(t.parentOf(6), 2u);
    EXPECT_EQ(t.subtreeSize(0), 7u);
    EXPECT_EQ(t.subtreeSize(1), 3u);
    EXPECT_EQ(t.subtreeSize(4), 1u);
    EXPECT_EQ(t.depth(), 2u);

    // 6 nodes, fan-out 3: the last child of the root has no children.
    TreeShape u(6, 3);
    EXPECT_EQ(u.childrenOf(1), (std::vector<std::uint32_t>{4, 5}));
    EXPECT_EQ(u.subtreeSize(1), 3u);
    EXPECT_EQ(u.subtreeSize(3), 1u);
    EXPECT_EQ(TreeShape(1, 16).depth(), 0u);
    EXPECT_EQ(TreeShape(1, 16).subtreeSize(0), 1u);
}

TEST(TreeShape, EveryNodeOnceAndDepthLogarithmic) {
    struct Case {
        std::uint32_t nodes, fanOut, depth;
    };
    for (auto c : std::vector<Case>{{2, 16, 1},
                                    {17, 16, 1},
                                    {18, 16, 2},
                                    {128, 16, 2},
                                    {273, 16, 2},
                                    {274, 16, 3},
                                    {100000, 16, 5},
                                    {16384, 2, 14},
                                    {1000, 1024, 1},
                                    {5, 1, 4}}) {
        TreeShape t(c.nodes, c.fanOut);
        EXPECT_EQ(t.depth(), c.depth) << c.nodes << "/" << c.fanOut;
        if (c.nodes > 20000)
            continue;
        std::uint64_t seen = 1; // the root
        for (std::uint32_t n = 0; n < c.nodes; ++n) {
            std::uint32_t below = 1;
            for (auto child : t.childrenOf(n)) {
                EXPECT_EQ(t.parentOf(child), n);
                below += t.subtreeSize(child);
                ++seen;
            }
            EXPECT_EQ(t.subtreeSize(n), below) << n;
            EXPECT_LE(t.childrenOf(n).size(), c.fanOut);
        }
        EXPECT_EQ(seen, c.nodes);
    }
}

TEST(TreePayloads, RoundTripAndStrictness) {
    auto up = wire::encode(wire::TreeUpMsg{7, true, 3, "recs"});
    auto decoded = wire::decodeTreeUp(up);
    ASSERT_TRUE(decoded);
    EXPECT_EQ(decoded->sequence, 7u);
    EXPECT_TRUE(decoded->collect);
    EXPECT_EQ(decoded->count, 3u);
    EXPECT_EQ(decoded->records, "recs");
    for (std::size_t n = 0; n < up.size(); ++n)
        EXPECT_FALSE(wire::decodeTreeUp(up.substr(0, n))) << n;
    EXPECT_FALSE(wire::decodeTreeUp(up + "x"));
    // A fence without data carries none; a count of nobody is no contribution.
    EXPECT_FALSE(wire::decodeTreeUp(wire::encode(wire::TreeUpMsg{7, false, 3, "x"})));
    EXPECT_FALSE(wire::decodeTreeUp(wire::encode(wire::TreeUpMsg{7, false, 0, ""})));
    std::string badFlag = wire::encode(wire::TreeUpMsg{7, false, 1, ""});
    badFlag[8] = 2;
    EXPECT_FALSE(wire::decodeTreeUp(badFlag));

    auto down = wire::decodeTreeDown(wire::encode(wire::TreeDownMsg{9, -25, "all"}));
    ASSERT_TRUE(down);
    EXPECT_EQ(down->status, -25);
    EXPECT_EQ(down->data, "all");

    EXPECT_FALSE(wire::decodeTreeListen(wire::encode(wire::TreeListenMsg{0})));
    EXPECT_FALSE(wire::decodeTreeListen(wire::encode(wire::TreeListenMsg{65536})));
    EXPECT_EQ(wire::decodeTreeListen(wire::encode(wire::TreeListenMsg{80}))->port, 80u);
    EXPECT_FALSE(wire::decodeTreeParent(wire::encode(wire::TreeParentMsg{1, "", 80})));
    EXPECT_FALSE(
        wire::decodeTreeParent(wire::encode(wire::TreeParentMsg{1, std::string(300, 'h'), 80})));
    EXPECT_EQ(wire::decodeTreeParent(wire::encode(wire::TreeParentMsg{1, "10.0.0.1", 80}))->host,
              "10.0.0.1");
    // The hub's welcome: empty is the star; a fan-out beyond reason is refused.
    EXPECT_EQ(wire::decodeWelcome("")->fanOut, 0u);
    EXPECT_EQ(wire::decodeWelcome(wire::encode(wire::WelcomeMsg{16}))->fanOut, 16u);
    EXPECT_FALSE(wire::decodeWelcome(wire::encode(wire::WelcomeMsg{5000})));
    EXPECT_FALSE(wire::decodeWelcome("xy"));
}

TEST(TreePayloads, RecordsAreCountedAndBounded) {
    std::string records;
    wire::appendRecord(records, {2, "BB"});
    wire::appendRecord(records, {0, ""});
    auto two = wire::decodeRecords(records, 2, 3);
    ASSERT_TRUE(two);
    EXPECT_EQ((*two)[0].node, 2u);
    EXPECT_EQ((*two)[0].data, "BB");
    EXPECT_EQ((*two)[1].data, "");
    EXPECT_FALSE(wire::decodeRecords(records, 1, 3));           // bytes left over
    EXPECT_FALSE(wire::decodeRecords(records, 3, 3));           // one missing
    EXPECT_FALSE(wire::decodeRecords(records, 2, 2));           // node 2 of a 2-node step
    EXPECT_FALSE(wire::decodeRecords(records, 4000000000u, 3)); // a count the bytes cannot hold
}

TEST(TreeShape, RoutesOfServersThatJoinThroughTheirParent) {
    // 7 nodes, fan-out 2: srun takes 0, 1 and 2; 3..6 join through 1 or 2.
    TreeShape t(7, 2);
    std::vector<std::uint32_t> relayed;
    for (std::uint32_t n = 0; n < 8; ++n)
        if (t.joinsThroughParent(n))
            relayed.push_back(n);
    EXPECT_EQ(relayed, (std::vector<std::uint32_t>{3, 4, 5, 6}));
    EXPECT_TRUE(t.inSubtree(1, 4));
    EXPECT_TRUE(t.inSubtree(1, 1));
    EXPECT_FALSE(t.inSubtree(1, 5));
    EXPECT_FALSE(t.inSubtree(1, 7)); // beyond the step
    EXPECT_FALSE(t.inSubtree(3, 1)); // above
    EXPECT_EQ(t.childToward(0, 6), 2u);
    EXPECT_EQ(t.childToward(0, 2), 2u);
    // Deeper: 100 nodes, fan-out 3; node 99's ancestors are 32, 10, 3, 0.
    TreeShape d(100, 3);
    EXPECT_EQ(d.childToward(0, 99), 3u);
    EXPECT_EQ(d.childToward(3, 99), 10u);
    EXPECT_EQ(d.childToward(10, 99), 32u);
    EXPECT_TRUE(d.inSubtree(10, 99));
    EXPECT_FALSE(d.inSubtree(11, 99));
    // One level under srun only: nobody relays.
    for (std::uint32_t n = 0; n < 17; ++n)
        EXPECT_FALSE(TreeShape(17, 16).joinsThroughParent(n)) << n;
}

TEST(RelayCodec, CarriesAnyFrameButARelayOrTheChallenge) {
    wire::RelayMsg m{41, static_cast<std::uint32_t>(wire::MessageType::Fence), "data"};
    auto back = wire::decodeRelay(wire::encode(m));
    ASSERT_TRUE(back);
    EXPECT_EQ(back->node, 41u);
    EXPECT_EQ(back->payload, "data");
    m.type = static_cast<std::uint32_t>(wire::MessageType::Relay);
    EXPECT_FALSE(wire::decodeRelay(wire::encode(m)));
    m.type = static_cast<std::uint32_t>(wire::MessageType::Challenge);
    EXPECT_FALSE(wire::decodeRelay(wire::encode(m)));
    m.type = 300;
    EXPECT_FALSE(wire::decodeRelay(wire::encode(m)));
    EXPECT_FALSE(wire::decodeRelay(std::string("\x01\x02", 2)));
}

TEST(RelayCodec, JoinsBelowAreCountedAndBounded) {
    wire::JoinedBelowMsg m{{{5, "198.18.0.5"}, {11, "198.18.0.11"}}};
    auto back = wire::decodeJoinedBelow(wire::encode(m));
    ASSERT_TRUE(back);
    ASSERT_EQ(back->nodes.size(), 2u);
    EXPECT_EQ(back->nodes[1].node, 11u);
    EXPECT_EQ(back->nodes[1].address, "198.18.0.11");
    // None, a count the bytes cannot hold, a cut entry, a host beyond reason.
    EXPECT_FALSE(wire::decodeJoinedBelow(wire::encode(wire::JoinedBelowMsg{})));
    std::string lie = wire::encode(m);
    lie[0] = '\x7f';
    EXPECT_FALSE(wire::decodeJoinedBelow(lie));
    EXPECT_FALSE(wire::decodeJoinedBelow(wire::encode(m).substr(0, 12)));
    EXPECT_FALSE(
        wire::decodeJoinedBelow(wire::encode(wire::JoinedBelowMsg{{{5, std::string(300, 'h')}}})));
    EXPECT_FALSE(wire::decodeJoinedBelow(wire::encode(wire::JoinedBelowMsg{{{1u << 20, "h"}}})));
}
