#include "profile_check.hpp"

#include <map>

#include "profile/profile_diff.hpp"

namespace stepmap::tools {

using topology::NodeProfile;

CheckReport checkReport(const std::string &shownFile, const topology::Profile &recorded,
                        const std::vector<NodeProfile> &live) {
    CheckReport report;
    std::size_t staleNodes = 0;
    const std::string prefix = "profile " + shownFile + ": ";
    std::map<std::string, const NodeProfile *> entryOf;
    for (const NodeProfile &node : recorded.nodes)
        entryOf.emplace(node.name, &node);
    for (const NodeProfile &node : live) {
        const auto entry = entryOf.find(node.name);
        if (entry == entryOf.end()) {
            report.text += prefix + "node " + node.name + ": not in the file\n";
            ++staleNodes;
            continue;
        }
        const auto differences = topology::profileDifferences(*entry->second, node);
        for (const topology::ProfileDifference &difference : differences) {
            report.text += prefix + "node " + node.name + ": " +
                           (difference.stale ? "" : "note: ") + difference.text + "\n";
        }
        staleNodes += topology::anyStale(differences) ? 1 : 0;
    }
    report.stale = staleNodes > 0;
    report.text += prefix + std::to_string(live.size()) +
                   (live.size() == 1 ? " node checked, " : " nodes checked, ") +
                   (report.stale ? std::to_string(staleNodes) + " stale" : "all current") + "\n";
    return report;
}

} // namespace stepmap::tools
