#pragma once

// srun --multi-prog configuration files as application contexts: each line
// "RANKS PROGRAM [ARGS]" names the tasks that run a program. stepmap takes
// each line as one application context (MPMD, as mpirun's "a : b"); for
// that the lines must give consecutive rank ranges in order (0-1, 2-4, ...).

#include "base/expected.hpp"

#include <string_view>
#include <vector>

namespace stepmap::plugin {

// The number of ranks of each application context, in order. Errors name
// the file and line, and say how to write it.
Expected<std::vector<int>> multiProgApps(std::string_view text, std::string_view fileName);

} // namespace stepmap::plugin
