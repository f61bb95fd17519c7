#include "hosts/host_names.hpp"

#include <cstdint>
#include <limits>

#include "base/parse_number.hpp"
#include "base/quote.hpp"
#include "hosts/hostlist.hpp"

namespace stepmap::detail {

std::optional<std::size_t> relativeNodeIndex(std::string_view name) {
    if (name.substr(0, 2) != "+n")
        return std::nullopt;
    const auto index = parseUnsigned(name.substr(2), std::numeric_limits<std::uint32_t>::max());
    if (!index)
        return std::nullopt;
    return static_cast<std::size_t>(*index);
}

Expected<std::vector<std::string>> expandHostNames(std::string_view text, std::size_t namesSoFar) {
    if (text.empty() || text.front() != '+') {
        HostlistLimits limits;
        limits.namesSoFar = namesSoFar;
        return expandHostlist(text, limits);
    }
    if (namesSoFar >= kMaxHostlistNames)
        return UserError{"more than " + std::to_string(kMaxHostlistNames) + " host names"};
    if (relativeNodeIndex(text))
        return std::vector<std::string>{std::string(text)};
    if (text.substr(0, 2) == "+e")
        return UserError{"relative host " + quoted(text) +
                         ": empty-node requests (+e) are not supported yet; name the nodes "
                         "or use +n<i> for the i-th allocated node"};
    return UserError{"invalid relative host " + quoted(text) +
                     " (expected +n<i>, the i-th allocated node counting from 0)"};
}

std::optional<UserError> HostSpecBuilder::add(HostEntry entry) {
    const auto [it, inserted] = index_.try_emplace(entry.name, spec_.entries.size());
    if (inserted) {
        spec_.entries.push_back(std::move(entry));
        return std::nullopt;
    }
    HostEntry &earlier = spec_.entries[it->second];
    auto merged = mergeHostEntries(earlier, entry);
    if (!merged)
        return merged.error();
    earlier = std::move(merged.value());
    return std::nullopt;
}

HostSpec HostSpecBuilder::take(bool exclude) {
    spec_.exclude = exclude;
    index_.clear();
    return std::move(spec_);
}

} // namespace stepmap::detail
