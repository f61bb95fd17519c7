#include "srun/step_hub.hpp"

#include "job_variables.hpp"
#include "plugin_log.hpp"
#include "protocol/hub/job_ids.hpp"
#include "protocol/wire/secret.hpp"
#include "srun/slurm_queries.hpp"
#include "srun/slurm_release.hpp"
#include "srun/spawned_steps.hpp"

#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>

namespace stepmap::plugin {

using hub::RendezvousHub;

// What srun does when the hub reports (on the hub's thread).
RendezvousHub::Events StepHub::events() {
    const std::uint32_t jobId = step_.jobId, stepId = step_.stepId;
    RendezvousHub::Events events;
    events.onAbort = [this, jobId, stepId](std::uint32_t rank, int status, const std::string &msg) {
        int expected = -1;
        if (!abortStatus_.compare_exchange_strong(expected, status))
            return;
        logError("rank " + std::to_string(rank) + " called abort with status " +
                 std::to_string(status) + (msg.empty() ? "" : ": " + msg) + "; ending the step");
        slurm_release::killJobStep(jobId, stepId, SIGKILL);
    };
    events.onNotice = [](std::uint32_t rank, const std::string &text) {
        logError("rank " + std::to_string(rank) + ": " + text);
    };
    events.onTimeline = [this](std::uint32_t node, std::vector<timeline::Event> marks) {
        std::lock_guard<std::mutex> lock(timelinesMutex_);
        timelines_[node] = std::move(marks);
    };
    // A node whose profile entry does not match it: said by its server
    // (its log has the differences); nobody serves that entry.
    // With --modex=profile the user asked for it: said without -v too.
    events.onProfileState = [this](std::uint32_t node, bool usable, const std::string &why) {
        const LaunchPlan &plan = *step_.plan;
        if (usable || node >= plan.nodes.size())
            return;
        const std::string line =
            "interconnect profile entry of " + plan.nodes[node].name + " not served: " + why;
        if (step_.profileModex)
            logInfo(line + "; its ranks exchange their data at first contact instead");
        else
            logVerbose(line);
    };
    events.onExchange = [this](std::uint32_t node, const timeline::ExchangeCounters &counters) {
        std::lock_guard<std::mutex> lock(timelinesMutex_);
        exchange_[node] = counters;
    };
    events.onRankExit = [this](std::uint32_t, int status) {
        int expected = -1;
        firstFailure_.compare_exchange_strong(expected, status);
    };
    events.onFailure = [this, jobId, stepId](const std::string &why) {
        if (failed_.exchange(true) || abortStatus_.load() >= 0)
            return;
        // Give a step Slurm is ending anyway a moment to end on its own
        // (its tasks' statuses are then srun's to report), else end it.
        std::unique_lock<std::mutex> lock(endingMutex_);
        if (endingChanged_.wait_for(lock, std::chrono::seconds(1), [this] { return stepEnding_; }))
            return;
        lock.unlock();
        logError(why + "; ending the step");
        slurm_release::killJobStep(jobId, stepId, SIGKILL);
    };
    events.onSpawn = [this](std::uint32_t index, const wire::SpawnRequestMsg &request,
                            const std::string &spawnerPlan) {
        spawned_->start(index, request, spawnerPlan);
    };
    events.onEndStep = [](const std::string &tag, const std::string &why) {
        unsigned long long job = 0, step = 0;
        if (std::sscanf(tag.c_str(), "%llu.%llu", &job, &step) != 2)
            return;
        logError(why + ", connected to step " + tag + "; ending it");
        slurm_release::killJobStep(static_cast<std::uint32_t>(job),
                                   static_cast<std::uint32_t>(step), SIGKILL);
    };
    events.onSpawned = [this](std::uint32_t index, const std::string &tag,
                              const std::string &plan) { spawned_->started(index, tag, plan); };
    return events;
}

std::unique_ptr<StepHub> StepHub::start(const Step &step) {
    std::unique_ptr<StepHub> self(new StepHub(step));
    const LaunchPlan &plan = *step.plan;
    const auto hubStarted = std::chrono::steady_clock::now();
    std::vector<std::uint32_t> nodeOfRank;
    for (auto &r : plan.ranks)
        nodeOfRank.push_back(r.node);
    std::string secret = wire::generateSecretHex();
    RendezvousHub::Settings settings = hubSettings(*step.site);
    for (const auto &node : plan.nodes)
        settings.nodeNames.push_back(node.name);
    // The names the step's servers derive too (stepd_server/step_config).
    const std::string rawSecret = *wire::decodeSecretHex(secret);
    settings.nspace = "stepmap." + std::to_string(step.jobId) + "." + std::to_string(step.stepId) +
                      "." + wire::derivedHex(rawSecret, "pmix namespace", 8);
    settings.plan = encodePlan(plan);
    self->spawned_ =
        std::make_unique<SpawnedSteps>(step.jobId, step.plan, step.site->spawnTimeoutSec);
    auto hub = RendezvousHub::start(nodeOfRank, static_cast<std::uint32_t>(plan.nodes.size()),
                                    *wire::decodeSecretHex(secret), self->events(), settings);
    if (!hub) {
        logError(hub.error().message +
                 " (set hub_address= in plugstack.conf to the address the nodes use "
                 "to reach this host)");
        return nullptr;
    }
    self->hub_ = std::move(hub).value();
    const std::string address = self->hub_->address();
    // A spawned step's servers reach the job's hub: the first step's.
    // Spawned steps spawn through it too, so their sruns pass it on.
    // Another srun of the job on this host may serve the job already: the
    // step's servers then join it as guests (job_hub_file.hpp).
    if (!std::getenv(kJobHubVariable)) {
        auto shared = JobHubFile::claimOrFind(step.jobId, address, secret);
        self->jobHubFile_ = std::move(shared.owner);
        if (shared.attached) {
            setenv(kJobHubVariable, shared.attached->address.c_str(), 1);
            // This step's own key, derived from the job hub's secret.
            const std::string key =
                hub::guestKeyHex(wire::decodeSecretHex(shared.attached->secretHex).value_or(""),
                                 shared.attached->index);
            setenv(kJobSecretVariable, key.c_str(), 1);
            setenv(kJobStepVariable, std::to_string(shared.attached->index).c_str(), 1);
            logVerbose("the job's hub is another srun's, at " + shared.attached->address +
                       ": this step's ranks meet its ranks by name");
        } else if (!self->jobHubFile_) {
            logVerbose("this step's names stay its own: " + shared.why);
        }
    }
    const char *jobHub = std::getenv(kJobHubVariable);
    const char *jobSecret = std::getenv(kJobSecretVariable);
    self->spawned_->setHub(self->hub_.get(), jobHub ? jobHub : address,
                           jobSecret ? jobSecret : secret);
    const double hubMs =
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - hubStarted)
            .count();
    char cost[32];
    std::snprintf(cost, sizeof cost, "%.3f", hubMs);
    logVerbose("rendezvous of step " + std::to_string(step.jobId) + "." +
               std::to_string(step.stepId) + " at " + address + " (ready in " + cost + " ms)");
    setenv(kHubVariable, address.c_str(), 1);
    setenv(kSecretVariable, secret.c_str(), 1);
    if (const std::uint32_t fanOut = self->hub_->treeFanOut(); fanOut > 0)
        setenv(kTreeVariable, std::to_string(fanOut).c_str(), 1);
    else
        unsetenv(kTreeVariable);
    return self;
}

