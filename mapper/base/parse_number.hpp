#pragma once

// Internal to the mapper: strict decimal parsing for user input and for the
// encoded plan. Only ASCII digits are accepted: no sign, no blanks, no empty
// string; a value above the limit is refused rather than wrapped.

#include <cstdint>
#include <optional>
#include <string_view>

namespace stepmap::detail {

// The value of `text` if it is all digits and at most `limit`.
std::optional<std::uint64_t> parseUnsigned(std::string_view text, std::uint64_t limit);

// The value of `text` if it is all digits, at least 1 and fits an int.
std::optional<int> parsePositiveInt(std::string_view text);

// The value of `text` if it is all digits, at least 1 and at most `limit`.
std::optional<int> parseCount(std::string_view text, int limit);

// True when `text` is all digits and its value is above `limit`, however
// many digits it has: a count refused for its size, not for its form (the
// message then states the limit instead of asking for a number).
bool isNumberAbove(std::string_view text, std::uint64_t limit);

} // namespace stepmap::detail
