#pragma once

// Reading a file the user named (host files, rankfiles, sequence files,
// --multi-prog files, PSI_HOSTFILE, stepmap-plan's --allocation), bounded.
// The mapper parses text and never reads; srun's side of the plugin and
// stepmap-plan both read through this one function, so a huge file costs at
// most the limit, a device is refused at once, a FIFO or pipe (`--hostfile
// <(cmd)`) is read only while its writer writes within a deadline (a FIFO
// without a writer hung srun in open()), and the message is the same
// everywhere.

#include <chrono>
#include <cstddef>
#include <string>

#include "base/expected.hpp"

namespace stepmap {

// The most stepmap reads of one such file. A host file line per node, or a
// sequence or rank file line per rank, stays far below it for a million
// ranks.
inline constexpr std::size_t kMaxUserFileBytes = std::size_t{16} << 20;

// How long a FIFO or pipe may take to be written to its end: a command
// behind `<(cmd)` (scontrol, a script) has long finished by then.
inline constexpr std::chrono::milliseconds kPipeDeadline{5000};

// The whole file at `path`, opened with the caller's rights, never waiting
// to open it: a regular file, or a FIFO or pipe such as `<(cmd)` read up to
// its writer's end within pipeDeadline (a device or a directory is
// refused). Reading stops after maxBytes + 1 bytes. The error is the reason
// alone, written to follow "cannot read --hostfile 'x': ": the system's
// ("No such file or directory"), "it is a character device, not a regular
// file; ...", "it is a FIFO and nothing wrote it to its end within 5 s;
// ..." or "it is larger than 16 MiB, the most stepmap reads of a file".
Expected<std::string> readBoundedFile(const std::string &path,
                                      std::size_t maxBytes = kMaxUserFileBytes,
                                      std::chrono::milliseconds pipeDeadline = kPipeDeadline);

// What is left to read from an open descriptor (a pipe from a child, say),
// with the same bound and errors. The caller keeps the descriptor.
Expected<std::string> readBoundedDescriptor(int fd, std::size_t maxBytes = kMaxUserFileBytes);

// "16 MiB", "64 KiB" or "100 bytes".
std::string formatByteSize(std::size_t bytes);

} // namespace stepmap
