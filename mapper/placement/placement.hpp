#pragma once

// Internal to the mapper: the placement engine behind makePlan. It follows
// PRRTE's rmaps (Open MPI 5's mpirun) rule by rule - per-node slot and CPU
// accounting that carries from one application context to the next, the
// round-robin, object, ppr, pe-list, sequential and rankfile mappers, the
// binder that takes one CPU per process out of the node's available set,
// and the four rankers - but as a value computation: every mutable thing
// lives in this object, created per call and thrown away.
//
// The class is split over files by job: placement.cpp (accounting, the
// dispatch to one placer per policy), map_by_slot.cpp, map_by_node.cpp,
// map_by_object.cpp (levels and device=), map_pe_list.cpp, map_ppr.cpp,
// map_seq.cpp, map_rankfile.cpp, map_overbook.cpp, place_in_order.cpp,
// bind_process.cpp, rank_app.cpp, device_groups.cpp.
//
// Where stepmap deliberately differs from PRRTE, the function says so
// (mapper/README.md lists them).

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "base/expected.hpp"
#include "hosts/allocation.hpp"
#include "hosts/pu_bits.hpp"
#include "placement/node_filter.hpp"
#include "placement/policy_words.hpp"
#include "plan/launch_plan.hpp"
#include "request/map_policy.hpp"
#include "request/plan_request.hpp"

namespace stepmap::detail {

// The resolved options one mapper call works with (PRRTE's
// prte_rmaps_options_t). Copied per application in per-app dispatch.
struct MapOptions {
    int app = -1; // -1: every application (whole-job dispatch)
    MapBy map = MapBy::Slot;
    std::optional<HwLevel> mapLevel; // the objects mapped over (object, ppr)
    bool mapNode = false;            // ppr:N:node
    bool mapDevice = false;          // device= / ppr:N:device=
    int mapDepth = 1;                // PRRTE's depth scale: 1 none .. 8 hwthread
    bool span = false;
    bool ordered = false;
    bool userRanked = false;
    bool oversubscribe = false;
    bool useHwthreads = false;
    int cpusPerRank = 1;
    int pprn = 0;
    int limit = 0;
    RankBy rank = RankBy::Slot;
    BindTo bind = BindTo::None;
    bool overload = false;
    std::string cpuset;      // pe-list, consumed as processes are bound
    std::string peListGiven; // pe-list as given
    std::string device;      // device class or name
    int ndev = 1;
    bool shared = false;
    std::string interleave;
    std::uint32_t nprocs = 0;           // scratch, as in PRRTE
    std::uint32_t startRank = 0;        // first rank of this application
    bool ranksInPlacementOrder = false; // stepmap: node/node ranks as placed
    bool overbook = false;              // --overbook (ParaStation)
    bool sequenceShared = false;        // the job's sequence, continued across apps
    const std::vector<SequenceEntry> *sequence = nullptr;
    const Rankfile *rankfile = nullptr;
    bool rankfileGlobal = false; // job-level rankfile: entries are job ranks
};

// A node while mapping (PRRTE's prte_node_t, for this job only).
struct NodeState {
    std::uint32_t allocIndex = 0;
    std::string_view name;
    const NodeModel *model = nullptr;
    int cpus = 0;     // Slurm's CPUs
    int slots = 0;    // PRRTE's node->slots
    int slotsMax = 0; // 0: none
    int slotsInuse = 0;
    int slotsAvailable = 0;
    std::uint32_t numProcs = 0;
    bool inList = false; // in the filtered node list (a mapping target)
    bool mapped = false; // in the job map
    std::uint32_t mapOrder = 0;
    PuBits available; // CPUs no process was bound to yet
    PuBits jobcache;  // available as the current application found it
    std::vector<std::vector<std::uint32_t>> objectProcs; // binding LIMIT counters, by level
};

struct Proc {
    std::uint32_t node = 0;
    std::uint32_t app = 0;
    std::uint32_t obj = kNoIndex; // the object it was mapped to (mapLevel)
    std::uint32_t binding = kUnbound;
    std::uint32_t rank = kNoIndex;
};

// The nodes a mapper walks, in order. Removing one (full, at max_slots) is a
// flag, so walks over long lists stay linear; walks skip removed nodes.
class NodeList {
public:
    NodeList(std::vector<std::uint32_t> order, std::size_t universe)
        : order_(std::move(order)), in_(universe, 0), size_(order_.size()) {
        for (std::uint32_t node : order_)
            in_[node] = 1;
    }
    const std::vector<std::uint32_t> &order() const { return order_; }
    bool contains(std::uint32_t node) const { return in_[node] != 0; }
    void remove(std::uint32_t node) {
        if (in_[node] != 0) {
            in_[node] = 0;
            --size_;
        }
    }
    std::size_t size() const { return size_; }
    bool empty() const { return size_ == 0; }
    std::vector<std::uint32_t> remaining() const {
        std::vector<std::uint32_t> out;
        out.reserve(size_);
        for (std::uint32_t node : order_) {
            if (in_[node] != 0)
                out.push_back(node);
        }
        return out;
    }

private:
    std::vector<std::uint32_t> order_;
    std::vector<char> in_;
    std::size_t size_ = 0;
};

// PRRTE's spread of the processes left past the slots over the nodes left:
// each takes remaining / nodes, the first remaining % nodes one more.
class EvenSplit {
public:
    EvenSplit() = default;
    EvenSplit(std::uint32_t remaining, std::uint32_t nodes)
        : share_(remaining / nodes), longer_(remaining % nodes) {
        if (longer_ != 0)
            ++share_;
    }
    // The next node's share.
    std::uint32_t next() {
        const std::uint32_t share = share_;
        if (longer_ > 0 && --longer_ == 0)
            --share_;
        return share;
    }

private:
    std::uint32_t share_ = 0;
    std::uint32_t longer_ = 0;
};

// What the planner needs for the report and the plan.
struct EngineResult {
    std::vector<Proc> procs;
    std::vector<CpuBinding> bindings;
    std::vector<std::string> deviceSets;
    std::vector<std::uint32_t> procDevices; // per proc, empty unless by device
    std::vector<std::uint32_t> mapOrder;    // node indices in job-map order
    std::vector<NodeState> nodes;           // indexed like Allocation::nodes
    bool oversubscribed = false;
};

class Engine {
public:
    Engine(const Allocation &allocation, const std::vector<NodeSlots> &list);

