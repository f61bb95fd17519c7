// server_scale: how the node servers' collectives grow with the node count.
// For each node count it runs whole steps on this machine (scale_step.hpp:
// srun's hub in-process, one real stepmap-stepd per pretend node, one real
// PMIx client per rank) and prints, as medians over the repetitions, the
// step's start, a fence without and with data, a direct modex and the
// step's stop; then each figure's ratio to the first node count's, and
// least-squares fits against log2(N) and N. --fan-out 0,16 runs the star
// (every fence through srun's hub) and the fence tree interleaved, and
// compares them; --relay-ports 26000-26999,none likewise servers joining
// srun through their tree parent and directly.
//
//   server_scale [--nodes 8,16,32,64,128] [--fan-out 16] [--ranks-per-node 1] [--repeat 3]
//                [--key-bytes 1024] [--timeout 120] [--workdir /tmp] [--user nobody]
//                [--link-delay-ms 0] [--relay-ports 26000-26999[,none]]
//                [--stepd PATH] [--client PATH] [--topology-xml PATH]
//
// The paths default to $STEPMAP_STEPD, $STEPMAP_SCALE_CLIENT and
// $STEPMAP_SCALE_TOPOLOGY (meson sets them for the smoke test). Run as
// root, the servers and clients run as --user (default nobody).

#include "scale_step.hpp"

#include "protocol/uv/frame_connection.hpp"

#include <pwd.h>
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <compare>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <string>
#include <vector>

using namespace stepmap;
using namespace stepmap::bench;

