#pragma once

// The mapper's answer: which nodes run the step and where each rank goes.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/expected.hpp"
#include "base/input_limits.hpp"

namespace stepmap {

struct PlannedNode {
    std::string name;
    int slots = 0;               // slots the mapper used for the node (caps applied)
    std::optional<int> maxSlots; // hostfile max_slots, if given

    bool operator==(const PlannedNode &) const = default;
};

inline constexpr std::uint32_t kUnbound = 0xffffffffu;

// A CPU set a rank is bound to: the same PUs as hwloc logical indices (over
// the whole machine, what job maps and users speak) and as OS indices (what
// sched_setaffinity and cgroups take), each ascending.
struct CpuBinding {
    std::vector<std::uint32_t> logical;
    std::vector<std::uint32_t> os;

    bool operator==(const CpuBinding &) const = default;
};

struct RankPlacement {
    std::uint32_t node = 0;           // index into LaunchPlan::nodes
    std::uint32_t localRank = 0;      // index among the node's ranks, in rank order
    std::uint32_t nodeRank = 0;       // the same as localRank (one job per node per step)
    std::uint32_t app = 0;            // application context (MPMD), 0-based
    std::uint32_t binding = kUnbound; // index into LaunchPlan::bindings

    bool operator==(const RankPlacement &) const = default;
};

// How firmly the user asked for the plan's bindings. srun plans from
// Slurm's view of the job's CPUs; each node then resolves every binding
// against the CPUs the step really holds there (its cgroup), as PRRTE binds
// within its allocation: the CPUs of the bound object inside the step.
enum class BindingRequest : std::uint8_t {
    Default = 0, // mpirun's default binding: unbound on a node where it falls outside the step
    Objects = 1, // --bind-to package/numa/l*cache: the object's CPUs in the step, none: error
    Cpus = 2,    // core/hwthread, PE=n, pe-list, rankfile slots: every CPU or an error
};

struct LaunchPlan {
    // Every node that runs at least one rank, in mapping order (the order of
    // the filtered node list).
    std::vector<PlannedNode> nodes;
    std::vector<RankPlacement> ranks; // indexed by rank
    // Some node runs more ranks than its slots or its Slurm CPUs.
    bool oversubscribed = false;
    BindingRequest bindingRequest = BindingRequest::Default;
    // Each bound rank's memory is bound to the NUMA nodes of its CPUs
    // (ParaStation's pinning, unless __PSI_NO_BINDMEM).
    bool bindMemory = false;
    // The distinct CPU sets ranks are bound to (RankPlacement::binding);
    // a few per node shape for regular layouts.
    std::vector<CpuBinding> bindings;
    // Devices given to ranks (--map-by device=): the distinct device lists
    // ("cuda0,cuda1"), and per rank an index into them or kUnbound. Empty
    // unless mapping by device.
    std::vector<std::string> deviceSets;
    std::vector<std::uint32_t> rankDevices;

    // The ranks placed on `node`, ascending. O(ranks).
    std::vector<std::uint32_t> ranksOn(std::uint32_t node) const;
    // The CPUs `rank` is bound to, or nullptr when it is not bound.
    const CpuBinding *bindingOf(std::uint32_t rank) const;
    // The devices given to `rank` ("cuda0,cuda1"), or "" for none.
    std::string_view devicesOf(std::uint32_t rank) const;
    // Number of application contexts (the largest app index + 1).
    std::uint32_t appCount() const;

    bool operator==(const LaunchPlan &) const = default;
};

// Compact ASCII, no spaces or newlines, for an environment variable.
// Plans with one application and no bindings or devices keep the first form:
//   SM1;<nodes>;<slots>;<max_slots>;<oversubscribed>;<ranks>
// others add three (or five) fields:
//   SM2;<nodes>;<slots>;<max_slots>;<oversubscribed>;<ranks>;<apps>;
//       <cpusets>;<bindings>[;<devicesets>;<devices>]
// <nodes>: node names, hostlist-compressed ("n[1-4]").
// <slots>: one count per node, runs written "value*repeat" ("2*3,4").
// <max_slots>: likewise, '-' for none ("-*4").
// <oversubscribed>: the flags: 1 when oversubscribed, plus 2 x the binding
//   request (0-2), then "M" when bound ranks bind their memory.
// <ranks>: the node of each rank in rank order, as blocks
//   "F[-L][*P][xR]": R times (default 1) over nodes F..L (default F), P
//   consecutive ranks (default 1) on each. Slot mapping 4 nodes x 2:
//   "0-3*2"; node mapping 4 nodes, 8 ranks: "0-3x2".
// <apps>: the application of each rank, the same block form ("0*2,1*3").
// <cpusets>: the distinct CPU sets, '/'-separated, each "LOGICAL[@OS]" as
//   index lists ("0-3,8"); "@OS" only when the OS indices differ.
// <bindings>: per rank 0 (unbound) or 1 + its CPU set's position, as blocks
//   (map-by core on 64-core nodes: "1-64x16384").
// <devicesets>: the distinct device lists, '/'-separated ("cuda0/cuda1");
// <devices>: per rank 0 or 1 + its device list's position, as blocks.
// localRank and nodeRank are not encoded; decodePlan recomputes them. Node
// names must be valid host names (isValidHostName), as makePlan's are.
// The length grows with the number of blocks: tens of bytes when slot counts
// come in runs (Slurm's "N(xR)" shape; 1M ranks on 16k nodes: "0-16383*64"),
// but up to one block per run of ranks (~2.8 MB for map-by node over 16k
// nodes alternating 1 and 64 slots). Callers must check the length against
// their limit (Linux: 128 KiB per environment string).
std::string encodePlan(const LaunchPlan &plan);

// What decodePlan accepts. slurmstepd decodes STEPMAP_PLAN as root, and
// any step can set that variable by hand: every count and length in the
// text is checked against these before anything is allocated or expanded,
// so a decode costs memory and time in proportion to the limits, not to
// what the text claims ("0-4294967295", "n[0-999999999]", "0*16777216x9").
// The defaults accept every plan makePlan produces; callers that know the
// step's real task and node counts pass them.
struct PlanLimits {
    // Linux holds an environment string of at most 128 KiB (MAX_ARG_STRLEN).
    std::size_t maxTextBytes = std::size_t{128} << 10;
    std::uint32_t maxRanks = kMaxRanks;
    std::uint32_t maxNodes = kMaxHostlistNames;
    std::size_t maxNodeNameLength = kMaxHostNameLength;
    // The highest CPU index (logical or OS) in a CPU set.
    std::uint32_t maxCpuId = kMaxCpuId;
    // The CPU ids of all CPU sets together (logical and OS count once).
    std::size_t maxCpuSetIds = std::size_t{1} << 22;
};

// Strict inverse of encodePlan: any malformed, inconsistent or oversized
// input (beyond `limits`, node indices out of range, duplicate node names,
// counts not matching the nodes, no nodes, no ranks, per-rank fields of the
// wrong length, set indices out of range) is an error starting with
// "invalid stepmap plan"; a limit's error states the limit.
Expected<LaunchPlan> decodePlan(std::string_view text, const PlanLimits &limits = {});

// Fills localRank and nodeRank from each rank's node. O(nodes + ranks).
void assignLocalRanks(LaunchPlan &plan);

} // namespace stepmap
