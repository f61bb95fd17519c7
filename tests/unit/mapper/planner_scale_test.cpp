// 1M ranks on 16k nodes: the plans are right, their encodings stay short,
// and the time taken is reported (the target is well under a second in an
// optimized build; the assertion is loose so sanitizer builds pass too).

#include "planner/planner.hpp"

#include <chrono>
#include <string>

#include <gtest/gtest.h>

#include "hosts/allocation.hpp"
#include "hosts/node_model.hpp"
#include "plan/job_map.hpp"
#include "plan_helpers.hpp"

namespace stepmap {
namespace {

using test::mapBy;

constexpr int kNodes = 16384;
constexpr int kCpus = 64;
constexpr int kRanks = kNodes * kCpus; // 1,048,576

Allocation bigAllocation() {
    auto result = allocationFromSlurm("c[00000-16383]", "64(x16384)");
    EXPECT_TRUE(result.ok());
    return result.ok() ? result.value() : Allocation{};
}

double seconds(std::chrono::steady_clock::time_point since) {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - since).count();
}

TEST(PlannerScale, MapBySlot) {
    const Allocation nodes = bigAllocation();
    const auto start = std::chrono::steady_clock::now();
    const auto plan = makePlan(nodes, {});
    const std::string text = plan.ok() ? encodePlan(plan.value()) : "";
    const double elapsed = seconds(start);
    RecordProperty("seconds", std::to_string(elapsed));
    ASSERT_TRUE(plan.ok());
    EXPECT_EQ(plan->ranks.size(), static_cast<std::size_t>(kRanks));
    EXPECT_EQ(plan->ranks[kRanks - 1], (RankPlacement{kNodes - 1, kCpus - 1, kCpus - 1}));
    EXPECT_EQ(text, "SM1;c[00000-16383];64*16384;-*16384;0;0-16383*64");
    EXPECT_LT(elapsed, 30.0);
}

TEST(PlannerScale, MapByNodeWithHostFilter) {
    const Allocation nodes = bigAllocation();
    const auto start = std::chrono::steady_clock::now();
    // All but the first node, every slot, round robin.
    const auto plan = makePlan(
        nodes, {.np = kRanks - kCpus, .host = test::host("!^c00000"), .map = mapBy("node")});
    const std::string text = plan.ok() ? encodePlan(plan.value()) : "";
    const auto back = decodePlan(text);
    const double elapsed = seconds(start);
    RecordProperty("seconds", std::to_string(elapsed));
    ASSERT_TRUE(plan.ok()) << plan.error().message;
    EXPECT_EQ(plan->nodes.size(), static_cast<std::size_t>(kNodes - 1));
    EXPECT_EQ(plan->ranks[kNodes - 1], (RankPlacement{0, 1, 1}));
    EXPECT_EQ(text, "SM1;c[00001-16383];64*16383;-*16383;0;0-16382x64");
    ASSERT_TRUE(back.ok());
    EXPECT_EQ(back.value(), plan.value());
    EXPECT_LT(elapsed, 30.0);
}

TEST(PlannerScale, UnevenNodesOversubscribed) {
    // Alternating 1 and 64 CPUs: map-by node rounds shrink to every other
    // node after the first; the work stays linear.
    Allocation nodes;
    for (int i = 0; i < kNodes; ++i)
        nodes.nodes.push_back(
            AllocatedNode{std::string("n").append(std::to_string(i)), i % 2 ? 64 : 1});
    const auto start = std::chrono::steady_clock::now();
    const auto plan = makePlan(nodes, {.np = kRanks, .map = mapBy("node:OVERSUBSCRIBE")});
    const double elapsed = seconds(start);
    RecordProperty("seconds", std::to_string(elapsed));
    ASSERT_TRUE(plan.ok());
    EXPECT_EQ(plan->ranks.size(), static_cast<std::size_t>(kRanks));
    EXPECT_TRUE(plan->oversubscribed);
    EXPECT_LT(elapsed, 30.0);
    const auto slot = makePlan(nodes, {.np = kRanks, .map = mapBy("slot:OVERSUBSCRIBE")});
    ASSERT_TRUE(slot.ok());
    EXPECT_EQ(slot->ranks.size(), static_cast<std::size_t>(kRanks));
}

// 1M ranks bound to cores: one node model shared by every node, a handful of
// distinct CPU sets, a rank record of 20 bytes, and a short plan text.
TEST(PlannerScale, MapByCoreBindToCoreWithNodeModels) {
    Allocation nodes = bigAllocation();
    const auto model = buildSlurmNodeModel(SlurmNodeShape{2, kCpus / 2, 1, 2}, {});
    ASSERT_TRUE(model.ok());
    for (AllocatedNode &node : nodes.nodes)
        node.model = model.value();
    PlanRequest request{.np = kRanks, .map = mapBy("core")};
    request.bind = parseBindTo("core").value();
    const auto start = std::chrono::steady_clock::now();
    const auto plan = makePlan(nodes, request);
    const std::string text = plan.ok() ? encodePlan(plan.value()) : "";
    const double elapsed = seconds(start);
    RecordProperty("seconds", std::to_string(elapsed));
    ASSERT_TRUE(plan.ok()) << plan.error().message;
    static_assert(sizeof(RankPlacement) == 20);
    EXPECT_EQ(plan->ranks.size(), static_cast<std::size_t>(kRanks));
    EXPECT_EQ(plan->bindings.size(), static_cast<std::size_t>(kCpus));
    EXPECT_EQ(plan->bindingOf(kRanks - 1)->logical, (std::vector<std::uint32_t>{kCpus - 1}));
    EXPECT_LT(text.size(), 512u) << text;
    // Flags 4: bound to cores on request (BindingRequest::Cpus), not oversubscribed.
    EXPECT_EQ(text.rfind("SM2;c[00000-16383];64*16384;-*16384;4;0-16383*64;0*1048576;0/1/2/", 0),
              0u)
        << text.substr(0, 120);
    EXPECT_EQ(text.substr(text.rfind(';')), ";1-64x16384");
    const auto back = decodePlan(text);
    ASSERT_TRUE(back.ok()) << back.error().message;
    EXPECT_EQ(back.value(), plan.value());
    EXPECT_LT(elapsed, 30.0);
    // As slurmstepd decodes it: within the step's own task and node counts.
    const auto inStep = decodePlan(text, {.maxRanks = kRanks, .maxNodes = kNodes});
    ASSERT_TRUE(inStep.ok()) << inStep.error().message;
    EXPECT_EQ(inStep.value(), plan.value());
    EXPECT_EQ(decodePlan(text, {.maxRanks = kRanks - 1, .maxNodes = kNodes}).error().message,
              "invalid stepmap plan: ranks: more than 1048575 ranks");
}

} // namespace
} // namespace stepmap
