// Placing processes on a node order computed from slot counts alone
// (rank_mappers.hpp), binding them one by one.

#include "placement/placement.hpp"

#include <algorithm>

#include "placement/placement_messages.hpp"

namespace stepmap::detail {

std::vector<NodeSlots> Engine::slotView(const std::vector<std::uint32_t> &list) const {
    std::vector<NodeSlots> slots;
    slots.reserve(list.size());
    for (std::uint32_t index : list) {
        const NodeState &node = nodes_[index];
        std::optional<int> maxSlots;
        if (node.slotsMax != 0)
            maxSlots = std::max(0, node.slotsMax - node.slotsInuse);
        const int free = std::max(node.slotsAvailable, 0);
        slots.push_back(NodeSlots{index, node.name, node.cpus, free, free, maxSlots});
    }
    return slots;
}

std::optional<UserError> Engine::placeInOrder(std::uint32_t app,
                                              const std::vector<NodeSlots> &slots,
                                              const std::vector<std::uint32_t> &order,
                                              MapOptions &options) {
    std::vector<std::uint32_t> nodeOfProc;
    nodeOfProc.reserve(order.size());
    for (std::uint32_t position : order)
        nodeOfProc.push_back(slots[position].allocIndex);
    return placeSequence(app, nodeOfProc, options);
}

// Procs on the given nodes in the given order, bound one by one. A node
// given more procs than it has free CPUs (within its slots) runs its procs
// unbound unless the binding was asked for, as PRRTE decides per node.
std::optional<UserError> Engine::placeSequence(std::uint32_t app,
                                               const std::vector<std::uint32_t> &nodeOfProc,
                                               MapOptions &options) {
    const BindTo savebind = options.bind;
    std::vector<std::uint32_t> count;
    std::vector<bool> unbound;
    if (options.bind != BindTo::None && !jobBinding.given) {
        count.assign(nodes_.size(), 0);
        for (std::uint32_t index : nodeOfProc)
            ++count[index];
        unbound.assign(nodes_.size(), false);
        for (std::uint32_t index = 0; index < nodes_.size(); ++index) {
            if (count[index] == 0 || nodes_[index].model == nullptr)
                continue;
            computeJobCpuset(index, options);
            if (overloadedWithinSlots(index, count[index], count[index], options)) {
                unbound[index] = true;
                jobBinding = BindingWord{BindTo::None};
            }
        }
    }
    for (std::uint32_t index : nodeOfProc) {
        options.bind = !unbound.empty() && unbound[index] ? BindTo::None : savebind;
        options.nprocs = 1;
        if (options.bind != BindTo::None)
            computeJobCpuset(index, options);
        if (!checkAvail(index, nullptr, kNoIndex, options)) {
            // Its CPUs are all taken: bind it nowhere if allowed to.
            if (options.bind == BindTo::None || !jobBinding.ifSupported) {
                options.bind = savebind;
                return noFreeCpu(nodes_[index].name, savebind);
            }
            options.bind = BindTo::None;
            checkAvail(index, nullptr, kNoIndex, options);
        }
        if (auto error = setupProc(app, index, kNoIndex, options)) {
            options.bind = savebind;
            return error;
        }
        if (auto full = checkOversubscribed(index, options); !full) {
            options.bind = savebind;
            return full.error();
        }
    }
    options.bind = savebind;
    return std::nullopt;
}

} // namespace stepmap::detail
