#pragma once

// Per-step log lines of a node server: "stepmap-stepd[<nspace> <node>]: ...".

#include <string>

namespace stepmap::server {

void setLogPrefix(std::string prefix);
void logLine(const std::string &text);

} // namespace stepmap::server
