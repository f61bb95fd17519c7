#pragma once

// The nodes Slurm gave the job (or step), in Slurm's order, with the CPUs
// Slurm allocated on each as its slot count and, optionally, the node's
// hardware (restricted to the job's CPUs there). Many nodes share one model.

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "base/expected.hpp"
#include "hosts/node_model.hpp"

namespace stepmap {

struct AllocatedNode {
    std::string name;
    int slots = 0; // CPUs Slurm allocated on the node, at least 1
    // The node's PUs the job holds, grouped as the hardware groups them.
    // Unset: the planner knows nothing of the node's hardware and can
    // place by slot, node and sequence only, without binding.
    std::shared_ptr<const NodeModel> model;

    bool operator==(const AllocatedNode &) const = default;
};

struct Allocation {
    std::vector<AllocatedNode> nodes;

    bool operator==(const Allocation &) const = default;
};

// Builds the allocation from SLURM_JOB_NODELIST (a hostlist expression) and
// SLURM_JOB_CPUS_PER_NODE ("2(x3),4": counts, each optionally repeated
// "(xR)" times). The counts must cover exactly the listed nodes and be at
// least 1; otherwise the error names both values.
Expected<Allocation> allocationFromSlurm(std::string_view nodeList, std::string_view cpusPerNode);

// The allocation as ranks of cpusPerTask CPUs each use it (srun's -c): a
// node's slots are its CPUs divided by cpusPerTask; a node with fewer CPUs
// holds no rank and leaves. `source` names the setting in the error when no
// node is left ("-c 4", "SLURM_CPUS_PER_TASK=4").
Expected<Allocation> slotsForCpusPerTask(const Allocation &alloc, int cpusPerTask,
                                         const std::string &source);

} // namespace stepmap
