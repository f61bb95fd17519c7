#include "placement/cpu_slots.hpp"

#include <algorithm>
#include <map>
#include <string>
#include <unordered_map>
#include <utility>

namespace stepmap::detail {

std::vector<std::uint32_t> coresFirstSlots(const NodeModel &model) {
    const std::vector<HwObject> &cores = model.objects(HwLevel::Core);
    std::vector<std::uint32_t> slots;
    slots.reserve(model.puCount());
    std::vector<bool> taken(model.puCount(), false);
    std::uint32_t deepest = 0;
    for (const HwObject &core : cores)
        deepest = std::max(deepest, core.puCount);
    for (std::uint32_t thread = 0; thread < deepest; ++thread) {
        for (const HwObject &core : cores) {
            if (thread >= core.puCount)
                continue;
            const std::uint32_t pu = core.firstPu + thread;
            if (pu < taken.size() && !taken[pu]) {
                taken[pu] = true;
                slots.push_back(pu);
            }
        }
    }
    // PUs in no core (a model without cores) follow in PU order.
    for (std::uint32_t pu = 0; pu < taken.size(); ++pu)
        if (!taken[pu])
            slots.push_back(pu);
    return slots;
}

Expected<std::vector<std::uint32_t>> mappedSlots(const NodeModel &model,
                                                 const std::vector<std::uint32_t> &cpuMap,
                                                 std::string_view node) {
    std::unordered_map<std::uint32_t, std::uint32_t> byOs;
    byOs.reserve(model.puCount());
    std::vector<std::uint32_t> all(model.puCount());
    for (std::uint32_t pu = 0; pu < model.puCount(); ++pu) {
        byOs.emplace(model.puOs(pu), pu);
        all[pu] = pu;
    }
    std::vector<std::uint32_t> slots;
    slots.reserve(cpuMap.size());
    for (std::size_t slot = 0; slot < cpuMap.size(); ++slot) {
        const auto found = byOs.find(cpuMap[slot]);
        if (found == byOs.end())
            return UserError{"__PSI_CPUMAP maps CPU-slot " + std::to_string(slot) + " to CPU " +
                             std::to_string(cpuMap[slot]) + ", which the job does not hold on " +
                             std::string(node) + " (it holds CPUs " +
                             formatIdList(model.osOf(all)) +
                             ").\nList only CPUs of the job on every node, or unset "
                             "__PSI_CPUMAP for the default order (physical cores first)."};
        slots.push_back(found->second);
    }
    return slots;
}

namespace {

// One interned CPU set per distinct (model, first slot) pair: a node's
// processes repeat the same few sets, and nodes alike share them.
class BindingTable {
public:
    explicit BindingTable(std::vector<CpuBinding> &bindings) : bindings_(bindings) {}

    std::uint32_t intern(const NodeModel &model, std::vector<std::uint32_t> pus) {
        std::sort(pus.begin(), pus.end());
        pus.erase(std::unique(pus.begin(), pus.end()), pus.end());
        CpuBinding binding{model.logicalOf(pus), model.osOf(pus)};
        std::string key = formatIdList(binding.logical) + '@' + formatIdList(binding.os);
        const auto [it, inserted] =
            index_.emplace(std::move(key), static_cast<std::uint32_t>(bindings_.size()));
        if (inserted)
            bindings_.push_back(std::move(binding));
        return it->second;
    }

private:
    std::vector<CpuBinding> &bindings_;
    std::unordered_map<std::string, std::uint32_t> index_;
};

} // namespace

Expected<LaunchPlan> pinToCpuSlots(LaunchPlan plan, const std::vector<const NodeModel *> &models,
                                   const SlotPinning &pinning) {
    const auto tpp = static_cast<std::uint64_t>(std::max(1, pinning.threadsPerProcess));
    // The slot order of each distinct model (nodes alike share one).
    std::map<const NodeModel *, std::vector<std::uint32_t>> orders;
    std::map<std::pair<const NodeModel *, std::uint64_t>, std::uint32_t> bySlot;
    BindingTable table(plan.bindings);
    std::vector<std::uint32_t> onNode(plan.nodes.size(), 0);
    for (const RankPlacement &rank : plan.ranks)
        ++onNode[rank.node];

    for (RankPlacement &rank : plan.ranks) {
        const NodeModel *model = rank.node < models.size() ? models[rank.node] : nullptr;
        if (model == nullptr)
            continue;
        auto order = orders.find(model);
        if (order == orders.end()) {
            Expected<std::vector<std::uint32_t>> slots = coresFirstSlots(*model);
            if (!pinning.cpuMap.empty())
                slots = mappedSlots(*model, pinning.cpuMap, plan.nodes[rank.node].name);
            if (!slots)
                return slots.error();
            order = orders.emplace(model, std::move(slots.value())).first;
        }
        const std::vector<std::uint32_t> &slots = order->second;
        if (slots.empty())
            continue;
        if (!pinning.cpuMap.empty() && !pinning.overbook && onNode[rank.node] * tpp > slots.size())
            return UserError{
                "__PSI_CPUMAP lists " + std::to_string(slots.size()) + " CPU-slots, but " +
                plan.nodes[rank.node].name + " runs " + std::to_string(onNode[rank.node]) +
                " processes of " + std::to_string(tpp) + " CPU-slots each.\nList at least " +
                std::to_string(onNode[rank.node] * tpp) + " CPUs, or run fewer processes there."};
        const std::uint64_t first = rank.localRank * tpp % slots.size();
        const auto key = std::make_pair(model, first);
        auto known = bySlot.find(key);
        if (known == bySlot.end()) {
            std::vector<std::uint32_t> pus;
            pus.reserve(static_cast<std::size_t>(std::min<std::uint64_t>(tpp, slots.size())));
            for (std::uint64_t t = 0; t < tpp && t < slots.size(); ++t)
                pus.push_back(slots[(first + t) % slots.size()]);
            known = bySlot.emplace(key, table.intern(*model, std::move(pus))).first;
        }
        rank.binding = known->second;
    }
    return plan;
}

} // namespace stepmap::detail
