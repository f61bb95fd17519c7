#include "hosts/allocation.hpp"

#include <cstdint>
#include <limits>

#include "base/input_limits.hpp"
#include "base/parse_number.hpp"
#include "base/quote.hpp"
#include "hosts/hostlist.hpp"

namespace stepmap {

namespace {

struct CpuCount {
    int cpus;
    std::uint64_t repeat;
};

// One item of SLURM_JOB_CPUS_PER_NODE: "N" or "N(xR)".
std::optional<CpuCount> parseCpuItem(std::string_view item) {
    std::uint64_t repeat = 1;
    const std::size_t paren = item.find('(');
    if (paren != std::string_view::npos) {
        const std::string_view suffix = item.substr(paren);
        if (suffix.size() < 4 || suffix.substr(0, 2) != "(x" || suffix.back() != ')')
            return std::nullopt;
        const auto parsed = detail::parseUnsigned(suffix.substr(2, suffix.size() - 3),
                                                  std::numeric_limits<std::uint32_t>::max());
        if (!parsed || *parsed == 0)
            return std::nullopt;
        repeat = *parsed;
        item = item.substr(0, paren);
    }
    const auto cpus = detail::parseCount(item, kMaxRanks);
    if (!cpus)
        return std::nullopt;
    return CpuCount{*cpus, repeat};
}

} // namespace

Expected<Allocation> allocationFromSlurm(std::string_view nodeList, std::string_view cpusPerNode) {
    auto names = expandHostlist(nodeList);
    if (!names)
        return UserError{"Slurm node list: " + names.error().message};

    const std::string quotedCpus = quoted(cpusPerNode);
    std::vector<int> cpus;
    std::size_t pos = 0;
    while (true) {
        const std::size_t comma = cpusPerNode.find(',', pos);
        const std::string_view item = cpusPerNode.substr(
            pos, comma == std::string_view::npos ? std::string_view::npos : comma - pos);
        const auto count = parseCpuItem(item);
        if (!count && detail::isNumberAbove(item.substr(0, item.find('(')), kMaxRanks))
            return UserError{"invalid Slurm CPU counts per node " + quotedCpus + ": " +
                             quoted(item) + " gives a node more than " + std::to_string(kMaxRanks) +
                             " CPUs, the most processes stepmap places"};
        if (!count)
            return UserError{"invalid Slurm CPU counts per node " + quotedCpus + ": " +
                             quoted(item) + " is not N or N(xR) with N, R >= 1"};
        if (count->repeat > names->size() - cpus.size())
            return UserError{"Slurm CPU counts per node " + quotedCpus +
                             " describe more nodes than the node list " + quoted(nodeList) +
                             " has (" + std::to_string(names->size()) + ")"};
        cpus.insert(cpus.end(), count->repeat, count->cpus);
        if (comma == std::string_view::npos)
            break;
        pos = comma + 1;
    }
    if (cpus.size() != names->size())
        return UserError{"Slurm CPU counts per node " + quotedCpus + " describe " +
                         std::to_string(cpus.size()) + " nodes, but the node list " +
                         quoted(nodeList) + " has " + std::to_string(names->size())};

    Allocation allocation;
    allocation.nodes.reserve(cpus.size());
    for (std::size_t i = 0; i < cpus.size(); ++i)
        allocation.nodes.push_back(AllocatedNode{std::move((*names)[i]), cpus[i]});
    return allocation;
}

Expected<Allocation> slotsForCpusPerTask(const Allocation &alloc, int cpusPerTask,
                                         const std::string &source) {
    if (cpusPerTask <= 1)
        return alloc;
    Allocation out = alloc;
    std::erase_if(out.nodes, [&](AllocatedNode &node) {
        node.slots /= cpusPerTask;
        return node.slots < 1;
    });
    if (out.nodes.empty())
        return UserError{source + ": no node of the job has " + std::to_string(cpusPerTask) +
                         " CPUs for one rank; ask for fewer CPUs per task or a job with more "
                         "CPUs per node"};
    return out;
}

} // namespace stepmap
