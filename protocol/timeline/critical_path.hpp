#pragma once

// srun -v's breakdown of a step's critical path: srun's own marks and every
// node server's timeline (step_timeline.hpp) as a few lines of text, per
// phase the median over the nodes and the slowest node.

#include "protocol/timeline/step_timeline.hpp"

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace stepmap::timeline {

// srun's side, wall-clock microseconds (0: did not happen).
struct SrunMarks {
    std::int64_t started = 0; // the plugin began in srun
    double planMs = 0;        // planning, srun's CPU
    double allocationMs = 0;  // waiting for Slurm to grant the job (0: inside one)
    std::int64_t stepCreated = 0;
    std::int64_t hubOpen = 0;
    std::int64_t exiting = 0; // srun's exit hook
};

// nodes: the timelines received, by plan node index; nodeNames: the plan's
// node names; servers: how many node servers the step has. Fences from
// Recorder::kMaxFences on are left out, so the lines are bounded whatever
// the nodes sent.
std::vector<std::string>
describeCriticalPath(const SrunMarks &srun,
                     const std::map<std::uint32_t, std::vector<Event>> &nodes,
                     const std::vector<std::string> &nodeNames, std::size_t servers);

} // namespace stepmap::timeline
