// The cores of one node and the ranks bound to them (plan_svg_parts.hpp).

#include <algorithm>
#include <map>

#include "plan/plan_svg_parts.hpp"

namespace stepmap::svg {

namespace {

constexpr int kCell = 16;             // a PU's square
constexpr int kCoreGap = 4;           // between cores in a row
constexpr int kLane = 16;             // one lane of rank bars
constexpr std::uint32_t kRowPus = 64; // PUs per row before it wraps at a core
constexpr int kInset = 8;             // a frame's padding around what it holds

// A run of consecutive local PUs [first, last] one rank is bound to.
struct Segment {
    std::uint32_t rank = 0;
    std::uint32_t first = 0;
    std::uint32_t last = 0;
};

// A lane of bars under a row: the row's PUs it already covers.
struct Lane {
    std::vector<bool> taken;
    std::vector<Segment> segments;
};

struct Row {
    std::uint32_t first = 0; // local PUs [first, first + count)
    std::uint32_t count = 0;
    std::uint32_t package = kNoIndex; // object indices, kNoIndex: no such level
    std::uint32_t numa = kNoIndex;
    std::vector<Lane> lanes;
    std::size_t droppedRanks = 0; // ranks with a run no lane had room for
    std::uint32_t lastDropped = kUnbound;
};

bool startsCore(const NodeModel &model, std::uint32_t pu) {
    const std::uint32_t core = model.objectOf(HwLevel::Core, pu);
    return core == kNoIndex || model.objects(HwLevel::Core)[core].firstPu == pu;
}

// Rows of PUs: a new one at each package or NUMA domain, and where a row
// reaches kRowPus at a core's start (twice that inside a core, which no
// real machine has).
std::vector<Row> splitRows(const NodeModel &model) {
    std::vector<Row> rows;
    for (std::uint32_t pu = 0; pu < model.puCount(); ++pu) {
        const std::uint32_t package = model.objectOf(HwLevel::Package, pu);
        const std::uint32_t numa = model.objectOf(HwLevel::Numa, pu);
        const bool full =
            !rows.empty() && (rows.back().count >= 2 * kRowPus ||
                              (rows.back().count >= kRowPus && startsCore(model, pu)));
        if (rows.empty() || rows.back().package != package || rows.back().numa != numa || full)
            rows.push_back(Row{.first = pu, .package = package, .numa = numa});
        ++rows.back().count;
    }
    return rows;
}

// Each PU's x; returns the widest row's width.
int placeColumns(const NodeModel &model, const std::vector<Row> &rows, int left,
                 std::vector<int> &x) {
    x.assign(model.puCount(), 0);
    int widest = 0;
    for (const Row &row : rows) {
        int at = left;
        for (std::uint32_t pu = row.first; pu < row.first + row.count; ++pu) {
            if (pu != row.first && startsCore(model, pu))
                at += kCoreGap;
            x[pu] = at;
            at += kCell;
        }
        widest = std::max(widest, at - left);
    }
    return widest;
}

// First fit, in rank order: the first lane free over the whole run, a new
// lane while there may be more, else the rank is counted as not drawn.
// Memory stays bounded by what is drawn, however many ranks share the PUs.
void placeSegment(Row &row, const Segment &segment, std::uint32_t maxLanes) {
    const std::uint32_t from = segment.first - row.first;
    const std::uint32_t to = segment.last - row.first;
    const auto isFree = [&](const Lane &lane) {
        return std::none_of(lane.taken.begin() + from, lane.taken.begin() + to + 1,
                            [](bool taken) { return taken; });
    };
    auto lane = std::find_if(row.lanes.begin(), row.lanes.end(), isFree);
    if (lane == row.lanes.end()) {
        if (row.lanes.size() >= maxLanes) {
            if (row.lastDropped != segment.rank)
                ++row.droppedRanks;
            row.lastDropped = segment.rank;
            return;
        }
        lane = row.lanes.insert(row.lanes.end(), Lane{std::vector<bool>(row.count, false), {}});
    }
    std::fill(lane->taken.begin() + from, lane->taken.begin() + to + 1, true);
    lane->segments.push_back(segment);
}

// Splits each bound rank's PUs into runs within one row; ranks with no PU
// of the model go to `notDrawn`.
void addSegments(const NodeRanks &node, const NodeModel &model, std::uint32_t maxLanes,
                 std::vector<Row> &rows, std::vector<std::uint32_t> &notDrawn) {
    std::vector<std::uint32_t> rowOf(model.puCount());
    for (std::uint32_t r = 0; r < rows.size(); ++r)
        std::fill_n(rowOf.begin() + rows[r].first, rows[r].count, r);
    std::map<std::uint32_t, std::vector<std::uint32_t>> pusOfBinding; // local PUs, ascending
    for (std::uint32_t rank : node.ranks) {
        const std::uint32_t binding = node.plan.ranks[rank].binding;
        if (binding == kUnbound) {
            notDrawn.push_back(rank);
            continue;
        }
        auto [it, inserted] = pusOfBinding.try_emplace(binding);
        if (inserted) {
            for (std::uint32_t logical : node.plan.bindings[binding].logical)
                if (const auto pu = model.puFromLogical(logical))
                    it->second.push_back(*pu);
            std::sort(it->second.begin(), it->second.end());
        }
        const std::vector<std::uint32_t> &pus = it->second;
        if (pus.empty())
            notDrawn.push_back(rank);
        for (std::size_t i = 0; i < pus.size();) {
            std::size_t end = i;
            while (end + 1 < pus.size() && pus[end + 1] == pus[end] + 1 &&
                   rowOf[pus[end + 1]] == rowOf[pus[i]])
                ++end;
            placeSegment(rows[rowOf[pus[i]]], Segment{rank, pus[i], pus[end]}, maxLanes);
            i = end + 1;
        }
    }
}

std::string smallText(int x, int y, const std::string &content) {
    return text(x, y, "font-size=\"7\" text-anchor=\"middle\" fill=\"#555\"", content);
}

// One row at `top`: core numbers, core boxes with their PU squares (PU
// numbers when cores hold several), then the lanes. Returns its height.
int drawRow(const NodeRanks &node, const NodeModel &model, const Row &row,
            const std::vector<int> &x, int top, std::string &out) {
    const auto &cores = model.objects(HwLevel::Core);
    const std::uint32_t end = row.first + row.count;
    for (std::uint32_t pu = row.first; pu < end; ++pu) {
        if (pu == row.first || startsCore(model, pu)) {
            const HwObject &core = cores[model.objectOf(HwLevel::Core, pu)];
            const std::uint32_t last = std::min(core.firstPu + core.puCount, end) - 1;
            const int width = x[last] + kCell - x[pu];
            out += smallText(x[pu] + width / 2, top + 8, std::to_string(core.logicalIndex)) + "\n";
            out += rect({x[pu] - 1, top + 10, width + 2, kCell + 2},
                        "class=\"core\" fill=\"#d9d9d9\" stroke=\"#888\"") +
                   "\n";
        }
        out += rect({x[pu] + 1, top + 12, kCell - 2, kCell - 2}, "class=\"pu\" fill=\"#fff\"");
        if (model.hasHwthreads())
            out += smallText(x[pu] + kCell / 2, top + 22, std::to_string(model.puLogical(pu)));
        out += '\n';
    }
    const int laneTop = top + 14 + kCell;
    for (std::size_t lane = 0; lane < row.lanes.size(); ++lane) {
        for (const Segment &segment : row.lanes[lane].segments) {
            const Box box{x[segment.first], laneTop + static_cast<int>(lane) * kLane,
                          x[segment.last] + kCell - x[segment.first], kLane - 2};
            // The rank's number, smaller where 9 px does not fit, left out
            // where 7 px does not either (the tooltip still says).
            const std::string number = std::to_string(segment.rank);
            const int font = textWidth(number.size(), 9) + 2 <= box.width ? 9 : 7;
            out += rankMark({.rank = segment.rank,
                             .app = node.plan.ranks[segment.rank].app,
                             .box = box,
                             .oversubscribed = node.oversubscribed,
                             .title = rankTitle(node.plan, segment.rank),
                             .label = textWidth(number.size(), font) + 2 <= box.width ? number : "",
                             .labelFont = font});
        }
    }
    int height = 14 + kCell + static_cast<int>(row.lanes.size()) * kLane + 4;
    if (row.droppedRanks > 0) {
        out += text(x[row.first], top + height + 8, "class=\"more-ranks\" font-size=\"9\"",
                    "... and " + std::to_string(row.droppedRanks) +
                        " more ranks bound here (lanes full)") +
               "\n";
        height += 12;
    }
    return height;
}

std::string frameLabel(int x, int y, const char *level, std::uint32_t logicalIndex) {
    return text(x, y, "font-size=\"10\" fill=\"#333\"",
                std::string(level) + " L#" + std::to_string(logicalIndex)) +
           "\n";
}

} // namespace

Drawing drawCores(const NodeRanks &node, const NodeModel &model, int left, int top,
                  const PlanSvgOptions &options, std::vector<std::uint32_t> &notDrawn) {
    std::vector<Row> rows = splitRows(model);
    std::vector<int> x;
    const int rowsWidth = placeColumns(model, rows, left + 2 * kInset, x);
    addSegments(node, model, std::max<std::uint32_t>(options.maxLanes, 1), rows, notDrawn);

    const auto &packages = model.objects(HwLevel::Package);
    const auto &numas = model.objects(HwLevel::Numa);
    std::string frames;
    std::string content;
    int y = top;
    for (std::size_t r = 0; r < rows.size();) {
        // One package's rows, and within them one NUMA domain's.
        const std::uint32_t package = rows[r].package;
        const int packageTop = y;
        const std::size_t packageFrameAt = frames.size(); // drawn under its NUMA frames
        if (package != kNoIndex)
            content += frameLabel(left + 4, y + 12, "package", packages[package].logicalIndex);
        y += 16;
        while (r < rows.size() && rows[r].package == package) {
            const std::uint32_t numa = rows[r].numa;
            const int numaTop = y;
            if (numa != kNoIndex)
                content += frameLabel(left + kInset + 4, y + 12, "NUMA", numas[numa].logicalIndex);
            y += 14;
            for (; r < rows.size() && rows[r].package == package && rows[r].numa == numa; ++r)
                y += drawRow(node, model, rows[r], x, y, content);
            if (numa != kNoIndex)
                frames += rect({left + kInset, numaTop, rowsWidth + 2 * kInset, y - numaTop},
                               "class=\"numa\" fill=\"#eef3f8\" stroke=\"#7f9fbf\"") +
                          "\n";
            y += 4;
        }
        if (package != kNoIndex)
            frames.insert(packageFrameAt,
                          rect({left, packageTop, rowsWidth + 4 * kInset, y - packageTop},
                               "class=\"package\" fill=\"#f4f4f4\" stroke=\"#555\"") +
                              "\n");
        y += 6;
    }
    return Drawing{frames + content, rowsWidth + 4 * kInset, y - top};
}

} // namespace stepmap::svg
