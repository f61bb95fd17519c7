#pragma once

// The few SVG pieces the plan picture is made of: text made safe for XML,
// rectangles and text elements at integer coordinates (so the output is the
// same byte for byte on every machine), and the applications' colours.

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace stepmap::svg {

// `text` as an XML text node or attribute value: first escaped() (control
// characters, which XML 1.0 forbids, and bytes that are not UTF-8 written
// "\xHH"; cut after `maxBytes` with "..."), then & < > " ' as entities.
// Names come from users and Slurm: everything shown goes through here.
std::string xmlText(std::string_view text, std::size_t maxBytes = 100);

struct Box {
    int x = 0;
    int y = 0;
    int width = 0;
    int height = 0;
};

// <rect x=".." y=".." width=".." height=".." ATTRIBUTES/> (attributes
// written by the caller, values already safe).
std::string rect(const Box &box, std::string_view attributes);

// <text x=".." y=".." ATTRIBUTES>CONTENT</text>; `content` already safe.
std::string text(int x, int y, std::string_view attributes, std::string_view content);

// Width of `characters` characters of monospace text at `fontSize` (an
// estimate: SVG has no text metrics, monospace glyphs are about 0.6 em).
int textWidth(std::size_t characters, int fontSize);

// Characters of UTF-8 text (bytes that do not continue a character).
std::size_t characterCount(std::string_view text);

// "1 rank", "2 ranks": the count and the noun, plural unless 1.
std::string counted(std::size_t count, std::string_view noun);

// Distinct colours for application contexts; apps past the palette reuse it.
inline constexpr std::uint32_t kAppColours = 10;
// "#rrggbb" of app `app`'s colour, and a pale tint of it (unbound ranks).
std::string appColour(std::uint32_t app);
std::string appTint(std::uint32_t app);

} // namespace stepmap::svg
