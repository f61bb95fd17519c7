#pragma once

// One step of server_scale on this machine, as srun and the nodes would run
// it: srun's RendezvousHub in this process, one real stepmap-stepd per
// pretend node (its own private directory, the plan in STEPMAP_PLAN, the
// ready report read from its socket), then one real PMIx client per rank
// (scale_client), then the hub's shutdown. Returns what each phase took.

#include "base/expected.hpp"
#include "child_process.hpp"

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>

namespace stepmap::bench {

struct ScaleSetup {
    std::string stepd;       // stepmap-stepd
    std::string client;      // scale_client
    std::string topologyXml; // every server's topology (no hwloc discovery per server)
    std::string stepCores = "0-1";
    std::string workDir = "/tmp"; // where the step's directories go
    std::uint32_t nodes = 8;
    std::uint32_t ranksPerNode = 1;
    std::size_t keyBytes = 1024; // each rank's key
    std::uint32_t fanOut = 16;   // the fence tree's (hub setting); 0: star
    // The site's relay_ports (protocol/hub/hub_relay.hpp): servers below the
    // tree's second level join srun through their parent; "none": directly.
    std::string relayPorts = "26000-26999";
    int timeoutSec = 120; // per phase
    // srun's hub starts once every server is up, so that they join it
    // together as on a cluster, where each node starts its own (here a few
    // cores start them one by one); start then counts from the hub's start.
    bool joinTogether = false;
    // Whom servers and clients run as when the harness is root.
    std::optional<RunAs> user;
};

// Milliseconds. Fences: from the last rank entering to the last leaving.
struct StepFigures {
    double start = 0;       // first server spawned (or the hub started) .. every server joined
    double fence = 0;       // fence without data
    double collect = 0;     // fence collecting data
    double modexMedian = 0; // one rank's Get of another node's key
    double modexMax = 0;    // all ranks at once: the slowest
    double stop = 0;        // hub shutdown .. every server gone
    double hubStartCpu = 0; // CPU srun's hub thread used until every server joined
    double hubRunCpu = 0;   // ... and while the clients ran
    double hubRouted = 0;   // direct-modex requests srun's hub routed meanwhile
    double hubJoins = 0;    // frames srun's hub read to admit the servers
};

// An error names the directory with the servers' and clients' logs.
Expected<StepFigures> runStep(const ScaleSetup &setup);

} // namespace stepmap::bench
