#include "plan/plan_svg.hpp"

#include <algorithm>
#include <unordered_map>

#include "base/quote.hpp"
#include "plan/plan_svg_parts.hpp"

namespace stepmap {

namespace {

using svg::Box;
using svg::Drawing;

constexpr int kMargin = 12;
constexpr int kNodeGap = 12;
constexpr int kLineWidth = 1200; // nodes wrap to a new line past this (or the legend)

// The models of the drawn nodes, by plan node index (nullptr: none).
std::vector<const NodeModel *> drawnModels(const LaunchPlan &plan, const Allocation &allocation,
                                           std::uint32_t drawn) {
    std::unordered_map<std::string_view, std::uint32_t> wanted;
    for (std::uint32_t i = 0; i < drawn; ++i)
        wanted.emplace(plan.nodes[i].name, i);
    std::vector<const NodeModel *> models(drawn, nullptr);
    for (const AllocatedNode &node : allocation.nodes) {
        const auto found = wanted.find(node.name);
        if (found != wanted.end() && node.model)
            models[found->second] = node.model.get();
    }
    return models;
}

// "stepmap launch plan - TITLE: R ranks, A app contexts, N nodes" and the
// legend: one swatch per application, then the marks.
Drawing drawLegend(const LaunchPlan &plan, const std::string &title) {
    Drawing out;
    std::string heading = "stepmap launch plan";
    std::size_t characters = heading.size();
    if (!title.empty()) {
        heading += " - " + svg::xmlText(title);
        characters += 3 + svg::characterCount(escaped(title));
    }
    const std::string counts = ": " + svg::counted(plan.ranks.size(), "rank") + ", " +
                               svg::counted(plan.appCount(), "app context") + ", " +
                               svg::counted(plan.nodes.size(), "node");
    out.body += svg::text(0, 16, "font-size=\"16\" font-weight=\"bold\"", heading + counts) + "\n";
    out.width = svg::textWidth(characters + counts.size(), 16);

    int x = 0;
    // A swatch (drawn at x by the caller) and its words, on the line at y.
    const auto entry = [&](int y, const std::string &swatch, const std::string &label) {
        out.body += swatch + svg::text(x + 30, y + 12, "font-size=\"11\"", label) + "\n";
        x += 30 + svg::textWidth(label.size(), 11) + 16;
        out.width = std::max(out.width, x);
    };
    const std::uint32_t apps = std::min(plan.appCount(), svg::kAppColours);
    for (std::uint32_t app = 0; app < apps; ++app)
        entry(28,
              svg::rect({x, 28, 24, 16},
                        "class=\"legend\" fill=\"" + svg::appColour(app) + "\" stroke=\"#333\""),
              "app " + std::to_string(app));
    if (plan.appCount() > svg::kAppColours)
        entry(28, "", "(apps " + std::to_string(svg::kAppColours) + " and up reuse these colours)");
    x = 0;
    entry(52,
          svg::rect({x, 52, 24, 16}, "class=\"legend\" fill=\"" + svg::appTint(0) + "\" stroke=\"" +
                                         svg::appColour(0) + "\" stroke-dasharray=\"4 2\""),
          "unbound rank");
    const Box hatched{x, 52, 24, 16};
    entry(52,
          svg::rect(hatched, "class=\"legend\" fill=\"" + svg::appColour(0) + "\"") +
              svg::rect(hatched, std::string("class=\"legend\" fill=\"") + svg::kHatchFill + "\""),
          "rank on a node with more ranks than slots");
    x = 0;
    entry(76, "", "bars: ranks on the PUs they are bound to; numbers: core and PU logical indices");
    out.height = 100;
    return out;
}

std::string document(const std::string &content, int width, int height) {
    const std::string w = std::to_string(width);
    const std::string h = std::to_string(height);
    return "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
           "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" +
           w + "\" height=\"" + h + "\" viewBox=\"0 0 " + w + " " + h +
           "\" font-family=\"DejaVu Sans Mono, monospace\">\n"
           "<defs><pattern id=\"hatch\" width=\"6\" height=\"6\" patternUnits=\"userSpaceOnUse\" "
           "patternTransform=\"rotate(45)\"><rect width=\"2\" height=\"6\" fill=\"#000\" "
           "fill-opacity=\"0.45\"/></pattern></defs>\n"
           "<rect class=\"background\" width=\"100%\" height=\"100%\" fill=\"#fff\"/>\n"
           "<g transform=\"translate(" +
           std::to_string(kMargin) + "," + std::to_string(kMargin) + ")\">\n" + content +
           "</g>\n</svg>\n";
}

} // namespace

std::string formatPlanSvg(const LaunchPlan &plan, const Allocation &allocation,
                          const PlanSvgOptions &options) {
    const auto drawn =
        static_cast<std::uint32_t>(std::min<std::size_t>(plan.nodes.size(), options.maxNodes));
    std::vector<std::vector<std::uint32_t>> ranksOf(drawn);
    for (std::uint32_t rank = 0; rank < plan.ranks.size(); ++rank) {
        if (plan.ranks[rank].node < drawn)
            ranksOf[plan.ranks[rank].node].push_back(rank);
    }
    const std::vector<const NodeModel *> models = drawnModels(plan, allocation, drawn);

    const Drawing legend = drawLegend(plan, options.title);
    std::string content = legend.body;
    // Nodes flow left to right in plan order, a new line past the width.
    const int lineWidth = std::max(legend.width, kLineWidth);
    int width = legend.width;
    int x = 0;
    int y = legend.height + 8;
    int lineHeight = 0;
    std::size_t ranksDrawn = 0;
    for (std::uint32_t node = 0; node < drawn; ++node) {
        const std::vector<std::uint32_t> &ranks = ranksOf[node];
        const bool oversubscribed =
            ranks.size() > static_cast<std::size_t>(std::max(plan.nodes[node].slots, 0));
        const Drawing box =
            svg::drawNode({plan, node, ranks, oversubscribed}, models[node], options);
        if (x > 0 && x + box.width > lineWidth) {
            x = 0;
            y += lineHeight + kNodeGap;
            lineHeight = 0;
        }
        content += "<g class=\"node\" data-node=\"" + svg::xmlText(plan.nodes[node].name) +
                   "\" transform=\"translate(" + std::to_string(x) + "," + std::to_string(y) +
                   ")\">\n" + box.body + "</g>\n";
        width = std::max(width, x + box.width);
        lineHeight = std::max(lineHeight, box.height);
        x += box.width + kNodeGap;
        ranksDrawn += ranks.size();
    }
    y += lineHeight + kNodeGap;
    if (drawn < plan.nodes.size()) {
        const std::string more = "... and " + std::to_string(plan.nodes.size() - drawn) +
                                 " more nodes (" + std::to_string(plan.ranks.size() - ranksDrawn) +
                                 " ranks) not drawn";
        content += svg::text(0, y + 12, "class=\"more-nodes\" font-size=\"12\"", more) + "\n";
        width = std::max(width, svg::textWidth(more.size(), 12));
        y += 20;
    }
    return document(content, width + 2 * kMargin, y + 2 * kMargin);
}

} // namespace stepmap
