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
#include "srun/srun_command_line.hpp"

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

// A program srun would start that is linked with a PMI-only MPI (Debian's
// MPICH): under stepmap's PMIx server each of its ranks would start alone,
// as a singleton. Found here, on the submit host, as the nodes would find it
// (srun's PATH as `searchPath`, and -D); a program not found here, not an
// ELF file (a script) or under --multi-prog is let be. The error names the
// library and `srun --mpi=pmi2`.
std::optional<UserError> pmiOnlyProgram(const SrunCommandLine &cmd, const std::string &searchPath);

} // namespace stepmap::plugin
