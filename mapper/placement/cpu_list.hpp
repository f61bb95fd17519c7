#pragma once

// Internal to the mapper: CPU lists the user writes (pe-list, rankfile and
// sequence-file slots) resolved against a node model. Ids are hwloc logical
// indices over the whole machine: of cores, or of PUs when `hwthreads`.

#include <cstdint>
#include <string_view>
#include <vector>

#include "base/expected.hpp"
#include "hosts/node_model.hpp"

namespace stepmap::detail {

struct ResolvedCpus {
    std::vector<std::uint32_t> pus;     // held local PUs named, ascending, unique
    std::vector<std::uint32_t> notHeld; // ids that exist but the job does not hold
};

// "0-3,8": the ids in the order written, ranges expanded ("1,0-2" gives
// 1,0,1,2), at most kMaxCpusPerNode of them (counted before expanding).
// The error names the list and the bad item.
Expected<std::vector<std::uint32_t>> expandIds(std::string_view list);

// The held PUs of core (or PU) `id`; notHeld when the machine has it but
// the job does not; an error when the machine has no such core.
Expected<ResolvedCpus> resolveId(std::uint32_t id, const NodeModel &model, bool hwthreads);

// A pe-list: ids and ranges.
Expected<ResolvedCpus> resolveIdList(std::string_view list, const NodeModel &model, bool hwthreads);

// A rankfile / sequence-file slot list: ids, "P<packages>",
// "[P]<package>:<cores>" items joined by ';'.
Expected<ResolvedCpus> resolveSlotList(std::string_view list, const NodeModel &model,
                                       bool hwthreads);

} // namespace stepmap::detail
