#pragma once

// What a placement request needs from Slurm when srun has no allocation yet
// and stepmap asks Slurm for one: the scheduler then picks the nodes
// (partitions, busy nodes, limits, reservations) and the planner maps inside
// what it granted, as mpirun maps inside salloc. Only what the placement
// itself implies is derived here; the user's own allocation options (-N,
// -p, -t, ...) are the plugin's to add and win over these.

#include <optional>
#include <string>
#include <vector>

#include "base/expected.hpp"
#include "request/plan_request.hpp"

namespace stepmap {

struct AllocationShape {
    std::optional<int> tasks;        // processes, when the request fixes them
    std::optional<int> nodes;        // nodes the placement needs (ppr:N:node)
    std::optional<int> tasksPerNode; // ppr:N:node
    int cpusPerTask = 1;             // PE=n, --tpp
    // Spread the tasks over as many nodes as the scheduler can give
    // (--map-by node, --loop-nodes-first): the user asked for nodes, not
    // CPUs, yet names none.
    bool spread = false;
    bool overcommit = false; // :OVERSUBSCRIBE, --overbook
    // Nodes the user named (--host, --hostfile, the seq or rankfile file,
    // PSI_HOSTS, PSI_HOSTFILE), each once, in the order named: Slurm must
    // include them. stepmap names no other node to Slurm.
    std::vector<std::string> namedNodes;
    // The most processes the user put on one named node ("n2 slots=2",
    // "--host n2:2", a name listed twice): each named node needs that many
    // CPUs (times cpusPerTask). 1 when no count was given.
    int processesPerNamedNode = 1;
    // The input that named them ("--host", ...), for messages.
    std::string namedBy;
    // Nodes the user excluded ("--host !^n1"): Slurm must leave them out.
    std::vector<std::string> excludedNodes;

    bool operator==(const AllocationShape &) const = default;
};

// Errors: relative node names ("+n1") and PSI_NODES indices, which only an
// allocation gives meaning to; they name the input and the way out.
Expected<AllocationShape> allocationShapeFor(const PlanRequest &request);

} // namespace stepmap
