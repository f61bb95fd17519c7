#pragma once

// The entries of some nodes: what srun ships to a step's node servers.

#include "profile/interconnect_profile.hpp"

#include <string>
#include <vector>

namespace stepmap::topology {

// The entries of `names` that `profile` holds, in the profile's order; names
// without an entry are left out.
Profile profileOfNodes(const Profile &profile, const std::vector<std::string> &names);

} // namespace stepmap::topology