namespace {

struct Options {
    ScaleSetup setup;
    std::vector<std::uint32_t> nodeCounts = {8, 16, 32, 64, 128};
    std::vector<std::uint32_t> fanOuts = {16};             // 0: the star through the hub
    std::vector<std::string> relayPorts = {"26000-26999"}; // none: servers join srun directly
    int repeat = 3;
    std::string user = "nobody"; // only when run as root
};

std::string envOr(const char *name) {
    const char *v = std::getenv(name);
    return v ? v : "";
}

bool splitList(const std::string &text, std::vector<std::string> &out) {
    out.clear();
    std::size_t at = 0;
    while (at <= text.size()) {
        std::size_t comma = std::min(text.find(',', at), text.size());
        out.push_back(text.substr(at, comma - at));
        if (out.back().empty())
            return false;
        at = comma + 1;
    }
    return !out.empty();
}

bool parseCounts(const std::string &text, std::vector<std::uint32_t> &out, unsigned long min = 1) {
    std::vector<std::string> items;
    if (!splitList(text, items))
        return false;
    out.clear();
    for (const auto &item : items) {
        unsigned long v = std::strtoul(item.c_str(), nullptr, 10);
        if (v < min || v > 4096)
            return false;
        out.push_back(static_cast<std::uint32_t>(v));
    }
    return true;
}

// As root, servers and clients run as o.user (the server refuses root).
bool resolveUser(Options &o) {
    if (geteuid() != 0)
        return true;
    const passwd *pw = getpwnam(o.user.c_str());
    if (!pw || pw->pw_uid == 0) {
        std::fprintf(stderr,
                     "server_scale: run as root, it needs --user, a user other than root "
                     "('%s' is not one)\n",
                     o.user.c_str());
        return false;
    }
    o.setup.user = RunAs{pw->pw_uid, pw->pw_gid};
    return true;
}

// The options; a message on a bad one.
bool parseOptions(int argc, char **argv, Options &o) {
    o.setup.stepd = envOr("STEPMAP_STEPD");
    o.setup.client = envOr("STEPMAP_SCALE_CLIENT");
    o.setup.topologyXml = envOr("STEPMAP_SCALE_TOPOLOGY");
    for (int i = 1; i + 1 < argc; i += 2) {
        const std::string key = argv[i], value = argv[i + 1];
        const long number = std::strtol(value.c_str(), nullptr, 10);
        if ((key == "--nodes" && parseCounts(value, o.nodeCounts)) ||
            (key == "--fan-out" && parseCounts(value, o.fanOuts, 0)))
            continue;
        if (key == "--ranks-per-node" && number >= 1 && number <= 64)
            o.setup.ranksPerNode = static_cast<std::uint32_t>(number);
        else if (key == "--repeat" && number >= 1 && number <= 100)
            o.repeat = static_cast<int>(number);
        else if (key == "--key-bytes" && number >= 1 && number <= (1 << 20))
            o.setup.keyBytes = static_cast<std::size_t>(number);
        else if (key == "--timeout" && number >= 1)
            o.setup.timeoutSec = static_cast<int>(number);
        else if (key == "--link-delay-ms" && number >= 0 && number <= 1000)
            // Read by every frame connection of this process and of the
            // servers it starts (protocol/uv/frame_connection.hpp).
            setenv("STEPMAP_BENCH_LINK_DELAY_MS", value.c_str(), 1);
        else if (key == "--user")
            o.user = value;
        else if (key == "--relay-ports" && splitList(value, o.relayPorts))
            ;
        else if (key == "--joins" && (value == "together" || value == "as-started"))
            o.setup.joinTogether = value == "together";
        else if (key == "--workdir")
            o.setup.workDir = value;
        else if (key == "--stepd")
            o.setup.stepd = value;
        else if (key == "--client")
            o.setup.client = value;
        else if (key == "--topology-xml")
            o.setup.topologyXml = value;
        else {
            std::fprintf(stderr, "server_scale: bad option %s '%s'\n", key.c_str(), value.c_str());
            return false;
        }
    }
    if (argc % 2 == 0 || o.setup.stepd.empty() || o.setup.client.empty() ||
        o.setup.topologyXml.empty()) {
        std::fprintf(stderr, "server_scale: options come in pairs; --stepd, --client and "
                             "--topology-xml (or their variables) are required\n");
        return false;
    }
    return resolveUser(o);
}

struct Column {
    const char *name;
    double StepFigures::*field;
};
const Column kColumns[] = {
    {"start", &StepFigures::start},           {"fence", &StepFigures::fence},
    {"fence+data", &StepFigures::collect},    {"dmodex", &StepFigures::modexMedian},
    {"dmodex-max", &StepFigures::modexMax},   {"stop", &StepFigures::stop},
    {"hub-start", &StepFigures::hubStartCpu}, {"hub-run", &StepFigures::hubRunCpu},
    {"hub-routed", &StepFigures::hubRouted},  {"hub-joins", &StepFigures::hubJoins},
};

double median(std::vector<double> v) {
    std::sort(v.begin(), v.end());
    const std::size_t n = v.size();
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

// Medians of each column over the repetitions.
StepFigures medians(const std::vector<StepFigures> &runs) {
    StepFigures out;
    for (const auto &c : kColumns) {
        std::vector<double> v;
        for (const auto &r : runs)
            v.push_back(r.*c.field);
        out.*c.field = median(v);
    }
    return out;
}

// y = a + b x by least squares; r2 the share of variance explained.
struct Fit {
    double a = 0, b = 0, r2 = 0;
};
Fit fitLine(const std::vector<double> &x, const std::vector<double> &y) {
    const double n = static_cast<double>(x.size());
    double sx = 0, sy = 0, sxx = 0, sxy = 0;
    for (std::size_t i = 0; i < x.size(); ++i) {
        sx += x[i];
        sy += y[i];
        sxx += x[i] * x[i];
        sxy += x[i] * y[i];
    }
    Fit f;
    const double den = n * sxx - sx * sx;
    if (den == 0)
        return f;
    f.b = (n * sxy - sx * sy) / den;
    f.a = (sy - f.b * sx) / n;
    double ssRes = 0, ssTot = 0;
    for (std::size_t i = 0; i < x.size(); ++i) {
        ssRes += std::pow(y[i] - (f.a + f.b * x[i]), 2);
        ssTot += std::pow(y[i] - sy / n, 2);
    }
    f.r2 = ssTot > 0 ? 1 - ssRes / ssTot : 1;
    return f;
}

using Rows = std::map<std::uint32_t, StepFigures>; // by node count

// One way of running the step: how fences go, and how servers join srun.
struct Variant {
    std::uint32_t fanOut;
    std::string relayPorts;
    bool relayed() const { return fanOut > 0 && relayPorts != "none"; }
    auto operator<=>(const Variant &) const = default;
};

std::vector<Variant> variantsOf(const Options &o) {
    std::vector<Variant> out;
    for (auto k : o.fanOuts)
        for (const auto &r : o.relayPorts)
            out.push_back({k, r});
    return out;
}

std::string fenceName(std::uint32_t fanOut) {
    return fanOut == 0 ? "star through srun's hub" : "tree of fan-out " + std::to_string(fanOut);
}

std::string variantName(const Variant &v) {
    return fenceName(v.fanOut) + (v.relayed() ? ", joins through the tree" : ", direct joins");
}

void printRow(std::uint32_t n, const StepFigures &f, const StepFigures *base) {
    std::printf("%6u", n);
    for (const auto &c : kColumns)
        std::printf(" %11.2f", !base                ? f.*c.field
                               : base->*c.field > 0 ? f.*c.field / base->*c.field
                                                    : 0.0);
    std::printf("\n");
}

void printTable(const Options &o, const Variant &v, const Rows &rows) {
    std::printf("server_scale: fences over a %s; %u rank(s) per node, %zu-byte key per rank, "
                "%u ms added per hop, servers join srun %s%s, medians of %d runs, ms\n%6s",
                fenceName(v.fanOut).c_str(), o.setup.ranksPerNode, o.setup.keyBytes,
                uvnet::benchmarkLinkDelayMs(),
                v.relayed() ? "through their tree parent" : "directly",
                o.setup.joinTogether ? " together (srun's hub starts once all are up)" : "",
                o.repeat, "nodes");
    for (const auto &c : kColumns)
        std::printf(" %11s", c.name);
    std::printf("\n");
    for (const auto &[n, f] : rows)
        printRow(n, f, nullptr);
    std::printf(
        "(start, stop: all servers ready and joined / gone; fences: last rank in to last "
        "out; dmodex: one Get, median and slowest; hub-start, hub-run: CPU of srun's hub "
        "thread until all joined / while the clients ran; hub-joins: frames it read to admit "
        "the servers, a direct join's or a relay's batch of its subtree's)\n");
    const auto &[base, first] = *rows.begin();
    std::printf("ratio to N=%u:\n", base);
    for (const auto &[n, f] : rows)
        printRow(n, f, &first);
}

// Each variant's figures against the first's, same N, same run.
void printComparison(const std::vector<Variant> &variants, std::map<Variant, Rows> &byVariant) {
    const Rows &base = byVariant[variants.front()];
    for (std::size_t i = 1; i < variants.size(); ++i) {
        std::printf("ratio %s / %s:\n", variantName(variants[i]).c_str(),
                    variantName(variants.front()).c_str());
        for (const auto &[n, f] : byVariant[variants[i]])
            if (auto b = base.find(n); b != base.end())
                printRow(n, f, &b->second);
    }
}

void printFits(const Rows &rows) {
    if (rows.size() < 3)
        return;
    std::printf("fits, ms = a + b*log2(N) | ms = a + b*N (R^2: share of the variance "
                "explained):\n");
    std::vector<double> logN, linN;
    for (const auto &[n, f] : rows) {
        logN.push_back(std::log2(static_cast<double>(n)));
        linN.push_back(static_cast<double>(n));
    }
    for (const auto &c : kColumns) {
        std::vector<double> y;
        for (const auto &[n, f] : rows)
            y.push_back(f.*c.field);
        const Fit l = fitLine(logN, y), p = fitLine(linN, y);
        std::printf("%11s  %8.2f + %7.3f*log2(N) R^2 %.3f | %8.2f + %7.4f*N R^2 %.3f\n", c.name,
                    l.a, l.b, l.r2, p.a, p.b, p.r2);
    }
}

// Many servers and clients hold a few descriptors each.
void raiseDescriptorLimit() {
    rlimit r{};
    if (getrlimit(RLIMIT_NOFILE, &r) == 0 && r.rlim_cur < r.rlim_max) {
        r.rlim_cur = r.rlim_max;
        setrlimit(RLIMIT_NOFILE, &r);
    }
}

} // namespace

int main(int argc, char **argv) {
    Options o;
    if (!parseOptions(argc, argv, o))
        return 2;
    raiseDescriptorLimit();
    // Variants interleaved within each repetition: the machine's drift
    // touches them alike. A failed run is told and counted, not averaged.
    const std::vector<Variant> variants = variantsOf(o);
    std::map<Variant, std::map<std::uint32_t, std::vector<StepFigures>>> runs;
    int failed = 0;
    for (auto n : o.nodeCounts) {
        o.setup.nodes = n;
        for (int i = 0; i < o.repeat; ++i)
            for (const auto &v : variants) {
                o.setup.fanOut = v.fanOut;
                o.setup.relayPorts = v.relayPorts;
                auto f = runStep(o.setup);
                if (f) {
                    runs[v][n].push_back(*f);
                    continue;
                }
                ++failed;
                std::fprintf(stderr, "server_scale: N=%u, %s, run %d failed: %s\n", n,
                             variantName(v).c_str(), i + 1, f.error().message.c_str());
            }
        std::fprintf(stderr, "server_scale: N=%u done\n", n);
    }
    if (failed > 0)
        std::printf("server_scale: %d of %zu runs failed (stderr says why); medians of the "
                    "others\n",
                    failed,
                    o.nodeCounts.size() * variants.size() * static_cast<std::size_t>(o.repeat));
    std::map<Variant, Rows> byVariant;
    for (const auto &v : variants) {
        for (auto &[n, list] : runs[v])
            byVariant[v][n] = medians(list);
        if (byVariant[v].empty())
            continue;
        printTable(o, v, byVariant[v]);
        printFits(byVariant[v]);
    }
    printComparison(variants, byVariant);
    return failed > 0 ? 1 : 0;
}
