#pragma once

// Which MPI a program is linked with, read from its ELF dynamic section
// (DT_NEEDED), so that srun can refuse a program stepmap cannot serve
// before anything is allocated or started. Debian's MPICH (libmpich)
// asks its launcher for PMI-1/PMI-2 only; under stepmap's PMIx server its
// ranks would each start as a singleton of size 1.

#include <optional>
#include <string>
#include <vector>

#include "base/expected.hpp"

namespace stepmap::plugin {

// The libraries a 64-bit ELF executable names as DT_NEEDED. An error for a
// file that is not one (a script, a 32-bit program): callers skip the check.
Expected<std::vector<std::string>> neededLibraries(const std::string &path);

// The PMI-only MPI library among `needed` ("libmpich.so.12"), nullopt when
// there is none or the program also links PMIx (an MPICH built with PMIx).
std::optional<std::string> pmiOnlyMpiLibrary(const std::vector<std::string> &needed);

// `program` as srun's remote side would find it: a name with a '/' as is
// (relative to `cwd`), else the first executable file of that name in
// `searchPath` (colon-separated). nullopt when there is none here.
std::optional<std::string> resolveProgram(const std::string &program, const std::string &searchPath,
                                          const std::string &cwd);

} // namespace stepmap::plugin
