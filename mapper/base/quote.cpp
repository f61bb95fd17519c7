#include "base/quote.hpp"

#include <algorithm>
#include <unordered_set>

namespace stepmap {

namespace {

// The length of the UTF-8 character starting text[pos] if it is valid and
// not a C1 control character (U+0080..U+009F), else 0.
std::size_t printableUtf8Length(std::string_view text, std::size_t pos) {
    const auto byte = [&](std::size_t i) { return static_cast<unsigned char>(text[i]); };
    const unsigned char lead = byte(pos);
    std::size_t length = 0;
    unsigned char low = 0x80; // range of the second byte
    unsigned char high = 0xbf;
    if (lead >= 0xc2 && lead <= 0xdf) {
        length = 2;
        if (lead == 0xc2)
            low = 0xa0; // U+0080..U+009F are C1 controls
    } else if (lead >= 0xe0 && lead <= 0xef) {
        length = 3;
        if (lead == 0xe0)
            low = 0xa0; // no overlong forms
        if (lead == 0xed)
            high = 0x9f; // no surrogates
    } else if (lead >= 0xf0 && lead <= 0xf4) {
        length = 4;
        if (lead == 0xf0)
            low = 0x90;
        if (lead == 0xf4)
            high = 0x8f; // nothing above U+10FFFF
    } else {
        return 0;
    }
    if (pos + length > text.size() || byte(pos + 1) < low || byte(pos + 1) > high)
        return 0;
    for (std::size_t i = 2; i < length; ++i) {
        if (byte(pos + i) < 0x80 || byte(pos + i) > 0xbf)
            return 0;
    }
    return length;
}

void appendHex(std::string &out, unsigned char c) {
    constexpr char kDigits[] = "0123456789abcdef";
    out += "\\x";
    out += kDigits[c >> 4];
    out += kDigits[c & 0xf];
}

} // namespace

std::string escaped(std::string_view text, std::size_t maxBytes) {
    std::string out;
    std::size_t pos = 0;
    while (pos < text.size()) {
        const auto c = static_cast<unsigned char>(text[pos]);
        const std::size_t length = c < 0x80 ? 1 : printableUtf8Length(text, pos);
        if (pos + std::max<std::size_t>(length, 1) > maxBytes) {
            out += "...";
            return out;
        }
        if (c == '\t') {
            out += "\\t";
        } else if (c == '\n') {
            out += "\\n";
        } else if (c == '\r') {
            out += "\\r";
        } else if (c < 0x20 || c == 0x7f || length == 0) {
            appendHex(out, c);
            // An invalid or C1 sequence is shown byte by byte.
        } else {
            out.append(text.substr(pos, length));
            pos += length;
            continue;
        }
        ++pos;
    }
    return out;
}

std::string quoted(std::string_view text, std::size_t maxBytes) {
    // Built by appending: GCC 12 at -O3 warns falsely (-Wrestrict) on
    // "'" + std::string(...).
    std::string out;
    out += '\'';
    out += escaped(text, maxBytes);
    out += '\'';
    return out;
}

std::string listedNames(const std::vector<std::string> &names, std::size_t shown) {
    std::string out;
    std::unordered_set<std::string_view> seen;
    std::size_t listed = 0;
    std::size_t more = 0;
    for (const std::string &name : names) {
        if (!seen.insert(name).second)
            continue;
        if (listed == shown) {
            ++more;
            continue;
        }
        if (listed > 0)
            out += ',';
        out += escaped(name);
        ++listed;
    }
    if (more > 0)
        out += " and " + std::to_string(more) + " more";
    return out;
}

} // namespace stepmap
