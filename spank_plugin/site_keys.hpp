#pragma once

// The plugstack.conf arguments stepmap knows, as plain data: the entry
// (stepmap.so, libc only) checks every argument's name in every srun,
// salloc, sbatch and slurmstepd, so a mistyped setting fails at once, on
// steps stepmap serves or not; site_config.cpp reads the values.

namespace stepmap::plugin {

inline constexpr const char *kSiteKeys[] = {
    "server",      "config",        "tmpdir",         "log_dir",
    "hub_address", "client_auth",   "dmodex_timeout", "server_start_timeout",
    "profile",     "modex_ports",   "fence_fanout",   "fence_timeout",
    "task_env",    "spawn_timeout", "relay_ports",    "topology_cache",
};
namespace detail {

constexpr unsigned long keyListSize() {
    unsigned long n = 0;
    for (const char *key : kSiteKeys) {
        while (*key++)
            ++n;
        n += 2; // ", " after every name but the last; its room holds the NUL
    }
    return n - 1;
}

struct KeyList {
    char text[keyListSize()] = {};
};

constexpr KeyList joinedKeys() {
    KeyList list;
    unsigned long at = 0;
    for (const char *key : kSiteKeys) {
        if (at) {
            list.text[at++] = ',';
            list.text[at++] = ' ';
        }
        while (*key)
            list.text[at++] = *key++;
    }
    return list;
}

inline constexpr KeyList kJoinedKeys = joinedKeys();

} // namespace detail

// "server, config, ...": the names for an error message, made from the list
// above when compiling, so a new key is one line.
inline constexpr const char *kSiteKeyList = detail::kJoinedKeys.text;

} // namespace stepmap::plugin
