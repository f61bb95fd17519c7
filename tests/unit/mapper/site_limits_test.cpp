// A site's limits on plans (stepmap.yaml: limits.*, allow.oversubscribe),
// checked on plans the planner really makes.

#include <gtest/gtest.h>

#include "plan/site_limits.hpp"
#include "plan_helpers.hpp"

namespace stepmap {
namespace {

using namespace test;

LaunchPlan planOf(const Allocation &alloc, const PlanRequest &req) {
    auto made = planJob(alloc, req);
    EXPECT_TRUE(made.ok()) << (made.ok() ? "" : made.error().message);
    return made.ok() ? made.value().plan : LaunchPlan{};
}

const char *kSource = "/etc/slurm/stepmap.yaml";

TEST(SiteLimits, NoLimitsAcceptEveryPlan) {
    const LaunchPlan plan =
        planOf(allocation({{"n1", 2}, {"n2", 2}}), {.np = 8, .map = mapBy("slot:OVERSUBSCRIBE")});
    ASSERT_TRUE(plan.oversubscribed);
    EXPECT_TRUE(checkSiteLimits(plan, SiteLimits{}).ok());
}

TEST(SiteLimits, RanksPerStep) {
    const LaunchPlan plan = planOf(allocation({{"n1", 4}, {"n2", 4}}), {.np = 6});
    EXPECT_TRUE(checkSiteLimits(plan, {.maxRanks = 6, .source = kSource}).ok());
    auto refused = checkSiteLimits(plan, {.maxRanks = 5, .source = kSource});
    ASSERT_FALSE(refused.ok());
    EXPECT_EQ(refused.error().message,
              "the plan has 6 ranks; this cluster allows at most 5 in a step (limits.ranks: 5 "
              "in /etc/slurm/stepmap.yaml); run fewer ranks");
}

TEST(SiteLimits, RanksPerNodeNamesTheNode) {
    // By slot: n1 takes 4, n2 the other 2.
    const LaunchPlan plan = planOf(allocation({{"n1", 4}, {"n2", 4}}), {.np = 6});
    EXPECT_TRUE(checkSiteLimits(plan, {.maxRanksPerNode = 4}).ok());
    auto refused = checkSiteLimits(plan, {.maxRanksPerNode = 3, .source = kSource});
    ASSERT_FALSE(refused.ok());
    EXPECT_NE(refused.error().message.find("puts 4 ranks on n1"), std::string::npos)
        << refused.error().message;
    EXPECT_NE(refused.error().message.find("limits.ranks_per_node: 3 in /etc/slurm/stepmap.yaml"),
              std::string::npos)
        << refused.error().message;
    // The same ranks by node fit.
    const LaunchPlan spread =
        planOf(allocation({{"n1", 4}, {"n2", 4}}), {.np = 6, .map = mapBy("node")});
    EXPECT_TRUE(checkSiteLimits(spread, {.maxRanksPerNode = 3}).ok());
}

TEST(SiteLimits, OversubscribingRefusedWhereTheSiteForbidsIt) {
    const SiteLimits strict{.allowOversubscribe = false, .source = kSource};
    const LaunchPlan fits = planOf(allocation({{"n1", 2}, {"n2", 2}}), {.np = 4});
    EXPECT_TRUE(checkSiteLimits(fits, strict).ok());
    const LaunchPlan over =
        planOf(allocation({{"n1", 2}, {"n2", 2}}), {.np = 6, .map = mapBy("node:OVERSUBSCRIBE")});
    ASSERT_TRUE(over.oversubscribed);
    auto refused = checkSiteLimits(over, strict);
    ASSERT_FALSE(refused.ok());
    EXPECT_EQ(refused.error().message,
              "the plan puts 3 ranks on n1, which has 2 slots, and this cluster does not allow "
              "oversubscribing (allow.oversubscribe: false in /etc/slurm/stepmap.yaml); run at "
              "most 2 ranks there, or use more nodes");
}

} // namespace
} // namespace stepmap
