#include "plan/job_map.hpp"

#include <algorithm>
#include <cstdint>
#include <map>
#include <unordered_map>

namespace stepmap {

namespace {

// Ranks grouped by node (a counting sort keeps them ascending).
struct ByNode {
    std::vector<std::uint32_t> start;
    std::vector<std::uint32_t> ranks;
};

ByNode groupByNode(const LaunchPlan &plan) {
    ByNode out;
    out.start.assign(plan.nodes.size() + 1, 0);
    for (const RankPlacement &rank : plan.ranks)
        ++out.start[rank.node + 1];
    for (std::size_t i = 1; i < out.start.size(); ++i)
        out.start[i] += out.start[i - 1];
    out.ranks.resize(plan.ranks.size());
    std::vector<std::uint32_t> fill(out.start.begin(), out.start.end() - 1);
    for (std::size_t rank = 0; rank < plan.ranks.size(); ++rank)
        out.ranks[fill[plan.ranks[rank].node]++] = static_cast<std::uint32_t>(rank);
    return out;
}

// The model's local PUs of a binding, ascending (PUs it does not hold
// dropped).
std::vector<std::uint32_t> localPus(const NodeModel &model, const CpuBinding &binding) {
    std::vector<std::uint32_t> pus;
    pus.reserve(binding.logical.size());
    for (std::uint32_t logical : binding.logical) {
        if (const auto pu = model.puFromLogical(logical))
            pus.push_back(*pu);
    }
    return pus;
}

void appendJsonString(std::string &out, std::string_view text) {
    out += '"';
    for (char c : text) {
        if (c == '"' || c == '\\') {
            out += '\\';
            out += c;
        } else if (static_cast<unsigned char>(c) < 0x20) {
            static constexpr char kHex[] = "0123456789abcdef";
            out += "\\u00";
            out += kHex[(c >> 4) & 0xf];
            out += kHex[c & 0xf];
        } else {
            out += c;
        }
    }
    out += '"';
}

} // namespace

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

JobMapHeader reportedJobMapHeader(const PlanReport &report, std::string jobId) {
    JobMapHeader header;
    header.jobId = std::move(jobId);
    header.mappingPolicy = report.mappingPolicy;
    header.rankingPolicy = report.rankingPolicy;
    header.bindingPolicy = report.bindingPolicy;
    header.apps = report.apps;
    header.cpuSet = report.cpuSet;
    header.ppr = report.ppr;
    header.cpusPerRank = report.cpusPerRank;
    header.cpuType = report.cpuType;
    return header;
}

std::string formatPrrteBinding(const NodeModel &model, const CpuBinding &binding, bool hwthreads) {
    const std::vector<std::uint32_t> pus = localPus(model, binding);
    std::string out;
    const auto &packages = model.objects(HwLevel::Package);
    std::size_t next = 0;
    for (const HwObject &package : packages) {
        std::vector<std::uint32_t> sites;
        for (std::uint32_t pu : pus) {
            if (pu < package.firstPu || pu >= package.firstPu + package.puCount)
                continue;
            sites.push_back(
                hwthreads
                    ? model.puLogical(pu)
                    : model.objects(HwLevel::Core)[model.objectOf(HwLevel::Core, pu)].logicalIndex);
        }
        if (sites.empty())
            continue;
        std::sort(sites.begin(), sites.end());
        sites.erase(std::unique(sites.begin(), sites.end()), sites.end());
        if (next++ > 0)
            out += ' ';
        out += "package[" + std::to_string(package.logicalIndex) + "][" +
               (hwthreads ? "hwt:L" : "core:L");
        std::size_t i = 0;
        bool first = true;
        while (i < sites.size()) {
            std::size_t end = i;
            while (end + 1 < sites.size() && sites[end + 1] == sites[end] + 1)
                ++end;
            if (!first)
                out += ',';
            first = false;
            out += std::to_string(sites[i]);
            if (end > i)
                out += '-' + std::to_string(sites[end]);
            i = end + 1;
        }
        out += ']';
    }
    if (out.empty())
        out = "UNBOUND";
    return out;
}

std::string formatBindingMask(const NodeModel &model, const CpuBinding &binding) {
    const std::vector<std::uint32_t> pus = localPus(model, binding);
    std::vector<bool> bound(model.puCount(), false);
    for (std::uint32_t pu : pus)
        bound[pu] = true;
    std::string out;
    const auto &cores = model.objects(HwLevel::Core);
    const auto drawCores = [&](std::uint32_t firstPu, std::uint32_t count) {
        out += '[';
        bool firstCore = true;
        for (const HwObject &core : cores) {
            if (core.firstPu < firstPu || core.firstPu >= firstPu + count)
                continue;
            if (!firstCore)
                out += '/';
            firstCore = false;
            for (std::uint32_t pu = core.firstPu; pu < core.firstPu + core.puCount; ++pu)
                out += bound[pu] ? 'B' : '.';
        }
        out += ']';
    };
    const auto &packages = model.objects(HwLevel::Package);
    if (packages.empty())
        drawCores(0, model.puCount());
    for (const HwObject &package : packages)
        drawCores(package.firstPu, package.puCount);
    return out;
}

std::string formatJobMap(const LaunchPlan &plan, const JobMapHeader &header,
                         const Allocation &allocation, const JobMapOptions &options) {
    const ByNode byNode = groupByNode(plan);
    std::int64_t slots = 0;
    for (const PlannedNode &node : plan.nodes)
        slots += node.slots;

    std::unordered_map<std::string_view, const NodeModel *> models;
    for (const AllocatedNode &node : allocation.nodes) {
        if (node.model)
            models.emplace(node.name, node.model.get());
    }

    std::string out;
    out += "\n========================   JOB MAP   ========================\n";
    out += "Data for JOB " + header.jobId + " offset 0 Total slots allocated " +
           std::to_string(slots) + "\n";
    if (header.apps.empty()) {
        out += "    Mapping policy: " + header.mappingPolicy +
               "  Ranking policy: " + header.rankingPolicy +
               " Binding policy: " + header.bindingPolicy + "\n";
    } else {
        for (std::size_t a = 0; a < header.apps.size(); ++a) {
            const AppPolicyReport &app = header.apps[a];
            out += "    App " + std::to_string(a) + ": Mapper: " + app.mapper +
                   "  Mapping policy: " + app.mappingPolicy +
                   "  Ranking policy: " + app.rankingPolicy +
                   "  Binding policy: " + app.bindingPolicy + "\n";
        }
    }
    out += "    Cpu set: " + header.cpuSet + "  PPR: " + header.ppr +
           "  Cpus-per-rank: " + header.cpusPerRank + "  Cpu Type: " + header.cpuType + "\n\n";

    const std::string processPrefix = "        Process jobid: " + header.jobId + " App: ";
    // Each (binding, node model) pair is written once.
    std::map<std::pair<std::uint32_t, const NodeModel *>, std::string> written;
    for (std::size_t i = 0; i < plan.nodes.size(); ++i) {
        const PlannedNode &node = plan.nodes[i];
        out += "\nData for node: " + node.name + "\tNum slots: " + std::to_string(node.slots) +
               "\tMax slots: " + std::to_string(node.maxSlots.value_or(0)) +
               "\tNum procs: " + std::to_string(byNode.start[i + 1] - byNode.start[i]) + "\n";
        const auto found = models.find(node.name);
        const NodeModel *model = found == models.end() ? nullptr : found->second;
        for (std::uint32_t k = byNode.start[i]; k < byNode.start[i + 1]; ++k) {
            const std::uint32_t rank = byNode.ranks[k];
            const RankPlacement &placement = plan.ranks[rank];
            out += processPrefix + std::to_string(placement.app) +
                   " Process rank: " + std::to_string(rank) + " Bound: ";
            if (placement.binding == kUnbound) {
                out += "N/A";
            } else {
                const CpuBinding &binding = plan.bindings[placement.binding];
                if (model == nullptr || options.bound == BoundStyle::LogicalList) {
                    out += "L" + formatIdList(binding.logical);
                } else {
                    auto [it, inserted] = written.try_emplace({placement.binding, model});
                    if (inserted)
                        it->second = options.bound == BoundStyle::Mask
                                         ? formatBindingMask(*model, binding)
                                         : formatPrrteBinding(*model, binding, options.hwthreads);
                    out += it->second;
                }
            }
            const std::string_view devices = plan.devicesOf(rank);
            if (!devices.empty()) {
                out += " Device: ";
                out += devices;
            }
            out += '\n';
        }
    }
    return out;
}

std::string formatJobMap(const LaunchPlan &plan, const JobMapHeader &header) {
    return formatJobMap(plan, header, Allocation{});
}

std::string formatJobMap(const LaunchPlan &plan) {
    return formatJobMap(plan, JobMapHeader{});
}

std::string formatPlanJson(const LaunchPlan &plan) {
    std::string out = "{\"nodes\":[";
    for (std::size_t i = 0; i < plan.nodes.size(); ++i) {
        const PlannedNode &node = plan.nodes[i];
        if (i > 0)
            out += ',';
        out += "{\"name\":";
        appendJsonString(out, node.name);
        out += ",\"slots\":" + std::to_string(node.slots) + ",\"max_slots\":" +
               (node.maxSlots ? std::to_string(*node.maxSlots) : std::string("null")) + "}";
    }
    out += "],\n\"ranks\":[";
    std::vector<std::string> lists(plan.bindings.size() * 2);
    for (std::size_t b = 0; b < plan.bindings.size(); ++b) {
        lists[2 * b] = formatIdList(plan.bindings[b].logical);
        lists[2 * b + 1] = formatIdList(plan.bindings[b].os);
    }
    for (std::size_t rank = 0; rank < plan.ranks.size(); ++rank) {
        const RankPlacement &placement = plan.ranks[rank];
        if (rank > 0)
            out += ",\n";
        out += "{\"rank\":" + std::to_string(rank) + ",\"node\":";
        appendJsonString(out, plan.nodes[placement.node].name);
        out += ",\"app\":" + std::to_string(placement.app) +
               ",\"local_rank\":" + std::to_string(placement.localRank) +
               ",\"node_rank\":" + std::to_string(placement.nodeRank) + ",\"cpuset_logical\":";
        if (placement.binding == kUnbound) {
            out += "null,\"cpuset_os\":null";
        } else {
            appendJsonString(out, lists[2 * placement.binding]);
            out += ",\"cpuset_os\":";
            appendJsonString(out, lists[2 * placement.binding + 1]);
        }
        const std::string_view devices = plan.devicesOf(static_cast<std::uint32_t>(rank));
        if (!devices.empty()) {
            out += ",\"devices\":";
            appendJsonString(out, devices);
        }
        out += '}';
    }
    out += "]}\n";
    return out;
}

} // namespace stepmap
