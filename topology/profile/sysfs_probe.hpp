#pragma once

// Profiles a node from its sysfs and procfs, read under a root directory so
// that tests can hand it a fixture tree (tests/fixtures/sysfs/).
//
// Read: /sys/class/net/<if>/{ifindex,flags,mtu,speed,operstate,address,
// device,device/numa_node} for every interface but `lo` (a virtio-net
// device's PCI address and numa_node are its parent's); IPv6 addresses from
// /proc/net/if_inet6; RDMA devices from /sys/class/infiniband/<dev>/
// {node_guid,ports/<n>/{state,phys_state,link_layer,rate,lid,gids/<i>}}.
// IPv4 addresses have no small text file in procfs: with the root "/" they
// come from getifaddrs(), under any other root from <root>/ipv4_addresses
// (lines "<interface> <address>/<prefix length>", fixtures only).
//
// Every file is read whole up to kMaxSysfsFileBytes. Symbolic links are
// resolved inside the root (an absolute target is taken from the root); a
// link leading above the root is an error. Errors name the path.

#include <cstddef>
#include <map>
#include <optional>
#include <string>

#include "base/expected.hpp"
#include "profile/interconnect_profile.hpp"

namespace stepmap::topology {

inline constexpr std::size_t kMaxSysfsFileBytes = 4096;

struct ProbeOptions {
    std::string root = "/";
    std::string nodeName;   // the profile's name for the node; required
    std::string profiledAt; // UTC; empty: now
    std::string method = "sysfs";
    // NUMA nodes of interfaces by name from a better source than sysfs
    // (hwloc on the live node: topology/interface_numa.hpp); an interface
    // listed here takes this value instead of its device's numa_node.
    std::optional<std::map<std::string, std::optional<int>>> numaNodes;
};

// The node as seen under options.root, its digest filled in, interfaces,
// devices, ports and GIDs in order of name and number.
Expected<NodeProfile> probeNode(const ProbeOptions &options);

// Now, in UTC, as the profile writes times: "2026-11-24T00:30:53Z".
std::string utcNow();

} // namespace stepmap::topology
