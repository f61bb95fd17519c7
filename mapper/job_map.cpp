#include "job_map.hpp"

#include <cstdint>

namespace stepmap {

JobMapHeader jobMapHeader(const PlanRequest &request, std::string jobId) {
    JobMapHeader header;
    header.jobId = std::move(jobId);
    const bool byNode = request.map.by == MapBy::Node;
    header.mappingPolicy = byNode ? "BYNODE" : "BYSLOT";
    if (request.overbook)
        header.mappingPolicy += ":OVERBOOK";
    else if (request.map.oversubscribe.value_or(false))
        header.mappingPolicy += ":OVERSUBSCRIBE";
    else
        header.mappingPolicy += ":NOOVERSUBSCRIBE";
    header.rankingPolicy = byNode ? "NODE" : "SLOT";
    header.bindingPolicy = "NONE";
    return header;
}

std::string formatJobMap(const LaunchPlan &plan, const JobMapHeader &header) {
    // Ranks grouped by node (a counting sort keeps them ascending).
    std::vector<std::uint32_t> start(plan.nodes.size() + 1, 0);
    for (const RankPlacement &rank : plan.ranks)
        ++start[rank.node + 1];
    for (std::size_t i = 1; i < start.size(); ++i)
        start[i] += start[i - 1];
    std::vector<std::uint32_t> byNode(plan.ranks.size());
    std::vector<std::uint32_t> fill(start.begin(), start.end() - 1);
    for (std::size_t rank = 0; rank < plan.ranks.size(); ++rank)
        byNode[fill[plan.ranks[rank].node]++] = static_cast<std::uint32_t>(rank);

    std::int64_t slots = 0;
    for (const PlannedNode &node : plan.nodes)
        slots += node.slots;

    std::string out;
    out += "\n========================   JOB MAP   ========================\n";
    out += "Data for JOB " + header.jobId + " offset 0 Total slots allocated " +
           std::to_string(slots) + "\n";
    out += "    Mapping policy: " + header.mappingPolicy +
           "  Ranking policy: " + header.rankingPolicy +
           " Binding policy: " + header.bindingPolicy + "\n";
    out += "    Cpu set: N/A  PPR: N/A  Cpus-per-rank: N/A  Cpu Type: CORE\n\n";

    const std::string processPrefix =
        "        Process jobid: " + header.jobId + " App: 0 Process rank: ";
    for (std::size_t i = 0; i < plan.nodes.size(); ++i) {
        const PlannedNode &node = plan.nodes[i];
        out += "\nData for node: " + node.name + "\tNum slots: " + std::to_string(node.slots) +
               "\tMax slots: " + std::to_string(node.maxSlots.value_or(0)) +
               "\tNum procs: " + std::to_string(start[i + 1] - start[i]) + "\n";
        for (std::uint32_t k = start[i]; k < start[i + 1]; ++k)
            out += processPrefix + std::to_string(byNode[k]) + " Bound: N/A\n";
    }
    return out;
}

std::string formatJobMap(const LaunchPlan &plan) {
    return formatJobMap(plan, JobMapHeader{});
}

} // namespace stepmap
