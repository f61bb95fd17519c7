#include "protocol/timeline/critical_path.hpp"

#include <algorithm>
#include <cstdio>
#include <optional>

namespace stepmap::timeline {

namespace {

std::string ms(double v) {
    char text[32];
    std::snprintf(text, sizeof text, "%.1f", v);
    return text;
}

// Per node, one value in ms.
using PerNode = std::vector<std::pair<double, std::uint32_t>>;

class Phases {
public:
    Phases(const SrunMarks &srun, const std::map<std::uint32_t, std::vector<Event>> &nodes,
           const std::vector<std::string> &names)
        : srun_(srun), nodes_(nodes), names_(names) {}

    // When `mark` happened on each node, in ms after srun started.
    PerNode at(Mark mark, std::uint32_t index = 0) const {
        PerNode out;
        for (const auto &[node, events] : nodes_)
            if (auto t = find(events, mark, index))
                out.emplace_back(sinceStart(*t), node);
        return out;
    }
    // From `from` to `to` on each node that has both, in ms.
    PerNode between(Mark from, std::uint32_t fromIndex, Mark to, std::uint32_t toIndex) const {
        PerNode out;
        for (const auto &[node, events] : nodes_) {
            auto a = find(events, from, fromIndex), b = find(events, to, toIndex);
            if (a && b)
                out.emplace_back(static_cast<double>(*b - *a) / 1000.0, node);
        }
        return out;
    }
    double sinceStart(std::int64_t usec) const {
        return static_cast<double>(usec - srun_.started) / 1000.0;
    }
    // "median (slowest NODE max)", or "-" without values; `plus` marks
    // moments (+ms) rather than durations.
    std::string spread(PerNode values, bool plus = false) const {
        if (values.empty())
            return "-";
        std::sort(values.begin(), values.end());
        const std::string sign = plus ? "+" : "";
        const auto &median = values[(values.size() - 1) / 2];
        const auto &slowest = values.back();
        if (values.size() == 1)
            return sign + ms(median.first) + " (" + name(median.second) + ")";
        return sign + ms(median.first) + " (slowest " + name(slowest.second) + " " + sign +
               ms(slowest.first) + ")";
    }
    std::string name(std::uint32_t node) const {
        return node < names_.size() ? names_[node] : "node " + std::to_string(node);
    }
    // How many fences to show: up to the last one done, never more than a
    // Recorder keeps. The events came over the network (decodeEvents refuses
    // larger indices, this does not rely on it): an index of 2^32 - 2 would
    // otherwise have srun print four billion lines at exit.
    std::uint32_t fences() const {
        std::uint32_t n = 0;
        for (const auto &[node, events] : nodes_)
            for (const auto &e : events)
                if (e.mark == Mark::FenceDone && e.index < Recorder::kMaxFences)
                    n = std::max(n, e.index + 1);
        return n;
    }

private:
    static std::optional<std::int64_t> find(const std::vector<Event> &events, Mark mark,
                                            std::uint32_t index) {
        for (const auto &e : events)
            if (e.mark == mark && e.index == index)
                return e.usec;
        return std::nullopt;
    }

