#include "protocol/hub/fence_probes.hpp"

#include <algorithm>
#include <charconv>

namespace stepmap::hub {

std::optional<std::vector<std::uint32_t>> fenceNodes(const std::string &fenceId,
                                                     std::uint32_t nodeCount) {
    const std::size_t hash = fenceId.rfind('#');
    if (hash == std::string::npos || hash == 0)
        return std::nullopt;
    std::uint64_t count = 0;
    auto [last, countEc] =
        std::from_chars(fenceId.data() + hash + 1, fenceId.data() + fenceId.size(), count);
    if (countEc != std::errc() || last != fenceId.data() + fenceId.size())
        return std::nullopt;
    std::vector<std::uint32_t> nodes;
    if (fenceId.compare(0, hash, "all") == 0) { // a fence of every node
        for (std::uint32_t n = 0; n < nodeCount; ++n)
            nodes.push_back(n);
        return nodes;
    }
    std::size_t at = 0;
    while (at < hash) {
        const std::size_t comma = fenceId.find(',', at);
        if (comma == std::string::npos || comma > hash)
            return std::nullopt;
        std::uint32_t n = 0;
        auto [end, ec] = std::from_chars(fenceId.data() + at, fenceId.data() + comma, n);
        if (ec != std::errc() || end != fenceId.data() + comma || n >= nodeCount ||
            (!nodes.empty() && n <= nodes.back()))
            return std::nullopt;
        nodes.push_back(n);
        at = comma + 1;
    }
    return nodes;
}

FenceProbes::Start FenceProbes::stuck(const std::string &fenceId,
                                      const std::vector<std::uint32_t> &nodes,
                                      const std::set<std::uint32_t> &joined) {
    Start start;
    if (probes_.count(fenceId) || probes_.size() >= maxProbes_)
        return start;
    Probe &probe = probes_[fenceId];
    probe.nodes = nodes.size();
    for (std::uint32_t n : nodes) {
        if (joined.count(n)) {
            probe.waiting.insert(n);
            start.ask.push_back(n);
        } else {
            probe.absent.push_back(n); // no server: it cannot have entered
        }
    }
    if (probe.waiting.empty())
        start.verdict = verdict(probe);
    return start;
}

std::optional<std::string> FenceProbes::answer(const std::string &fenceId, std::uint32_t node,
                                               bool entered, bool waiting) {
    auto it = probes_.find(fenceId);
    if (it == probes_.end() || !it->second.waiting.erase(node))
        return std::nullopt; // not asked, or answered already
    if (entered && !waiting) {
        probes_.erase(it); // it completed, late: nothing to end
        return std::nullopt;
    }
    if (!entered)
        it->second.absent.push_back(node);
    if (!it->second.waiting.empty())
        return std::nullopt;
    return verdict(it->second);
}

std::string FenceProbes::nodeName(std::uint32_t node) const {
    return node < nodeNames_.size() ? nodeNames_[node] : "node index " + std::to_string(node);
}

std::string FenceProbes::verdict(Probe &probe) const {
    std::sort(probe.absent.begin(), probe.absent.end());
    const std::string fence = "a fence of " + std::to_string(probe.nodes) +
                              (probe.nodes == 1 ? " node" : " nodes") + " did not complete in " +
                              std::to_string(timeoutSec_) + " s (fence_timeout=)";
    if (probe.absent.empty())
        return fence + ": every node entered it, yet it did not complete between them";
    std::string who;
    for (std::size_t i = 0; i < probe.absent.size() && i < 8; ++i)
        who += (i ? ", " : "") + nodeName(probe.absent[i]);
    if (probe.absent.size() > 8)
        who += " and " + std::to_string(probe.absent.size() - 8) + " more";
    return fence + ": " + who + (probe.absent.size() == 1 ? " has" : " have") +
           " not entered it (a rank there has not reached MPI_Init's exchange or the fence, "
           "e.g. MPI_Barrier, the others wait in)";
}

} // namespace stepmap::hub
