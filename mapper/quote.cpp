#include "quote.hpp"

namespace stepmap::detail {

std::string quoted(std::string_view text) {
    // Built by appending: GCC 12 at -O3 warns falsely (-Wrestrict) on
    // "'" + std::string(...).
    std::string out;
    out.reserve(text.size() + 2);
    out += '\'';
    out += text;
    out += '\'';
    return out;
}

} // namespace stepmap::detail
