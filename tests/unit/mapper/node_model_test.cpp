// NodeModel, its builder from Slurm's node shape, the CPU lists users write
// against it, and the rankfile / sequence-file parsers.

#include "hosts/node_model.hpp"

#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "placement/cpu_list.hpp"
#include "request/rankfile.hpp"

namespace stepmap {
namespace {

using Ids = std::vector<std::uint32_t>;

const NodeModel &model(const Expected<std::shared_ptr<const NodeModel>> &built) {
    EXPECT_TRUE(built.ok()) << (built.ok() ? "" : built.error().message);
    return *built.value();
}

TEST(SlurmNodeModel, NumbersLikeHwlocAndLinux) {
    const auto built = buildSlurmNodeModel(SlurmNodeShape{2, 2, 2, 1}, {});
    const NodeModel &m = model(built);
    ASSERT_EQ(m.puCount(), 8u);
    // Logical order: core-major, threads adjacent; OS: threads last.
    EXPECT_EQ(m.logicalOf({0, 1, 2, 3, 4, 5, 6, 7}), (Ids{0, 1, 2, 3, 4, 5, 6, 7}));
    EXPECT_EQ(m.osOf({0, 1}), (Ids{0, 4}));
    EXPECT_EQ(m.osOf({6, 7}), (Ids{3, 7}));
    EXPECT_EQ(m.objects(HwLevel::Package).size(), 2u);
    EXPECT_EQ(m.objects(HwLevel::Numa).size(), 2u);
    EXPECT_EQ(m.objects(HwLevel::L3Cache).size(), 2u);
    EXPECT_EQ(m.objects(HwLevel::Core).size(), 4u);
    EXPECT_EQ(m.objects(HwLevel::Pu).size(), 8u);
    EXPECT_TRUE(m.hasHwthreads());
    EXPECT_EQ(m.objects(HwLevel::Package)[1], (HwObject{1, 1, 4, 4}));
    EXPECT_EQ(m.objectOf(HwLevel::Core, 5), 2u);
    EXPECT_EQ(m.puFromOs(7), 7u);
    EXPECT_EQ(m.puFromLogical(9), std::nullopt);
}

TEST(SlurmNodeModel, HoldsOnlyTheJobsCpusWithMachineIndices) {
    // Abstract ids 2,3 (core 1) and 6,7 (core 3) of 2 sockets x 2 cores x 2.
    const auto built = buildSlurmNodeModel(SlurmNodeShape{2, 2, 2, 1}, {2, 3, 6, 7});
    const NodeModel &m = model(built);
    ASSERT_EQ(m.puCount(), 4u);
    EXPECT_EQ(m.logicalOf({0, 1, 2, 3}), (Ids{2, 3, 6, 7}));
    ASSERT_EQ(m.objects(HwLevel::Core).size(), 2u);
    EXPECT_EQ(m.objects(HwLevel::Core)[1].logicalIndex, 3u);
    EXPECT_EQ(m.machineCores(), 4u);
    EXPECT_EQ(m.machinePus(), 8u);
    EXPECT_EQ(m.packageCores(1).firstCore, 2u);
    // The same CPUs named by OS id (threads last: core 1 = 1,5; core 3 = 3,7).
    const auto byOs =
        buildSlurmNodeModel(SlurmNodeShape{2, 2, 2, 1}, {1, 5, 3, 7}, SlurmCpuIds::OsThreadsLast);
    const NodeModel &os = model(byOs);
    EXPECT_EQ(os.logicalOf({0, 1, 2, 3}), (Ids{2, 3, 6, 7}));
}

TEST(SlurmNodeModel, RefusesBadShapesAndIds) {
    EXPECT_EQ(buildSlurmNodeModel(SlurmNodeShape{0, 4, 1, 1}, {}).error().message,
              "Slurm node shape 0 sockets x 4 cores x 1 threads (1 NUMA per socket): every count "
              "must be at least 1 and the node at most 65536 CPUs");
    EXPECT_EQ(buildSlurmNodeModel(SlurmNodeShape{1024, 1024, 1, 1}, {}).error().message,
              "Slurm node shape 1024 sockets x 1024 cores x 1 threads (1 NUMA per socket): "
              "every count must be at least 1 and the node at most 65536 CPUs");
    EXPECT_EQ(buildSlurmNodeModel(SlurmNodeShape{1, 6, 1, 4}, {}).error().message,
              "Slurm node shape: 4 NUMA domains per socket do not divide 6 cores per socket "
              "evenly");
    EXPECT_EQ(buildSlurmNodeModel(SlurmNodeShape{1, 4, 1, 1}, {4}).error().message,
              "CPU id 4 is outside the node (4 CPUs: 1 sockets x 4 cores x 1 threads)");
    EXPECT_EQ(buildSlurmNodeModel(SlurmNodeShape{1, 4, 1, 1}, {1, 1}).error().message,
              "CPU id 1 is listed twice");
}

PuRecord pu(std::uint32_t logical, std::uint32_t os, std::optional<std::uint32_t> core,
            std::optional<std::uint32_t> l3 = std::nullopt) {
    PuRecord record;
    record.logical = logical;
    record.os = os;
    if (core)
        record.ancestors[static_cast<std::size_t>(HwLevel::Core)] =
            PuRecord::Ancestor{*core, *core};
    if (l3)
        record.ancestors[static_cast<std::size_t>(HwLevel::L3Cache)] = PuRecord::Ancestor{*l3};
    return record;
}

TEST(NodeModelMake, ValidatesItsInput) {
    EXPECT_EQ(NodeModel::make(NodeModelInput{}).error().message,
              "node model: the job holds no PU on the node");
    EXPECT_EQ(NodeModel::make(NodeModelInput{{pu(0, 0, 0), pu(0, 1, 1)}}).error().message,
              "node model: PU L#0 is listed twice");
    EXPECT_EQ(NodeModel::make(NodeModelInput{{pu(0, 0, 0), pu(1, 0, 1)}}).error().message,
              "node model: two PUs have OS index 0");
    EXPECT_EQ(NodeModel::make(NodeModelInput{{pu(0, 0, std::nullopt)}}).error().message,
              "node model: PU L#0 is in no core");
    EXPECT_EQ(NodeModel::make(NodeModelInput{{pu(0, 0, 0, 0), pu(1, 1, 1, 1), pu(2, 2, 2, 0)}})
                  .error()
                  .message,
              "node model: the PUs of l3cache L#0 are not contiguous in logical order (PU L#2)");
    // A level missing under some PUs is fine.
    auto partial = NodeModel::make(NodeModelInput{{pu(0, 0, 0, 0), pu(1, 1, 1)}});
    ASSERT_TRUE(partial.ok());
    EXPECT_EQ(partial->objects(HwLevel::L3Cache).size(), 1u);
    EXPECT_EQ(partial->objectOf(HwLevel::L3Cache, 1), kNoIndex);
}

TEST(CpuIdLists, ParseAndFormat) {
    EXPECT_EQ(parseCpuIdList("0-3,8,10-11").value(), (Ids{0, 1, 2, 3, 8, 10, 11}));
    EXPECT_EQ(parseCpuIdList("3,1,1").value(), (Ids{1, 3}));
    EXPECT_EQ(parseCpuIdList("").value(), Ids{});
    EXPECT_EQ(parseCpuIdList("1-x").error().message,
              "CPU list '1-x': '1-x' is not N or N-M (e.g. 0-3,8)");
    EXPECT_EQ(formatIdList({0, 1, 2, 3, 8, 10, 11}), "0-3,8,10-11");
    EXPECT_EQ(formatIdList({}), "");
}

// Ids and counts are checked before anything is expanded: each of these
// would otherwise allocate gigabytes.
TEST(CpuIdLists, RefuseWhatPassesTheLimitsBeforeExpanding) {
    EXPECT_EQ(parseCpuIdList("0-4294967295").error().message,
              "CPU list '0-4294967295': CPU id 4294967295 is above 16777216, the highest "
              "accepted");
    EXPECT_EQ(parseCpuIdList("0-4294967296").error().message,
              "CPU list '0-4294967296': '0-4294967296' is not N or N-M (e.g. 0-3,8)");
    const IdListLimits small{.maxId = 63, .maxCount = 64};
    EXPECT_EQ(parseCpuIdList("0-63", small).value().size(), 64u);
    EXPECT_EQ(parseCpuIdList("0-64", small).error().message,
              "CPU list '0-64': CPU id 64 is above 63, the highest accepted");
    EXPECT_EQ(parseCpuIdList("0-63,0", small).error().message,
              "CPU list '0-63,0' names more than 64 CPUs");
    std::string repeated = "0-16777215";
    for (int i = 0; i < 100; ++i)
        repeated += ",0-16777215";
    EXPECT_EQ(parseCpuIdList(repeated).error().message,
              "CPU list '" + repeated.substr(0, 100) + "...' names more than 16777216 CPUs");
}

TEST(CpuLists, ResolveAgainstTheModel) {
    // 2 packages x 2 cores x 2 hwthreads, the job holding cores 0, 1 and 3.
    const auto built = buildSlurmNodeModel(SlurmNodeShape{2, 2, 2, 1}, {0, 1, 2, 3, 6, 7});
    const NodeModel &m = model(built);
    const auto pus = [&](std::string_view list, bool hwthreads = false) {
        auto resolved = detail::resolveSlotList(list, m, hwthreads);
        EXPECT_TRUE(resolved.ok())
            << list << ": " << (resolved.ok() ? "" : resolved.error().message);
        return resolved.ok() ? m.logicalOf(resolved->pus) : Ids{};
    };
    EXPECT_EQ(pus("1"), (Ids{2, 3}));
    EXPECT_EQ(pus("0-1"), (Ids{0, 1, 2, 3}));
    EXPECT_EQ(pus("1", true), (Ids{1}));
    EXPECT_EQ(pus("P1"), (Ids{6, 7}));
    EXPECT_EQ(pus("P0:1"), (Ids{2, 3}));
    EXPECT_EQ(pus("1:1"), (Ids{6, 7}));
    EXPECT_EQ(pus("S1:*"), (Ids{6, 7}));
    EXPECT_EQ(pus("0;P1"), (Ids{0, 1, 6, 7}));
    auto notHeld = detail::resolveSlotList("2", m, false);
    ASSERT_TRUE(notHeld.ok());
    EXPECT_TRUE(notHeld->pus.empty());
    EXPECT_EQ(notHeld->notHeld, (Ids{2}));
    EXPECT_EQ(detail::resolveSlotList("9", m, false).error().message,
              "CPU list '9': there is no core 9 (the node has 4)");
    EXPECT_EQ(detail::resolveSlotList("P2", m, false).error().message,
              "CPU list 'P2': there is no package 2 (the node has 2)");
    EXPECT_EQ(detail::resolveSlotList("P0:2", m, false).error().message,
              "CPU list 'P0:2': package 0 has no core 2 (it has 2)");
    // Counted before expanding: a rankfile's slot= or a pe-list naming more
    // CPUs than a node can have (this one 16M ids 40 times over).
    std::string many = "0-16777215";
    for (int i = 0; i < 39; ++i)
        many += ",0-16777215";
    EXPECT_EQ(detail::resolveSlotList(many, m, false).error().message,
              "CPU list '" + many.substr(0, 100) +
                  "...' names more than 65536 CPUs, the most stepmap takes for a node");
    EXPECT_EQ(detail::resolveSlotList("P0:0-99999", m, false).error().message,
              "CPU list 'P0:0-99999': cores '0-99999' of package 0 are not a list of N or N-M");
}

TEST(Rankfile, ParsesLinesAndComments) {
    const auto file = parseRankfile("# placement\nrank 1=user@n2 slot=P0:1\n"
                                    "rank 0 = n1 slots=0-3 // two\n/* a\n block */\n"
                                    "rank 2=+n0\n",
                                    "rf");
    ASSERT_TRUE(file.ok()) << file.error().message;
    EXPECT_EQ(file->entries,
              (std::vector<RankfileEntry>{{0, "n1", "0-3"}, {1, "n2", "P0:1"}, {2, "+n0", ""}}));
}

TEST(Rankfile, RefusesWithFileAndLine) {
    EXPECT_EQ(parseRankfile("rank 0=n1\nrank 0=n2\n", "rf").error().message,
              "rankfile rf, line 2: rank 0 is assigned twice (first as n1); give each rank one "
              "line");
    EXPECT_EQ(parseRankfile("rank 0 n1\n", "rf").error().message,
              "rankfile rf, line 1: expected 'rank N=HOST [slot=LIST]', got 'rank 0 n1'");
    EXPECT_EQ(parseRankfile("rank x=n1\n", "rf").error().message,
              "rankfile rf, line 1: rank 'x' is not a number below 16777216");
    EXPECT_EQ(parseRankfile("rank 0=n1 slot\n", "rf").error().message,
              "rankfile rf, line 1: expected 'rank N=HOST [slot=LIST]', got 'rank 0=n1 slot'");
    EXPECT_EQ(parseRankfile("# nothing\n", "rf").error().message,
              "rankfile rf assigns no rank (expected lines 'rank N=HOST [slot=LIST]')");
    // What the file holds is shown escaped and cut.
    EXPECT_EQ(parseRankfile(std::string("rank 0 \0\x1b[1m\n", 13), "rf").error().message,
              "rankfile rf, line 1: expected 'rank N=HOST [slot=LIST]', got 'rank 0 "
              "\\x00\\x1b[1m'");
    EXPECT_EQ(parseRankfile("rank 0=\xff\nrank 0=n2\n", "r\nf").error().message,
              "rankfile r\\nf, line 2: rank 0 is assigned twice (first as \\xff); give each "
              "rank one line");
    EXPECT_EQ(parseRankfile("rank 0 " + std::string(5000, 'x') + "\n", "rf").error().message,
              "rankfile rf, line 1: expected 'rank N=HOST [slot=LIST]', got 'rank 0 " +
                  std::string(93, 'x') + "...'");
}

TEST(SequenceFile, OneHostPerRank) {
    const auto entries = parseSequenceFile("n1\n\n# c\nn2 0-1 0 2\n  n1  \n", "seq");
    ASSERT_TRUE(entries.ok()) << entries.error().message;
    EXPECT_EQ(entries.value(), (std::vector<SequenceEntry>{{"n1", ""}, {"n2", "0-1"}, {"n1", ""}}));
    EXPECT_EQ(parseSequenceFile("n1 slots=2\nn2=1\n", "seq").error().message,
              "sequence file seq, line 2: 'n2=1' is not 'HOST [CPUS]' (one host per rank; a "
              "hostfile's slots= does not apply to --map-by seq)");
    EXPECT_EQ(parseSequenceFile("\n#x\n", "seq").error().message,
              "sequence file seq names no host (one host per rank, in rank order)");
    EXPECT_EQ(parseSequenceFile(std::string("n1\n\0=\x07\n", 7), "seq").error().message,
              "sequence file seq, line 2: '\\x00=\\x07' is not 'HOST [CPUS]' (one host per "
              "rank; a hostfile's slots= does not apply to --map-by seq)");
}

} // namespace
} // namespace stepmap
