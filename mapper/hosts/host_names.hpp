#pragma once

// Internal to the mapper: the name part of a --host item or hostfile line,
// and the merging of repeated names shared by both parsers.

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "base/expected.hpp"
#include "hosts/host_list.hpp"

namespace stepmap::detail {

// The i of a relative name "+n<i>" (the i-th allocated node, 0-based).
std::optional<std::size_t> relativeNodeIndex(std::string_view name);

// A hostlist expression expanded, or one relative name "+n<i>" as written.
// The error says what is wrong, without saying where it came from.
// `namesSoFar`: the names the caller expanded before (a host file's earlier
// lines), counted against kMaxHostlistNames.
Expected<std::vector<std::string>> expandHostNames(std::string_view text,
                                                   std::size_t namesSoFar = 0);

// Collects entries, merging a repeated name into its first mention.
class HostSpecBuilder {
public:
    std::optional<UserError> add(HostEntry entry);
    HostSpec take(bool exclude);

private:
    HostSpec spec_;
    std::unordered_map<std::string, std::size_t> index_;
};

} // namespace stepmap::detail
