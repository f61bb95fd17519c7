// stepmap-profile: the interconnect profile on the command line (issue 12).
//   probe [--root DIR] [--name NODE | --name-from-slurmd]
//                                      this node's profile as YAML
//   report FILE                        a profile file as tables
//   make -o FILE [--nodes LIST]        profile the allocation's nodes
//   update FILE [--nodes LIST]         profile them again into FILE
//   check FILE [--nodes LIST]          compare FILE with them
// Exit status: 0 done, 1 the input was wrong (message on stderr), 2 usage,
// 3 check found stale entries.

#include <unistd.h>

#include <algorithm>
#include <array>
#include <cstdlib>
#include <iostream>
#include <string>
#include <vector>

#include "base/quote.hpp"
#include "interface_numa.hpp"
#include "profile/profile_yaml.hpp"
#include "profile_commands.hpp"
#include "profile_report.hpp"
#include "profile_usage.hpp"

namespace {

using namespace stepmap;
using tools::usageError;

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

// --name-from-slurmd: the name slurmd gives this node, which srun puts in
// every task's environment (several slurmd on one host each have their own,
// so the host name will not do). Errors then name the node, because under
// srun they reach the user mixed with other nodes' messages.
int probe(const std::vector<std::string> &args) {
    topology::ProbeOptions options;
    bool fromSlurmd = false;
    for (std::size_t i = 0; i < args.size();) {
        if (args[i] == "--name-from-slurmd" && !fromSlurmd) {
            fromSlurmd = true;
            ++i;
            continue;
        }
        if (i + 1 >= args.size() || (args[i] != "--root" && args[i] != "--name"))
            return usageError("probe: unexpected " + quoted(args[i]));
        (args[i] == "--root" ? options.root : options.nodeName) = args[i + 1];
        i += 2;
    }
    if (fromSlurmd && !options.nodeName.empty())
        return usageError("probe: --name and --name-from-slurmd exclude each other");
    if (fromSlurmd) {
        const char *name = std::getenv("SLURMD_NODENAME");
        if (name == nullptr || *name == '\0')
            return userError({"--name-from-slurmd: SLURMD_NODENAME is not set (run it through "
                              "srun)"});
        options.nodeName = name;
    } else if (options.nodeName.empty()) {
        options.nodeName = shortHostName();
    }
    const auto node = topology::probeNodeWithHwloc(options);
    if (!node && fromSlurmd)
        return userError({"node " + escaped(options.nodeName) + ": " + node.error().message});
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
        if (command == "make")
            return tools::makeProfile(args);
        if (command == "update")
            return tools::updateProfile(args);
        if (command == "check")
            return tools::checkProfile(args);
        if (command == "--help" || command == "-h") {
            std::cout << tools::kUsage;
            return 0;
        }
        return usageError(command.empty() ? "no command" : "unknown command " + quoted(command));
    } catch (const std::exception &error) {
        std::cerr << "stepmap-profile: " << error.what() << "\n";
        return 1;
    }
}
