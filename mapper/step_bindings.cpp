#include "step_bindings.hpp"

#include <algorithm>
#include <map>

#include "node_model.hpp"

namespace stepmap {

namespace {

std::string listOf(const std::vector<std::uint32_t> &ids) {
    return ids.empty() ? "none" : formatIdList(ids);
}

} // namespace

Expected<ResolvedBindings> resolveBindingsOnNode(LaunchPlan &plan, std::uint32_t node,
                                                 const std::vector<std::uint32_t> &stepCpus) {
    ResolvedBindings result;
    // The narrowed sets, shared by ranks with the same planned set.
    std::map<std::uint32_t, std::uint32_t> replaced;
    for (std::uint32_t r = 0; r < plan.ranks.size(); ++r) {
        RankPlacement &rank = plan.ranks[r];
        if (rank.node != node || rank.binding == kUnbound)
            continue;
        if (auto done = replaced.find(rank.binding); done != replaced.end()) {
            if (done->second == kUnbound)
                ++result.unbound;
            else if (done->second != rank.binding)
                ++result.narrowed;
            rank.binding = done->second;
            continue;
        }
        const CpuBinding &planned = plan.bindings[rank.binding];
        CpuBinding inside;
        for (std::size_t i = 0; i < planned.os.size(); ++i)
            if (std::binary_search(stepCpus.begin(), stepCpus.end(), planned.os[i])) {
                inside.os.push_back(planned.os[i]);
                if (i < planned.logical.size())
                    inside.logical.push_back(planned.logical[i]);
            }
        const std::uint32_t original = rank.binding;
        if (inside.os.size() == planned.os.size()) {
            replaced[original] = original;
            continue;
        }
        const std::string where = "rank " + std::to_string(r) + " on " + plan.nodes[node].name;
        const std::string cpus = " is bound to CPUs " + listOf(planned.os) +
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
            replaced[original] = kUnbound;
            rank.binding = kUnbound;
            ++result.unbound;
            continue;
        }
        plan.bindings.push_back(std::move(inside));
        rank.binding = static_cast<std::uint32_t>(plan.bindings.size() - 1);
        replaced[original] = rank.binding;
        ++result.narrowed;
    }
    return result;
}

} // namespace stepmap
