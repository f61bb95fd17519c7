#pragma once

// Helpers shared by the mapper's tests: build inputs briefly, and read a plan
// the way the seeds print a job (one host name per rank, in rank order).

#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include "hosts/allocation.hpp"
#include "hosts/host_list.hpp"
#include "plan/launch_plan.hpp"
#include "planner/planner.hpp"
#include "request/map_policy.hpp"
#include "request/plan_request.hpp"

namespace stepmap::test {

inline Allocation allocation(std::vector<std::pair<std::string, int>> nodes) {
    Allocation result;
    for (auto &[name, cpus] : nodes)
        result.nodes.push_back(AllocatedNode{name, cpus});
    return result;
}

// The node name of every rank, in rank order ("mpirun hostname" output).
inline std::vector<std::string> hostPerRank(const LaunchPlan &plan) {
    std::vector<std::string> hosts;
    for (const RankPlacement &rank : plan.ranks)
        hosts.push_back(plan.nodes.at(rank.node).name);
    return hosts;
}

// n copies of a name, for writing expected rank lists.
inline std::vector<std::string> times(std::size_t n, const std::string &name) {
    return std::vector<std::string>(n, name);
}

inline std::vector<std::string> concat(std::vector<std::vector<std::string>> parts) {
    std::vector<std::string> out;
    for (auto &part : parts)
        out.insert(out.end(), part.begin(), part.end());
    return out;
}

inline HostSpec host(std::string_view value) {
    auto spec = parseHostOption(value);
    EXPECT_TRUE(spec.ok()) << value << ": " << (spec.ok() ? "" : spec.error().message);
    return spec.ok() ? spec.value() : HostSpec{};
}

inline HostSpec hostfile(std::string_view text) {
    auto spec = parseHostfile(text, "hf");
    EXPECT_TRUE(spec.ok()) << text << ": " << (spec.ok() ? "" : spec.error().message);
    return spec.ok() ? spec.value() : HostSpec{};
}

// A request from option values as written: -n, --map-by, --rank-by,
// --bind-to (empty: not given).
inline PlanRequest planRequest(std::optional<int> np, std::string_view map = {},
                               std::string_view rank = {}, std::string_view bind = {}) {
    PlanRequest result;
    result.np = np;
    if (!map.empty())
        result.map = parseMapBy(map).value();
    if (!rank.empty())
        result.rank = parseRankBy(rank).value();
    if (!bind.empty())
        result.bind = parseBindTo(bind).value();
    return result;
}

inline MapPolicy mapBy(std::string_view value) {
    auto policy = parseMapBy(value);
    EXPECT_TRUE(policy.ok()) << value;
    return policy.ok() ? policy.value() : MapPolicy{};
}

// One table row: a request, and either the host of every rank or the exact
// error message.
struct PlacementCase {
    std::string name;
    Allocation allocation;
    PlanRequest request;
    std::vector<std::string> hosts; // expected host per rank, when the plan succeeds
    std::string error;              // expected message, when it fails
};

inline void checkPlacement(const PlacementCase &c) {
    SCOPED_TRACE(c.name);
    const auto plan = makePlan(c.allocation, c.request);
    if (!c.error.empty()) {
        ASSERT_FALSE(plan.ok()) << "placed: " << testing::PrintToString(hostPerRank(*plan));
        EXPECT_EQ(plan.error().message, c.error);
        return;
    }
    ASSERT_TRUE(plan.ok()) << plan.error().message;
    EXPECT_EQ(hostPerRank(plan.value()), c.hosts);
}

} // namespace stepmap::test
