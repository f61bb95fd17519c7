#pragma once

// What srun's side reads of srun, once, in slurm_spank_init: its command
// line (before srun parses it), the options salloc/sbatch forwarded, the
// PSI_* variables and the srun variables the later stages need.

#include "options.hpp"
#include "srun/psi_environment.hpp"
#include "srun/srun_command_line.hpp"
#include "srun/step_environment.hpp"

#include <map>
#include <string>
#include <vector>

namespace stepmap::plugin {

struct SrunInput {
    std::vector<std::string> args; // argv without argv[0]
    SrunCommandLine cmd;
    // stepmap's options salloc/sbatch forwarded, and those the plan is made
    // with (the forwarded ones, the command line's winning).
    std::map<std::string, std::string> forwarded;
    std::map<std::string, std::string> planned;
    StepmapOptions options; // merged, the command line's winning
    EnvironmentValues psi;  // the PSI_* variables and OMP_NUM_THREADS set
    SrunEnvironment environment;
};

// The input from its parts (pure).
SrunInput srunInput(std::vector<std::string> args, std::map<std::string, std::string> forwarded,
                    EnvironmentValues psi, SrunEnvironment environment);

// srun's variables the stages read besides `extra` (the variable this
// Slurm release's srun reads as -c, and the one it ignores).
std::vector<std::string> srunVariablesRead(const std::vector<std::string> &extra);

// Reads all of it from this process: /proc/self/cmdline, the environment.
SrunInput readSrunInput(const std::vector<std::string> &extraVariables);

} // namespace stepmap::plugin
