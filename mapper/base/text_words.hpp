#pragma once

// Blanks, trimming and word splitting for the mapper's text parsers
// (hostfile-like files and option values). Views into the caller's text.

#include <string_view>
#include <vector>

namespace stepmap::detail {

inline bool isBlank(char c) {
    return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v';
}

// text without leading and trailing blanks.
std::string_view trimmed(std::string_view text);

// The parts of text between separators, empty ones included: "a::b" gives
// "a", "", "b"; an empty text one empty part.
std::vector<std::string_view> splitAt(std::string_view text, char separator);

// The words of text, split at runs of blanks (no empty words).
std::vector<std::string_view> words(std::string_view text);

} // namespace stepmap::detail
