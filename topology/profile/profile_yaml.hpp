#pragma once

// The profile's file form (YAML, documented in README.md).
//
// Writing is deterministic: the same profile gives the same bytes, nodes in
// the order of their names, every other list in the order held. Loading is
// strict: an unknown or repeated key, a value of the wrong type or form, a
// repeated node, another format version or a digest that does not match
// the node's static fields is an error "FILE:LINE: KEY: what is wrong",
// KEY being the path to the value ("nodes[0].interfaces[1].mtu").

#include <optional>
#include <string>
#include <string_view>

#include "base/expected.hpp"
#include "profile/interconnect_profile.hpp"

namespace stepmap::topology {

std::string writeProfileYaml(const Profile &profile);

// Loads `text`, naming `fileName` in errors.
Expected<Profile> loadProfileYaml(std::string_view text, std::string_view fileName);

// Reads and loads the file at `path` (at most kMaxProfileBytes).
Expected<Profile> readProfileFile(const std::string &path);

// Writes `profile` to `path` whole or not at all: a new file in the same
// directory, flushed, then renamed over `path` (profile_file_write.cpp).
// A new file is readable by all less the umask; an old one keeps its mode.
std::optional<UserError> writeProfileFile(const std::string &path, const Profile &profile);

// A profile of 100,000 nodes with a dozen interfaces each fits.
inline constexpr std::size_t kMaxProfileBytes = std::size_t{256} << 20;

} // namespace stepmap::topology
