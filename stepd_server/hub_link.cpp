#include "hub_link.hpp"

#include "server_log.hpp"
#include "wire/payloads.hpp"

#include <pmix.h>

namespace stepmap::server {

using wire::MessageType;

HubLink::HubLink(uv_loop_t *loop, const StepConfig &config, PmixHost &host,
                 std::function<void(const std::string &)> onLost)
    : loop_(loop), config_(config), host_(host), onLost_(std::move(onLost)) {}

HubLink::~HubLink() {
    failAll("server is stopping");
    if (conn_)
        conn_->close("server is stopping");
}

void HubLink::connect() {
    retryOwner_ = uvnet::makeTimer(loop_);
    retry_ = retryOwner_.get();
    retry_->data = this;
    joinDeadline_ = uv_now(loop_) + 30000;
    open();
}

void HubLink::open() {
    uvnet::FrameConnection::Callbacks cb;
    cb.onFrames = [this](uvnet::FrameConnection &, std::vector<wire::Frame> &frames) {
        onFrames(frames);
    };
    cb.onClosed = [this](uvnet::FrameConnection &, const std::string &why) {
        conn_ = nullptr;
        ready_ = false;
        if (!everJoined_ && onLost_ && uv_now(loop_) + 250 < joinDeadline_) {
            logLine("could not join srun's rendezvous (" + why + "); trying again");
            uv_timer_start(
                retry_, [](uv_timer_t *t) { static_cast<HubLink *>(t->data)->open(); }, 250, 0);
            return;
        }
        failAll("lost the connection to srun's rendezvous: " + why);
        if (onLost_)
            onLost_("connection to srun's rendezvous at " + config_.hubHost + ":" +
                    std::to_string(config_.hubPort) + " ended: " + why);
    };
    conn_ = uvnet::FrameConnection::connect(loop_, config_.hubHost, config_.hubPort, config_.secret,
                                            std::move(cb));
}

void HubLink::leave() {
    if (retry_)
        uv_timer_stop(retry_);
    logLine("served " + std::to_string(fencesDone_) + " fences, asked " +
            std::to_string(modexAsked_) + " and answered " + std::to_string(modexServed_) +
            " direct-modex requests");
    if (!conn_)
        return;
    onLost_ = nullptr;
    if (ready_)
        conn_->send(MessageType::Shutdown, wire::encode(wire::ShutdownMsg{0, "done"}));
    conn_->closeAfterFlush("leaving");
}

void HubLink::send(MessageType type, std::string payload) {
    if (ready_ && conn_)
        conn_->send(type, payload);
    else
        queued_.emplace_back(type, std::move(payload));
}

void HubLink::onFrames(std::vector<wire::Frame> &frames) {
    for (auto &f : frames) {
        switch (f.type) {
        case MessageType::Challenge:
            conn_->send(conn_->channel().makeHello(config_.nodeIndex));
            break;
        case MessageType::Welcome:
            // Only now is this server in the step: until then the hub may
            // drop the connection (it makes room when flooded) and we retry.
            ready_ = true;
            everJoined_ = true;
            logLine("joined srun's rendezvous");
            for (auto &[type, payload] : queued_)
                conn_->send(type, payload);
            queued_.clear();
            break;
        case MessageType::FenceDone: {
            auto m = wire::decodeFenceDone(f.payload);
            if (!m) {
                conn_->close("malformed fence result");
                return;
            }
            auto it = fences_.find(m->fenceId);
            if (it == fences_.end())
                break;
            auto done = std::move(it->second);
            fences_.erase(it);
            ++fencesDone_;
            if (m->status != PMIX_SUCCESS)
                logLine("fence " + m->fenceId + " ended with " + PMIx_Error_string(m->status));
            done(m->status, std::move(m->data));
            break;
        }
        case MessageType::DmodexRequest: {
            auto m = wire::decodeDmodexRequest(f.payload);
            if (!m || m->rank >= config_.plan.ranks.size() ||
                config_.plan.ranks[m->rank].node != config_.nodeIndex) {
                conn_->close("malformed direct modex request");
                return;
            }
            auto req = *m;
            ++modexServed_;
            host_.localModex(req.rank, [this, req](pmix_status_t st, std::string data) {
                if (st != PMIX_SUCCESS)
                    logLine("answering node index " + std::to_string(req.originNode) +
                            "'s direct-modex request for rank " + std::to_string(req.rank) +
                            " with " + PMIx_Error_string(st) +
                            " (this node's PMIx library could not give the rank's data)");
                send(MessageType::DmodexResponse,
                     wire::encode(wire::DmodexResponseMsg{req.requestId, req.originNode, st,
                                                          std::move(data)}));
            });
            break;
        }
        case MessageType::DmodexResponse: {
            auto m = wire::decodeDmodexResponse(f.payload);
            if (!m) {
                conn_->close("malformed direct modex response");
                return;
            }
            finishModex(m->requestId, m->status, std::move(m->data), "the owning node answered so");
            break;
        }
        case MessageType::Shutdown: {
            auto m = wire::decodeShutdown(f.payload);
            std::string why = m ? m->reason : "shutdown";
            auto lost = std::move(onLost_);
            conn_->close("hub ends the step");
            if (lost)
                lost("srun ends the step: " + why);
            return;
        }
        default:
            conn_->close("unexpected message type " + std::to_string(static_cast<int>(f.type)));
            return;
        }
    }
}

void HubLink::fence(std::vector<std::uint32_t> nodes, bool collect, std::string data,
                    DataReply done) {
    // Every participant sees the same sequence of fences over the same node
    // set, so (set, count) names a fence identically on all of them.
    std::string key;
    for (auto n : nodes)
        key += std::to_string(n) + ",";
    std::string id = key + "#" + std::to_string(fenceCounters_[key]++);
    if (nodes.size() == 1 && nodes[0] == config_.nodeIndex) {
        done(PMIX_SUCCESS, collect ? std::move(data) : std::string());
        return;
    }
    fences_[id] = std::move(done);
    send(MessageType::Fence,
         wire::encode(wire::FenceMsg{id, std::move(nodes), collect,
                                     collect ? std::move(data) : std::string()}));
}

namespace {

// A direct-modex deadline: PMIx sets none, so the host must.
struct ModexTimer {
    uv_timer_t timer{};
    HubLink *link;
    std::uint64_t id;
};

} // namespace

void HubLink::directModex(std::uint32_t rank, DataReply done) {
    std::uint64_t id = nextModexId_++;
    ++modexAsked_;
    auto *t = new ModexTimer{{}, this, id};
    uv_timer_init(loop_, &t->timer);
    t->timer.data = t;
    modex_[id] = PendingModex{std::move(done), &t->timer, rank};
    uv_timer_start(
        &t->timer,
        [](uv_timer_t *h) {
            auto *mt = static_cast<ModexTimer *>(h->data);
            mt->link->finishModex(mt->id, PMIX_ERR_TIMEOUT, {},
                                  "no answer within " +
                                      std::to_string(mt->link->config_.dmodexTimeoutSec) + " s");
        },
        static_cast<std::uint64_t>(config_.dmodexTimeoutSec) * 1000, 0);
    send(MessageType::DmodexRequest,
         wire::encode(wire::DmodexRequestMsg{id, config_.nodeIndex, rank}));
}

void HubLink::finishModex(std::uint64_t id, pmix_status_t status, std::string data,
                          const std::string &reason) {
    auto it = modex_.find(id);
    if (it == modex_.end())
        return;
    auto pending = std::move(it->second);
    modex_.erase(it);
    if (status != PMIX_SUCCESS)
        logLine("direct modex for rank " + std::to_string(pending.rank) +
                " failed: " + PMIx_Error_string(status) + " (" + reason + ")");
    uv_timer_stop(pending.timer);
    uv_close(reinterpret_cast<uv_handle_t *>(pending.timer),
             [](uv_handle_t *h) { delete static_cast<ModexTimer *>(h->data); });
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
        logLine("fence " + id + " failed: " + why);
        done(PMIX_ERR_LOST_CONNECTION, {});
    }
    std::vector<std::uint64_t> ids;
    for (auto &[id, p] : modex_)
        ids.push_back(id);
    for (auto id : ids)
        finishModex(id, PMIX_ERR_LOST_CONNECTION, {}, why);
}

} // namespace stepmap::server
