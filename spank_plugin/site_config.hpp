#pragma once

// The plugin's arguments in plugstack.conf, e.g.
//   required /usr/lib/slurm/stepmap.so config=/etc/slurm/stepmap.yaml
// and the site policy file config= names (stepmap.yaml(5)). Every default
// is set first; each key=value is then validated, then the file is read. An
// unknown key or a bad value is an error naming both; so is a setting made
// both in plugstack.conf and in the file.

#include "base/expected.hpp"
#include "site/site_policy.hpp"

#include <functional>
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
    // If set, each server logs to a new file in it (server_log_file.hpp).
    std::string logDir;
    // The interconnect profile (stepmap-profile make) served to the steps;
    // none if empty.
    std::string profile;
    // --modex=profile pins each rank's TCP port in this range ("BASE-END"):
    // below Linux's ephemeral ports (32768-60999), which outgoing
    // connections take at random.
    std::string modexPorts = "24000-25999";
    // Whole-step fences run over a tree of node servers with this fan-out
    // (Slurm's mpi.conf PMIxFanout); 0: every fence through srun's hub.
    int fenceFanOut = 16;
    // Node servers below the fence tree's second level join srun through
    // their tree parent, which takes them on a port of this range
    // ("BASE-END", every node derives it from the step; protocol/hub/
    // hub_relay.hpp), so that srun admits fan-out + 1 servers, not every
    // node. "none": every server joins srun itself.
    std::string relayPorts = "26000-26999";
    // Where root keeps the node's per-boot topology (topology/node_cache.hpp:
    // written when slurmd starts, read by every step's server instead of
    // discovering the machine again); empty ("none"): no cache.
    std::string topologyCache = "/run/stepmap";
    // A fence that has not completed this long after a node entered it
    // ends the step, naming the nodes that never entered it (mpi.conf's
    // PMIxTimeout); 0: fences wait as long as the step.
    int fenceTimeoutSec = 300;
    // A spawn (MPI_Comm_spawn) fails when its processes have not all
    // called PMIx_Init this long after their srun started; they are ended.
    int spawnTimeoutSec = 60;
    // Set in every task of a step stepmap serves, before the PMIx
    // variables (which win): task_env=NAME=VALUE;... (mpi.conf's PMIxEnv).
    std::vector<std::pair<std::string, std::string>> taskEnv;
    // The site policy file (config=FILE); its settings above are merged in.
    SitePolicy policy;
};

// Reads a site policy file (site/site_file.hpp's readSitePolicy; a test's own).
using SitePolicyReader = std::function<Expected<SitePolicy>(const std::string &path)>;

Expected<SiteConfig> parseSiteConfig(const std::vector<std::string> &args,
                                     const std::string &defaultServer,
                                     const SitePolicyReader &readPolicy);
// The same, reading the file with readSitePolicy.
Expected<SiteConfig> parseSiteConfig(const std::vector<std::string> &args,
                                     const std::string &defaultServer);

} // namespace stepmap::plugin
