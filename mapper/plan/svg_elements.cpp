#include "plan/svg_elements.hpp"

#include "base/quote.hpp"

namespace stepmap::svg {

namespace {

// Tableau 10: ten hues told apart on screens and in print.
constexpr std::uint32_t kPalette[kAppColours] = {0x4e79a7, 0xf28e2b, 0xe15759, 0x76b7b2, 0x59a14f,
                                                 0xedc948, 0xb07aa1, 0xff9da7, 0x9c755f, 0xbab0ac};

std::string hexColour(std::uint32_t rgb) {
    static constexpr char kHex[] = "0123456789abcdef";
    std::string out = "#";
    for (int shift = 20; shift >= 0; shift -= 4)
        out += kHex[(rgb >> shift) & 0xf];
    return out;
}

} // namespace

std::string xmlText(std::string_view text, std::size_t maxBytes) {
    std::string out;
    for (char c : escaped(text, maxBytes)) {
        switch (c) {
        case '&':
            out += "&amp;";
            break;
        case '<':
            out += "&lt;";
            break;
        case '>':
            out += "&gt;";
            break;
        case '"':
            out += "&quot;";
            break;
        case '\'':
            out += "&apos;";
            break;
        default:
            out += c;
        }
    }
    return out;
}

std::string rect(const Box &box, std::string_view attributes) {
    std::string out = "<rect x=\"" + std::to_string(box.x) + "\" y=\"" + std::to_string(box.y) +
                      "\" width=\"" + std::to_string(box.width) + "\" height=\"" +
                      std::to_string(box.height) + "\" ";
    out += attributes;
    out += "/>";
    return out;
}

std::string text(int x, int y, std::string_view attributes, std::string_view content) {
    std::string out = "<text x=\"" + std::to_string(x) + "\" y=\"" + std::to_string(y) + "\" ";
    out += attributes;
    out += '>';
    out += content;
    out += "</text>";
    return out;
}

int textWidth(std::size_t characters, int fontSize) {
    return static_cast<int>((characters * static_cast<std::size_t>(fontSize) * 3 + 4) / 5);
}

std::size_t characterCount(std::string_view text) {
    std::size_t count = 0;
    for (char c : text)
        count += (static_cast<unsigned char>(c) & 0xc0) != 0x80 ? 1 : 0;
    return count;
}

std::string counted(std::size_t count, std::string_view noun) {
    std::string out = std::to_string(count) + " ";
    out += noun;
    if (count != 1)
        out += 's';
    return out;
}

std::string appColour(std::uint32_t app) {
    return hexColour(kPalette[app % kAppColours]);
}

std::string appTint(std::uint32_t app) {
    // Three parts white to one part colour, channel by channel.
    const std::uint32_t rgb = kPalette[app % kAppColours];
    std::uint32_t tint = 0;
    for (int shift = 16; shift >= 0; shift -= 8) {
        const std::uint32_t channel = (rgb >> shift) & 0xff;
        tint |= ((channel + 3 * 255) / 4) << shift;
    }
    return hexColour(tint);
}

} // namespace stepmap::svg
