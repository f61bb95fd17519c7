#pragma once

// Internal to the plan picture (plan_svg.hpp): one node's box
// (plan_svg_node.cpp) and the cores inside it with the ranks bound to them
// (plan_svg_cores.cpp). Coordinates are integer pixels.

#include <cstdint>
#include <string>
#include <vector>

#include "hosts/node_model.hpp"
#include "plan/launch_plan.hpp"
#include "plan/plan_svg.hpp"
#include "plan/svg_elements.hpp"

namespace stepmap::svg {

// The id of the hatch pattern the document defines once.
inline constexpr const char *kHatchFill = "url(#hatch)";

// One rank's mark: a bar over its PUs, or a chip when not drawn on cores.
struct RankMark {
    std::uint32_t rank = 0;
    std::uint32_t app = 0;
    Box box;
    bool unbound = false;
    bool oversubscribed = false; // its node runs more ranks than slots
    std::string title;           // tooltip, already safe
    std::string label;           // text inside, already safe; "" for none
    int labelFont = 9;
};

// <g class="rank appA[ unbound][ oversubscribed]" data-rank="R">...</g>
std::string rankMark(const RankMark &mark);

// "rank R, app A: PUs L0-3" or "rank R, app A: unbound".
std::string rankTitle(const LaunchPlan &plan, std::uint32_t rank);

// The ranks of one node.
struct NodeRanks {
    const LaunchPlan &plan;
    std::uint32_t node = 0;                  // index into plan.nodes
    const std::vector<std::uint32_t> &ranks; // ascending
    bool oversubscribed = false;
};

struct Drawing {
    std::string body;
    int width = 0;
    int height = 0;
};

// The node's packages, NUMA domains, cores and PUs from (left, top), rows of
// at most 64 PUs, with its bound ranks as bars in lanes under each row.
// `notDrawn` receives the ranks without a bar (unbound, or bound to no PU
// of the model), ascending.
Drawing drawCores(const NodeRanks &node, const NodeModel &model, int left, int top,
                  const PlanSvgOptions &options, std::vector<std::uint32_t> &notDrawn);

// The inside of the node's box, from (0, 0): its frame, name, slots and
// ranks, its cores when the model is given and small enough, and chips for
// the ranks not drawn there. The caller places it.
Drawing drawNode(const NodeRanks &node, const NodeModel *model, const PlanSvgOptions &options);

} // namespace stepmap::svg
