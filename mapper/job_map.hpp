#pragma once

// --display-map: the plan as mpirun's job map, laid out like PRRTE's
// "--display map" output (see shared/conformance/prrte-offline/golden).

#include <string>

#include "launch_plan.hpp"
#include "plan_request.hpp"

namespace stepmap {

// The job-level lines of the map.
struct JobMapHeader {
    std::string jobId = "N/A";         // e.g. Slurm's "1234.0"
    std::string mappingPolicy = "N/A"; // e.g. "BYSLOT:NOOVERSUBSCRIBE"
    std::string rankingPolicy = "N/A"; // e.g. "SLOT"
    std::string bindingPolicy = "NONE";
};

// The header for a request, as PRRTE words it: mapping "BYSLOT" or "BYNODE"
// with ":OVERSUBSCRIBE" or ":NOOVERSUBSCRIBE" (":OVERBOOK" for --overbook);
// ranking "SLOT" for map-by slot (ranks in placement order) and "NODE" for
// map-by node; binding "NONE".
JobMapHeader jobMapHeader(const PlanRequest &request, std::string jobId);

// Exactly:
//   "\n========================   JOB MAP   ========================\n"
//   "Data for JOB <jobId> offset 0 Total slots allocated <sum of slots>\n"
//   "    Mapping policy: <m>  Ranking policy: <r> Binding policy: <b>\n"
//   "    Cpu set: N/A  PPR: N/A  Cpus-per-rank: N/A  Cpu Type: CORE\n\n"
// then per node, in plan order:
//   "\nData for node: <name>\tNum slots: <s>\tMax slots: <max or 0>\tNum procs: <n>\n"
//   and per rank on it, ascending:
//   "        Process jobid: <jobId> App: 0 Process rank: <r> Bound: N/A\n"
// O(nodes + ranks).
std::string formatJobMap(const LaunchPlan &plan, const JobMapHeader &header);
std::string formatJobMap(const LaunchPlan &plan); // with JobMapHeader{}

} // namespace stepmap
