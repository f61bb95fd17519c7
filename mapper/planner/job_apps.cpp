#include "planner/planner_stages.hpp"

#include <string>

#include "base/input_limits.hpp"
#include "placement/slot_errors.hpp"

namespace stepmap::detail {

namespace {

std::optional<UserError> checkPolicy(const PlanRequest &request) {
    if (auto error = checkProcessCount(request.np))
        return error;
    if (request.overbook && request.map.by == MapBy::Node && request.map.oversubscribe == true)
        return UserError{"--overbook cannot be combined with --map-by node: --overbook places "
                         "consecutive ranks on each node, while --map-by node:OVERSUBSCRIBE "
                         "already keeps round-robin placement past the slots. Drop --overbook."};
    if (request.overbook && request.map.by == MapBy::Node)
        return UserError{"--overbook cannot be combined with --map-by node: --overbook places "
                         "consecutive ranks on each node. Use --map-by node:OVERSUBSCRIBE to "
                         "keep round-robin placement past the slots, or drop --map-by node."};
    if (request.overbook && request.map.oversubscribe == false)
        return UserError{"--overbook oversubscribes when needed, but --map-by says "
                         "NOOVERSUBSCRIBE: drop one of them."};
    if (request.overbook && request.map.by != MapBy::Default && request.map.by != MapBy::Slot)
        return UserError{"--overbook places consecutive ranks on each node; it cannot be "
                         "combined with --map-by " +
                         std::string(mapByWord(request.map.by)).substr(2) + ": drop one of them."};
    for (std::size_t a = 0; a < request.apps.size(); ++a) {
        const auto &np = request.apps[a].np;
        if (np && (*np < 1 || *np > kMaxRanks))
            return UserError{"application context " + std::to_string(a) +
                             ": the number of processes must be from 1 to " +
                             std::to_string(kMaxRanks) + ", got " + std::to_string(*np)};
    }
    return std::nullopt;
}

// -n for the job with MPMD must be the applications' sum.
std::optional<UserError> checkJobCount(const PlanRequest &request) {
    if (request.apps.empty() || !request.np)
        return std::nullopt;
    std::int64_t sum = 0;
    bool all = true;
    for (const AppRequest &app : request.apps) {
        all = all && app.np.has_value();
        sum += app.np.value_or(0);
    }
    if (!all || sum != *request.np)
        return UserError{"-n " + std::to_string(*request.np) +
                         " does not match the application contexts' counts; give -n per "
                         "application context only"};
    return std::nullopt;
}

} // namespace

Expected<JobApps> resolveApps(const PlanRequest &request) {
    if (auto error = checkPolicy(request))
        return *error;
    if (auto error = checkJobCount(request))
        return *error;
    JobApps out;
    if (request.apps.empty())
        out.apps.push_back(AppPlan{AppRequest{request.np}});
    else
        for (const AppRequest &app : request.apps)
            out.apps.push_back(AppPlan{app});
    // OVERSUBSCRIBE/NOOVERSUBSCRIBE is one value for the whole job: taken
    // off each application and agreed on.
    out.oversubscribe = request.map.oversubscribe;
    for (std::size_t a = 0; a < out.apps.size(); ++a) {
        auto &map = out.apps[a].request.map;
        if (!map || !map->oversubscribe)
            continue;
        if (out.oversubscribe && *out.oversubscribe != *map->oversubscribe)
            return UserError{"application context " + std::to_string(a) + " asks for " +
                             (*map->oversubscribe ? "OVERSUBSCRIBE" : "NOOVERSUBSCRIBE") +
                             ", but the job (or an earlier application context) has " +
                             (*out.oversubscribe ? "OVERSUBSCRIBE" : "NOOVERSUBSCRIBE") +
                             ": these are conflicting values for the whole job.\nGive "
                             "OVERSUBSCRIBE or NOOVERSUBSCRIBE once, for the job."};
        out.oversubscribe = map->oversubscribe;
        map->oversubscribe.reset();
        if (*map == MapPolicy{})
            map.reset();
    }
    out.allowOversubscribe = request.overbook || out.oversubscribe.value_or(false);
    return out;
}

} // namespace stepmap::detail
