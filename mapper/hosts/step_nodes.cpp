#include "hosts/step_nodes.hpp"

#include <algorithm>
#include <set>

#include "base/input_limits.hpp"
#include "base/parse_number.hpp"
#include "base/quote.hpp"

namespace stepmap {

Expected<NodeCount> parseNodeCount(std::string_view option, std::string_view value) {
    auto bad = [&] {
        return UserError{std::string(option) + " " + quoted(value) +
                         ": expected a node count (N) or a range (MIN-MAX), each a number "
                         "from 1 to " +
                         std::to_string(kMaxNodes)};
    };
    NodeCount count;
    const auto dash = value.find('-');
    auto minText = value.substr(0, dash);
    auto min = detail::parseCount(minText, kMaxNodes);
    if (!min)
        return bad();
    count.min = *min;
    if (dash != std::string_view::npos) {
        auto maxText = value.substr(dash + 1);
        if (!maxText.empty()) {
            auto max = detail::parseCount(maxText, kMaxNodes);
            if (!max || *max < *min)
                return bad();
            count.max = *max;
        }
    } else {
        count.max = *min;
    }
    return count;
}

Expected<Allocation> selectStepNodes(const Allocation &allocation, const StepNodeRequest &request) {
    std::set<std::string, std::less<>> allocated;
    for (const AllocatedNode &node : allocation.nodes)
        allocated.insert(node.name);
    std::vector<std::string> allocatedNames;
    for (const AllocatedNode &node : allocation.nodes)
        allocatedNames.push_back(node.name);

    std::set<std::string, std::less<>> excluded(request.exclude.begin(), request.exclude.end());
    std::set<std::string, std::less<>> included;
    for (const std::string &name : request.include) {
        if (!allocated.count(name))
            return UserError{request.includeOption + " names node " + quoted(name) +
                             ", which is not in the job's allocation (" +
                             listedNames(allocatedNames) +
                             "); name nodes of the allocation, or drop " + request.includeOption};
        if (excluded.count(name))
            return UserError{"node " + quoted(name) + " is named by both " + request.includeOption +
                             " and " + request.excludeOption + "; drop it from one of them"};
        included.insert(name);
    }

    // The -w nodes, then the others not excluded, in the allocation's order.
    std::vector<const AllocatedNode *> wanted, others;
    for (const AllocatedNode &node : allocation.nodes) {
        if (included.count(node.name))
            wanted.push_back(&node);
        else if (!excluded.count(node.name))
            others.push_back(&node);
    }
    std::size_t take = wanted.size() + others.size();
    if (!request.include.empty() && !request.count)
        take = wanted.size(); // -w alone: exactly those nodes
    if (request.count) {
        const NodeCount &n = *request.count;
        if (n.max && wanted.size() > static_cast<std::size_t>(*n.max))
            return UserError{request.includeOption + " names " + std::to_string(wanted.size()) +
                             " nodes but " + request.countOption + " allows at most " +
                             std::to_string(*n.max) + "; name fewer nodes or raise " +
                             request.countOption};
        const std::size_t available = wanted.size() + others.size();
        if (available < static_cast<std::size_t>(n.min))
            return UserError{request.countOption + " asks for " + std::to_string(n.min) +
                             " nodes, but the job's allocation has only " +
                             std::to_string(available) +
                             (excluded.empty() ? "" : " outside " + request.excludeOption) +
                             "; ask for fewer nodes"};
        take = n.max ? std::min<std::size_t>(*n.max, available) : available;
        take = std::max(take, wanted.size());
    }
    if (take == 0)
        return UserError{request.excludeOption + " excludes every node of the job's allocation (" +
                         listedNames(allocatedNames) + "); leave at least one"};
    std::set<const AllocatedNode *> chosen(wanted.begin(), wanted.end());
    for (const AllocatedNode *node : others) {
        if (chosen.size() >= take)
            break;
        chosen.insert(node);
    }
    Allocation step;
    for (const AllocatedNode &node : allocation.nodes)
        if (chosen.count(&node))
            step.nodes.push_back(node);
    return step;
}

} // namespace stepmap
