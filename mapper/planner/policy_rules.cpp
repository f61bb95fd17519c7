#include "planner/policy_rules.hpp"

#include "base/quote.hpp"
#include "placement/cpu_list.hpp"

namespace stepmap::detail {

std::string mapWord(MapBy by) {
    if (by == MapBy::Default || by == MapBy::Slot)
        return "slot";
    if (by == MapBy::Rankfile)
        return "rankfile";
    if (by == MapBy::Seq)
        return "seq";
    return lowerWord(
        std::string(mapByWord(by)).substr(by == MapBy::Ppr || by == MapBy::PeList ? 0 : 2));
}

bool bindsSomething(const std::optional<BindPolicy> &bind) {
    return bind && bind->to != BindTo::Default && bind->to != BindTo::None;
}

BindingWord bindingWordOf(const BindPolicy &policy) {
    BindingWord word;
    word.policy = policy.to;
    word.ifSupported = policy.ifSupported;
    word.overloadAllowed = policy.overload.value_or(false);
    word.overloadGiven = policy.overload.has_value();
    word.given = policy.to != BindTo::Default;
    return word;
}

BindTo defaultBinding(const MapOptions &options, std::uint32_t nprocs) {
    const BindTo cpu = options.useHwthreads ? BindTo::Hwthread : BindTo::Core;
    if (options.cpusPerRank > 1 || options.map == MapBy::PeList)
        return cpu;
    if (const auto level = levelOf(options.map))
        return bindToOf(*level);
    if (options.map == MapBy::Ppr && options.mapLevel)
        return bindToOf(*options.mapLevel);
    return nprocs <= 2 ? cpu : BindTo::Numa;
}

bool ranksInPlacementOrder(MapBy map, RankBy rank) {
    return map == MapBy::Node && rank == RankBy::Node;
}

RankBy defaultRanking(MapBy map, bool span) {
    if (map == MapBy::Node)
        return RankBy::Node;
    if (map == MapBy::Slot || map == MapBy::Default)
        return RankBy::Slot;
    if (span)
        return RankBy::Span;
    if (levelOf(map))
        return RankBy::Fill;
    return RankBy::Slot;
}

void applyMapPolicy(MapOptions &options, const MapPolicy &map, MapBy by) {
    options.map = by;
    options.mapLevel = levelOf(by);
    options.mapNode = false;
    options.mapDevice = by == MapBy::Device;
    options.mapDepth = depthOf(by);
    options.span = map.span;
    options.ordered = map.ordered;
    options.userRanked = by == MapBy::Seq || by == MapBy::Rankfile;
    if (by == MapBy::Ppr) {
        options.pprn = map.pprCount;
        options.mapLevel = levelOf(map.pprObject);
        options.mapNode = map.pprObject == MapBy::Node;
        options.mapDevice = map.pprObject == MapBy::Device;
        options.mapDepth = 1;
    } else {
        options.pprn = 0;
    }
    if (by == MapBy::PeList) {
        options.cpuset = map.peList;
        options.peListGiven = map.peList;
    }
    if (by == MapBy::Device || (by == MapBy::Ppr && map.pprObject == MapBy::Device)) {
        options.device = map.device;
        options.ndev = map.ndev.value_or(1);
        options.shared = map.shared;
        options.interleave = map.interleave;
    }
    if (map.pe)
        options.cpusPerRank = *map.pe;
    if (map.hwtcpus)
        options.useHwthreads = *map.hwtcpus;
}

std::string describeMap(const MapOptions &options) {
    if (options.map == MapBy::PeList)
        return "pe-list=" + escaped(options.peListGiven);
    return mapWord(options.map);
}

std::optional<UserError> checkCpuBinding(MapOptions &options, BindingWord &word,
                                         std::string_view where) {
    if (options.cpusPerRank > 1 && options.map == MapBy::Core && !options.useHwthreads)
        return UserError{std::string(where) + "PE=" + std::to_string(options.cpusPerRank) +
                         " gives each process several CPUs, but --map-by core places each on "
                         "one core, which is one CPU.\nMap by a wider object (e.g. --map-by "
                         "package:PE=" +
                         std::to_string(options.cpusPerRank) +
                         "), by slot, or add HWTCPUS to count hwthreads as CPUs."};
    if (options.cpusPerRank > 1 && options.map == MapBy::Hwthread)
        return UserError{std::string(where) + "PE=" + std::to_string(options.cpusPerRank) +
                         " gives each process several CPUs, but --map-by hwthread places each "
                         "on one hwthread.\nMap by core, a wider object or by slot."};
    if (options.cpusPerRank <= 1 && !options.ordered)
        return std::nullopt;
    if (word.given) {
        if (word.policy != BindTo::Core && word.policy != BindTo::Hwthread)
            return UserError{std::string(where) + "--bind-to " +
                             lowerWord(bindToWord(word.policy)) + " cannot be combined with " +
                             (options.cpusPerRank > 1 ? "PE=" + std::to_string(options.cpusPerRank)
                                                      : std::string("ORDERED")) +
                             ": processes given their own CPUs are bound to CPUs.\nBind to core "
                             "(or hwthread with HWTCPUS), or drop --bind-to."};
        options.useHwthreads = word.policy == BindTo::Hwthread;
    } else {
        word.policy = options.useHwthreads ? BindTo::Hwthread : BindTo::Core;
        word.given = true;
    }
    options.bind = word.policy;
    return std::nullopt;
}

std::optional<UserError> checkBindAbove(const MapOptions &options, std::string_view where) {
    if (options.bind != BindTo::None && options.mapDepth > depthOf(options.bind))
        return UserError{std::string(where) + "cannot bind to " +
                         lowerWord(bindToWord(options.bind)) + " when mapping by " +
                         describeMap(options) +
                         ": a process is bound to the object it was mapped to or to one "
                         "inside it, and a " +
                         lowerWord(bindToWord(options.bind)) + " lies above a " +
                         std::string(hwLevelName(*options.mapLevel)) + ".\nBind to " +
                         std::string(hwLevelName(*options.mapLevel)) + " or below, or map by " +
                         lowerWord(bindToWord(options.bind)) + "."};
    return std::nullopt;
}

bool coresAreHwthreads(const Allocation &allocation, const std::vector<NodeSlots> &list) {
    bool any = false;
    for (const NodeSlots &entry : list) {
        const NodeModel *model = allocation.nodes[entry.allocIndex].model.get();
        if (model == nullptr)
            continue;
        if (model->puCount() != model->objects(HwLevel::Core).size())
            return false;
        any = true;
    }
    return any;
}

void bindHwthreadForCore(MapOptions &options, bool coresAreHwthreads) {
    if (coresAreHwthreads && options.map == MapBy::Hwthread && options.bind == BindTo::Core)
        options.bind = BindTo::Hwthread;
}

std::optional<UserError> checkRankNeedsObject(const MapOptions &options, std::string_view where) {
    if ((options.rank == RankBy::Fill || options.rank == RankBy::Span) && !options.userRanked &&
        !options.mapLevel)
        return UserError{std::string(where) + "--rank-by " + lowerWord(rankByWord(options.rank)) +
                         " ranks the processes of each object in turn, but mapping by " +
                         describeMap(options) +
                         " puts them on no object.\nMap by an object (e.g. --map-by core "
                         "--rank-by " +
                         lowerWord(rankByWord(options.rank)) + ") or rank by slot or node."};
    return std::nullopt;
}

std::optional<UserError> checkPeList(const MapOptions &options, const std::vector<NodeSlots> &list,
                                     const Allocation &allocation, std::string_view where) {
    if (options.cpuset.empty())
        return std::nullopt;
    for (const NodeSlots &entry : list) {
        const auto &model = allocation.nodes[entry.allocIndex].model;
        if (!model)
            continue;
        auto resolved = resolveIdList(options.cpuset, *model, options.useHwthreads);
        if (!resolved)
            return UserError{std::string(where) +
                             "--map-by pe-list=" + escaped(options.peListGiven) + " on node " +
                             std::string(entry.name) + ": " + resolved.error().message};
    }
    return std::nullopt;
}

} // namespace stepmap::detail
