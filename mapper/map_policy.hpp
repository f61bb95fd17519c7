#pragma once

// --map-by, the subset of mpirun's values stepmap places: "slot" (default)
// and "node", each with the :OVERSUBSCRIBE / :NOOVERSUBSCRIBE modifiers.

#include <optional>
#include <string_view>

#include "expected.hpp"

namespace stepmap {

enum class MapBy { Slot, Node };

struct MapPolicy {
    MapBy by = MapBy::Slot;
    std::optional<bool> oversubscribe; // unset: not given (= no oversubscription)

    bool operator==(const MapPolicy &) const = default;
};

// "slot", "node", "node:OVERSUBSCRIBE", ":OVERSUBSCRIBE", "slot:NOOVERSUBSCRIBE";
// case-insensitive. Errors name the value: an unknown policy or modifier lists
// the accepted ones; mpirun's other policies (core, socket, package, numa,
// l1cache, l2cache, l3cache, hwthread, board, ppr:..., seq, rankfile,
// pe-list=...) and modifiers (PE=n, SPAN, ...) say "not supported yet".
Expected<MapPolicy> parseMapBy(std::string_view value);

} // namespace stepmap
