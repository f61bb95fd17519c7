// --map-by rankfile: each rank on the host its line names, bound to its
// slot= CPUs.

#include "placement/placement.hpp"

#include <algorithm>
#include <unordered_map>

#include "base/quote.hpp"
#include "hosts/host_names.hpp"
#include "placement/cpu_list.hpp"

namespace stepmap::detail {

// A rank's slot=CPUS: bound to exactly those CPUs, which leave the free
// set; `rank` starts the messages ("rankfile F: rank 3").
std::optional<UserError> Engine::bindToSlots(Proc &proc, const std::string &slots,
                                             const std::string &rank, const MapOptions &options) {
    NodeState &node = nodes_[proc.node];
    if (node.model == nullptr)
        return UserError{rank + " binds to slot=" + escaped(slots) + ", but the hardware of node " +
                         std::string(node.name) + " is unknown"};
    auto cpus = resolveSlotList(slots, *node.model, options.useHwthreads);
    if (!cpus)
        return UserError{rank + ": " + cpus.error().message};
    PuBits bits(node.model->puCount());
    for (std::uint32_t pu : cpus->pus)
        bits.set(pu);
    if (!cpus->notHeld.empty() || !bits.any())
        return UserError{rank + " slot=" + escaped(slots) +
                         " names CPUs the job does not hold on " + std::string(node.name) +
                         " (it holds " + formatIdList(node.model->logicalOf(node.jobcache.bits())) +
                         ")"};
    if (!options.overload && !bits.isSubsetOf(node.available)) {
        PuBits taken = bits;
        taken.andNot(node.available);
        return UserError{rank + " slot=" + escaped(slots) + " on " + std::string(node.name) +
                         " overlaps CPUs already given to another rank (" +
                         formatIdList(node.model->logicalOf(taken.bits())) +
                         ").\nGive each rank CPUs of its own, or add :overload-allowed "
                         "to --bind-to."};
    }
    proc.binding = internBits(*node.model, bits);
    node.available.andNot(bits);
    return std::nullopt;
}

std::optional<UserError> Engine::mapRankfile(std::uint32_t app, std::uint32_t np,
                                             MapOptions &options) {
    const Rankfile &file = *options.rankfile;
    std::uint32_t numSlots = 0;
    auto list = targetNodes(numSlots, true);
    if (!list)
        return list.error();
    const std::vector<std::uint32_t> order = list.value();
    NodeList nodes(order, nodes_.size());
    std::unordered_map<std::string_view, std::uint32_t> byName;
    for (std::uint32_t index : order)
        byName.emplace(nodes_[index].name, index);
    if (np == 0)
        np = static_cast<std::uint32_t>(file.entries.size());
    const std::string where = "rankfile " + escaped(file.fileName, kShownPathBytes);
    for (std::uint32_t k = 0; k < np; ++k) {
        const std::uint32_t wanted = options.rankfileGlobal ? options.startRank + k : k;
        const auto it = std::lower_bound(
            file.entries.begin(), file.entries.end(), wanted,
            [](const RankfileEntry &entry, std::uint32_t rank) { return entry.rank < rank; });
        if (it == file.entries.end() || it->rank != wanted)
            return UserError{where + " has no line for rank " + std::to_string(wanted) +
                             ": with --map-by rankfile every rank needs one (rank " +
                             std::to_string(wanted) + "=HOST slot=CPUS)"};
        std::optional<std::uint32_t> found;
        if (const auto relative = relativeNodeIndex(it->host)) {
            if (*relative >= order.size())
                return UserError{where + ": rank " + std::to_string(wanted) + " names +n" +
                                 std::to_string(*relative) + ", but the job has " +
                                 std::to_string(order.size()) + " nodes (+n0 to +n" +
                                 std::to_string(order.size() - 1) + ")"};
            found = order[*relative];
        } else if (const auto named = byName.find(it->host); named != byName.end()) {
            found = named->second;
        }
        if (!found)
            return UserError{where + ": rank " + std::to_string(wanted) + " is assigned to host " +
                             escaped(it->host) +
                             ", which is not among the job's nodes (after --host and "
                             "--hostfile).\nAssign ranks to allocated nodes only."};
        const std::uint32_t index = *found;
        NodeState &node = nodes_[index];
        computeJobCpuset(index, options);
        options.nprocs = 1;
        if (!checkAvail(index, &nodes, kNoIndex, options))
            return UserError{where + ": rank " + std::to_string(wanted) + " goes to " +
                             escaped(it->host) + ", which has no free slot left (" +
                             std::to_string(node.slots) +
                             " slots).\nMove ranks to other nodes, or add --map-by "
                             ":OVERSUBSCRIBE."};
        if (auto error = setupProc(app, index, kNoIndex, options))
            return error;
        if (auto full = checkOversubscribed(index, options); !full)
            return full.error();
        Proc &proc = procs_.back();
        proc.rank = options.startRank + k;
        if (!it->slots.empty() && (jobBinding.policy != BindTo::None || options.overload))
            if (auto error = bindToSlots(proc, it->slots,
                                         where + ": rank " + std::to_string(wanted), options))
                return error;
    }
    return std::nullopt;
}

} // namespace stepmap::detail
