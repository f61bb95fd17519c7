#pragma once

// The served profile (served_profile.hpp) as PMIx registration data: one
// PMIX_NODE_INFO_ARRAY per step node with an entry (its PMIX_FABRIC_DEVICES
// and stepmap.* keys, docs/profile-keys.md) and the extra keys of a rank.
// What is added grows with the served nodes and ranks only.

#include "plan/launch_plan.hpp"
#include "pmix_info_list.hpp"
#include "served_profile.hpp"

#include <string>
#include <utility>
#include <vector>

namespace stepmap::server {

// A PMIX_NODE_INFO_ARRAY in `job` for every node of `plan` that `profile`
// has an entry for.
void addServedNodes(InfoList &job, const LaunchPlan &plan, const ServedProfile &profile);

// The rank's extra keys, each a PMIX_BYTE_OBJECT, into its PMIX_PROC_DATA.
void addRankKeys(InfoList &proc, const std::vector<std::pair<std::string, std::string>> &keys);

} // namespace stepmap::server
