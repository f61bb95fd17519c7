#pragma once

// What the job's hub (the first step's, in the srun that spawns) knows of
// the steps of its job tree: its own (index 0) and every step a rank
// spawned (job_ids.hpp), with their namespaces and plans, which of their
// servers joined as guests, and who asked for each spawn. Pure: the hub
// sends what these calls return.

#include "base/expected.hpp"
#include "protocol/wire/spawn_payloads.hpp"

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

namespace stepmap::hub {

class JobSteps {
public:
    // The first step: its namespace, encoded plan and node of each rank.
    JobSteps(std::string nspace, std::string plan, std::vector<std::uint32_t> nodeOfRank);

    // A spawn asked by a rank of `requester` (a job-wide node id) under its
    // request id: the new step's index, or nothing once kMaxSpawned are used.
    std::optional<std::uint32_t> open(std::uint32_t requester, std::uint64_t requestId);
    // Whether the server of job-wide node id `node` may join: a node of
    // the first step's with ranks, of a step opened by a spawn, or of
    // another srun's step (an index from kFirstAttached; which nodes, its
    // plan says once its first server told it).
    bool mayJoin(std::uint32_t node) const;
    // A guest server named its step, first as it joins, then once its
    // node's ranks have all started (step.started). An error closes its
    // link; else whether every server of the step has now said its ranks
    // started (the spawn is complete: answer() it).
    Expected<bool> guestJoined(std::uint32_t node, const wire::GuestStepMsg &step);
    // The spawn of step `index`, answered once: who asked and under which
    // id; nothing when answered before (or never opened).
    struct Requester {
        std::uint32_t node = 0;
        std::uint64_t requestId = 0;
    };
    std::optional<Requester> answer(std::uint32_t index);
    // A server of step `index` went: its step is no longer joinable nor
    // reachable (a lookup of its ranks fails).
    void forget(std::uint32_t index);

    // The job-wide node of a job-wide rank id, if the step and rank exist.
    std::optional<std::uint32_t> nodeOf(std::uint32_t rank) const;
    // The namespace of step index (empty if unknown).
    std::string nspaceOf(std::uint32_t index) const;
    std::string tagOf(std::uint32_t index) const;
    // The index of the step named nspace.
    std::optional<std::uint32_t> indexOf(const std::string &nspace) const;
    // The job-wide nodes that hold the processes (a rank of kAllRanks: all
    // of its step's), or why not (a namespace or rank no step has).
    Expected<std::set<std::uint32_t>>
    nodesOf(const std::vector<std::pair<std::string, std::uint32_t>> &procs) const;
    // Which steps are connected (MPI_Comm_spawn's intercommunicator,
    // accept/connect): a connect across steps joins every pair of them
    // once more, a disconnect (Open MPI's is a fence across the steps)
    // once less. A failed step ends the steps still connected to it, as
    // mpirun ends connected jobs; disconnected ones end independently.
    void connect(const std::vector<wire::JobStepEntry> &steps, bool connected);
    std::vector<std::uint32_t> connectedTo(std::uint32_t index) const;
    void disconnectAll(std::uint32_t index);
    // The steps the processes belong to, with their plans.
    std::vector<wire::JobStepEntry>
    entriesOf(const std::vector<std::pair<std::string, std::uint32_t>> &procs) const;

private:
    struct Step {
        std::string nspace, tag, plan;
        std::vector<std::uint32_t> nodeOfRank; // empty until its first server says
        std::set<std::uint32_t> nodes;         // local indices of nodes with ranks
        std::set<std::uint32_t> joined, started;
        Requester requester;
        bool answered = false;
        bool gone = false;
    };
    std::map<std::uint32_t, Step> steps_;
    std::map<std::pair<std::uint32_t, std::uint32_t>, unsigned> connections_; // (low, high)
    std::uint32_t next_ = 1;
};

} // namespace stepmap::hub
