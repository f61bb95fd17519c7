#include "profile/profile_merge.hpp"

#include <algorithm>
#include <map>
#include <string>

namespace stepmap::topology {

Profile mergedProfile(Profile profile, const std::vector<NodeProfile> &fresh) {
    // By name, so that updating every node of a large cluster stays linear.
    std::map<std::string, std::size_t> entryOf;
    for (std::size_t i = 0; i < profile.nodes.size(); ++i)
        entryOf.emplace(profile.nodes[i].name, i);
    for (const NodeProfile &node : fresh) {
        const auto [entry, added] = entryOf.emplace(node.name, profile.nodes.size());
        if (added)
            profile.nodes.push_back(node);
        else
            profile.nodes[entry->second] = node;
    }
    std::stable_sort(profile.nodes.begin(), profile.nodes.end(),
                     [](const NodeProfile &a, const NodeProfile &b) { return a.name < b.name; });
    return profile;
}

} // namespace stepmap::topology
