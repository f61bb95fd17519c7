#pragma once

// The job allocation stepmap obtains for an srun that has none, as srun
// itself would: from Slurm's scheduler, through libslurm, before srun reads
// its environment. srun then runs its step inside it (SLURM_JOB_ID), exactly
// as inside salloc. This object owns the job: release() ends it when srun
// ends. A watcher process (double-forked, outside the terminal's process
// group) holds the other end of a pipe and cancels the job if srun dies
// before releasing it (a signal, a crash): no allocation outlives srun.

#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "base/expected.hpp"
#include "os/unique_fd.hpp"
#include "srun/allocation_request.hpp"

namespace stepmap::plugin {

class JobAllocation {
public:
    ~JobAllocation();
    JobAllocation(const JobAllocation &) = delete;
    JobAllocation &operator=(const JobAllocation &) = delete;

    // Asks Slurm and waits, printing "job N queued and waiting for
    // resources" as srun does. SIGINT, SIGTERM, SIGHUP or SIGQUIT while
    // waiting cancels the request. Errors carry Slurm's reason.
    static Expected<std::unique_ptr<JobAllocation>> request(const AllocationRequest &request);

    // After srun re-executed itself (srun_side): the job and the watcher's
    // pipe it handed over; nullptr when `watcherFd` is not a pipe.
    static std::unique_ptr<JobAllocation> adopt(std::uint32_t jobId, int watcherFd);
    // Keeps the watcher's pipe open across srun's exec of itself.
    int keepAcrossExec();

    // An existing job's nodes and CPUs ("n[1-2]", "2(x2)"), from Slurm.
    struct Granted {
        std::string nodeList, cpusPerNode;
    };
    static Expected<Granted> lookup(std::uint32_t jobId);

    std::uint32_t jobId() const { return jobId_; }
    const std::string &nodeList() const { return nodeList_; }
    // SLURM_JOB_CPUS_PER_NODE's form: "2(x3),1".
    const std::string &cpusPerNode() const { return cpusPerNode_; }
    // The variables salloc would give its shell, so that srun (and the
    // planner) run inside this job.
    void exportJobVariables() const;

    // Ends the job with `status` as its exit code (srun's own allocation
    // ends so); the watcher then has nothing left to do.
    void release(int status);

private:
    JobAllocation() = default;

    std::uint32_t jobId_ = 0;
    std::string nodeList_, cpusPerNode_, partition_;
    os::UniqueFd watcherFd_; // write end of the watcher's pipe
    bool released_ = false;
};

} // namespace stepmap::plugin
