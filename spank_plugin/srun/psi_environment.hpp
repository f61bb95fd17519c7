#pragma once

// ParaStation's environment (process_placement(7)) as the lower-precedence
// equivalents of stepmap's options. Pure: it takes the variables' values
// and a file reader; srun/srun_input.cpp reads the real environment, and
// srun/plan_step.cpp's reader PSI_HOSTFILE (as the user).
//
// Equivalents (an option given wins over its variable):
//   --overbook          PSI_OVERBOOK          on when set, even to "0" or ""
//   --loop-nodes-first  PSI_LOOP_NODES_FIRST  on when set, even to "0" or ""
//   --nodes-sort=KIND   PSI_NODES_SORT        unknown value: an error
//   --tpp=N             PSI_TPP, then OMP_NUM_THREADS (its first level),
//                       then 1; OMP_NUM_THREADS only counts when some
//                       ParaStation setting is in effect
//   --host / --hostfile the first set of PSI_NODES, PSI_HOSTS, PSI_HOSTFILE
//                       (the others are ignored); all three filter the
//                       Slurm allocation
//   (none)              PSI_EXCLUSIVE         on when set; PSI_OVERBOOK and
//                       --overbook enforce it: nodes no other job uses
//   (none)              PSI_WAIT              on when set: a request that
//                       cannot start now waits in Slurm's queue; unset, under
//                       any PSI_* variable, it fails at once
//   --bind-to none      __PSI_NO_PINPROC      on when set: ranks are not pinned
//                                             to their CPU-slots
//   (none)              __PSI_CPUMAP          the CPUs of CPU-slots 0, 1, ...
//                       (OS indices, "0,2,1,3"); the site must allow it
//                       (stepmap.yaml allow: user_cpumap)
//   (none)              __PSI_NO_BINDMEM      on when set: memory is not bound
//                                             to the pinned CPUs' NUMA nodes
// Any PSI_* variable above engages stepmap as its options do; the __PSI_*
// ones and OMP_NUM_THREADS alone do not.

#include "base/expected.hpp"
#include "options.hpp"
#include "request/plan_request.hpp"

#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace stepmap::plugin {

// The PSI_* variables stepmap honours, in the order above.
const std::vector<std::string> &psiVariableNames();
// Every variable applyParaStationEnvironment reads: the PSI_* ones, the
// __PSI_* ones of pinning and OMP_NUM_THREADS (last).
const std::vector<std::string> &environmentNamesRead();

// name -> value of the variables that are set.
using EnvironmentValues = std::map<std::string, std::string>;

// The first PSI_* variable that is set, if any: stepmap then places this
// step even without its options.
std::optional<std::string> firstPsiVariable(const EnvironmentValues &env);

// Reads a file as the user; the error is the reason alone (strerror).
using FileReader = std::function<Expected<std::string>(const std::string &path)>;

// Sets request.overbook and request.parastation (all but figures) from the
// options and the environment, as the table above says, recording in
// parastation.sources where each setting came from. Returns notes on
// variables ignored because an option or an earlier variable won (for the
// verbose log). Errors name the option or variable: a bad --nodes-sort /
// PSI_NODES_SORT / --tpp / PSI_TPP / OMP_NUM_THREADS value, a malformed
// PSI_NODES / PSI_HOSTS / PSI_HOSTFILE (or the file unreadable).
Expected<std::vector<std::string>> applyParaStationEnvironment(const StepmapOptions &options,
                                                               const EnvironmentValues &env,
                                                               const FileReader &readFile,
                                                               PlanRequest &request);

} // namespace stepmap::plugin
