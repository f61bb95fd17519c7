#pragma once

// Everything the srun side asks Slurm: the job srun runs in, a new job when
// srun has none, the node table (only when the placement needs it), the
// job's CPUs and where the hub listens. The only place on srun's side that
// makes RPCs to slurmctld (through libslurm, which srun carries).

#include "base/expected.hpp"
#include "hosts/allocation.hpp"
#include "protocol/hub/rendezvous_hub.hpp"
#include "request/plan_request.hpp"
#include "site_config.hpp"
#include "srun/allocation_request.hpp"
#include "srun/srun_command_line.hpp"
#include "srun/step_environment.hpp"

#include <memory>
#include <string>

extern "C" {
#include <slurm/slurm.h>
}

namespace stepmap::plugin {

class JobAllocation;

// Slurm's node table, loaded once when a query needs it.
struct NodeTableFree {
    void operator()(node_info_msg_t *table) const;
};
using NodeTable = std::unique_ptr<node_info_msg_t, NodeTableFree>;

// The job srun runs in (`job.jobId` set): its nodes and CPUs from the
// variables salloc/sbatch set, else from Slurm (one RPC), with the
// variables srun then passes on to the step.
Expected<JobFromSlurm> jobAllocation(const JobToRunIn &job);

// srun has no job: asks Slurm's scheduler for one shaped by what the user
// asked (`request`, srun's options and allocation variables), as srun
// would, and waits for it. PSI_NODES' indices become the nodes' names
// first. The job is returned even when its allocation cannot be read, so
// that it can be released.
struct GrantedJob {
    std::unique_ptr<JobAllocation> job;
    double allocationMs = 0; // request to grant
    PlanRequest request;     // with PSI_NODES named
    Expected<Allocation> allocation;
    std::vector<std::string> notes; // what srun -v says of the request
};
Expected<GrantedJob> requestJob(PlanRequest request, const SrunCommandLine &cmd,
                                const SrunEnvironment &environment, NodeTable &table);

// What the placement needs of the nodes: --nodes-sort's figures (into
// request) and each node's hardware and the CPUs `job` holds there (into
// allocation); nothing, and no RPC, when it needs neither.
Expected<void> describeNodes(PlanRequest &request, Allocation &allocation, const std::string &job,
                             NodeTable &table);

// PSI_EXCLUSIVE inside a job: the nodes of `used` (of the job's
// allocation) on which other jobs hold CPUs, each with how many ("n2
// (other jobs hold 1 of its 2 CPUs)"); one RPC unless table holds it.
Expected<std::vector<std::string>> nodesSharedWithOtherJobs(const Allocation &allocation,
                                                            const std::vector<std::string> &used,
                                                            NodeTable &table);

// The allocation with every node's model, for the picture of the job.
Expected<Allocation> allocationWithModels(Allocation allocation, const std::string &job);

// Where the step's rendezvous listens (see RendezvousHub::Settings): the
// site's hub_address, else the address this host uses to reach slurmctld;
// within Slurm's SrunPortRange if the site sets one. One RPC, only for
// stepmap's steps.
hub::RendezvousHub::Settings hubSettings(const SiteConfig &site);

} // namespace stepmap::plugin
