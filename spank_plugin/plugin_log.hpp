#pragma once

// Logging through Slurm's functions, with the "stepmap: " prefix.

#include <string>

namespace stepmap::plugin {

void logError(const std::string &text);
void logInfo(const std::string &text);
void logVerbose(const std::string &text);
void logDebug(const std::string &text);

} // namespace stepmap::plugin
