#pragma once

// A node's hardware as the mapper sees it: the PUs the job holds there,
// grouped into cores, L1/L2/L3 caches, NUMA domains and packages, plus the
// devices (GPUs, NICs) near them. A pure value: built once (from hwloc in
// topology/, or from Slurm's sockets/cores/threads with
// buildSlurmNodeModel), then shared read-only between every node with the
// same hardware (`std::shared_ptr<const NodeModel>` in AllocatedNode).
//
// Numbering. Every object keeps the logical index hwloc gives it over the
// WHOLE machine, and its OS index, even when the job holds only part of the
// node: what the user reads in a job map ("core:L4") and writes in a
// pe-list or rankfile is a logical index of the full topology. Inside the
// model the held PUs are numbered 0..puCount()-1 in logical order ("local"
// PU numbers); an object covers a contiguous range of them.
//
// Levels are listed in PRRTE's enumeration order: by logical index, except
// NUMA domains, which PRRTE enumerates by OS index and cuts at the first one
// whose CPUs overlap an earlier one (GPU and HBM memory domains); the model
// holds only those CPU NUMA domains.

#include <array>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/expected.hpp"
#include "base/id_list.hpp"

namespace stepmap {

enum class HwLevel : std::uint8_t { Package, Numa, L3Cache, L2Cache, L1Cache, Core, Pu };
inline constexpr std::size_t kHwLevelCount = 7;
// The levels a PU record names its ancestors at: all but Pu itself.
inline constexpr std::size_t kAncestorLevels = 6;

// "package", "numa", "l3cache", "l2cache", "l1cache", "core", "hwthread".
std::string_view hwLevelName(HwLevel level);

inline constexpr std::uint32_t kNoIndex = 0xffffffffu;

struct HwObject {
    std::uint32_t logicalIndex = 0; // hwloc logical index over the whole machine
    std::uint32_t osIndex = kNoIndex;
    std::uint32_t firstPu = 0; // local PU range the job holds in it
    std::uint32_t puCount = 0;

    bool operator==(const HwObject &) const = default;
};

enum class DeviceKind : std::uint8_t { Gpu, Network, Other };

struct HwDevice {
    std::string name; // OS device name, e.g. "cuda0", "mlx5_0"
    DeviceKind kind = DeviceKind::Other;
    std::string uuid;  // vendor identity (NVML/RSMI/Level Zero), empty if unknown
    std::string pciId; // "0000:41:00.0", empty if unknown
    // Where it is local (the CPUs of its nearest non-I/O ancestor in
    // hwloc), as the range of held local PUs [firstPu, firstPu + puCount);
    // puCount is 0 when the job holds none of them.
    std::uint32_t firstPu = 0;
    std::uint32_t puCount = 0;

    bool operator==(const HwDevice &) const = default;
};

// One PU the job holds, as a builder writes it: its indices and the
// (logical, OS) index of its ancestor at each level Package..Core, unset
// when the machine has no object at that level above it.
struct PuRecord {
    struct Ancestor {
        std::uint32_t logical = 0;
        std::uint32_t os = kNoIndex;

        bool operator==(const Ancestor &) const = default;
    };
    std::uint32_t logical = 0;
    std::uint32_t os = 0;
    std::array<std::optional<Ancestor>, kAncestorLevels> ancestors; // indexed by HwLevel

    bool operator==(const PuRecord &) const = default;
};

struct NodeModelInput {
    std::vector<PuRecord> pus; // any order; sorted by logical index
    // Machine-wide counts (held or not), used to tell "no such core" from
    // "a core the job does not hold"; 0: take the held counts.
    std::uint32_t machinePus = 0;
    std::uint32_t machineCores = 0;
    std::uint32_t machinePackages = 0;
    // Per package (by logical index): the logical index of its first core
    // and its core count over the whole machine, for "P0:2" (the third core
    // of package 0) when the job holds only part of the package. Missing
    // entries are taken from the held cores.
    struct PackageCores {
        std::uint32_t firstCore = 0;
        std::uint32_t cores = 0;
    };
    std::vector<PackageCores> packageCores;
    // Devices with their locality as PU logical indices (held or not).
    struct Device {
        std::string name;
        DeviceKind kind = DeviceKind::Other;
        std::string uuid;
        std::string pciId;
        std::vector<std::uint32_t> localPusLogical;
    };
    std::vector<Device> devices;
};

class NodeModel {
public:
    // Validates and indexes: at least one PU; logical and OS indices unique;
    // every PU in a core; PUs sharing an ancestor contiguous in logical
    // order. The error says which PU breaks which rule.
    static Expected<NodeModel> make(NodeModelInput input);

