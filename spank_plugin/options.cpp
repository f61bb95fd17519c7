#include "options.hpp"

#include "display_map.hpp"
#include "hosts/host_list.hpp"
#include "protocol/modex/modex_mode.hpp"
#include "request/map_policy.hpp"
#include "request/parastation_request.hpp"

#include <cstdlib>
#include <iterator>

extern char **environ;

namespace stepmap::plugin {

const std::vector<OptionSpec> &optionSpecs() {
    static const std::vector<OptionSpec> specs(std::begin(kOptionSpecs), std::end(kOptionSpecs));
    return specs;
}

std::map<std::string, bool> optionArity() {
    std::map<std::string, bool> m;
    for (auto &s : optionSpecs())
        m[s.name] = s.arg != nullptr && !s.valueOptional;
    return m;
}

std::map<std::string, std::string> forwardedOptions() {
    // Slurm forwards an allocator's option as _SLURM_SPANK_OPTION_<plugin>_<opt>
    // (with every non-alphanumeric character of <opt> turned into '_'),
    // wrapped in the SLURM_SPANK_ prefix.
    static const std::string prefix = "SLURM_SPANK__SLURM_SPANK_OPTION_stepmap_";
    std::map<std::string, std::string> out;
    for (char **e = environ; e && *e; ++e) {
        std::string entry = *e;
        if (entry.compare(0, prefix.size(), prefix) != 0)
            continue;
        auto eq = entry.find('=');
        if (eq == std::string::npos)
            continue;
        std::string envName = entry.substr(prefix.size(), eq - prefix.size());
        for (auto &s : optionSpecs()) {
            std::string mangled = s.name;
            for (auto &ch : mangled)
                if (ch == '-')
                    ch = '_';
            if (mangled == envName)
                out[s.name] = entry.substr(eq + 1);
        }
    }
    return out;
}

StepmapOptions mergeOptions(const std::map<std::string, std::string> &commandLine,
                            const std::map<std::string, std::string> &forwarded) {
    auto pick = [&](const char *name) -> std::optional<std::string> {
        if (auto it = commandLine.find(name); it != commandLine.end())
            return it->second;
        if (auto it = forwarded.find(name); it != forwarded.end())
            return it->second;
        return std::nullopt;
    };
    StepmapOptions o;
    o.host = pick("host");
    o.hostfile = pick("hostfile");
    o.mapBy = pick("map-by");
    o.rankBy = pick("rank-by");
    o.bindTo = pick("bind-to");
    o.overbook = pick("overbook").has_value();
    o.loopNodesFirst = pick("loop-nodes-first").has_value();
    o.nodesSort = pick("nodes-sort");
    o.tpp = pick("tpp");
    o.displayMap = pick("display-map");
    o.modex = pick("modex");
    o.withFt = pick("with-ft");
    return o;
}

Expected<void> checkOptionValue(const std::string &name, const std::string &value) {
    if (name == "host") {
        auto h = parseHostOption(value);
        if (!h)
            return h.error();
    } else if (name == "map-by") {
        auto m = parseMapBy(value);
        if (!m)
            return m.error();
    } else if (name == "rank-by") {
        auto r = parseRankBy(value);
        if (!r)
            return r.error();
    } else if (name == "bind-to") {
        auto b = parseBindTo(value);
        if (!b)
            return b.error();
    } else if (name == "nodes-sort") {
        auto sort = parseNodesSort(value, "--nodes-sort");
        if (!sort)
            return sort.error();
    } else if (name == "tpp") {
        auto threads = parseThreadsPerProcess(value, "--tpp");
        if (!threads)
            return threads.error();
    } else if (name == "modex") {
        auto mode = modex::parseModexMode(value, "--modex");
        if (!mode)
            return mode.error();
    } else if (name == "display-map") {
        auto request = parseDisplayMap(value);
        if (!request)
            return request.error();
    } else if (name == "with-ft") {
        if (value != "ulfm" && value != "none")
            return UserError{"--with-ft=" + value +
                             " is not a fault tolerance mode; use ulfm (a failed rank does not "
                             "end the step: Open MPI 5's ULFM, as mpirun --with-ft ulfm) or none"};
    } else if (name == "hostfile") {
        if (value.empty())
            return UserError{"--hostfile needs a file name"};
    }
    return {};
}

} // namespace stepmap::plugin
