#pragma once

// `stepmap-profile update`: fresh probes of some nodes put into a profile,
// every other node's entry left exactly as it was (the writer is
// deterministic, so those entries come out byte for byte as before).

#include <vector>

#include "profile/interconnect_profile.hpp"

namespace stepmap::topology {

// `profile` with each node of `fresh` in place of the entry of its name, or
// added when there is none; nodes sorted by name. A name given twice in
// `fresh` keeps the last.
Profile mergedProfile(Profile profile, const std::vector<NodeProfile> &fresh);

} // namespace stepmap::topology