    std::uint32_t puCount() const { return static_cast<std::uint32_t>(puLogical_.size()); }
    std::uint32_t puLogical(std::uint32_t pu) const { return puLogical_[pu]; }
    std::uint32_t puOs(std::uint32_t pu) const { return puOs_[pu]; }

    const std::vector<HwObject> &objects(HwLevel level) const {
        return objects_[static_cast<std::size_t>(level)];
    }
    // Index into objects(level) of the object holding local PU `pu`, or
    // kNoIndex when that level has none there.
    std::uint32_t objectOf(HwLevel level, std::uint32_t pu) const {
        return objectOfPu_[static_cast<std::size_t>(level)][pu];
    }
    // True when objects(level) is in increasing PU order (every level but,
    // possibly, Numa).
    bool inPuOrder(HwLevel level) const { return inPuOrder_[static_cast<std::size_t>(level)]; }
    // Local PU number of a logical / OS index, if the job holds that PU.
    std::optional<std::uint32_t> puFromLogical(std::uint32_t logical) const;
    std::optional<std::uint32_t> puFromOs(std::uint32_t os) const;
    // Index into objects(level) of the object with that logical index.
    std::optional<std::uint32_t> objectFromLogical(HwLevel level, std::uint32_t logical) const;

    std::uint32_t machinePus() const { return machinePus_; }
    std::uint32_t machineCores() const { return machineCores_; }
    std::uint32_t machinePackages() const { return machinePackages_; }
    // The machine-wide cores of package `logical` (see NodeModelInput).
    NodeModelInput::PackageCores packageCores(std::uint32_t logical) const;
    // Some core holds more than one PU the job holds.
    bool hasHwthreads() const { return hasHwthreads_; }

    const std::vector<HwDevice> &devices() const { return devices_; }

    // Translations of local PU lists (ascending) to logical / OS indices.
    std::vector<std::uint32_t> logicalOf(const std::vector<std::uint32_t> &pus) const;
    std::vector<std::uint32_t> osOf(const std::vector<std::uint32_t> &pus) const;

    bool operator==(const NodeModel &) const = default;

private:
    NodeModel() = default;

    std::vector<std::uint32_t> puLogical_;
    std::vector<std::uint32_t> puOs_;
    std::array<std::vector<HwObject>, kHwLevelCount> objects_;
    std::array<std::vector<std::uint32_t>, kHwLevelCount> objectOfPu_;
    std::array<bool, kHwLevelCount> inPuOrder_{};
    std::uint32_t machinePus_ = 0;
    std::uint32_t machineCores_ = 0;
    std::uint32_t machinePackages_ = 0;
    bool hasHwthreads_ = false;
    std::vector<NodeModelInput::PackageCores> packageCores_;
    std::vector<HwDevice> devices_;
};

// The node shape Slurm reports (slurm.conf / scontrol: Sockets,
// CoresPerSocket, ThreadsPerCore), the job's CPUs there, and how to number
// what Slurm does not say.
struct SlurmNodeShape {
    int sockets = 1;
    int coresPerSocket = 1;
    int threadsPerCore = 1;
    int numaPerSocket = 1; // NUMA domains per socket (cores split evenly)
};

enum class SlurmCpuIds {
    // Slurm's abstract CPU ids: socket-major, then core, then thread
    // ((s * cores + c) * threads + t), which is hwloc's logical PU order.
    Abstract,
    // Linux OS ids as most x86 firmware numbers them: thread t of core c of
    // socket s is t * sockets * cores + s * cores + c (siblings 0 and 24 on
    // a 24-core machine).
    OsThreadsLast,
};

// A model for a node of that shape holding `cpus` (ids as `ids` says; an
// empty list means every CPU). Each core gets private L1 and L2, each socket
// one L3, each socket numaPerSocket NUMA domains; OS indices follow the
// threads-last numbering. Errors name the bad shape or CPU id.
Expected<std::shared_ptr<const NodeModel>>
buildSlurmNodeModel(const SlurmNodeShape &shape, const std::vector<std::uint32_t> &cpus,
                    SlurmCpuIds ids = SlurmCpuIds::Abstract);

// Parses an index list "0-3,8,10-11" (Slurm's and hwloc's list syntax),
// ascending without repeats. The error names the text, and the limit when
// one is passed.
Expected<std::vector<std::uint32_t>> parseCpuIdList(std::string_view text,
                                                    const IdListLimits &limits = {});

// "0-3,8,10-11" from ascending indices ("" for none).
std::string formatIdList(const std::vector<std::uint32_t> &ids);

} // namespace stepmap
