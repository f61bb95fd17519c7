#pragma once

// ParaStation MPI's process placement (process_placement(7), seed 004) over
// a Slurm allocation, as shared/notes/parastation.md reads it. makePlan
// (planner.hpp) hands a request here when usesParaStationPlacement() says so.
//
// Steps:
// 1. The node pool: --host/--hostfile if given (notes/host-filters.md),
//    else PSI_NODES / PSI_HOSTS / PSI_HOSTFILE resolved against the
//    allocation, else the allocation. A repeated node in PSI_NODES or
//    PSI_HOSTS counts once (first mention); a node listed k times in
//    PSI_HOSTFILE offers k CPUs. Names not allocated: mpirun's error.
// 2. --nodes-sort (node_sort.hpp); unset or NONE keeps the pool's order.
// 3. --tpp=N: a process takes N hardware threads (Slurm CPUs) of one node,
//    so a node with C usable CPUs holds floor(C/N) processes; nodes with
//    fewer than N are left out.
// 4. Placement, np defaulting to the room the nodes have:
//    - default: fill each node in order (consecutive ranks share a node);
//    - --loop-nodes-first: one process per node per pass, skipping full
//      nodes;
//    - too few CPUs: an error, unless --overbook, which then places
//      * without --loop-nodes-first: every process slot k or k+1 processes
//        (k = np / slots, extras to the first slots in list order), each
//        node its sum as consecutive ranks;
//      * with --loop-nodes-first: one process per node per pass over all
//        nodes, round after round (rank r on node r mod n while no node is
//        at its max_slots).
//    Hostfile max_slots bound the processes of each node.
// 5. Combinations: with ParaStation placement --map-by may only be slot
//    (or not given), without modifiers but (NO)OVERSUBSCRIBE;
//    :OVERSUBSCRIBE needs --overbook; --overbook with :NOOVERSUBSCRIBE,
//    --rank-by, --bind-to other than none and MPMD applications are
//    refused.
// 6. Pinning (cpu_slots.hpp): unless __PSI_NO_PINPROC or --bind-to none,
//    each process is bound to its --tpp CPU-slots of its node, physical
//    cores first or in __PSI_CPUMAP's order; on nodes whose hardware the
//    allocation does not describe, ranks stay unbound.
// Every user error names its input (option or PSI_* variable, as recorded
// in ParaStationRequest::sources) and the fix.

#include "base/expected.hpp"
#include "hosts/allocation.hpp"
#include "plan/job_map.hpp"
#include "plan/launch_plan.hpp"
#include "request/plan_request.hpp"

namespace stepmap {

// (usesParaStationPlacement() and parastationPins() are in
// request/plan_request.hpp: srun asks for node hardware by them.)

// The plan for such a request, as described above. O(nodes log nodes +
// ranks).
Expected<LaunchPlan> makeParaStationPlan(const Allocation &allocation, const PlanRequest &request);

// Adjusts the job map header (--display-map) to a ParaStation request:
// --loop-nodes-first maps and ranks by node; pinning binds to CPU-slots.
void describeParaStationMapping(JobMapHeader &header, const PlanRequest &request);

} // namespace stepmap
