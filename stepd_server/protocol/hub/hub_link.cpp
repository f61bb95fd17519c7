#include "hub_link.hpp"

#include "wire/payloads.hpp"

namespace stepmap::hub {

using wire::MessageType;

HubLink::HubLink(uv_loop_t *loop, Settings settings, LinkHost &host,
                 std::function<void(const std::string &)> onLost)
    : loop_(loop), settings_(std::move(settings)), host_(host), statuses_(host.statuses()),
      onLost_(std::move(onLost)), timeline_(settings_.timeline) {}

HubLink::~HubLink() {
    onLost_ = nullptr;
    failAll("server is stopping");
    conn_.reset();
}

void HubLink::connect() {
    retry_ = uvnet::makeTimer(loop_);
    retry_->data = this;
    joinDeadline_ = uv_now(loop_) + static_cast<std::uint64_t>(settings_.joinRetryMs);
    open();
}

void HubLink::open() {
    uvnet::FrameConnection::Callbacks cb;
    cb.onFrames = [this](uvnet::FrameConnection &, std::vector<wire::Frame> &frames) {
        onFrames(frames);
    };
    cb.onClosed = [this](uvnet::FrameConnection &, const std::string &why) { onClosed(why); };
    conn_ = uvnet::FrameConnection::connect(loop_, settings_.hubHost, settings_.hubPort,
                                            settings_.secret, std::move(cb));
    // A failure to resolve or connect was reported (onClosed) already.
    if (conn_ && conn_->closing())
        conn_.reset();
}

void HubLink::onClosed(const std::string &why) {
    conn_.reset();
    ready_ = false;
    if (!everJoined_ && onLost_ && uv_now(loop_) + 250 < joinDeadline_) {
        host_.log("could not join srun's rendezvous (" + why + "); trying again");
        uv_timer_start(
            retry_.get(), [](uv_timer_t *t) { static_cast<HubLink *>(t->data)->open(); }, 250, 0);
        return;
    }
    failAll("lost the connection to srun's rendezvous: " + why);
    if (onLost_)
        onLost_("connection to srun's rendezvous at " + settings_.hubHost + ":" +
                std::to_string(settings_.hubPort) + " ended: " + why);
}

void HubLink::leave() {
    if (retry_)
        uv_timer_stop(retry_.get());
    host_.log("served " + std::to_string(fencesDone_) + " fences, asked " +
              std::to_string(modexAsked_) + " and answered " + std::to_string(modexServed_) +
              " direct-modex requests");
    if (!conn_)
        return;
    onLost_ = nullptr;
    timeline_.record(timeline::Mark::Leaving);
    if (ready_) {
        // srun -v's breakdown of the step (timeline/critical_path.hpp).
        conn_->send(MessageType::Timeline, timeline::encodeEvents(timeline_.events()));
        conn_->send(MessageType::Shutdown, wire::encode(wire::ShutdownMsg{0, "done"}));
    }
    conn_->closeAfterFlush("leaving");
}

void HubLink::send(MessageType type, std::string payload) {
    if (ready_ && conn_)
        conn_->send(type, payload);
    else
        queued_.emplace_back(type, std::move(payload));
}

void HubLink::onFrames(std::vector<wire::Frame> &frames) {
    for (auto &f : frames)
        if (!handle(f))
            return;
}

bool HubLink::handle(wire::Frame &f) {
    switch (f.type) {
    case MessageType::Challenge:
        conn_->send(conn_->channel().makeHello(settings_.nodeIndex));
        return true;
    case MessageType::Welcome:
        onWelcome();
        return true;
    case MessageType::FenceDone:
        return onFenceDone(f);
    case MessageType::DmodexRequest:
        return onDmodexRequest(f);
    case MessageType::DmodexResponse: {
        auto m = wire::decodeDmodexResponse(f.payload);
        if (!m) {
            conn_->close("malformed direct modex response");
            return false;
        }
        finishModex(m->requestId, m->status, std::move(m->data), "the owning node answered so");
        return true;
    }
    case MessageType::Shutdown: {
        auto m = wire::decodeShutdown(f.payload);
        std::string why = m ? m->reason : "shutdown";
        auto lost = std::move(onLost_);
        conn_->close("hub ends the step");
        if (lost)
            lost("srun ends the step: " + why);
        return false;
    }
    default:
        conn_->close("unexpected message type " + std::to_string(static_cast<int>(f.type)));
        return false;
    }
}

void HubLink::onWelcome() {
    // Only now is this server in the step: until then the hub may drop the
    // connection (it makes room when flooded) and we retry.
    ready_ = true;
    if (!everJoined_)
        timeline_.record(timeline::Mark::Joined);
    everJoined_ = true;
    host_.log("joined srun's rendezvous");
    for (auto &[type, payload] : queued_)
        conn_->send(type, payload);
    queued_.clear();
}

bool HubLink::onFenceDone(const wire::Frame &f) {
    auto m = wire::decodeFenceDone(f.payload);
    if (!m) {
        conn_->close("malformed fence result");
        return false;
    }
    auto it = fences_.find(m->fenceId);
    if (it == fences_.end())
        return true;
    auto done = std::move(it->second);
    fences_.erase(it);
    ++fencesDone_;
    if (m->status != statuses_.success)
        host_.log("fence " + m->fenceId + " ended with " + host_.statusText(m->status));
    done(m->status, std::move(m->data));
    return true;
}

bool HubLink::onDmodexRequest(const wire::Frame &f) {
    auto m = wire::decodeDmodexRequest(f.payload);
    if (!m || m->rank >= settings_.nodeOfRank.size() ||
        settings_.nodeOfRank[m->rank] != settings_.nodeIndex) {
        conn_->close("malformed direct modex request");
        return false;
    }
    auto req = *m;
    ++modexServed_;
    host_.localModex(req.rank, [this, req](int st, std::string data) {
        if (st != statuses_.success)
            host_.log("answering node index " + std::to_string(req.originNode) +
                      "'s direct-modex request for rank " + std::to_string(req.rank) + " with " +
                      host_.statusText(st) +
                      " (this node's PMIx library could not give the rank's data)");
        send(MessageType::DmodexResponse, wire::encode(wire::DmodexResponseMsg{
                                              req.requestId, req.originNode, st, std::move(data)}));
    });
    return true;
}

void HubLink::fence(std::vector<std::uint32_t> nodes, bool collect, std::string data,
                    DataReply reply) {
    const std::uint32_t seq = fencesStarted_++;
    timeline_.record(timeline::Mark::FenceEntered, seq);
    DataReply done = [this, seq, reply = std::move(reply)](int status, std::string bytes) {
        timeline_.record(timeline::Mark::FenceDone, seq);
        reply(status, std::move(bytes));
    };
    // Every participant sees the same sequence of fences over the same node
    // set, so (set, count) names a fence identically on all of them.
    std::string key;
    for (auto n : nodes)
        key += std::to_string(n) + ",";
    std::string id = key + "#" + std::to_string(fenceCounters_[key]++);
    if (nodes.size() == 1 && nodes[0] == settings_.nodeIndex) {
        done(statuses_.success, collect ? std::move(data) : std::string());
        return;
    }
    fences_[id] = std::move(done);
    send(MessageType::Fence,
         wire::encode(wire::FenceMsg{id, std::move(nodes), collect,
                                     collect ? std::move(data) : std::string()}));
}

void HubLink::directModex(std::uint32_t rank, DataReply done) {
    std::uint64_t id = nextModexId_++;
    ++modexAsked_;
    auto &pending = modex_[id];
    pending = PendingModex{this, id, rank, std::move(done), uvnet::makeTimer(loop_)};
    pending.timer->data = &pending; // a map entry stays where it is until erased
    uv_timer_start(
        pending.timer.get(),
        [](uv_timer_t *h) {
            auto *p = static_cast<PendingModex *>(h->data);
            p->link->finishModex(p->id, p->link->statuses_.timeout, {},
                                 "no answer within " +
                                     std::to_string(p->link->settings_.dmodexTimeoutSec) + " s");
        },
        static_cast<std::uint64_t>(settings_.dmodexTimeoutSec) * 1000, 0);
    send(MessageType::DmodexRequest,
         wire::encode(wire::DmodexRequestMsg{id, settings_.nodeIndex, rank}));
}

void HubLink::finishModex(std::uint64_t id, int status, std::string data,
                          const std::string &reason) {
    auto it = modex_.find(id);
    if (it == modex_.end())
        return;
    auto pending = std::move(it->second);
    modex_.erase(it);
    if (status != statuses_.success)
        host_.log("direct modex for rank " + std::to_string(pending.rank) +
                  " failed: " + host_.statusText(status) + " (" + reason + ")");
    pending.timer.reset();
    pending.done(status, std::move(data));
}

void HubLink::rankExited(std::uint32_t rank, int status) {
    send(MessageType::RankExit, wire::encode(wire::AbortMsg{rank, status, ""}));
}

void HubLink::abort(std::uint32_t rank, int status, std::string message) {
    send(MessageType::Abort, wire::encode(wire::AbortMsg{rank, status, std::move(message)}));
}

void HubLink::failAll(const std::string &why) {
    auto fences = std::move(fences_);
    fences_.clear();
    for (auto &[id, done] : fences) {
        host_.log("fence " + id + " failed: " + why);
        done(statuses_.lostConnection, {});
    }
    std::vector<std::uint64_t> ids;
    for (auto &[id, p] : modex_)
        ids.push_back(id);
    for (auto id : ids)
        finishModex(id, statuses_.lostConnection, {}, why);
}

} // namespace stepmap::hub
