#pragma once

// A node server's log in the site's log directory (log_dir=, log.dir),
// made by slurmstepd's side of the plugin with the job user's file ids. The directory may be shared
// by every user (1777): a name another user could predict, they could make first, and the server
// would run without a log. So the name ends in kernel randomness, and the file is made new
// (O_EXCL), never through a link.

#include "base/expected.hpp"
#include "os/unique_fd.hpp"

#include <array>
#include <cstdint>
#include <string>
#include <string_view>

namespace stepmap::plugin {

inline constexpr std::size_t kLogNameRandomBytes = 8;
using LogNameRandom = std::array<std::uint8_t, kLogNameRandomBytes>;

// "stepmap-stepd.<job>.<step>.<node>.<16 hex digits>.log" from stepTag
// ("<job>.<step>"), a node name fit for a file name, and the random bytes.
// Sites and tests find a step's logs by everything before the hex digits.
std::string serverLogName(std::string_view stepTag, std::string_view nodeName,
                          const LogNameRandom &random);

// The random bytes as 2 hex digits each.
std::string hexOf(const LogNameRandom &random);

// dir/serverLogName(...) with fresh randomness from getrandom(2); the error
// says the kernel gave none. The launch creates it as the job's user.
Expected<std::string> serverLogPath(const std::string &dir, std::string_view stepTag,
                                    std::string_view nodeName);

// Creates dir/serverLogName(...) with fresh randomness from getrandom(2):
// mode 0600, opened for appending. The error names the path (or says the
// kernel gave no randomness) and the system's reason.
Expected<os::UniqueFd> createServerLog(const std::string &dir, std::string_view stepTag,
                                       std::string_view nodeName);

} // namespace stepmap::plugin
