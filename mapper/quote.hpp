#pragma once

// Internal to the mapper: how messages quote what the user wrote.

#include <string>
#include <string_view>

namespace stepmap::detail {

// "'text'"
std::string quoted(std::string_view text);

} // namespace stepmap::detail
