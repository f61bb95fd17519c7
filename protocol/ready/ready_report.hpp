#pragma once

// What a node server tells the plugin in slurmstepd when it is ready (or
// why it is not), on a socket only the two of them hold:
//
//   READY                 the server serves the step's clients on this node
//   RANK <rank>           then the environment that rank's task must get:
//   ENV <KEY>=<VALUE>     PMIx's variables, one per line
//   ...
//   END
//
// or a single line "ERROR <message>". The server runs as the job's user, so
// the plugin (root) reads this as hostile input: bounded, every line
// checked, nothing in it names a process, a path or a size to trust.

#include "base/expected.hpp"

#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace stepmap::ready {

using ClientEnvironment = std::vector<std::pair<std::string, std::string>>;

std::string encodeReadyReport(const std::map<std::uint32_t, std::vector<std::string>> &envs);
std::string encodeReadyFailure(std::string_view message);

// The most bytes a report for `ranks` local ranks may have.
std::size_t maxReadyReportBytes(std::size_t ranks);

// Strict decoder: every rank of localRanks exactly once and no other, only
// PMIX_* variables and Open MPI's modex settings (pinned TCP port, async
// modex) with printable values, bounded sizes. An ERROR report
// becomes an error carrying the server's message, escaped and shortened.
Expected<std::map<std::uint32_t, ClientEnvironment>>
decodeReadyReport(std::string_view text, const std::vector<std::uint32_t> &localRanks);

// One rank's environment from a whole report: its block alone is found and
// decoded, as strictly, so each task of a node reads only its own (a task
// decoding every rank's would make the node's work quadratic in its ranks).
Expected<ClientEnvironment> decodeRankEnvironment(std::string_view text, std::uint32_t rank);

} // namespace stepmap::ready
