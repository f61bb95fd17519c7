#pragma once

// --display-map in srun: mpirun's text job map on srun's stderr, or the job
// drawn as stepmap-plan --output svg draws it, written to FILE as the user
// before the step starts.

#include "base/expected.hpp"
#include "srun/plan_step.hpp"
#include "srun/replaced_file.hpp"
#include "srun/srun_input.hpp"

#include <optional>
#include <string>

namespace stepmap::plugin {

// Where the map goes: the text map, or the picture's file (its temporary
// file created before anything is allocated, so that a bad value or a file
// srun cannot create stops srun before anything starts).
struct JobMapOutput {
    bool text = false;
    std::optional<ReplacedFile> picture;
};
// `displayMap`: --display-map's value as written (none: no map).
Expected<JobMapOutput> prepareJobMap(const std::optional<std::string> &displayMap);

// mpirun's job map, on srun's stderr (`jobOrNa`: the job id, or "N/A").
// `withCpusPerTask`: the step may hold fewer CPUs than the job (srun's -c,
// its variable, --exact or SLURM_EXACT), which the map then says.
void displayJobMap(const PlannedStep &step, const std::string &jobOrNa, bool withCpusPerTask);

// Draws the job into the picture's file (and says so); the error names
// --display-map's value.
Expected<void> drawJobMap(const PlannedStep &step, const std::string &job, ReplacedFile &picture,
                          const std::string &displayMap);

// Both of the above as srun's input asks for them: the text map (with
// --display-map, or PSI_* asking for it) and the picture, which it
// completes. `ownJob`: the job stepmap asked Slurm for, if any (else the
// text map names --jobid's or salloc's/sbatch's job).
Expected<void> showJobMap(JobMapOutput &map, const PlannedStep &step, const SrunInput &input,
                          const std::string &ownJob);

} // namespace stepmap::plugin
