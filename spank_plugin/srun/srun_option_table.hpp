#pragma once

// srun's own options, as the plugin must know them to read srun's command
// line before srun does (srun_command_line.hpp): which take a value, their
// short letters, and what each means when stepmap places the step.

#include <string>
#include <vector>

namespace stepmap::plugin {

enum class SrunArgument {
    None,     // a flag
    Required, // "--x=v", "--x v", "-xv", "-x v"
    Optional, // only "--x=v" / "-xv"
};

enum class SrunOptionRole {
    Step,           // shapes the step only (I/O, labels, ...): left to srun
    Allocation,     // shapes the job's allocation; stepmap passes it on when it allocates
    AllocationOnly, // shapes the allocation in a way stepmap does not pass on
    StepNodes,      // -N, -w, -x: the allocation's nodes, then the step's
    TasksPerNode,   // --ntasks-per-node: must agree with the plan
    Layout,         // -m, -r, -F: a layout of their own, which the plan replaces
    MpiType,        // --mpi: stepmap serves PMIx itself (a pmix type is dropped
                    // where the site serves PMIx steps, else refused)
};

struct SrunOptionSpec {
    const char *name; // long name, without "--"
    char letter;      // short option, 0 for none
    SrunArgument argument;
    SrunOptionRole role;
};

const std::vector<SrunOptionSpec> &srunOptionTable();

} // namespace stepmap::plugin
