#pragma once

// Reading a file the user named (host files, rankfiles, sequence files,
// --multi-prog files, PSI_HOSTFILE, stepmap-plan's --allocation), bounded.
// The mapper parses text and never reads; srun's side of the plugin and
// stepmap-plan both read through this one function, so a huge file costs at
// most the limit, a FIFO or device is refused at once rather than waited on
// (`--hostfile FIFO` without a writer would hang srun in open()), and the
// message is the same everywhere.

#include <cstddef>
#include <string>

#include "base/expected.hpp"

namespace stepmap {

// The most stepmap reads of one such file. A host file line per node, or a
// sequence or rank file line per rank, stays far below it for a million
// ranks.
inline constexpr std::size_t kMaxUserFileBytes = std::size_t{16} << 20;

// The whole file at `path`, opened with the caller's rights, never waiting
// to open it; regular files only (a FIFO such as `<(cmd)`, a device or a
// directory is refused). Reading stops after maxBytes + 1 bytes. The error
// is the reason alone, written to follow "cannot read --hostfile 'x': ": the
// system's ("No such file or directory"), "it is a FIFO, not a regular
// file; stepmap reads only regular files (...)" or "it is larger than 16
// MiB, the most stepmap reads of a file".
Expected<std::string> readBoundedFile(const std::string &path,
                                      std::size_t maxBytes = kMaxUserFileBytes);

// What is left to read from an open descriptor (a pipe from a child, say),
// with the same bound and errors. The caller keeps the descriptor.
Expected<std::string> readBoundedDescriptor(int fd, std::size_t maxBytes = kMaxUserFileBytes);

// "16 MiB", "64 KiB" or "100 bytes".
std::string formatByteSize(std::size_t bytes);

} // namespace stepmap
