#pragma once

// How the planner resolved the policies, in mpirun's words: what the job
// map (job_map.hpp) prints and logs show. Not part of the plan that travels.

#include <string>
#include <vector>

namespace stepmap {

// How the policies were resolved, in mpirun's words, for the job map
// (job_map.hpp) and for logs. Not part of the plan that travels.
struct AppPolicyReport {
    std::string mapper;        // PRRTE's component: round_robin, ppr, seq, rank_file
    std::string mappingPolicy; // "BYCORE:NOOVERSUBSCRIBE"
    std::string rankingPolicy; // "FILL"
    std::string bindingPolicy; // "CORE:IF-SUPPORTED"

    bool operator==(const AppPolicyReport &) const = default;
};

struct PlanReport {
    std::string mappingPolicy; // the job's, as mpirun prints it
    std::string rankingPolicy;
    std::string bindingPolicy;
    // One line per application context when they were placed by different
    // policies (mpirun then prints "App N: ..." lines instead of the job's).
    std::vector<AppPolicyReport> apps;
    std::string cpuSet = "N/A";      // a job-level pe-list
    std::string ppr = "N/A";         // a job-level ppr pattern, "2:package"
    std::string cpusPerRank = "N/A"; // a job-level PE=n
    std::string cpuType = "CORE";    // "HWT" when hwthreads are the CPUs
    bool hwthreadCpus = false;       // bindings are shown as hwthreads
    bool display = false;            // --map-by ...:DISPLAY
    bool reportBindings = false;     // --bind-to ...:REPORT

    bool operator==(const PlanReport &) const = default;
};

} // namespace stepmap
