#pragma once

// The nodes' hardware for stepmap-plan: one hwloc XML file (--topology), an
// hwloc synthetic description (--synthetic) or Slurm's node shape
// (--slurm-shape S:C:T), the same for every node and restricted to the
// node's CPU ids when the allocation knows them (--job). Nodes with the
// same CPUs share one model.

#include "base/expected.hpp"
#include "cli_allocation.hpp"
#include "cli_options.hpp"

namespace stepmap::cli {

// True when the options describe the nodes' hardware.
bool hardwareGiven(const CliOptions &options);

// Builds the models. Nodes the allocation gave no slot count get their
// model's cores (as mpirun counts a hostfile line without slots=). With
// `attach` each node carries its model (srun attaches them only when the
// request needs them); otherwise the models only count slots. Errors name
// the option and the fix.
Expected<void> addHardware(CliAllocation &allocation, const CliOptions &options, bool attach);

} // namespace stepmap::cli
