// The planner's stages one by one (planner/planner_stages.hpp) and the
// rules and words they use (planner/policy_rules.hpp,
// placement/policy_words.hpp): table-driven, each row an input and the exact
// output or message.

#include "planner/planner_stages.hpp"

#include <memory>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "hosts/node_model.hpp"
#include "placement/policy_words.hpp"
#include "plan_helpers.hpp"
#include "planner/policy_rules.hpp"

namespace stepmap::detail {
namespace {

std::shared_ptr<const NodeModel> twoSocketModel() {
    // 2 packages x 4 cores x 2 hwthreads: 16 PUs, 8 cores.
    auto model = buildSlurmNodeModel(SlurmNodeShape{2, 4, 2, 1}, {});
    EXPECT_TRUE(model.ok()) << (model.ok() ? "" : model.error().message);
    return model.value();
}

// n0, n1, ... of `slots` slots each, all of one model or none.
Allocation nodes(int count, int slots, bool modeled) {
    std::vector<std::pair<std::string, int>> names;
    for (int i = 0; i < count; ++i)
        names.emplace_back("n" + std::to_string(i), slots);
    Allocation allocation = test::allocation(names);
    if (modeled) {
        const auto model = twoSocketModel();
        for (AllocatedNode &node : allocation.nodes)
            node.model = model;
    }
    return allocation;
}

using test::planRequest;
PlanRequest request(std::optional<int> np, std::string_view map = {}, std::string_view rank = {},
                    std::string_view bind = {}) {
    return planRequest(np, map, rank, bind);
}

AppRequest app(std::optional<int> np, std::string_view map = {}) {
    AppRequest out;
    out.np = np;
    if (!map.empty())
        out.map = parseMapBy(map).value();
    return out;
}

// With a message expected: that the stage failed with it (true). Without:
// that it succeeded (false: go on checking its value).
template <class T> bool failedWith(const Expected<T> &out, const std::string &message) {
    if (message.empty()) {
        EXPECT_TRUE(out.ok()) << out.error().message;
        return !out.ok();
    }
    EXPECT_FALSE(out.ok());
    if (!out.ok()) {
        EXPECT_EQ(out.error().message, message);
    }
    return true;
}

// --- policy words --------------------------------------------------------

TEST(PolicyWords, LevelsMapBothWays) {
    // Each object level by its --map-by/--bind-to word, widest first.
    const std::vector<std::string> words = {"package", "numa", "l3cache", "l2cache",
                                            "l1cache", "core", "hwthread"};
    for (std::size_t i = 0; i < words.size(); ++i) {
        SCOPED_TRACE(words[i]);
        const MapBy map = parseMapBy(words[i]).value().by;
        const BindTo bind = parseBindTo(words[i]).value().to;
        const auto level = levelOf(map);
        ASSERT_TRUE(level.has_value());
        EXPECT_EQ(hwLevelName(*level), words[i]);
        EXPECT_EQ(levelOf(bind), level);
        EXPECT_EQ(mapByOf(*level), map);
        EXPECT_EQ(bindToOf(*level), bind);
        EXPECT_EQ(depthOf(map), static_cast<int>(i) + 2);
        EXPECT_EQ(depthOf(bind), static_cast<int>(i) + 2);
    }
    for (MapBy by : {MapBy::Slot, MapBy::Node, MapBy::Default, MapBy::Ppr, MapBy::Seq,
                     MapBy::Rankfile, MapBy::PeList, MapBy::Device}) {
        EXPECT_EQ(levelOf(by), std::nullopt);
        EXPECT_EQ(depthOf(by), 1);
    }
    EXPECT_EQ(levelOf(BindTo::None), std::nullopt);
    EXPECT_EQ(depthOf(BindTo::Default), 1);
}

TEST(PolicyWords, Format) {
    EXPECT_EQ(formatMapping(MappingWord{MapBy::Core, true}), "BYCORE:NOOVERSUBSCRIBE");
    EXPECT_EQ(formatMapping(MappingWord{MapBy::Slot, false, true, true, true}),
              "BYSLOT:OVERSUBSCRIBE:SPAN:ORDERED");
    EXPECT_EQ(formatRanking(RankingWord{RankBy::Fill}), "FILL");
    EXPECT_EQ(formatRanking(RankingWord{std::nullopt, true}), "BYUSER");
    EXPECT_EQ(formatRanking(RankingWord{}), "UNKNOWN");
    EXPECT_EQ(formatBinding(BindingWord{BindTo::Core, true}), "CORE:IF-SUPPORTED");
    EXPECT_EQ(formatBinding(BindingWord{BindTo::Numa, true, true}),
              "NUMA:IF-SUPPORTED:OVERLOAD-ALLOWED");
    EXPECT_EQ(formatBinding(BindingWord{BindTo::None, false, true}), "NONE:OVERLOAD-ALLOWED");
    EXPECT_EQ(formatBinding(BindingWord{}), "UNKNOWN");
    EXPECT_EQ(lowerWord("L3CACHE"), "l3cache");
}

// --- policy rules --------------------------------------------------------

TEST(PolicyRules, DefaultBinding) {
    struct Row {
        std::string map;
        std::uint32_t np;
        BindTo expected;
    };
    const std::vector<Row> rows = {
        {"core", 100, BindTo::Core},       {"package", 100, BindTo::Package},
        {"hwthread", 1, BindTo::Hwthread}, {"l2cache", 3, BindTo::L2Cache},
        {"slot", 2, BindTo::Core},         {"slot", 3, BindTo::Numa},
        {"node", 1, BindTo::Core},         {"node", 8, BindTo::Numa},
        {"pe-list=0-3", 9, BindTo::Core},  {"slot:PE=2", 9, BindTo::Core},
        {"ppr:2:numa", 9, BindTo::Numa},   {"ppr:2:node", 1, BindTo::Core},
        {"ppr:2:node", 3, BindTo::Numa},   {"slot:HWTCPUS", 1, BindTo::Hwthread},
    };
    for (const Row &row : rows) {
        SCOPED_TRACE(row.map);
        const MapPolicy map = parseMapBy(row.map).value();
        MapOptions options;
        applyMapPolicy(options, map, map.by);
        EXPECT_EQ(defaultBinding(options, row.np), row.expected);
    }
}

TEST(PolicyRules, DefaultRanking) {
    struct Row {
        MapBy map;
        bool span;
        RankBy expected;
        bool placementOrder;
    };
    const std::vector<Row> rows = {
        {MapBy::Node, false, RankBy::Node, true},     {MapBy::Slot, true, RankBy::Slot, false},
        {MapBy::Default, false, RankBy::Slot, false}, {MapBy::Core, false, RankBy::Fill, false},
        {MapBy::Core, true, RankBy::Span, false},     {MapBy::Ppr, false, RankBy::Slot, false},
        {MapBy::PeList, false, RankBy::Slot, false},  {MapBy::Seq, false, RankBy::Slot, false},
    };
    for (const Row &row : rows) {
        EXPECT_EQ(defaultRanking(row.map, row.span), row.expected);
        EXPECT_EQ(ranksInPlacementOrder(row.map, row.expected), row.placementOrder);
    }
}

TEST(PolicyRules, Refusals) {
    MapOptions core;
    applyMapPolicy(core, parseMapBy("core").value(), MapBy::Core);
    core.bind = BindTo::Package;
    EXPECT_EQ(checkBindAbove(core, "")->message,
              "cannot bind to package when mapping by core: a process is bound to the object it "
              "was mapped to or to one inside it, and a package lies above a core.\nBind to core "
              "or below, or map by package.");
    core.bind = BindTo::Core;
    EXPECT_FALSE(checkBindAbove(core, "").has_value());

    MapOptions slot;
    slot.map = MapBy::Slot;
    slot.rank = RankBy::Span;
    EXPECT_EQ(checkRankNeedsObject(slot, "application context 1: ")->message,
              "application context 1: --rank-by span ranks the processes of each object in "
              "turn, but mapping by slot puts them on no object.\nMap by an object (e.g. "
              "--map-by core --rank-by span) or rank by slot or node.");

    MapOptions pe;
    applyMapPolicy(pe, parseMapBy("slot:PE=2").value(), MapBy::Slot);
    BindingWord word = bindingWordOf(parseBindTo("numa").value());
    EXPECT_EQ(checkCpuBinding(pe, word, "")->message,
              "--bind-to numa cannot be combined with PE=2: processes given their own CPUs are "
              "bound to CPUs.\nBind to core (or hwthread with HWTCPUS), or drop --bind-to.");
    BindingWord none;
    EXPECT_FALSE(checkCpuBinding(pe, none, "").has_value());
    EXPECT_EQ(pe.bind, BindTo::Core); // forced
    EXPECT_TRUE(none.given);
}

TEST(PolicyRules, Words) {
    EXPECT_EQ(mapWord(MapBy::Default), "slot");
    EXPECT_EQ(mapWord(MapBy::L3Cache), "l3cache");
    EXPECT_EQ(mapWord(MapBy::Ppr), "ppr");
    EXPECT_EQ(mapWord(MapBy::PeList), "pe-list");
    EXPECT_EQ(mapWord(MapBy::Rankfile), "rankfile");
    EXPECT_TRUE(bindsSomething(parseBindTo("core").value()));
    EXPECT_FALSE(bindsSomething(parseBindTo("none").value()));
    EXPECT_FALSE(bindsSomething(std::nullopt));
}

// --- 1. resolveApps ------------------------------------------------------

TEST(ResolveApps, Table) {
    struct Row {
        std::string name;
        PlanRequest request;
        std::size_t apps;
        std::optional<bool> oversubscribe;
        bool allow;
        std::string error;
    };
    PlanRequest mpmd = request(4);
    mpmd.apps = {app(1), app(2)};
    PlanRequest conflict = request(std::nullopt, "slot:OVERSUBSCRIBE");
    conflict.apps = {app(1), app(1, "core:NOOVERSUBSCRIBE")};
    PlanRequest agreed = request(std::nullopt);
    agreed.apps = {app(1, "slot:OVERSUBSCRIBE"), app(1)};
    PlanRequest overbook = request(4, "node");
    overbook.overbook = true;
    const std::vector<Row> rows = {
        {"one app", request(4), 1, std::nullopt, false, ""},
        {"oversubscribe", request(4, "slot:OVERSUBSCRIBE"), 1, true, true, ""},
        {"agreed by an app", agreed, 2, true, true, ""},
        {"-n 0", request(0), 0, std::nullopt, false,
         "the number of processes must be a positive number, got 0 (use -n N with N >= 1)"},
        {"-n against the apps", mpmd, 0, std::nullopt, false,
         "-n 4 does not match the application contexts' counts; give -n per application "
         "context only"},
        {"conflict", conflict, 0, std::nullopt, false,
         "application context 1 asks for NOOVERSUBSCRIBE, but the job (or an earlier "
         "application context) has OVERSUBSCRIBE: these are conflicting values for the whole "
         "job.\nGive OVERSUBSCRIBE or NOOVERSUBSCRIBE once, for the job."},
        {"overbook by node", overbook, 0, std::nullopt, false,
         "--overbook cannot be combined with --map-by node: --overbook places consecutive "
         "ranks on each node. Use --map-by node:OVERSUBSCRIBE to keep round-robin placement "
         "past the slots, or drop --map-by node."},
    };
    for (const Row &row : rows) {
        SCOPED_TRACE(row.name);
        auto out = resolveApps(row.request);
        if (failedWith(out, row.error))
            continue;
        EXPECT_EQ(out.value().apps.size(), row.apps);
        EXPECT_EQ(out.value().oversubscribe, row.oversubscribe);
        EXPECT_EQ(out.value().allowOversubscribe, row.allow);
        for (const AppPlan &plan : out.value().apps) {
            if (plan.request.map) {
                EXPECT_FALSE(plan.request.map->oversubscribe.has_value()); // taken off
            }
        }
    }
}

// --- 2. selectNodes ------------------------------------------------------

TEST(SelectNodes, Table) {
    struct Row {
        std::string name;
        bool modeled;
        PlanRequest request;
        std::size_t nodes;
        std::string error;
    };
    PlanRequest hosted = request(2);
    hosted.host = parseHostOption("n1,n2").value();
    PlanRequest appBind = request(2);
    appBind.apps = {app(1), app(1)};
    appBind.apps[1].bind = parseBindTo("core").value();
    const std::string remedy = " needs the hardware of every node, but stepmap does not know "
                               "that of node n0.\nMap by slot, node or seq, bind to none, or run "
                               "where stepmap reads the node topology.";
    const std::vector<Row> rows = {
        {"modeled", true, request(2, "core"), 3, ""},
        {"--host", true, hosted, 2, ""},
        {"unmodeled by slot", false, request(2, "slot"), 3, ""},
        {"unmodeled by core", false, request(2, "core"), 0, "--map-by core" + remedy},
        {"unmodeled ppr", false, request(2, "ppr:1:package"), 0, "--map-by ppr" + remedy},
        {"unmodeled PE=2", false, request(2, "slot:PE=2"), 0, "--map-by slot" + remedy},
        {"unmodeled bind", false, request(2, {}, {}, "numa"), 0, "--bind-to numa" + remedy},
        {"unmodeled app bind", false, appBind, 0, "--bind-to core" + remedy},
    };
    for (const Row &row : rows) {
        SCOPED_TRACE(row.name);
        const Allocation allocation = nodes(3, 4, row.modeled);
        auto apps = resolveApps(row.request);
        ASSERT_TRUE(apps.ok());
        auto out = selectNodes(allocation, row.request, apps.value());
        if (failedWith(out, row.error))
            continue;
        EXPECT_EQ(out.value().list.size(), row.nodes);
        EXPECT_EQ(out.value().modeled, row.modeled);
    }
}

// --- 3-5. the job's policy ----------------------------------------------

struct JobRow {
    std::string name;
    bool modeled;
    PlanRequest request;
    std::string mapping; // formatted words
    std::string ranking;
    std::string binding;
    std::vector<std::uint32_t> counts;
    std::string error;
};

void checkJob(const JobRow &row) {
    SCOPED_TRACE(row.name);
    const Allocation allocation = nodes(2, 8, row.modeled);
    auto apps = resolveApps(row.request);
    ASSERT_TRUE(apps.ok()) << apps.error().message;
    auto selection = selectNodes(allocation, row.request, apps.value());
    ASSERT_TRUE(selection.ok()) << selection.error().message;
    JobMapping mapping = resolveJobMapping(row.request, apps.value(), row.modeled);
    EXPECT_EQ(formatMapping(mapping.word), row.mapping);
    auto counts = countProcesses(allocation, apps.value().apps, selection.value(), mapping.options);
    ASSERT_TRUE(counts.ok()) << counts.error().message;
    EXPECT_EQ(counts.value(), row.counts);
    std::uint32_t total = 0;
    for (std::uint32_t n : counts.value())
        total += n;
    auto job = resolveJobPolicy(allocation, row.request, selection.value(), mapping, total);
    if (failedWith(job, row.error))
        return;
    EXPECT_EQ(formatRanking(job.value().ranking), row.ranking);
    EXPECT_EQ(formatBinding(job.value().binding), row.binding);
}

TEST(JobPolicy, Table) {
    PlanRequest mpmd = request(std::nullopt);
    mpmd.apps = {app(3), app(std::nullopt)};
    const std::vector<JobRow> rows = {
        {"defaults",
         true,
         request(std::nullopt),
         "BYCORE:NOOVERSUBSCRIBE",
         "FILL",
         "CORE:IF-SUPPORTED",
         {16},
         ""},
        {"unmodeled", false, request(4), "BYSLOT:NOOVERSUBSCRIBE", "SLOT", "NONE", {4}, ""},
        {"bind-to alone maps",
         true,
         request(4, {}, {}, "package"),
         "BYPACKAGE:NOOVERSUBSCRIBE",
         "FILL",
         "PACKAGE",
         {4},
         ""},
        {"slot, few",
         true,
         request(2, "slot"),
         "BYSLOT:NOOVERSUBSCRIBE",
         "SLOT",
         "CORE:IF-SUPPORTED",
         {2},
         ""},
        {"slot, many",
         true,
         request(3, "slot"),
         "BYSLOT:NOOVERSUBSCRIBE",
         "SLOT",
         "NUMA:IF-SUPPORTED",
         {3},
         ""},
        {"node",
         true,
         request(4, "node"),
         "BYNODE:NOOVERSUBSCRIBE",
         "NODE",
         "NUMA:IF-SUPPORTED",
         {4},
         ""},
        // Allowed to oversubscribe and told no binding: unbound (mpirun).
        {"node:OVERSUBSCRIBE",
         true,
         request(4, "node:OVERSUBSCRIBE"),
         "BYNODE:OVERSUBSCRIBE",
         "NODE",
         "NONE",
         {4},
         ""},
        {"PE=2 counts CPUs",
         true,
         request(std::nullopt, "slot:PE=2"),
         "BYSLOT:NOOVERSUBSCRIBE",
         "SLOT",
         "CORE:IF-SUPPORTED",
         {8},
         ""},
        {"pe-list counts ids",
         true,
         request(std::nullopt, "pe-list=0-2"),
         "PE-LIST:NOOVERSUBSCRIBE",
         "SLOT",
         "CORE:IF-SUPPORTED",
         {3},
         ""},
        {"ppr counted by its placer",
         true,
         request(std::nullopt, "ppr:1:package"),
         "PPR:NOOVERSUBSCRIBE",
         "SLOT",
         "PACKAGE:IF-SUPPORTED",
         {0},
         ""},
        {"MPMD", true, mpmd, "BYCORE:NOOVERSUBSCRIBE", "FILL", "CORE:IF-SUPPORTED", {3, 16}, ""},
        {"bind above map",
         true,
         request(2, "core", {}, "numa"),
         "BYCORE:NOOVERSUBSCRIBE",
         "",
         "",
         {2},
         "cannot bind to numa when mapping by core: a process is bound to the object it was "
         "mapped to or to one inside it, and a numa lies above a core.\nBind to core or below, "
         "or map by numa."},
        {"span by slot",
         true,
         request(2, "slot", "span"),
         "BYSLOT:NOOVERSUBSCRIBE",
         "",
         "",
         {2},
         "--rank-by span ranks the processes of each object in turn, but mapping by slot puts "
         "them on no object.\nMap by an object (e.g. --map-by core --rank-by span) or rank by "
         "slot or node."},
    };
    for (const JobRow &row : rows)
        checkJob(row);
}

TEST(CountProcesses, TooManySlots) {
    Allocation allocation;
    allocation.nodes = {AllocatedNode{"big", kMaxRanks}, AllocatedNode{"more", 1}};
    const PlanRequest req = request(std::nullopt, "slot");
    auto apps = resolveApps(req);
    auto selection = selectNodes(allocation, req, apps.value());
    ASSERT_TRUE(selection.ok()) << selection.error().message;
    const JobMapping mapping = resolveJobMapping(req, apps.value(), false);
    auto counts = countProcesses(allocation, apps.value().apps, selection.value(), mapping.options);
    ASSERT_FALSE(counts.ok());
    EXPECT_EQ(counts.error().message,
              "too many processes: the selected nodes have 16777217 slots, stepmap places at "
              "most 16777216; give -n");
}

// --- 6. applications: policy, words, placement ---------------------------

// The whole pipeline up to placeApps for a request on 2 modeled nodes of
// 8 slots.
Expected<PlacedJob> placed(const PlanRequest &req, JobPolicy *jobOut = nullptr) {
    static const Allocation allocation = nodes(2, 8, true);
    auto job = resolveJob(allocation, req);
    if (!job)
        return job.error();
    if (jobOut != nullptr)
        *jobOut = job.value().policy;
    return placeApps(allocation, req, job.value().nodes, job.value().policy, job.value().apps.apps);
}

TEST(AppPolicy, Table) {
    struct Row {
        std::string name;
        AppRequest app;
        std::string mapping, ranking, binding, mapper;
        std::string error;
    };
    AppRequest bound = app(2, "core");
    bound.bind = parseBindTo("hwthread:overload-allowed").value();
    AppRequest pe = app(2, "slot:PE=2");
    AppRequest above = app(2, "core");
    above.bind = parseBindTo("package").value();
    const std::vector<Row> rows = {
        {"job's policy", app(2), "BYCORE:NOOVERSUBSCRIBE", "FILL", "CORE:IF-SUPPORTED",
         "round_robin", ""},
        {"by node", app(2, "node"), "BYNODE:NOOVERSUBSCRIBE", "NODE", "CORE:IF-SUPPORTED",
         "round_robin", ""},
        {"ppr shows its object", app(2, "ppr:1:numa"), "BYNUMA:NOOVERSUBSCRIBE", "SLOT",
         "NUMA:IF-SUPPORTED", "ppr", ""},
        {"own binding", bound, "BYCORE:NOOVERSUBSCRIBE", "FILL", "HWTHREAD:OVERLOAD-ALLOWED",
         "round_robin", ""},
        {"PE=2 binds to core", pe, "BYSLOT:NOOVERSUBSCRIBE", "SLOT", "CORE:IF-SUPPORTED",
         "round_robin", ""},
        {"bind above", above, "", "", "", "",
         "application context 1: cannot bind to package when mapping by core: a process is "
         "bound to the object it was mapped to or to one inside it, and a package lies above a "
         "core.\nBind to core or below, or map by package."},
    };
    for (const Row &row : rows) {
        SCOPED_TRACE(row.name);
        PlanRequest req = request(std::nullopt);
        req.apps = {app(1), row.app};
        JobPolicy job;
        auto out = placed(req, &job);
        if (failedWith(out, row.error))
            continue;
        ASSERT_EQ(out.value().apps.size(), 2u);
        const AppWords &words = out.value().apps[1];
        EXPECT_EQ(formatMapping(words.mapping), row.mapping);
        EXPECT_EQ(formatRanking(words.ranking), row.ranking);
        EXPECT_EQ(formatBinding(words.binding), row.binding);
        EXPECT_EQ(words.mapper, row.mapper);
        EXPECT_EQ(out.value().perApp, row.app.map || row.app.bind);
    }
}

TEST(PlaceApps, CarriesOptionsWithoutAppPolicies) {
    PlanRequest req = request(std::nullopt, "core");
    req.apps = {app(3), app(2)};
    auto out = placed(req);
    ASSERT_TRUE(out.ok()) << out.error().message;
    EXPECT_FALSE(out.value().perApp);
    ASSERT_EQ(out.value().result.procs.size(), 5u);
    // The second application's ranks follow the first's.
    std::vector<std::uint32_t> ranks;
    for (const Proc &proc : out.value().result.procs)
        ranks.push_back(proc.rank);
    EXPECT_EQ(ranks, (std::vector<std::uint32_t>{0, 1, 2, 3, 4}));
}

TEST(PlaceApps, SeqWithoutSequence) {
    auto out = placed(request(2, "seq"));
    ASSERT_FALSE(out.ok());
    EXPECT_EQ(out.error().message,
              "--map-by seq places rank i on the i-th host of a sequence, but none was given.\n"
              "Give the hosts in rank order with --map-by seq:FILE=path (one host per line), "
              "--hostfile or --host.");
}

// --- 7-8. the plan and the report ---------------------------------------

TEST(AssemblePlan, NodesInMapOrderRanksInRankOrder) {
    auto out = placed(request(10, "node"));
    ASSERT_TRUE(out.ok()) << out.error().message;
    auto plan = assemblePlan(std::move(out.value().result), request(10, "node"));
    ASSERT_TRUE(plan.ok()) << plan.error().message;
    ASSERT_EQ(plan.value().nodes.size(), 2u);
    EXPECT_EQ(plan.value().nodes[0].name, "n0");
    EXPECT_EQ(plan.value().nodes[1].slots, 8);
    std::vector<std::uint32_t> nodeOf;
    for (const RankPlacement &rank : plan.value().ranks)
        nodeOf.push_back(rank.node);
    EXPECT_EQ(nodeOf, (std::vector<std::uint32_t>{0, 1, 0, 1, 0, 1, 0, 1, 0, 1}));
    EXPECT_FALSE(plan.value().oversubscribed);
    EXPECT_EQ(plan.value().bindingRequest, BindingRequest::Default);
}

TEST(AssemblePlan, RefusesARankingThatNumberedTwice) {
    EngineResult result;
    result.nodes.resize(1);
    result.mapOrder = {0};
    result.procs = {Proc{0, 0, kNoIndex, kUnbound, 0}, Proc{0, 0, kNoIndex, kUnbound, 0}};
    auto plan = assemblePlan(std::move(result), PlanRequest{});
    ASSERT_FALSE(plan.ok());
    EXPECT_EQ(plan.error().message,
              "internal error: the ranking numbered a process twice or out of range");
}

TEST(BuildReport, Table) {
    struct Row {
        std::string name;
        PlanRequest request;
        std::string mapping, ranking, binding;
        std::vector<std::string> apps; // "mapper mapping ranking binding"
    };
    PlanRequest same = request(std::nullopt);
    same.apps = {app(1, "core"), app(1, "core")};
    PlanRequest differ = request(std::nullopt);
    differ.apps = {app(1, "core"), app(1, "node")};
    PlanRequest ppr = request(std::nullopt, "ppr:1:package");
    const std::vector<Row> rows = {
        {"job", request(4, "core"), "BYCORE:NOOVERSUBSCRIBE", "FILL", "CORE:IF-SUPPORTED", {}},
        {"ppr shows its object",
         ppr,
         "BYPACKAGE:NOOVERSUBSCRIBE",
         "SLOT",
         "PACKAGE:IF-SUPPORTED",
         {}},
        {"apps alike", same, "BYCORE:NOOVERSUBSCRIBE", "FILL", "CORE:IF-SUPPORTED", {}},
        {"apps differ",
         differ,
         "BYCORE:NOOVERSUBSCRIBE",
         "FILL",
         "CORE:IF-SUPPORTED",
         {"round_robin BYCORE:NOOVERSUBSCRIBE FILL CORE:IF-SUPPORTED",
          "round_robin BYNODE:NOOVERSUBSCRIBE NODE CORE:IF-SUPPORTED"}},
    };
    for (const Row &row : rows) {
        SCOPED_TRACE(row.name);
        JobPolicy job;
        auto out = placed(row.request, &job);
        ASSERT_TRUE(out.ok()) << out.error().message;
        auto apps = resolveApps(row.request);
        const PlanReport report = buildReport(row.request, apps.value().apps, job, out.value());
        EXPECT_EQ(report.mappingPolicy, row.mapping);
        EXPECT_EQ(report.rankingPolicy, row.ranking);
        EXPECT_EQ(report.bindingPolicy, row.binding);
        std::vector<std::string> lines;
        for (const AppPolicyReport &line : report.apps)
            lines.push_back(line.mapper + " " + line.mappingPolicy + " " + line.rankingPolicy +
                            " " + line.bindingPolicy);
        EXPECT_EQ(lines, row.apps);
    }
}

} // namespace
} // namespace stepmap::detail
