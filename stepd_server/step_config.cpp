#include "step_config.hpp"

#include "profile/profile_yaml.hpp"
#include "protocol/wire/secret.hpp"

#include <unistd.h>

#include <charconv>
#include <cstdio>
#include <cstdlib>
#include <map>

namespace stepmap::server {

namespace {

bool toInt(std::string_view s, long long lo, long long hi, long long &out) {
    auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), out);
    return ec == std::errc() && p == s.data() + s.size() && out >= lo && out <= hi;
}

using Arguments = std::map<std::string, std::string>;

constexpr int kMaxProfilePieces = 16;

// The arguments by name; an unknown or valueless one, or a missing required
// one, is refused.
Expected<Arguments> readArguments(int argc, char **argv) {
    static const char *known[] = {"--step",
                                  "--node-index",
                                  "--tmpdir",
                                  "--hub",
                                  "--ready-fd",
                                  "--watch-pid",
                                  "--launched-at",
                                  "--dmodex-timeout",
                                  "--fence-timeout",
                                  "--step-cores",
                                  "--topology-xml",
                                  "--topology-cache",
                                  "--client-auth",
                                  "--client-mount-namespace",
                                  "--modex",
                                  "--modex-ports",
                                  "--tcp-if-include",
                                  "--tcp-if-exclude",
                                  "--site-modex-ports",
                                  "--resv-ports",
                                  "--log-level",
                                  "--job-hub",
                                  "--job-step",
                                  "--spawn-parent",
                                  "--with-ft",
                                  "--relay"};
    Arguments args;
    for (int i = 1; i < argc; ++i) {
        std::string key = argv[i];
        bool isKnown = false;
        for (auto *k : known)
            isKnown = isKnown || key == k;
        if (!isKnown)
            return UserError{"unknown argument '" + key + "'"};
        if (i + 1 >= argc)
            return UserError{"argument " + key + " needs a value"};
        args[key] = argv[++i];
    }
    for (auto *required :
         {"--step", "--node-index", "--tmpdir", "--hub", "--ready-fd", "--step-cores"})
        if (!args.count(required))
            return UserError{std::string("missing argument ") + required};
    return args;
}