    const SrunMarks &srun_;
    const std::map<std::uint32_t, std::vector<Event>> &nodes_;
    const std::vector<std::string> &names_;
};

std::string srunLine(const SrunMarks &s, const Phases &p) {
    std::string line = "  srun: planned in " + ms(s.planMs);
    if (s.allocationMs > 0)
        line += " (Slurm granted the job after " + ms(s.allocationMs) + ")";
    if (s.stepCreated)
        line += ", step created +" + ms(p.sinceStart(s.stepCreated));
    if (s.hubOpen)
        line += ", rendezvous open +" + ms(p.sinceStart(s.hubOpen));
    return line;
}

std::string serverStartLine(const Phases &p) {
    return "  node server start: slurmstepd starts it " + p.spread(p.at(Mark::Launched), true) +
           "; to main() " + p.spread(p.between(Mark::Launched, 0, Mark::Running, 0)) +
           ", topology " + p.spread(p.between(Mark::Running, 0, Mark::TopologyLoaded, 0)) +
           ", PMIx and namespace " +
           p.spread(p.between(Mark::TopologyLoaded, 0, Mark::PmixRegistered, 0)) +
           ", report to slurmstepd " +
           p.spread(p.between(Mark::PmixRegistered, 0, Mark::Ready, 0)) + "; ready " +
           p.spread(p.at(Mark::Ready), true);
}

// How long slurmstepd held the forked tasks before exec, waiting for the
// server; empty where no node said (a contained user_init waits itself).
std::string taskHoldLine(const Phases &p) {
    const PerNode held = p.between(Mark::TasksForked, 0, Mark::TasksReleased, 0);
    if (held.empty())
        return {};
    return "  tasks: forked " + p.spread(p.at(Mark::TasksForked), true) +
           ", held before exec for the server " + p.spread(held);
}

// The moment the last node entered fence k, and who it was.
std::string fenceLine(const Phases &p, std::uint32_t k) {
    PerNode entered = p.at(Mark::FenceEntered, k);
    PerNode done = p.at(Mark::FenceDone, k);
    if (entered.empty() || done.empty())
        return "  fence " + std::to_string(k + 1) + ": not seen on every node";
    auto last = *std::max_element(entered.begin(), entered.end());
    PerNode afterLast;
    for (const auto &[t, node] : done)
        afterLast.emplace_back(t - last.first, node);
    return "  fence " + std::to_string(k + 1) + ": last node in +" + ms(last.first) + " (" +
           p.name(last.second) + "), then done in " + p.spread(afterLast);
}

} // namespace

std::vector<std::string>
describeCriticalPath(const SrunMarks &srun,
                     const std::map<std::uint32_t, std::vector<Event>> &nodes,
                     const std::vector<std::string> &nodeNames, std::size_t servers) {
    Phases p(srun, nodes, nodeNames);
    std::vector<std::string> lines;
    lines.push_back("critical path in ms after srun's start (per node: the median, then the "
                    "slowest node; " +
                    std::to_string(nodes.size()) + " of " + std::to_string(servers) +
                    " node servers reported):");
    lines.push_back(srunLine(srun, p));
    if (!nodes.empty()) {
        lines.push_back(serverStartLine(p));
        if (auto held = taskHoldLine(p); !held.empty())
            lines.push_back(std::move(held));
        if (p.at(Mark::ProfileAgreed).empty())
            lines.push_back("  rendezvous: joined " +
                            p.spread(p.between(Mark::Ready, 0, Mark::Joined, 0)) + " after ready");
        else
            lines.push_back("  profile rendezvous (part of PMIx and namespace above): joined " +
                            p.spread(p.between(Mark::TopologyLoaded, 0, Mark::Joined, 0)) +
                            " after topology, every node's say in " +
                            p.spread(p.between(Mark::TopologyLoaded, 0, Mark::ProfileAgreed, 0)));
        lines.push_back("  ranks: from ready to their first fence " +
                        p.spread(p.between(Mark::Ready, 0, Mark::FenceEntered, 0)));
        const std::uint32_t fences = p.fences();
        for (std::uint32_t k = 0; k < fences; ++k)
            lines.push_back(fenceLine(p, k));
        const std::uint32_t lastFence = fences ? fences - 1 : 0;
        lines.push_back("  teardown: from the last fence to the server's stop " +
                        (fences ? p.spread(p.between(Mark::FenceDone, lastFence, Mark::Leaving, 0))
                                : std::string("-")) +
                        "; servers stop " + p.spread(p.at(Mark::Leaving), true));
    }
    if (srun.exiting)
        lines.push_back("  srun's exit hook +" + ms(p.sinceStart(srun.exiting)));
    return lines;
}

} // namespace stepmap::timeline