    // The nodes, indexed like Allocation::nodes.
    std::vector<NodeState> &nodes() { return nodes_; }
    bool allModeled() const { return allModeled_; }

    // Job-level binding word; mappers reset it to NONE on oversubscription
    // as PRRTE does.
    BindingWord jobBinding;
    bool noOversubscribe = true;

    // One mapper call for application `app` (np processes).
    std::optional<UserError> mapApp(std::uint32_t app, std::uint32_t np, MapOptions &options);
    // Numbers application `app`'s processes (those mapped from process
    // `firstProc` on) from options.startRank on.
    std::optional<UserError> rankApp(std::uint32_t app, std::uint32_t np, const MapOptions &options,
                                     std::size_t firstProc);

    EngineResult take();
    std::size_t mappedCount() const { return procs_.size(); }

private:
    // prte_rmaps_base_get_target_nodes: the list for one application,
    // its slots; refreshes each node's availability snapshot.
    Expected<std::vector<std::uint32_t>> targetNodes(std::uint32_t &numSlots, bool keepAll);
    // targetNodes for np processes placed round robin: too few slots is an
    // error unless oversubscribing (then, with boundedByMaxSlots, within
    // the nodes' max_slots), and oversubscribing drops a default binding.
    Expected<std::vector<std::uint32_t>> roundRobinTargets(std::uint32_t np, MapOptions &options,
                                                           bool boundedByMaxSlots);
    bool checkAvail(std::uint32_t node, NodeList *list, std::uint32_t obj, MapOptions &options);
    std::optional<UserError> setupProc(std::uint32_t app, std::uint32_t node, std::uint32_t obj,
                                       MapOptions &options);
    // PRRTE's check_oversubscribed: 0 fine, 1 node full, error.
    Expected<int> checkOversubscribed(std::uint32_t node, const MapOptions &options);
    // CPUs (cores, or PUs with hwthreads) free on the node, inside mapping
    // target `obj` when given, counting at most to stopAt.
    std::uint32_t ncpus(std::uint32_t node, std::uint32_t obj, const MapOptions &options,
                        std::uint32_t stopAt = kNoBit) const;
    // The node's CPUs no process took yet, within the job's pe-list.
    PuBits freeCpus(std::uint32_t node) const;
    // ncpus over a given free set.
    std::uint32_t countFree(std::uint32_t node, const PuBits &free, std::uint32_t obj,
                            const MapOptions &options, std::uint32_t stopAt) const;
    // The local PUs of mapping target `obj` of a node: an object of the
    // mapped level, or (mapping by device) the locality of a device group.
    std::optional<std::pair<std::uint32_t, std::uint32_t>>
    objectRange(std::uint32_t node, std::uint32_t obj, const MapOptions &options) const;
    // The devices of a node handed out one group per process (device=).
    std::optional<UserError> loadDeviceGroups(std::uint32_t node, const MapOptions &options);
    void recordDevice(std::uint32_t group);
    void computeJobCpuset(std::uint32_t node, const MapOptions &options);

