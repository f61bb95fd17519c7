#pragma once

// The srun options stepmap adds, as plain data: the entry object Slurm loads
// in every srun and slurmstepd (stepmap_entry.cpp) registers them without
// the C++ runtime; the plugin proper reads the same table (options.hpp).

namespace stepmap::plugin {

struct OptionSpec {
    const char *name; // long option, without "--"
    const char *arg;  // argument placeholder, nullptr for a flag
    const char *usage;
    // The value may be left out (getopt_long's optional_argument, SPANK's
    // has_arg 2): then it is written only as --name=value, never as the next
    // word, and `arg` shows it in brackets.
    bool valueOptional = false;
};

// In the order srun --help shows them.
// `usage` is srun --help's one line: Slurm wraps it at 50 characters on an
// 80-column terminal (tests/e2e/test_spine.py checks each stays one line);
// man 8 stepmap has the rest.
inline constexpr OptionSpec kOptionSpecs[] = {
    {"host", "hosts", "run only on these allocated hosts (mpirun --host)"},
    {"hostfile", "file", "run only on the allocated hosts listed in file"},
    {"map-by", "policy", "place the ranks as mpirun --map-by does"},
    {"rank-by", "policy", "number the ranks as mpirun --rank-by does"},
    {"bind-to", "object", "bind each rank as mpirun --bind-to does"},
    {"overbook", nullptr, "spread ranks evenly past the CPUs (PSI_OVERBOOK)"},
    {"loop-nodes-first", nullptr, "one rank per node per pass (PSI_LOOP_NODES_FIRST)"},
    {"nodes-sort", "kind", "order the nodes first: PROC, LOAD, ... NONE"},
    {"tpp", "N", "give each rank N CPUs of one node (PSI_TPP)"},
    {"display-map", "[svg:FILE]", "print the job map; =svg:FILE draws it in FILE", true},
    {"modex", "mode", "MPI_Init's data exchange: fence, async, profile"},
    {"with-ft", "mode", "ulfm: ranks survive a failed rank (mpirun's)"},
};

inline constexpr int kOptionCount = static_cast<int>(sizeof kOptionSpecs / sizeof kOptionSpecs[0]);

} // namespace stepmap::plugin
