#pragma once

// The srun options stepmap adds, as plain data: the entry object Slurm loads
// in every srun and slurmstepd (stepmap_entry.cpp) registers them without
// the C++ runtime; the plugin proper reads the same table (options.hpp).

namespace stepmap::plugin {

struct OptionSpec {
    const char *name; // long option, without "--"
    const char *arg;  // argument placeholder, nullptr for a flag
    const char *usage;
};

// In the order srun --help shows them.
inline constexpr OptionSpec kOptionSpecs[] = {
    {"host", "hosts",
     "stepmap: run only on these allocated hosts (name, name:N caps at N slots, "
     "!^a,b excludes)"},
    {"hostfile", "file",
     "stepmap: run only on the allocated hosts listed in file "
     "(name [slots=N] [max_slots=M])"},
    {"map-by", "policy",
     "stepmap: place ranks as mpirun does: slot, node, seq, core, hwthread, "
     "l1cache/l2cache/l3cache, numa, package, ppr:N:obj, pe-list=..., rankfile, "
     "with modifiers (:OVERSUBSCRIBE, :PE=n, :SPAN, :HWTCPUS, :FILE=, ...)"},
    {"rank-by", "policy", "stepmap: number the ranks by slot, node, fill or span"},
    {"bind-to", "object",
     "stepmap: bind each rank to none, hwthread, core, l1cache/l2cache/l3cache, numa or "
     "package (:overload-allowed, :if-supported)"},
    {"overbook", nullptr,
     "stepmap: when there are more ranks than CPUs, spread them evenly (ParaStation "
     "PSI_OVERBOOK)"},
    {"loop-nodes-first", nullptr,
     "stepmap: place one rank per node per pass, round robin (ParaStation "
     "PSI_LOOP_NODES_FIRST)"},
    {"nodes-sort", "kind",
     "stepmap: order the nodes by PROC, LOAD (LOAD_1), LOAD_5, LOAD_15, PROC+LOAD or NONE "
     "before placing (ParaStation PSI_NODES_SORT)"},
    {"tpp", "N",
     "stepmap: each rank takes N CPUs of one node (ParaStation PSI_TPP; falls back to "
     "OMP_NUM_THREADS)"},
    {"display-map", nullptr, "stepmap: print the job map before the step starts"},
    {"modex", "mode",
     "stepmap: how ranks exchange connection data at MPI_Init: fence (the MPI library's "
     "default), async (at first contact) or profile (none: from the site's interconnect "
     "profile)"},
};

inline constexpr int kOptionCount = static_cast<int>(sizeof kOptionSpecs / sizeof kOptionSpecs[0]);

} // namespace stepmap::plugin
