#include "own_entry_check.hpp"

#include "profile/sysfs_probe.hpp"

#include <algorithm>

namespace stepmap::server {

OwnEntryCheck checkOwnEntry(const StepConfig &c, const std::string &sysfsRoot) {
    const std::string &name = c.plan.nodes[c.nodeIndex].name;
    if (!c.profile)
        return {false, "the profile srun shipped cannot be read: " + c.profileProblem};
    const auto &nodes = c.profile->nodes;
    auto entry = std::find_if(nodes.begin(), nodes.end(),
                              [&](const topology::NodeProfile &n) { return n.name == name; });
    if (entry == nodes.end())
        return {false, "the profile has no entry for " + name};
    topology::ProbeOptions probe;
    probe.root = sysfsRoot;
    probe.nodeName = name;
    auto live = topology::probeNode(probe);
    if (!live)
        return {false, "cannot probe the node to check its entry: " + live.error().message};
    if (live->digest != entry->digest)
        return {false, "the node no longer matches its entry (profiled " + entry->profiledAt +
                           "; digest " + live->digest + " now, " + entry->digest +
                           " in the profile); update it with stepmap-profile update"};
    return {true, ""};
}

} // namespace stepmap::server
