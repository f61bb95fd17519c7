#pragma once

// The steps a served step's ranks spawned (MPI_Comm_spawn): each one an
// srun of the job that srun starts (spawn_command.hpp), whose stepmap
// plugin then serves the new step with its servers joined to this srun's
// hub (protocol/hub/job_ids.hpp). Their output is the user's terminal, as
// this srun's is. An srun that ends before its step's servers all joined
// fails the spawn with its status; when this srun's step ends, every step
// it spawned ends with it.

#include "plan/launch_plan.hpp"
#include "protocol/hub/rendezvous_hub.hpp"
#include "protocol/wire/spawn_payloads.hpp"

#include <sys/types.h>

#include <condition_variable>
#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace stepmap::plugin {

class SpawnedSteps {
public:
    // plan: the spawning step's. A spawn whose processes have not all
    // called PMIx_Init timeoutSec after their srun started fails, and they
    // are ended.
    SpawnedSteps(std::uint32_t jobId, const LaunchPlan *plan, int timeoutSec)
        : jobId_(jobId), plan_(plan), timeoutSec_(timeoutSec) {}
    ~SpawnedSteps();
    SpawnedSteps(const SpawnedSteps &) = delete;
    SpawnedSteps &operator=(const SpawnedSteps &) = delete;

    // The hub, and the job's hub ("HOST:PORT") with its secret (hex), for
    // the spawned steps' servers: before any spawn.
    void setHub(hub::RendezvousHub *hub, std::string jobHub, std::string jobSecretHex);
    // The hub's onSpawn: starts the srun of step `index`. Hub thread.
    // spawnerPlan: the caller's step's (encoded), for parent-mapping.
    void start(std::uint32_t index, const wire::SpawnRequestMsg &request,
               const std::string &spawnerPlan);
    // The hub's onSpawned: every server of step `index` joined. Hub thread.
    void started(std::uint32_t index, const std::string &stepTag, const std::string &plan);
    // The spawning step ended normally: waits until every spawned step has
    // ended on its own, as mpirun outlives its spawned jobs (seed 000:
    // disconnected jobs end independently). No new spawn starts.
    void awaitAll();
    // Ends every spawned step still running (the spawning step failed or
    // was ended) and waits for their sruns.
    void endAll();

private:
    struct Child {
        pid_t pid = 0;
        std::string summary;
        std::string multiProgPath; // removed when its srun ends
        std::string stepTag;       // once started
        std::map<std::string, int> ranksByNode;
        bool running = true;
        std::thread waiter;
    };
    // start's work, on a thread of its own.
    void launch(std::uint32_t index, const wire::SpawnRequestMsg &request,
                const std::string &spawnerPlan);
    void wait(std::uint32_t index, pid_t pid);
    std::map<std::string, int> usedSlots() const; // under mutex_

    const std::uint32_t jobId_;
    const LaunchPlan *plan_;
    const int timeoutSec_;
    hub::RendezvousHub *hub_ = nullptr; // all three under mutex_
    std::string jobHub_, jobSecretHex_;
    std::mutex mutex_;
    std::condition_variable ended_;
    std::map<std::uint32_t, Child> children_;
    std::vector<std::thread> starters_;
    bool closed_ = false; // no new spawn (the spawning step ended)
    bool ending_ = false; // the spawned steps are being ended
};

} // namespace stepmap::plugin
