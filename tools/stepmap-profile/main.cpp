// stepmap-profile: the interconnect profile on the command line (issue 12).
//   probe [--root DIR] [--name NODE]   this node's profile as YAML
//   report FILE                        a profile file as tables
// Exit status: 0 done, 1 the input was wrong (message on stderr), 2 usage.

#include <unistd.h>

#include <algorithm>
#include <array>
#include <cstdio>
#include <iostream>
#include <optional>
#include <string>
#include <vector>

#include "base/quote.hpp"
#include "profile/profile_yaml.hpp"
#include "interface_numa.hpp"
#include "profile/sysfs_probe.hpp"
#include "profile_report.hpp"

namespace {

using namespace stepmap;

constexpr const char *kUsage = "usage: stepmap-profile probe [--root DIR] [--name NODE]\n"
                               "       stepmap-profile report FILE\n";

int usageError(const std::string &message) {
    std::cerr << "stepmap-profile: " << message << "\n" << kUsage;
    return 2;
}

int userError(const UserError &error) {
    std::cerr << "stepmap-profile: " << error.message << "\n";
    return 1;
}

// The short host name: Slurm names nodes by it.
std::string shortHostName() {
    std::array<char, 256> name{};
    if (gethostname(name.data(), name.size() - 1) != 0)
        return "";
    const std::string full = name.data();
    return full.substr(0, full.find('.'));
}

int probe(const std::vector<std::string> &args) {
    topology::ProbeOptions options;
    for (std::size_t i = 0; i < args.size(); i += 2) {
        if (i + 1 >= args.size() || (args[i] != "--root" && args[i] != "--name"))
            return usageError("probe: unexpected " + quoted(args[i]));
        (args[i] == "--root" ? options.root : options.nodeName) = args[i + 1];
    }
    if (options.nodeName.empty())
        options.nodeName = shortHostName();
    const auto node = topology::probeNodeWithHwloc(options);
    if (!node)
        return userError(node.error());
    std::cout << topology::writeProfileYaml({topology::kProfileFormatVersion, {*node}});
    return 0;
}

int report(const std::vector<std::string> &args) {
    if (args.size() != 1)
        return usageError("report takes one file");
    const auto profile = topology::readProfileFile(args[0]);
    if (!profile)
        return userError(profile.error());
    std::cout << tools::profileReport(*profile);
    return 0;
}

} // namespace

int main(int argc, char **argv) {
    try {
        const std::vector<std::string> args(argv + std::min(argc, 2), argv + argc);
        const std::string command = argc > 1 ? argv[1] : "";
        if (command == "probe")
            return probe(args);
        if (command == "report")
            return report(args);
        if (command == "--help" || command == "-h") {
            std::cout << kUsage;
            return 0;
        }
        return usageError(command.empty() ? "no command" : "unknown command " + quoted(command));
    } catch (const std::exception &error) {
        std::cerr << "stepmap-profile: " << error.what() << "\n";
        return 1;
    }
}
