#pragma once

// Internal to the mapper: counting and finding free CPUs (cores, or PUs
// when hwthreads are the CPUs) of a PU set within a PU range.

#include <cstdint>
#include <optional>
#include <utility>

#include "hosts/node_model.hpp"
#include "hosts/pu_bits.hpp"

namespace stepmap::detail {

// Cores (or PUs, with hwthreads) of `bits` inside [first, first + count).
// A core counts only when all its PUs are in the set, as hwloc's
// get_nbobjs_inside_cpuset does. Counts at most to stopAt.
std::uint32_t countCpus(const NodeModel &model, const PuBits &bits, std::uint32_t first,
                        std::uint32_t count, bool hwthreads, std::uint32_t stopAt = kNoBit);

// The first core (or PU) of `bits` inside [first, first + count), as a PU
// range (first PU, count), or nothing.
std::optional<std::pair<std::uint32_t, std::uint32_t>>
firstCpuInside(const NodeModel &model, const PuBits &bits, std::uint32_t first, std::uint32_t count,
               bool hwthreads);

} // namespace stepmap::detail
