#include "plan/plan_svg.hpp"

#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "plan/svg_elements.hpp"
#include "plan_helpers.hpp"
#include "planner/planner.hpp"

namespace stepmap {
namespace {

using test::mapBy;

std::size_t count(const std::string &text, const std::string &what) {
    std::size_t n = 0;
    for (std::size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1))
        ++n;
    return n;
}

// The <g>...</g> of every mark of `rank`, in document order.
std::vector<std::string> marksOf(const std::string &svg, std::uint32_t rank) {
    std::vector<std::string> marks;
    const std::string key = "data-rank=\"" + std::to_string(rank) + "\"";
    for (std::size_t at = svg.find(key); at != std::string::npos; at = svg.find(key, at + 1)) {
        const std::size_t open = svg.rfind("<g ", at);
        marks.push_back(svg.substr(open, svg.find("</g>", at) - open));
    }
    return marks;
}

std::shared_ptr<const NodeModel> shape(int sockets, int cores, int threads, int numaPerSocket = 1) {
    auto model = buildSlurmNodeModel(SlurmNodeShape{sockets, cores, threads, numaPerSocket}, {});
    EXPECT_TRUE(model.ok());
    return model.value();
}

// A plan written by hand: ranks (node, app, binding) over `nodes`.
LaunchPlan handPlan(std::vector<PlannedNode> nodes, std::vector<CpuBinding> bindings,
                    std::vector<RankPlacement> ranks) {
    LaunchPlan plan;
    plan.nodes = std::move(nodes);
    plan.bindings = std::move(bindings);
    plan.ranks = std::move(ranks);
    assignLocalRanks(plan);
    return plan;
}

Allocation modelled(const LaunchPlan &plan, const std::shared_ptr<const NodeModel> &model) {
    Allocation allocation;
    for (const PlannedNode &node : plan.nodes)
        allocation.nodes.push_back(AllocatedNode{node.name, node.slots, model});
    return allocation;
}

// Two nodes of 2 packages x 2 NUMA x 2 cores x 2 PUs; MPMD, bound to cores.
struct MpmdJob {
    Allocation allocation;
    PlanResult result;
};

MpmdJob boundMpmdJob() {
    const auto model = shape(2, 4, 2, 2);
    Allocation allocation{{AllocatedNode{"n1", 8, model}, AllocatedNode{"n2", 8, model}}};
    PlanRequest request;
    request.apps = {AppRequest{.np = 6, .map = mapBy("core"), .bind = parseBindTo("core").value()},
                    AppRequest{.np = 5, .map = mapBy("node"), .bind = parseBindTo("core").value()}};
    auto result = planJob(allocation, request);
    EXPECT_TRUE(result.ok()) << result.error().message;
    return MpmdJob{allocation, result.value()};
}

TEST(FormatPlanSvg, DrawsEachNodesHardware) {
    const MpmdJob job = boundMpmdJob();
    const std::string svg = formatPlanSvg(job.result.plan, job.allocation);
    EXPECT_EQ(svg.rfind("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<svg ", 0), 0u);
    EXPECT_TRUE(svg.ends_with("</svg>\n"));
    EXPECT_EQ(count(svg, "<g class=\"node\""), 2u);
    EXPECT_EQ(count(svg, "data-node=\"n1\""), 1u);
    EXPECT_EQ(count(svg, "data-node=\"n2\""), 1u);
    EXPECT_EQ(count(svg, "class=\"package\""), 4u);
    EXPECT_EQ(count(svg, "class=\"numa\""), 8u);
    EXPECT_EQ(count(svg, "class=\"core\""), 16u);
    EXPECT_EQ(count(svg, "class=\"pu\""), 32u);
    EXPECT_EQ(count(svg, ">package L#1<"), 2u);
    EXPECT_EQ(count(svg, ">NUMA L#3<"), 2u);
    EXPECT_EQ(svg, formatPlanSvg(job.result.plan, job.allocation)); // deterministic
}

TEST(FormatPlanSvg, OneBarPerBoundRankInItsAppsColour) {
    const MpmdJob job = boundMpmdJob();
    const LaunchPlan &plan = job.result.plan;
    ASSERT_EQ(plan.appCount(), 2u);
    ASSERT_EQ(plan.ranks.size(), 11u);
    ASSERT_NE(svg::appColour(0), svg::appColour(1));
    const std::string svg = formatPlanSvg(plan, job.allocation);
    for (std::uint32_t rank = 0; rank < plan.ranks.size(); ++rank) {
        SCOPED_TRACE(rank);
        const std::vector<std::string> marks = marksOf(svg, rank);
        ASSERT_EQ(marks.size(), 1u);
        const std::uint32_t app = plan.ranks[rank].app;
        EXPECT_EQ(marks[0].rfind("<g class=\"rank app" + std::to_string(app) + "\"", 0), 0u);
        EXPECT_NE(marks[0].find("fill=\"" + svg::appColour(app) + "\""), std::string::npos);
        EXPECT_NE(marks[0].find("<title>rank " + std::to_string(rank) + ", app " +
                                std::to_string(app) + ": PUs L" +
                                formatIdList(plan.bindingOf(rank)->logical) + "</title>"),
                  std::string::npos);
    }
    EXPECT_EQ(count(svg, " unbound\""), 0u);
    EXPECT_EQ(count(svg, "class=\"hatch\""), 0u);
    EXPECT_EQ(count(svg, "class=\"legend\" fill=\"" + svg::appColour(1)), 1u);
    EXPECT_NE(svg.find(": 11 ranks, 2 app contexts, 2 nodes"), std::string::npos);
}

TEST(FormatPlanSvg, UnboundRanksAreDashedChips) {
    // Without node models the planner places by slot, unbound.
    const Allocation plain = test::allocation({{"n1", 2}, {"n2", 2}});
    auto plan = makePlan(plain, PlanRequest{.np = 3});
    ASSERT_TRUE(plan.ok());
    std::string svg = formatPlanSvg(plan.value(), plain);
    EXPECT_EQ(count(svg, "<g class=\"rank app0 unbound\""), 3u);
    EXPECT_EQ(count(svg, "stroke-dasharray=\"4 2\""), 4u); // 3 chips and the legend's
    EXPECT_EQ(count(svg, ">ranks (no hardware model for this node):<"), 2u);
    EXPECT_EQ(count(svg, "class=\"core\""), 0u);

    // With models but --bind-to none: cores drawn, ranks below them.
    const auto model = shape(1, 2, 1);
    const Allocation withModels{{AllocatedNode{"n1", 2, model}}};
    plan = makePlan(withModels, test::planRequest(2, "core", "", "none"));
    ASSERT_TRUE(plan.ok());
    svg = formatPlanSvg(plan.value(), withModels);
    EXPECT_EQ(count(svg, "<g class=\"rank app0 unbound\""), 2u);
    EXPECT_EQ(count(svg, "class=\"core\""), 2u);
    EXPECT_EQ(count(svg, ">unbound ranks (may run on any CPU of the node):<"), 1u);
    EXPECT_NE(marksOf(svg, 1).at(0).find("fill=\"" + svg::appTint(0) + "\""), std::string::npos);
}

TEST(FormatPlanSvg, RanksOnAnOversubscribedNodeAreHatched) {
    // n1: 3 ranks on 2 slots, two of them on PU 0; n2 within its slots.
    const LaunchPlan plan = handPlan({{"n1", 2}, {"n2", 2}}, {{{0}, {0}}, {{1}, {1}}},
                                     {{.node = 0, .binding = 0},
                                      {.node = 0, .binding = 1},
                                      {.node = 0, .app = 1, .binding = 0},
                                      {.node = 1, .binding = 0}});
    const std::string svg = formatPlanSvg(plan, modelled(plan, shape(1, 2, 1)));
    EXPECT_EQ(count(svg, "class=\"hatch\""), 3u);
    for (std::uint32_t rank : {0u, 1u, 2u})
        EXPECT_NE(marksOf(svg, rank).at(0).find(" oversubscribed\""), std::string::npos) << rank;
    EXPECT_EQ(marksOf(svg, 3).at(0).find("oversubscribed"), std::string::npos);
    EXPECT_EQ(count(svg, ">2 slots, 3 ranks - oversubscribed: more ranks than slots<"), 1u);
    EXPECT_EQ(count(svg, "stroke=\"#b00\" stroke-width=\"2\""), 1u); // n1's box
}

TEST(FormatPlanSvg, RanksSharingPusStackInLanesUpToTheLimit) {
    std::vector<RankPlacement> ranks(10, RankPlacement{.binding = 0});
    const LaunchPlan plan = handPlan({{"n1", 16}}, {{{0, 1, 2, 3}, {0, 1, 2, 3}}}, ranks);
    const std::string svg =
        formatPlanSvg(plan, modelled(plan, shape(1, 4, 1)), PlanSvgOptions{.maxLanes = 4});
    EXPECT_EQ(count(svg, "<g class=\"rank app0\""), 4u);
    EXPECT_EQ(count(svg, ">... and 6 more ranks bound here (lanes full)<"), 1u);
}

TEST(FormatPlanSvg, EscapesEveryName) {
    const LaunchPlan plan =
        handPlan({{"a<b&\"c'", 1}, {"x\x01y\xff", 1}}, {},
                 {{.node = 0, .binding = kUnbound}, {.node = 1, .binding = kUnbound}});
    const std::string svg =
        formatPlanSvg(plan, Allocation{}, PlanSvgOptions{.title = "job <1>&\"2\""});
    EXPECT_NE(svg.find("data-node=\"a&lt;b&amp;&quot;c&apos;\""), std::string::npos);
    EXPECT_NE(svg.find(">a&lt;b&amp;&quot;c&apos;</text>"), std::string::npos);
    EXPECT_NE(svg.find("data-node=\"x\\x01y\\xff\""), std::string::npos);
    EXPECT_NE(svg.find("stepmap launch plan - job &lt;1&gt;&amp;&quot;2&quot;: "),
              std::string::npos);
    EXPECT_EQ(svg.find("a<b"), std::string::npos);
    EXPECT_EQ(svg.find('\x01'), std::string::npos);
    EXPECT_EQ(svg.find('\xff'), std::string::npos);
}

TEST(FormatPlanSvg, HugePlansDrawTheFirstNodesAndCountTheRest) {
    // 10,000 nodes of 64 cores, one rank bound to each core.
    LaunchPlan plan;
    for (int core = 0; core < 64; ++core) {
        const std::uint32_t id = static_cast<std::uint32_t>(core);
        plan.bindings.push_back({{id}, {id}});
    }
    for (std::uint32_t node = 0; node < 10000; ++node) {
        plan.nodes.push_back({"n" + std::to_string(node), 64});
        for (std::uint32_t core = 0; core < 64; ++core)
            plan.ranks.push_back({.node = node, .binding = core});
    }
    assignLocalRanks(plan);
    const std::string svg = formatPlanSvg(plan, modelled(plan, shape(1, 64, 1)));
    EXPECT_EQ(count(svg, "<g class=\"node\""), 16u);
    EXPECT_EQ(count(svg, ">... and 9984 more nodes (638976 ranks) not drawn<"), 1u);
    EXPECT_EQ(count(svg, "<g class=\"rank "), 16u * 64);
    EXPECT_LT(svg.size(), std::size_t{2} << 20);
}

TEST(FormatPlanSvg, LargeNodesAndManyChipsAreSummarised) {
    std::vector<RankPlacement> ranks(200, RankPlacement{.binding = kUnbound});
    const LaunchPlan plan = handPlan({{"big", 2048}}, {}, ranks);
    const std::string svg = formatPlanSvg(plan, modelled(plan, shape(1, 2048, 1)));
    EXPECT_EQ(count(svg, "class=\"core\""), 0u);
    EXPECT_EQ(count(svg, ">ranks (hardware of 2048 PUs not drawn, more than 1024):<"), 1u);
    EXPECT_EQ(count(svg, "<g class=\"rank app0 unbound\""), 128u);
    EXPECT_EQ(count(svg, ">... and 72 more ranks<"), 1u);
}

TEST(FormatPlanSvg, LongRowsWrapAtACore) {
    // 96 cores of 1 PU: a row of 64 and one of 32, in one package.
    const LaunchPlan plan = handPlan({{"n1", 96}}, {{{70}, {70}}}, {{.binding = 0}});
    const std::string svg = formatPlanSvg(plan, modelled(plan, shape(1, 96, 1)));
    EXPECT_EQ(count(svg, "class=\"core\""), 96u);
    EXPECT_EQ(count(svg, "class=\"package\""), 1u);
    // Core 70 is the 7th of the second row: x = 8 (node) + 16 (frames) + 6 * (16 + 4).
    EXPECT_NE(marksOf(svg, 0).at(0).find("<rect x=\"144\""), std::string::npos);
}

} // namespace
} // namespace stepmap
