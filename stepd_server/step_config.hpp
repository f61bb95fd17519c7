#pragma once

// What one node server needs to know about its step, from its command line
// and environment (set by the plugin in slurmstepd).

#include "base/expected.hpp"
#include "modexless/pinned_ports.hpp"
#include "plan/launch_plan.hpp"
#include "profile/interconnect_profile.hpp"
#include "protocol/modex/modex_mode.hpp"
#include "server_log.hpp"

#include <optional>

#include <string>

namespace stepmap::server {

struct StepConfig {
    std::string stepTag; // "<job>.<step>", as Slurm numbers the step
    // PMIx namespace: stepmap.<job>.<step>.<16 hex digits from the secret>.
    // Not in argv and not guessable: PMIx 4.2.2 takes a connecting peer's
    // word for the namespace's protocol modules before it checks who the
    // peer is (a stranger could set them for the real ranks).
    std::string nspace;
    std::uint32_t nodeIndex; // this node in plan.nodes
    LaunchPlan plan;
    std::string tmpdir; // private to this server; removed at exit
    std::string hubHost;
    int hubPort = 0;
    std::string secret;              // raw bytes
    int readyFd = -1;                // receives the clients' environments, then is closed
    int watchPid = 0;                // slurmstepd: the server leaves when it is gone
    std::int64_t launchedAtUsec = 0; // when slurmstepd began starting it (wall clock), 0 unknown
    int dmodexTimeoutSec = 60;
    int fenceTimeoutSec = 0; // 0: fences wait as long as the step
    // --with-ft ulfm: a failed rank does not end the step; the ranks hear
    // of it (PMIx events) and fences leave out nodes whose ranks all failed.
    bool faultTolerant = false;

    std::string clientAuth = "munge";   // PMIx psec: munge or native
    LogLevel logLevel = LogLevel::Info; // the site's log.level
    std::string stepCores;   // Slurm's cores of the step here ("0-1"), hwloc logical order
    std::string topologyXml; // tests: this node's hardware from a file instead of the machine
    // The node's per-boot topology (topology/node_cache.hpp), served if it
    // is still this machine's; empty: none.
    std::string topologyCache;
    // The ranks live in another mount namespace (a job's private /tmp, as
    // job_container/tmpfs without EntireStepInNS makes it): they reach this
    // server's directory through /proc/<its pid>/root.
    bool clientsElsewhere = false;
    // srun's --modex, and the range --modex=profile pins the ranks' TCP
    // ports in (the site's modex_ports, "BASE-END").
    modex::ModexMode modex = modex::ModexMode::Fence;
    std::string modexPorts;
    // This node's own modex_ports: srun's range must lie within it.
    std::string siteModexPorts;
    // SLURM_STEP_RESV_PORTS (MpiParams=ports): used instead of the range
    // where the step's nodes have addresses of their own.
    std::string reservedPorts;
    // Joining srun through the tree (hub/hub_relay.hpp; --relay): the
    // fan-out srun's hub uses, the site's relay_ports, and (tests on one
    // machine) the host every relay is on instead of its plan node's name.
    // relayFanOut 0: every server joins srun directly.
    std::uint32_t relayFanOut = 0;
    modexless::PortRange relayPorts;
    std::string relayHost;
    // The job's OMPI_MCA_btl_tcp_if_include / _exclude: which interfaces
    // Open MPI publishes (empty: its defaults).
    std::string tcpIfInclude, tcpIfExclude;
    // The step's nodes' entries of the site's interconnect profile, if srun
    // shipped them (STEPMAP_PROFILE); a damaged one is dropped with the
    // reason, never a reason not to serve the step.
    std::optional<topology::Profile> profile;
    std::string profileProblem;
    // A spawned step (hub/job_ids.hpp): its index in the job's tree of
    // steps and the hub of the step that spawned the first of them, which
    // serves the job-wide operations; and the rank that spawned it. For
    // the first step, jobStep is 0 and its own hub serves them.
    std::uint32_t jobStep = 0;
    std::string jobHubHost;
    int jobHubPort = 0;
    std::string jobSecret; // raw bytes
    std::string parentNspace;
    std::uint32_t parentRank = 0;
};

// The server's directory as its clients name it.
std::string clientTmpdir(const StepConfig &c);

// argv: --step JOB.STEP --node-index K --tmpdir D --hub HOST:PORT --ready-fd F
//       --step-cores LIST [--watch-pid P] [--launched-at USEC] [--dmodex-timeout S]
//       [--topology-xml FILE]
//       [--client-auth munge|native] [--modex fence|async|profile --modex-ports BASE-END]
//       [--site-modex-ports BASE-END] [--resv-ports LIST]
//       [--tcp-if-include LIST] [--tcp-if-exclude LIST]
//       [--job-hub HOST:PORT --job-step INDEX [--spawn-parent NSPACE:RANK]]
//       [--relay FANOUT:BASE-END[@HOST]]
// environment: STEPMAP_PLAN, STEPMAP_SECRET, STEPMAP_JOB_SECRET (with
// --job-hub), STEPMAP_PROFILE and its further
// pieces STEPMAP_PROFILE_1 ... _15 (optional)
Expected<StepConfig> parseStepConfig(int argc, char **argv);

} // namespace stepmap::server