// --watch-pid, --launched-at, --dmodex-timeout, --client-auth, --client-mount-namespace.
Expected<void> readOptionalArguments(Arguments &args, StepConfig &c) {
    long long v = 0;
    if (args.count("--watch-pid")) {
        if (!toInt(args["--watch-pid"], 1, 1 << 30, v))
            return UserError{"bad --watch-pid '" + args["--watch-pid"] + "'"};
        c.watchPid = static_cast<int>(v);
    }
    if (args.count("--launched-at")) {
        if (!toInt(args["--launched-at"], 1, 1LL << 62, v))
            return UserError{"bad --launched-at '" + args["--launched-at"] + "'"};
        c.launchedAtUsec = v;
    }
    if (args.count("--dmodex-timeout")) {
        if (!toInt(args["--dmodex-timeout"], 1, 86400, v))
            return UserError{"bad --dmodex-timeout '" + args["--dmodex-timeout"] + "'"};
        c.dmodexTimeoutSec = static_cast<int>(v);
    }
    if (args.count("--fence-timeout")) {
        if (!toInt(args["--fence-timeout"], 0, 86400, v))
            return UserError{"bad --fence-timeout '" + args["--fence-timeout"] + "'"};
        c.fenceTimeoutSec = static_cast<int>(v);
    }
    if (args.count("--client-auth")) {
        c.clientAuth = args["--client-auth"];
        if (c.clientAuth != "munge" && c.clientAuth != "native")
            return UserError{"bad --client-auth '" + c.clientAuth + "' (munge or native)"};
    }
    if (args.count("--log-level")) {
        const std::string &l = args["--log-level"];
        if (l != "error" && l != "info" && l != "debug")
            return UserError{"bad --log-level '" + l + "' (error, info or debug)"};
        c.logLevel = l == "error"   ? LogLevel::Error
                     : l == "debug" ? LogLevel::Debug
                                    : LogLevel::Info;
    }
    if (args.count("--client-mount-namespace")) {
        const std::string &ns = args["--client-mount-namespace"];
        if (ns != "same" && ns != "other")
            return UserError{"bad --client-mount-namespace '" + ns + "' (same or other)"};
        c.clientsElsewhere = ns == "other";
    }
    if (args.count("--modex")) {
        auto mode = modex::parseModexMode(args["--modex"], "--modex");
        if (!mode)
            return mode.error();
        c.modex = *mode;
        c.modexPorts = args["--modex-ports"];
        c.siteModexPorts =
            args.count("--site-modex-ports") ? args["--site-modex-ports"] : c.modexPorts;
        if (c.modex == modex::ModexMode::Profile && c.modexPorts.empty())
            return UserError{"--modex profile needs --modex-ports BASE-END"};
    }
    if (args.count("--with-ft")) {
        const std::string &ft = args["--with-ft"];
        if (ft != "ulfm" && ft != "none")
            return UserError{"bad --with-ft '" + ft + "' (ulfm or none)"};
        c.faultTolerant = ft == "ulfm";
    }
    if (args.count("--relay")) {
        // FANOUT:BASE-END[@HOST]: the tree srun welcomes with and the
        // site's relay_ports; HOST (tests, one machine) where every node's
        // relay is instead of its plan name.
        std::string text = args["--relay"];
        std::string host;
        if (auto at = text.find('@'); at != std::string::npos) {
            host = text.substr(at + 1);
            text.resize(at);
        }
        const auto colon = text.find(':');
        long long fan = 0;
        auto range = colon == std::string::npos
                         ? Expected<modexless::PortRange>(UserError{"no range"})
                         : modexless::parsePortRange(text.substr(colon + 1), "--relay");
        if (colon == std::string::npos || !toInt(text.substr(0, colon), 1, 1024, fan) || !range)
            return UserError{"bad --relay '" + args["--relay"] +
                             "' (expected FANOUT:BASE-END[@HOST], e.g. 16:61000-61999)"};
        c.relayFanOut = static_cast<std::uint32_t>(fan);
        c.relayPorts = *range;
        c.relayHost = host;
    }
    c.reservedPorts = args["--resv-ports"];
    c.tcpIfInclude = args["--tcp-if-include"];
    c.tcpIfExclude = args["--tcp-if-exclude"];
    return {};
}

// A spawned step's link to its job's hub: --job-hub HOST:PORT, --job-step
// INDEX (1..255), STEPMAP_JOB_SECRET, and who spawned it (--spawn-parent
// NSPACE:RANK, for PMIX_PARENT_ID). All or none of the first three.
Expected<void> readJobHub(Arguments &args, StepConfig &c) {
    if (!args.count("--job-hub") && !args.count("--job-step"))
        return {};
    long long v = 0;
    const std::string &hub = args["--job-hub"];
    const auto colon = hub.rfind(':');
    if (colon == std::string::npos || colon == 0 || !toInt(hub.substr(colon + 1), 1, 65535, v))
        return UserError{"bad --job-hub '" + hub + "' (expected HOST:PORT)"};
    c.jobHubHost = hub.substr(0, colon);
    c.jobHubPort = static_cast<int>(v);
    if (!toInt(args["--job-step"], 1, 255, v))
        return UserError{"bad --job-step '" + args["--job-step"] + "' (1 to 255)"};
    c.jobStep = static_cast<std::uint32_t>(v);
    const char *secretHex = std::getenv("STEPMAP_JOB_SECRET");
    auto secret = secretHex ? wire::decodeSecretHex(secretHex) : std::nullopt;
    if (!secret)
        return UserError{"STEPMAP_JOB_SECRET is missing or not 64 hex digits"};
    c.jobSecret = std::move(*secret);
    if (args.count("--spawn-parent")) {
        const std::string &parent = args["--spawn-parent"];
        const auto at = parent.rfind(':');
        if (at == std::string::npos || at == 0 || at > 255 ||
            !toInt(parent.substr(at + 1), 0, 0xFFFFFFFELL, v))
            return UserError{"bad --spawn-parent '" + parent + "' (expected NSPACE:RANK)"};
        c.parentNspace = parent.substr(0, at);
        c.parentRank = static_cast<std::uint32_t>(v);
    }
    return {};
}

