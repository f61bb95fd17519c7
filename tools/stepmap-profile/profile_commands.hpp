#pragma once

// `stepmap-profile make`, `update` and `check`: the commands that probe the
// nodes of the Slurm allocation they run in through srun (srun_probe.hpp).
// Each takes its arguments after the command word and returns the exit
// status: 0 done (check: all current), 1 bad input or a failed probe (the
// message names it), 2 usage, 3 (check only) stale.

#include <string>
#include <vector>

namespace stepmap::tools {

inline constexpr int kExitStale = 3;

int makeProfile(const std::vector<std::string> &args);
int updateProfile(const std::vector<std::string> &args);
int checkProfile(const std::vector<std::string> &args);

} // namespace stepmap::tools
