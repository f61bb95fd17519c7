#include "server_log.hpp"

#include <cstdio>

namespace stepmap::server {

namespace {
std::string &prefix() {
    static std::string p = "stepmap-stepd";
    return p;
}
} // namespace

void setLogPrefix(std::string p) {
    prefix() = std::move(p);
}

void logLine(const std::string &text) {
    std::fprintf(stderr, "%s: %s\n", prefix().c_str(), text.c_str());
    std::fflush(stderr);
}

} // namespace stepmap::server
