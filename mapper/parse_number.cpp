#include "parse_number.hpp"

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
    const auto value = parseUnsigned(text, std::numeric_limits<int>::max());
    if (!value || *value == 0)
        return std::nullopt;
    return static_cast<int>(*value);
}

} // namespace stepmap::detail
