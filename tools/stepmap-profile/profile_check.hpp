#pragma once

// `stepmap-profile check`: the entries of a profile file against the nodes
// as probed now, one line per difference (topology/profile/profile_diff.hpp)
// and a closing count.

#include <string>
#include <vector>

#include "profile/interconnect_profile.hpp"

namespace stepmap::tools {

struct CheckReport {
    std::string text;   // "profile F: node n2: interface eth0: MTU was 9000, now 1500\n..."
    bool stale = false; // a static field differs or a node has no entry
};

// `shownFile` names the file in every line; `live` are the probed nodes.
CheckReport checkReport(const std::string &shownFile, const topology::Profile &recorded,
                        const std::vector<topology::NodeProfile> &live);

} // namespace stepmap::tools
