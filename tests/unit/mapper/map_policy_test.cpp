#include "map_policy.hpp"

#include <optional>
#include <string>
#include <vector>

#include <gtest/gtest.h>

namespace stepmap {
namespace {

struct PolicyCase {
    std::string value;
    MapPolicy expected;
};

TEST(ParseMapBy, ParsesSlotNodeAndOversubscription) {
    const std::vector<PolicyCase> cases = {
        {"slot", {MapBy::Slot, std::nullopt}},
        {"node", {MapBy::Node, std::nullopt}},
        {"SLOT", {MapBy::Slot, std::nullopt}},
        {"Node", {MapBy::Node, std::nullopt}},
        {"node:OVERSUBSCRIBE", {MapBy::Node, true}},
        {"slot:oversubscribe", {MapBy::Slot, true}},
        {":OVERSUBSCRIBE", {MapBy::Slot, true}},
        {":NOOVERSUBSCRIBE", {MapBy::Slot, false}},
        {"node:NoOverSubscribe", {MapBy::Node, false}},
        {"slot:OVERSUBSCRIBE:OVERSUBSCRIBE", {MapBy::Slot, true}},
    };
    for (const PolicyCase &c : cases) {
        const auto policy = parseMapBy(c.value);
        ASSERT_TRUE(policy.ok()) << c.value << ": " << policy.error().message;
        EXPECT_EQ(policy.value(), c.expected) << c.value;
    }
}

struct ErrorCase {
    std::string value;
    std::string message;
};

TEST(ParseMapBy, RejectsUnknownAndUnsupportedValues) {
    const std::vector<ErrorCase> cases = {
        {"", "--map-by: empty value (accepted: slot, node, optionally followed by "
             ":OVERSUBSCRIBE or :NOOVERSUBSCRIBE)"},
        {"nodes", "--map-by 'nodes': unknown mapping policy 'nodes' (accepted: slot, node, "
                  "optionally followed by :OVERSUBSCRIBE or :NOOVERSUBSCRIBE)"},
        {"Slots:OVERSUBSCRIBE", "--map-by 'Slots:OVERSUBSCRIBE': unknown mapping policy 'Slots' "
                                "(accepted: slot, node, optionally followed by :OVERSUBSCRIBE "
                                "or :NOOVERSUBSCRIBE)"},
        {"core", "--map-by 'core': mapping by core is not supported yet (supported: slot, node)"},
        {"Socket", "--map-by 'Socket': mapping by socket is not supported yet (supported: slot, "
                   "node)"},
        {"package:PE=2", "--map-by 'package:PE=2': mapping by package is not supported yet "
                         "(supported: slot, node)"},
        {"numa", "--map-by 'numa': mapping by numa is not supported yet (supported: slot, node)"},
        {"l3cache", "--map-by 'l3cache': mapping by l3cache is not supported yet (supported: "
                    "slot, node)"},
        {"hwthread", "--map-by 'hwthread': mapping by hwthread is not supported yet (supported: "
                     "slot, node)"},
        {"ppr:2:package", "--map-by 'ppr:2:package': mapping by ppr:2:package is not supported "
                          "yet (supported: slot, node)"},
        {"seq", "--map-by 'seq': mapping by seq is not supported yet (supported: slot, node)"},
        {"rankfile", "--map-by 'rankfile': mapping by rankfile is not supported yet (supported: "
                     "slot, node)"},
        {"pe-list=0-1", "--map-by 'pe-list=0-1': mapping by pe-list=0-1 is not supported yet "
                        "(supported: slot, node)"},
        {"node:SPAN", "--map-by 'node:SPAN': modifier 'SPAN' is not supported yet (supported: "
                      "OVERSUBSCRIBE, NOOVERSUBSCRIBE)"},
        {"slot:PE=2", "--map-by 'slot:PE=2': modifier 'PE=2' is not supported yet (supported: "
                      "OVERSUBSCRIBE, NOOVERSUBSCRIBE)"},
        {"slot:OVERSUB", "--map-by 'slot:OVERSUB': unknown modifier 'OVERSUB' (accepted: "
                         "OVERSUBSCRIBE, NOOVERSUBSCRIBE)"},
        {"slot:", "--map-by 'slot:': unknown modifier '' (accepted: OVERSUBSCRIBE, "
                  "NOOVERSUBSCRIBE)"},
        {":OVERSUBSCRIBE:NOOVERSUBSCRIBE",
         "--map-by ':OVERSUBSCRIBE:NOOVERSUBSCRIBE': OVERSUBSCRIBE and NOOVERSUBSCRIBE "
         "contradict each other; give one of them"},
    };
    for (const ErrorCase &c : cases) {
        const auto policy = parseMapBy(c.value);
        ASSERT_FALSE(policy.ok()) << c.value;
        EXPECT_EQ(policy.error().message, c.message);
    }
}

} // namespace
} // namespace stepmap
