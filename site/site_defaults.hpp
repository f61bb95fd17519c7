#pragma once

// What the site policy file (stepmap.yaml(5)) does to one plan, shared by
// srun and stepmap-plan so that both plan alike: the site's default
// placement where the user gave none (defaults.map_by, rank_by, bind_to)
// and the bounds the finished plan must keep (allow.*, limits.*).

#include <optional>
#include <string>
#include <vector>

#include "base/expected.hpp"
#include "plan/launch_plan.hpp"
#include "request/plan_request.hpp"
#include "request/request_options.hpp"
#include "site/site_policy.hpp"

namespace stepmap::plugin {

// Fills the unset --map-by, --rank-by and --bind-to of one application
// context with the site's defaults. With ParaStation placement in effect
// (--overbook, --loop-nodes-first, --nodes-sort, --tpp or a PSI_* variable)
// nothing is filled: that placement decides the mapping itself and refuses
// most of mpirun's options. Returns the defaults used, as "--map-by core",
// in that order, for errors to name.
std::vector<std::string> fillSiteDefaults(const SitePolicy &policy, AppOptions &app,
                                          bool parastationPlacement);

// The same for the application contexts of one job (MPMD: several), each
// directive on its own. A directive the user gave only in the first context
// is the job's (request_options.hpp) and takes no default; one given in no
// context is filled in the first, so the site's default is the job's, as
// with a single context; otherwise each context without its own takes the
// site's. Each default used is listed once.
std::vector<std::string> fillSiteDefaults(const SitePolicy &policy, std::vector<AppOptions> &apps,
                                          bool parastationPlacement);

// " (--map-by core, --bind-to core: this cluster's default, from FILE; give
// the option to choose another)", appended to an error when the plan used
// site defaults; "" when it used none.
std::string siteDefaultsNote(const std::vector<std::string> &used, const SitePolicy &policy);

// Whether the site lets the request's __PSI_CPUMAP order the CPU-slots
// (allow.user_cpumap); a map that pins nothing (no ParaStation placement,
// __PSI_NO_PINPROC, --bind-to none) passes.
Expected<void> checkUserCpuMap(const SitePolicy &policy, const PlanRequest &request);

// Whether the finished plan keeps within the site's bounds: overbooking
// (allow.overbook; `overbookBy` names what asked for it, "--overbook" or
// "PSI_OVERBOOK", unset when nothing did), then limits.ranks,
// limits.ranks_per_node and allow.oversubscribe (plan/site_limits.hpp).
// The error names the key, the file and the way out.
Expected<void> checkSitePolicy(const SitePolicy &policy, const LaunchPlan &plan,
                               const std::optional<std::string> &overbookBy);

} // namespace stepmap::plugin
