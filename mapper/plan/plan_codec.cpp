// encodePlan and decodePlan (declared in launch_plan.hpp).

#include "plan/launch_plan.hpp"

#include <array>
#include <limits>
#include <unordered_set>

#include "base/parse_number.hpp"
#include "base/quote.hpp"
#include "hosts/hostlist.hpp"
#include "hosts/node_model.hpp"
#include "plan/rank_blocks.hpp"

namespace stepmap {

namespace {

constexpr std::string_view kVersion = "SM1";
constexpr std::string_view kVersion2 = "SM2";
constexpr std::size_t kFieldCount = 6;
constexpr std::size_t kMaxFields = 11;
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

// Plan text in a message: quoted, escaped, cut.
std::string excerpt(std::string_view text) {
    return quoted(text, kExcerpt);
}

UserError invalid(std::string_view what) {
    return UserError{"invalid stepmap plan: " + std::string(what)};
}

// Parses formatCounts' output back into exactly `count` values.
Expected<std::vector<std::optional<int>>> parseCounts(std::string_view text, std::size_t count,
                                                      bool allowMissing, std::string_view what) {
    const auto fail = [&] {
        return invalid(std::string(what) + " " + excerpt(text) + " do not give one positive " +
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
    std::vector<std::uint32_t> values;
    values.reserve(plan.ranks.size());
    for (const RankPlacement &rank : plan.ranks)
        values.push_back(rank.node);

    bool manyApps = false;
    bool bound = false;
    for (const RankPlacement &rank : plan.ranks) {
        manyApps = manyApps || rank.app != 0;
        bound = bound || rank.binding != kUnbound;
    }
    const bool devices = !plan.rankDevices.empty();
    const bool extended = manyApps || bound || devices;

    std::string out(extended ? kVersion2 : kVersion);
    out += ';' + compressHostlist(names);
    out += ';' + formatCounts(slots);
    out += ';' + formatCounts(maxSlots);
    // Flags: 1 oversubscribed, plus 2 x the binding request (0-2), then 'M'
    // when bound ranks bind their memory too.
    out +=
        ';' +
        std::to_string((plan.oversubscribed ? 1 : 0) + 2 * static_cast<int>(plan.bindingRequest)) +
        (plan.bindMemory ? "M" : "") + ';';
    out += detail::formatBlocks(detail::blocksFromNodes(values));
    if (!extended)
        return out;

    values.clear();
    for (const RankPlacement &rank : plan.ranks)
        values.push_back(rank.app);
    out += ';' + detail::formatBlocks(detail::blocksFromNodes(values));
    out += ';';
    for (std::size_t i = 0; i < plan.bindings.size(); ++i) {
        if (i > 0)
            out += '/';
        out += formatIdList(plan.bindings[i].logical);
        if (plan.bindings[i].os != plan.bindings[i].logical)
            out += '@' + formatIdList(plan.bindings[i].os);
    }
    values.clear();
    for (const RankPlacement &rank : plan.ranks)
        values.push_back(rank.binding == kUnbound ? 0 : rank.binding + 1);
    out += ';' + detail::formatBlocks(detail::blocksFromNodes(values));
    if (devices) {
        out += ';';
        for (std::size_t i = 0; i < plan.deviceSets.size(); ++i) {
            if (i > 0)
                out += '/';
            out += plan.deviceSets[i];
        }
        values.clear();
        for (std::uint32_t device : plan.rankDevices)
            values.push_back(device == kUnbound ? 0 : device + 1);
        out += ';' + detail::formatBlocks(detail::blocksFromNodes(values));
    }
    return out;
}

namespace {

// Splits at '/' (nothing for an empty text).
std::vector<std::string_view> splitSlashes(std::string_view text) {
    std::vector<std::string_view> parts;
    if (text.empty())
        return parts;
    std::size_t pos = 0;
    while (true) {
        const std::size_t slash = text.find('/', pos);
        parts.push_back(text.substr(pos, slash == std::string_view::npos ? std::string_view::npos
                                                                         : slash - pos));
        if (slash == std::string_view::npos)
            return parts;
        pos = slash + 1;
    }
}

// Per-rank values as blocks: exactly `ranks` values below `bound` (never
// more than `ranks` expanded).
Expected<std::vector<std::uint32_t>> perRank(std::string_view text, std::size_t ranks,
                                             std::size_t bound, std::string_view what) {
    if (bound > std::numeric_limits<std::uint32_t>::max())
        return invalid(std::string(what) + ": too many values");
    auto values = detail::nodesFromBlocks(text, static_cast<std::uint32_t>(bound), ranks);
    if (!values)
        return invalid(std::string(what) + ": " + values.error().message);
    if (values->size() != ranks)
        return invalid(std::string(what) + " give " + std::to_string(values->size()) +
                       " values for " + std::to_string(ranks) + " ranks");
    return values;
}

bool validDeviceName(std::string_view name) {
    if (name.empty())
        return false;
    for (char c : name) {
        const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
                        (c >= '0' && c <= '9') || c == '_' || c == '-' || c == '.' || c == ':' ||
                        c == ',';
        if (!ok)
            return false;
    }
    return true;
}

// The plan's CPU sets, '/'-separated "LOGICAL[@OS]": each id at most
// maxCpuId, each set without repeats, maxCpuSetIds ids in all.
Expected<std::vector<CpuBinding>> parseCpuSets(std::string_view text, const PlanLimits &limits) {
    std::vector<CpuBinding> sets;
    std::size_t total = 0;
    // One set never holds more ids than there are CPU ids.
    const IdListLimits setLimits{limits.maxCpuId, std::size_t{limits.maxCpuId} + 1};
    for (const std::string_view entry : splitSlashes(text)) {
        const std::size_t at = entry.find('@');
        auto logical = parseCpuIdList(entry.substr(0, at), setLimits);
        if (!logical)
            return invalid("CPU set " + excerpt(entry) + ": " + logical.error().message);
        auto os = at == std::string_view::npos ? logical
                                               : parseCpuIdList(entry.substr(at + 1), setLimits);
        if (!os)
            return invalid("CPU set " + excerpt(entry) + ": " + os.error().message);
        if (logical->empty() || os->size() != logical->size())
            return invalid("CPU set " + excerpt(entry) +
                           " is not LOGICAL[@OS] with as many OS as logical indices");
        total += logical->size();
        if (total > limits.maxCpuSetIds)
            return invalid("the CPU sets hold more than " + std::to_string(limits.maxCpuSetIds) +
                           " CPU ids together");
        sets.push_back(CpuBinding{std::move(logical.value()), std::move(os.value())});
    }
    return sets;
}

// The fields of a plan's text, its version checked.
struct PlanFields {
    std::array<std::string_view, kMaxFields> at;
    std::size_t count = 0;
    bool extended = false; // SM2
};

Expected<PlanFields> splitFields(std::string_view text) {
    PlanFields fields;
    std::size_t pos = 0;
    while (true) {
        const std::size_t semicolon = text.find(';', pos);
        if (fields.count == kMaxFields)
            return invalid("too many fields separated by ';'");
        fields.at[fields.count++] = text.substr(
            pos, semicolon == std::string_view::npos ? std::string_view::npos : semicolon - pos);
        if (semicolon == std::string_view::npos)
            break;
        pos = semicolon + 1;
    }
    fields.extended = fields.at[0] == kVersion2;
    if (fields.at[0] != kVersion && !fields.extended)
        return invalid("it does not start with the version tag " + std::string(kVersion) + " or " +
                       std::string(kVersion2) + " (got " + excerpt(fields.at[0]) + ")");
    if (!fields.extended && fields.count != kFieldCount)
        return invalid("expected " + std::to_string(kFieldCount) + " fields separated by ';'");
    if (fields.extended && fields.count != kFieldCount + 3 && fields.count != kFieldCount + 5)
        return invalid("expected " + std::to_string(kFieldCount + 3) + " or " +
                       std::to_string(kFieldCount + 5) + " fields separated by ';'");
    return fields;
}

// The node list: each name once.
Expected<std::vector<std::string>> decodeNodeNames(std::string_view field,
                                                   const PlanLimits &limits) {
    HostlistLimits nameLimits;
    nameLimits.maxNames = limits.maxNodes;
    nameLimits.maxNameLength = limits.maxNodeNameLength;
    auto names = expandHostlist(field, nameLimits);
    if (!names)
        return invalid("node list: " + names.error().message);
    std::unordered_set<std::string_view> seen;
    for (const std::string &name : names.value()) {
        if (!seen.insert(name).second)
            return invalid("node " + name + " is listed twice");
    }
    return names;
}

// SM1's fields: nodes, slots, max_slots, flags and each rank's node.
Expected<LaunchPlan> decodeBase(const PlanFields &fields, const PlanLimits &limits) {
    auto names = decodeNodeNames(fields.at[1], limits);
    if (!names)
        return names.error();
    auto slots = parseCounts(fields.at[2], names->size(), false, "slot counts");
    if (!slots)
        return slots.error();
    auto maxSlots = parseCounts(fields.at[3], names->size(), true, "max_slots counts");
    if (!maxSlots)
        return maxSlots.error();
    const std::string_view flags = fields.at[4];
    if (flags.empty() || flags.size() > 2 || flags[0] < '0' || flags[0] > '5' ||
        (flags.size() == 2 && flags[1] != 'M'))
        return invalid("the flags field is " + excerpt(flags) +
                       ", not a digit from 0 to 5, optionally followed by M");
    auto rankNodes = detail::nodesFromBlocks(
        fields.at[5], static_cast<std::uint32_t>(names->size()), limits.maxRanks);
    if (!rankNodes)
        return invalid("ranks: " + rankNodes.error().message);
    LaunchPlan plan;
    plan.nodes.reserve(names->size());
    for (std::size_t i = 0; i < names->size(); ++i)
        plan.nodes.push_back(PlannedNode{std::move((*names)[i]), *(*slots)[i], (*maxSlots)[i]});
    plan.ranks.reserve(rankNodes->size());
    for (std::uint32_t node : rankNodes.value())
        plan.ranks.push_back(RankPlacement{node, 0, 0});
    plan.oversubscribed = (flags[0] - '0') % 2 == 1;
    plan.bindingRequest = static_cast<BindingRequest>((flags[0] - '0') / 2);
    plan.bindMemory = flags.size() == 2;
    return plan;
}

// SM2's devices: the device sets and each rank's.
std::optional<UserError> decodeDevices(LaunchPlan &plan, const PlanFields &fields) {
    for (const std::string_view entry : splitSlashes(fields.at[9])) {
        if (!validDeviceName(entry))
            return invalid("device list " + excerpt(entry) + " is not a list of names");
        plan.deviceSets.emplace_back(entry);
    }
    const std::size_t ranks = plan.ranks.size();
    auto devices = perRank(fields.at[10], ranks, plan.deviceSets.size() + 1, "devices");
    if (!devices)
        return devices.error();
    plan.rankDevices.reserve(ranks);
    for (std::uint32_t device : devices.value())
        plan.rankDevices.push_back(device == 0 ? kUnbound : device - 1);
    return std::nullopt;
}

// SM2's fields: each rank's application and binding, the CPU sets, and the
// devices when present.
std::optional<UserError> decodeExtended(LaunchPlan &plan, const PlanFields &fields,
                                        const PlanLimits &limits) {
    const std::size_t ranks = plan.ranks.size();
    auto apps = perRank(fields.at[6], ranks, ranks, "application indices");
    if (!apps)
        return apps.error();
    auto sets = parseCpuSets(fields.at[7], limits);
    if (!sets)
        return sets.error();
    plan.bindings = std::move(sets.value());
    auto bindings = perRank(fields.at[8], ranks, plan.bindings.size() + 1, "bindings");
    if (!bindings)
        return bindings.error();
    for (std::size_t r = 0; r < ranks; ++r) {
        plan.ranks[r].app = (*apps)[r];
        plan.ranks[r].binding = (*bindings)[r] == 0 ? kUnbound : (*bindings)[r] - 1;
    }
    if (fields.count == kFieldCount + 5)
        return decodeDevices(plan, fields);
    return std::nullopt;
}

} // namespace

Expected<LaunchPlan> decodePlan(std::string_view text, const PlanLimits &limits) {
    if (text.size() > limits.maxTextBytes)
        return invalid("it is " + std::to_string(text.size()) + " bytes long, more than " +
                       std::to_string(limits.maxTextBytes));
    auto fields = splitFields(text);
    if (!fields)
        return fields.error();
    auto plan = decodeBase(fields.value(), limits);
    if (!plan)
        return plan.error();
    if (fields.value().extended)
        if (auto error = decodeExtended(plan.value(), fields.value(), limits))
            return *error;
    assignLocalRanks(plan.value());
    return plan;
}

} // namespace stepmap
