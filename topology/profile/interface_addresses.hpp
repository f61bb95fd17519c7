#pragma once

// The IP addresses of a node's interfaces, for sysfs_probe: IPv6 from
// /proc/net/if_inet6 under the root; IPv4 from getifaddrs() when the root is
// the live system's "/", else from <root>/ipv4_addresses (fixtures: lines
// "<interface> <address>/<prefix length>").

#include <map>
#include <string>
#include <vector>

#include "base/expected.hpp"
#include "profile/interconnect_profile.hpp"
#include "profile/rooted_tree.hpp"

namespace stepmap::topology {

// Interface name -> its addresses, IPv4 before IPv6, each family sorted.
using AddressesByInterface = std::map<std::string, std::vector<InterfaceAddress>>;

Expected<AddressesByInterface> interfaceAddresses(const RootedTree &tree);

} // namespace stepmap::topology
