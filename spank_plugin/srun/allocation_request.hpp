#pragma once

// The allocation stepmap asks Slurm for when srun has none: what the user
// asked for with srun's allocation options (command line, then srun's input
// variables such as SLURM_PARTITION), plus what the placement implies
// (mapper/allocation_shape.hpp). Slurm's scheduler then chooses the nodes.
// Pure: the plugin turns it into Slurm's job description.
//
// Allocation options stepmap does not pass on (--gres, --begin, ...) are
// refused, naming the option and the way that keeps them: run the srun
// inside `salloc <those options>`.

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "base/expected.hpp"
#include "request/allocation_shape.hpp"
#include "request/parastation_request.hpp"
#include "srun/srun_command_line.hpp"

namespace stepmap::plugin {

struct AllocationRequest {
    std::optional<int> tasks;
    std::optional<int> minNodes, maxNodes;
    std::optional<int> tasksPerNode;
    std::optional<int> cpusPerTask;
    std::optional<int> minCpusPerNode; // --mincpus
    std::optional<std::uint64_t> memPerNodeMb;
    std::optional<std::uint64_t> memPerCpuMb;
    std::optional<std::uint32_t> timeLimitMin; // unset: the partition's default
    std::optional<std::uint32_t> timeMinMin;
    bool unlimitedTime = false;
    std::string name, account, partition, qos, constraint, reservation, dependency, comment, wckey,
        licenses, workDir;
    std::vector<std::string> requiredNodes; // -w and the nodes the user named to stepmap
    std::vector<std::string> excludedNodes; // -x
    enum class Sharing { Default, Exclusive, ExclusiveUser, ExclusiveMcs, Oversubscribe };
    Sharing sharing = Sharing::Default;
    bool overcommit = false;
    bool contiguous = false;
    bool immediate = false;
    bool spread = false;      // --spread-job, or implied by --map-by node
    bool useMinNodes = false; // --use-min-nodes

    bool operator==(const AllocationRequest &) const = default;
};

// Reads the text of a -w file (a '/' in the value makes it a file for
// srun); the error is the reason alone.
using NodeFileReader = std::function<Expected<std::string>(const std::string &path)>;

// A -w/-x value as srun reads it: hostlist expressions separated by commas
// or blanks, or (with a '/') a file of them. `source` ("-w") names it in
// errors.
Expected<std::vector<std::string>>
parseNodeNames(const std::string &source, const std::string &value, const NodeFileReader &readFile);

// cmd: the scanned command line; environment: srun's input variables that
// are set (name -> value); shape: what the placement implies; program: the
// job's default name. Errors name the option or variable and the fix.
Expected<AllocationRequest> allocationRequestFor(
    const SrunCommandLine &cmd, const std::map<std::string, std::string> &environment,
    const AllocationShape &shape, const std::string &program, const NodeFileReader &readNodeFile);

// --overbook when srun asks Slurm for the job (ParaStation: "every CPU
// gets k or k+1 processes" of the node list): pool, the usable nodes it
// may use (name, CPUs; in the partition, not excluded, the named ones when
// the user named some). Processes that fit the pool's CPUs are asked for
// without overbooking; more ask for every node of the pool, whole (its
// CPUs, as PSI_OVERBOOK enforces PSI_EXCLUSIVE), so the placement spreads
// them over all of its CPUs. Unchanged when the user gave -N, or for an
// empty pool. note: what was asked and why, for srun -v ("" when nothing
// changed).
struct OverbookAsk {
    AllocationRequest request;
    std::string note;
};
OverbookAsk overbookOverPool(AllocationRequest request,
                             const std::vector<std::pair<std::string, int>> &pool);

// ParaStation's queue rules when srun asks Slurm for the job (seed 004):
// PSI_EXCLUSIVE (or overbooking, which enforces it) asks for nodes no other
// job uses (Slurm's --exclusive; a user's --exclusive=user or =mcs is
// kept, with a note; --oversubscribe is refused); under a PSI_* variable
// without PSI_WAIT, Slurm must start the job now or not at all (srun's
// --immediate; ParaStation fails such a request at once). notes: what was
// asked and why, for srun -v; immediateForPsi: the failure then needs
// ParaStation's message.
struct QueueAsk {
    AllocationRequest request;
    std::vector<std::string> notes;
    bool immediateForPsi = false;
};
Expected<QueueAsk> parastationQueueRules(AllocationRequest request, const ParaStationRequest &ps);

// The srun input variables allocationRequestFor reads (to collect them).
const std::vector<std::string> &allocationVariables();

// Slurm's time forms: "M", "M:S", "H:M:S", "D-H", "D-H:M", "D-H:M:S";
// "INFINITE"/"UNLIMITED" (unlimited, nullopt with unlimited=true). Minutes,
// seconds rounded up.
Expected<std::uint32_t> parseSlurmMinutes(const std::string &what, const std::string &text,
                                          bool &unlimited);

// Slurm's memory form: a number with an optional K, M (default), G or T.
Expected<std::uint64_t> parseSlurmMegabytes(const std::string &what, const std::string &text);

} // namespace stepmap::plugin
