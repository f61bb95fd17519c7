#pragma once

// The name every node of a collective gives it, so that two over the same
// nodes never meet each other's partners: what it is and who it joins
// ("connect 2,3"); a long list goes as its count and a SHA-256 prefix, the
// same on every node.

#include <cstddef>
#include <string>

namespace stepmap::server {

std::string collectiveLabel(const char *what, const std::string &members, std::size_t count,
                            const char *noun);

} // namespace stepmap::server
