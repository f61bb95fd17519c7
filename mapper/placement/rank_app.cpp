// The rankers: PRRTE's rank-by slot, node, fill and span, and stepmap's
// numbering in placement order.

#include "placement/placement.hpp"

namespace stepmap::detail {

namespace {

// Ranges [first, second) of a list of processes.
using Groups = std::vector<std::pair<std::uint32_t, std::uint32_t>>;

// One process from each group per round, until all are taken.
std::vector<std::uint32_t> roundRobin(const std::vector<std::uint32_t> &procs, Groups groups) {
    std::vector<std::uint32_t> order;
    order.reserve(procs.size());
    Groups next;
    while (!groups.empty()) {
        next.clear();
        for (auto &group : groups) {
            order.push_back(procs[group.first++]);
            if (group.first < group.second)
                next.push_back(group);
        }
        groups.swap(next);
    }
    return order;
}

// The non-empty ranges between consecutive offsets.
Groups groupsOf(const std::vector<std::uint32_t> &offsets, std::uint32_t base) {
    Groups groups;
    for (std::size_t i = 0; i + 1 < offsets.size(); ++i) {
        if (offsets[i] < offsets[i + 1])
            groups.emplace_back(base + offsets[i], base + offsets[i + 1]);
    }
    return groups;
}

// Counting sort of `items` (in order) by key (< keys): the sorted items and
// each key's start offset (keys + 1 entries).
template <class Key>
std::pair<std::vector<std::uint32_t>, std::vector<std::uint32_t>>
sortedByKey(const std::vector<std::uint32_t> &items, std::size_t keys, Key key) {
    std::vector<std::uint32_t> start(keys + 1, 0);
    for (std::uint32_t item : items)
        ++start[key(item) + 1];
    for (std::size_t i = 1; i < start.size(); ++i)
        start[i] += start[i - 1];
    std::vector<std::uint32_t> sorted(items.size());
    std::vector<std::uint32_t> fill(start.begin(), start.end() - 1);
    for (std::uint32_t item : items)
        sorted[fill[key(item)]++] = item;
    return {std::move(sorted), std::move(start)};
}

} // namespace

std::vector<std::uint32_t> Engine::appProcs(std::uint32_t app, std::size_t firstProc) const {
    std::vector<std::uint32_t> out;
    for (auto p = static_cast<std::uint32_t>(firstProc); p < procs_.size(); ++p) {
        if (procs_[p].app == app)
            out.push_back(p);
    }
    return out;
}

// fill / span: each node's processes by the object they were mapped to;
// fill takes the objects in turn, span one process of each per round.
Expected<std::vector<std::uint32_t>>
Engine::rankByObject(const std::vector<std::uint32_t> &byNode,
                     const std::vector<std::uint32_t> &nodeStart, const MapOptions &options) const {
    const std::string word(rankByWord(options.rank));
    if (!options.mapLevel)
        return UserError{"--rank-by " + word +
                         " needs processes mapped to objects; map by an object (e.g. "
                         "--map-by core)"};
    const HwLevel level = *options.mapLevel;
    std::vector<std::uint32_t> byObject;
    Groups queues; // per (node, object) in node, object order
    for (std::uint32_t n = 0; n + 1 < nodeStart.size(); ++n) {
        const std::size_t objects = nodes_[mapOrder_[n]].model->objects(level).size();
        const std::vector<std::uint32_t> procs(byNode.begin() + nodeStart[n],
                                               byNode.begin() + nodeStart[n + 1]);
        for (std::uint32_t p : procs) {
            if (procs_[p].obj == kNoIndex || procs_[p].obj >= objects)
                return UserError{"--rank-by " + word + " needs every process mapped to a " +
                                 std::string(hwLevelName(level)) +
                                 "; map by that object (e.g. --map-by " +
                                 std::string(hwLevelName(level)) + ")"};
        }
        auto [sorted, start] =
            sortedByKey(procs, objects, [&](std::uint32_t p) { return procs_[p].obj; });
        const Groups here = groupsOf(start, static_cast<std::uint32_t>(byObject.size()));
        queues.insert(queues.end(), here.begin(), here.end());
        byObject.insert(byObject.end(), sorted.begin(), sorted.end());
    }
    if (options.rank == RankBy::Fill)
        return byObject;
    return roundRobin(byObject, std::move(queues));
}

std::optional<UserError> Engine::rankApp(std::uint32_t app, std::uint32_t np,
                                         const MapOptions &options, std::size_t firstProc) {
    if (options.userRanked)
        return std::nullopt;
    std::vector<std::uint32_t> order = appProcs(app, firstProc);
    if (!options.ranksInPlacementOrder) {
        // Grouped by node in job-map order, each node's in placement order.
        auto [byNode, nodeStart] = sortedByKey(order, mapOrder_.size(), [&](std::uint32_t p) {
            return nodes_[procs_[p].node].mapOrder;
        });
        if (options.rank == RankBy::Slot) {
            order = std::move(byNode);
        } else if (options.rank == RankBy::Node) {
            order = roundRobin(byNode, groupsOf(nodeStart, 0));
        } else {
            auto ranked = rankByObject(byNode, nodeStart, options);
            if (!ranked)
                return ranked.error();
            order = std::move(ranked.value());
        }
    }
    std::uint32_t rank = options.startRank;
    for (std::uint32_t p : order)
        procs_[p].rank = rank++;
    if (order.size() != np)
        return UserError{"internal error: ranked " + std::to_string(order.size()) + " of " +
                         std::to_string(np) + " processes"};
    return std::nullopt;
}

} // namespace stepmap::detail
