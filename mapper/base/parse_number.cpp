#include "base/parse_number.hpp"

#include <limits>

namespace stepmap::detail {

std::optional<std::uint64_t> parseUnsigned(std::string_view text, std::uint64_t limit) {
    if (text.empty())
        return std::nullopt;
    std::uint64_t value = 0;
    for (char c : text) {
        if (c < '0' || c > '9')
            return std::nullopt;
        const auto digit = static_cast<std::uint64_t>(c - '0');
        if (digit > limit || value > (limit - digit) / 10)
            return std::nullopt;
        value = value * 10 + digit;
    }
    return value;
}

std::optional<int> parsePositiveInt(std::string_view text) {
    return parseCount(text, std::numeric_limits<int>::max());
}

std::optional<int> parseCount(std::string_view text, int limit) {
    if (limit < 1)
        return std::nullopt;
    const auto value = parseUnsigned(text, static_cast<std::uint64_t>(limit));
    if (!value || *value == 0)
        return std::nullopt;
    return static_cast<int>(*value);
}

bool isNumberAbove(std::string_view text, std::uint64_t limit) {
    if (text.empty() || text.find_first_not_of("0123456789") != std::string_view::npos)
        return false;
    const std::size_t first = text.find_first_not_of('0');
    if (first == std::string_view::npos)
        return false; // zero
    return !parseUnsigned(text.substr(first), limit).has_value();
}

} // namespace stepmap::detail
