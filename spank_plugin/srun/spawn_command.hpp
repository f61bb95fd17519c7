#pragma once

// The srun that starts a rank's MPI_Comm_spawn as a new step of the job:
// pure, from the request and what the job holds. The children go where
// mpirun would put them inside the allocation: its free slots first (the
// slots the job's running steps do not use), filtered by the request's
// host or hostfile (names outside the allocation are mpirun's error);
// with no free slot left the spawn fails unless it allows
// oversubscription (map_by ":OVERSUBSCRIBE"), and then shares the job's
// slots. The step overlaps the running ones in Slurm's books (the spawner's
// step holds its nodes' CPUs); stepmap's plan keeps the children apart.
// With parent-mapping (seed 000's fifth key) the children are mapped as
// the caller's step is: each of its nodes takes as many children as it
// holds of the step's first N ranks (modulo its size), in its node order,
// beside the ranks whatever the free slots.

#include "base/expected.hpp"
#include "hosts/allocation.hpp"
#include "protocol/wire/spawn_payloads.hpp"

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

namespace stepmap::plugin {

struct SpawnContext {
    std::uint32_t jobId = 0;
    Allocation allocation;                 // the job's nodes and slots
    std::map<std::string, int> used;       // ranks of the job's running steps, by node
    std::vector<std::string> spawnerNodes; // the node of each rank of the caller's step
    std::string srun;                      // the srun to run
    // Reads the request's hostfile (as the user), the error the reason.
    std::function<Expected<std::string>(const std::string &path)> readFile;
};

// Where argv names the --multi-prog file of a spawn of several programs
// (the caller writes multiProg there and puts its path in this place).
inline constexpr const char *kMultiProgFile = "{multi-prog}";

struct SpawnCommand {
    std::vector<std::string> argv;
    std::string multiProg;                // srun's --multi-prog file, for several programs
    std::vector<std::string> environment; // KEY=VALUE lines the children get
    std::string summary;                  // "4 x ./worker on n2:2,n3:2", for messages
};

// The srun, or why the spawn cannot run (a message for the rank's user).
Expected<SpawnCommand> spawnCommand(const wire::SpawnRequestMsg &request,
                                    const SpawnContext &context);

} // namespace stepmap::plugin
