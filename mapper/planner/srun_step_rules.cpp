#include "planner/srun_step_rules.hpp"

#include <cstdint>
#include <functional>
#include <set>
#include <string_view>

namespace stepmap {

PlanRequest keepExclusionsOfGrantedNodes(PlanRequest request, const Allocation &granted) {
    std::set<std::string, std::less<>> grantedNames;
    for (const AllocatedNode &node : granted.nodes)
        grantedNames.insert(node.name);
    for (std::optional<HostSpec> *spec : {&request.host, &request.hostfile}) {
        if (!*spec || !(*spec)->exclude)
            continue;
        auto &entries = (*spec)->entries;
        std::erase_if(entries, [&](const HostEntry &e) { return !grantedNames.count(e.name); });
        if (entries.empty())
            spec->reset();
    }
    return request;
}

Expected<Allocation> divideSlotsByCpusPerTask(Allocation allocation, const PlanRequest &request,
                                              const std::optional<CpusPerTask> &cpusPerTask) {
    if (request.parastation.threadsPerProcess || request.map.pe || !cpusPerTask)
        return allocation;
    auto n = parseProcessCount(cpusPerTask->value);
    if (!n)
        return UserError{cpusPerTask->named + ": " + n.error().message};
    return slotsForCpusPerTask(allocation, n.value(), cpusPerTask->named);
}

Expected<void> checkTasksPerNode(const LaunchPlan &plan,
                                 const std::optional<WrittenSetting> &tasksPerNode) {
    if (!tasksPerNode)
        return {};
    for (std::uint32_t n = 0; n < plan.nodes.size(); ++n) {
        const std::size_t here = plan.ranksOn(n).size();
        if (std::to_string(here) != tasksPerNode->value)
            return UserError{tasksPerNode->source + " " + tasksPerNode->value +
                             " disagrees with the plan, which puts " + std::to_string(here) +
                             " ranks on " + plan.nodes[n].name + "; drop " + tasksPerNode->source +
                             " or change the placement options"};
    }
    return {};
}

} // namespace stepmap
