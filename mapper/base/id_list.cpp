#include "base/id_list.hpp"

#include <limits>

#include "base/parse_number.hpp"
#include "base/text_words.hpp"

namespace stepmap {

namespace {

// "N" or "N-M" with N <= M, each below 2^32.
std::optional<IdRange> parseItem(std::string_view item) {
    constexpr std::uint64_t kMax = std::numeric_limits<std::uint32_t>::max();
    const std::size_t dash = item.find('-');
    const auto first = detail::parseUnsigned(item.substr(0, dash), kMax);
    auto last = first;
    if (dash != std::string_view::npos)
        last = detail::parseUnsigned(item.substr(dash + 1), kMax);
    if (!first || !last || *last < *first)
        return std::nullopt;
    return IdRange{static_cast<std::uint32_t>(*first), static_cast<std::uint32_t>(*last)};
}

} // namespace

IdRanges parseIdRanges(std::string_view text, const IdListLimits &limits) {
    IdRanges out;
    for (std::string_view item : detail::splitAt(text, ',')) {
        const auto range = parseItem(item);
        if (!range) {
            out.fault = IdListFault{IdListFault::Kind::NotARange, item};
            return out;
        }
        if (range->last > limits.maxId) {
            out.fault = IdListFault{IdListFault::Kind::IdTooHigh, item, range->last};
            return out;
        }
        // Counted before anything is expanded.
        const std::uint64_t size = std::uint64_t{range->last} - range->first + 1;
        if (size > limits.maxCount - out.count) {
            out.fault = IdListFault{IdListFault::Kind::TooMany, item};
            return out;
        }
        out.count += size;
        out.ranges.push_back(*range);
    }
    return out;
}

std::vector<std::uint32_t> expandIdRanges(const IdRanges &ranges) {
    std::vector<std::uint32_t> ids;
    ids.reserve(ranges.count);
    for (const IdRange &range : ranges.ranges) {
        for (std::uint64_t id = range.first; id <= range.last; ++id)
            ids.push_back(static_cast<std::uint32_t>(id));
    }
    return ids;
}

} // namespace stepmap
