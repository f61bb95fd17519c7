#pragma once

// The step's rendezvous, run by the srun side of the plugin on its own
// thread and libuv loop. Every node server connects to it (the address and
// the per-step secret travel in the job environment) and authenticates; the
// hub then completes fences across nodes, routes direct-modex requests to
// the node that owns the rank, relays fence tree messages between a child
// and a parent that could not link directly, and reports aborts and lost
// servers.

#include "base/expected.hpp"
#include "protocol/timeline/exchange_counters.hpp"
#include "protocol/timeline/step_timeline.hpp"
#include "protocol/wire/message.hpp"
#include "protocol/wire/spawn_payloads.hpp"

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace stepmap::hub {

class RendezvousHub {
public:
    struct Events {
        // A rank called PMIx_Abort (MPI_Abort). Hub thread.
        std::function<void(std::uint32_t rank, int status, const std::string &msg)> onAbort;
        // A rank ended with a non-zero exit status (128 + signal if killed),
        // as its node's slurmstepd saw it. Hub thread.
        std::function<void(std::uint32_t rank, int status)> onRankExit;
        // A node server vanished or misbehaved: the step cannot go on. Hub thread.
        std::function<void(const std::string &why)> onFailure;
        // The server of node joined (authenticated). Hub thread.
        std::function<void(std::uint32_t node)> onJoined;
        // A server's marks as it leaves (srun -v's breakdown). Hub thread.
        std::function<void(std::uint32_t node, std::vector<timeline::Event> events)> onTimeline;
        // A server said whether its interconnect profile entry may be
        // served, and if not why (the profile rendezvous). Hub thread.
        std::function<void(std::uint32_t node, bool usable, const std::string &reason)>
            onProfileState;
        // A rank asked for something the step does not serve, and its
        // server says what and why (at most kMaxNoticesPerServer each).
        // Hub thread.
        std::function<void(std::uint32_t rank, const std::string &text)> onNotice;
        // A server's exchange counters as it leaves (srun -v). Hub thread.
        std::function<void(std::uint32_t node, const timeline::ExchangeCounters &counters)>
            onExchange;
        // A rank asked to spawn processes (PMIx_Spawn): srun starts them as
        // step `index` of the job (hub/job_ids.hpp), whose servers then join
        // this hub as guests; srun calls spawnFailed if it cannot. Without
        // it spawns are refused. Hub thread.
        // spawnerPlan: the encoded plan of the caller's step.
        std::function<void(std::uint32_t index, const wire::SpawnRequestMsg &request,
                           const std::string &spawnerPlan)>
            onSpawn;
        // Every server of spawned step `index` ("<job>.<step>", its encoded
        // plan) joined: its processes are starting. Hub thread.
        std::function<void(std::uint32_t index, const std::string &stepTag,
                           const std::string &plan)>
            onSpawned;
        // A step connected to one that failed must end ("<job>.<step>",
        // why); this srun's own step ends through onFailure. Hub thread.
        std::function<void(const std::string &stepTag, const std::string &why)> onEndStep;
    };

    // Notices a server may send; more are counted, not passed on, so that
    // a rank cannot flood srun's terminal.
    static constexpr unsigned kMaxNoticesPerServer = 16;

    struct Settings {
        // Where to listen: the address the node servers use to reach srun.
        // host if given (a name is resolved here, once); else this host's
        // address on the route to `toward` (slurmctld: the cluster's
        // network, as Slurm's daemons see srun; not what the host name
        // resolves to, which may be 127.0.1.1); else the host name.
        std::string host;
        std::string toward;
        // Slurm's SrunPortRange if the site sets one (0, 0: any free port).
        std::uint16_t portMin = 0, portMax = 0;
        // A server that has not joined by then (it died or cannot reach
        // srun) is a failure: nobody else would notice it.
        int connectDeadlineSec = 30;
        // Before authentication a peer may send only its Hello, within this
        // time, and only so many peers may be in that state (at least four
        // per server): another local user's connection is refused, and the
        // oldest of the address holding the most gives way to a newcomer,
        // so idle connections cannot lock the real servers out
        // (hub/handshake_gate.hpp).
        int handshakeDeadlineMs = 5000;
        std::size_t maxUnauthenticated = 64;
        // What one server may hold in srun: fences it opened that the
        // others have not completed and their bytes, direct-modex requests
        // waiting for a server that has not joined, and bytes queued for
        // it that it does not read. A server beyond any of them has its
        // link ended (srun ends the step, naming it).
        std::size_t maxOpenFencesPerServer = 64;
        std::size_t maxFenceBytesPerServer = 2 * std::size_t{wire::kMaxFrameSize};
        std::size_t maxWaitingRequestsPerServer = 4096;
        std::size_t maxQueuedBytesPerServer = 4 * std::size_t{wire::kMaxFrameSize};
        // Fences of every node run over a tree of node servers with this
        // fan-out (hub/fence_tree.hpp); 0: all fences through the hub.
        std::uint32_t fenceFanOut = 16;
        // The profile rendezvous waits this long after the first server's
        // say for the others; a server silent by then is withheld.
        int profileDeadlineMs = 5000;
        // The servers' fence deadline (HubLink::Settings::fenceTimeoutSec),
        // for the message that names the nodes a fence waited for.
        int fenceTimeoutSec = 0;
        // The plan's node names, for messages (else "node index N").
        std::vector<std::string> nodeNames;
        // The step's PMIx namespace and encoded plan, for the job-wide
        // operations (spawned steps connect to this one by them).
        std::string nspace;
        std::string plan;
    };

    // nodeOfRank: the plan's node index per rank; servers run on the nodes
    // that have ranks. The running hub, or why it cannot listen.
    static Expected<std::unique_ptr<RendezvousHub>> start(std::vector<std::uint32_t> nodeOfRank,
                                                          std::uint32_t nodeCount,
                                                          std::string secret, Events events,
                                                          const Settings &settings);
    ~RendezvousHub();
    RendezvousHub(const RendezvousHub &) = delete;
    RendezvousHub &operator=(const RendezvousHub &) = delete;

    int port() const;
    // "ADDRESS:PORT" (numeric) for the node servers.
    std::string address() const;
    // CPU time the hub's thread used so far (ms), in all once shut down:
    // what the step costs srun.
    double cpuMs() const;
    // Direct-modex requests the hub routed to a server so far (those of the
    // step's own ranks go server to server once the servers know each
    // other). Any thread.
    std::uint64_t modexRouted() const;
    // Servers that joined on a link of their own to srun, not through their
    // tree parent (hub/hub_relay.hpp): the root and its fan-out children,
    // and those that could not go through their parent.
    std::uint64_t directJoins() const;
    // Frames that told srun of servers joined through relays (at most one
    // per relaying child of the root's children once a subtree is in).
    std::uint64_t relayedJoinFrames() const;
    // The fence tree's fan-out the servers are welcomed with; 0: no tree.
    std::uint32_t treeFanOut() const;
    // srun could not start spawned step `index` (why, for the rank that
    // asked). Any thread.
    void spawnFailed(std::uint32_t index, const std::string &why);
    // Spawned step `index` ended with a failure (why): the steps still
    // connected to it end too. Any thread.
    void spawnedStepFailed(std::uint32_t index, const std::string &why);
    // Tells every server the step is over (status, reason) and stops.
    void shutdown(int status, const std::string &reason);

    struct State;

private:
    RendezvousHub() = default;
    std::unique_ptr<State> state_;
};

} // namespace stepmap::hub
