#pragma once

// --site FILE: the site policy file (stepmap.yaml(5)) applied as srun's
// plugin applies it (site/site_defaults.hpp), so that a site
// can see what its file does without running anything.

#include <string>
#include <vector>

#include "cli_options.hpp"
#include "site/site_policy.hpp"

namespace stepmap::cli {

// The site's defaults.map_by, rank_by and bind_to filled into each
// application context that gives none (options.apps). As in srun, the
// ParaStation options (--overbook, --loop-nodes-first, --nodes-sort, --tpp)
// keep them out. Returns the defaults used ("--map-by node"), for errors.
std::vector<std::string> applySiteDefaults(const plugin::SitePolicy &policy, CliOptions &options);

} // namespace stepmap::cli
