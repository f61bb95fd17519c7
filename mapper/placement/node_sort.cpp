#include "placement/node_sort.hpp"

#include <algorithm>
#include <string>
#include <unordered_map>

namespace stepmap::detail {

namespace {

struct Rated {
    NodeSlots node;
    double rating = 0;
};

// The load average the criterion reads, or nullopt when it reads none.
const std::optional<double> *loadOf(const NodeFigures &figures, NodesSort sort) {
    switch (sort) {
    case NodesSort::Load1:
    case NodesSort::ProcLoad:
        return &figures.load1;
    case NodesSort::Load5:
        return &figures.load5;
    case NodesSort::Load15:
        return &figures.load15;
    case NodesSort::Proc:
    case NodesSort::None:
        return nullptr;
    }
    return nullptr;
}

std::string_view minutesOf(NodesSort sort) {
    return sort == NodesSort::Load5 ? "5" : sort == NodesSort::Load15 ? "15" : "1";
}

} // namespace

std::optional<UserError> sortNodes(std::vector<NodeSlots> &nodes, NodesSort sort,
                                   const std::vector<NodeFigures> &figures,
                                   std::string_view source) {
    if (sort == NodesSort::None)
        return std::nullopt;
    const std::string context = std::string(source) + "=" + std::string(nodesSortName(sort)) + ": ";

    std::unordered_map<std::string_view, const NodeFigures *> byName;
    byName.reserve(figures.size());
    for (const NodeFigures &f : figures)
        byName.emplace(f.name, &f);

    std::vector<Rated> rated;
    rated.reserve(nodes.size());
    for (const NodeSlots &node : nodes) {
        const auto found = byName.find(node.name);
        if (found == byName.end())
            return UserError{context + "no load or process figures for node " +
                             std::string(node.name) +
                             " (use --nodes-sort=NONE to keep the allocation's order)"};
        const NodeFigures &f = *found->second;
        if (f.hardwareThreads < 1)
            return UserError{context + "the figures for node " + std::string(node.name) +
                             " give it " + std::to_string(f.hardwareThreads) +
                             " hardware threads (expected at least 1)"};
        double numerator = 0;
        if (sort == NodesSort::Proc || sort == NodesSort::ProcLoad)
            numerator += f.assignedThreads;
        if (const std::optional<double> *load = loadOf(f, sort)) {
            if (!*load)
                return UserError{
                    context + "the " + std::string(minutesOf(sort)) +
                    "-minute load average of node " + std::string(node.name) +
                    " is not known (Slurm reports only the 1-minute load, as CPULoad); use "
                    "LOAD_1, PROC, PROC+LOAD or NONE"};
            numerator += **load;
        }
        rated.push_back(Rated{node, numerator / f.hardwareThreads});
    }
    std::stable_sort(rated.begin(), rated.end(), [](const Rated &a, const Rated &b) {
        if (a.rating != b.rating)
            return a.rating < b.rating;
        if (a.node.slots != b.node.slots)
            return a.node.slots > b.node.slots;
        return a.node.allocIndex < b.node.allocIndex;
    });
    for (std::size_t i = 0; i < nodes.size(); ++i)
        nodes[i] = rated[i].node;
    return std::nullopt;
}

} // namespace stepmap::detail
