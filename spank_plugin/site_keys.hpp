#pragma once

// The plugstack.conf arguments stepmap knows, as plain data: the entry
// (stepmap.so, libc only) checks every argument's name in every srun,
// salloc, sbatch and slurmstepd, so a mistyped setting fails at once, on
// steps stepmap serves or not; site_config.cpp reads the values.

namespace stepmap::plugin {

inline constexpr const char *kSiteKeys[] = {
    "server",      "config",      "tmpdir",         "log_dir",
    "hub_address", "client_auth", "dmodex_timeout", "server_start_timeout",
    "profile",     "modex_ports",
};
inline constexpr const char kSiteKeyList[] = "server, config, tmpdir, log_dir, hub_address, "
                                             "client_auth, dmodex_timeout, server_start_timeout, "
                                             "profile, modex_ports";

} // namespace stepmap::plugin
