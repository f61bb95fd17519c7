#pragma once

// Reads srun's own command line (/proc/self/cmdline) in slurm_spank_init,
// before srun parses it: SPANK option callbacks cannot see srun's options
// (-n in particular) and run too late to change the step layout, so the
// plugin needs both its own options and the task count up front.

#include <map>
#include <optional>
#include <string>
#include <vector>

namespace stepmap::plugin {

struct SrunCommandLine {
    // stepmap options by name (without "--"); a flag has an empty value.
    std::map<std::string, std::string> stepmapOptions;
    std::optional<std::string> ntasks; // -n / --ntasks, verbatim
    // srun options that decide the layout themselves, as written, e.g. "-N".
    std::vector<std::string> layoutOptions;
    std::optional<std::string> mpi;     // --mpi value
    bool multiProg = false;             // --multi-prog
    std::optional<std::string> program; // the first word after the options
};

// args: argv without argv[0]. stepmapNames: the plugin's long options and
// whether each takes a value. Scanning stops at the program to run.
SrunCommandLine scanSrunCommandLine(const std::vector<std::string> &args,
                                    const std::map<std::string, bool> &stepmapNames);

// /proc/self/cmdline split at NULs, without argv[0].
std::vector<std::string> readOwnCommandLine();

} // namespace stepmap::plugin
