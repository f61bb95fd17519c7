#include "request/map_policy.hpp"

#include <optional>
#include <string>
#include <vector>

#include <gtest/gtest.h>

namespace stepmap {
namespace {

struct PolicyCase {
    std::string value;
    MapPolicy expected;
};

MapPolicy policy(MapBy by, std::optional<bool> oversubscribe = std::nullopt) {
    MapPolicy result;
    result.by = by;
    result.oversubscribe = oversubscribe;
    return result;
}

TEST(ParseMapBy, ParsesSlotNodeAndOversubscription) {
    const std::vector<PolicyCase> cases = {
        {"slot", policy(MapBy::Slot)},
        {"node", policy(MapBy::Node)},
        {"SLOT", policy(MapBy::Slot)},
        {"Node", policy(MapBy::Node)},
        {"node:OVERSUBSCRIBE", policy(MapBy::Node, true)},
        {"slot:oversubscribe", policy(MapBy::Slot, true)},
        // A modifier alone names no policy: the planner's default applies.
        {":OVERSUBSCRIBE", policy(MapBy::Default, true)},
        {":NOOVERSUBSCRIBE", policy(MapBy::Default, false)},
        {"node:NoOverSubscribe", policy(MapBy::Node, false)},
        {"slot:OVERSUBSCRIBE:OVERSUBSCRIBE", policy(MapBy::Slot, true)},
    };
    for (const PolicyCase &c : cases) {
        const auto parsed = parseMapBy(c.value);
        ASSERT_TRUE(parsed.ok()) << c.value << ": " << parsed.error().message;
        EXPECT_EQ(parsed.value(), c.expected) << c.value;
    }
}

TEST(ParseMapBy, ParsesObjectLevelsAndPatterns) {
    const auto with = [](MapBy by, auto change) {
        MapPolicy result = policy(by);
        change(result);
        return result;
    };
    const auto none = [](MapPolicy &) {};
    const std::vector<PolicyCase> cases = {
        {"core", policy(MapBy::Core)},
        {"hwthread", with(MapBy::Hwthread, [](MapPolicy &p) { p.hwtcpus = true; })},
        {"l1cache", policy(MapBy::L1Cache)},
        {"L2Cache", policy(MapBy::L2Cache)},
        {"l3cache", policy(MapBy::L3Cache)},
        {"numa", policy(MapBy::Numa)},
        {"package", policy(MapBy::Package)},
        {"socket", policy(MapBy::Package)},
        {"seq", policy(MapBy::Seq)},
        {"rankfile:FILE=my.rf", with(MapBy::Rankfile, [](MapPolicy &p) { p.file = "my.rf"; })},
        {"ppr:2:package", with(MapBy::Ppr,
                               [](MapPolicy &p) {
                                   p.pprCount = 2;
                                   p.pprObject = MapBy::Package;
                                   p.pprText = "2:package";
                               })},
        {"ppr:1:node:OVERSUBSCRIBE", with(MapBy::Ppr,
                                          [](MapPolicy &p) {
                                              p.pprCount = 1;
                                              p.pprObject = MapBy::Node;
                                              p.pprText = "1:node";
                                              p.oversubscribe = true;
                                          })},
        {"ppr:2:device=gpu", with(MapBy::Ppr,
                                  [](MapPolicy &p) {
                                      p.pprCount = 2;
                                      p.pprObject = MapBy::Device;
                                      p.pprText = "2:device=gpu";
                                      p.device = "gpu";
                                  })},
        {"pe-list=0-1,4", with(MapBy::PeList, [](MapPolicy &p) { p.peList = "0-1,4"; })},
        {"device=gpu:NDEV=2:SHARED", with(MapBy::Device,
                                          [](MapPolicy &p) {
                                              p.device = "gpu";
                                              p.ndev = 2;
                                              p.shared = true;
                                          })},
        {"device=gpu:INTERLEAVE", with(MapBy::Device,
                                       [](MapPolicy &p) {
                                           p.device = "gpu";
                                           p.interleave = "package";
                                       })},
        {"package:PE=4:SPAN:HWTCPUS", with(MapBy::Package,
                                           [](MapPolicy &p) {
                                               p.pe = 4;
                                               p.span = true;
                                               p.hwtcpus = true;
                                           })},
        {"core:CORECPUS:ORDERED:DISPLAY", with(MapBy::Core,
                                               [](MapPolicy &p) {
                                                   p.hwtcpus = false;
                                                   p.ordered = true;
                                                   p.display = true;
                                               })},
        {":PE=2", with(MapBy::Default, [](MapPolicy &p) { p.pe = 2; })},
        {"numa", with(MapBy::Numa, none)},
    };
    for (const PolicyCase &c : cases) {
        const auto parsed = parseMapBy(c.value);
        ASSERT_TRUE(parsed.ok()) << c.value << ": " << parsed.error().message;
        EXPECT_EQ(parsed.value(), c.expected) << c.value;
    }
}

struct ErrorCase {
    std::string value;
    std::string message;
};

TEST(ParseMapBy, RejectsUnknownAndUnsupportedValues) {
    const std::string accepted =
        "(accepted: slot, node, seq, rankfile, hwthread, core, l1cache, l2cache, l3cache, numa, "
        "package, ppr:N:OBJECT, pe-list=LIST, device=CLASS, each optionally followed by "
        ":MODIFIERS)";
    const std::string modifiers =
        "(accepted: OVERSUBSCRIBE, NOOVERSUBSCRIBE, SPAN, PE=n, HWTCPUS, CORECPUS, ORDERED, "
        "DISPLAY, FILE=path, NDEV=n, SHARED, INTERLEAVE[=level])";
    const std::vector<ErrorCase> cases = {
        {"", "--map-by: empty value " + accepted},
        {"nodes", "--map-by 'nodes': unknown mapping policy 'nodes' " + accepted},
        {"Slots:OVERSUBSCRIBE",
         "--map-by 'Slots:OVERSUBSCRIBE': unknown mapping policy 'Slots' " + accepted},
        {"board", "--map-by 'board': mapping by board is not supported: PRRTE (Open MPI 5) "
                  "dropped it; use package, numa or device=CLASS"},
        {"ppr:2", "--map-by 'ppr:2': ppr needs a pattern ppr:N:OBJECT, e.g. ppr:2:package "
                  "(objects: node, hwthread, core, l1cache, l2cache, l3cache, numa, package, "
                  "device=CLASS)"},
        {"ppr:x:core", "--map-by 'ppr:x:core': the ppr count 'x' is not a positive number "
                       "(write ppr:N:OBJECT, e.g. ppr:2:package)"},
        {"ppr:2:board", "--map-by 'ppr:2:board': unknown ppr object 'board' (accepted: node, "
                        "hwthread, core, l1cache, l2cache, l3cache, numa, package, "
                        "device=CLASS)"},
        {"pe-list=a", "--map-by 'pe-list=a': pe-list 'a' is not a list of CPU ids and ranges "
                      "(e.g. pe-list=0-3,6)"},
        {"pe-list=3-1", "--map-by 'pe-list=3-1': pe-list '3-1' is not a list of CPU ids and "
                        "ranges (e.g. pe-list=0-3,6)"},
        {"device=", "--map-by 'device=': device= needs a device class or name (e.g. "
                    "device=gpu)"},
        {"slot:PE=0", "--map-by 'slot:PE=0': modifier 'PE=0' needs PE=n with n a positive "
                      "number"},
        {"slot:PE", "--map-by 'slot:PE': modifier 'PE' needs PE=n with n a positive number"},
        // Numbers too large say the limit.
        {"slot:PE=99999999999", "--map-by 'slot:PE=99999999999': modifier 'PE=99999999999': PE "
                                "is above 65536, the most CPUs stepmap takes for a node"},
        {"slot:PE=65537", "--map-by 'slot:PE=65537': modifier 'PE=65537': PE is above 65536, "
                          "the most CPUs stepmap takes for a node"},
        {"device=gpu:NDEV=99999999999",
         "--map-by 'device=gpu:NDEV=99999999999': modifier 'NDEV=99999999999': NDEV is above "
         "65536, the most CPUs stepmap takes for a node"},
        {"ppr:99999999999:node", "--map-by 'ppr:99999999999:node': the ppr count '99999999999' "
                                 "is above 16777216, the most processes stepmap places"},
        {"ppr:1000000000:node:OVERSUBSCRIBE",
         "--map-by 'ppr:1000000000:node:OVERSUBSCRIBE': the ppr count '1000000000' is above "
         "16777216, the most processes stepmap places"},
        {"slot:SPAN=1", "--map-by 'slot:SPAN=1': modifier 'SPAN=1' takes no value (write SPAN)"},
        {"slot:NDEV=2", "--map-by 'slot:NDEV=2': NDEV describes how devices are handed out, so "
                        "it needs --map-by device=CLASS (e.g. device=gpu)"},
        {"core:HWTCPUS:CORECPUS",
         "--map-by 'core:HWTCPUS:CORECPUS': HWTCPUS and CORECPUS contradict each other; give one "
         "of them"},
        {"core:INHERIT", "--map-by 'core:INHERIT': modifier 'INHERIT' is not supported by "
                         "stepmap: it applies to jobs spawned by a running job, which srun does "
                         "not start"},
        {"core:NOLOCAL", "--map-by 'core:NOLOCAL': modifier 'NOLOCAL' is not supported by "
                         "stepmap: under Slurm every allocated node is a compute node; use "
                         "--host '!^NODE' to leave one out"},
        {"slot:OVERSUB", "--map-by 'slot:OVERSUB': unknown modifier 'OVERSUB' " + modifiers},
        {"slot:", "--map-by 'slot:': unknown modifier '' " + modifiers},
        {":OVERSUBSCRIBE:NOOVERSUBSCRIBE",
         "--map-by ':OVERSUBSCRIBE:NOOVERSUBSCRIBE': OVERSUBSCRIBE and NOOVERSUBSCRIBE "
         "contradict each other; give one of them"},
    };
    for (const ErrorCase &c : cases) {
        const auto parsed = parseMapBy(c.value);
        ASSERT_FALSE(parsed.ok()) << c.value;
        EXPECT_EQ(parsed.error().message, c.message);
    }
}

TEST(ParseRankBy, ParsesPrrtesFourAndRefusesObjects) {
    EXPECT_EQ(parseRankBy("slot").value(), RankBy::Slot);
    EXPECT_EQ(parseRankBy("NODE").value(), RankBy::Node);
    EXPECT_EQ(parseRankBy("fill").value(), RankBy::Fill);
    EXPECT_EQ(parseRankBy("Span").value(), RankBy::Span);
    EXPECT_EQ(parseRankBy("core").error().message,
              "--rank-by 'core': ranking by an object level is not supported: Open MPI 5 (PRRTE) "
              "ranks by slot, node, fill or span. To number the processes object by object, map "
              "by that object and rank by fill (e.g. --map-by core --rank-by fill)");
    EXPECT_EQ(parseRankBy("bogus").error().message,
              "--rank-by 'bogus': unknown ranking policy (accepted: slot, node, fill, span)");
}

TEST(ParseBindTo, ParsesLevelsAndQualifiers) {
    EXPECT_EQ(parseBindTo("core").value(), (BindPolicy{BindTo::Core}));
    EXPECT_EQ(parseBindTo("none").value(), (BindPolicy{BindTo::None}));
    EXPECT_EQ(parseBindTo("socket").value(), (BindPolicy{BindTo::Package}));
    EXPECT_EQ(parseBindTo("numa:if-supported").value(), (BindPolicy{BindTo::Numa, true}));
    EXPECT_EQ(parseBindTo("core:overload-allowed").value(),
              (BindPolicy{BindTo::Core, false, true}));
    EXPECT_EQ(parseBindTo(":overload-allowed").value(), (BindPolicy{BindTo::Default, false, true}));
    EXPECT_EQ(parseBindTo("hwthread:no-overload:report:limit=2").value(),
              (BindPolicy{BindTo::Hwthread, false, false, true, 2}));
    EXPECT_EQ(parseBindTo("cores").error().message,
              "--bind-to 'cores': unknown binding policy 'cores' (accepted: none, hwthread, core, "
              "l1cache, l2cache, l3cache, numa, package, optionally followed by :if-supported, "
              ":overload-allowed, :no-overload, :report, :limit=n)");
    EXPECT_EQ(parseBindTo("core:limit=0").error().message,
              "--bind-to 'core:limit=0': 'limit=0' needs limit=n with n from 1 to 65535");
    EXPECT_EQ(parseBindTo("core:overload-allowed:no-overload").error().message,
              "--bind-to 'core:overload-allowed:no-overload': overload-allowed and no-overload "
              "contradict each other; give one of them");
    EXPECT_EQ(parseBindTo("core:strict").error().message,
              "--bind-to 'core:strict': unknown qualifier 'strict' (accepted: if-supported, "
              "overload-allowed, no-overload, report, limit=n)");
}

} // namespace
} // namespace stepmap
