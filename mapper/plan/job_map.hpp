#pragma once

// --display-map: the plan as mpirun's job map, laid out like PRRTE's
// "--display map" output (see tests/fixtures/prrte-offline/golden), and
// the ways a binding is written.

#include <string>
#include <vector>

#include "hosts/allocation.hpp"
#include "hosts/node_model.hpp"
#include "plan/launch_plan.hpp"
#include "plan/plan_report.hpp"
#include "request/plan_request.hpp"

namespace stepmap {

// The job-level lines of the map.
struct JobMapHeader {
    std::string jobId = "N/A";         // e.g. Slurm's "1234.0"
    std::string mappingPolicy = "N/A"; // e.g. "BYSLOT:NOOVERSUBSCRIBE"
    std::string rankingPolicy = "N/A"; // e.g. "SLOT"
    std::string bindingPolicy = "NONE";
    // One line per application context instead of the three policies
    // above, when they were placed by different policies.
    std::vector<AppPolicyReport> apps;
    std::string cpuSet = "N/A";
    std::string ppr = "N/A";
    std::string cpusPerRank = "N/A";
    std::string cpuType = "CORE";
};

// The header for a request placed without node models, as PRRTE words it:
// mapping "BYSLOT" or "BYNODE" with ":OVERSUBSCRIBE" or ":NOOVERSUBSCRIBE"
// (":OVERBOOK" for --overbook); ranking "SLOT" for map-by slot (ranks in
// placement order) and "NODE" for map-by node; binding "NONE".
JobMapHeader jobMapHeader(const PlanRequest &request, std::string jobId);

// The header planJob resolved (planner.hpp): every policy and its defaults.
JobMapHeader reportedJobMapHeader(const PlanReport &report, std::string jobId);

// How "Bound:" is written for a bound rank.
enum class BoundStyle {
    Prrte,       // "package[0][core:L0-1]" (hwthreads: "package[0][hwt:L0-3]")
    LogicalList, // "L0-3" - the logical PUs
    Mask,        // "[BB/../..][../../..]" - Open MPI 4's --report-bindings
};

struct JobMapOptions {
    BoundStyle bound = BoundStyle::Prrte;
    bool hwthreads = false; // the job counts hwthreads as CPUs (PlanReport::hwthreadCpus)
};

// Exactly:
//   "\n========================   JOB MAP   ========================\n"
//   "Data for JOB <jobId> offset 0 Total slots allocated <sum of slots>\n"
//   "    Mapping policy: <m>  Ranking policy: <r> Binding policy: <b>\n"
//       (or per application "    App <i>: Mapper: <c>  Mapping policy: <m>
//        Ranking policy: <r>  Binding policy: <b>\n")
//   "    Cpu set: <s>  PPR: <p>  Cpus-per-rank: <n>  Cpu Type: <t>\n\n"
// then per node, in plan order:
//   "\nData for node: <name>\tNum slots: <s>\tMax slots: <max or 0>\tNum procs: <n>\n"
//   and per rank on it, ascending:
//   "        Process jobid: <jobId> App: <a> Process rank: <r> Bound: <b>[ Device: <d>]\n"
// <b> is "N/A" for an unbound rank; a bound one is written with its node's
// model from `allocation` (found by name) in the chosen style - without
// one, as the logical PU list. O(nodes + ranks).
std::string formatJobMap(const LaunchPlan &plan, const JobMapHeader &header,
                         const Allocation &allocation, const JobMapOptions &options = {});
std::string formatJobMap(const LaunchPlan &plan, const JobMapHeader &header);
std::string formatJobMap(const LaunchPlan &plan); // with JobMapHeader{}

// A binding as PRRTE prints it: per package holding bound PUs,
// "package[<logical>][core:L<cores>]", joined by ' ' ("hwt:L<PUs>" with
// hwthreads). PUs the model does not hold are ignored.
std::string formatPrrteBinding(const NodeModel &model, const CpuBinding &binding, bool hwthreads);

// A binding as Open MPI 4's mask: per package "[...]", cores separated by
// '/', one character per PU: 'B' bound, '.' not ("[BB/../..][../../..]").
// Only the PUs the job holds are drawn.
std::string formatBindingMask(const NodeModel &model, const CpuBinding &binding);

// The plan as JSON, one object: {"nodes": [{"name", "slots", "max_slots"}],
// "ranks": [{"rank", "node", "app", "local_rank", "node_rank",
// "cpuset_logical", "cpuset_os"[, "devices"]}]}, cpusets as index lists
// ("0-3,8") or null when unbound. Stable key order, no whitespace but one
// newline per rank. O(nodes + ranks).
std::string formatPlanJson(const LaunchPlan &plan);

} // namespace stepmap
