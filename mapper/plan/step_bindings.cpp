#include "plan/step_bindings.hpp"

#include <algorithm>
#include <map>

#include "hosts/node_model.hpp"

namespace stepmap {

namespace {

std::string listOf(const std::vector<std::uint32_t> &ids) {
    return ids.empty() ? "none" : formatIdList(ids);
}

} // namespace

Expected<std::optional<CpuBinding>> bindingWithinStep(const LaunchPlan &plan, std::uint32_t rank,
                                                      const std::vector<std::uint32_t> &stepCpus) {
    const CpuBinding *planned = plan.bindingOf(rank);
    if (!planned)
        return std::optional<CpuBinding>{};
    CpuBinding inside;
    for (std::size_t i = 0; i < planned->os.size(); ++i)
        if (std::binary_search(stepCpus.begin(), stepCpus.end(), planned->os[i])) {
            inside.os.push_back(planned->os[i]);
            if (i < planned->logical.size())
                inside.logical.push_back(planned->logical[i]);
        }
    if (inside.os.size() == planned->os.size())
        return std::optional<CpuBinding>(std::move(inside));
    const std::string where =
        "rank " + std::to_string(rank) + " on " + plan.nodes[plan.ranks[rank].node].name;
    const std::string cpus = " is bound to CPUs " + listOf(planned->os) +
                             ", but the step holds only CPUs " + listOf(stepCpus) + " there";
    if (plan.bindingRequest == BindingRequest::Cpus)
        return UserError{where + cpus +
                         "; the requested binding (--bind-to core or hwthread, PE=n, a "
                         "pe-list or rankfile CPUs) needs every one of them. Ask Slurm for "
                         "whole CPUs (e.g. --exclusive, or -c per rank) or bind less "
                         "tightly (--bind-to numa, package or none)"};
    if (inside.os.empty()) {
        if (plan.bindingRequest == BindingRequest::Objects)
            return UserError{where + cpus +
                             "; --bind-to names an object with no CPU in the step. Bind to "
                             "a larger object or none"};
        return std::optional<CpuBinding>{};
    }
    return std::optional<CpuBinding>(std::move(inside));
}

Expected<ResolvedBindings> resolveBindingsOnNode(LaunchPlan &plan, std::uint32_t node,
                                                 const std::vector<std::uint32_t> &stepCpus) {
    ResolvedBindings result;
    // Each planned set is resolved once; ranks sharing it share the result.
    std::map<std::uint32_t, std::uint32_t> replaced;
    for (std::uint32_t r = 0; r < plan.ranks.size(); ++r) {
        RankPlacement &rank = plan.ranks[r];
        if (rank.node != node || rank.binding == kUnbound)
            continue;
        auto done = replaced.find(rank.binding);
        if (done == replaced.end()) {
            auto resolved = bindingWithinStep(plan, r, stepCpus);
            if (!resolved)
                return resolved.error();
            std::uint32_t now = kUnbound;
            if (resolved->has_value() && (*resolved)->os == plan.bindings[rank.binding].os) {
                now = rank.binding;
            } else if (resolved->has_value()) {
                plan.bindings.push_back(std::move(**resolved));
                now = static_cast<std::uint32_t>(plan.bindings.size() - 1);
            }
            done = replaced.emplace(rank.binding, now).first;
        }
        if (done->second == kUnbound)
            ++result.unbound;
        else if (done->second != rank.binding)
            ++result.narrowed;
        rank.binding = done->second;
    }
    return result;
}

} // namespace stepmap
