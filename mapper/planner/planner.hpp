#pragma once

// The mapper's entry point: a Slurm allocation and the user's request in, a
// launch plan out. Pure and deterministic; O(nodes + ranks) apart from a log
// factor when map-by slot oversubscribes.

#include <string>
#include <vector>

#include "base/expected.hpp"
#include "hosts/allocation.hpp"
#include "plan/launch_plan.hpp"
#include "plan/plan_report.hpp"
#include "request/plan_request.hpp"

namespace stepmap {

struct PlanResult {
    LaunchPlan plan;
    PlanReport report;
};

// 1. Filters the allocation by --hostfile then --host (notes/host-filters.md):
//    filter order, caps combined by min, max_slots bounds, hosts outside the
//    allocation an error in mpirun's words.
// 2. Resolves mapping, ranking and binding for the job and for each
//    application context (MPMD) as PRRTE (Open MPI 5's mpirun) does:
//    - no --map-by: by core (by hwthread with HWTCPUS); by slot with PE=n;
//      by the --bind-to object when only that is given. Without node models
//      (AllocatedNode::model) stepmap cannot see cores: by slot, unbound.
//    - no --rank-by: by node for map-by node, by slot for slot (and for
//      ppr, pe-list, seq), span with SPAN, fill for the object levels.
//    - no --bind-to: to the mapped object; to core for pe-list and PE=n;
//      for slot, node and seq to core when np <= 2, else to numa
//      (":IF-SUPPORTED": unbound where that is impossible); nothing when
//      the job (or a node) has more processes than slots or CPUs.
//    Refused, with the reason and the fix: binding above the mapped object
//    (map core, bind package), rank-by fill/span without an object map,
//    PE=n with map-by core (or hwthread, or a binding other than
//    core/hwthread), ppr objects or CPU lists the nodes lack, and
//    conflicting OVERSUBSCRIBE/NOOVERSUBSCRIBE between applications.
// 3. np defaults to the sum of the remaining nodes' slots (per application
//    context), or to the entries of the sequence, rankfile or ppr pattern.
// 4. Places, binds and ranks: see placement.hpp and mapper/README.md.
//    More ranks than slots needs :OVERSUBSCRIBE or --overbook and stays
//    within max_slots.
// The plan lists only nodes that run ranks, in the order mpirun's job map
// lists them. Every user error comes back as a UserError whose message
// names the input and the fix.
Expected<PlanResult> planJob(const Allocation &allocation, const PlanRequest &request);

// planJob's plan alone.
Expected<LaunchPlan> makePlan(const Allocation &allocation, const PlanRequest &request);

} // namespace stepmap
