// A step's exchange counters (timeline/exchange_counters.hpp): the wire
// form, decoded strictly (the hub reads it from the network), the node
// server's log line and srun -v's step totals.

#include "protocol/timeline/exchange_counters.hpp"

#include <gtest/gtest.h>

using namespace stepmap::timeline;

namespace {

// A 2-node step launched with Open MPI's default modex: one collecting
// fence and two barriers on each node.
ExchangeCounters defaultModexNode(std::uint64_t sent) {
    ExchangeCounters c;
    c.dataFences = 1;
    c.barriers = 2;
    c.fenceBytes = 162;
    c.bytesSent = sent;
    c.bytesReceived = 162;
    return c;
}

} // namespace

TEST(ExchangeCounters, SurviveTheWire) {
    const ExchangeCounters c{1, 2, 3, 4, 5, 6, 7, std::uint64_t{1} << 40};
    auto decoded = decodeCounters(encodeCounters(c));
    ASSERT_TRUE(decoded);
    EXPECT_EQ(*decoded, c);
    EXPECT_EQ(encodeCounters(c).size(), 44u);
}

TEST(ExchangeCounters, AShortOrLongPayloadIsRefused) {
    const std::string payload = encodeCounters(ExchangeCounters{1, 2, 3, 4, 5, 6, 7, 8});
    EXPECT_FALSE(decodeCounters(payload.substr(0, payload.size() - 1)));
    EXPECT_FALSE(decodeCounters(payload + '\0'));
    EXPECT_FALSE(decodeCounters(""));
}

TEST(ExchangeCounters, AddingSaturates) {
    ExchangeCounters a{0xfffffffe, 0, ~std::uint64_t{0} - 1, 0, 0, 0, 0, 0};
    a += ExchangeCounters{5, 1, 5, 1, 1, 1, 1, 1};
    EXPECT_EQ(a, (ExchangeCounters{0xffffffff, 1, ~std::uint64_t{0}, 1, 1, 1, 1, 1}));
}

TEST(ExchangeCounters, TheNodeLineSaysEveryCount) {
    ExchangeCounters c = defaultModexNode(81);
    EXPECT_EQ(describeNodeExchange(c),
              "exchange: 1 data fence (162 bytes), 2 barriers, 0 direct modex (0 local, 0 remote), "
              "0 answered for other nodes; network: 81 bytes sent, 162 received");
    const ExchangeCounters modexless{0, 1, 0, 1, 3, 2, 1, 0};
    EXPECT_EQ(describeNodeExchange(modexless),
              "exchange: 0 data fences (0 bytes), 1 barrier, 4 direct modex (1 local, 3 remote), "
              "2 answered for other nodes; network: 1 byte sent, 0 received");
}

// A whole-step fence reaches every node once: the step had one data fence
// and two barriers, not two and four; direct modex and bytes are each one
// node's, summed.
TEST(ExchangeCounters, TheStepCountsAFenceOnceAndSumsTheRest) {
    std::map<std::uint32_t, ExchangeCounters> nodes = {{0, defaultModexNode(81)},
                                                       {1, defaultModexNode(81)}};
    nodes[1].modexRemote = 2;
    nodes[0].modexAnswered = 2;
    const ExchangeCounters step = stepExchange(nodes);
    EXPECT_EQ(step, (ExchangeCounters{1, 2, 162, 0, 2, 2, 162, 324}));
    EXPECT_EQ(describeStepExchange(nodes, 3),
              "  exchange (2 of 3 node servers reported; fences per step, direct modex and bytes "
              "summed over the nodes): 1 data fence (162 bytes), 2 barriers, 2 direct modex (0 "
              "local, 2 remote), 2 answered for other nodes; network: 162 bytes sent, 324 "
              "received");
}

// A fence of some of the nodes reaches only them: the most any node saw.
TEST(ExchangeCounters, TheStepTakesTheMostFencesAnyNodeSaw) {
    std::map<std::uint32_t, ExchangeCounters> nodes = {{0, defaultModexNode(1)},
                                                       {1, defaultModexNode(1)}};
    nodes[1].barriers = 3;
    EXPECT_EQ(stepExchange(nodes).barriers, 3u);
    EXPECT_EQ(stepExchange({}), ExchangeCounters{});
}