// STEPMAP_PROFILE, STEPMAP_PROFILE_1, ... joined, if srun shipped a profile
// (in pieces: one environment string holds at most 128 KiB).
void readProfile(StepConfig &c) {
    const char *first = std::getenv("STEPMAP_PROFILE");
    if (!first)
        return;
    std::string text = first;
    for (int piece = 1; piece < kMaxProfilePieces; ++piece) {
        const char *more = std::getenv(("STEPMAP_PROFILE_" + std::to_string(piece)).c_str());
        if (!more)
            break;
        text += more;
    }
    auto profile = topology::loadProfileYaml(text, "STEPMAP_PROFILE");
    if (profile)
        c.profile = std::move(profile.value());
    else
        c.profileProblem = profile.error().message;
}

// STEPMAP_PLAN, and this node's index in it.
Expected<void> readPlan(const std::string &nodeIndex, StepConfig &c) {
    const char *planText = std::getenv("STEPMAP_PLAN");
    if (!planText)
        return UserError{"STEPMAP_PLAN is not set"};
    auto plan = decodePlan(planText);
    if (!plan)
        return UserError{"STEPMAP_PLAN: " + plan.error().message};
    c.plan = std::move(plan.value());
    long long v = 0;
    if (!toInt(nodeIndex, 0, static_cast<long long>(c.plan.nodes.size()) - 1, v))
        return UserError{"bad --node-index '" + nodeIndex + "' for a plan of " +
                         std::to_string(c.plan.nodes.size()) + " nodes"};
    c.nodeIndex = static_cast<std::uint32_t>(v);
    return {};
}

} // namespace

Expected<StepConfig> parseStepConfig(int argc, char **argv) {
    auto read = readArguments(argc, argv);
    if (!read)
        return read.error();
    Arguments &args = read.value();

    StepConfig c;
    c.stepTag = args["--step"];
    {
        unsigned long long job = 0, step = 0;
        char tail = 0;
        if (std::sscanf(c.stepTag.c_str(), "%llu.%llu%c", &job, &step, &tail) != 2 ||
            c.stepTag.size() > 32)
            return UserError{"bad --step '" + c.stepTag + "' (expected JOB.STEP, e.g. 12.0)"};
    }
    c.tmpdir = args["--tmpdir"];
    c.stepCores = args["--step-cores"];
    if (args.count("--topology-xml"))
        c.topologyXml = args["--topology-xml"];
    if (args.count("--topology-cache"))
        c.topologyCache = args["--topology-cache"];
    long long v = 0;
    if (!toInt(args["--ready-fd"], 0, 1 << 20, v))
        return UserError{"bad --ready-fd '" + args["--ready-fd"] + "'"};
    c.readyFd = static_cast<int>(v);
    if (auto optional = readOptionalArguments(args, c); !optional)
        return optional.error();
    if (auto job = readJobHub(args, c); !job)
        return job.error();
    const std::string &hub = args["--hub"];
    auto colon = hub.rfind(':');
    if (colon == std::string::npos || !toInt(hub.substr(colon + 1), 1, 65535, v))
        return UserError{"bad --hub '" + hub + "' (expected HOST:PORT)"};
    c.hubHost = hub.substr(0, colon);
    c.hubPort = static_cast<int>(v);
    if (auto plan = readPlan(args["--node-index"], c); !plan)
        return plan.error();

    const char *secretHex = std::getenv("STEPMAP_SECRET");
    auto secret = secretHex ? wire::decodeSecretHex(secretHex) : std::nullopt;
    if (!secret)
        return UserError{"STEPMAP_SECRET is missing or not 64 hex digits"};
    c.secret = std::move(*secret);
    c.nspace = "stepmap." + c.stepTag + "." + wire::derivedHex(c.secret, "pmix namespace", 8);
    readProfile(c);
    return c;
}

std::string clientTmpdir(const StepConfig &c) {
    // /proc/<pid>/root resolves in this process's mount namespace whichever
    // namespace the path is looked up from (the clients run as our user).
    return c.clientsElsewhere ? "/proc/" + std::to_string(getpid()) + "/root" + c.tmpdir : c.tmpdir;
}

} // namespace stepmap::server
