#pragma once

// The plan's rank-to-node layout in PMI-2's process-mapping form, which
// Slurm's mpi/pmix hands every client as PMIX_ANL_MAP (and mpi/pmi2 as
// PMI_process_mapping): "(vector,(N,C,D),...)", each triple standing for
// the next C*D ranks, D consecutive ranks on each of nodes N..N+C-1 (node
// indices as in the plan, PMIX_NODEID's). PMI-2 shims (MPICH's, Intel
// MPI's) read it to find their node's ranks.

#include "plan/launch_plan.hpp"

#include <string>

namespace stepmap {

std::string processMapping(const LaunchPlan &plan);

} // namespace stepmap
