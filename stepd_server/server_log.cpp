#include "server_log.hpp"

#include <atomic>
#include <cstdio>

namespace stepmap::server {

namespace {
std::string &prefix() {
    static std::string p = "stepmap-stepd";
    return p;
}

// Set once at start, before the PMIx threads run; read from any thread.
std::atomic<LogLevel> level{LogLevel::Info};

void write(const std::string &text) {
    std::fprintf(stderr, "%s: %s\n", prefix().c_str(), text.c_str());
    std::fflush(stderr);
}
} // namespace

void setLogPrefix(std::string p) {
    prefix() = std::move(p);
}

void setLogLevel(LogLevel l) {
    level = l;
}

LogLevel logLevel() {
    return level;
}

void logError(const std::string &text) {
    write(text);
}

void logLine(const std::string &text) {
    if (level != LogLevel::Error)
        write(text);
}

void logDebug(const std::string &text) {
    if (level == LogLevel::Debug)
        write(text);
}

} // namespace stepmap::server
