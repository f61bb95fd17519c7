#include "profile/profile_merge.hpp"

#include <algorithm>

namespace stepmap::topology {

Profile mergedProfile(Profile profile, const std::vector<NodeProfile> &fresh) {
    for (const NodeProfile &node : fresh) {
        const auto same = std::find_if(profile.nodes.begin(), profile.nodes.end(),
                                       [&](const NodeProfile &n) { return n.name == node.name; });
        if (same == profile.nodes.end())
            profile.nodes.push_back(node);
        else
            *same = node;
    }
    std::stable_sort(profile.nodes.begin(), profile.nodes.end(),
                     [](const NodeProfile &a, const NodeProfile &b) { return a.name < b.name; });
    return profile;
}

} // namespace stepmap::topology
