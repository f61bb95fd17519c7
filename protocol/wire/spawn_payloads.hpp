#pragma once

// The payloads of the job-wide operations (hub/job_ids.hpp): a rank's
// PMIx_Spawn (SpawnRequest, SpawnReply), a spawned step's servers joining
// the first step's hub as guests (GuestStep), and collectives over
// processes of several steps (JobBarrier, JobBarrierDone: PMIx_Connect,
// _Disconnect, a fence across namespaces). Strict decoders, bounded.

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace stepmap::wire {

constexpr std::size_t kMaxSpawnStrings = 4096; // argv, env, info entries each
constexpr std::size_t kMaxSpawnApps = 256;     // programs of one spawn
constexpr std::size_t kMaxSpawnString = 64u << 10;
constexpr std::size_t kMaxNspace = 255; // PMIX_MAX_NSLEN
constexpr std::size_t kMaxBarrierProcs = 1u << 20;
constexpr std::size_t kMaxBarrierSteps = 256;

// The spawn's keys as text, by the names the server gives them: host,
// hostfile, add-host, add-hostfile, wdir, map-by, rank-by, bind-to, ppr.
using SpawnInfo = std::vector<std::pair<std::string, std::string>>;

// One program of a spawn: its arguments (argv[0] first), the environment
// lines the caller adds, its directory, how many processes, its keys.
struct SpawnApp {
    std::string cmd;
    std::vector<std::string> argv;
    std::vector<std::string> env;
    std::string cwd;
    std::uint32_t maxprocs = 0;
    SpawnInfo info;
};

// One rank's MPI_Comm_spawn (one program) or _spawn_multiple, with the
// keys of the whole spawn.
struct SpawnRequestMsg {
    std::uint64_t id = 0;
    std::uint32_t rank = 0; // job-wide id of the caller (job_ids.hpp)
    std::string parentNspace;
    std::vector<SpawnApp> apps;
    SpawnInfo info;
};

struct SpawnReplyMsg {
    std::uint64_t id = 0;
    bool ok = false;
    std::string nspace;      // the children's, when ok
    std::uint32_t index = 0; // their step index (job_ids.hpp), when ok
    std::string plan;        // their launch plan (encodePlan), when ok
    std::string message;     // why not, when not ok
};

// A spawned step's server, first thing on its link to the job's hub.
struct GuestStepMsg {
    std::string nspace;
    std::string stepTag; // "<job>.<step>"
    std::string plan;    // encodePlan
    // Sent again with this set (and no plan) once every rank of the
    // server's node has called PMIx_Init: the spawn is done when all its
    // nodes' have.
    bool started = false;
};

// A collective over processes of several steps, from every node with a
// participant: the label that tells it apart, every participating process
// (namespace, rank; rank 0xFFFFFFFF: all of it), and this node's data.
struct JobBarrierMsg {
    std::string label;
    std::vector<std::pair<std::string, std::uint32_t>> procs;
    bool collect = false;
    std::string data;
    // A PMIx group construct that asks for a context id
    // (PMIX_GROUP_ASSIGN_CONTEXT_ID): the hub gives one, job-wide unique.
    bool assignContextId = false;
};

struct JobStepEntry {
    std::string nspace;
    std::uint32_t index = 0; // job_ids.hpp's step index
    std::string plan;
};

struct JobBarrierDoneMsg {
    std::string label;
    bool ok = false;
    std::string data;                // every node's, when ok
    std::string message;             // why not
    std::vector<JobStepEntry> steps; // every step the processes belong to
    std::uint64_t contextId = 0;     // when asked for (never 0 then)
};

std::string encode(const SpawnRequestMsg &);
std::string encode(const SpawnReplyMsg &);
std::string encode(const GuestStepMsg &);
std::string encode(const JobBarrierMsg &);
std::string encode(const JobBarrierDoneMsg &);
std::optional<SpawnRequestMsg> decodeSpawnRequest(const std::string &);
std::optional<SpawnReplyMsg> decodeSpawnReply(const std::string &);
std::optional<GuestStepMsg> decodeGuestStep(const std::string &);
std::optional<JobBarrierMsg> decodeJobBarrier(const std::string &);
std::optional<JobBarrierDoneMsg> decodeJobBarrierDone(const std::string &);

} // namespace stepmap::wire
