// planJob with node models: PRRTE's defaults, object maps and bindings,
// pe-list, ppr, seq, rankfile, MPMD, and the refusals with their messages.

#include "planner/planner.hpp"

#include <map>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "plan/job_map.hpp"
#include "plan_helpers.hpp"

namespace stepmap {
namespace {

using test::hostPerRank;

std::shared_ptr<const NodeModel> shape(int sockets, int cores, int threads, int numa = 1,
                                       std::vector<std::uint32_t> cpus = {}) {
    auto model = buildSlurmNodeModel(SlurmNodeShape{sockets, cores, threads, numa}, cpus);
    EXPECT_TRUE(model.ok()) << (model.ok() ? "" : model.error().message);
    return model.value();
}

Allocation nodes(int count, int slots, const std::shared_ptr<const NodeModel> &model) {
    Allocation allocation;
    for (int i = 0; i < count; ++i)
        allocation.nodes.push_back(AllocatedNode{"n" + std::to_string(i), slots, model});
    return allocation;
}

PlanRequest request(std::optional<int> np, std::string_view map = {}, std::string_view rank = {},
                    std::string_view bind = {}) {
    return test::planRequest(np, map, rank, bind);
}

PlanResult plan(const Allocation &allocation, const PlanRequest &req) {
    auto result = planJob(allocation, req);
    EXPECT_TRUE(result.ok()) << (result.ok() ? "" : result.error().message);
    return result.ok() ? result.value() : PlanResult{};
}

std::string error(const Allocation &allocation, const PlanRequest &req) {
    auto result = planJob(allocation, req);
    EXPECT_FALSE(result.ok());
    return result.ok() ? std::string() : result.error().message;
}

// Each rank's binding as logical PU list ("-" unbound).
std::vector<std::string> bound(const LaunchPlan &plan) {
    std::vector<std::string> out;
    for (std::uint32_t r = 0; r < plan.ranks.size(); ++r) {
        const CpuBinding *binding = plan.bindingOf(r);
        out.push_back(binding == nullptr ? "-" : formatIdList(binding->logical));
    }
    return out;
}

std::vector<std::string> boundOs(const LaunchPlan &plan) {
    std::vector<std::string> out;
    for (std::uint32_t r = 0; r < plan.ranks.size(); ++r) {
        const CpuBinding *binding = plan.bindingOf(r);
        out.push_back(binding == nullptr ? "-" : formatIdList(binding->os));
    }
    return out;
}

using Strings = std::vector<std::string>;

TEST(PlanDefaults, MapByCoreBindToCoreWithoutDirectives) {
    const Allocation two = nodes(2, 4, shape(1, 4, 1));
    const PlanResult result = plan(two, request(6));
    EXPECT_EQ(result.report.mappingPolicy, "BYCORE:NOOVERSUBSCRIBE");
    EXPECT_EQ(result.report.rankingPolicy, "FILL");
    EXPECT_EQ(result.report.bindingPolicy, "CORE:IF-SUPPORTED");
    EXPECT_EQ(hostPerRank(result.plan), (Strings{"n0", "n0", "n0", "n0", "n1", "n1"}));
    EXPECT_EQ(bound(result.plan), (Strings{"0", "1", "2", "3", "0", "1"}));
}

TEST(PlanDefaults, MapByTheBindingObjectWhenOnlyThatIsGiven) {
    const Allocation one = nodes(1, 8, shape(2, 4, 1, 2));
    const PlanResult result = plan(one, request(4, {}, {}, "numa"));
    EXPECT_EQ(result.report.mappingPolicy, "BYNUMA:NOOVERSUBSCRIBE");
    EXPECT_EQ(result.report.bindingPolicy, "NUMA");
    // Round robin over the 4 NUMA domains (2 cores each).
    EXPECT_EQ(bound(result.plan), (Strings{"0-1", "2-3", "4-5", "6-7"}));
}

TEST(PlanDefaults, SlotAndNodeBindToCoreUpToTwoProcsThenNuma) {
    const Allocation one = nodes(1, 8, shape(2, 4, 1, 2));
    EXPECT_EQ(plan(one, request(2, "slot")).report.bindingPolicy, "CORE:IF-SUPPORTED");
    const PlanResult three = plan(one, request(3, "slot"));
    EXPECT_EQ(three.report.bindingPolicy, "NUMA:IF-SUPPORTED");
    // Each takes one core of the first NUMA domain with a free core.
    EXPECT_EQ(bound(three.plan), (Strings{"0-1", "0-1", "2-3"}));
}

TEST(PlanDefaults, MoreProcsThanCoresWithinTheSlotsRunUnbound) {
    // 8 slots (Slurm counts hwthreads), 4 cores: an unrequested binding is
    // dropped for the node rather than overloading the cores.
    const Allocation smt = nodes(1, 8, shape(1, 4, 2));
    const PlanResult result = plan(smt, request(8, "slot"));
    EXPECT_EQ(result.report.bindingPolicy, "NONE");
    EXPECT_EQ(bound(result.plan), Strings(8, "-"));
    // Mapping by core there runs out of cores (PRRTE's behaviour): 4 fit.
    EXPECT_EQ(error(smt, request(8, "core")),
              "Binding application context 0 (8 processes, --map-by core, --bind-to core) would "
              "bind processes to more CPUs than the job holds.\nAdd :overload-allowed to "
              "--bind-to to bind several processes per CPU, bind to none, or request fewer "
              "processes.");
    // ... unless the hwthreads are the CPUs.
    const PlanResult hwt = plan(smt, request(8, "hwthread"));
    EXPECT_EQ(hwt.report.cpuType, "HWT");
    EXPECT_EQ(bound(hwt.plan), (Strings{"0", "1", "2", "3", "4", "5", "6", "7"}));
    // --bind-to hwthread alone maps by hwthread the same way (stepmap).
    const PlanResult bindHwt = plan(smt, request(8, {}, {}, "hwthread"));
    EXPECT_EQ(bindHwt.report.mappingPolicy, "BYHWTHREAD:NOOVERSUBSCRIBE");
    EXPECT_EQ(bound(bindHwt.plan), bound(hwt.plan));
}

TEST(PlanDefaults, PeForcesSlotMappingAndCoreBinding) {
    const Allocation one = nodes(1, 4, shape(1, 8, 1));
    const PlanResult result = plan(one, request(3, ":PE=2"));
    EXPECT_EQ(result.report.mappingPolicy, "BYSLOT:NOOVERSUBSCRIBE");
    EXPECT_EQ(result.report.bindingPolicy, "CORE:IF-SUPPORTED");
    EXPECT_EQ(result.report.cpusPerRank, "2");
    EXPECT_EQ(bound(result.plan), (Strings{"0-1", "2-3", "4-5"}));
}

TEST(PlanBindings, GiveLogicalAndOsIndices) {
    // 2 cores x 2 hwthreads, Linux numbering: core 0 = P#0,P#2.
    const Allocation one = nodes(1, 2, shape(1, 2, 2));
    const PlanResult result = plan(one, request(2, "core", {}, "core"));
    EXPECT_EQ(bound(result.plan), (Strings{"0-1", "2-3"}));
    EXPECT_EQ(boundOs(result.plan), (Strings{"0,2", "1,3"}));
    const PlanResult pus = plan(one, request(2, "hwthread", {}, "hwthread"));
    EXPECT_EQ(boundOs(pus.plan), (Strings{"0", "2"}));
}

TEST(PlanBindings, OverloadAllowedBindsSeveralProcsPerCpu) {
    const Allocation one = nodes(1, 4, shape(1, 2, 1));
    EXPECT_EQ(error(one, request(4, "slot", {}, "core")),
              "Binding application context 0 (4 processes, --map-by slot, --bind-to core) would "
              "bind processes to more CPUs than the job holds.\nAdd :overload-allowed to "
              "--bind-to to bind several processes per CPU, bind to none, or request fewer "
              "processes.");
    const PlanResult result = plan(one, request(4, "slot", {}, "core:overload-allowed"));
    EXPECT_EQ(result.report.bindingPolicy, "CORE:OVERLOAD-ALLOWED");
    EXPECT_EQ(bound(result.plan), (Strings{"0", "1", "0", "1"}));
}

TEST(PlanBindings, LimitCapsProcessesPerObject) {
    const Allocation one = nodes(1, 8, shape(2, 2, 1));
    const PlanResult result = plan(one, request(2, "slot", {}, "package:limit=1"));
    EXPECT_EQ(bound(result.plan), (Strings{"0-1", "2-3"}));
}

TEST(PlanObjects, SpanBalancesAcrossNodes) {
    const Allocation two = nodes(2, 4, shape(2, 2, 1));
    const PlanResult plain = plan(two, request(4, "package"));
    EXPECT_EQ(hostPerRank(plain.plan), (Strings{"n0", "n0", "n0", "n0"}));
    const PlanResult span = plan(two, request(4, "package:SPAN"));
    EXPECT_EQ(span.report.mappingPolicy, "BYPACKAGE:NOOVERSUBSCRIBE:SPAN");
    EXPECT_EQ(span.report.rankingPolicy, "SPAN");
    EXPECT_EQ(hostPerRank(span.plan), (Strings{"n0", "n0", "n1", "n1"}));
    EXPECT_EQ(bound(span.plan), (Strings{"0-1", "2-3", "0-1", "2-3"}));
}

TEST(PlanObjects, RankByNodeAndFillAndSpanRenumber) {
    const Allocation two = nodes(2, 4, shape(2, 2, 1));
    EXPECT_EQ(hostPerRank(plan(two, request(8, "package", "node")).plan),
              (Strings{"n0", "n1", "n0", "n1", "n0", "n1", "n0", "n1"}));
    // fill: package 0's processes, then package 1's, node by node.
    EXPECT_EQ(bound(plan(two, request(4, "package", "fill")).plan),
              (Strings{"0-1", "0-1", "2-3", "2-3"}));
    // slot: in placement order on the node (alternating packages).
    EXPECT_EQ(bound(plan(two, request(4, "package", "slot")).plan),
              (Strings{"0-1", "2-3", "0-1", "2-3"}));
}

TEST(PlanPatterns, PprPlacesNPerObject) {
    const Allocation two = nodes(2, 4, shape(2, 2, 1));
    const PlanResult result = plan(two, request(std::nullopt, "ppr:1:package"));
    EXPECT_EQ(result.report.mappingPolicy, "BYPACKAGE:NOOVERSUBSCRIBE");
    EXPECT_EQ(result.report.ppr, "1:package");
    EXPECT_EQ(hostPerRank(result.plan), (Strings{"n0", "n0", "n1", "n1"}));
    EXPECT_EQ(bound(result.plan), (Strings{"0-1", "2-3", "0-1", "2-3"}));
    EXPECT_EQ(error(two, request(5, "ppr:1:package")),
              "--map-by ppr:1:package: application context 0 asks for 5 processes, but the "
              "pattern places only 4 on the nodes (every node needs a free slot for each process "
              "it takes).\nRequest at most 4 processes, or change the pattern.");
}

TEST(PlanPatterns, PprFillsANodeWithFewerSlotsThanThePatternAsks) {
    // ppr:2:package asks 4 of a node with 3 free slots: it takes 3, object
    // by object, and the rest go to the next node (mpirun's ppr mapper).
    const Allocation two = nodes(2, 3, shape(2, 2, 1));
    const PlanResult result = plan(two, request(5, "ppr:2:package"));
    EXPECT_EQ(hostPerRank(result.plan), (Strings{"n0", "n0", "n0", "n1", "n1"}));
    EXPECT_EQ(bound(result.plan), (Strings{"0-1", "0-1", "2-3", "0-1", "0-1"}));
}

TEST(PlanPatterns, PeListBindsToTheListOrOneCpuEachWhenOrdered) {
    const Allocation one = nodes(1, 4, shape(1, 8, 1));
    const PlanResult list = plan(one, request(2, "pe-list=2-3"));
    EXPECT_EQ(list.report.cpuSet, "2-3");
    EXPECT_EQ(list.report.mappingPolicy, "PE-LIST:NOOVERSUBSCRIBE");
    EXPECT_EQ(bound(list.plan), (Strings{"2-3", "2-3"}));
    const PlanResult ordered = plan(one, request(2, "pe-list=2-3:ORDERED"));
    EXPECT_EQ(bound(ordered.plan), (Strings{"2", "3"}));
    EXPECT_EQ(error(one, request(2, "pe-list=9")),
              "--map-by pe-list=9 on node n0: CPU list '9': there is no core 9 (the node has 8)");
}

TEST(PlanPatterns, SequencePlacesRankIOnTheIthHost) {
    Allocation three = nodes(3, 2, shape(1, 2, 1));
    PlanRequest req = request(std::nullopt, "seq");
    req.sequence = parseSequenceFile("n2\nn0 1\n# comment\nn2\n", "seqfile").value();
    const PlanResult result = plan(three, req);
    EXPECT_EQ(result.report.rankingPolicy, "BYUSER");
    EXPECT_EQ(result.report.mappingPolicy, "SEQUENTIAL:NOOVERSUBSCRIBE");
    EXPECT_EQ(hostPerRank(result.plan), (Strings{"n2", "n0", "n2"}));
    EXPECT_EQ(bound(result.plan)[1], "1");
    // Without a file: --host's order, each host as often as its count.
    PlanRequest hosts = request(std::nullopt, "seq");
    hosts.host = test::host("n1:2,n0");
    EXPECT_EQ(hostPerRank(plan(three, hosts).plan), (Strings{"n1", "n1", "n0"}));
    req.sequence = parseSequenceFile("n7\n", "seqfile").value();
    EXPECT_EQ(error(three, req), "--map-by seq: host 'n7' (line 1 of the sequence) is not in the "
                                 "allocation.\nList only allocated nodes.");
    EXPECT_EQ(error(nodes(1, 2, nullptr), request(1, "seq")),
              "--map-by seq places rank i on the i-th host of a sequence, but none was given.\n"
              "Give the hosts in rank order with --map-by seq:FILE=path (one host per line), "
              "--hostfile or --host.");
}

TEST(PlanPatterns, RankfileGivesHostAndCpusPerRank) {
    const Allocation two = nodes(2, 2, shape(1, 4, 1));
    PlanRequest req = request(std::nullopt, "rankfile:FILE=rf");
    req.rankfile = parseRankfile("rank 1=n0 slot=2\nrank 0=+n1 slot=0-1\n", "rf").value();
    const PlanResult result = plan(two, req);
    EXPECT_EQ(hostPerRank(result.plan), (Strings{"n1", "n0"}));
    EXPECT_EQ(bound(result.plan), (Strings{"0-1", "2"}));
    EXPECT_EQ(result.report.mappingPolicy, "BYUSER:NOOVERSUBSCRIBE");

    req.rankfile = parseRankfile("rank 0=n0 slot=0-1\nrank 1=n0 slot=1\n", "rf").value();
    EXPECT_EQ(error(two, req), "rankfile rf: rank 1 slot=1 on n0 overlaps CPUs already given to "
                               "another rank (1).\nGive each rank CPUs of its own, or add "
                               ":overload-allowed to --bind-to.");
    req.np = 3;
    req.rankfile = parseRankfile("rank 0=n0\nrank 1=n1\n", "rf").value();
    EXPECT_EQ(error(two, req), "rankfile rf has no line for rank 2: with --map-by rankfile every "
                               "rank needs one (rank 2=HOST slot=CPUS)");
    req.np.reset();
    req.rankfile = parseRankfile("rank 0=n5\n", "rf").value();
    EXPECT_EQ(error(two, req), "rankfile rf: rank 0 is assigned to host n5, which is not among the "
                               "job's nodes (after --host and --hostfile).\nAssign ranks to "
                               "allocated nodes only.");
}

TEST(PlanApps, EachApplicationItsOwnPolicies) {
    const Allocation two = nodes(2, 4, shape(2, 2, 1));
    PlanRequest req;
    req.apps = {
        AppRequest{2, parseMapBy("package").value()},
        AppRequest{2, parseMapBy("node").value(), std::nullopt, parseBindTo("none").value()}};
    const PlanResult result = plan(two, req);
    ASSERT_EQ(result.report.apps.size(), 2u);
    EXPECT_EQ(result.report.apps[0], (AppPolicyReport{"round_robin", "BYPACKAGE:NOOVERSUBSCRIBE",
                                                      "FILL", "PACKAGE:IF-SUPPORTED"}));
    EXPECT_EQ(result.report.apps[1],
              (AppPolicyReport{"round_robin", "BYNODE:NOOVERSUBSCRIBE", "NODE", "NONE"}));
    EXPECT_EQ(hostPerRank(result.plan), (Strings{"n0", "n0", "n0", "n1"}));
    EXPECT_EQ(result.plan.ranks[2].app, 1u);
    EXPECT_EQ(bound(result.plan), (Strings{"0-1", "2-3", "-", "-"}));

    req.apps[0].map = parseMapBy("package:OVERSUBSCRIBE").value();
    req.apps[1].map = parseMapBy("node:NOOVERSUBSCRIBE").value();
    EXPECT_EQ(error(two, req), "application context 1 asks for NOOVERSUBSCRIBE, but the job (or "
                               "an earlier application context) has OVERSUBSCRIBE: these are "
                               "conflicting values for the whole job.\nGive OVERSUBSCRIBE or "
                               "NOOVERSUBSCRIBE once, for the job.");
}

TEST(PlanRefusals, NameTheProblemAndTheFix) {
    const Allocation one = nodes(1, 8, shape(2, 4, 1, 2));
    EXPECT_EQ(error(one, request(2, "core", {}, "package")),
              "cannot bind to package when mapping by core: a process is bound to the object it "
              "was mapped to or to one inside it, and a package lies above a core.\nBind to core "
              "or below, or map by package.");
    EXPECT_EQ(error(one, request(2, "slot", "fill")),
              "--rank-by fill ranks the processes of each object in turn, but mapping by slot "
              "puts them on no object.\nMap by an object (e.g. --map-by core --rank-by fill) or "
              "rank by slot or node.");
    EXPECT_EQ(error(one, request(2, "core:PE=2")),
              "PE=2 gives each process several CPUs, but --map-by core places each on one core, "
              "which is one CPU.\nMap by a wider object (e.g. --map-by package:PE=2), by slot, or "
              "add HWTCPUS to count hwthreads as CPUs.");
    EXPECT_EQ(error(one, request(2, "slot:PE=2", {}, "numa")),
              "--bind-to numa cannot be combined with PE=2: processes given their own CPUs are "
              "bound to CPUs.\nBind to core (or hwthread with HWTCPUS), or drop --bind-to.");
    EXPECT_EQ(error(nodes(1, 8, nullptr), request(2, "core")),
              "--map-by core needs the hardware of every node, but stepmap does not know that of "
              "node n0.\nMap by slot, node or seq, bind to none, or run where stepmap reads the "
              "node topology.");
    EXPECT_EQ(error(nodes(1, 8, nullptr), request(2, {}, {}, "core")),
              "--bind-to core needs the hardware of every node, but stepmap does not know that of "
              "node n0.\nMap by slot, node or seq, bind to none, or run where stepmap reads the "
              "node topology.");
    EXPECT_EQ(error(one, request(9, "core")),
              "There are not enough slots available in the system to satisfy the 9 slots that "
              "were requested by the application: the selected nodes have 8 slots.\nEither "
              "request fewer procs for your application, or use --map-by :OVERSUBSCRIBE (or "
              "--overbook) to run more procs than slots.");
}

TEST(PlanOversubscription, ObjectMapsSpreadTheExtraProcsEvenly) {
    const Allocation uneven = {{{"a", 4, shape(1, 8, 1)}, {"b", 2, shape(1, 8, 1)}}};
    const PlanResult result = plan(uneven, request(10, "core:OVERSUBSCRIBE", {}, "core"));
    EXPECT_EQ(hostPerRank(result.plan),
              (Strings{"a", "a", "a", "a", "a", "a", "b", "b", "b", "b"}));
    EXPECT_TRUE(result.plan.oversubscribed);
    EXPECT_EQ(result.report.mappingPolicy, "BYCORE:OVERSUBSCRIBE");
    // An unrequested binding is dropped once the job has more procs than slots.
    EXPECT_EQ(plan(uneven, request(10, "core:OVERSUBSCRIBE")).report.bindingPolicy, "NONE");
}

// PRRTE's offline "hostcap" cases (run_offline_maps.py): a -H ":N" cap
// selecting within an existing allocation, here Slurm's. Per-node process
// counts as PRRTE's harness expects them.
TEST(PlanHostCaps, FollowTheCapsAsPrrtesHarnessExpects) {
    const auto model = shape(1, 16, 1);
    const auto counts = [&](int slots, std::string_view hosts, int np, std::string_view map,
                            std::vector<AppRequest> apps = {}) {
        const Allocation three = {
            {{"nodeA0", slots, model}, {"nodeA1", slots, model}, {"nodeA2", slots, model}}};
        PlanRequest req = request(np, map);
        req.host = test::host(hosts);
        if (!apps.empty()) {
            req.np.reset();
            req.apps = std::move(apps);
        }
        const PlanResult result = plan(three, req);
        std::map<std::string, int> out;
        for (const std::string &host : hostPerRank(result.plan))
            ++out[host];
        return out;
    };
    using Counts = std::map<std::string, int>;
    const std::string capped = "nodeA0:1,nodeA1:1,nodeA2:1";
    for (const char *map : {"", "core", "package", "node", "slot", "hwthread"})
        EXPECT_EQ(counts(8, capped, 3, map), (Counts{{"nodeA0", 1}, {"nodeA1", 1}, {"nodeA2", 1}}))
            << map;
    EXPECT_EQ(counts(8, "nodeA0:1,nodeA1:2", 3, "core"), (Counts{{"nodeA0", 1}, {"nodeA1", 2}}));
    const std::string two = "nodeA0:2,nodeA1:2,nodeA2:2";
    const Counts threeThreeTwo = {{"nodeA0", 3}, {"nodeA1", 3}, {"nodeA2", 2}};
    EXPECT_EQ(counts(8, two, 8, "core:oversubscribe"), threeThreeTwo);
    EXPECT_EQ(counts(2, two, 8, "core:oversubscribe"), threeThreeTwo);
    EXPECT_EQ(counts(2, two, 8, "core:oversubscribe:span"), threeThreeTwo);
    EXPECT_EQ(counts(8, two, 6, "core:span"),
              (Counts{{"nodeA0", 2}, {"nodeA1", 2}, {"nodeA2", 2}}));
    EXPECT_EQ(counts(8, two, 8, "core:oversubscribe:span"), threeThreeTwo);
    const std::string four = "nodeA0:4,nodeA1:4,nodeA2:4";
    EXPECT_EQ(counts(4, four, 8, "core:span"), threeThreeTwo);
    EXPECT_EQ(counts(4, four, 2, "core:span"), (Counts{{"nodeA0", 1}, {"nodeA1", 1}}));
    EXPECT_EQ(counts(4, four, 12, "core:span"),
              (Counts{{"nodeA0", 4}, {"nodeA1", 4}, {"nodeA2", 4}}));
    EXPECT_EQ(counts(4, four, 14, "core:oversubscribe:span"),
              (Counts{{"nodeA0", 5}, {"nodeA1", 5}, {"nodeA2", 4}}));
    EXPECT_EQ(counts(4, four, 8, "core"), (Counts{{"nodeA0", 4}, {"nodeA1", 4}}));
    // The second application finds every slot taken and oversubscribes.
    EXPECT_EQ(counts(2, two, 0, "core:oversubscribe", {AppRequest{6}, AppRequest{2}}),
              threeThreeTwo);
    // Asking for more than the caps is refused (here: not enough slots).
    const Allocation three = {{{"nodeA0", 8, model}, {"nodeA1", 8, model}, {"nodeA2", 8, model}}};
    PlanRequest over = request(4, "core");
    over.host = test::host(capped);
    EXPECT_EQ(error(three, over).rfind("There are not enough slots available", 0), 0u);
}

TEST(JobMapFormats, PrrteMaskAndLogicalList) {
    const Allocation one = nodes(1, 4, shape(2, 2, 2));
    const PlanResult result = plan(one, request(2, "package"));
    const NodeModel &model = *one.nodes[0].model;
    const CpuBinding &first = *result.plan.bindingOf(0);
    EXPECT_EQ(formatPrrteBinding(model, first, false), "package[0][core:L0-1]");
    EXPECT_EQ(formatPrrteBinding(model, first, true), "package[0][hwt:L0-3]");
    EXPECT_EQ(formatBindingMask(model, first), "[BB/BB][../..]");
    const JobMapHeader header = reportedJobMapHeader(result.report, "7.0");
    const std::string mask =
        formatJobMap(result.plan, header, one, JobMapOptions{BoundStyle::Mask, false});
    EXPECT_NE(mask.find("Process rank: 1 Bound: [../..][BB/BB]\n"), std::string::npos) << mask;
    const std::string list =
        formatJobMap(result.plan, header, one, JobMapOptions{BoundStyle::LogicalList, false});
    EXPECT_NE(list.find("Process rank: 1 Bound: L4-7\n"), std::string::npos) << list;
    EXPECT_EQ(formatPlanJson(result.plan),
              "{\"nodes\":[{\"name\":\"n0\",\"slots\":4,\"max_slots\":null}],\n"
              "\"ranks\":[{\"rank\":0,\"node\":\"n0\",\"app\":0,\"local_rank\":0,\"node_rank\":0,"
              "\"cpuset_logical\":\"0-3\",\"cpuset_os\":\"0-1,4-5\"},\n"
              "{\"rank\":1,\"node\":\"n0\",\"app\":0,\"local_rank\":1,\"node_rank\":1,"
              "\"cpuset_logical\":\"4-7\",\"cpuset_os\":\"2-3,6-7\"}]}\n");
}

TEST(PlanCodec, CarriesBindingsAndApplications) {
    const Allocation two = nodes(2, 4, shape(2, 2, 2));
    PlanRequest req;
    req.apps = {AppRequest{3, parseMapBy("core").value()}, AppRequest{2}};
    const LaunchPlan original = plan(two, req).plan;
    const std::string text = encodePlan(original);
    EXPECT_EQ(text.rfind("SM2;n[0-1];4*2;-*2;0;", 0), 0u) << text;
    auto back = decodePlan(text);
    ASSERT_TRUE(back.ok()) << back.error().message;
    EXPECT_EQ(back.value(), original);
}

} // namespace
} // namespace stepmap
