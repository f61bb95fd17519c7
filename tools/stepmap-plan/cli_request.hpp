#pragma once

// The PlanRequest from stepmap-plan's options, built as srun builds it
// (mapper/request/request_options.hpp): --hostfile, and the FILE= of
// --map-by seq/rankfile (else the hostfile), are read here.

#include "base/expected.hpp"
#include "cli_options.hpp"
#include "request/plan_request.hpp"

namespace stepmap::cli {

// Errors name the option and the fix. --nodes-sort other than NONE is
// refused: rating nodes by load or processes needs Slurm's node table.
Expected<PlanRequest> buildRequest(const CliOptions &options);

} // namespace stepmap::cli
