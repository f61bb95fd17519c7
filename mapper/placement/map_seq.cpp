// --map-by seq: rank i on the i-th host of the sequence (a file, or the
// hosts of --host/--hostfile), bound to the CPUs a line names.

#include "placement/placement.hpp"

#include <algorithm>
#include <unordered_map>

#include "base/quote.hpp"
#include "hosts/host_names.hpp"
#include "placement/cpu_list.hpp"

namespace stepmap::detail {

std::optional<UserError> Engine::mapSeq(std::uint32_t app, std::uint32_t np, MapOptions &options) {
    const std::vector<SequenceEntry> &entries = *options.sequence;
    std::size_t cursor = options.sequenceShared ? sequenceCursor_ : 0;
    std::unordered_map<std::string_view, std::uint32_t> byName;
    for (std::uint32_t i = 0; i < nodes_.size(); ++i)
        byName.emplace(nodes_[i].name, i);
    if (np == 0)
        np = static_cast<std::uint32_t>(entries.size() - std::min(entries.size(), cursor));
    const BindTo savebind = options.bind;
    for (std::uint32_t n = 0; n < np;) {
        if (cursor >= entries.size())
            return UserError{"--map-by seq: application context " + std::to_string(app) +
                             " needs " + std::to_string(np) +
                             " processes, but the sequence has only " + std::to_string(n) +
                             " usable host lines left for it (one per rank).\nList one host per "
                             "rank, or request fewer processes."};
        const SequenceEntry &entry = entries[cursor];
        std::optional<std::uint32_t> found;
        if (const auto relative = relativeNodeIndex(entry.host)) {
            if (*relative < list_.size())
                found = list_[*relative].allocIndex;
        } else if (const auto named = byName.find(entry.host); named != byName.end()) {
            found = named->second;
        }
        if (!found)
            return UserError{"--map-by seq: host " + quoted(entry.host) + " (line " +
                             std::to_string(cursor + 1) +
                             " of the sequence) is not in the allocation.\nList only allocated "
                             "nodes."};
        const std::uint32_t index = *found;
        NodeState &node = nodes_[index];
        ++cursor;
        computeJobCpuset(index, options);
        options.nprocs = 1;
        const bool ownCpus = !entry.cpus.empty();
        if (ownCpus)
            options.bind = BindTo::None;
        if (!checkAvail(index, nullptr, kNoIndex, options)) {
            options.bind = savebind;
            continue; // this line's node is full: try the next line
        }
        if (auto error = setupProc(app, index, kNoIndex, options))
            return error;
        options.bind = savebind;
        Proc &proc = procs_.back();
        if (ownCpus) {
            if (node.model == nullptr)
                return UserError{"--map-by seq: line " + std::to_string(cursor) +
                                 " binds to CPUs " + escaped(entry.cpus) +
                                 ", but the hardware of node " + std::string(node.name) +
                                 " is unknown"};
            auto cpus = resolveSlotList(entry.cpus, *node.model, options.useHwthreads);
            if (!cpus)
                return UserError{"--map-by seq: line " + std::to_string(cursor) + ": " +
                                 cpus.error().message};
            PuBits bits(node.model->puCount());
            for (std::uint32_t pu : cpus->pus)
                bits.set(pu);
            if (!cpus->notHeld.empty() || (!options.overload && !bits.isSubsetOf(node.available)))
                return UserError{"--map-by seq: line " + std::to_string(cursor) + " binds rank " +
                                 std::to_string(options.startRank + n) + " to CPUs " +
                                 escaped(entry.cpus) + " of node " + std::string(node.name) +
                                 ", but they are not all free for the job (free: " +
                                 formatIdList(node.model->logicalOf(node.available.bits())) +
                                 ").\nGive each rank CPUs of its own, or add :overload-allowed "
                                 "to --bind-to."};
            proc.binding = internBits(*node.model, bits);
            node.available.andNot(bits);
        }
        proc.rank = options.startRank + n;
        if (auto full = checkOversubscribed(index, options); !full)
            return full.error();
        ++n;
    }
    if (options.sequenceShared)
        sequenceCursor_ = cursor;
    return std::nullopt;
}

} // namespace stepmap::detail
