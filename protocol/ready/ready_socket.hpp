#pragma once

// Both ends of the ready socket (a socketpair the plugin makes in
// slurmstepd): the server writes its report (ready_report.hpp) whole, the
// plugin reads it, bounded in size and time. Afterwards the same socket
// carries task notices (task_notice.hpp) the other way.

#include "base/expected.hpp"

#include <cstddef>
#include <string>
#include <string_view>

namespace stepmap::ready {

// The server's side: writes all of text (retrying short writes).
bool writeReport(int fd, std::string_view text);

// True when text is a whole report: its END line, or an ERROR line.
bool reportComplete(std::string_view text);

// The plugin's side: reads until the report is complete, the server closes
// its end, more than cap bytes arrived, or timeoutSec passed (errors). An
// empty text means the server closed without a word.
Expected<std::string> readReport(int fd, int timeoutSec, std::size_t cap);

} // namespace stepmap::ready
