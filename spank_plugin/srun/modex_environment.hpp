#pragma once

// What --modex and the site's interconnect profile put in srun's
// environment for the step's node servers, as values (pure: the profile is
// read through the caller's reader). Without --modex=profile a profile that
// cannot be used is only reported: the step never fails because of one.

#include "base/expected.hpp"
#include "profile/interconnect_profile.hpp"
#include "site_config.hpp"
#include "srun/step_environment.hpp"

#include <cstddef>
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace stepmap::plugin {

struct ModexSettings {
    // SLURM_STEPMAP_MODEX (mode and the site's port range) unless the mode
    // is fence, and the step's nodes' profile entries in pieces.
    EnvironmentChanges changes;
    // Said as srun goes on: with srun -v, and always (a broken site file).
    std::vector<std::string> verbose;
    std::vector<std::string> info;
};

using ProfileReader = std::function<Expected<topology::Profile>(const std::string &path)>;

// `modex`: --modex as given (or sbatch's), else the site's default;
// `nodes`: the plan's nodes; `environmentBytes`: at most what the job
// environment may carry of the profile (half of ARG_MAX). Fails only when
// the mode is bad, or --modex=profile cannot have the profile.
Expected<ModexSettings> modexEnvironment(const std::optional<std::string> &modex,
                                         const SiteConfig &site,
                                         const std::vector<std::string> &nodes,
                                         const ProfileReader &readProfile,
                                         std::size_t environmentBytes);

} // namespace stepmap::plugin
