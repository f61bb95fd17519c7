#pragma once

// Internal to the mapper: the stages planJob (planner.hpp) runs in order,
// each a function from values to a value (or the user's error):
//   resolveJob (resolveApps -> selectNodes -> resolveJobMapping ->
//   countProcesses -> resolveJobPolicy) -> placeApps (per application: resolveAppPolicy,
//   place and bind, rank, describeApp) -> assemblePlan, buildReport.
// The rules each stage applies are in policy_rules.hpp.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "base/expected.hpp"
#include "hosts/allocation.hpp"
#include "placement/node_filter.hpp"
#include "placement/placement.hpp"
#include "plan/launch_plan.hpp"
#include "plan/plan_report.hpp"
#include "request/plan_request.hpp"

namespace stepmap::detail {

// 1. The application contexts, the job's OVERSUBSCRIBE agreed on.
struct AppPlan {
    AppRequest request;   // OVERSUBSCRIBE/NOOVERSUBSCRIBE taken off its map
    std::uint32_t np = 0; // 0: the placer counts them (seq, rankfile, ppr)
};
struct JobApps {
    std::vector<AppPlan> apps;         // one (the job's -n) without MPMD
    std::optional<bool> oversubscribe; // as given for the job or an app
    bool allowOversubscribe = false;   // that, or --overbook
};
// Checks -n, --overbook's combinations and that the applications agree on
// OVERSUBSCRIBE.
Expected<JobApps> resolveApps(const PlanRequest &request);

// 2. The nodes to map (host filters applied), and whether stepmap knows
// the hardware of all of them (AllocatedNode::model).
struct NodeSelection {
    std::vector<NodeSlots> list;
    bool modeled = true;
    // Every modeled node has one hwthread per core (coresAreHwthreads).
    bool coresAreHwthreads = false;
};
// Refuses policies that need the hardware of nodes without a model.
Expected<NodeSelection> selectNodes(const Allocation &allocation, const PlanRequest &request,
                                    const JobApps &apps);

// 3. The job's mapping: the options every application starts from and the
// mapping word mpirun prints.
struct JobMapping {
    MapOptions options;
    MappingWord word;
};
JobMapping resolveJobMapping(const PlanRequest &request, const JobApps &apps, bool modeled);

// 4. Each application's process count (0 where the placer counts); their
// sum at most kMaxRanks.
Expected<std::vector<std::uint32_t>> countProcesses(const Allocation &allocation,
                                                    const std::vector<AppPlan> &apps,
                                                    const NodeSelection &nodes,
                                                    const MapOptions &job);

// 5. The job's ranking and binding, checked against its mapping.
struct JobPolicy {
    MapOptions options;
    MappingWord mapping;
    RankingWord ranking;
    BindingWord binding;
};
Expected<JobPolicy> resolveJobPolicy(const Allocation &allocation, const PlanRequest &request,
                                     const NodeSelection &nodes, JobMapping mapping,
                                     std::uint32_t totalProcesses);

// 1-5 in order: the job resolved, ready to place.
struct ResolvedJob {
    JobApps apps; // np counted
    NodeSelection nodes;
    JobPolicy policy;
};
Expected<ResolvedJob> resolveJob(const Allocation &allocation, const PlanRequest &request);

// 6a. One application's options when applications carry their own
// policies; `where` prefixes its messages ("application context 1: ").
struct AppPolicy {
    MapOptions options;
    std::optional<BindingWord> ownBinding; // the application's --bind-to
};
Expected<AppPolicy> resolveAppPolicy(const Allocation &allocation, const NodeSelection &nodes,
                                     const JobPolicy &job, const AppPlan &app,
                                     const std::string &where);

// 6b. What mpirun shows for one application (PRRTE's component name too).
struct AppWords {
    MappingWord mapping;
    RankingWord ranking;
    BindingWord binding;
    std::string mapper;
};
AppWords describeApp(const MapOptions &options, const JobPolicy &job,
                     const std::optional<BindingWord> &ownBinding);

// 6. Places, binds and ranks every application in turn (the engine's
// accounting carries from one to the next).
struct PlacedJob {
    EngineResult result;
    std::vector<AppWords> apps;
    bool perApp = false; // applications carry their own policies
    MappingWord mapping; // the job's, as the placers left it
    BindingWord binding;
};
Expected<PlacedJob> placeApps(const Allocation &allocation, const PlanRequest &request,
                              const NodeSelection &nodes, const JobPolicy &job,
                              const std::vector<AppPlan> &apps);

// 7. The plan: nodes that run ranks in job-map order, ranks in rank order.
Expected<LaunchPlan> assemblePlan(EngineResult result, const PlanRequest &request);

// 8. The policies in mpirun's words, per application when they differ.
PlanReport buildReport(const PlanRequest &request, const std::vector<AppPlan> &apps,
                       const JobPolicy &job, const PlacedJob &placed);

} // namespace stepmap::detail
