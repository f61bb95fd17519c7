#pragma once

// The CPU ids a job holds on each node, as `scontrol -d -o show job` prints
// them ("Nodes=n[1-2] CPU_IDs=0-1 Mem=0 GRES=" per group of alike nodes).
// Slurm 24.11 removed the library call that gave them; scontrol's detail
// line is the interface every release keeps.

#include <cstdint>
#include <map>
#include <string>
#include <string_view>

#include "base/expected.hpp"

namespace stepmap::plugin {

// Node name -> CPU id list ("0-3,8"). An error names what is malformed;
// text without any Nodes=/CPU_IDs= pair is an error too (the job has no
// resources yet, or scontrol printed something else).
Expected<std::map<std::string, std::string>> parseJobCpuIds(std::string_view scontrolText);

// `scontrol -d -o show job JOB`'s output, run as the calling user: the
// scontrol next to the running program (srun) if there is one, else the
// first on PATH; bounded in size (4 MiB) and time (30 s).
Expected<std::string> readJobDetail(std::uint32_t job);

} // namespace stepmap::plugin
