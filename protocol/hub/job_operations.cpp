// The hub's job-wide operations: a rank's spawn (handed to srun, answered
// once every server of the new step joined here as a guest) and
// collectives over processes of several steps (PMIx_Connect, _Disconnect,
// fences across namespaces). Loop thread.

#include "protocol/hub/job_ids.hpp"
#include "protocol/hub/rendezvous_state.hpp"
#include "protocol/wire/payloads.hpp"
#include "protocol/wire/spawn_payloads.hpp"

namespace stepmap::hub {

namespace {

std::string stepName(const JobSteps &steps, std::uint32_t index) {
    return index == 0 ? std::string("the spawning step") : "spawned step " + steps.tagOf(index);
}

} // namespace

bool RendezvousHub::State::isServer(std::uint32_t node) const {
    return stepOf(node) == 0 ? serverNodes.count(node) > 0 : servers.count(node) > 0;
}

std::optional<std::uint32_t> RendezvousHub::State::nodeOf(std::uint32_t rank) const {
    if (stepOf(rank) == 0)
        return rank < nodeOfRank.size() ? std::optional<std::uint32_t>(nodeOfRank[rank])
                                        : std::nullopt;
    return jobSteps->nodeOf(rank);
}

bool RendezvousHub::State::guestMaySend(MessageType type) const {
    switch (type) {
    case MessageType::GuestStep:
    case MessageType::Spawn:
    case MessageType::JobBarrier:
    case MessageType::NameRequest:
    case MessageType::DmodexRequest:
    case MessageType::DmodexResponse:
    case MessageType::Notice:
    case MessageType::Timeline:
    case MessageType::Exchange:
    case MessageType::Shutdown:
        return true;
    default:
        return false;
    }
}

void RendezvousHub::State::onSpawn(std::uint32_t node, uvnet::FrameConnection &c,
                                   const wire::Frame &f) {
    auto m = wire::decodeSpawnRequest(f.payload);
    if (!m || nodeOf(m->rank) != node) {
        c.close("malformed spawn request");
        return;
    }
    const auto refuse = [&](const std::string &why) {
        sendTo(node, MessageType::SpawnReply,
               wire::encode(wire::SpawnReplyMsg{m->id, false, "", 0, "", why}));
    };
    if (!events.onSpawn) {
        refuse("this srun does not start spawned processes");
        return;
    }
    auto index = jobSteps->open(node, m->id);
    if (!index) {
        refuse("the job already spawned " + std::to_string(kMaxSpawned) + " steps");
        return;
    }
    const auto spawner = jobSteps->entriesOf({{jobSteps->nspaceOf(stepOf(m->rank)), kAllRanks}});
    events.onSpawn(*index, *m, spawner.empty() ? std::string() : spawner.front().plan);
}

void RendezvousHub::State::onGuestStep(std::uint32_t node, uvnet::FrameConnection &c,
                                       const wire::Frame &f) {
    auto m = wire::decodeGuestStep(f.payload);
    if (!m) {
        c.close("malformed guest step");
        return;
    }
    auto complete = jobSteps->guestJoined(node, *m);
    if (!complete) {
        c.close(complete.error().message);
        return;
    }
    if (!*complete)
        return;
    if (events.onSpawned)
        events.onSpawned(stepOf(node), m->stepTag, m->plan);
    answerSpawn(stepOf(node), true, "");
}

void RendezvousHub::State::answerSpawn(std::uint32_t index, bool ok, const std::string &message) {
    auto requester = jobSteps->answer(index);
    if (!requester)
        return;
    wire::SpawnReplyMsg reply{requester->requestId, ok, "", 0, "", message};
    if (ok) {
        reply.index = index;
        auto entries = jobSteps->entriesOf({{jobSteps->nspaceOf(index), kAllRanks}});
        reply.nspace = entries.at(0).nspace;
        reply.plan = entries.at(0).plan;
    }
    sendTo(requester->node, MessageType::SpawnReply, wire::encode(reply));
}

void RendezvousHub::State::takeSpawnFailures() {
    std::vector<std::pair<std::uint32_t, std::string>> failed, stepsFailed;
    {
        std::lock_guard lock(mutex);
        failed.swap(spawnFailures);
        stepsFailed.swap(stepFailures);
    }
    for (const auto &[index, why] : failed) {
        answerSpawn(index, false, why);
        jobSteps->forget(index);
    }
    // mpirun ends the jobs connected to one that failed: they would wait
    // for its processes for ever.
    for (const auto &[index, why] : stepsFailed) {
        for (std::uint32_t other : jobSteps->connectedTo(index)) {
            if (other == 0)
                fail(why + ", connected to this step");
            else if (events.onEndStep)
                events.onEndStep(jobSteps->tagOf(other), why);
        }
        jobSteps->disconnectAll(index);
    }
}

// Like a fence, but its nodes come from the processes (of any step of the
// job), and its answer names their steps so that each server can register
// the others' namespaces.
void RendezvousHub::State::onJobBarrier(std::uint32_t node, uvnet::FrameConnection &c,
                                        const wire::Frame &f) {
    auto m = wire::decodeJobBarrier(f.payload);
    if (!m) {
        c.close("malformed job-wide barrier");
        return;
    }
    auto expected = jobSteps->nodesOf(m->procs);
    if (expected && !expected->count(node)) {
        c.close("job-wide barrier '" + m->label + "' without the sender's processes");
        return;
    }
    std::string refusal = expected ? "" : expected.error().message;
    for (std::uint32_t n : expected ? *expected : std::set<std::uint32_t>{})
        if (leftJob(n) && refusal.empty())
            refusal = "the processes of node index " + std::to_string(localOf(n)) + " of " +
                      stepName(*jobSteps, stepOf(n)) + " have ended";
    if (!refusal.empty()) {
        wire::JobBarrierDoneMsg refused{m->label, false, "", refusal, {}};
        sendTo(node, MessageType::JobBarrierDone, wire::encode(refused));
        return;
    }
    const std::string id = m->label;
    auto it = jobBarriers.find(id);
    if (it == jobBarriers.end()) {
        it = jobBarriers.emplace(id, Fence{}).first;
        it->second.expected = *expected;
        jobBarrierProcs[id] = m->procs;
        jobBarrierStarted[id] = uv_now(&loop);
    } else if (it->second.expected != *expected || it->second.data.count(node)) {
        // Refused, not cut: two collectives a rank named alike.
        wire::JobBarrierDoneMsg refused{
            m->label,
            false,
            "",
            "another collective over other processes (or this node again) has that label",
            {}};
        sendTo(node, MessageType::JobBarrierDone, wire::encode(refused));
        return;
    }
    FenceLoad &load = fenceLoad[node];
    if (load.fences >= settings.maxOpenFencesPerServer ||
        m->data.size() > settings.maxFenceBytesPerServer - load.bytes) {
        c.close("too many job-wide barriers or bytes open");
        return;
    }
    ++load.fences;
    load.bytes += m->data.size();
    it->second.data[node] = std::move(m->data);
    if (m->assignContextId)
        jobBarrierWantsContextId.insert(id);
    // A server of the set may have left (its step ended): the barrier
    // cannot complete; those waiting learn it from their own deadline.
    if (it->second.data.size() < it->second.expected.size())
        return;
    wire::JobBarrierDoneMsg done{id, true, "", "", jobSteps->entriesOf(jobBarrierProcs[id])};
    // The label says what joins them (stepd_server/pmix_spawn.cpp): Open
    // MPI disconnects with a fence across the steps.
    if (id.rfind("connect ", 0) == 0)
        jobSteps->connect(done.steps, true);
    else if (id.rfind("disconnect ", 0) == 0 || id.rfind("fence ", 0) == 0)
        jobSteps->connect(done.steps, false);
    for (auto &[n, bytes] : it->second.data) {
        fenceLoad[n].fences -= 1;
        fenceLoad[n].bytes -= bytes.size();
        done.data += bytes;
    }
    if (jobBarrierWantsContextId.erase(id) && nextContextId > 0)
        done.contextId = nextContextId--;
    const auto to = std::move(it->second.expected);
    jobBarriers.erase(it);
    jobBarrierProcs.erase(id);
    jobBarrierStarted.erase(id);
    const std::string payload = wire::encode(done);
    for (auto n : to)
        sendTo(n, MessageType::JobBarrierDone, payload);
}

bool RendezvousHub::State::leftJob(std::uint32_t node) const {
    return !servers.count(node) && everConnected.count(node);
}

void RendezvousHub::State::failJobBarrier(std::map<std::string, Fence>::iterator it,
                                          const std::string &why) {
    const std::string payload =
        wire::encode(wire::JobBarrierDoneMsg{it->first, false, "", why, {}});
    for (auto &[n, bytes] : it->second.data) {
        fenceLoad[n].fences -= 1;
        fenceLoad[n].bytes -= bytes.size();
        sendTo(n, MessageType::JobBarrierDone, payload);
    }
    jobBarrierProcs.erase(it->first);
    jobBarrierStarted.erase(it->first);
    jobBarrierWantsContextId.erase(it->first);
    jobBarriers.erase(it);
}

void RendezvousHub::State::leaveJobBarriers(std::uint32_t node) {
    for (auto it = jobBarriers.begin(); it != jobBarriers.end();) {
        auto next = std::next(it);
        if (it->second.expected.count(node))
            failJobBarrier(it, "the processes of node index " + std::to_string(localOf(node)) +
                                   " of " + stepName(*jobSteps, stepOf(node)) +
                                   " ended before it completed");
        it = next;
    }
}

void RendezvousHub::State::expireJobBarriers() {
    if (settings.fenceTimeoutSec <= 0)
        return;
    const std::uint64_t limit = std::uint64_t(settings.fenceTimeoutSec) * 1000;
    for (auto it = jobBarriers.begin(); it != jobBarriers.end();) {
        auto next = std::next(it);
        if (uv_now(&loop) - jobBarrierStarted[it->first] >= limit)
            failJobBarrier(it, "not every process entered it within " +
                                   std::to_string(settings.fenceTimeoutSec) +
                                   " s (fence_timeout=)");
        it = next;
    }
}

} // namespace stepmap::hub
