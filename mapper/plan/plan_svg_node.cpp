// One node of the plan picture, and the marks its ranks are drawn with
// (plan_svg_parts.hpp).

#include <algorithm>

#include "base/quote.hpp"
#include "plan/plan_svg_parts.hpp"

namespace stepmap::svg {

namespace {

constexpr int kPad = 8;       // inside the node's box
constexpr int kChip = 16;     // a chip's height
constexpr int kMinWrap = 480; // chips wrap at least this wide
constexpr int kNameFont = 14;
constexpr int kHeaderFont = 12;

std::string number(std::size_t value) {
    return std::to_string(value);
}

// Chips for ranks not drawn on cores, flowing left to right from (left,
// top) under a caption; at most options.maxChipsPerNode, the rest counted.
Drawing drawChips(const NodeRanks &node, const std::vector<std::uint32_t> &ranks,
                  const std::string &caption, int left, int top, int wrapWidth,
                  std::uint32_t maxChips) {
    Drawing out;
    out.body += text(left, top + 12, "font-size=\"10\" fill=\"#333\"", caption) + "\n";
    out.width = textWidth(characterCount(caption), 10);
    int x = left;
    int y = top + 18;
    const std::size_t shown = std::min<std::size_t>(ranks.size(), maxChips);
    for (std::size_t i = 0; i < shown; ++i) {
        const std::uint32_t rank = ranks[i];
        const std::string label = number(rank);
        const int width = std::max(24, textWidth(label.size(), 9) + 8);
        if (x > left && x + width > left + wrapWidth) {
            x = left;
            y += kChip + 4;
        }
        out.body += rankMark({.rank = rank,
                              .app = node.plan.ranks[rank].app,
                              .box = {x, y, width, kChip},
                              .unbound = node.plan.ranks[rank].binding == kUnbound,
                              .oversubscribed = node.oversubscribed,
                              .title = rankTitle(node.plan, rank),
                              .label = label});
        out.width = std::max(out.width, x + width - left);
        x += width + 4;
    }
    y += kChip;
    if (shown < ranks.size()) {
        out.body += text(left, y + 12, "class=\"more-ranks\" font-size=\"9\"",
                         "... and " + number(ranks.size() - shown) + " more ranks") +
                    "\n";
        y += 14;
    }
    out.height = y - top + 4;
    return out;
}

std::string chipCaption(const NodeRanks &node, const NodeModel *model, bool coresDrawn,
                        const std::vector<std::uint32_t> &chips, std::uint32_t maxPus) {
    if (!model)
        return "ranks (no hardware model for this node):";
    if (!coresDrawn)
        return "ranks (hardware of " + number(model->puCount()) + " PUs not drawn, more than " +
               number(maxPus) + "):";
    const bool allUnbound = std::all_of(chips.begin(), chips.end(), [&](std::uint32_t rank) {
        return node.plan.ranks[rank].binding == kUnbound;
    });
    return allUnbound ? "unbound ranks (may run on any CPU of the node):"
                      : "ranks not on the drawn CPUs (dashed: unbound):";
}

std::string nodeHeader(const NodeRanks &node) {
    const PlannedNode &planned = node.plan.nodes[node.node];
    std::string header = counted(static_cast<std::size_t>(planned.slots), "slot") + ", " +
                         counted(node.ranks.size(), "rank");
    if (planned.maxSlots)
        header += ", max " + number(static_cast<std::size_t>(*planned.maxSlots)) + " slots";
    if (node.oversubscribed)
        header += " - oversubscribed: more ranks than slots";
    return header;
}

} // namespace

std::string rankTitle(const LaunchPlan &plan, std::uint32_t rank) {
    std::string title = "rank " + number(rank) + ", app " + number(plan.ranks[rank].app) + ": ";
    const CpuBinding *binding = plan.bindingOf(rank);
    title += binding ? "PUs L" + formatIdList(binding->logical) : std::string("unbound");
    const std::string_view devices = plan.devicesOf(rank);
    if (!devices.empty())
        title += ", devices " + xmlText(devices);
    return title;
}

std::string rankMark(const RankMark &mark) {
    std::string out = "<g class=\"rank app" + number(mark.app) + (mark.unbound ? " unbound" : "") +
                      (mark.oversubscribed ? " oversubscribed" : "") + "\" data-rank=\"" +
                      number(mark.rank) + "\"><title>" + mark.title + "</title>";
    if (mark.unbound)
        out += rect(mark.box, "fill=\"" + appTint(mark.app) + "\" stroke=\"" + appColour(mark.app) +
                                  "\" stroke-width=\"1.5\" stroke-dasharray=\"4 2\"");
    else
        out += rect(mark.box, "fill=\"" + appColour(mark.app) + "\" stroke=\"#333\"");
    if (mark.oversubscribed)
        out += rect(mark.box, std::string("class=\"hatch\" fill=\"") + kHatchFill + "\"");
    if (!mark.label.empty())
        out += text(mark.box.x + mark.box.width / 2, mark.box.y + mark.box.height - 4,
                    "font-size=\"" + number(static_cast<std::size_t>(mark.labelFont)) +
                        "\" text-anchor=\"middle\"",
                    mark.label);
    return out + "</g>\n";
}

Drawing drawNode(const NodeRanks &node, const NodeModel *model, const PlanSvgOptions &options) {
    const PlannedNode &planned = node.plan.nodes[node.node];
    const std::string name = xmlText(planned.name);
    const std::string header = nodeHeader(node);
    const int nameWidth = textWidth(characterCount(escaped(planned.name)) + 2, kNameFont);
    std::string inner =
        text(kPad, kPad + 12, "font-size=\"14\" font-weight=\"bold\"", name) + "\n" +
        text(kPad + nameWidth, kPad + 12,
             std::string("font-size=\"12\"") + (node.oversubscribed ? " fill=\"#b00\"" : ""),
             header) +
        "\n";
    int width = nameWidth + textWidth(header.size(), kHeaderFont) + 2 * kPad;
    int y = kPad + 22;
    std::vector<std::uint32_t> chips;
    const bool coresDrawn = model && model->puCount() <= options.maxPusPerNode;
    if (coresDrawn) {
        const Drawing cores = drawCores(node, *model, kPad, y, options, chips);
        inner += cores.body;
        width = std::max(width, cores.width + 2 * kPad);
        y += cores.height;
    } else {
        chips = node.ranks;
    }
    if (!chips.empty()) {
        const Drawing drawn = drawChips(
            node, chips, chipCaption(node, model, coresDrawn, chips, options.maxPusPerNode), kPad,
            y, std::max(kMinWrap, width - 2 * kPad), options.maxChipsPerNode);
        inner += drawn.body;
        width = std::max(width, drawn.width + 2 * kPad);
        y += drawn.height;
    }
    const int height = y + kPad;
    const std::string frame =
        rect({0, 0, width, height}, node.oversubscribed
                                        ? "fill=\"#fff\" stroke=\"#b00\" stroke-width=\"2\""
                                        : "fill=\"#fff\" stroke=\"#333\"");
    return Drawing{frame + "\n" + inner, width, height};
}

} // namespace stepmap::svg
