#include "profile/profile_subset.hpp"

#include <unordered_set>

namespace stepmap::topology {

Profile profileOfNodes(const Profile &profile, const std::vector<std::string> &names) {
    const std::unordered_set<std::string> wanted(names.begin(), names.end());
    Profile out;
    out.formatVersion = profile.formatVersion;
    for (const NodeProfile &node : profile.nodes)
        if (wanted.count(node.name))
            out.nodes.push_back(node);
    return out;
}

} // namespace stepmap::topology
