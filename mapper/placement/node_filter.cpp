#include "placement/node_filter.hpp"

#include <algorithm>
#include <string>
#include <unordered_map>

#include "base/quote.hpp"
#include "hosts/host_names.hpp"
#include "hosts/hostlist.hpp"

namespace stepmap::detail {

namespace {

using NameIndex = std::unordered_map<std::string_view, std::uint32_t>;

constexpr std::int64_t kAbsent = -1;

Expected<NameIndex> indexAllocation(const Allocation &allocation) {
    if (allocation.nodes.empty())
        return UserError{"the Slurm allocation has no nodes"};
    if (allocation.nodes.size() > kMaxHostlistNames)
        return UserError{"the Slurm allocation has more than " + std::to_string(kMaxHostlistNames) +
                         " nodes"};
    NameIndex index;
    index.reserve(allocation.nodes.size());
    for (std::size_t i = 0; i < allocation.nodes.size(); ++i) {
        const AllocatedNode &node = allocation.nodes[i];
        if (!isValidHostName(node.name))
            return UserError{"the Slurm allocation lists an invalid node name " +
                             quoted(node.name)};
        if (node.slots < 1)
            return UserError{"the Slurm allocation gives node " + node.name + " " +
                             std::to_string(node.slots) + " CPUs (expected at least 1)"};
        if (!index.emplace(node.name, static_cast<std::uint32_t>(i)).second)
            return UserError{"the Slurm allocation lists node " + node.name + " twice"};
    }
    return index;
}

// A filter entry resolved to an allocation node.
struct Resolved {
    std::uint32_t node = 0;
    HostEntry entry;
};

// Resolves a filter's entries, merging those that land on the same node;
// names not in the allocation go to `missing`.
Expected<std::vector<Resolved>> resolve(const HostSpec &spec, const NameIndex &index,
                                        std::size_t nodeCount, std::string_view option,
                                        std::vector<std::string> &missing) {
    std::vector<Resolved> resolved;
    std::vector<std::int64_t> position(nodeCount, kAbsent);
    for (const HostEntry &entry : spec.entries) {
        std::uint32_t node = 0;
        if (const auto relative = relativeNodeIndex(entry.name)) {
            if (*relative >= nodeCount)
                return UserError{std::string(option) + ": relative host " + quoted(entry.name) +
                                 " is out of range: the allocation has " +
                                 std::to_string(nodeCount) + " nodes (+n0 to +n" +
                                 std::to_string(nodeCount - 1) + ")"};
            node = static_cast<std::uint32_t>(*relative);
        } else if (const auto found = index.find(entry.name); found != index.end()) {
            node = found->second;
        } else {
            missing.push_back(entry.name);
            continue;
        }
        if (position[node] == kAbsent) {
            position[node] = static_cast<std::int64_t>(resolved.size());
            resolved.push_back(Resolved{node, entry});
            continue;
        }
        HostEntry &earlier = resolved[static_cast<std::size_t>(position[node])].entry;
        auto merged = mergeHostEntries(earlier, entry);
        if (!merged)
            return UserError{std::string(option) + ": " + merged.error().message};
        earlier = std::move(merged.value());
    }
    return resolved;
}

UserError hostsMissing(const std::vector<std::string> &names, std::string_view head,
                       std::string_view tail) {
    return UserError{std::string(head) + "\nThe requested hosts were:\n  " + listedNames(names) +
                     "\n\n" + std::string(tail)};
}

// A node on its way through the filters.
struct Candidate {
    std::uint32_t node = 0;
    std::optional<int> cap;
    std::optional<int> maxSlots;
};

std::optional<int> minCap(std::optional<int> a, std::optional<int> b) {
    if (a && b)
        return std::min(*a, *b);
    return a ? a : b;
}

std::vector<Candidate> withoutNodes(const std::vector<Candidate> &list,
                                    const std::vector<Resolved> &excluded, std::size_t nodeCount) {
    std::vector<bool> drop(nodeCount, false);
    for (const Resolved &resolved : excluded)
        drop[resolved.node] = true;
    std::vector<Candidate> kept;
    kept.reserve(list.size());
    for (const Candidate &candidate : list) {
        if (!drop[candidate.node])
            kept.push_back(candidate);
    }
    return kept;
}

// The allocation after the hostfile: its lines in order with their caps, or
// (no hostfile, or an excluding one) the allocation's nodes in order.
std::vector<Candidate> afterHostfile(const std::optional<HostSpec> &hostfile,
                                     const std::vector<Resolved> &fileNodes,
                                     std::size_t nodeCount) {
    std::vector<Candidate> list;
    if (hostfile && !hostfile->exclude) {
        for (const Resolved &resolved : fileNodes)
            list.push_back(Candidate{resolved.node, resolved.entry.slots, resolved.entry.maxSlots});
        return list;
    }
    list.reserve(nodeCount);
    for (std::uint32_t node = 0; node < nodeCount; ++node)
        list.push_back(Candidate{node, std::nullopt, std::nullopt});
    return withoutNodes(list, fileNodes, nodeCount);
}

// An including --host applied to `list`. Each named node must be in it.
// --host gives the order and each node's count (1 a mention, or :N); a
// hostfile's cap and max_slots still bound it.
Expected<std::vector<Candidate>> afterIncludingHost(const std::vector<Candidate> &list,
                                                    const std::vector<Resolved> &hostNodes,
                                                    std::size_t nodeCount, HostCounts counts) {
    std::vector<std::int64_t> position(nodeCount, kAbsent);
    for (std::size_t i = 0; i < list.size(); ++i)
        position[list[i].node] = static_cast<std::int64_t>(i);
    std::vector<std::string> missing;
    std::vector<Candidate> next;
    for (const Resolved &resolved : hostNodes) {
        if (position[resolved.node] == kAbsent) {
            missing.push_back(resolved.entry.name);
            continue;
        }
        const Candidate &candidate = list[static_cast<std::size_t>(position[resolved.node])];
        const std::optional<int> named =
            counts == HostCounts::Mpirun ? resolved.entry.slots.value_or(1) : resolved.entry.slots;
        next.push_back(Candidate{resolved.node, minCap(candidate.cap, named), candidate.maxSlots});
    }
    if (!missing.empty())
        return hostsMissing(missing,
                            "Some of the hosts requested with --host are not listed in the "
                            "hostfile.",
                            "A node must pass both --host and --hostfile: add it to the hostfile "
                            "or remove it from --host.");
    return next;
}

// Slots from the counts, bounded by max_slots and (HostCounts::Mpirun, or
// Pool without allowAboveCpus) Slurm's CPUs.
Expected<std::vector<NodeSlots>> withSlots(const Allocation &allocation,
                                           const std::vector<Candidate> &list, HostCounts counts,
                                           bool allowAboveCpus) {
    std::vector<NodeSlots> result;
    result.reserve(list.size());
    for (const Candidate &candidate : list) {
        const AllocatedNode &node = allocation.nodes[candidate.node];
        int requested = candidate.cap.value_or(node.slots);
        if (candidate.maxSlots)
            requested = std::min(requested, *candidate.maxSlots);
        int slots = std::min(requested, node.slots);
        if (counts == HostCounts::Pool && requested > node.slots) {
            if (!allowAboveCpus)
                return UserError{"host " + node.name + ": " + std::to_string(requested) +
                                 " slots requested, but Slurm allocated only " +
                                 std::to_string(node.slots) +
                                 " CPUs there.\nTo oversubscribe it, add --overbook; otherwise "
                                 "request at most " +
                                 std::to_string(node.slots) + " slots on " + node.name + "."};
            slots = requested;
        }
        result.push_back(
            NodeSlots{candidate.node, node.name, node.slots, slots, requested, candidate.maxSlots});
    }
    return result;
}

} // namespace

Expected<std::vector<NodeSlots>> filterNodes(const Allocation &allocation,
                                             const PlanRequest &request, HostCounts counts,
                                             bool allowAboveCpus) {
    auto index = indexAllocation(allocation);
    if (!index)
        return index.error();
    const std::size_t nodeCount = allocation.nodes.size();

    std::vector<std::string> missing;
    std::vector<Resolved> fileNodes;
    std::vector<Resolved> hostNodes;
    if (request.hostfile) {
        auto resolved = resolve(*request.hostfile, *index, nodeCount, "--hostfile", missing);
        if (!resolved)
            return resolved.error();
        fileNodes = std::move(resolved.value());
    }
    if (request.host) {
        auto resolved = resolve(*request.host, *index, nodeCount, "--host", missing);
        if (!resolved)
            return resolved.error();
        hostNodes = std::move(resolved.value());
    }
    if (!missing.empty())
        return hostsMissing(missing,
                            "Some of the requested hosts are not included in the current "
                            "allocation.",
                            "Verify that you have mapped the allocated resources properly using "
                            "the --host or --hostfile specification.");

    std::vector<Candidate> list = afterHostfile(request.hostfile, fileNodes, nodeCount);
    if (request.host && request.host->exclude) {
        list = withoutNodes(list, hostNodes, nodeCount);
    } else if (request.host) {
        auto filtered = afterIncludingHost(list, hostNodes, nodeCount, counts);
        if (!filtered)
            return filtered.error();
        list = std::move(filtered.value());
    }
    if (list.empty())
        return UserError{"No nodes are left to run on: the --host and --hostfile filters "
                         "exclude every allocated node."};
    return withSlots(allocation, list, counts, allowAboveCpus);
}

} // namespace stepmap::detail
