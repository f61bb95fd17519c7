#pragma once

// Binding a process's memory to the NUMA nodes of its CPUs (ParaStation's
// pinning binds memory with the CPUs unless __PSI_NO_BINDMEM). The task
// calls this in slurmstepd's task context, as the job user, just before
// exec: the policy (set_mempolicy, MPOL_BIND) is inherited across fork and
// exec, so the program and its children allocate from those nodes.

#include <cstdint>
#include <string>
#include <vector>

#include "base/expected.hpp"

namespace stepmap {

// The most NUMA nodes read from sysfs (Linux's MAX_NUMNODES is 1024).
inline constexpr std::uint32_t kMaxNumaNodes = 1024;

// The NUMA nodes (ascending) whose CPUs include any of `cpus` (OS
// indices), from `nodeDir` (sysfs: node<N>/cpulist). Nodes without CPUs
// never match. An unreadable directory or cpulist is an error naming it.
Expected<std::vector<std::uint32_t>>
numaNodesOfCpus(const std::vector<std::uint32_t> &cpus,
                const std::string &nodeDir = "/sys/devices/system/node");

// Binds the calling thread's future allocations to `nodes`
// (set_mempolicy MPOL_BIND); nodes outside the cgroup's cpuset.mems are
// left to the kernel, which binds to the allowed ones. Empty: no change.
Expected<void> bindMemoryToNodes(const std::vector<std::uint32_t> &nodes);

} // namespace stepmap
