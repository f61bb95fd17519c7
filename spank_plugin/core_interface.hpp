#pragma once

// The calls between stepmap.so, the entry object Slurm loads in every srun,
// salloc, sbatch and slurmstepd, and stepmap_core.so, the plugin proper,
// which the entry loads (from its own directory) only for a step stepmap
// serves. Plain C types: both sides are built together, but nothing C++
// crosses a dlopen boundary.

extern "C" {
#include <slurm/spank.h>
}

namespace stepmap::plugin {

inline constexpr const char *kCoreFileName = "stepmap_core.so";

// The hooks forwarded after init, by number (stepmap_core_hook's first argument).
enum CoreHook : int {
    kHookInitPostOpt,
    kHookLocalUserInit,
    kHookUserInit,
    kHookTaskPostFork,
    kHookTaskInit,
    kHookTaskExit,
    kHookExit,
};

} // namespace stepmap::plugin

extern "C" {
// slurm_spank_init's work, minus registering the options (the entry did);
// called from the entry's slurm_spank_init or, in an allocator, from the
// first option's callback.
using StepmapCoreInit = int (*)(spank_t sp, int ac, char **av, spank_context_t context);
// An option's callback (spank_opt_cb_f), `val` its index in kOptionSpecs.
using StepmapCoreOption = int (*)(int val, const char *arg, int remote);
using StepmapCoreHookCall = int (*)(int hook, spank_t sp, int ac, char **av);
}
