#pragma once

// The usage text of stepmap-profile and the one way a bad command line is
// reported: "stepmap-profile: <what>", the usage, exit status 2.

#include <iostream>
#include <string>

namespace stepmap::tools {

inline constexpr const char *kUsage =
    "usage: stepmap-profile probe [--root DIR] [--name NODE | --name-from-slurmd]\n"
    "       stepmap-profile report FILE\n"
    "       stepmap-profile make -o FILE [--nodes LIST]\n"
    "       stepmap-profile update FILE [--nodes LIST]\n"
    "       stepmap-profile check FILE [--nodes LIST]\n";

// Prints the message and the usage to standard error; returns 2.
inline int usageError(const std::string &message) {
    std::cerr << "stepmap-profile: " << message << "\n" << kUsage;
    return 2;
}

} // namespace stepmap::tools
