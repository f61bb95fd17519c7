#pragma once

// The node's topology, discovered once per boot instead of once per step.
// Root writes it when slurmd starts (the plugin's slurmd init runs
// `stepmap-stepd --write-topology-cache DIR`); each step's server reads it
// instead of asking hwloc to walk /sys and the PCI bus again (44-59 ms per
// step under load, docs/scaling.md "The node's topology, once per boot").
//
// The file names what it describes: the boot it was made in, the hwloc that
// made it, and the machine's online CPUs, NUMA nodes and PCI devices. A
// server serves it only if all of these are still this machine's, and only
// if root wrote it where nobody else could (the file and its directory
// root's, neither group- nor other-writable, no link followed). Anything
// else is ignored with the reason, and the server discovers the machine as
// before: a stale or foreign cache is never served.

#include "base/expected.hpp"

#include <string>

namespace stepmap::topology {

// What makes a cache this machine's, now.
struct MachineSignature {
    std::string bootId;
    std::string hwloc; // the runtime library's API version
    std::string cpus;  // /sys/devices/system/cpu/online
    std::string numa;  // /sys/devices/system/node/online (empty without)
    std::string pci;   // the PCI devices' addresses, sorted
    bool operator==(const MachineSignature &) const = default;
};

MachineSignature currentMachineSignature();

inline constexpr const char *kNodeTopologyCacheName = "node-topology.xml";
// A machine's XML stays far below this; a bigger file is not read.
inline constexpr std::size_t kMaxNodeTopologyCacheBytes = 64u << 20;

// Discovers this machine (all of it, I/O included) and writes the cache in
// dir (made if missing, 0755), replacing any cache atomically. As root: dir
// must be root's and writable by root only. The path written.
Expected<std::string> writeNodeTopologyCache(const std::string &dir);

// The cache's topology XML, if it may be served on this machine now; an
// error says why not (the server logs it and discovers the machine).
Expected<std::string> readNodeTopologyCache(const std::string &path);

// The cache file's text for xml made on a machine with signature (exposed
// for tests, which make caches that are not this machine's).
std::string nodeTopologyCacheText(const MachineSignature &signature, const std::string &xml);

} // namespace stepmap::topology
