#pragma once

// Shared by the fuzz targets: the input as text, and a check that aborts
// (so libFuzzer records the input) when a parser breaks its own contract.
// Not assert(): it must hold in every build type.

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>
#include <vector>

namespace stepmap::fuzz {

inline std::string_view asText(const std::uint8_t *data, std::size_t size) {
    return {reinterpret_cast<const char *>(data), size};
}

// Aborts with `what` when `ok` is false.
inline void check(bool ok, const char *what) {
    if (!ok) {
        std::fprintf(stderr, "fuzz check failed: %s\n", what);
        std::abort();
    }
}

// Splits at every `separator`; "a\0b" gives {"a", "b"}, "" gives {}.
inline std::vector<std::string> splitAt(std::string_view text, char separator) {
    std::vector<std::string> parts;
    if (text.empty())
        return parts;
    std::size_t start = 0;
    for (std::size_t i = 0; i <= text.size(); ++i) {
        if (i == text.size() || text[i] == separator) {
            parts.emplace_back(text.substr(start, i - start));
            start = i + 1;
        }
    }
    return parts;
}

} // namespace stepmap::fuzz
