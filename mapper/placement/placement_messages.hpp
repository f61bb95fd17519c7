#pragma once

// Internal to the mapper: the messages several placers give when an
// application context does not fit.

#include <cstdint>
#include <string>

#include "base/expected.hpp"
#include "placement/placement.hpp"

namespace stepmap::detail {

// The mapping policy as --map-by spells it ("core", "pe-list=0-3").
std::string mapName(const MapOptions &options);

// Binding the application would put processes on more CPUs than the job
// holds.
UserError overloadError(std::uint32_t app, std::uint32_t np, const MapOptions &options);

// Only `placed` of np processes fit.
UserError failedMap(std::uint32_t app, std::uint32_t np, std::uint32_t placed,
                    const MapOptions &options);

// Binding asked for (not :if-supported) but the node has no free CPU left.
UserError noFreeCpu(std::string_view node, BindTo bind);

} // namespace stepmap::detail
