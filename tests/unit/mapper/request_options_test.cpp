// buildRequest (request/request_options.hpp): option values to a
// PlanRequest, files through a fake reader, in srun's and stepmap-plan's
// wording; needsHardware.

#include "request/request_options.hpp"

#include <map>
#include <string>
#include <vector>

#include <gtest/gtest.h>

namespace stepmap {
namespace {

constexpr OptionWording kSrun{.quoteValues = true, .mapFileNamesValue = false};
constexpr OptionWording kPlan{.quoteValues = false, .mapFileNamesValue = true};

// Files by name; any other name is missing.
OptionFileReader filesReader(std::map<std::string, std::string> files) {
    return [files = std::move(files)](const std::string &path) -> Expected<std::string> {
        const auto it = files.find(path);
        if (it == files.end())
            return UserError{"No such file or directory"};
        return it->second;
    };
}

const OptionFileReader kFailingReader = [](const std::string &) -> Expected<std::string> {
    return UserError{"Permission denied"};
};

const std::map<std::string, std::string> kFiles = {
    {"hosts", "n1 slots=2\nn2 slots=2\n"},
    {"seq", "n2\nn1 0-1\n"},
    {"ranks", "rank 0=n2 slot=1\nrank 1=n1 slot=0\n"},
    {"bad-hosts", "n1 slots=two\n"},
    {"bad-seq", "n1=2\n"},
};

RequestOptions oneApp(AppOptions app, std::optional<std::string> host = {},
                      std::optional<std::string> hostfile = {}) {
    RequestOptions options;
    options.host = std::move(host);
    options.hostfile = std::move(hostfile);
    options.apps = {std::move(app)};
    return options;
}

RequestOptions apps(std::vector<AppOptions> contexts) {
    RequestOptions options;
    options.apps = std::move(contexts);
    return options;
}

struct ErrorCase {
    std::string name;
    RequestOptions options;
    std::string srun;        // the message in srun's wording
    std::string stepmapPlan; // in stepmap-plan's
};

TEST(BuildRequest, ErrorsNameTheOptionInEachCallersWording) {
    const std::vector<ErrorCase> cases = {
        {"bad -n", oneApp({.np = "x"}),
         "-n 'x': process count 'x': expected a positive number, e.g. -n 8",
         "-n x: process count 'x': expected a positive number, e.g. -n 8"},
        {"bad --host", oneApp({}, "a,,b"), "--host 'a,,b': empty entry (check for a stray ',')",
         "--host 'a,,b': empty entry (check for a stray ',')"},
        {"bad --map-by", oneApp({.mapBy = "slot:PE"}),
         "--map-by 'slot:PE': modifier 'PE' needs PE=n with n a positive "
         "number",
         "--map-by 'slot:PE': modifier 'PE' needs PE=n with n a positive number"},
        {"bad --rank-by", oneApp({.rankBy = "bogus"}),
         "--rank-by 'bogus': unknown ranking policy (accepted: slot, node, "
         "fill, span)",
         "--rank-by 'bogus': unknown ranking policy (accepted: slot, node, fill, span)"},
        {"bad --bind-to", oneApp({.bindTo = "core:limit=0"}),
         "--bind-to 'core:limit=0': 'limit=0' needs limit=n with n "
         "from 1 to 65535",
         "--bind-to 'core:limit=0': 'limit=0' needs limit=n with n from 1 to 65535"},
        {"missing hostfile", oneApp({}, {}, "nope"),
         "cannot read --hostfile 'nope': No such file or directory",
         "cannot read --hostfile 'nope': No such file or directory"},
        {"bad hostfile", oneApp({}, {}, "bad-hosts"),
         "hostfile bad-hosts, line 1: 'slots=two': slots must be a positive number",
         "hostfile bad-hosts, line 1: 'slots=two': slots must be a positive number"},
        {"seq without a file", oneApp({.mapBy = "seq"}),
         "--map-by 'seq' needs a file: add :FILE=path (or give --hostfile)",
         "--map-by seq needs a file: add :FILE=path (or give --hostfile)"},
        {"missing seq file", oneApp({.mapBy = "seq:FILE=nope"}),
         "cannot read the --map-by file 'nope': No such file or directory",
         "cannot read --map-by seq:FILE=nope file 'nope': No such file or directory"},
        {"bad seq file", oneApp({.mapBy = "seq:FILE=bad-seq"}),
         "sequence file bad-seq, line 1: 'n1=2' is not 'HOST [CPUS]' (one host per rank; a "
         "hostfile's slots= does not apply to --map-by seq)",
         "sequence file bad-seq, line 1: 'n1=2' is not 'HOST [CPUS]' (one host per rank; a "
         "hostfile's slots= does not apply to --map-by seq)"},
        {"rankfile that is a hostfile", oneApp({.mapBy = "rankfile"}, {}, "hosts"),
         "rankfile hosts, line 1: expected 'rank N=HOST [slot=LIST]', got 'n1 slots=2'",
         "rankfile hosts, line 1: expected 'rank N=HOST [slot=LIST]', got 'n1 slots=2'"},
        {"MPMD: bad -n", apps({{.np = "2"}, {.np = "0"}}),
         "application context 1: -n '0': process count '0': expected a positive number, e.g. "
         "-n 8",
         "application context 1: -n 0: process count '0': expected a positive number, e.g. -n 8"},
        {"MPMD: bad --map-by", apps({{.np = "2"}, {.np = "1", .mapBy = "bogus:x"}}),
         "application context 1: --map-by 'bogus:x': unknown mapping "
         "policy 'bogus' (accepted: slot, node, seq, rankfile, hwthread, core, l1cache, "
         "l2cache, l3cache, numa, package, ppr:N:OBJECT, pe-list=LIST, device=CLASS, each "
         "optionally followed by :MODIFIERS)",
         "application context 1: --map-by 'bogus:x': unknown mapping policy 'bogus' (accepted: "
         "slot, node, seq, rankfile, hwthread, core, l1cache, l2cache, l3cache, numa, package, "
         "ppr:N:OBJECT, pe-list=LIST, device=CLASS, each optionally followed by :MODIFIERS)"},
        {"MPMD: missing seq file", apps({{.np = "2"}, {.np = "1", .mapBy = "seq:FILE=nope"}}),
         "application context 1: cannot read the --map-by file 'nope': No such file or "
         "directory",
         "application context 1: cannot read --map-by seq:FILE=nope file 'nope': No such file "
         "or directory"},
        {"MPMD: seq without a file", apps({{.np = "2", .mapBy = "seq"}, {.np = "1"}}),
         "application context 0: --map-by 'seq' needs a file: add :FILE=path (or give "
         "--hostfile)",
         "application context 0: --map-by seq needs a file: add :FILE=path (or give "
         "--hostfile)"},
    };
    for (const ErrorCase &c : cases) {
        const auto srun = buildRequest(c.options, filesReader(kFiles), kSrun);
        ASSERT_FALSE(srun.ok()) << c.name;
        EXPECT_EQ(srun.error().message, c.srun) << c.name;
        const auto plan = buildRequest(c.options, filesReader(kFiles), kPlan);
        ASSERT_FALSE(plan.ok()) << c.name;
        EXPECT_EQ(plan.error().message, c.stepmapPlan) << c.name;
    }
}

TEST(BuildRequest, AReaderThatFailsNamesTheFileAndItsPurpose) {
    const std::vector<std::pair<RequestOptions, std::string>> cases = {
        {oneApp({}, {}, "hosts"), "cannot read --hostfile 'hosts': Permission denied"},
        {oneApp({.mapBy = "rankfile:FILE=ranks"}),
         "cannot read the --map-by file 'ranks': Permission denied"},
        {oneApp({.mapBy = "seq:FILE=a\nb"}),
         "cannot read the --map-by file 'a\\nb': Permission denied"},
    };
    for (const auto &[options, message] : cases) {
        const auto built = buildRequest(options, kFailingReader, kSrun);
        ASSERT_FALSE(built.ok()) << message;
        EXPECT_EQ(built.error().message, message);
    }
}

TEST(BuildRequest, ReadsNoFileNoOptionNames) {
    const OptionFileReader unexpected = [](const std::string &path) -> Expected<std::string> {
        ADD_FAILURE() << "read " << path;
        return UserError{"unexpected"};
    };
    const auto built = buildRequest(
        oneApp({.np = "4", .mapBy = "core", .rankBy = "fill", .bindTo = "core"}, "n1,n2:2"),
        unexpected, kSrun);
    ASSERT_TRUE(built.ok()) << built.error().message;
    EXPECT_EQ(built->np, 4);
    EXPECT_EQ(built->map.by, MapBy::Core);
    EXPECT_EQ(built->rank, RankBy::Fill);
    EXPECT_EQ(built->bind, parseBindTo("core").value());
    ASSERT_TRUE(built->host);
    EXPECT_EQ(built->host->entries.size(), 2u);
    EXPECT_FALSE(built->hostfile);
    EXPECT_TRUE(built->apps.empty());
    EXPECT_EQ(buildRequest(RequestOptions{}, unexpected, kSrun).value(), PlanRequest{});
}

TEST(BuildRequest, ReadsTheMapFileElseTheHostfile) {
    const auto seq = buildRequest(oneApp({.mapBy = "seq:FILE=seq"}), filesReader(kFiles), kPlan);
    ASSERT_TRUE(seq.ok()) << seq.error().message;
    EXPECT_EQ(seq->sequence, parseSequenceFile(kFiles.at("seq"), "seq").value());

    auto files = kFiles;
    files["plain"] = "n1\nn2\n";
    const auto plain =
        buildRequest(oneApp({.mapBy = "seq"}, {}, "plain"), filesReader(files), kSrun);
    ASSERT_TRUE(plain.ok()) << plain.error().message;
    EXPECT_EQ(plain->hostfile, parseHostfile("n1\nn2\n", "plain").value());
    EXPECT_EQ(plain->sequence, parseSequenceFile("n1\nn2\n", "plain").value());

    const auto ranks =
        buildRequest(oneApp({.mapBy = "rankfile:FILE=ranks"}), filesReader(kFiles), kSrun);
    ASSERT_TRUE(ranks.ok()) << ranks.error().message;
    EXPECT_EQ(ranks->rankfile, parseRankfile(kFiles.at("ranks"), "ranks").value());
}

TEST(BuildRequest, MpmdDirectivesOnlyTheFirstContextGivesAreTheJobs) {
    const auto shared =
        buildRequest(apps({{.np = "2", .mapBy = "core", .bindTo = "core"}, {.np = "3"}}),
                     filesReader(kFiles), kPlan);
    ASSERT_TRUE(shared.ok()) << shared.error().message;
    EXPECT_EQ(shared->map.by, MapBy::Core);
    EXPECT_EQ(shared->bind, parseBindTo("core").value());
    EXPECT_FALSE(shared->np);
    ASSERT_EQ(shared->apps.size(), 2u);
    EXPECT_EQ(shared->apps[0], AppRequest{.np = 2});
    EXPECT_EQ(shared->apps[1], AppRequest{.np = 3});

    const auto perApp = buildRequest(apps({{.np = "2", .mapBy = "slot", .rankBy = "node"},
                                           {.np = "3", .mapBy = "seq:FILE=seq", .rankBy = "slot"}}),
                                     filesReader(kFiles), kPlan);
    ASSERT_TRUE(perApp.ok()) << perApp.error().message;
    EXPECT_EQ(perApp->map, MapPolicy{});
    EXPECT_FALSE(perApp->rank);
    ASSERT_EQ(perApp->apps.size(), 2u);
    EXPECT_EQ(perApp->apps[0].map->by, MapBy::Slot);
    EXPECT_EQ(perApp->apps[0].rank, RankBy::Node);
    EXPECT_EQ(perApp->apps[1].map->by, MapBy::Seq);
    EXPECT_EQ(perApp->apps[1].rank, RankBy::Slot);
    EXPECT_EQ(perApp->apps[1].sequence, parseSequenceFile(kFiles.at("seq"), "seq").value());
}

TEST(UnreadableFile, NamesPurposeAndPath) {
    EXPECT_EQ(
        unreadableFile("--multi-prog's file", "/tmp/x y", UserError{"Is a directory"}).message,
        "cannot read --multi-prog's file '/tmp/x y': Is a directory");
}

struct HardwareCase {
    std::string name;
    RequestOptions options;
    bool needed;
};

TEST(NeedsHardware, ObjectMapsPePprRankfilesAndBindings) {
    const std::vector<HardwareCase> cases = {
        {"nothing", oneApp({}), false},
        {"map-by slot", oneApp({.mapBy = "slot"}), false},
        {"map-by node", oneApp({.mapBy = "node"}), false},
        {"map-by seq", oneApp({.mapBy = "seq:FILE=seq"}), false},
        {"map-by core", oneApp({.mapBy = "core"}), true},
        {"ppr on nodes", oneApp({.mapBy = "ppr:2:node"}), true},
        {"rankfile", oneApp({.mapBy = "rankfile:FILE=ranks"}), true},
        {"PE=1", oneApp({.mapBy = "slot:PE=1"}), true},
        {"bind-to none", oneApp({.bindTo = "none"}), false},
        {"bind-to core", oneApp({.bindTo = "core"}), true},
        {"MPMD, slot and node", apps({{.mapBy = "slot"}, {.mapBy = "node"}}), false},
        {"MPMD, a context maps by numa", apps({{.mapBy = "slot"}, {.mapBy = "numa"}}), true},
        {"MPMD, a context with PE=2", apps({{.mapBy = "slot"}, {.mapBy = "node:PE=2"}}), true},
        {"MPMD, a context binds", apps({{.np = "1"}, {.bindTo = "core"}}), true},
    };
    for (const HardwareCase &c : cases) {
        const auto built = buildRequest(c.options, filesReader(kFiles), kPlan);
        ASSERT_TRUE(built.ok()) << c.name << ": " << built.error().message;
        EXPECT_EQ(needsHardware(built.value()), c.needed) << c.name;
    }
}

} // namespace
} // namespace stepmap