StepHub::~StepHub() {
    if (spawned_)
        spawned_->endAll();
}

// srun -v: where the step's time went, srun's marks and every node's.
void StepHub::logCriticalPath(const timeline::SrunMarks &marks) {
    const LaunchPlan &plan = *step_.plan;
    std::vector<std::string> names;
    names.reserve(plan.nodes.size());
    for (const auto &n : plan.nodes)
        names.push_back(n.name);
    std::lock_guard<std::mutex> lock(timelinesMutex_);
    for (const auto &line :
         timeline::describeCriticalPath(marks, timelines_, names, plan.nodes.size()))
        logVerbose(line);
    if (!exchange_.empty())
        logVerbose(timeline::describeStepExchange(exchange_, plan.nodes.size()));
}

int StepHub::finish(timeline::SrunMarks marks) {
    jobHubFile_.reset(); // no later srun joins a hub that is about to end
    {
        std::lock_guard<std::mutex> lock(endingMutex_);
        stepEnding_ = true;
    }
    endingChanged_.notify_all();
    // The steps its ranks spawned end with a step that failed; else they
    // are waited for.
    if (spawned_ && (abortStatus_.load() >= 0 || firstFailure_.load() >= 0 || failed_.load()))
        spawned_->endAll();
    else if (spawned_)
        spawned_->awaitAll();
    if (hub_) {
        hub_->shutdown(0, "srun is done");
        const std::uint64_t routed = hub_->modexRouted();
        const double hubCpuMs = hub_->cpuMs();
        hub_.reset();
        logCriticalPath(marks);
        // What the step cost srun: the servers ask each other directly
        // once they know each other, so srun routes few requests if any.
        logVerbose("  srun's rendezvous: " + std::to_string(routed) +
                   " direct-modex request(s) routed through srun, " +
                   std::to_string(static_cast<long>(hubCpuMs + 0.5)) + " ms of CPU");
    }
    int status = abortStatus_.load();
    // As mpirun: the status of the first rank that failed, not srun's
    // (128 + SIGTERM once Slurm killed the others on its failure).
    if (status < 0)
        status = firstFailure_.load();
    return status;
}

} // namespace stepmap::plugin
