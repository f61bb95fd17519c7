#pragma once

// The name every node of a collective gives it, so that two over the same
// nodes never meet each other's partners: what it is and who it joins
// ("connect 2,3"); a long list goes as its count and a SHA-256 prefix, the
// same on every node.

#include <pmix_common.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace stepmap::server {

std::string collectiveLabel(const char *what, const std::string &members, std::size_t count,
                            const char *noun);

// Who a collective across steps joins, the same text on every node: its
// kind and its sorted processes (also given back in sorted, a wildcard
// rank as hub::kAllRanks), hashed when long.
std::string acrossLabel(const std::string &what, const pmix_proc_t procs[], size_t nprocs,
                        std::vector<std::pair<std::string, std::uint32_t>> &sorted);

// A process's namespace as text (PMIx does not promise the terminator).
std::string nspaceText(const pmix_proc_t &proc);

} // namespace stepmap::server
