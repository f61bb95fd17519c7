#pragma once

// `stepmap-profile report`: a profile as tables for people, one block per
// node: its interfaces, then its RDMA ports when it has any.

#include <string>

#include "profile/interconnect_profile.hpp"

namespace stepmap::tools {

std::string profileReport(const topology::Profile &profile);

} // namespace stepmap::tools
