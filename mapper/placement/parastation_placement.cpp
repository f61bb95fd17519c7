#include "placement/parastation_placement.hpp"

#include <algorithm>
#include <string>
#include <unordered_map>

#include "base/quote.hpp"
#include "placement/cpu_slots.hpp"
#include "placement/node_filter.hpp"
#include "placement/node_sort.hpp"
#include "placement/rank_mappers.hpp"
#include "placement/slot_errors.hpp"

namespace stepmap {

namespace {

using detail::NodeSlots;
using detail::RankNodes;

// How the user takes a setting back: "drop --tpp" or "unset PSI_TPP".
std::string withdraw(const std::string &source) {
    return (source.rfind("--", 0) == 0 ? "drop " : "unset ") + source;
}

// The setting that puts the request on ParaStation placement, as written.
std::string engagingSetting(const PlanRequest &request) {
    const ParaStationRequest &ps = request.parastation;
    if (ps.loopNodesFirst)
        return ps.sources.loopNodesFirst;
    if (ps.threadsPerProcess)
        return ps.sources.threadsPerProcess + "=" + std::to_string(ps.threads());
    if (ps.nodesSort)
        return ps.sources.nodesSort + "=" + std::string(nodesSortName(*ps.nodesSort));
    if (ps.pool)
        return ps.pool->kind == NodePool::Kind::Hostfile ? "PSI_HOSTFILE" : ps.pool->describe();
    return ps.sources.overbook;
}

// An mpirun word as written on the command line: "BYCORE" -> "core".
std::string lowerWord(std::string_view word) {
    if (word.rfind("BY", 0) == 0)
        word.remove_prefix(2);
    std::string out(word);
    for (char &c : out) {
        if (c >= 'A' && c <= 'Z')
            c = static_cast<char>(c - 'A' + 'a');
    }
    return out;
}

// The bare name of a setting ("PSI_TPP" of "PSI_TPP=2").
std::string settingName(const std::string &setting) {
    return setting.substr(0, setting.find('='));
}

std::optional<UserError> checkRequest(const PlanRequest &request) {
    const ParaStationRequest &ps = request.parastation;
    if (auto error = detail::checkProcessCount(request.np))
        return error;
    if (ps.threads() < 1 || ps.threads() > kMaxThreadsPerProcess)
        return UserError{ps.sources.threadsPerProcess + "=" + std::to_string(ps.threads()) +
                         ": expected 1 to " + std::to_string(kMaxThreadsPerProcess) +
                         " hardware threads per process"};

    const std::string setting = engagingSetting(request);
    // --map-by slot, or no policy (whatever MapPolicy calls "not given").
    const bool defaultPolicy = request.map.by == MapBy::Slot || request.map.by == MapPolicy{}.by;
    if (!defaultPolicy) {
        const std::string policy = "--map-by " + lowerWord(mapByWord(request.map.by));
        if (ps.loopNodesFirst)
            return UserError{setting + " cannot be combined with " + policy + ": " + setting +
                             " is ParaStation's round robin (one process per node per pass) and "
                             "decides the placement itself. Drop " +
                             policy.substr(0, policy.find(' ')) + ", or " +
                             withdraw(settingName(setting)) + " to place with mpirun's policy."};
        return UserError{setting + " cannot be combined with " + policy +
                         ": ParaStation placement fills each node in turn (round robin with "
                         "--loop-nodes-first) and decides the placement itself. Drop " +
                         policy.substr(0, policy.find(' ')) +
                         " (use --loop-nodes-first for "
                         "round robin), or " +
                         withdraw(settingName(setting)) + " to place with mpirun's policy."};
    }
    MapPolicy plain; // the policy without modifiers other than (NO)OVERSUBSCRIBE
    plain.by = request.map.by;
    plain.oversubscribe = request.map.oversubscribe;
    if (request.map != plain)
        return UserError{"--map-by modifiers other than :OVERSUBSCRIBE and :NOOVERSUBSCRIBE "
                         "cannot be combined with " +
                         setting +
                         ": ParaStation placement decides the placement itself. Drop "
                         "the modifiers, or " +
                         withdraw(settingName(setting)) + " to place with mpirun's policy."};
    if (!request.apps.empty())
        return UserError{"several application contexts (MPMD) cannot be combined with " + setting +
                         ": ParaStation placement places one application. Run one "
                         "application, or " +
                         withdraw(settingName(setting)) + " to place with mpirun's policies."};
    if (request.rank)
        return UserError{"--rank-by " + lowerWord(rankByWord(*request.rank)) +
                         " cannot be combined with " + setting +
                         ": ParaStation placement numbers the ranks in placement order. Drop "
                         "--rank-by, or " +
                         withdraw(settingName(setting)) + " to place with mpirun's policies."};
    if (request.bind && request.bind->to != BindTo::None)
        return UserError{"--bind-to " +
                         (request.bind->to == BindTo::Default
                              ? std::string("qualifiers")
                              : lowerWord(bindToWord(request.bind->to))) +
                         " cannot be combined with " + setting +
                         ": ParaStation placement pins each process to its CPU-slots itself "
                         "(" +
                         ps.sources.threadsPerProcess +
                         " slots per process, physical "
                         "cores first). Drop --bind-to to keep that pinning, use --bind-to none "
                         "(or set __PSI_NO_PINPROC) to run unpinned, or " +
                         withdraw(settingName(setting)) + " to place with mpirun's policies."};
    if (request.map.oversubscribe == true && !request.overbook)
        return UserError{"--map-by :OVERSUBSCRIBE cannot be combined with " + setting +
                         ": ParaStation placement runs more processes than CPUs only with "
                         "--overbook (PSI_OVERBOOK). Use --overbook instead of :OVERSUBSCRIBE."};
    if (request.map.oversubscribe == false && request.overbook)
        return UserError{ps.sources.overbook +
                         " oversubscribes when needed, but --map-by says NOOVERSUBSCRIBE: drop "
                         "one of them."};
    return std::nullopt;
}

UserError hostsNotAllocated(const std::vector<std::string> &names, const std::string &source) {
    return UserError{"Some of the requested hosts are not included in the current allocation.\n"
                     "The requested hosts were:\n  " +
                     listedNames(names) +
                     "\n\nVerify that you have mapped the allocated resources properly using "
                     "the " +
                     source + " specification."};
}

// The allocation's nodes named by the PSI_* pool, in first-mention order.
Expected<std::vector<NodeSlots>> applyPool(const std::vector<NodeSlots> &all, const NodePool &pool,
                                           bool overbook) {
    std::vector<std::int64_t> mentions(all.size(), 0);
    std::vector<std::uint32_t> order;
    const auto mention = [&](std::uint32_t index) {
        if (mentions[index]++ == 0)
            order.push_back(index);
    };
    if (pool.kind == NodePool::Kind::Nodes) {
        for (std::uint32_t index : pool.indices) {
            if (index >= all.size())
                return UserError{"PSI_NODES: node index " + std::to_string(index) +
                                 " is out of range: the allocation has " +
                                 std::to_string(all.size()) + " nodes (indices 0 to " +
                                 std::to_string(all.size() - 1) + ")"};
            mention(index);
        }
    } else {
        std::unordered_map<std::string_view, std::uint32_t> byName;
        byName.reserve(all.size());
        for (std::uint32_t i = 0; i < all.size(); ++i)
            byName.emplace(all[i].name, i);
        std::vector<std::string> missing;
        for (const std::string &name : pool.names) {
            const auto found = byName.find(name);
            if (found == byName.end())
                missing.push_back(name);
            else
                mention(found->second);
        }
        if (!missing.empty())
            return hostsNotAllocated(missing, pool.describe());
    }

    std::vector<NodeSlots> nodes;
    nodes.reserve(order.size());
    for (std::uint32_t index : order) {
        NodeSlots node = all[index];
        if (pool.kind == NodePool::Kind::Hostfile) {
            const std::int64_t listed = mentions[index];
            if (listed > node.cpus && !overbook)
                return UserError{pool.describe() + " lists " + std::string(node.name) + " " +
                                 std::to_string(listed) + " times, but Slurm allocated only " +
                                 std::to_string(node.cpus) + " CPUs there.\nList it at most " +
                                 std::to_string(node.cpus) +
                                 " times, or set PSI_OVERBOOK (--overbook) to run more "
                                 "processes than CPUs."};
            node.slots = static_cast<int>(std::min<std::int64_t>(listed, kMaxRanks));
        }
        nodes.push_back(node);
    }
    return nodes;
}

// Step 1: the node pool, each node's slots counting hardware threads.
Expected<std::vector<NodeSlots>> poolNodes(const Allocation &allocation,
                                           const PlanRequest &request) {
    if (request.host || request.hostfile)
        return detail::filterNodes(allocation, request, detail::HostCounts::Pool, request.overbook);
    // No filter: the allocation's nodes, checked, in its order.
    auto all = detail::filterNodes(allocation, PlanRequest{}, detail::HostCounts::Pool);
    if (!all || !request.parastation.pool)
        return all;
    return applyPool(all.value(), *request.parastation.pool, request.overbook);
}

// Step 3: process slots of `threads` hardware threads each.
Expected<std::vector<NodeSlots>> processSlots(const std::vector<NodeSlots> &nodes, int threads,
                                              const std::string &source) {
    std::vector<NodeSlots> result;
    result.reserve(nodes.size());
    int most = 0;
    for (NodeSlots node : nodes) {
        most = std::max(most, node.slots);
        node.slots /= threads;
        if (node.slots > 0)
            result.push_back(node);
    }
    if (result.empty())
        return UserError{source + "=" + std::to_string(threads) + ": no selected node has " +
                         std::to_string(threads) +
                         " hardware threads for one process (the most on one node is " +
                         std::to_string(most) + ").\nLower " + source +
                         ": a process takes all its hardware threads on one node."};
    return result;
}

UserError notEnoughCpus(int np, std::int64_t room, const PlanRequest &request) {
    const ParaStationRequest &ps = request.parastation;
    const std::string tpp = ps.sources.threadsPerProcess + "=" + std::to_string(ps.threads());
    const std::string have = ps.threads() == 1
                                 ? "the selected nodes have " + std::to_string(room) + " slots"
                                 : "with " + tpp + " (" + std::to_string(ps.threads()) +
                                       " hardware threads per process) the selected nodes "
                                       "have room for " +
                                       std::to_string(room) + " procs";
    return UserError{"There are not enough slots available in the system to satisfy the " +
                     std::to_string(np) + " slots that were requested by the application: " + have +
                     ".\nEither request fewer procs for your application, " +
                     (ps.threads() == 1 ? "" : "lower " + ps.sources.threadsPerProcess + ", ") +
                     "or use --overbook (PSI_OVERBOOK) to run more procs than CPUs."};
}

// --overbook --loop-nodes-first past the slots: rank after rank round the
// node list, a node leaving once it holds its max_slots. The caller checked
// that the max_slots leave room for np.
RankNodes overbookCyclic(const std::vector<NodeSlots> &nodes, int np) {
    RankNodes ranks;
    ranks.reserve(static_cast<std::size_t>(np));
    std::vector<std::int64_t> counts(nodes.size(), 0);
    std::vector<std::uint32_t> active(nodes.size());
    for (std::uint32_t i = 0; i < nodes.size(); ++i)
        active[i] = i;
    std::vector<std::uint32_t> next;
    while (ranks.size() < static_cast<std::size_t>(np) && !active.empty()) {
        next.clear();
        for (std::uint32_t node : active) {
            if (ranks.size() == static_cast<std::size_t>(np))
                break;
            ranks.push_back(node);
            if (!nodes[node].maxSlots || ++counts[node] < *nodes[node].maxSlots)
                next.push_back(node);
        }
        active.swap(next);
    }
    return ranks;
}

LaunchPlan assemble(const std::vector<NodeSlots> &nodes, const RankNodes &rankNodes,
                    int threadsPerProcess, std::vector<std::uint32_t> &allocOfPlanNode) {
    std::vector<std::int64_t> counts(nodes.size(), 0);
    for (std::uint32_t node : rankNodes)
        ++counts[node];
    LaunchPlan plan;
    std::vector<std::uint32_t> planIndex(nodes.size(), 0);
    for (std::size_t i = 0; i < nodes.size(); ++i) {
        if (counts[i] == 0)
            continue;
        planIndex[i] = static_cast<std::uint32_t>(plan.nodes.size());
        allocOfPlanNode.push_back(nodes[i].allocIndex);
        plan.nodes.push_back(
            PlannedNode{std::string(nodes[i].name), nodes[i].slots, nodes[i].maxSlots});
        // nodes[i].slots counts processes; the node's CPUs hold cpus / tpp.
        const std::int64_t room = std::min(nodes[i].slots, nodes[i].cpus / threadsPerProcess);
        plan.oversubscribed = plan.oversubscribed || counts[i] > room;
    }
    plan.ranks.reserve(rankNodes.size());
    for (std::uint32_t node : rankNodes)
        plan.ranks.push_back(RankPlacement{planIndex[node], 0, 0});
    assignLocalRanks(plan);
    return plan;
}

// Step 6: each process pinned to its CPU-slots (cpu_slots.hpp), on the
// nodes whose hardware the allocation describes.
Expected<LaunchPlan> pin(LaunchPlan plan, const Allocation &allocation,
                         const std::vector<std::uint32_t> &allocOfPlanNode,
                         const PlanRequest &request) {
    std::vector<const NodeModel *> models;
    models.reserve(allocOfPlanNode.size());
    for (std::uint32_t index : allocOfPlanNode)
        models.push_back(allocation.nodes[index].model.get());
    detail::SlotPinning pinning;
    pinning.threadsPerProcess = request.parastation.threads();
    pinning.cpuMap = request.parastation.cpuMap;
    pinning.overbook = request.overbook;
    // A user's map names CPUs: each must be the step's. The default order
    // binds within what the step holds on each node.
    plan.bindingRequest = pinning.cpuMap.empty() ? BindingRequest::Default : BindingRequest::Cpus;
    plan.bindMemory = request.parastation.bindMemory;
    return detail::pinToCpuSlots(std::move(plan), models, pinning);
}

} // namespace

Expected<LaunchPlan> makeParaStationPlan(const Allocation &allocation, const PlanRequest &request) {
    if (auto error = checkRequest(request))
        return *error;
    const ParaStationRequest &ps = request.parastation;

    auto pool = poolNodes(allocation, request);
    if (!pool)
        return pool.error();
    std::vector<NodeSlots> nodes = std::move(pool.value());
    if (ps.nodesSort) {
        if (auto error = detail::sortNodes(nodes, *ps.nodesSort, ps.figures, ps.sources.nodesSort))
            return *error;
    }
    auto slots = processSlots(nodes, ps.threads(), ps.sources.threadsPerProcess);
    if (!slots)
        return slots.error();
    nodes = std::move(slots.value());

    const std::int64_t total = detail::totalSlots(nodes);
    if (!request.np && total > kMaxRanks)
        return UserError{"too many processes: the selected nodes have " + std::to_string(total) +
                         " slots, stepmap places at most " + std::to_string(kMaxRanks) +
                         "; give -n"};
    const int np = request.np ? *request.np : static_cast<int>(total);

    Expected<RankNodes> ranks = RankNodes{};
    if (np <= total) {
        // Within the CPUs; neither mapper can fail here.
        ranks =
            ps.loopNodesFirst ? detail::mapByNode(nodes, np, false) : detail::fillSlots(nodes, np);
    } else if (!request.overbook) {
        return notEnoughCpus(np, total, request);
    } else if (ps.loopNodesFirst) {
        const std::int64_t capacity = detail::oversubscribedCapacity(nodes, np);
        if (capacity < np)
            return detail::notEnoughMaxSlots(np, capacity);
        ranks = overbookCyclic(nodes, np);
    } else {
        ranks = detail::overbookEvenly(nodes, np, ps.sources.overbook);
    }
    if (!ranks)
        return ranks.error();
    std::vector<std::uint32_t> allocOfPlanNode;
    LaunchPlan plan = assemble(nodes, ranks.value(), ps.threads(), allocOfPlanNode);
    if (!parastationPins(request))
        return plan;
    return pin(std::move(plan), allocation, allocOfPlanNode, request);
}

void describeParaStationMapping(JobMapHeader &header, const PlanRequest &request) {
    if (parastationPins(request))
        header.bindingPolicy =
            request.parastation.cpuMap.empty() ? "CPU-SLOT:CORES-FIRST" : "CPU-SLOT:__PSI_CPUMAP";
    if (!request.parastation.loopNodesFirst)
        return;
    header.mappingPolicy = request.overbook ? "BYNODE:OVERBOOK" : "BYNODE:NOOVERSUBSCRIBE";
    header.rankingPolicy = "NODE";
}

} // namespace stepmap
