#include "cli_options.hpp"

#include <string_view>

#include "base/quote.hpp"

namespace stepmap::cli {

namespace {

enum class Kind { Flag, Value, AppValue };

struct OptionSpec {
    std::string_view name; // as written, "--map-by"
    Kind kind;
    std::optional<std::string> CliOptions::*global = nullptr;
    std::optional<std::string> CliApp::*app = nullptr;
    bool CliOptions::*flag = nullptr;
};

const OptionSpec kOptions[] = {
    {"--help", Kind::Flag, nullptr, nullptr, &CliOptions::help},
    {"-h", Kind::Flag, nullptr, nullptr, &CliOptions::help},
    {"--nodes", Kind::Value, &CliOptions::nodes},
    {"--cpus", Kind::Value, &CliOptions::cpus},
    {"--allocation", Kind::Value, &CliOptions::allocationFile},
    {"--job", Kind::Value, &CliOptions::job},
    {"--topology", Kind::Value, &CliOptions::topologyFile},
    {"--synthetic", Kind::Value, &CliOptions::synthetic},
    {"--slurm-shape", Kind::Value, &CliOptions::slurmShape},
    {"--always-hardware", Kind::Flag, nullptr, nullptr, &CliOptions::alwaysHardware},
    {"--site", Kind::Value, &CliOptions::siteFile},
    {"--host", Kind::Value, &CliOptions::host},
    {"--hostfile", Kind::Value, &CliOptions::hostfile},
    {"--nodes-sort", Kind::Value, &CliOptions::nodesSort},
    {"--tpp", Kind::Value, &CliOptions::tpp},
    {"--overbook", Kind::Flag, nullptr, nullptr, &CliOptions::overbook},
    {"--loop-nodes-first", Kind::Flag, nullptr, nullptr, &CliOptions::loopNodesFirst},
    {"--display-map", Kind::Flag}, // the map is what stepmap-plan shows anyway
    {"-n", Kind::AppValue, nullptr, &CliApp::np},
    {"--np", Kind::AppValue, nullptr, &CliApp::np},
    {"-np", Kind::AppValue, nullptr, &CliApp::np},
    {"--ntasks", Kind::AppValue, nullptr, &CliApp::np},
    {"--map-by", Kind::AppValue, nullptr, &CliApp::mapBy},
    {"--rank-by", Kind::AppValue, nullptr, &CliApp::rankBy},
    {"--bind-to", Kind::AppValue, nullptr, &CliApp::bindTo},
    {"--output", Kind::Value},
    {"--bindings", Kind::Value},
};

const OptionSpec *findOption(std::string_view name) {
    for (const OptionSpec &spec : kOptions)
        if (spec.name == name)
            return &spec;
    return nullptr;
}

Expected<void> setOutput(CliOptions &options, const std::string &value) {
    if (value == "map")
        options.output = OutputFormat::Map;
    else if (value == "json")
        options.output = OutputFormat::Json;
    else if (value == "svg")
        options.output = OutputFormat::Svg;
    else
        return UserError{"--output " + quoted(value) +
                         ": unknown format (accepted: map, json, svg)"};
    return {};
}

Expected<void> setBindings(CliOptions &options, const std::string &value) {
    if (value == "prrte")
        options.bindings = BoundStyle::Prrte;
    else if (value == "logical")
        options.bindings = BoundStyle::LogicalList;
    else if (value == "mask")
        options.bindings = BoundStyle::Mask;
    else
        return UserError{"--bindings " + quoted(value) +
                         ": unknown style (accepted: prrte, logical, mask)"};
    return {};
}

// With ':' every application context must say something: there is no
// program to mark one, so "-n 1 :" or ": :" is a slip, not a request.
std::optional<UserError> checkAppsGiven(const std::vector<CliApp> &apps) {
    if (apps.size() < 2)
        return std::nullopt;
    for (std::size_t i = 0; i < apps.size(); ++i) {
        const CliApp &app = apps[i];
        if (app.np || app.mapBy || app.rankBy || app.bindTo)
            continue;
        const std::string where = i == 0 ? "nothing before the first ':'"
                                         : "nothing after ':' number " + std::to_string(i);
        return UserError{"application context " + std::to_string(i) + " is empty (" + where +
                         "): give each context at least -n N (e.g. -n 2 : -n 3), or remove the "
                         "extra ':'"};
    }
    return std::nullopt;
}

} // namespace

Expected<CliOptions> parseCommandLine(const std::vector<std::string> &args) {
    CliOptions options;
    for (std::size_t i = 0; i < args.size(); ++i) {
        const std::string &arg = args[i];
        if (arg == ":") {
            options.apps.emplace_back();
            continue;
        }
        std::string name = arg;
        std::optional<std::string> inlineValue;
        if (arg.size() > 1 && arg[0] == '-') {
            const std::size_t eq = arg.find('=');
            if (eq != std::string::npos) {
                name = arg.substr(0, eq);
                inlineValue = arg.substr(eq + 1);
            } else if (arg.size() > 2 && arg[1] != '-' && arg.rfind("-np", 0) != 0) {
                // "-n4": a short option with its value attached.
                name = arg.substr(0, 2);
                inlineValue = arg.substr(2);
            }
        }
        const OptionSpec *spec = findOption(name);
        if (!spec)
            return UserError{"unknown argument " + quoted(arg) +
                             " (stepmap-plan runs nothing: give options only; see --help)"};
        if (spec->kind == Kind::Flag) {
            if (inlineValue)
                return UserError{std::string(spec->name) + " takes no value (got " + quoted(arg) +
                                 ")"};
            if (spec->flag)
                options.*(spec->flag) = true;
            continue;
        }
        if (spec->global && options.apps.size() > 1)
            return UserError{std::string(spec->name) +
                             " after ':' - it applies to the whole job; write it before the "
                             "first ':' (after ':' only -n, --map-by, --rank-by and --bind-to)"};
        std::string value;
        if (inlineValue) {
            value = *inlineValue;
        } else {
            if (i + 1 >= args.size())
                return UserError{std::string(spec->name) + " needs a value"};
            value = args[++i];
        }
        if (spec->kind == Kind::AppValue) {
            auto &field = options.apps.back().*(spec->app);
            if (field)
                return UserError{std::string(spec->name) +
                                 " given twice for one application context; give it once"};
            field = value;
        } else if (spec->global) {
            auto &field = options.*(spec->global);
            if (field)
                return UserError{std::string(spec->name) + " given twice; give it once"};
            field = value;
        } else if (spec->name == "--output") {
            if (auto set = setOutput(options, value); !set)
                return set.error();
        } else {
            if (auto set = setBindings(options, value); !set)
                return set.error();
        }
    }
    if (auto error = checkAppsGiven(options.apps))
        return *error;
    return options;
}

std::string usageText() {
    return R"(usage: stepmap-plan [OPTIONS] [-n N] [--map-by ...] [: -n N [--map-by ...] ...]

Computes stepmap's launch plan (what srun with stepmap's options would start)
and prints it; needs no Slurm and launches nothing.

Allocation (one of; default: SLURM_JOB_NODELIST + SLURM_JOB_CPUS_PER_NODE):
  --nodes HOSTLIST --cpus SPEC   Slurm syntax: --nodes 'n[1-4]' --cpus '2(x4)'
  --allocation FILE              lines "name slots=N" (mpirun without a
                                 resource manager; no slots=: the node's cores
                                 with hardware given, else 1)
  --job ID                       a running job, via `scontrol show job -d ID`
                                 (its CPU ids restrict the node hardware)
Node hardware (optional; without it nodes are plain slot counts):
  --topology FILE.xml            every node is this hwloc XML topology
  --synthetic DESC               hwloc synthetic, e.g. "package:2 core:8 pu:2"
  --slurm-shape S:C:T            sockets:cores-per-socket:threads-per-core
  As srun does, the hardware is used only when the request needs it (an
  object --map-by, PE=n, or a --bind-to other than none).
  --always-hardware              use it always, as mpirun does (then the
                                 defaults map by core and bind)
Site policy:
  --site FILE       plan as srun does under this site policy file
                    (stepmap.yaml(5)): its defaults where the command line
                    gives none, its allow and limits checked on the plan
Placement (as srun with stepmap):
  -n, --np, -np, --ntasks N   processes
  --host LIST       --hostfile FILE
  --map-by POLICY[:MODIFIERS]  (seq/rankfile read :FILE=path, else --hostfile)
  --rank-by slot|node|fill|span         --bind-to OBJECT[:QUALIFIERS]
  --overbook   --loop-nodes-first   --nodes-sort NONE   --tpp N
  MPMD: -n 2 --map-by core : -n 3 --map-by node
    -n, --map-by, --rank-by and --bind-to belong to their application
    context; one given only before the first ':' applies to the whole job.
Output:
  --output map|json|svg   mpirun's job map (default), the plan as JSON, or
                          as an SVG picture (nodes, cores, ranks on them)
  --bindings prrte|logical|mask   how bound CPUs are written in the map
  --display-map           accepted (the map is always shown)
  -h, --help              this text
Exit status: 0 plan shown; 1 planning refused the request; 2 bad input.
)";
}

} // namespace stepmap::cli
