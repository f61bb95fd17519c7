// HubLink's job-wide operations (hub/job_ids.hpp): spawns, a guest's word
// on its step, collectives over several steps.

#include "protocol/hub/hub_link.hpp"

namespace stepmap::hub {

using wire::MessageType;

void HubLink::spawn(wire::SpawnRequestMsg request, SpawnDone done) {
    if (lost_) {
        done(std::nullopt);
        return;
    }
    request.id = nextSpawnId_++;
    spawns_.emplace(request.id, std::move(done));
    send(MessageType::Spawn, wire::encode(request));
}

void HubLink::guestStep(const wire::GuestStepMsg &step) {
    send(MessageType::GuestStep, wire::encode(step));
}

void HubLink::jobBarrier(wire::JobBarrierMsg barrier, JobBarrierDone done) {
    if (lost_ || jobBarriers_.count(barrier.label)) {
        // The same processes joined twice at once on this node: PMIx
        // serialises a collective per set, so this is a caller's error.
        done(std::nullopt);
        return;
    }
    jobBarriers_.emplace(barrier.label, std::move(done));
    send(MessageType::JobBarrier, wire::encode(barrier));
}

bool HubLink::onSpawnReply(const wire::Frame &f) {
    auto m = wire::decodeSpawnReply(f.payload);
    if (!m) {
        conn_->close("malformed spawn reply");
        return false;
    }
    auto it = spawns_.find(m->id);
    if (it == spawns_.end())
        return true;
    auto done = std::move(it->second);
    spawns_.erase(it);
    done(std::move(*m));
    return true;
}

bool HubLink::onJobBarrierDone(const wire::Frame &f) {
    auto m = wire::decodeJobBarrierDone(f.payload);
    if (!m) {
        conn_->close("malformed job-wide barrier result");
        return false;
    }
    auto it = jobBarriers_.find(m->label);
    if (it == jobBarriers_.end())
        return true;
    auto done = std::move(it->second);
    jobBarriers_.erase(it);
    done(std::move(*m));
    return true;
}

void HubLink::failJobOperations() {
    auto spawns = std::move(spawns_);
    spawns_.clear();
    for (auto &[id, done] : spawns)
        done(std::nullopt);
    auto barriers = std::move(jobBarriers_);
    jobBarriers_.clear();
    for (auto &[label, done] : barriers)
        done(std::nullopt);
}

} // namespace stepmap::hub
