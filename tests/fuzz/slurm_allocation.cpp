// What srun reads from Slurm about the job: allocationFromSlurm
// (mapper/allocation.hpp) of SLURM_JOB_NODELIST and
// SLURM_JOB_CPUS_PER_NODE, and parseCpuIdList (mapper/node_model.hpp) of the
// job's CPU ids on a node. Input: those three values on three lines. An id
// list must survive formatIdList and parseCpuIdList unchanged.

#include "fuzz_check.hpp"
#include "hosts/allocation.hpp"
#include "hosts/node_model.hpp"

#include <algorithm>

using namespace stepmap;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t *data, std::size_t size) {
    std::vector<std::string> lines = fuzz::splitAt(fuzz::asText(data, size), '\n');
    lines.resize(std::max<std::size_t>(lines.size(), 3));

    if (const auto allocation = allocationFromSlurm(lines[0], lines[1])) {
        fuzz::check(!allocation->nodes.empty(), "an allocation without nodes");
        for (const AllocatedNode &node : allocation->nodes)
            fuzz::check(node.slots >= 1, "a node with no CPUs");
    }

    if (const auto ids = parseCpuIdList(lines[2])) {
        fuzz::check(std::is_sorted(ids->begin(), ids->end()) &&
                        std::adjacent_find(ids->begin(), ids->end()) == ids->end(),
                    "ids not ascending and unique");
        const auto again = parseCpuIdList(formatIdList(ids.value()));
        fuzz::check(again.ok() && again.value() == ids.value(),
                    "ids changed in formatIdList/parseCpuIdList");
    }
    return 0;
}
