#include "site_config.hpp"

#include "site_keys.hpp"

#include "pinned_ports.hpp"

#include <charconv>

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

} // namespace

Expected<SiteConfig> parseSiteConfig(const std::vector<std::string> &args,
                                     const std::string &defaultServer) {
    SiteConfig c;
    c.server = defaultServer;
    for (const auto &arg : args) {
        auto eq = arg.find('=');
        if (eq == std::string::npos)
            return UserError{"plugstack.conf argument '" + arg + "' is not key=value"};
        std::string key = arg.substr(0, eq), value = arg.substr(eq + 1);
        if (key == "server" || key == "tmpdir" || key == "log_dir" || key == "profile") {
            if (value.empty() || value[0] != '/')
                return UserError{"plugstack.conf argument " + key + "='" + value +
                                 "' must be an absolute path"};
            (key == "server"    ? c.server
             : key == "tmpdir"  ? c.tmpdir
             : key == "log_dir" ? c.logDir
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
    return c;
}

} // namespace stepmap::plugin