    std::optional<UserError> bindProc(Proc &proc, MapOptions &options);
    std::optional<UserError> bindGeneric(Proc &proc, MapOptions &options);
    std::optional<UserError> bindMultiple(Proc &proc, MapOptions &options);
    std::optional<UserError> bindToCpuset(Proc &proc, MapOptions &options);
    std::uint32_t internObject(std::uint32_t node, HwLevel level, std::uint32_t obj,
                               const MapOptions &options);
    std::uint32_t internBits(const NodeModel &model, const PuBits &bits);

    std::optional<UserError> mapBySlot(std::uint32_t app, std::uint32_t np, MapOptions &options);
    std::optional<UserError> mapByNode(std::uint32_t app, std::uint32_t np, MapOptions &options);
    std::optional<UserError> mapPeList(std::uint32_t app, std::uint32_t np, MapOptions &options);
    std::optional<UserError> mapByObject(std::uint32_t app, std::uint32_t np, MapOptions &options);
    std::optional<UserError> mapPpr(std::uint32_t app, std::uint32_t np, MapOptions &options);
    std::optional<UserError> mapSeq(std::uint32_t app, std::uint32_t np, MapOptions &options);
    std::optional<UserError> mapRankfile(std::uint32_t app, std::uint32_t np, MapOptions &options);
    std::optional<UserError> bindToSlots(Proc &proc, const std::string &slots,
                                         const std::string &rank, const MapOptions &options);
    std::optional<UserError> mapOverbook(std::uint32_t app, std::uint32_t np, MapOptions &options);

    template <class Targets>
    Expected<std::uint32_t> pprCount(const std::vector<std::uint32_t> &list, std::uint32_t pprn,
                                     const std::string &pattern, Targets targets) const;

    // A node's turn in a slot or pe-list pass: options.nprocs procs (at
    // most `left`), unbound if that overloads it within its slots; how
    // many it took (none when full).
    Expected<std::uint32_t> takeShare(std::uint32_t app, std::uint32_t node, std::uint32_t left,
                                      NodeList &nodes, MapOptions &options);

