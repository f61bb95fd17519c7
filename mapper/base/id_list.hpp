#pragma once

// "0-3,8": lists of ids and ranges, as Slurm, hwloc and Open MPI write CPU
// and core sets. One parser for all of them; each caller sets the bounds
// and words its own messages from the fault.

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

namespace stepmap {

// Bounds on an id list, checked before it is expanded ("0-4294967295" costs
// nothing): the highest id, and the ids of all items together (repeats
// counted).
struct IdListLimits {
    std::uint32_t maxId = 1 << 24;
    std::size_t maxCount = std::size_t{1} << 24;
};

struct IdRange {
    std::uint32_t first;
    std::uint32_t last; // at least first
};

// Why a text is not an id list within its limits; the first fault found,
// item by item.
struct IdListFault {
    enum class Kind {
        NotARange, // `item` is not N or N-M with N <= M < 2^32 (digits only)
        IdTooHigh, // `item` names `id`, above the limits' maxId
        TooMany,   // the items up to `item` name more than maxCount ids
    };
    Kind kind;
    std::string_view item; // a view into the parsed text
    std::uint64_t id = 0;
};

struct IdRanges {
    std::vector<IdRange> ranges; // as written
    std::size_t count = 0;       // ids they name, repeats counted
    std::optional<IdListFault> fault;
};

// The items of `text`, split at ','. An empty text is one empty item (not
// a range): callers that accept an empty list check for it first.
IdRanges parseIdRanges(std::string_view text, const IdListLimits &limits);

// The ids of the ranges in the order written ("1,0-2": 1, 0, 1, 2).
std::vector<std::uint32_t> expandIdRanges(const IdRanges &ranges);

} // namespace stepmap
