#include "site_config.hpp"

#include "site/site_file.hpp"
#include "site_keys.hpp"

#include "modexless/pinned_ports.hpp"

#include <algorithm>
#include <charconv>
#include <iterator>
#include <optional>
#include <set>
#include <string_view>

namespace stepmap::plugin {

namespace {

bool number(const std::string &text, int low, int high, int &out) {
    int v = 0;
    auto [p, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
    if (ec != std::errc() || p != text.data() + text.size() || v < low || v > high)
        return false;
    out = v;
    return true;
}

bool seconds(const std::string &text, int &out) {
    return number(text, 1, 86400, out);
}

bool variableName(std::string_view name) {
    if (name.empty() || name.size() > 128 || (name[0] >= '0' && name[0] <= '9'))
        return false;
    for (char c : name)
        if (!(c == '_' || (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') ||
              (c >= '0' && c <= '9')))
            return false;
    return true;
}

// "NAME=VALUE;NAME=VALUE" (mpi.conf's PMIxEnv form), at most 64 of them.
std::optional<std::vector<std::pair<std::string, std::string>>>
taskVariables(std::string_view text) {
    std::vector<std::pair<std::string, std::string>> out;
    while (!text.empty()) {
        const std::size_t end = std::min(text.find(';'), text.size());
        const std::string_view item = text.substr(0, end);
        const std::size_t eq = item.find('=');
        if (eq == std::string_view::npos || !variableName(item.substr(0, eq)) ||
            item.size() - eq - 1 > 4096 || out.size() == 64)
            return std::nullopt;
        out.emplace_back(item.substr(0, eq), item.substr(eq + 1));
        text.remove_prefix(std::min(end + 1, text.size()));
    }
    if (out.empty())
        return std::nullopt;
    return out;
}

// "BASE-END" (pinned_ports.hpp's form), above the privileged ports.
bool portRange(const std::string &text) {
    auto range = modexless::parsePortRange(text, "modex_ports");
    return range && range->first >= 1024;
}

// The file's settings that plugstack.conf arguments also carry, merged
// into c; `given`: the arguments plugstack.conf set. One place per setting.
Expected<void> mergePolicy(SiteConfig &c, const std::set<std::string> &given) {
    const SitePolicy &p = c.policy;
    auto once = [&](const char *argument, const char *key) -> Expected<void> {
        if (!given.count(argument))
            return {};
        return UserError{"plugstack.conf argument " + std::string(argument) + "= and " + key +
                         " in " + p.path + " both set it; keep one of them"};
    };
    struct Field {
        const char *argument, *key;
        bool inFile;
    };
    for (const Field &f :
         {Field{"profile", "profile", p.profile.has_value()},
          Field{"modex_ports", "modex_ports", p.modexPorts.has_value()},
          Field{"log_dir", "log.dir", p.logDir.has_value()},
          Field{"dmodex_timeout", "timeouts.direct_modex", p.dmodexTimeoutSec.has_value()},
          Field{"server_start_timeout", "timeouts.server_start",
                p.serverStartTimeoutSec.has_value()}})
        if (f.inFile)
            if (auto one = once(f.argument, f.key); !one)
                return one;
    if (p.profile)
        c.profile = *p.profile;
    if (p.modexPorts)
        c.modexPorts = *p.modexPorts;
    if (p.logDir)
        c.logDir = *p.logDir;
    if (p.dmodexTimeoutSec)
        c.dmodexTimeoutSec = *p.dmodexTimeoutSec;
    if (p.serverStartTimeoutSec)
        c.serverStartTimeoutSec = *p.serverStartTimeoutSec;
    // Else every step without --modex would fail for want of a profile.
    if (p.modex == std::optional<std::string>("profile") && c.profile.empty())
        return UserError{p.path +
                         ": defaults.modex: profile needs the site's interconnect profile; name "
                         "it (profile: FILE here, or profile=FILE in plugstack.conf), or choose "
                         "fence or async"};
    return {};
}

// What the plugstack.conf arguments set: the SiteConfig, and the file
// config= names (read after every argument).
struct Settings {
    SiteConfig c;
    std::string config;
};

UserError badArgument(const char *key, const std::string &value, const char *must) {
    return UserError{"plugstack.conf argument " + std::string(key) + "='" + value + "' " + must};
}

// An absolute path into the member `field` picks.
template <std::string &(*field)(Settings &)>
Expected<void> absolutePath(const char *key, const std::string &value, Settings &s) {
    if (value.empty() || value[0] != '/')
        return badArgument(key, value, "must be an absolute path");
    field(s) = value;
    return {};
}

template <int SiteConfig::*field>
Expected<void> timeoutSeconds(const char *key, const std::string &value, Settings &s) {
    if (!seconds(value, s.c.*field))
        return badArgument(key, value, "must be seconds between 1 and 86400");
    return {};
}

// One plugstack.conf argument: its name (as in site_keys.hpp's kSiteKeys,
// in the same order) and how its value is checked and stored. A new
// argument is a row here and a name in kSiteKeys.
struct PlugstackSetting {
    const char *key;
    Expected<void> (*store)(const char *key, const std::string &value, Settings &s);

    Expected<void> read(const std::string &value, Settings &s) const {
        return store(key, value, s);
    }
};

constexpr PlugstackSetting kPlugstackSettings[] = {
    {"server", absolutePath<[](Settings &s) -> std::string & { return s.c.server; }>},
    {"config", absolutePath<[](Settings &s) -> std::string & { return s.config; }>},
    {"tmpdir", absolutePath<[](Settings &s) -> std::string & { return s.c.tmpdir; }>},
    {"log_dir", absolutePath<[](Settings &s) -> std::string & { return s.c.logDir; }>},
    {"hub_address",
     [](const char *, const std::string &value, Settings &s) -> Expected<void> {
         if (value.empty())
             return UserError{"plugstack.conf argument hub_address= needs a host name or "
                              "address"};
         s.c.hubAddress = value;
         return {};
     }},
    {"client_auth",
     [](const char *key, const std::string &value, Settings &s) -> Expected<void> {
         if (value != "munge" && value != "native")
             return badArgument(key, value,
                                "must be munge (clients prove their user through munged) or "
                                "native (trust the user a client claims: any local user could "
                                "join a step)");
         s.c.clientAuth = value;
         return {};
     }},
    {"dmodex_timeout", timeoutSeconds<&SiteConfig::dmodexTimeoutSec>},
    {"server_start_timeout", timeoutSeconds<&SiteConfig::serverStartTimeoutSec>},
    {"profile", absolutePath<[](Settings &s) -> std::string & { return s.c.profile; }>},
    {"modex_ports",
     [](const char *key, const std::string &value, Settings &s) -> Expected<void> {
         if (!portRange(value))
             return badArgument(key, value,
                                "must be a range of TCP ports BASE-END within 1024-65535, "
                                "e.g. modex_ports=24000-25999");
         s.c.modexPorts = value;
         return {};
     }},
    {"fence_fanout",
     [](const char *key, const std::string &value, Settings &s) -> Expected<void> {
         if (!number(value, 0, 1024, s.c.fenceFanOut))
             return badArgument(key, value,
                                "must be a number of children per node server from 0 (every "
                                "fence through srun) to 1024, e.g. fence_fanout=16");
         return {};
     }},
    {"fence_timeout",
     [](const char *key, const std::string &value, Settings &s) -> Expected<void> {
         if (!number(value, 0, 86400, s.c.fenceTimeoutSec))
             return badArgument(key, value,
                                "must be seconds between 1 and 86400, or 0 for no deadline");
         return {};
     }},
    {"task_env",
     [](const char *key, const std::string &value, Settings &s) -> Expected<void> {
         auto variables = taskVariables(value);
         if (!variables)
             return badArgument(key, value,
                                "must be NAME=VALUE pairs joined by ';' (at most 64, names of "
                                "letters, digits and '_'), e.g. task_env=UCX_TLS=rc,sm;"
                                "PMIX_MCA_gds=hash");
         s.c.taskEnv = std::move(*variables);
         return {};
     }},
    {"spawn_timeout",
     [](const char *key, const std::string &value, Settings &s) -> Expected<void> {
         if (!number(value, 1, 86400, s.c.spawnTimeoutSec))
             return badArgument(key, value, "must be seconds between 1 and 86400");
         return {};
     }},
    {"relay_ports",
     [](const char *key, const std::string &value, Settings &s) -> Expected<void> {
         if (value != "none" && !portRange(value))
             return badArgument(key, value,
                                "must be a range of TCP ports BASE-END within 1024-65535 that "
                                "every node leaves free, e.g. relay_ports=26000-26999, or none "
                                "(every node server joins srun directly)");
         s.c.relayPorts = value;
         return {};
     }},
    {"topology_cache",
     [](const char *key, const std::string &value, Settings &s) -> Expected<void> {
         if (value == "none") {
             s.c.topologyCache.clear();
             return {};
         }
         if (value.empty() || value[0] != '/' || value == "/")
             return badArgument(key, value,
                                "must be the absolute path of a directory only root may write "
                                "(default /run/stepmap), or none (every step's server "
                                "discovers the node's topology itself)");
         s.c.topologyCache = value;
         return {};
     }},
};

// The table and the entry's list of names agree, name by name.
constexpr bool tableMatchesKeys() {
    if (std::size(kPlugstackSettings) != std::size(kSiteKeys))
        return false;
    for (std::size_t i = 0; i < std::size(kSiteKeys); ++i)
        if (std::string_view(kPlugstackSettings[i].key) != kSiteKeys[i])
            return false;
    return true;
}
static_assert(tableMatchesKeys(), "kPlugstackSettings and site_keys.hpp's kSiteKeys differ");

const PlugstackSetting *findSetting(const std::string &key) {
    for (const PlugstackSetting &row : kPlugstackSettings)
        if (key == row.key)
            return &row;
    return nullptr;
}

} // namespace

Expected<SiteConfig> parseSiteConfig(const std::vector<std::string> &args,
                                     const std::string &defaultServer) {
    return parseSiteConfig(args, defaultServer,
                           [](const std::string &path) { return readSitePolicy(path); });
}

Expected<SiteConfig> parseSiteConfig(const std::vector<std::string> &args,
                                     const std::string &defaultServer,
                                     const SitePolicyReader &readPolicy) {
    Settings set;
    set.c.server = defaultServer;
    std::set<std::string> given;
    for (const auto &arg : args) {
        auto eq = arg.find('=');
        if (eq == std::string::npos)
            return UserError{"plugstack.conf argument '" + arg + "' is not key=value"};
        std::string key = arg.substr(0, eq), value = arg.substr(eq + 1);
        if (!given.insert(key).second)
            return UserError{"plugstack.conf argument " + key + "= is given twice; keep one"};
        const PlugstackSetting *row = findSetting(key);
        if (!row)
            return UserError{"unknown plugstack.conf argument '" + key + "' (value '" + value +
                             "'); known: " + kSiteKeyList};
        if (auto read = row->read(value, set); !read)
            return read.error();
    }
    SiteConfig &c = set.c;
    const std::string &config = set.config;
    if (!config.empty()) {
        auto policy = readPolicy(config);
        if (!policy)
            return policy.error();
        c.policy = std::move(policy.value());
        c.policy.path = config;
        if (auto merged = mergePolicy(c, given); !merged)
            return merged.error();
    }
    return c;
}

} // namespace stepmap::plugin
