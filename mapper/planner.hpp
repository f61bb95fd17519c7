#pragma once

// The mapper's entry point: a Slurm allocation and the user's request in, a
// launch plan out. Pure and deterministic; O(nodes + ranks) apart from a log
// factor when map-by slot oversubscribes.

#include "allocation.hpp"
#include "expected.hpp"
#include "launch_plan.hpp"
#include "plan_request.hpp"

namespace stepmap {

// 1. Filters the allocation by --hostfile then --host (notes/host-filters.md):
//    filter order, caps combined by min, max_slots bounds, hosts outside the
//    allocation an error in mpirun's words.
// 2. np defaults to the sum of the remaining nodes' slots.
// 3. Places ranks by the policy: map-by slot (default), map-by node, or
//    --overbook (ParaStation; implies oversubscription, not with map-by node
//    or NOOVERSUBSCRIBE). More ranks than slots needs :OVERSUBSCRIBE or
//    --overbook and stays within max_slots.
// The plan lists only nodes that run ranks. Every user error comes back as a
// UserError whose message names the input and the fix.
Expected<LaunchPlan> makePlan(const Allocation &allocation, const PlanRequest &request);

} // namespace stepmap
