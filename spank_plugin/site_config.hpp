#pragma once

// The plugin's arguments in plugstack.conf, e.g.
//   required /usr/lib/slurm/stepmap.so server=/usr/libexec/stepmap-stepd tmpdir=/tmp
// Every default is set first; each key=value is then validated. An unknown
// key or a bad value is an error naming both.

#include "base/expected.hpp"

#include <string>
#include <vector>

namespace stepmap::plugin {

struct SiteConfig {
    std::string server;          // the stepmap-stepd executable
    std::string tmpdir = "/tmp"; // where node servers make their private directories
    std::string
        hubAddress; // address node servers use to reach srun; default: srun host toward slurmctld
    // How node servers authenticate their PMIx clients: "munge" (the uid a
    // client claims is checked through munged) or "native" (believed).
    std::string clientAuth = "munge";
    int dmodexTimeoutSec = 60;
    int serverStartTimeoutSec = 30;
    std::string
        logDir; // if set, each server logs to <logDir>/stepmap-stepd.<job>.<step>.<node>.log
    // The interconnect profile (stepmap-profile make) served to the steps;
    // none if empty.
    std::string profile;
    // --modex=profile pins each rank's TCP port in this range ("BASE-END"):
    // below Linux's ephemeral ports (32768-60999), which outgoing
    // connections take at random.
    std::string modexPorts = "24000-25999";
};

Expected<SiteConfig> parseSiteConfig(const std::vector<std::string> &args,
                                     const std::string &defaultServer);

} // namespace stepmap::plugin