    // mapByObject's parts (map_by_object.cpp).
    struct ObjectWalk;
    enum class ObjectStep { Placed, PlacedNodeFull, NodeFull, NoCpu };
    // The mapping targets of a node: its device groups or its objects.
    Expected<std::uint32_t> objectTargets(std::uint32_t node, const MapOptions &options);
    std::optional<UserError> checkDeviceGroups(const std::vector<std::uint32_t> &list,
                                               std::uint32_t np, const MapOptions &options);
    Expected<ObjectStep> placeOnObject(std::uint32_t app, std::uint32_t node, std::uint32_t obj,
                                       NodeList &nodes, MapOptions &options);
    std::optional<UserError> mapObjectsOfNode(std::uint32_t app, std::uint32_t node,
                                              ObjectWalk &walk, MapOptions &options);
    void unbindForOversubscription(MapOptions &options);
    // A node given more procs than it has free CPUs, within its slots, is
    // overloaded rather than oversubscribed: unless the binding was asked
    // for, its procs run unbound (PRRTE decides per node).
    bool overloadedWithinSlots(std::uint32_t node, std::uint32_t procs, std::uint32_t cpusNeeded,
                               const MapOptions &options) const;
    void unbindIfOverloaded(std::uint32_t node, std::uint32_t procs, std::uint32_t cpusNeeded,
                            MapOptions &options);
    // Up to `count` procs on a node (mapped to `obj`), stopping when it is
    // full.
    struct NodeFill {
        std::uint32_t placed = 0;
        bool full = false; // at its slots and not oversubscribing
    };
    Expected<NodeFill> placeOnNode(std::uint32_t app, std::uint32_t node, std::uint32_t obj,
                                   std::uint32_t count, MapOptions &options);
    std::optional<UserError> placeSequence(std::uint32_t app,
                                           const std::vector<std::uint32_t> &nodeOfProc,
                                           MapOptions &options);
    // The listed nodes as slot counts, for the mappers of rank_mappers.hpp.
    std::vector<NodeSlots> slotView(const std::vector<std::uint32_t> &list) const;
    // placeSequence over the nodes `order` names (positions into `slots`).
    std::optional<UserError> placeInOrder(std::uint32_t app, const std::vector<NodeSlots> &slots,
                                          const std::vector<std::uint32_t> &order,
                                          MapOptions &options);

    void addToMap(std::uint32_t node);
    // Application `app`'s processes from process `firstProc` on, in
    // placement order.
    std::vector<std::uint32_t> appProcs(std::uint32_t app, std::size_t firstProc) const;
    // rank-by fill/span of processes grouped by node (nodeStart: offsets).
    Expected<std::vector<std::uint32_t>> rankByObject(const std::vector<std::uint32_t> &byNode,
                                                      const std::vector<std::uint32_t> &nodeStart,
                                                      const MapOptions &options) const;
    bool topologyKnown(std::uint32_t node) const { return nodes_[node].model != nullptr; }

    const Allocation &allocation_;
    const std::vector<NodeSlots> &list_;
    std::vector<NodeState> nodes_;
    bool allModeled_ = true;
    std::vector<Proc> procs_;
    std::vector<std::uint32_t> mapOrder_;
    bool oversubscribed_ = false;
    std::vector<std::uint32_t> procDevices_;
    std::vector<std::string> deviceSets_;
    std::size_t sequenceCursor_ = 0;
    struct DeviceGroup {
        std::uint32_t firstPu = 0;
        std::uint32_t puCount = 0;
        std::string names; // "cuda0,cuda1"
    };
    std::vector<DeviceGroup> deviceGroups_;
    std::uint32_t deviceGroupsNode_ = kNoIndex;
    std::unordered_map<std::string, std::uint32_t> deviceSetIndex_;

    // The node a placer is on (PRRTE's options->target and job_cpuset):
    // the CPUs its next processes may be bound to, which the binder narrows
    // process by process (PE=n), and the application's pe-list there.
    std::optional<PuBits> target_;
    std::optional<PuBits> jobCpuset_;

    // Distinct CPU sets, by content, and a per-model cache for whole
    // objects of a node the application found untouched.
    std::vector<CpuBinding> bindings_;
    std::unordered_map<std::string, std::uint32_t> bindingIndex_;
    std::unordered_map<const NodeModel *, std::vector<std::vector<std::uint32_t>>> objectBinding_;
};

} // namespace stepmap::detail
