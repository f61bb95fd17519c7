#pragma once

// How messages show text a user wrote or a file held. Such text may hold
// anything: NUL (which would cut a C string), terminal escapes, bytes that
// are not UTF-8, megabytes. Every message shows it through these helpers:
// escaped, cut to a readable length, and lists cut to their first names.
// Used by the mapper and by its callers (the plugin, stepmap-plan).

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace stepmap {

// Bytes of a text a message shows; a longer text is cut, ending in "...".
inline constexpr std::size_t kShownTextBytes = 100;

// Bytes of a file name a message shows: whole up to Linux's PATH_MAX.
inline constexpr std::size_t kShownPathBytes = 4096;

// Names a message lists before "and N more".
inline constexpr std::size_t kShownNames = 5;

// `text` with tab, newline and carriage return written "\t", "\n", "\r",
// other control characters (C0, DEL, C1) and every byte that is not part of
// valid UTF-8 written "\xHH"; other UTF-8 characters kept. Only the first
// `maxBytes` bytes of `text` are shown (never half a character), then
// "...".
std::string escaped(std::string_view text, std::size_t maxBytes = kShownTextBytes);

// "'" + escaped(text, maxBytes) + "'". With a std::string argument where
// <iomanip> is visible, argument-dependent lookup prefers std::quoted:
// write stepmap::quoted there.
std::string quoted(std::string_view text, std::size_t maxBytes = kShownTextBytes);

// The distinct names in order, escaped, joined by ','; after `shown` of
// them, " and N more": "n1,n2,n3,n4,n5 and 12 more".
std::string listedNames(const std::vector<std::string> &names, std::size_t shown = kShownNames);

} // namespace stepmap
