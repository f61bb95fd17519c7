#pragma once

// The bounds stepmap puts on what it is given, in one place. Each is far
// above real use; they keep a mistyped or hostile value (an option, a file,
// STEPMAP_PLAN) from costing gigabytes or minutes. Inputs are checked
// against them before anything is expanded or placed, and the messages
// state the limit.

#include <cstddef>
#include <cstdint>

namespace stepmap {

// Processes in one step: -n, ppr, slot counts, the planner, a decoded plan.
inline constexpr int kMaxRanks = 1 << 24;

// CPUs (hardware threads) of one node, and so the most one process can use:
// PE=n, --tpp, NDEV=n, node shapes and hardware descriptions. Linux builds
// for at most 8192 CPUs (NR_CPUS); this leaves room.
inline constexpr int kMaxCpusPerNode = 1 << 16;

// The highest CPU index (logical or OS) a binding in a plan may name.
inline constexpr std::uint32_t kMaxCpuId = kMaxCpusPerNode - 1;

// Nodes one job or step may ask for (-N), as many as one hostlist may name.
inline constexpr int kMaxNodes = 1 << 20;

// Names one hostlist expression may expand to.
inline constexpr std::size_t kMaxHostlistNames = std::size_t{1} << 20;

// Characters of one host name: Slurm node names are host names, and DNS
// names have at most 253.
inline constexpr std::size_t kMaxHostNameLength = 255;

// Characters of all the names one hostlist expression expands to.
inline constexpr std::size_t kMaxHostlistBytes = std::size_t{32} << 20;

} // namespace stepmap
