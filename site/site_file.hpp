#pragma once

// The site policy file, stepmap.yaml(5): YAML read strictly into a
// SitePolicy (site_policy.hpp). Every key is optional; an unknown or repeated
// key, a value of the wrong type or form, or more than one YAML document is
// an error "FILE:LINE: KEY.PATH: what is wrong; the fix", never a silent
// default. An empty file is the built-in policy.
//
// `serve`, when given, must be a top-level key at the start of a line, its
// plain or quoted value on the same line (`serve: pmix`): stepmap.so reads
// that line without a YAML parser (serve_line.hpp), and a file the two
// readings disagree on is refused.

#include <cstddef>
#include <string>
#include <string_view>

#include "base/expected.hpp"
#include "site/serve_line.hpp"
#include "site/site_policy.hpp"

namespace stepmap::plugin {

// Every key the file may hold, as its path of keys ("defaults.map_by" is
// map_by inside the map defaults), in the order of stepmap.yaml(5) and of the
// known-key lists in messages. tests/man checks that the page documents each.
inline constexpr const char *kSitePolicyKeys[] = {
    "serve",
    "defaults.map_by",
    "defaults.rank_by",
    "defaults.bind_to",
    "defaults.modex",
    "defaults.with_ft",
    "allow.oversubscribe",
    "allow.overbook",
    "allow.user_cpumap",
    "limits.ranks_per_node",
    "limits.ranks",
    "profile",
    "modex_ports",
    "timeouts.server_start",
    "timeouts.direct_modex",
    "log.dir",
    "log.level",
};

// kMaxSitePolicyBytes, the largest file read, is serve_line.hpp's: the
// entry object reads as much.

// Upper bounds of limits.ranks_per_node and limits.ranks.
inline constexpr int kMaxRanksPerNodeLimit = 1000000;
inline constexpr int kMaxRanksLimit = 10000000;

// The policy in `text`, naming `fileName` in errors; path is `fileName`.
Expected<SitePolicy> parseSitePolicy(std::string_view text, std::string_view fileName);

// The policy in the file at `path`. Refused before it is parsed: a file that
// is not a regular file, larger than kMaxSitePolicyBytes, writable by its
// group or others, or owned by neither root nor the effective user (anyone
// who can write the file could change the policy for every user).
Expected<SitePolicy> readSitePolicy(const std::string &path);

} // namespace stepmap::plugin
