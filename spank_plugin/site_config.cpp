#include "site_config.hpp"

#include "site/site_file.hpp"
#include "site_keys.hpp"

#include "modexless/pinned_ports.hpp"

#include <charconv>
#include <set>

namespace stepmap::plugin {

namespace {

bool seconds(const std::string &text, int &out) {
    int v = 0;
    auto [p, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
    if (ec != std::errc() || p != text.data() + text.size() || v < 1 || v > 86400)
        return false;
    out = v;
    return true;
}

// "BASE-END" (pinned_ports.hpp's form), above the privileged ports.
bool portRange(const std::string &text) {
    auto range = modexless::parsePortRange(text, "modex_ports");
    return range && range->first >= 1024;
}

// The file's settings that plugstack.conf arguments also carry, merged
// into c; `given`: the arguments plugstack.conf set. One place per setting.
Expected<bool> mergePolicy(SiteConfig &c, const std::set<std::string> &given) {
    const SitePolicy &p = c.policy;
    auto once = [&](const char *argument, const char *key) -> Expected<bool> {
        if (!given.count(argument))
            return true;
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
    return true;
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
    SiteConfig c;
    c.server = defaultServer;
    std::set<std::string> given;
    std::string config;
    for (const auto &arg : args) {
        auto eq = arg.find('=');
        if (eq == std::string::npos)
            return UserError{"plugstack.conf argument '" + arg + "' is not key=value"};
        std::string key = arg.substr(0, eq), value = arg.substr(eq + 1);
        if (!given.insert(key).second)
            return UserError{"plugstack.conf argument " + key + "= is given twice; keep one"};
        if (key == "server" || key == "tmpdir" || key == "log_dir" || key == "profile" ||
            key == "config") {
            if (value.empty() || value[0] != '/')
                return UserError{"plugstack.conf argument " + key + "='" + value +
                                 "' must be an absolute path"};
            (key == "server"    ? c.server
             : key == "tmpdir"  ? c.tmpdir
             : key == "log_dir" ? c.logDir
             : key == "config"  ? config
                                : c.profile) = value;
        } else if (key == "modex_ports") {
            if (!portRange(value))
                return UserError{"plugstack.conf argument modex_ports='" + value +
                                 "' must be a range of TCP ports BASE-END within 1024-65535, "
                                 "e.g. modex_ports=24000-25999"};
            c.modexPorts = value;
        } else if (key == "hub_address") {
            if (value.empty())
                return UserError{"plugstack.conf argument hub_address= needs a host name or "
                                 "address"};
            c.hubAddress = value;
        } else if (key == "client_auth") {
            if (value != "munge" && value != "native")
                return UserError{"plugstack.conf argument client_auth='" + value +
                                 "' must be munge (clients prove their user through munged) or "
                                 "native (trust the user a client claims: any local user could "
                                 "join a step)"};
            c.clientAuth = value;
        } else if (key == "dmodex_timeout") {
            if (!seconds(value, c.dmodexTimeoutSec))
                return UserError{"plugstack.conf argument dmodex_timeout='" + value +
                                 "' must be seconds between 1 and 86400"};
        } else if (key == "server_start_timeout") {
            if (!seconds(value, c.serverStartTimeoutSec))
                return UserError{"plugstack.conf argument server_start_timeout='" + value +
                                 "' must be seconds between 1 and 86400"};
        } else {
            return UserError{"unknown plugstack.conf argument '" + key + "' (value '" + value +
                             "'); known: " + kSiteKeyList};
        }
    }
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
