#pragma once

// The libslurm calls stepmap makes, with one signature on every Slurm
// release from 22.05 to 26.05. The plugin is built against one release's
// headers (it must be rebuilt for each major release anyway); the
// differences between releases live in slurm_release.cpp and nowhere else,
// chosen by SLURM_VERSION_NUMBER:
//   23.11  slurm_kill_job_step() gains a flags argument
//   24.11  slurm_get_errno() and slurm_job_cpus_allocated_str_on_node() go:
//          errno, and the job's CPU ids from `scontrol -d show job`
//   25.05  node_info_t.select_nodeinfo goes (alloc_cpus replaces it);
//          slurm_spank_init_failure_mode appears (stepmap sets it: a failed
//          remote init fails the job, not the node)
//   25.11  job ids become slurm_step_id_t in the allocation calls
//   26.05  slurm_load_job(), slurm_allocation_lookup() and slurm_kill_job()
//          take a slurm_step_id_t; the blocking allocation an interrupt fd;
//          slurm_free_ctl_conf() becomes slurm_free_conf()

#include <cstdint>
#include <map>
#include <string>

#include "base/expected.hpp"

extern "C" {
#include <slurm/slurm.h>
}

namespace stepmap::plugin::slurm_release {

// The error of the last failed libslurm call (errno on every release).
int lastError();

// Signals a whole job / one of its steps (controller RPCs). Return Slurm's code.
int killJob(std::uint32_t job, int signal);
int killJobStep(std::uint32_t job, std::uint32_t step, int signal);
// Ends a job with an exit code (what srun does when its own job ends).
int completeJob(std::uint32_t job, std::uint32_t status);

// The granted job's id in an allocation response.
std::uint32_t jobIdOf(const resource_allocation_response_msg_t &granted);
// slurm_allocation_lookup: the allocation of an existing job, or nullptr
// with lastError() set. Free with slurm_free_resource_allocation_response_msg.
resource_allocation_response_msg_t *lookupAllocation(std::uint32_t job);
// slurm_allocate_resources_blocking without a time limit; onPending is
// called with the job id once it is pending. Returns nullptr on error or
// when a signal interrupts the wait (errno EINTR).
resource_allocation_response_msg_t *allocateBlocking(const job_desc_msg_t &desc,
                                                     void (*onPending)(std::uint32_t job));

// The variable srun reads as -c: SRUN_CPUS_PER_TASK from 22.05 to 23.02,
// SLURM_CPUS_PER_TASK again from 23.11 (which ignores the other; so does
// 22.05 with SLURM_CPUS_PER_TASK, which sbatch -c sets in a batch job).
const char *cpusPerTaskVariable();
const char *ignoredCpusPerTaskVariable();

// slurm_job_node_ready: READY_* bits, or READY_JOB_ERROR / READY_JOB_FATAL.
int jobNodeReady(std::uint32_t job);

// slurm_load_ctl_conf / its free.
slurm_conf_t *loadControllerConf();
void freeControllerConf(slurm_conf_t *conf);

// CPUs other jobs and this one hold on a node (Slurm's AllocCPUs).
std::uint16_t allocatedCpus(const node_info_t &node);

// The CPU ids (Slurm's numbering, "0-3,8") job `job` holds on each of its
// nodes. One RPC on releases that have the call; from 24.11, which removed
// it from libslurm, one `scontrol -d -o show job` next to srun.
Expected<std::map<std::string, std::string>> jobCpuIds(std::uint32_t job);

} // namespace stepmap::plugin::slurm_release
