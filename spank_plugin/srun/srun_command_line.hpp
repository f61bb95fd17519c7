#pragma once

// Reads srun's own command line (/proc/self/cmdline) in slurm_spank_init,
// before srun parses it: SPANK option callbacks cannot see srun's options
// (-n in particular) and run too late to change the step layout, so the
// plugin needs both its own options and srun's up front. Long options may
// be abbreviated, as getopt_long allows ("--ntask=4").

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "srun/srun_option_table.hpp"

namespace stepmap::plugin {

// One srun option found before the program.
struct SrunOption {
    std::string name;    // its long name ("nodes" for -N or --nod)
    std::string written; // as written: "-N", "--nodes"
    std::optional<std::string> value;
    SrunOptionRole role = SrunOptionRole::Step;
    // Where it stands in args: the word holding it, and whether its value
    // took the next word; `letter` is its offset within a cluster of short
    // options ("-lN2": 2), 0 for a long option.
    std::size_t word = 0;
    bool valueInNextWord = false;
    std::size_t letter = 0;
};

struct SrunCommandLine {
    // stepmap options by name (without "--"); a flag has an empty value.
    std::map<std::string, std::string> stepmapOptions;
    std::vector<SrunOption> options;   // srun's own, in order
    std::optional<std::string> ntasks; // -n / --ntasks, verbatim (the last one)
    // srun options that decide the layout themselves, as written, e.g. "-m".
    std::vector<std::string> layoutOptions;
    std::optional<std::string> mpi;     // --mpi value
    bool multiProg = false;             // --multi-prog
    std::optional<std::string> program; // the first word after the options

    // The last value of srun option `name` (long name), if given.
    const SrunOption *last(const std::string &name) const;
};

// args: argv without argv[0]. stepmapNames: the plugin's long options and
// whether each takes a value. Scanning stops at the program to run.
SrunCommandLine scanSrunCommandLine(const std::vector<std::string> &args,
                                    const std::map<std::string, bool> &stepmapNames);

// args without the srun options of `cmd` whose role is in `roles` (their
// values too; a cluster "-lN2" keeps "-l").
std::vector<std::string> argumentsWithout(const std::vector<std::string> &args,
                                          const SrunCommandLine &cmd,
                                          const std::vector<SrunOptionRole> &roles);

// /proc/self/cmdline split at NULs, without argv[0].
std::vector<std::string> readOwnCommandLine();

} // namespace stepmap::plugin
