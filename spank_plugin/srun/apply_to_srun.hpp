#pragma once

// The plan applied to srun: the one place on srun's side that writes srun's
// environment for the step and re-executes srun. Each function says what
// it changes; errors come back as values for the hook to report.

#include "base/expected.hpp"
#include "os/unique_fd.hpp"
#include "plan/launch_plan.hpp"
#include "request/plan_request.hpp"
#include "site_config.hpp"
#include "srun/job_allocation.hpp"
#include "srun/srun_input.hpp"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace stepmap::plugin {

// The step's host file, one line per rank in rank order, in memory (a memfd
// srun opens as /proc/self/fd/N): no file on disk that an srun failing
// later could leave behind.
Expected<os::UniqueFd> writeHostfile(const LaunchPlan &plan);

// Makes Slurm start exactly the plan: sets the host file, the arbitrary
// distribution and the plan's other settings (step_environment.hpp's
// planEnvironment), before srun reads its environment.
Expected<void> exportPlan(const LaunchPlan &plan, const PlanRequest &request,
                          const os::UniqueFd &hostfile);

// Sets --modex (`modex`, else the site's default) and the step's nodes'
// entries of the site's interconnect profile for their servers. Without
// --modex=profile a profile that cannot be used is only reported: the step
// never fails because of one.
Expected<void> exportModex(const std::optional<std::string> &modex, const SiteConfig &site,
                           const LaunchPlan &plan);

// The three above in order: the host file, the plan's settings, --modex's.
// The host file is kept open until srun has read it.
Expected<os::UniqueFd> applyPlan(const LaunchPlan &plan, const PlanRequest &request,
                                 const std::optional<std::string> &modex, const SiteConfig &site);

// srun re-executes itself without -N/-w/-x when the plan replaces them
// (srun ignores SLURM_HOSTFILE next to -w, and 23.11+ refuses -N with the
// arbitrary distribution). The new image finds what the old one prepared
// in STEPMAP_SRUN_REEXEC: the host file, the costs, the job and its watcher.
struct Reexec {
    int hostfileFd = -1;
    double planMs = 0;
    double allocationMs = 0;
    std::uint32_t job = 0;
    int watcherFd = -1;
};
// Runs srun anew with `args` (argv without argv[0]), handing over the host
// file and `job`; returns only the error when it cannot.
UserError reexecute(const std::vector<std::string> &args, const os::UniqueFd &hostfile,
                    double planMs, double allocationMs, JobAllocation *job);
// -N, -w, -x and --ntasks-per-node chose the nodes (and were checked
// against the plan), and a PMIx --mpi is the site's to serve: srun must not
// apply them again to the step the host file lays out. Runs srun anew
// without them when `input` has any; returns the error when it cannot, and
// nothing when there was nothing to take out.
std::optional<UserError> reexecuteWithoutLayout(const SrunInput &input,
                                                const os::UniqueFd &hostfile, double planMs,
                                                double allocationMs, JobAllocation *job);
// What the previous image of this srun handed over (the variable is
// removed); none when srun was not restarted by stepmap.
std::optional<Reexec> takeReexec();

} // namespace stepmap::plugin
