#include "plan/launch_plan.hpp"

#include <random>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "plan_helpers.hpp"
#include "planner/planner.hpp"

namespace stepmap {
namespace {

using test::allocation;
using test::hostfile;
using test::mapBy;

LaunchPlan planFor(const Allocation &nodes, const PlanRequest &request) {
    auto plan = makePlan(nodes, request);
    EXPECT_TRUE(plan.ok()) << plan.error().message;
    return plan.ok() ? plan.value() : LaunchPlan{};
}

const Allocation kFourByTwo = allocation({{"n1", 2}, {"n2", 2}, {"n3", 2}, {"n4", 2}});

struct EncodeCase {
    std::string name;
    LaunchPlan plan;
    std::string text;
};

TEST(EncodePlan, WritesCompactBlocks) {
    const std::vector<EncodeCase> cases = {
        {"map-by slot", planFor(kFourByTwo, {}), "SM1;n[1-4];2*4;-*4;0;0-3*2"},
        {"map-by node", planFor(kFourByTwo, {.map = mapBy("node")}), "SM1;n[1-4];2*4;-*4;0;0-3x2"},
        {"overbook", planFor(kFourByTwo, {.np = 10, .overbook = true}),
         "SM1;n[1-4];2*4;-*4;1;0*4,1-3*2"},
        {"seed 002 slot oversubscribed",
         planFor(allocation({{"node0", 2}, {"node1", 2}}),
                 {.np = 8,
                  .hostfile = hostfile("node0 slots=2 max_slots=20\nnode1 slots=2 "
                                       "max_slots=20\n"),
                  .map = mapBy("slot:OVERSUBSCRIBE")}),
         "SM1;node[0-1];2*2;20*2;1;0-1*4"},
        {"map-by node, uneven slots",
         planFor(allocation({{"a", 3}, {"b", 1}, {"c", 2}}), {.map = mapBy("node")}),
         "SM1;a,b,c;3,1,2;-*3;0;0-2,0,2,0"},
        {"mixed max_slots", planFor(kFourByTwo, {.hostfile = hostfile("n2 max_slots=3\nn1\n")}),
         "SM1;n[2,1];2*2;3,-;0;0-1*2"},
    };
    for (const EncodeCase &c : cases) {
        SCOPED_TRACE(c.name);
        EXPECT_EQ(encodePlan(c.plan), c.text);
        const auto back = decodePlan(c.text);
        ASSERT_TRUE(back.ok()) << back.error().message;
        EXPECT_EQ(back.value(), c.plan);
    }
}

LaunchPlan handMade(std::vector<std::string> names, std::vector<std::uint32_t> rankNodes) {
    LaunchPlan plan;
    for (std::size_t i = 0; i < names.size(); ++i)
        plan.nodes.push_back(PlannedNode{names[i], static_cast<int>(i % 3) + 1,
                                         i % 2 ? std::optional<int>(7) : std::nullopt});
    for (std::uint32_t node : rankNodes)
        plan.ranks.push_back(RankPlacement{node, 0, 0});
    assignLocalRanks(plan);
    return plan;
}

TEST(EncodePlan, RoundTrips) {
    std::vector<LaunchPlan> plans = {
        planFor(kFourByTwo, {.np = 1}),
        planFor(kFourByTwo, {.np = 7, .map = mapBy("node")}),
        planFor(kFourByTwo, {.np = 23, .map = mapBy("node:OVERSUBSCRIBE")}),
        planFor(kFourByTwo, {.np = 23, .map = mapBy(":OVERSUBSCRIBE")}),
        planFor(allocation({{"c001", 64}, {"c002", 64}, {"c010", 1}}), {.map = mapBy("node")}),
        handMade({"x", "y", "z"}, {2, 0, 0, 1, 2, 2, 0, 1, 1, 1}),
        handMade({"n9", "n10", "n11"}, {0, 1, 2, 0, 1, 2, 0, 2}),
        handMade({"a"}, {0}),
    };
    // Every rank on its own node, in a shuffled order.
    std::vector<std::string> names;
    std::vector<std::uint32_t> ranks;
    for (std::uint32_t i = 0; i < 50; ++i) {
        names.push_back(std::string("node").append(std::to_string(i)));
        ranks.push_back((i * 37) % 50);
    }
    plans.push_back(handMade(names, ranks));
    // ParaStation pinning: bound ranks whose memory follows their CPUs.
    LaunchPlan pinned = handMade({"p1", "p2"}, {0, 1, 0, 1});
    pinned.bindings = {CpuBinding{{0}, {0}}, CpuBinding{{1}, {1}}};
    for (std::uint32_t r = 0; r < 4; ++r)
        pinned.ranks[r].binding = r / 2;
    pinned.bindMemory = true;
    plans.push_back(pinned);
    EXPECT_NE(encodePlan(pinned).find(";0M;"), std::string::npos) << encodePlan(pinned);

    for (const LaunchPlan &plan : plans) {
        const std::string text = encodePlan(plan);
        EXPECT_EQ(text.find_first_of(" \t\n\r"), std::string::npos) << text;
        const auto back = decodePlan(text);
        ASSERT_TRUE(back.ok()) << text << ": " << back.error().message;
        EXPECT_EQ(back.value(), plan) << text;
    }
}

struct DecodeError {
    std::string text;
    std::string message;
};

TEST(DecodePlan, RejectsMalformedInput) {
    const std::string p = "invalid stepmap plan: ";
    const std::string notBlock = " is not F[-L][*P][xR]";
    const std::vector<DecodeError> cases = {
        {"", p + "it does not start with the version tag SM1 or SM2 (got '')"},
        {"SM3;n1;1;-;0;0", p + "it does not start with the version tag SM1 or SM2 (got 'SM3')"},
        {"SM2;n1;1;-;0;0", p + "expected 9 or 11 fields separated by ';'"},
        {"sm1;n1;1;-;0;0", p + "it does not start with the version tag SM1 or SM2 (got 'sm1')"},
        {"SM1;n1;1;-;0", p + "expected 6 fields separated by ';'"},
        {"SM1;n1;1;-;0;0;", p + "expected 6 fields separated by ';'"},
        {"SM1", p + "expected 6 fields separated by ';'"},
        {"SM1;;1;-;0;0", p + "node list: invalid hostlist '': it is empty"},
        {"SM1;n[1-;1;-;0;0", p + "node list: invalid hostlist 'n[1-': missing ']'"},
        {"SM1;n[0-9999999];1;-;0;0",
         p + "node list: invalid hostlist 'n[0-9999999]': it expands to more than 1048576 names"},
        {"SM1;n1,n1;1*2;-*2;0;0", p + "node n1 is listed twice"},
        {"SM1;n[1-2];1;-*2;0;0",
         p + "slot counts '1' do not give one positive number per node (2 nodes)"},
        {"SM1;n[1-2];1*3;-*2;0;0",
         p + "slot counts '1*3' do not give one positive number per node (2 nodes)"},
        {"SM1;n1;0;-;0;0",
         p + "slot counts '0' do not give one positive number per node (1 nodes)"},
        {"SM1;n1;-;-;0;0",
         p + "slot counts '-' do not give one positive number per node (1 nodes)"},
        {"SM1;n1;1*1;-;0;0",
         p + "slot counts '1*1' do not give one positive number per node (1 nodes)"},
        {"SM1;n1;+1;-;0;0",
         p + "slot counts '+1' do not give one positive number per node (1 nodes)"},
        {"SM1;n1;1;x;0;0",
         p + "max_slots counts 'x' do not give one positive number per node (1 nodes)"},
        {"SM1;n1;1;;0;0",
         p + "max_slots counts '' do not give one positive number per node (1 nodes)"},
        {"SM1;n1;1;-;6;0",
         p + "the flags field is '6', not a digit from 0 to 5, optionally followed by M"},
        {"SM1;n1;1;-;01;0",
         p + "the flags field is '01', not a digit from 0 to 5, optionally followed by M"},
        {"SM1;n1;1;-;;0",
         p + "the flags field is '', not a digit from 0 to 5, optionally followed by M"},
        {"SM1;n1;1;-;0X;0",
         p + "the flags field is '0X', not a digit from 0 to 5, optionally followed by M"},
        {"SM1;n1;1;-;0MM;0",
         p + "the flags field is '0MM', not a digit from 0 to 5, optionally followed by M"},
        {"SM1;n1;1;-;0;", p + "ranks: no ranks"},
        {"SM1;n1;1;-;0;1", p + "ranks: block '1' names node 1, but the plan has 1 nodes"},
        {"SM1;n[1-2];1*2;-*2;0;0-2*3",
         p + "ranks: block '0-2*3' names node 2, but the plan has 2 nodes"},
        {"SM1;n1;1;-;0;0-", p + "ranks: block '0-'" + notBlock},
        {"SM1;n[1-2];1*2;-*2;0;1-0", p + "ranks: block '1-0'" + notBlock},
        {"SM1;n1;1;-;0;0*0", p + "ranks: block '0*0'" + notBlock},
        {"SM1;n1;1;-;0;0x0", p + "ranks: block '0x0'" + notBlock},
        {"SM1;n1;1;-;0;x2", p + "ranks: block 'x2'" + notBlock},
        {"SM1;n1;1;-;0;0x2*3", p + "ranks: block '0x2*3'" + notBlock},
        {"SM1;n1;1;-;0;0x2x3", p + "ranks: block '0x2x3'" + notBlock},
        {"SM1;n1;1;-;0;0,,0", p + "ranks: block ''" + notBlock},
        {"SM1;n1;1;-;0;0,", p + "ranks: block ''" + notBlock},
        {"SM1;n1;1;-;0;-1", p + "ranks: block '-1'" + notBlock},
        {"SM1;n1;1;-;0;0 ", p + "ranks: block '0 '" + notBlock},
        {"SM1;n1;1;-;0;0*99999999999", p + "ranks: block '0*99999999999'" + notBlock},
        {"SM1;n1;1;-;0;0*16777216x2", p + "ranks: more than 16777216 ranks"},
        {"SM1;n1;1;-;0;0*16777216,0", p + "ranks: more than 16777216 ranks"},
        {"SM1;n1;1;-;0;0*4294967295x4294967295", p + "ranks: more than 16777216 ranks"},
        {"SM1;n[0-65535];1*65536;-*65536;0;0-65535*65535x65535",
         p + "ranks: more than 16777216 ranks"},
    };
    for (const DecodeError &c : cases) {
        const auto plan = decodePlan(c.text);
        ASSERT_FALSE(plan.ok()) << c.text;
        EXPECT_EQ(plan.error().message, c.message) << c.text;
    }
}

struct LimitCase {
    std::string name;
    std::string text;
    PlanLimits limits;
    std::string message;
};

std::string repeatJoined(const std::string &item, int count, char separator) {
    std::string out = item;
    for (int i = 1; i < count; ++i)
        out += separator + item;
    return out;
}

// The plans of issue 7 that cost gigabytes and minutes to decode, and the
// like for every dimension: all are refused before anything is expanded.
TEST(DecodePlan, RefusesWhatPassesItsLimitsBeforeExpanding) {
    const std::string p = "invalid stepmap plan: ";
    const std::string long1000(1000, 'a');
    const std::string long200(200, 'a');
    const PlanLimits step{.maxRanks = 8, .maxNodes = 4};
    const std::vector<LimitCase> cases = {
        {"62 bytes of CPU lists (515 MiB before)",
         "SM2;n1;1;-;0;0;0;0-16777215/0-16777215/0-16777215/0-16777215;0",
         {},
         p + "CPU set '0-16777215': CPU list '0-16777215': CPU id 16777215 is above 65535, the "
             "highest accepted"},
        {"a CPU list to 2^32",
         "SM2;n1;1;-;0;0;0;0-4294967295;1",
         {},
         p + "CPU set '0-4294967295': CPU list '0-4294967295': CPU id 4294967295 is above "
             "65535, the highest accepted"},
        {"one CPU set repeating its ids",
         "SM2;n1;1;-;0;0;0;" + repeatJoined("0-65535", 3, ',') + ";1",
         {},
         p + "CPU set '0-65535,0-65535,0-65535': CPU list '0-65535,0-65535,0-65535' names more "
             "than 65536 CPUs"},
        {"CPU sets adding up",
         "SM2;n1;1;-;0;0;0;" + repeatJoined("0-65535", 65, '/') + ";1",
         {},
         p + "the CPU sets hold more than 4194304 CPU ids together"},
        {"an OS list beyond the logical one",
         "SM2;n1;1;-;0;0;0;0@0-9999999;1",
         {},
         p + "CPU set '0@0-9999999': CPU list '0-9999999': CPU id 9999999 is above 65535, the "
             "highest accepted"},
        {"1 KiB host names (2 GiB before)",
         "SM1;" + long1000 + "[0-999][0-999];1;-;0;0",
         {},
         p + "node list: invalid hostlist '" + long1000.substr(0, 100) + "...': the host name '" +
             long1000.substr(0, 40) + "...' is longer than 255 characters"},
        {"names adding up",
         "SM1;" + long200 + "[0-999][0-999];1;-;0;0",
         {},
         p + "node list: invalid hostlist '" + long200.substr(0, 100) +
             "...': its names together are longer than 33554432 characters"},
        {"a billion nodes",
         "SM1;n[0-999999999];1;-;0;0",
         {},
         p + "node list: invalid hostlist 'n[0-999999999]': it expands to more than 1048576 "
             "names"},
        {"more than 128 KiB of text",
         "SM1;n1;1;-;0;" + repeatJoined("0", 65537, ','),
         {},
         p + "it is 131086 bytes long, more than 131072"},
        {"the step's node count",
         "SM2;n[0-1048575];1*1048576;-*1048576;0;0-1048575*16;"
         "0*16777216;0;1*16777216",
         step, p + "node list: invalid hostlist 'n[0-1048575]': it expands to more than 4 names"},
        {"the step's task count", "SM1;n[1-4];4*4;-*4;0;0-3*4", step,
         p + "ranks: more than 8 ranks"},
        {"16M ranks for a small step", "SM1;n1;1;-;0;0*16777216", step,
         p + "ranks: more than 8 ranks"},
        {"a short node name limit",
         "SM1;node1;1;-;0;0",
         {.maxNodeNameLength = 4},
         p + "node list: invalid hostlist 'node1': the host name 'node1' is longer than 4 "
             "characters"},
        {"more applications than ranks",
         "SM2;n1;1;-;0;0;0*2;;0",
         {},
         p + "application indices: more than 1 ranks"},
        {"control characters are escaped",
         std::string("SM1;n\x01\n;1;-;0;0", 15),
         {},
         p + "node list: invalid hostlist 'n\\x01\\n': invalid character '\\x01'"},
    };
    for (const LimitCase &c : cases) {
        SCOPED_TRACE(c.name);
        const auto plan = decodePlan(c.text, c.limits);
        ASSERT_FALSE(plan.ok()) << c.text.substr(0, 200);
        EXPECT_EQ(plan.error().message, c.message);
    }
}

// Limits as slurmstepd passes them (the step's own counts) accept the plan
// srun made for that step, and refuse it one short.
TEST(DecodePlan, AcceptsAPlanWithinTheStepsCounts) {
    const LaunchPlan plan = planFor(kFourByTwo, {.np = 7, .map = mapBy("node")});
    const std::string text = encodePlan(plan);
    const auto back = decodePlan(text, {.maxRanks = 7, .maxNodes = 4});
    ASSERT_TRUE(back.ok()) << back.error().message;
    EXPECT_EQ(back.value(), plan);
    EXPECT_FALSE(decodePlan(text, {.maxRanks = 6, .maxNodes = 4}).ok());
    EXPECT_FALSE(decodePlan(text, {.maxRanks = 7, .maxNodes = 3}).ok());
    EXPECT_FALSE(decodePlan(text, {.maxTextBytes = text.size() - 1}).ok());
    EXPECT_TRUE(decodePlan(text, {.maxTextBytes = text.size()}).ok());
    // Bound plans: the highest CPU id.
    const std::string bound = "SM2;n1;1;-;0;0;0;0-3@4-7;1";
    EXPECT_TRUE(decodePlan(bound, {.maxCpuId = 7}).ok());
    EXPECT_FALSE(decodePlan(bound, {.maxCpuId = 6}).ok());
    EXPECT_TRUE(decodePlan(bound, {.maxCpuSetIds = 4}).ok());
    EXPECT_FALSE(decodePlan(bound, {.maxCpuSetIds = 3}).ok());
}

// Mutated encodings (fixed seed) either decode to a plan that survives a
// second round trip or fail with an error; none crashes (run under the
// sanitizers to check for undefined behaviour).
TEST(DecodePlan, SurvivesMutations) {
    const std::string valid = encodePlan(planFor(allocation({{"a1", 3}, {"a2", 1}, {"b07", 2}}),
                                                 {.np = 11, .map = mapBy("node:OVERSUBSCRIBE")}));
    const std::string alphabet = "SM1;,-*x[]0123456789-n ab";
    std::mt19937 random(12345);
    int decoded = 0;
    for (int round = 0; round < 20000; ++round) {
        std::string text = valid;
        const int edits = 1 + static_cast<int>(random() % 3);
        for (int e = 0; e < edits; ++e) {
            const std::size_t at = random() % (text.size() + 1);
            const char c = alphabet[random() % alphabet.size()];
            switch (random() % 3) {
            case 0:
                text.insert(at, 1, c);
                break;
            case 1:
                if (at < text.size())
                    text.erase(at, 1);
                break;
            default:
                if (at < text.size())
                    text[at] = c;
                break;
            }
        }
        const auto plan = decodePlan(text);
        if (!plan.ok()) {
            EXPECT_EQ(plan.error().message.rfind("invalid stepmap plan: ", 0), 0u) << text;
            continue;
        }
        ++decoded;
        const auto again = decodePlan(encodePlan(plan.value()));
        ASSERT_TRUE(again.ok()) << text;
        EXPECT_EQ(again.value(), plan.value()) << text;
    }
    EXPECT_GT(decoded, 0);
}

} // namespace
} // namespace stepmap
