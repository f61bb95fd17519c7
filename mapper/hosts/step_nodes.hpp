#pragma once

// Which of the job's nodes a step runs on, as Slurm chooses them for srun's
// -N/--nodes, -w/--nodelist and -x/--exclude inside an allocation: -x
// removes nodes, -w names nodes that must all be in the allocation, -N k
// takes k nodes (the -w ones first, then the others in the allocation's
// order). stepmap then maps onto that set, as mpirun maps onto its
// allocation. Pure: names in, names out.

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/expected.hpp"
#include "hosts/allocation.hpp"

namespace stepmap {

// -N/--nodes "k" or "min-max" (srun's forms; "min-" leaves max open).
struct NodeCount {
    int min = 1;
    std::optional<int> max;

    bool operator==(const NodeCount &) const = default;
};

// The error names the option as written ("-N", "--nodes").
Expected<NodeCount> parseNodeCount(std::string_view option, std::string_view value);

struct StepNodeRequest {
    std::optional<NodeCount> count;   // -N
    std::vector<std::string> include; // -w, expanded, in the user's order
    std::vector<std::string> exclude; // -x, expanded
    std::string countOption = "-N";   // as the user wrote them, for messages
    std::string includeOption = "-w";
    std::string excludeOption = "-x";

    bool any() const { return count || !include.empty() || !exclude.empty(); }
    bool operator==(const StepNodeRequest &) const = default;
};

// The allocation's nodes the step gets, in the allocation's order. Errors
// name the option and the node: a -w node outside the allocation (or also
// excluded), more -w nodes than -N allows, fewer nodes left than -N asks.
Expected<Allocation> selectStepNodes(const Allocation &allocation, const StepNodeRequest &request);

} // namespace stepmap
