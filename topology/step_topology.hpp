#pragma once

// The hardware one step may use on one node: the node's topology, with its
// I/O objects, restricted to the PUs of the cores Slurm gave the step there
// (not the whole machine, not the whole job), whatever cgroup the caller
// itself sits in.

#include "base/expected.hpp"
#include "hwloc_handles.hpp"

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace stepmap::topology {

struct StepTopology {
    TopologyPtr topology; // restricted to cpuset
    BitmapPtr cpuset;     // the step's PUs, OS indices
    // Each network interface's nearest NUMA node, seen before the
    // restriction (interface_numa.hpp): what the profile's prober records.
    std::map<std::string, std::optional<int>> interfaceNuma;
};

// Slurm's core list ("0-1,4", S_STEP_ALLOC_CORES): indices of the node's
// cores in hwloc's logical order over the whole machine. xmlPath: load that
// file instead of the live machine (tests).
Expected<StepTopology> loadStepTopology(std::string_view coreList, const std::string &xmlPath = {});
// The same from this machine's own XML (node_cache.hpp: checked to be this
// machine's now), bound to as the live machine.
Expected<StepTopology> loadStepTopologyFromMachineXml(std::string_view coreList,
                                                      const std::string &xml);

// "0-3,8" from a set of (OS) indices; empty for an empty set.
std::string bitmapListString(hwloc_const_bitmap_t set);

// Parses "0-3,8" into indices; an error names the text.
Expected<std::vector<unsigned>> parseIndexList(std::string_view text);

} // namespace stepmap::topology
