#include "planner/planner.hpp"

#include <algorithm>
#include <string>

#include "base/quote.hpp"
#include "hosts/node_filter.hpp"
#include "placement/cpu_list.hpp"
#include "placement/parastation_placement.hpp"
#include "placement/placement.hpp"
#include "placement/slot_errors.hpp"
#include "plan/job_map.hpp"

namespace stepmap {

namespace {

using detail::BindingWord;
using detail::MapOptions;
using detail::MappingWord;
using detail::RankingWord;

std::optional<UserError> checkPolicy(const PlanRequest &request) {
    if (request.np && *request.np < 1)
        return UserError{"the number of processes must be a positive number, got " +
                         std::to_string(*request.np) + " (use -n N with N >= 1)"};
    if (request.np && *request.np > kMaxRanks)
        return UserError{"too many processes: " + std::to_string(*request.np) +
                         " requested, stepmap places at most " + std::to_string(kMaxRanks)};
    if (request.overbook && request.map.by == MapBy::Node && request.map.oversubscribe == true)
        return UserError{"--overbook cannot be combined with --map-by node: --overbook places "
                         "consecutive ranks on each node, while --map-by node:OVERSUBSCRIBE "
                         "already keeps round-robin placement past the slots. Drop --overbook."};
    if (request.overbook && request.map.by == MapBy::Node)
        return UserError{"--overbook cannot be combined with --map-by node: --overbook places "
                         "consecutive ranks on each node. Use --map-by node:OVERSUBSCRIBE to "
                         "keep round-robin placement past the slots, or drop --map-by node."};
    if (request.overbook && request.map.oversubscribe == false)
        return UserError{"--overbook oversubscribes when needed, but --map-by says "
                         "NOOVERSUBSCRIBE: drop one of them."};
    if (request.overbook && request.map.by != MapBy::Default && request.map.by != MapBy::Slot)
        return UserError{"--overbook places consecutive ranks on each node; it cannot be "
                         "combined with --map-by " +
                         std::string(mapByWord(request.map.by)).substr(2) + ": drop one of them."};
    for (std::size_t a = 0; a < request.apps.size(); ++a) {
        const auto &np = request.apps[a].np;
        if (np && (*np < 1 || *np > kMaxRanks))
            return UserError{"application context " + std::to_string(a) +
                             ": the number of processes must be from 1 to " +
                             std::to_string(kMaxRanks) + ", got " + std::to_string(*np)};
    }
    return std::nullopt;
}

std::string lower(std::string_view text) {
    std::string out(text);
    for (char &c : out)
        c = static_cast<char>(c >= 'A' && c <= 'Z' ? c - 'A' + 'a' : c);
    return out;
}

std::string mapWord(MapBy by) {
    if (by == MapBy::Default || by == MapBy::Slot)
        return "slot";
    if (by == MapBy::Rankfile)
        return "rankfile";
    if (by == MapBy::Seq)
        return "seq";
    return lower(
        std::string(mapByWord(by)).substr(by == MapBy::Ppr || by == MapBy::PeList ? 0 : 2));
}

bool isObject(MapBy by) {
    return detail::levelOf(by).has_value();
}

// Whether a policy needs to see the nodes' hardware.
bool needsTopology(const MapPolicy &map) {
    return isObject(map.by) || map.by == MapBy::PeList || map.by == MapBy::Device ||
           (map.by == MapBy::Ppr && map.pprObject != MapBy::Node) || map.pe.value_or(1) > 1;
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

// The default binding for a mapping (PRRTE's set_default_binding and
// derive_binding: the same rules at job and application level).
BindTo defaultBinding(const MapOptions &options, std::uint32_t nprocs) {
    const BindTo cpu = options.useHwthreads ? BindTo::Hwthread : BindTo::Core;
    if (options.cpusPerRank > 1)
        return cpu;
    switch (options.map) {
    case MapBy::Hwthread:
        return BindTo::Hwthread;
    case MapBy::Core:
        return BindTo::Core;
    case MapBy::L1Cache:
        return BindTo::L1Cache;
    case MapBy::L2Cache:
        return BindTo::L2Cache;
    case MapBy::L3Cache:
        return BindTo::L3Cache;
    case MapBy::Numa:
        return BindTo::Numa;
    case MapBy::Package:
        return BindTo::Package;
    case MapBy::PeList:
        return cpu;
    case MapBy::Ppr:
        if (options.mapLevel)
            return options.mapLevel == HwLevel::Pu        ? BindTo::Hwthread
                   : options.mapLevel == HwLevel::Core    ? BindTo::Core
                   : options.mapLevel == HwLevel::L1Cache ? BindTo::L1Cache
                   : options.mapLevel == HwLevel::L2Cache ? BindTo::L2Cache
                   : options.mapLevel == HwLevel::L3Cache ? BindTo::L3Cache
                   : options.mapLevel == HwLevel::Numa    ? BindTo::Numa
                                                          : BindTo::Package;
        break;
    default:
        break;
    }
    return nprocs <= 2 ? cpu : BindTo::Numa;
}

RankBy defaultRanking(MapBy map, bool span) {
    if (map == MapBy::Node)
        return RankBy::Node;
    if (map == MapBy::Slot || map == MapBy::Default)
        return RankBy::Slot;
    if (span)
        return RankBy::Span;
    if (isObject(map))
        return RankBy::Fill;
    return RankBy::Slot;
}

// The options one mapping policy brings (object level, ppr, pe-list...).
void applyMapPolicy(MapOptions &options, const MapPolicy &map, MapBy by) {
    options.map = by;
    options.mapLevel = detail::levelOf(by);
    options.mapNode = false;
    options.mapDevice = by == MapBy::Device;
    options.mapDepth = detail::depthOf(by);
    options.span = map.span;
    options.ordered = map.ordered;
    options.userRanked = by == MapBy::Seq || by == MapBy::Rankfile;
    if (by == MapBy::Ppr) {
        options.pprn = map.pprCount;
        options.mapLevel = detail::levelOf(map.pprObject);
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

// PE=n and ORDERED bind each process to CPUs: the binding must be core or
// hwthread (forced when not given). Also the levels PE=n cannot map by.
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
            return UserError{std::string(where) + "--bind-to " + lower(bindToWord(word.policy)) +
                             " cannot be combined with " +
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
    if (options.bind != BindTo::None && options.mapDepth > detail::depthOf(options.bind))
        return UserError{std::string(where) + "cannot bind to " + lower(bindToWord(options.bind)) +
                         " when mapping by " + describeMap(options) +
                         ": a process is bound to the object it was mapped to or to one "
                         "inside it, and a " +
                         lower(bindToWord(options.bind)) + " lies above a " +
                         std::string(hwLevelName(*options.mapLevel)) + ".\nBind to " +
                         std::string(hwLevelName(*options.mapLevel)) + " or below, or map by " +
                         lower(bindToWord(options.bind)) + "."};
    return std::nullopt;
}

std::optional<UserError> checkRankNeedsObject(const MapOptions &options, std::string_view where) {
    if ((options.rank == RankBy::Fill || options.rank == RankBy::Span) && !options.userRanked &&
        !options.mapLevel)
        return UserError{std::string(where) + "--rank-by " + lower(rankByWord(options.rank)) +
                         " ranks the processes of each object in turn, but mapping by " +
                         describeMap(options) +
                         " puts them on no object.\nMap by an object (e.g. --map-by core "
                         "--rank-by " +
                         lower(rankByWord(options.rank)) + ") or rank by slot or node."};
    return std::nullopt;
}

// A pe-list's ids must exist on every node of the list.
std::optional<UserError> checkPeList(const MapOptions &options,
                                     const std::vector<detail::NodeSlots> &list,
                                     const Allocation &allocation, std::string_view where) {
    if (options.cpuset.empty())
        return std::nullopt;
    for (const detail::NodeSlots &entry : list) {
        const auto &model = allocation.nodes[entry.allocIndex].model;
        if (!model)
            continue;
        auto resolved = detail::resolveIdList(options.cpuset, *model, options.useHwthreads);
        if (!resolved)
            return UserError{std::string(where) +
                             "--map-by pe-list=" + escaped(options.peListGiven) + " on node " +
                             std::string(entry.name) + ": " + resolved.error().message};
    }
    return std::nullopt;
}

struct AppPlan {
    AppRequest request;
    std::uint32_t np = 0; // 0: the mapper counts them
};

} // namespace

// How firmly the request asks for its bindings (launch_plan.hpp): CPU-exact
// requests, then object bindings the user named, else mpirun's default.
static BindingRequest bindingRequestOf(const PlanRequest &request) {
    BindingRequest out = BindingRequest::Default;
    auto consider = [&out](const MapPolicy *map, const std::optional<BindPolicy> &bind,
                           bool namesCpus) {
        BindingRequest here = BindingRequest::Default;
        if (bindsSomething(bind))
            here = bind->to == BindTo::Core || bind->to == BindTo::Hwthread
                       ? BindingRequest::Cpus
                       : BindingRequest::Objects;
        if (namesCpus || (map && (map->pe.value_or(1) > 1 || map->by == MapBy::PeList)))
            here = BindingRequest::Cpus;
        out = std::max(out, here);
    };
    bool namesCpus = false;
    for (const SequenceEntry &entry : request.sequence)
        namesCpus = namesCpus || !entry.cpus.empty();
    if (request.rankfile)
        for (const RankfileEntry &entry : request.rankfile->entries)
            namesCpus = namesCpus || !entry.slots.empty();
    consider(&request.map, request.bind, namesCpus);
    for (const AppRequest &app : request.apps) {
        bool appCpus = false;
        if (app.rankfile)
            for (const RankfileEntry &entry : app.rankfile->entries)
                appCpus = appCpus || !entry.slots.empty();
        if (app.sequence)
            for (const SequenceEntry &entry : *app.sequence)
                appCpus = appCpus || !entry.cpus.empty();
        consider(app.map ? &*app.map : nullptr, app.bind ? app.bind : request.bind, appCpus);
    }
    return out;
}

Expected<PlanResult> planJob(const Allocation &allocation, const PlanRequest &request) {
    if (usesParaStationPlacement(request)) {
        auto plan = makeParaStationPlan(allocation, request);
        if (!plan)
            return plan.error();
        JobMapHeader header = jobMapHeader(request, "N/A");
        describeParaStationMapping(header, request);
        PlanResult out{std::move(plan.value()), PlanReport{}};
        out.report.mappingPolicy = header.mappingPolicy;
        out.report.rankingPolicy = header.rankingPolicy;
        out.report.bindingPolicy = header.bindingPolicy;
        return out;
    }
    if (auto error = checkPolicy(request))
        return *error;

    // The application contexts, with the job-wide qualifier
    // (OVERSUBSCRIBE/NOOVERSUBSCRIBE) taken off each and agreed on.
    std::vector<AppPlan> apps;
    if (request.apps.empty())
        apps.push_back(AppPlan{AppRequest{request.np}});
    else
        for (const AppRequest &app : request.apps)
            apps.push_back(AppPlan{app});
    if (!request.apps.empty() && request.np) {
        std::int64_t sum = 0;
        bool all = true;
        for (const AppRequest &app : request.apps) {
            all = all && app.np.has_value();
            sum += app.np.value_or(0);
        }
        if (!all || sum != *request.np)
            return UserError{"-n " + std::to_string(*request.np) +
                             " does not match the application contexts' counts; give -n per "
                             "application context only"};
    }
    std::optional<bool> oversubscribe = request.map.oversubscribe;
    for (std::size_t a = 0; a < apps.size(); ++a) {
        auto &map = apps[a].request.map;
        if (!map || !map->oversubscribe)
            continue;
        if (oversubscribe && *oversubscribe != *map->oversubscribe)
            return UserError{"application context " + std::to_string(a) + " asks for " +
                             (*map->oversubscribe ? "OVERSUBSCRIBE" : "NOOVERSUBSCRIBE") +
                             ", but the job (or an earlier application context) has " +
                             (*oversubscribe ? "OVERSUBSCRIBE" : "NOOVERSUBSCRIBE") +
                             ": these are conflicting values for the whole job.\nGive "
                             "OVERSUBSCRIBE or NOOVERSUBSCRIBE once, for the job."};
        oversubscribe = map->oversubscribe;
        map->oversubscribe.reset();
        if (*map == MapPolicy{})
            map.reset();
    }
    const bool allowOversubscribe = request.overbook || oversubscribe.value_or(false);

    auto filtered = detail::filterNodes(allocation, request, allowOversubscribe);
    if (!filtered)
        return filtered.error();
    const std::vector<detail::NodeSlots> &list = filtered.value();
    detail::Engine engine(allocation, list);
    const bool modeled = engine.allModeled();

    // Policies that need the hardware.
    const auto unmodeled = [&]() -> std::string {
        for (const detail::NodeSlots &entry : list) {
            if (!allocation.nodes[entry.allocIndex].model)
                return std::string(entry.name);
        }
        return {};
    };
    const auto topologyError = [&](const std::string &what) {
        return UserError{what +
                         " needs the hardware of every node, but stepmap does not know "
                         "that of node " +
                         unmodeled() +
                         ".\nMap by slot, node or seq, bind to none, or run where stepmap reads "
                         "the node topology."};
    };
    if (!modeled) {
        if (needsTopology(request.map))
            return topologyError("--map-by " + mapWord(request.map.by));
        if (bindsSomething(request.bind))
            return topologyError("--bind-to " + lower(bindToWord(request.bind->to)));
        for (const AppPlan &app : apps) {
            if (app.request.map && needsTopology(*app.request.map))
                return topologyError("--map-by " + mapWord(app.request.map->by));
            if (bindsSomething(app.request.bind))
                return topologyError("--bind-to " + lower(bindToWord(app.request.bind->to)));
        }
    }

    // The job's options (PRRTE's prte_rmaps_base_map_job).
    MapOptions job;
    job.oversubscribe = allowOversubscribe;
    job.overbook = request.overbook;
    job.useHwthreads = request.map.hwtcpus.value_or(false) || request.map.by == MapBy::Hwthread;
    const int jobPe = request.map.pe.value_or(1);
    job.cpusPerRank = jobPe;
    std::optional<BindPolicy> jobBind = request.bind;
    MappingWord jobMapping;
    MapBy jobBy = request.map.by;
    if (jobBy != MapBy::Default) {
        jobMapping.given = true;
    } else if (!modeled || request.overbook) {
        jobBy = MapBy::Slot;
    } else if (jobPe > 1) {
        jobBy = MapBy::Slot;
    } else if (bindsSomething(jobBind) || (jobBind && jobBind->to == BindTo::None)) {
        switch (jobBind->to) {
        case BindTo::Package:
            jobBy = MapBy::Package;
            break;
        case BindTo::Numa:
            jobBy = MapBy::Numa;
            break;
        case BindTo::L3Cache:
            jobBy = MapBy::L3Cache;
            break;
        case BindTo::L2Cache:
            jobBy = MapBy::L2Cache;
            break;
        case BindTo::L1Cache:
            jobBy = MapBy::L1Cache;
            break;
        case BindTo::Core:
            jobBy = MapBy::Core;
            break;
        case BindTo::Hwthread:
            jobBy = MapBy::Hwthread;
            break;
        default:
            jobBy = MapBy::Slot;
            break;
        }
    } else {
        // PRRTE settles the default before it counts the processes, so its
        // "np <= 2: core, else package" reads np as 0: core, always (the
        // goldens show it). HWTCPUS makes the CPUs hwthreads.
        jobBy = job.useHwthreads ? MapBy::Hwthread : MapBy::Core;
    }
    applyMapPolicy(job, request.map, jobBy);
    // Mapping by hwthread counts hwthreads as the CPUs, also when the
    // mapping came from --bind-to hwthread (PRRTE then still counts cores
    // and finds no core inside one hwthread of an SMT core).
    if (jobBy == MapBy::Hwthread)
        job.useHwthreads = true;
    jobMapping.policy = jobBy;
    jobMapping.span = request.map.span;
    jobMapping.ordered = request.map.ordered;
    jobMapping.subscribeGiven = oversubscribe.has_value() || request.overbook;
    jobMapping.noOversubscribe = !allowOversubscribe;

    // The process counts.
    std::int64_t listSlots = 0;
    for (const detail::NodeSlots &entry : list)
        listSlots += entry.slots;
    std::int64_t total = 0;
    for (AppPlan &app : apps) {
        if (app.request.np) {
            app.np = static_cast<std::uint32_t>(*app.request.np);
        } else {
            const MapBy by = app.request.map ? app.request.map->by : job.map;
            if (by == MapBy::Seq || by == MapBy::Rankfile || by == MapBy::Ppr) {
                app.np = 0; // the mapper counts them
            } else if (by == MapBy::PeList && !job.cpuset.empty() && !app.request.map) {
                auto ids = detail::expandIds(job.cpuset);
                app.np = ids ? static_cast<std::uint32_t>(ids->size()) : 1;
            } else {
                if (listSlots > kMaxRanks)
                    return UserError{"too many processes: the selected nodes have " +
                                     std::to_string(listSlots) + " slots, stepmap places at most " +
                                     std::to_string(kMaxRanks) + "; give -n"};
                std::int64_t count = listSlots;
                const int pe =
                    app.request.map && app.request.map->pe ? *app.request.map->pe : job.cpusPerRank;
                if (pe > 1 && modeled) {
                    std::int64_t cpus = 0;
                    for (const detail::NodeSlots &entry : list) {
                        const NodeModel &model = *allocation.nodes[entry.allocIndex].model;
                        const std::size_t n = job.useHwthreads
                                                  ? model.puCount()
                                                  : model.objects(HwLevel::Core).size();
                        cpus += static_cast<std::int64_t>(n) / pe;
                    }
                    count = std::clamp<std::int64_t>(cpus, 1, listSlots);
                }
                app.np = static_cast<std::uint32_t>(count);
            }
        }
        total += app.np;
    }
    if (total > kMaxRanks)
        return UserError{"too many processes: " + std::to_string(total) +
                         " requested, stepmap places at most " + std::to_string(kMaxRanks)};

    // Ranking.
    RankingWord jobRanking;
    if (job.userRanked) {
        jobRanking.byUser = true;
    } else if (request.rank) {
        jobRanking.policy = *request.rank;
        jobRanking.given = true;
    } else {
        jobRanking.policy = defaultRanking(job.map, job.span);
    }
    job.rank = jobRanking.policy.value_or(RankBy::Slot);
    if (job.map != MapBy::Ppr)
        if (auto error = checkRankNeedsObject(job, ""))
            return *error;
    job.ranksInPlacementOrder =
        ((job.map == MapBy::Slot || job.map == MapBy::Default) && job.rank == RankBy::Slot) ||
        (job.map == MapBy::Node && job.rank == RankBy::Node);

    // Binding.
    BindingWord jobBinding;
    if (jobBind)
        jobBinding = bindingWordOf(*jobBind);
    if (!jobBinding.given) {
        if (modeled) {
            jobBinding.ifSupported = true;
            jobBinding.policy = defaultBinding(job, static_cast<std::uint32_t>(total));
        } else {
            jobBinding.policy = BindTo::None;
        }
    }
    job.bind = jobBinding.policy;
    job.overload = jobBinding.overloadAllowed;
    job.limit = jobBind ? jobBind->limit.value_or(0) : 0;
    if (auto error = checkBindAbove(job, ""))
        return *error;
    if (auto error = checkCpuBinding(job, jobBinding, ""))
        return *error;
    if (modeled)
        if (auto error = checkPeList(job, list, allocation, ""))
            return *error;

    // The sequence and the rankfile of the job.
    std::vector<SequenceEntry> sequence = request.sequence;
    if (sequence.empty()) {
        const std::optional<HostSpec> &spec =
            request.host && !request.host->exclude ? request.host : request.hostfile;
        if (spec && !spec->exclude) {
            for (const HostEntry &entry : spec->entries)
                sequence.insert(sequence.end(), static_cast<std::size_t>(entry.slots.value_or(1)),
                                SequenceEntry{entry.name, ""});
        }
    }

    bool perApp = false;
    for (const AppPlan &app : apps)
        perApp = perApp || app.request.map || app.request.rank || app.request.bind;

    engine.jobBinding = jobBinding;
    engine.noOversubscribe = !allowOversubscribe;
    const MappingWord jobMappingSnapshot = jobMapping;
    const BindingWord jobBindingSnapshot = jobBinding;

    struct Resolved {
        MappingWord mapping;
        RankingWord ranking;
        BindingWord binding;
        std::string mapper;
    };
    std::vector<Resolved> resolved;
    std::uint32_t next = 0;
    MapOptions shared = job;
    for (std::uint32_t a = 0; a < apps.size(); ++a) {
        const AppRequest &ar = apps[a].request;
        const std::string where =
            apps.size() > 1 ? "application context " + std::to_string(a) + ": " : std::string();
        MapOptions fresh = job;
        MapOptions &options = perApp ? fresh : shared;
        options.app = static_cast<int>(a);
        options.startRank = next;
        BindingWord appBind;
        bool appBindGiven = false;
        if (perApp) {
            const bool haveMap = ar.map.has_value();
            if (haveMap) {
                const MapBy by = ar.map->by == MapBy::Default ? job.map : ar.map->by;
                applyMapPolicy(options, *ar.map, by);
                if (by == MapBy::Hwthread)
                    options.useHwthreads = true;
            }
            if (ar.rank)
                options.rank = *ar.rank;
            else if (haveMap)
                options.rank = defaultRanking(options.map, options.span);
            if (ar.bind && ar.bind->to != BindTo::Default) {
                appBind = bindingWordOf(*ar.bind);
                appBindGiven = true;
                options.bind = ar.bind->to;
                options.overload = ar.bind->overload.value_or(false);
                options.limit = ar.bind->limit.value_or(0);
            } else if (haveMap) {
                options.bind = modeled ? defaultBinding(options, apps[a].np) : BindTo::None;
                if (ar.bind)
                    options.overload = ar.bind->overload.value_or(options.overload);
            }
            if (auto error = checkBindAbove(options, where))
                return *error;
            if (auto error = checkRankNeedsObject(options, where))
                return *error;
            BindingWord word = appBindGiven ? appBind : BindingWord{options.bind};
            if (auto error = checkCpuBinding(options, word, where))
                return *error;
            if (options.cpusPerRank > 1 || options.ordered) {
                if (!appBindGiven)
                    appBind = jobBindingSnapshot;
                appBind.policy = options.bind;
            }
            if (modeled)
                if (auto error = checkPeList(options, list, allocation, where))
                    return *error;
            if (!modeled && options.bind != BindTo::None)
                options.bind = BindTo::None;
            options.ranksInPlacementOrder =
                ((options.map == MapBy::Slot || options.map == MapBy::Default) &&
                 options.rank == RankBy::Slot) ||
                (options.map == MapBy::Node && options.rank == RankBy::Node);
        }
        if (options.map == MapBy::Seq) {
            options.sequence = ar.sequence ? &*ar.sequence : &sequence;
            options.sequenceShared = !ar.sequence;
            if (options.sequence->empty())
                return UserError{where +
                                 "--map-by seq places rank i on the i-th host of a sequence, "
                                 "but none was given.\nGive the hosts in rank order with "
                                 "--map-by seq:FILE=path (one host per line), --hostfile or "
                                 "--host."};
        }
        if (options.map == MapBy::Rankfile) {
            options.rankfile = ar.rankfile        ? &*ar.rankfile
                               : request.rankfile ? &*request.rankfile
                                                  : nullptr;
            options.rankfileGlobal = !perApp && !ar.rankfile;
            if (options.rankfile == nullptr)
                return UserError{where + "--map-by rankfile needs the rankfile: give "
                                         "--map-by rankfile:FILE=path"};
        }
        const std::size_t before = engine.mappedCount();
        if (auto error = engine.mapApp(a, apps[a].np, options))
            return UserError{
                (apps.size() > 1 && error->message.find("application context") == std::string::npos
                     ? where
                     : std::string()) +
                error->message};
        const auto np = static_cast<std::uint32_t>(engine.mappedCount() - before);
        if (auto error = engine.rankApp(a, np, options, before))
            return *error;
        next += np;
        if (next > static_cast<std::uint32_t>(kMaxRanks))
            return UserError{"too many processes: more than " + std::to_string(kMaxRanks) +
                             " requested, stepmap places at most " + std::to_string(kMaxRanks)};

        // What mpirun shows for this application.
        Resolved shown;
        MapBy displayed = options.map;
        if (options.map == MapBy::Ppr)
            displayed = options.mapNode                         ? MapBy::Node
                        : options.mapDevice                     ? MapBy::Device
                        : *options.mapLevel == HwLevel::Pu      ? MapBy::Hwthread
                        : *options.mapLevel == HwLevel::Core    ? MapBy::Core
                        : *options.mapLevel == HwLevel::L1Cache ? MapBy::L1Cache
                        : *options.mapLevel == HwLevel::L2Cache ? MapBy::L2Cache
                        : *options.mapLevel == HwLevel::L3Cache ? MapBy::L3Cache
                        : *options.mapLevel == HwLevel::Numa    ? MapBy::Numa
                                                                : MapBy::Package;
        shown.mapping = jobMappingSnapshot;
        shown.mapping.policy = displayed;
        shown.mapping.span = options.span;
        shown.mapping.ordered = options.ordered;
        shown.ranking = jobRanking;
        if (options.userRanked) {
            shown.ranking.byUser = true;
            shown.ranking.policy.reset();
        } else {
            shown.ranking.byUser = false;
            shown.ranking.policy = options.rank;
        }
        shown.binding = appBindGiven ? appBind : jobBindingSnapshot;
        shown.binding.policy = options.bind;
        shown.binding.overloadAllowed = options.overload;
        shown.mapper = options.map == MapBy::Ppr        ? "ppr"
                       : options.map == MapBy::Seq      ? "seq"
                       : options.map == MapBy::Rankfile ? "rank_file"
                                                        : "round_robin";
        resolved.push_back(shown);
        if (!perApp && options.map == MapBy::Ppr)
            jobMapping.policy = displayed;
    }

    // The plan.
    detail::EngineResult result = engine.take();
    const std::vector<detail::NodeState> &states = engine.nodes();
    std::vector<std::uint32_t> count(states.size(), 0);
    for (const detail::Proc &proc : result.procs)
        ++count[proc.node];
    PlanResult out;
    LaunchPlan &plan = out.plan;
    std::vector<std::uint32_t> planIndex(states.size(), 0);
    for (std::uint32_t index : result.mapOrder) {
        if (count[index] == 0)
            continue;
        const detail::NodeState &node = states[index];
        planIndex[index] = static_cast<std::uint32_t>(plan.nodes.size());
        std::optional<int> maxSlots;
        if (node.slotsMax != 0)
            maxSlots = node.slotsMax;
        plan.nodes.push_back(PlannedNode{std::string(node.name), node.slots, maxSlots});
        const auto room = static_cast<std::uint32_t>(std::min(node.slots, node.cpus));
        plan.oversubscribed = plan.oversubscribed || count[index] > room;
    }
    plan.ranks.assign(result.procs.size(), RankPlacement{});
    std::vector<bool> seen(result.procs.size(), false);
    for (const detail::Proc &proc : result.procs) {
        if (proc.rank >= plan.ranks.size() || seen[proc.rank])
            return UserError{"internal error: the ranking numbered a process twice or out of "
                             "range"};
        seen[proc.rank] = true;
        plan.ranks[proc.rank] = RankPlacement{planIndex[proc.node], 0, 0, proc.app, proc.binding};
    }
    result.procs = {};
    plan.bindings = std::move(result.bindings);
    plan.bindingRequest = bindingRequestOf(request);
    if (!result.procDevices.empty()) {
        plan.deviceSets = std::move(result.deviceSets);
        plan.rankDevices = std::move(result.procDevices);
    }
    assignLocalRanks(plan);

    // The report.
    PlanReport &report = out.report;
    report.mappingPolicy =
        request.overbook ? std::string("BYSLOT:OVERBOOK") : detail::formatMapping(jobMapping);
    report.rankingPolicy = detail::formatRanking(jobRanking);
    report.bindingPolicy = detail::formatBinding(engine.jobBinding);
    if (perApp) {
        bool differ = false;
        for (const Resolved &shown : resolved) {
            differ =
                differ || !(shown.mapping == jobMapping) || !(shown.ranking == jobRanking) ||
                !(shown.binding == engine.jobBinding) || !(shown.mapping == resolved[0].mapping) ||
                !(shown.ranking == resolved[0].ranking) || !(shown.binding == resolved[0].binding);
        }
        if (differ) {
            for (const Resolved &shown : resolved)
                report.apps.push_back(AppPolicyReport{
                    shown.mapper, detail::formatMapping(shown.mapping),
                    detail::formatRanking(shown.ranking), detail::formatBinding(shown.binding)});
        }
    }
    if (request.map.by == MapBy::PeList)
        report.cpuSet = request.map.peList;
    if (request.map.by == MapBy::Ppr)
        report.ppr = request.map.pprText;
    if (request.map.pe)
        report.cpusPerRank = std::to_string(*request.map.pe);
    report.hwthreadCpus = job.useHwthreads;
    report.cpuType = job.useHwthreads ? "HWT" : "CORE";
    report.display = request.map.display;
    for (const AppPlan &app : apps)
        report.display = report.display || (app.request.map && app.request.map->display);
    report.reportBindings = request.bind && request.bind->report;
    return out;
}

Expected<LaunchPlan> makePlan(const Allocation &allocation, const PlanRequest &request) {
    auto result = planJob(allocation, request);
    if (!result)
        return result.error();
    return std::move(result.value().plan);
}

} // namespace stepmap
