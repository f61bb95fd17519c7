#include "srun/modex_environment.hpp"

#include "job_variables.hpp"
#include "profile/profile_subset.hpp"
#include "profile/profile_yaml.hpp"
#include "protocol/modex/modex_mode.hpp"

#include <algorithm>
#include <iterator>

namespace stepmap::plugin {

Expected<ModexSettings> modexEnvironment(const std::optional<std::string> &modex,
                                         const SiteConfig &site,
                                         const std::vector<std::string> &nodes,
                                         const ProfileReader &readProfile,
                                         std::size_t environmentBytes) {
    ModexSettings settings;
    auto mode = modex::ModexMode::Fence;
    // --modex (or sbatch's), else the site's default.
    if (modex || site.policy.modex) {
        const std::string source = modex ? "--modex" : "defaults.modex in " + site.policy.path;
        auto parsed = modex::parseModexMode(modex.value_or(site.policy.modex.value_or("")), source);
        if (!parsed)
            return parsed.error();
        mode = *parsed;
    }
    const bool needed = mode == modex::ModexMode::Profile;
    // With its port range: every node must pin the same ports.
    if (mode != modex::ModexMode::Fence)
        settings.changes.push_back(
            {kModexVariable, std::string(modex::modexModeName(mode)) + ":" + site.modexPorts});
    if (site.profile.empty()) {
        if (needed)
            return UserError{"--modex=profile needs the site's interconnect profile, and "
                             "plugstack.conf names none (profile=FILE, made with stepmap-profile "
                             "make); use --modex=async"};
        return settings;
    }
    auto unusable = [&](const std::string &why) -> Expected<ModexSettings> {
        if (needed)
            return UserError{"--modex=profile cannot use the site's interconnect profile: " + why +
                             "; use --modex=async, or ask the site to update the profile"};
        settings.verbose.push_back("not serving the site's interconnect profile: " + why);
        return settings;
    };
    auto profile = readProfile(site.profile);
    if (!profile) {
        // A broken site file is the site's to fix: said on every srun, not
        // only with -v (a node without an entry is no fault).
        if (needed)
            return unusable(profile.error().message);
        settings.info.push_back("not serving the site's interconnect profile: " +
                                profile.error().message);
        return settings;
    }
    const topology::Profile ours = topology::profileOfNodes(*profile, nodes);
    if (ours.nodes.empty())
        return unusable(site.profile + " has no entry for the step's nodes");
    const std::string text = topology::writeProfileYaml(ours);
    // In pieces (job_variables.hpp), and within what srun's own re-exec and
    // slurmstepd's start of the server can carry.
    const std::size_t most =
        std::min(std::size(kProfileVariables) * kProfilePieceBytes, environmentBytes);
    if (text.size() > most)
        return unusable("the entries of the step's " + std::to_string(ours.nodes.size()) +
                        " nodes take " + std::to_string(text.size()) + " bytes, more than the " +
                        std::to_string(most) + " the job environment can carry");
    for (std::size_t at = 0, piece = 0; at < text.size(); at += kProfilePieceBytes, ++piece)
        settings.changes.push_back({kProfileVariables[piece], text.substr(at, kProfilePieceBytes)});
    return settings;
}

} // namespace stepmap::plugin
