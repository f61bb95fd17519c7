// Properties every plan keeps, over random allocations, node shapes and
// policies (fixed seeds, so failures reproduce): each rank placed exactly
// once, no node above its max_slots, no node above its slots unless
// oversubscription was allowed, bindings inside the CPUs the job holds on
// the rank's node, the same answer twice, and the plan surviving its text
// form.

#include "planner/planner.hpp"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <random>
#include <set>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "plan/job_map.hpp"
#include "plan_helpers.hpp"

namespace stepmap {
namespace {

struct Scenario {
    Allocation allocation;
    PlanRequest request;
    std::string description;
};

int pick(std::mt19937 &random, int low, int high) {
    return std::uniform_int_distribution<int>(low, high)(random);
}

template <class T> const T &pickOne(std::mt19937 &random, const std::vector<T> &values) {
    return values[static_cast<std::size_t>(pick(random, 0, static_cast<int>(values.size()) - 1))];
}

std::shared_ptr<const NodeModel> randomModel(std::mt19937 &random, std::string &shape) {
    const int sockets = pick(random, 1, 2);
    const int cores = pick(random, 1, 4) * 2;
    const int threads = pick(random, 1, 2);
    const int numa = cores % 2 == 0 ? pick(random, 1, 2) : 1;
    std::vector<std::uint32_t> cpus;
    const int total = sockets * cores * threads;
    // Sometimes the job holds only some of the CPUs (whole cores).
    if (pick(random, 0, 2) == 0) {
        for (int core = 0; core < sockets * cores; ++core) {
            if (pick(random, 0, 3) != 0 || core == 0)
                for (int t = 0; t < threads; ++t)
                    cpus.push_back(static_cast<std::uint32_t>(core * threads + t));
        }
    }
    shape = std::to_string(sockets) + "x" + std::to_string(cores) + "x" + std::to_string(threads) +
            "/" + std::to_string(numa) + " holding " +
            (cpus.empty() ? std::string("all") : formatIdList(cpus)) + " of " +
            std::to_string(total);
    auto model = buildSlurmNodeModel(SlurmNodeShape{sockets, cores, threads, numa}, cpus);
    EXPECT_TRUE(model.ok()) << shape << ": " << (model.ok() ? "" : model.error().message);
    return model.value();
}

Scenario randomScenario(std::mt19937 &random, bool modeled) {
    Scenario s;
    const int nodeCount = pick(random, 1, 6);
    std::string shape;
    const auto shared = modeled ? randomModel(random, shape) : nullptr;
    for (int i = 0; i < nodeCount; ++i) {
        std::shared_ptr<const NodeModel> model = shared;
        std::string own = shape;
        if (modeled && pick(random, 0, 3) == 0)
            model = randomModel(random, own);
        s.allocation.nodes.push_back(
            AllocatedNode{"n" + std::to_string(i), pick(random, 1, 12), model});
        s.description += " n" + std::to_string(i) + ":" +
                         std::to_string(s.allocation.nodes.back().slots) +
                         (modeled ? "[" + own + "]" : "");
    }
    static const std::vector<std::string> modeledMaps = {
        "",           "slot",      "node",         "core",      "hwthread",   "l1cache",
        "l2cache",    "l3cache",   "numa",         "package",   "ppr:1:core", "ppr:2:package",
        "ppr:1:node", "core:SPAN", "package:PE=2", "slot:PE=2", "pe-list=0",  "numa:SPAN"};
    static const std::vector<std::string> plainMaps = {"", "slot", "node", ":OVERSUBSCRIBE"};
    static const std::vector<std::string> ranks = {"", "", "slot", "node", "fill", "span"};
    static const std::vector<std::string> binds = {"",
                                                   "",
                                                   "none",
                                                   "core",
                                                   "core:overload-allowed",
                                                   "hwthread",
                                                   "numa:if-supported",
                                                   "package",
                                                   "l3cache",
                                                   ":overload-allowed"};
    std::string map = pickOne(random, modeled ? modeledMaps : plainMaps);
    const bool oversubscribe = pick(random, 0, 2) == 0;
    if (oversubscribe)
        map += ":OVERSUBSCRIBE";
    if (!map.empty()) {
        auto parsed = parseMapBy(map);
        EXPECT_TRUE(parsed.ok()) << map;
        if (parsed)
            s.request.map = parsed.value();
    }
    const std::string rank = modeled ? pickOne(random, ranks) : std::string();
    if (!rank.empty())
        s.request.rank = parseRankBy(rank).value();
    const std::string bind = modeled ? pickOne(random, binds) : std::string();
    if (!bind.empty())
        s.request.bind = parseBindTo(bind).value();
    if (pick(random, 0, 3) != 0)
        s.request.np = pick(random, 1, 40);
    if (pick(random, 0, 4) == 0) {
        // A hostfile with max_slots on some nodes.
        std::string text;
        for (const AllocatedNode &node : s.allocation.nodes) {
            text += node.name;
            if (pick(random, 0, 1) == 0)
                text += " max_slots=" + std::to_string(node.slots + pick(random, 0, 6));
            text += "\n";
        }
        s.request.hostfile = test::hostfile(text);
    }
    if (modeled && pick(random, 0, 5) == 0) {
        // Two application contexts.
        s.request.apps = {AppRequest{pick(random, 1, 8)}, AppRequest{pick(random, 1, 8)}};
        if (pick(random, 0, 1) == 0) {
            const std::string own = pickOne(random, modeledMaps);
            s.request.apps[1].map = parseMapBy(own.empty() ? "core" : own).value();
        }
        s.request.np.reset();
    }
    s.description += " --map-by '" + map + "' --rank-by '" + rank + "' --bind-to '" + bind +
                     "' -n " + (s.request.np ? std::to_string(*s.request.np) : "-") +
                     (s.request.apps.empty() ? "" : " (2 apps)") +
                     (s.request.hostfile ? " (hostfile)" : "");
    return s;
}

void checkProperties(const Scenario &s, int &planned) {
    SCOPED_TRACE(s.description);
    const auto result = planJob(s.allocation, s.request);
    const auto again = planJob(s.allocation, s.request);
    ASSERT_EQ(result.ok(), again.ok());
    if (!result.ok()) {
        EXPECT_EQ(result.error(), again.error());
        EXPECT_FALSE(result.error().message.empty());
        EXPECT_EQ(result.error().message.find("internal error"), std::string::npos);
        if (std::getenv("STEPMAP_PROPERTY_ERRORS") != nullptr)
            std::printf("ERR %s\n   -> %s\n", s.description.c_str(),
                        result.error().message.c_str());
        return;
    }
    ++planned;
    const LaunchPlan &plan = result->plan;
    EXPECT_EQ(plan, again->plan) << "not deterministic";
    EXPECT_EQ(result->report, again->report);

    std::int64_t expected = 0;
    if (!s.request.apps.empty()) {
        for (const AppRequest &app : s.request.apps)
            expected += app.np.value_or(0);
    } else if (s.request.np) {
        expected = *s.request.np;
    }
    if (expected > 0 && s.request.map.by != MapBy::Ppr) {
        EXPECT_EQ(static_cast<std::int64_t>(plan.ranks.size()), expected);
    }

    std::map<std::string, const AllocatedNode *> byName;
    for (const AllocatedNode &node : s.allocation.nodes)
        byName[node.name] = &node;
    std::vector<std::int64_t> counts(plan.nodes.size(), 0);
    std::vector<std::uint32_t> nextLocal(plan.nodes.size(), 0);
    for (std::size_t r = 0; r < plan.ranks.size(); ++r) {
        const RankPlacement &rank = plan.ranks[r];
        ASSERT_LT(rank.node, plan.nodes.size());
        ++counts[rank.node];
        EXPECT_EQ(rank.localRank, nextLocal[rank.node]++);
        if (rank.binding == kUnbound)
            continue;
        ASSERT_LT(rank.binding, plan.bindings.size());
        const CpuBinding &binding = plan.bindings[rank.binding];
        const NodeModel &model = *byName.at(plan.nodes[rank.node].name)->model;
        ASSERT_FALSE(binding.logical.empty());
        ASSERT_EQ(binding.logical.size(), binding.os.size());
        std::vector<std::uint32_t> os;
        for (std::uint32_t logical : binding.logical) {
            const auto pu = model.puFromLogical(logical);
            ASSERT_TRUE(pu.has_value())
                << "rank " << r << " bound to PU L#" << logical
                << ", which the job does not hold on " << plan.nodes[rank.node].name;
            os.push_back(model.puOs(*pu));
        }
        std::sort(os.begin(), os.end());
        EXPECT_EQ(os, binding.os);
    }
    const bool mayOversubscribe = s.request.overbook || s.request.map.oversubscribe == true;
    std::set<std::string> names;
    for (std::size_t i = 0; i < plan.nodes.size(); ++i) {
        const PlannedNode &node = plan.nodes[i];
        EXPECT_TRUE(names.insert(node.name).second) << node.name << " listed twice";
        EXPECT_GT(counts[i], 0) << node.name << " runs no rank";
        if (node.maxSlots) {
            EXPECT_LE(counts[i], *node.maxSlots) << node.name << " above max_slots";
        }
        if (!mayOversubscribe) {
            EXPECT_LE(counts[i], node.slots) << node.name << " oversubscribed";
        }
    }
    auto back = decodePlan(encodePlan(plan));
    ASSERT_TRUE(back.ok()) << back.error().message;
    EXPECT_EQ(back.value(), plan);
    EXPECT_FALSE(
        formatJobMap(plan, reportedJobMapHeader(result->report, "j"), s.allocation).empty());
}

TEST(PlannerProperties, WithNodeModels) {
    std::mt19937 random(20261122);
    int planned = 0;
    for (int i = 0; i < 3000; ++i)
        checkProperties(randomScenario(random, true), planned);
    // Most random requests must be placeable, or the test proves little.
    EXPECT_GT(planned, 1000);
}

TEST(PlannerProperties, WithoutNodeModels) {
    std::mt19937 random(4242);
    int planned = 0;
    for (int i = 0; i < 2000; ++i)
        checkProperties(randomScenario(random, false), planned);
    EXPECT_GT(planned, 1000);
}

} // namespace
} // namespace stepmap
