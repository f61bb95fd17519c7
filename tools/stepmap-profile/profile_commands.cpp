#include "profile_commands.hpp"

#include <iostream>
#include <optional>

#include "base/quote.hpp"
#include "profile/profile_merge.hpp"
#include "profile/profile_yaml.hpp"
#include "profile_check.hpp"
#include "profile_usage.hpp"
#include "srun_probe.hpp"

namespace stepmap::tools {
namespace {

using topology::NodeProfile;
using topology::Profile;

struct CommandLine {
    std::optional<std::string> file;  // -o FILE for make, FILE for the others
    std::optional<std::string> nodes; // --nodes LIST
};

std::optional<CommandLine> parse(const std::string &command, const std::vector<std::string> &args,
                                 int &status) {
    CommandLine line;
    const bool wantsOutput = command == "make";
    for (std::size_t i = 0; i < args.size(); ++i) {
        const bool takesValue = args[i] == "--nodes" || (wantsOutput && args[i] == "-o");
        if (takesValue && i + 1 < args.size() && !(args[i] == "-o" ? line.file : line.nodes)) {
            (args[i] == "-o" ? line.file : line.nodes) = args[i + 1];
            ++i;
        } else if (!wantsOutput && !line.file && !args[i].starts_with("-")) {
            line.file = args[i];
        } else {
            status = usageError(command + ": unexpected " + quoted(args[i]));
            return std::nullopt;
        }
    }
    if (!line.file) {
        status = usageError(command + (wantsOutput ? " needs -o FILE" : " needs a profile file"));
        return std::nullopt;
    }
    return line;
}

int commandError(const std::string &command, const UserError &error) {
    std::cerr << "stepmap-profile " << command << ": " << error.message << "\n";
    return 1;
}

// The allocation's nodes (or --nodes), probed; nothing after an error,
// which has been printed.
std::optional<std::vector<NodeProfile>> probeAllocation(const std::string &command,
                                                        const CommandLine &line) {
    const auto targets = probeTargets(line.nodes);
    if (!targets) {
        commandError(command, targets.error());
        return std::nullopt;
    }
    auto nodes = probeThroughSrun(*targets);
    if (!nodes) {
        commandError(command, nodes.error());
        return std::nullopt;
    }
    return std::move(nodes.value());
}

int writeOut(const std::string &command, const std::string &file, const Profile &profile,
             const std::string &what) {
    if (auto error = topology::writeProfileFile(file, profile))
        return commandError(command, *error);
    std::cout << "profile " << escaped(file, kShownPathBytes) << ": " << what << "\n";
    return 0;
}

std::string nodeCount(std::size_t count) {
    return std::to_string(count) + (count == 1 ? " node" : " nodes");
}

// What update and check start from: the file loaded strictly (before any
// srun: a bad file costs no probe), then the nodes probed.
struct FileAndProbes {
    CommandLine line;
    Profile recorded;
    std::vector<NodeProfile> live;
};

// Nothing, with `status` set, after an error (printed).
std::optional<FileAndProbes> readAndProbe(const std::string &command,
                                          const std::vector<std::string> &args, int &status) {
    const auto line = parse(command, args, status);
    if (!line)
        return std::nullopt;
    auto recorded = topology::readProfileFile(*line->file);
    if (!recorded) {
        status = commandError(command, recorded.error());
        return std::nullopt;
    }
    auto live = probeAllocation(command, *line);
    if (!live) {
        status = 1;
        return std::nullopt;
    }
    return FileAndProbes{*line, std::move(recorded.value()), std::move(*live)};
}

} // namespace

int makeProfile(const std::vector<std::string> &args) {
    int status = 0;
    const auto line = parse("make", args, status);
    if (!line)
        return status;
    const auto nodes = probeAllocation("make", *line);
    if (!nodes)
        return 1;
    const Profile profile = topology::mergedProfile(Profile{}, *nodes);
    return writeOut("make", *line->file, profile, nodeCount(nodes->size()) + " profiled");
}

int updateProfile(const std::vector<std::string> &args) {
    int status = 0;
    const auto start = readAndProbe("update", args, status);
    if (!start)
        return status;
    const Profile merged = topology::mergedProfile(start->recorded, start->live);
    return writeOut("update", *start->line.file, merged,
                    nodeCount(start->live.size()) + " profiled again, " +
                        nodeCount(merged.nodes.size() - start->live.size()) + " left as they were");
}

int checkProfile(const std::vector<std::string> &args) {
    int status = 0;
    const auto start = readAndProbe("check", args, status);
    if (!start)
        return status;
    const CheckReport report =
        checkReport(escaped(*start->line.file, kShownPathBytes), start->recorded, start->live);
    std::cout << report.text;
    return report.stale ? kExitStale : 0;
}

} // namespace stepmap::tools
