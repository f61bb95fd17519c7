#include "planner/planner_stages.hpp"

#include <string>

#include "planner/policy_rules.hpp"

namespace stepmap::detail {

namespace {

// Whether a policy needs to see the nodes' hardware.
bool needsTopology(const MapPolicy &map) {
    return levelOf(map.by).has_value() || map.by == MapBy::PeList || map.by == MapBy::Device ||
           (map.by == MapBy::Ppr && map.pprObject != MapBy::Node) || map.pe.value_or(1) > 1;
}

UserError topologyError(const std::string &what, const Allocation &allocation,
                        const std::vector<NodeSlots> &list) {
    std::string unmodeled;
    for (const NodeSlots &entry : list) {
        if (!allocation.nodes[entry.allocIndex].model) {
            unmodeled = entry.name;
            break;
        }
    }
    return UserError{what +
                     " needs the hardware of every node, but stepmap does not know that of "
                     "node " +
                     unmodeled +
                     ".\nMap by slot, node or seq, bind to none, or run where stepmap reads "
                     "the node topology."};
}

// The first --map-by or --bind-to (job's, then each application's) that
// needs the hardware, in its words; empty when none does.
std::string firstHardwarePolicy(const PlanRequest &request, const JobApps &apps) {
    if (needsTopology(request.map))
        return "--map-by " + mapWord(request.map.by);
    if (bindsSomething(request.bind))
        return "--bind-to " + lowerWord(bindToWord(request.bind->to));
    for (const AppPlan &app : apps.apps) {
        if (app.request.map && needsTopology(*app.request.map))
            return "--map-by " + mapWord(app.request.map->by);
        if (bindsSomething(app.request.bind))
            return "--bind-to " + lowerWord(bindToWord(app.request.bind->to));
    }
    return {};
}

} // namespace

Expected<NodeSelection> selectNodes(const Allocation &allocation, const PlanRequest &request,
                                    const JobApps &apps) {
    auto filtered = filterNodes(allocation, request);
    if (!filtered)
        return filtered.error();
    NodeSelection out{std::move(filtered.value())};
    for (const NodeSlots &entry : out.list)
        out.modeled = out.modeled && allocation.nodes[entry.allocIndex].model != nullptr;
    out.coresAreHwthreads = coresAreHwthreads(allocation, out.list);
    if (!out.modeled) {
        const std::string policy = firstHardwarePolicy(request, apps);
        if (!policy.empty())
            return topologyError(policy, allocation, out.list);
    }
    return out;
}

} // namespace stepmap::detail
