#pragma once

// The NUMA locality of network interfaces as hwloc sees it, for the
// interconnect prober (profile/sysfs_probe.hpp): hwloc places each network
// device under the CPUs it is attached to, which also covers devices whose
// sysfs node has no numa_node of its own (virtio-net: "device" is a virtio
// node, the PCI function above it). hwloc reads only the live machine, so a
// fixture root keeps sysfs as the only source.

#include <map>
#include <optional>
#include <string>

#include "base/expected.hpp"
#include "node_topology.hpp"
#include "profile/interconnect_profile.hpp"
#include "profile/sysfs_probe.hpp"

namespace stepmap::topology {

// networkNumaNodes (network_numa.hpp) of `topology`, loaded with its I/O
// devices.
std::map<std::string, std::optional<int>> interfaceNumaNodes(const NodeTopology &topology);

// probeNode(options), but for the live node (root "/") with the NUMA node
// of every interface hwloc knows taken from `topology` (this machine's) and
// the method "sysfs+hwloc"; any other root is probed from sysfs alone.
Expected<NodeProfile> probeNodeWithHwloc(ProbeOptions options, const NodeTopology &topology);

// As above with this machine's topology, loaded here only for the root "/".
Expected<NodeProfile> probeNodeWithHwloc(const ProbeOptions &options);

} // namespace stepmap::topology
