// encodePlan and decodePlan (declared in launch_plan.hpp).

#include "launch_plan.hpp"

#include <array>
#include <limits>
#include <unordered_set>

#include "hostlist.hpp"
#include "parse_number.hpp"
#include "rank_blocks.hpp"

namespace stepmap {

namespace {

constexpr std::string_view kVersion = "SM1";
constexpr std::size_t kFieldCount = 6;
constexpr std::size_t kExcerpt = 64;

// Runs of equal values as "value*repeat", a missing value as "-".
std::string formatCounts(const std::vector<std::optional<int>> &values) {
    std::string out;
    std::size_t i = 0;
    while (i < values.size()) {
        std::size_t end = i;
        while (end < values.size() && values[end] == values[i])
            ++end;
        if (!out.empty())
            out += ',';
        out += values[i] ? std::to_string(*values[i]) : "-";
        if (end - i > 1) {
            out += '*';
            out += std::to_string(end - i);
        }
        i = end;
    }
    return out;
}

std::string excerpt(std::string_view text) {
    if (text.size() <= kExcerpt)
        return std::string(text);
    return std::string(text.substr(0, kExcerpt)) + "...";
}

UserError invalid(std::string_view what) {
    return UserError{"invalid stepmap plan: " + std::string(what)};
}

// Parses formatCounts' output back into exactly `count` values.
Expected<std::vector<std::optional<int>>> parseCounts(std::string_view text, std::size_t count,
                                                      bool allowMissing, std::string_view what) {
    const auto fail = [&] {
        return invalid(std::string(what) + " '" + excerpt(text) + "' do not give one positive " +
                       "number per node (" + std::to_string(count) + " nodes)");
    };
    std::vector<std::optional<int>> values;
    std::size_t pos = 0;
    while (true) {
        const std::size_t comma = text.find(',', pos);
        std::string_view item = text.substr(
            pos, comma == std::string_view::npos ? std::string_view::npos : comma - pos);
        std::uint64_t repeat = 1;
        const std::size_t star = item.find('*');
        if (star != std::string_view::npos) {
            const auto parsed = detail::parseUnsigned(item.substr(star + 1), count);
            if (!parsed || *parsed < 2)
                return fail();
            repeat = *parsed;
            item = item.substr(0, star);
        }
        std::optional<int> value;
        if (!(allowMissing && item == "-")) {
            value = detail::parsePositiveInt(item);
            if (!value)
                return fail();
        }
        if (repeat > count - values.size())
            return fail();
        values.insert(values.end(), repeat, value);
        if (comma == std::string_view::npos)
            break;
        pos = comma + 1;
    }
    if (values.size() != count)
        return fail();
    return values;
}

} // namespace

std::string encodePlan(const LaunchPlan &plan) {
    std::vector<std::string> names;
    std::vector<std::optional<int>> slots;
    std::vector<std::optional<int>> maxSlots;
    names.reserve(plan.nodes.size());
    for (const PlannedNode &node : plan.nodes) {
        names.push_back(node.name);
        slots.emplace_back(node.slots);
        maxSlots.push_back(node.maxSlots);
    }
    std::vector<std::uint32_t> rankNodes;
    rankNodes.reserve(plan.ranks.size());
    for (const RankPlacement &rank : plan.ranks)
        rankNodes.push_back(rank.node);

    std::string out(kVersion);
    out += ';' + compressHostlist(names);
    out += ';' + formatCounts(slots);
    out += ';' + formatCounts(maxSlots);
    out += plan.oversubscribed ? ";1;" : ";0;";
    out += detail::formatBlocks(detail::blocksFromNodes(rankNodes));
    return out;
}

Expected<LaunchPlan> decodePlan(std::string_view text) {
    std::array<std::string_view, kFieldCount> fields;
    std::size_t count = 0;
    std::size_t pos = 0;
    while (true) {
        const std::size_t semicolon = text.find(';', pos);
        if (count == kFieldCount)
            return invalid("expected " + std::to_string(kFieldCount) + " fields separated by ';'");
        fields[count++] = text.substr(
            pos, semicolon == std::string_view::npos ? std::string_view::npos : semicolon - pos);
        if (semicolon == std::string_view::npos)
            break;
        pos = semicolon + 1;
    }
    if (fields[0] != kVersion)
        return invalid("it does not start with the version tag " + std::string(kVersion) +
                       " (got '" + excerpt(fields[0]) + "')");
    if (count != kFieldCount)
        return invalid("expected " + std::to_string(kFieldCount) + " fields separated by ';'");

    auto names = expandHostlist(fields[1]);
    if (!names)
        return invalid("node list: " + names.error().message);
    if (names->size() > std::numeric_limits<std::uint32_t>::max())
        return invalid("too many nodes");
    std::unordered_set<std::string_view> seen;
    for (const std::string &name : names.value()) {
        if (!seen.insert(name).second)
            return invalid("node " + name + " is listed twice");
    }

    auto slots = parseCounts(fields[2], names->size(), false, "slot counts");
    if (!slots)
        return slots.error();
    auto maxSlots = parseCounts(fields[3], names->size(), true, "max_slots counts");
    if (!maxSlots)
        return maxSlots.error();
    if (fields[4] != "0" && fields[4] != "1")
        return invalid("the oversubscribed flag is '" + excerpt(fields[4]) + "', not 0 or 1");
    auto rankNodes =
        detail::nodesFromBlocks(fields[5], static_cast<std::uint32_t>(names->size()), kMaxRanks);
    if (!rankNodes)
        return invalid("ranks: " + rankNodes.error().message);

    LaunchPlan plan;
    plan.nodes.reserve(names->size());
    for (std::size_t i = 0; i < names->size(); ++i)
        plan.nodes.push_back(PlannedNode{std::move((*names)[i]), *(*slots)[i], (*maxSlots)[i]});
    plan.ranks.reserve(rankNodes->size());
    for (std::uint32_t node : rankNodes.value())
        plan.ranks.push_back(RankPlacement{node, 0, 0});
    plan.oversubscribed = fields[4] == "1";
    assignLocalRanks(plan);
    return plan;
}

} // namespace stepmap
