#include "placement/placement.hpp"

namespace stepmap::detail {

std::optional<UserError> Engine::rankApp(std::uint32_t app, std::uint32_t np,
                                         const MapOptions &options, std::size_t firstProc) {
    if (options.userRanked)
        return std::nullopt;
    // The application's processes, grouped by node in job-map order, each
    // node's in placement order.
    std::vector<std::uint32_t> mine;
    std::vector<std::uint32_t> start(mapOrder_.size() + 1, 0);
    const auto first = static_cast<std::uint32_t>(firstProc);
    for (std::uint32_t p = first; p < procs_.size(); ++p) {
        if (procs_[p].app == app)
            ++start[nodes_[procs_[p].node].mapOrder + 1];
    }
    for (std::size_t i = 1; i < start.size(); ++i)
        start[i] += start[i - 1];
    mine.resize(start.back());
    {
        std::vector<std::uint32_t> fill(start.begin(), start.end() - 1);
        for (std::uint32_t p = first; p < procs_.size(); ++p) {
            if (procs_[p].app == app)
                mine[fill[nodes_[procs_[p].node].mapOrder]++] = p;
        }
    }
    std::uint32_t rank = options.startRank;
    const std::uint32_t end = options.startRank + np;
    const auto give = [&](std::uint32_t p) { procs_[p].rank = rank++; };

    if (options.ranksInPlacementOrder) {
        // stepmap: map-by slot ranked by slot and map-by node ranked by node
        // number the processes in the order they were placed (seed 002).
        for (std::uint32_t p = first; p < procs_.size(); ++p) {
            if (procs_[p].app == app)
                give(p);
        }
    } else if (options.rank == RankBy::Slot) {
        for (std::uint32_t p : mine)
            give(p);
    } else if (options.rank == RankBy::Node) {
        std::vector<std::uint32_t> cursor(start.begin(), start.end() - 1);
        std::vector<std::uint32_t> active;
        for (std::uint32_t n = 0; n + 1 < start.size(); ++n) {
            if (start[n] < start[n + 1])
                active.push_back(n);
        }
        std::vector<std::uint32_t> next;
        while (!active.empty() && rank < end) {
            next.clear();
            for (std::uint32_t n : active) {
                give(mine[cursor[n]++]);
                if (cursor[n] < start[n + 1])
                    next.push_back(n);
            }
            active.swap(next);
        }
    } else {
        // fill / span: by the object each process was mapped to.
        if (!options.mapLevel)
            return UserError{"--rank-by " + std::string(rankByWord(options.rank)) +
                             " needs processes mapped to objects; map by an object (e.g. "
                             "--map-by core)"};
        const HwLevel level = *options.mapLevel;
        struct Queue {
            std::uint32_t begin;
            std::uint32_t end;
        };
        std::vector<std::uint32_t> byObject;
        std::vector<Queue> queues; // per (node, object) in node, object order
        for (std::uint32_t n = 0; n + 1 < start.size(); ++n) {
            const NodeModel &model = *nodes_[mapOrder_[n]].model;
            const std::size_t objects = model.objects(level).size();
            std::vector<std::uint32_t> count(objects + 1, 0);
            for (std::uint32_t k = start[n]; k < start[n + 1]; ++k) {
                const std::uint32_t obj = procs_[mine[k]].obj;
                if (obj == kNoIndex || obj >= objects)
                    return UserError{"--rank-by " + std::string(rankByWord(options.rank)) +
                                     " needs every process mapped to a " +
                                     std::string(hwLevelName(level)) +
                                     "; map by that object (e.g. --map-by " +
                                     std::string(hwLevelName(level)) + ")"};
                ++count[obj + 1];
            }
            for (std::size_t o = 1; o < count.size(); ++o)
                count[o] += count[o - 1];
            const auto base = static_cast<std::uint32_t>(byObject.size());
            byObject.resize(byObject.size() + (start[n + 1] - start[n]));
            std::vector<std::uint32_t> fill(count.begin(), count.end() - 1);
            for (std::uint32_t k = start[n]; k < start[n + 1]; ++k)
                byObject[base + fill[procs_[mine[k]].obj]++] = mine[k];
            for (std::size_t o = 0; o < objects; ++o) {
                if (count[o] < count[o + 1])
                    queues.push_back(Queue{base + count[o], base + count[o + 1]});
            }
        }
        if (options.rank == RankBy::Fill) {
            for (std::uint32_t p : byObject)
                give(p);
        } else {
            std::vector<Queue> next;
            while (!queues.empty() && rank < end) {
                next.clear();
                for (Queue &queue : queues) {
                    give(byObject[queue.begin++]);
                    if (queue.begin < queue.end)
                        next.push_back(queue);
                }
                queues.swap(next);
            }
        }
    }
    if (rank != end)
        return UserError{"internal error: ranked " + std::to_string(rank - options.startRank) +
                         " of " + std::to_string(np) + " processes"};
    return std::nullopt;
}

} // namespace stepmap::detail
