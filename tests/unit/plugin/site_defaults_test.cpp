// What the site policy file does to a plan (site/site_defaults.hpp),
// shared by srun and stepmap-plan: defaults where the user gave none, per
// application context; ParaStation placement keeping them out; the note
// errors carry; the bounds on the finished plan.

#include "site/site_defaults.hpp"

#include <optional>
#include <string>
#include <vector>

#include <gtest/gtest.h>

namespace stepmap::plugin {
namespace {

using Strings = std::vector<std::string>;

SitePolicy siteWith(std::optional<std::string> mapBy, std::optional<std::string> rankBy,
                    std::optional<std::string> bindTo) {
    SitePolicy policy;
    policy.path = "/etc/slurm/stepmap.yaml";
    policy.mapBy = std::move(mapBy);
    policy.rankBy = std::move(rankBy);
    policy.bindTo = std::move(bindTo);
    return policy;
}

AppOptions app(std::optional<std::string> mapBy = std::nullopt,
               std::optional<std::string> rankBy = std::nullopt,
               std::optional<std::string> bindTo = std::nullopt) {
    return AppOptions{std::nullopt, std::move(mapBy), std::move(rankBy), std::move(bindTo)};
}

// "map/rank/bind" of each context, "-" for unset.
Strings directives(const std::vector<AppOptions> &apps) {
    Strings out;
    for (const AppOptions &a : apps)
        out.push_back(a.mapBy.value_or("-") + "/" + a.rankBy.value_or("-") + "/" +
                      a.bindTo.value_or("-"));
    return out;
}

TEST(SiteDefaults, FillsWhatTheUserLeftUnsetInOrder) {
    const SitePolicy site = siteWith("core", "fill", "core");
    AppOptions a = app();
    EXPECT_EQ(fillSiteDefaults(site, a, false),
              (Strings{"--map-by core", "--rank-by fill", "--bind-to core"}));
    EXPECT_EQ(directives({a}), Strings{"core/fill/core"});
}

TEST(SiteDefaults, TheUsersValueWins) {
    const SitePolicy site = siteWith("core", "fill", "core");
    AppOptions a = app("slot", std::nullopt, "none");
    EXPECT_EQ(fillSiteDefaults(site, a, false), Strings{"--rank-by fill"});
    EXPECT_EQ(directives({a}), Strings{"slot/fill/none"});
}

TEST(SiteDefaults, NoneSetNoneUsed) {
    AppOptions a = app();
    EXPECT_TRUE(
        fillSiteDefaults(siteWith(std::nullopt, std::nullopt, std::nullopt), a, false).empty());
    EXPECT_EQ(directives({a}), Strings{"-/-/-"});
}

TEST(SiteDefaults, ParaStationPlacementKeepsThemOut) {
    const SitePolicy site = siteWith("core", "fill", "core");
    AppOptions a = app();
    EXPECT_TRUE(fillSiteDefaults(site, a, true).empty());
    EXPECT_EQ(directives({a}), Strings{"-/-/-"});
    std::vector<AppOptions> apps{app(), app()};
    EXPECT_TRUE(fillSiteDefaults(site, apps, true).empty());
    EXPECT_EQ(directives(apps), (Strings{"-/-/-", "-/-/-"}));
}

// MPMD, each directive on its own (request_options.hpp: one given only in
// the first context is the job's).
TEST(SiteDefaults, PerApplicationContext) {
    const SitePolicy site = siteWith("node", "fill", "core");
    // Given nowhere: the first context's, so the job's, listed once.
    std::vector<AppOptions> none{app(), app(), app()};
    EXPECT_EQ(fillSiteDefaults(site, none, false),
              (Strings{"--map-by node", "--rank-by fill", "--bind-to core"}));
    EXPECT_EQ(directives(none), (Strings{"node/fill/core", "-/-/-", "-/-/-"}));

    // --map-by only in the first context is the user's for the whole job;
    // --bind-to in the second only: the others take the site's.
    std::vector<AppOptions> mixed{app("slot"), app(std::nullopt, std::nullopt, "numa"), app()};
    EXPECT_EQ(fillSiteDefaults(site, mixed, false), (Strings{"--rank-by fill", "--bind-to core"}));
    EXPECT_EQ(directives(mixed), (Strings{"slot/fill/core", "-/-/numa", "-/-/core"}));

    // Every context gives its own: nothing used.
    std::vector<AppOptions> all{app("slot", "slot", "none"), app("core", "span", "core")};
    EXPECT_TRUE(fillSiteDefaults(site, all, false).empty());
    EXPECT_EQ(directives(all), (Strings{"slot/slot/none", "core/span/core"}));
}

TEST(SiteDefaults, OneContextAsTheSingleForm) {
    const SitePolicy site = siteWith("node", std::nullopt, "core");
    std::vector<AppOptions> apps{app(std::nullopt, "span")};
    AppOptions single = app(std::nullopt, "span");
    EXPECT_EQ(fillSiteDefaults(site, apps, false), fillSiteDefaults(site, single, false));
    EXPECT_EQ(directives(apps), directives({single}));
}

TEST(SiteDefaults, NoteNamesTheDefaultsAndTheFile) {
    const SitePolicy site = siteWith("core", std::nullopt, std::nullopt);
    EXPECT_EQ(siteDefaultsNote({}, site), "");
    EXPECT_EQ(siteDefaultsNote({"--map-by core", "--bind-to core"}, site),
              " (--map-by core, --bind-to core: this cluster's default, from "
              "/etc/slurm/stepmap.yaml; give the option to choose another)");
}

// Two nodes of two slots; `perNode` ranks on each.
LaunchPlan planOf(std::vector<int> perNode) {
    LaunchPlan plan;
    for (std::size_t n = 0; n < perNode.size(); ++n) {
        plan.nodes.push_back(PlannedNode{"n" + std::to_string(n + 1), 2, std::nullopt});
        for (int r = 0; r < perNode[n]; ++r)
            plan.ranks.push_back(RankPlacement{.node = static_cast<std::uint32_t>(n),
                                               .localRank = static_cast<std::uint32_t>(r),
                                               .nodeRank = static_cast<std::uint32_t>(r)});
    }
    return plan;
}

std::string refusal(const SitePolicy &policy, const LaunchPlan &plan,
                    const std::optional<std::string> &overbookBy = std::nullopt) {
    auto within = checkSitePolicy(policy, plan, overbookBy);
    EXPECT_FALSE(within);
    return within ? "" : within.error().message;
}

TEST(SitePolicyBounds, BuiltInPolicyAllowsAll) {
    SitePolicy policy;
    EXPECT_TRUE(checkSitePolicy(policy, planOf({5, 3}), std::string("--overbook")));
}

TEST(SitePolicyBounds, Overbooking) {
    SitePolicy policy = siteWith(std::nullopt, std::nullopt, std::nullopt);
    policy.allowOverbook = false;
    EXPECT_TRUE(checkSitePolicy(policy, planOf({1, 1}), std::nullopt));
    EXPECT_EQ(refusal(policy, planOf({1, 1}), std::string("--overbook")),
              "--overbook: this cluster does not allow overbooking (allow.overbook: false in "
              "/etc/slurm/stepmap.yaml); drop it and run at most one rank per CPU");
    EXPECT_EQ(refusal(policy, planOf({1, 1}), std::string("PSI_OVERBOOK"))
                  .rfind("PSI_OVERBOOK: this cluster does not allow overbooking", 0),
              0u);
}

// psmgmt's allowUserMap: a user's __PSI_CPUMAP only where the site allows it.
TEST(SitePolicyBounds, UserCpuMapOnlyWhereAllowed) {
    SitePolicy policy = siteWith(std::nullopt, std::nullopt, std::nullopt);
    PlanRequest request;
    request.parastation.threadsPerProcess = 1; // ParaStation placement, pinning
    EXPECT_TRUE(checkUserCpuMap(policy, request));
    request.parastation.cpuMap = {1, 0};
    auto refused = checkUserCpuMap(policy, request);
    ASSERT_FALSE(refused);
    EXPECT_EQ(refused.error().message,
              "__PSI_CPUMAP: this cluster does not let users choose the CPUs of their CPU-slots "
              "(allow.user_cpumap is not true in /etc/slurm/stepmap.yaml); unset __PSI_CPUMAP to "
              "be pinned physical cores first");
    policy.allowUserCpuMap = true;
    EXPECT_TRUE(checkUserCpuMap(policy, request));
    // A map that pins nothing is no request to map.
    policy.allowUserCpuMap = false;
    request.parastation.pin = false;
    EXPECT_TRUE(checkUserCpuMap(policy, request));
    request.parastation.pin = true;
    request.parastation.threadsPerProcess.reset();
    EXPECT_TRUE(checkUserCpuMap(policy, request));
}

TEST(SitePolicyBounds, LimitsAndOversubscription) {
    SitePolicy policy = siteWith(std::nullopt, std::nullopt, std::nullopt);
    policy.maxRanks = 3;
    EXPECT_TRUE(checkSitePolicy(policy, planOf({2, 1}), std::nullopt));
    EXPECT_NE(refusal(policy, planOf({2, 2})).find("(limits.ranks: 3 in /etc/slurm/stepmap.yaml)"),
              std::string::npos);

    policy.maxRanks = 0;
    policy.maxRanksPerNode = 1;
    EXPECT_NE(refusal(policy, planOf({1, 2})).find("puts 2 ranks on n2"), std::string::npos);

    policy.maxRanksPerNode = 0;
    policy.allowOversubscribe = false;
    EXPECT_TRUE(checkSitePolicy(policy, planOf({2, 2}), std::nullopt));
    EXPECT_NE(refusal(policy, planOf({3, 1}))
                  .find("does not allow oversubscribing (allow.oversubscribe: false in "
                        "/etc/slurm/stepmap.yaml)"),
              std::string::npos);
}

} // namespace
} // namespace stepmap::plugin
