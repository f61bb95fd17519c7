#pragma once

// The PlanRequest from stepmap-plan's options, with the semantics srun's
// stepmap options have (spank_plugin/srun_side.cpp): --hostfile, and the
// FILE= of --map-by seq/rankfile (else the hostfile), are read here.

#include "base/expected.hpp"
#include "cli_options.hpp"
#include "request/plan_request.hpp"

namespace stepmap::cli {

// Errors name the option and the fix. --nodes-sort other than NONE is
// refused: rating nodes by load or processes needs Slurm's node table.
Expected<PlanRequest> buildRequest(const CliOptions &options);

// Whether the request needs each node's hardware (as srun decides): object
// mappings, PE=n and bindings.
bool needsHardware(const PlanRequest &request);

} // namespace stepmap::cli
