#pragma once

// The private directory of one node server: made with an unpredictable name
// (nobody can take it in advance), checked before use, and removed without
// ever following a link, so that a process racing the removal cannot point
// it anywhere else.

#include "base/expected.hpp"
#include "os/unique_fd.hpp"

#include <sys/types.h>

#include <string>

namespace stepmap::os {

// Makes <parent>/<prefix>XXXXXX (mkdtemp: mode 0700, owned by the caller's
// effective ids) and returns its path. prefix must not contain '/'.
Expected<std::string> makePrivateDirectory(const std::string &parent, const std::string &prefix);

// Opens path as a directory that is really a directory (not a link), owned
// by owner and accessible to nobody else (no group or other bits).
Expected<UniqueFd> openPrivateDirectory(const std::string &path, uid_t owner);

// Removes path and everything below it with the caller's rights, walking
// by directory descriptors (openat with O_NOFOLLOW, unlinkat): a link is
// removed, never followed, and other file systems mounted below are left
// alone. Returns false if anything could not be removed. Allocates nothing:
// a forked child of a multithreaded process may call it.
bool removeTree(const std::string &path);

} // namespace stepmap::os
