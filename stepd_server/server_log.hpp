#pragma once

// Per-step log lines of a node server: "stepmap-stepd[<nspace> <node>]: ...".

#include <string>

namespace stepmap::server {

// What the site's log.level (stepmap.yaml) keeps: errors only, the
// step's story (the default), or also each collective and request.
enum class LogLevel { Error, Info, Debug };

void setLogPrefix(std::string prefix);
void setLogLevel(LogLevel level);
LogLevel logLevel();

void logError(const std::string &text); // always
void logLine(const std::string &text);  // at info and debug
void logDebug(const std::string &text); // at debug

} // namespace stepmap::server
