#include "cli_site.hpp"

#include "site/site_defaults.hpp"

namespace stepmap::cli {

std::vector<std::string> applySiteDefaults(const plugin::SitePolicy &policy, CliOptions &options) {
    // srun's test, less the PSI_* variables stepmap-plan does not read.
    const bool parastation = options.overbook || options.loopNodesFirst ||
                             options.nodesSort.has_value() || options.tpp.has_value();
    return plugin::fillSiteDefaults(policy, options.apps, parastation);
}

} // namespace stepmap::cli
