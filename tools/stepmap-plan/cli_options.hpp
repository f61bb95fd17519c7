#pragma once

// stepmap-plan's command line, parsed into option values (still text where
// the mapper's parsers take over). No I/O.

#include <optional>
#include <string>
#include <vector>

#include "base/expected.hpp"
#include "plan/job_map.hpp"
#include "request/request_options.hpp"

namespace stepmap::cli {

// The directives of one application context ("-n 2 --map-by core"), as
// srun's options give them to the mapper's request builder.
using CliApp = AppOptions;

enum class OutputFormat { Map, Json, Svg };

struct CliOptions {
    bool help = false;
    // Allocation: --nodes/--cpus, --allocation, --job, or Slurm's environment.
    std::optional<std::string> nodes;
    std::optional<std::string> cpus;
    std::optional<std::string> allocationFile;
    std::optional<std::string> job;
    // Node hardware.
    std::optional<std::string> topologyFile;
    std::optional<std::string> synthetic;
    std::optional<std::string> slurmShape;
    // Give every node its hardware even when the request does not need it
    // (as mpirun, which always knows the topology); srun does not.
    bool alwaysHardware = false;
    // --site: the site policy file (stepmap.yaml(5)) srun plans under.
    std::optional<std::string> siteFile;
    // Placement, as srun takes it.
    std::optional<std::string> host;
    std::optional<std::string> hostfile;
    std::optional<std::string> nodesSort;
    std::optional<std::string> tpp;
    bool overbook = false;
    bool loopNodesFirst = false;
    // One entry per application context, in command-line order (split at
    // ':'); at least one.
    std::vector<CliApp> apps{CliApp{}};
    // Output.
    OutputFormat output = OutputFormat::Map;
    BoundStyle bindings = BoundStyle::Prrte;
};

// args: argv[1..]. Options take their value as the next argument or after
// '='. A lone ':' starts the next application context; after it only -n,
// --map-by, --rank-by and --bind-to are accepted. Errors name the argument
// and the fix.
Expected<CliOptions> parseCommandLine(const std::vector<std::string> &args);

// --help's text.
std::string usageText();

} // namespace stepmap::cli
