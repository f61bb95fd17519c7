#include "site/site_defaults.hpp"

#include <algorithm>

#include "plan/site_limits.hpp"

namespace stepmap::plugin {

namespace {

using Directive = std::optional<std::string> AppOptions::*;

struct SiteDefault {
    Directive field;
    const std::optional<std::string> SitePolicy::*site;
    const char *option;
};

constexpr SiteDefault kDefaults[] = {
    {&AppOptions::mapBy, &SitePolicy::mapBy, "--map-by"},
    {&AppOptions::rankBy, &SitePolicy::rankBy, "--rank-by"},
    {&AppOptions::bindTo, &SitePolicy::bindTo, "--bind-to"},
};

} // namespace

std::vector<std::string> fillSiteDefaults(const SitePolicy &policy, AppOptions &app,
                                          bool parastationPlacement) {
    std::vector<AppOptions> one{app};
    auto used = fillSiteDefaults(policy, one, parastationPlacement);
    app = std::move(one.front());
    return used;
}

std::vector<std::string> fillSiteDefaults(const SitePolicy &policy, std::vector<AppOptions> &apps,
                                          bool parastationPlacement) {
    std::vector<std::string> used;
    if (parastationPlacement || apps.empty())
        return used;
    for (const SiteDefault &d : kDefaults) {
        const std::optional<std::string> &site = policy.*d.site;
        if (!site)
            continue;
        const auto given = [&](const AppOptions &app) { return (app.*d.field).has_value(); };
        const bool inFirst = given(apps.front());
        const bool inOthers = std::any_of(apps.begin() + 1, apps.end(), given);
        if (inFirst && !inOthers)
            continue; // the user's, for the whole job
        bool filled = false;
        for (AppOptions &app : apps) {
            if (given(app))
                continue;
            app.*d.field = site;
            filled = true;
            if (!inOthers)
                break; // given nowhere: the first context's is the job's
        }
        if (filled)
            used.push_back(std::string(d.option) + " " + *site);
    }
    return used;
}

std::string siteDefaultsNote(const std::vector<std::string> &used, const SitePolicy &policy) {
    if (used.empty())
        return "";
    std::string list;
    for (const std::string &d : used)
        list += (list.empty() ? "" : ", ") + d;
    return " (" + list + ": this cluster's default, from " + policy.path +
           "; give the option to choose another)";
}

Expected<void> checkUserCpuMap(const SitePolicy &policy, const PlanRequest &request) {
    if (policy.allowUserCpuMap || request.parastation.cpuMap.empty() || !parastationPins(request))
        return {};
    return UserError{
        "__PSI_CPUMAP: this cluster does not let users choose the CPUs of their "
        "CPU-slots (allow.user_cpumap is not true in " +
        (policy.path.empty() ? std::string("the site policy file, stepmap.yaml(5)") : policy.path) +
        "); unset __PSI_CPUMAP to be pinned physical cores first"};
}

Expected<void> checkSitePolicy(const SitePolicy &policy, const LaunchPlan &plan,
                               const std::optional<std::string> &overbookBy) {
    if (!policy.allowOverbook && overbookBy)
        return UserError{*overbookBy +
                         ": this cluster does not allow overbooking (allow.overbook: false in " +
                         policy.path + "); drop it and run at most one rank per CPU"};
    return checkSiteLimits(plan, SiteLimits{.maxRanks = policy.maxRanks,
                                            .maxRanksPerNode = policy.maxRanksPerNode,
                                            .allowOversubscribe = policy.allowOversubscribe,
                                            .source = policy.path});
}

} // namespace stepmap::plugin
