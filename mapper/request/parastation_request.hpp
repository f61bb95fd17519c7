#pragma once

// ParaStation MPI's placement settings (process_placement(7), seed 004), as
// stepmap reads them under Slurm: --loop-nodes-first, --nodes-sort, --tpp and
// the PSI_* environment equivalents (the merging of options and environment
// is the plugin's job, spank_plugin/srun/psi_environment.hpp). The rules are
// shared/notes/parastation.md; the placement itself is
// parastation_placement.hpp.
//
// Parsers only: no I/O. Every error names the input it came from (an option
// or an environment variable) and says what is accepted.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/expected.hpp"

namespace stepmap {

// --nodes-sort / PSI_NODES_SORT.
enum class NodesSort { Proc, Load1, Load5, Load15, ProcLoad, None };

// What the resource manager knows about one node, for sorting. Passed in by
// the caller (the plugin reads Slurm's node table); the mapper reads no
// system state.
struct NodeFigures {
    std::string name;
    int hardwareThreads = 0; // all CPUs of the node (Slurm's CPUTot), at least 1
    int assignedThreads = 0; // CPUs other jobs hold there
    // Load averages; unset when the resource manager does not report them
    // (Slurm reports only the 1-minute load, CPULoad).
    std::optional<double> load1;
    std::optional<double> load5;
    std::optional<double> load15;

    bool operator==(const NodeFigures &) const = default;
};

// PSI_NODES, PSI_HOSTS or PSI_HOSTFILE: the node pool, a filter of the
// allocation. Entries as written, repeats kept; the planner resolves them.
struct NodePool {
    enum class Kind { Nodes, Hosts, Hostfile };
    Kind kind = Kind::Hosts;
    std::string fileName;               // PSI_HOSTFILE: the file, for messages
    std::vector<std::uint32_t> indices; // PSI_NODES: 0-based indices into the allocation
    std::vector<std::string> names;     // PSI_HOSTS, PSI_HOSTFILE: node names

    // "PSI_NODES", "PSI_HOSTS" or "PSI_HOSTFILE <file>".
    std::string describe() const;

    bool operator==(const NodePool &) const = default;
};

// Where each setting came from, as the user wrote it: an option name
// ("--tpp") or an environment variable ("PSI_TPP"). Messages use these.
struct ParaStationSources {
    std::string overbook = "--overbook"; // or "PSI_OVERBOOK"
    std::string loopNodesFirst = "--loop-nodes-first";
    std::string nodesSort = "--nodes-sort";
    std::string threadsPerProcess = "--tpp"; // or "PSI_TPP", "OMP_NUM_THREADS"
    std::string exclusive = "PSI_EXCLUSIVE"; // or "PSI_OVERBOOK", "--overbook"
    std::string pin = "__PSI_NO_PINPROC";    // what turned pinning off: or "--bind-to none"

    bool operator==(const ParaStationSources &) const = default;
};

// The ParaStation part of a PlanRequest (plan_request.hpp).
struct ParaStationRequest {
    bool loopNodesFirst = false;        // one process per node per pass
    std::optional<NodesSort> nodesSort; // unset: keep the pool's order (as NONE)
    // Hardware threads each process takes on one node; unset: not given (1).
    std::optional<int> threadsPerProcess;
    std::optional<NodePool> pool; // unset: the whole allocation
    // PSI_EXCLUSIVE, or overbooking, which enforces it: only nodes on which
    // no other job runs, held for this job.
    bool exclusive = false;
    // A PSI_* variable engaged ParaStation placement: its queue rule holds,
    // a request that cannot start now fails at once unless PSI_WAIT (wait)
    // is set.
    bool fromEnvironment = false;
    bool wait = false;
    // Pinning (seed 004, "Process pinning"): each process is bound to its
    // threads() CPU-slots on its node; __PSI_NO_PINPROC turns it off (as
    // does --bind-to none, sources.pin says which).
    bool pin = true;
    // __PSI_CPUMAP: the node's CPUs (OS indices) in CPU-slot order, in place
    // of the default order (physical cores first). Empty: the default.
    std::vector<std::uint32_t> cpuMap;
    // Memory is bound to the NUMA nodes of the pinned CPUs unless
    // __PSI_NO_BINDMEM is set (or nothing is pinned).
    bool bindMemory = true;
    // Figures of the allocated nodes; needed only when nodesSort rates nodes
    // (anything but NONE), see needsNodeFigures().
    std::vector<NodeFigures> figures;
    ParaStationSources sources;

    int threads() const { return threadsPerProcess.value_or(1); }

    bool operator==(const ParaStationRequest &) const = default;
};

// True when `sort` rates nodes by load or processes, i.e. the caller must
// fill ParaStationRequest::figures.
bool needsNodeFigures(const std::optional<NodesSort> &sort);

// The most hardware threads per process stepmap accepts (psmgmt's limit).
inline constexpr int kMaxThreadsPerProcess = 65535;

// "PROC", "LOAD" (= "LOAD_1", also "LOAD1"), "LOAD_5", "LOAD_15", "PROC+LOAD",
// "NONE"; case-insensitive. `source` is "--nodes-sort" or "PSI_NODES_SORT".
// Error: "PSI_NODES_SORT 'busy': unknown sort criterion (accepted, in any
// case: PROC, LOAD, LOAD_1, LOAD_5, LOAD_15, PROC+LOAD, NONE)".
Expected<NodesSort> parseNodesSort(std::string_view value, std::string_view source);

// The name a NodesSort is written with ("PROC+LOAD").
std::string_view nodesSortName(NodesSort sort);

// A positive number of hardware threads per process, at most
// kMaxThreadsPerProcess. `source` is "--tpp" or "PSI_TPP".
Expected<int> parseThreadsPerProcess(std::string_view value, std::string_view source);

// OMP_NUM_THREADS as threads per process: its first (outermost) level, so
// "4,2" gives 4. Same limits as parseThreadsPerProcess.
Expected<int> parseOmpNumThreads(std::string_view value);

// PSI_NODES: comma-separated node indices and inclusive ranges,
// "0,1,3,17-20"; 0-based indices into the allocation's node list. Blanks
// around items are allowed; an empty list or item, a reversed range or a
// non-number is an error.
Expected<NodePool> parsePsiNodes(std::string_view value);

// __PSI_CPUMAP: the CPUs (OS indices of hardware threads) that CPU-slots
// 0, 1, ... map to, comma-separated numbers and inclusive ranges, "0,2,4-7";
// blanks around items allowed. A CPU listed twice, an empty list or item, a
// reversed range, a non-number or an index above kMaxCpuId is an error.
Expected<std::vector<std::uint32_t>> parsePsiCpuMap(std::string_view value);

// PSI_HOSTS: host names separated by white space. Empty: error.
Expected<NodePool> parsePsiHosts(std::string_view value);

// The text of the PSI_HOSTFILE file: one host name per line (a node listed k
// times may run k processes); blank lines and lines starting with '#' are
// ignored. A line with two names, or a file without names, is an error
// naming the file (and line).
Expected<NodePool> parsePsiHostfile(std::string_view text, std::string_view fileName);

} // namespace stepmap
