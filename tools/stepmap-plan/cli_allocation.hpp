#pragma once

// Where stepmap-plan's allocation comes from: --nodes/--cpus, an
// --allocation file, a running job (--job, through scontrol) or Slurm's
// environment inside an allocation.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/expected.hpp"
#include "cli_options.hpp"
#include "hosts/allocation.hpp"

namespace stepmap::cli {

struct CliAllocation {
    Allocation allocation; // no node models yet (cli_hardware.hpp adds them)
    // Per node: the job's CPU ids there (Slurm's abstract ids, i.e. logical
    // PU indices), when known (--job).
    std::vector<std::optional<std::vector<std::uint32_t>>> cpuIds;
    // Per node: false when the allocation file gave no slots= (then 1, or
    // the node's cores once its hardware is known).
    std::vector<bool> slotsGiven;
    std::string jobId = "N/A"; // for the job map
};

// The allocation the options name. Errors name the source and the fix.
Expected<CliAllocation> loadAllocation(const CliOptions &options);

// `scontrol show job -d` output: NodeList= and the "Nodes=... CPU_IDs=..."
// detail lines (slots = number of CPU ids). The error names the job.
Expected<CliAllocation> parseScontrolJob(std::string_view text, std::string_view jobId);

} // namespace stepmap::cli
