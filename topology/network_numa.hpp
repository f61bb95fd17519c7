#pragma once

// Which NUMA node each network device of a node is nearest to, as hwloc
// places it: the interconnect profile records it (interface_numa.hpp), and
// a node server compares its node with its profile entry
// (step_topology.hpp keeps the map from before its restriction).

#include <hwloc.h>

#include <map>
#include <optional>
#include <string>

namespace stepmap::topology {

// Every network OS device of `topology` (loaded with its I/O devices, not
// restricted), by interface name: the OS index of its nearest NUMA node, or
// nothing when no single one is nearest (attached to the whole machine of
// several NUMA nodes). Among equally near nodes, normal memory is taken over
// HBM/MCDRAM ones.
std::map<std::string, std::optional<int>> networkNumaNodes(hwloc_topology_t topology);

} // namespace stepmap::topology
