#include "protocol/hub/hub_relay.hpp"

#include <netdb.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include <algorithm>

namespace stepmap::hub {

using wire::MessageType;

std::uint16_t relayPort(std::uint16_t first, std::uint16_t last, std::uint64_t seed,
                        std::uint32_t node) {
    const std::uint32_t size = std::uint32_t{last} - first + 1;
    return static_cast<std::uint16_t>(first + (seed + node) % size);
}

std::uint64_t relaySeed(const std::string &stepTag) {
    // FNV-1a: the same on every node, and steps of one job spread apart.
    std::uint64_t h = 0xcbf29ce484222325ull;
    for (unsigned char ch : stepTag)
        h = (h ^ ch) * 0x100000001b3ull;
    return h;
}

namespace {

std::string nodeText(std::uint32_t node) {
    return "node index " + std::to_string(node);
}

// Numeric, the child's end of its link (peer) or this node's (where the
// child reached it: its tree port is on the same address).
std::string linkAddress(uvnet::FrameConnection &c, bool peer) {
    sockaddr_storage addr{};
    int len = sizeof addr;
    char text[NI_MAXHOST] = {};
    auto *sa = reinterpret_cast<sockaddr *>(&addr);
    const int rc =
        peer ? uv_tcp_getpeername(c.tcp(), sa, &len) : uv_tcp_getsockname(c.tcp(), sa, &len);
    if (rc != 0 || getnameinfo(sa, static_cast<socklen_t>(len), text, sizeof text, nullptr, 0,
                               NI_NUMERICHOST) != 0)
        return "?";
    return text;
}

// Binds and listens on port of every address, IPv6 and IPv4 where the host
// has IPv6, else IPv4's.
int listenAny(uv_tcp_t *tcp, int port, uv_connection_cb onConnection) {
    sockaddr_in6 any6{};
    uv_ip6_addr("::", port, &any6);
    int rc = uv_tcp_bind(tcp, reinterpret_cast<const sockaddr *>(&any6), 0);
    if (rc == UV_EAFNOSUPPORT || rc == UV_EADDRNOTAVAIL) {
        sockaddr_in any4{};
        uv_ip4_addr("0.0.0.0", port, &any4);
        rc = uv_tcp_bind(tcp, reinterpret_cast<const sockaddr *>(&any4), 0);
    }
    return rc == 0 ? uv_listen(reinterpret_cast<uv_stream_t *>(tcp), 256, onConnection) : rc;
}

} // namespace

HubRelay::HubRelay(uv_loop_t *loop, Settings settings)
    : loop_(loop), settings_(std::move(settings)) {}

HubRelay::~HubRelay() {
    links_.clear(); // closes quietly: the children notice and join srun themselves
}

Expected<void> HubRelay::listen(int port) {
    listener_ = uvnet::makeHandle(uv_tcp_init, loop_);
    if (!listener_)
        return UserError{"cannot make a socket for the relay"};
    listener_->data = this;
    const int rc = listenAny(listener_.get(), port, [](uv_stream_t *server, int status) {
        if (status == 0)
            static_cast<HubRelay *>(server->data)->admit(server);
    });
    if (rc != 0) {
        listener_.reset();
        return UserError{"cannot take tree children on port " + std::to_string(port) + ": " +
                         uv_strerror(rc)};
    }
    const std::size_t children = settings_.shape.childrenOf(settings_.nodeIndex).size();
    HandshakeGate::Settings gs;
    gs.maxWaiting = 4 * children + 8;
    gs.maxWaitingPerSource = children + 4;
    gs.deadlineMs = settings_.handshakeDeadlineMs;
    gs.where = "relay";
    gs.log = settings_.log;
    gate_ = std::make_unique<HandshakeGate>(std::move(gs));
    sweep_ = uvnet::makeTimer(loop_);
    sweep_->data = this;
    const auto every = static_cast<std::uint64_t>(std::max(50, settings_.handshakeDeadlineMs / 4));
    uv_timer_start(
        sweep_.get(), [](uv_timer_t *t) { static_cast<HubRelay *>(t->data)->gate_->sweep(); },
        every, every);
    return {};
}

void HubRelay::admit(uv_stream_t *server) {
    uvnet::FrameConnection::Callbacks cb;
    cb.onFrames = [this](uvnet::FrameConnection &c, std::vector<wire::Frame> &f) {
        onFrames(c, f);
    };
    cb.onClosed = [this](uvnet::FrameConnection &c, const std::string &why) { onClosed(c, why); };
    auto c = uvnet::FrameConnection::accept(server, settings_.secret, cb);
    if (!c || c->closing() || drained_ || !gate_->admit(*c))
        return; // c goes: closed quietly
    auto *raw = c.get();
    links_.emplace(raw, Child{std::move(c), false, false, 0, false});
}

void HubRelay::join(Child &child) {
    auto &c = *child.conn;
    gate_->leave(c);
    const std::uint32_t node = c.channel().peerNode();
    const TreeShape &shape = settings_.shape;
    const bool mine = node > settings_.nodeIndex && node < shape.nodeCount() &&
                      shape.parentOf(node) == settings_.nodeIndex && shape.joinsThroughParent(node);
    if (!mine || joined_.count(node)) {
        c.close("unexpected or duplicate relay child " + nodeText(node));
        return;
    }
    child.joined = true;
    child.node = node;
    joined_[node] = &c;
    joinsToSend_.push_back({node, linkAddress(c, true)});
    if (welcome_)
        answer(child);
    noteJoins();
}

void HubRelay::answer(Child &child) {
    if (child.answered || !welcome_)
        return;
    child.answered = true;
    auto &c = *child.conn;
    if (!sendToChild(c, MessageType::Welcome, wire::encode(wire::WelcomeMsg{welcome_->first})))
        return;
    sendToChild(c, MessageType::TreeParent,
                wire::encode(wire::TreeParentMsg{settings_.nodeIndex, linkAddress(c, false),
                                                 welcome_->second}));
}

void HubRelay::welcomed(std::uint32_t fanOut, std::uint32_t treePort) {
    welcome_ = {fanOut, treePort};
    sendJoins();
    std::vector<uvnet::FrameConnection *> waiting;
    for (auto &[node, c] : joined_)
        waiting.push_back(c);
    // Answering may cut a link (it reads nothing): look each up again.
    for (auto *c : waiting)
        if (auto it = links_.find(c); it != links_.end() && !c->closing())
            answer(it->second);
}

bool HubRelay::takeJoinsBelow(Child &child, const std::string &payload) {
    auto m = wire::decodeJoinedBelow(payload);
    if (!m)
        return false;
    for (auto &joined : m->nodes) {
        if (joined.node == child.node || !settings_.shape.inSubtree(child.node, joined.node))
            return false;
        joinsToSend_.push_back(std::move(joined));
    }
    noteJoins();
    return true;
}

void HubRelay::noteJoins() {
    // Until this node is in, they wait with it (and go in one frame then).
    if (!welcome_)
        return;
    const std::uint32_t below = settings_.shape.subtreeSize(settings_.nodeIndex) - 1;
    if (joinsSent_ + joinsToSend_.size() >= below) {
        sendJoins();
        return;
    }
    if (joinBatch_ || joinsToSend_.empty())
        return;
    joinBatch_ = uvnet::makeTimer(loop_);
    joinBatch_->data = this;
    uv_timer_start(
        joinBatch_.get(), [](uv_timer_t *t) { static_cast<HubRelay *>(t->data)->sendJoins(); },
        kJoinBatchMs, 0);
}

void HubRelay::sendJoins() {
    joinBatch_.reset();
    if (joinsToSend_.empty())
        return;
    joinsSent_ += static_cast<std::uint32_t>(joinsToSend_.size());
    wire::JoinedBelowMsg m{std::move(joinsToSend_)};
    joinsToSend_.clear();
    settings_.sendUp(MessageType::JoinedBelow, wire::encode(m));
}

void HubRelay::onFrames(uvnet::FrameConnection &c, std::vector<wire::Frame> &frames) {
    for (auto &f : frames) {
        auto it = links_.find(&c);
        if (it == links_.end() || c.closing())
            return;
        Child &child = it->second;
        if (!child.joined) {
            join(child); // the first authenticated frame is the Hello
            continue;
        }
        if (child.leaving)
            return;
        if (f.type == MessageType::JoinedBelow) {
            if (!takeJoinsBelow(child, f.payload)) {
                c.close("relayed joins from outside " + nodeText(child.node) + "'s subtree");
                return;
            }
            continue;
        }
        // srun hears of a node's join before anything it says.
        sendJoins();
        if (f.type == MessageType::Relay) {
            // From deeper in the child's subtree: on unchanged.
            auto m = wire::decodeRelay(f.payload);
            if (!m || m->node == child.node || !settings_.shape.inSubtree(child.node, m->node)) {
                c.close("relay for a node outside " + nodeText(child.node) + "'s subtree");
                return;
            }
            settings_.sendUp(MessageType::Relay, std::move(f.payload));
            continue;
        }
        if (f.type == MessageType::RelayClosed) {
            auto m = wire::decodeNotice(f.payload);
            if (!m || m->rank == child.node || !settings_.shape.inSubtree(child.node, m->rank)) {
                c.close("relay end for a node outside " + nodeText(child.node) + "'s subtree");
                return;
            }
            settings_.sendUp(MessageType::RelayClosed, std::move(f.payload));
            continue;
        }
        if (f.type == MessageType::Shutdown)
            child.leaving = true;
        settings_.sendUp(MessageType::Relay,
                         wire::encode(wire::RelayMsg{child.node, static_cast<std::uint32_t>(f.type),
                                                     std::move(f.payload)}));
    }
}

void HubRelay::onClosed(uvnet::FrameConnection &c, const std::string &why) {
    auto it = links_.find(&c);
    if (it == links_.end())
        return;
    if (gate_)
        gate_->leave(c);
    const Child child{nullptr, it->second.joined, it->second.leaving, it->second.node, false};
    auto owned = std::move(it->second.conn);
    links_.erase(it);
    if (child.joined) {
        joined_.erase(child.node);
        // A child that said goodbye goes quietly; any other is lost to the
        // step, and srun says which and why (it may rejoin srun directly
        // when it is alive: srun then knows it again).
        if (!child.leaving && !drained_) {
            sendJoins();
            settings_.sendUp(MessageType::RelayClosed,
                             wire::encode(wire::NoticeMsg{child.node, why}));
        }
    }
    finishDrainIfDone();
}

bool HubRelay::sendToChild(uvnet::FrameConnection &c, MessageType type,
                           const std::string &payload) {
    const auto queued =
        uv_stream_get_write_queue_size(reinterpret_cast<const uv_stream_t *>(c.tcp()));
    if (queued > settings_.maxQueuedBytesPerChild) {
        c.close("it does not read what srun sends it through its relay (" + std::to_string(queued) +
                " bytes queued)");
        return false;
    }
    c.send(type, payload);
    return true;
}

bool HubRelay::down(wire::RelayMsg m) {
    const TreeShape &shape = settings_.shape;
    if (m.node == settings_.nodeIndex || !shape.inSubtree(settings_.nodeIndex, m.node))
        return false;
    const std::uint32_t child = shape.childToward(settings_.nodeIndex, m.node);
    auto it = joined_.find(child);
    if (it == joined_.end())
        return true; // gone meanwhile: its loss was reported
    if (child == m.node)
        sendToChild(*it->second, static_cast<MessageType>(m.type), m.payload);
    else
        sendToChild(*it->second, MessageType::Relay, wire::encode(m));
    return true;
}

// The port, its sweep and the handshakes under way go: a relay that no
// longer takes joins must not keep the server's loop running.
void HubRelay::stopTakingJoins() {
    listener_.reset();
    sweep_.reset();
    joinBatch_.reset();
    std::vector<uvnet::FrameConnection *> waiting;
    for (auto &[c, child] : links_)
        if (!child.joined)
            waiting.push_back(c);
    for (auto *c : waiting)
        c->close("the relay is leaving");
}

void HubRelay::shutdownAll(const std::string &payload) {
    if (shutDown_)
        return;
    shutDown_ = true;
    drained_ = [] {};
    stopTakingJoins();
    // A link may close at once (and leave joined_) as it is told.
    std::vector<uvnet::FrameConnection *> children;
    for (auto &[node, c] : joined_)
        children.push_back(c);
    for (auto *c : children) {
        c->send(MessageType::Shutdown, payload);
        c->closeAfterFlush("srun ends the step");
    }
}

void HubRelay::drain(unsigned atMostMs, std::function<void()> done) {
    sendJoins(); // srun knows them, and hears them leave
    drained_ = std::move(done);
    stopTakingJoins();
    if (joined_.empty()) {
        finishDrainIfDone();
        return;
    }
    settings_.log("waits up to " + std::to_string(atMostMs) + " ms for " +
                  std::to_string(joined_.size()) + " tree children to leave first");
    drainTimer_ = uvnet::makeTimer(loop_);
    drainTimer_->data = this;
    uv_timer_start(
        drainTimer_.get(),
        [](uv_timer_t *t) {
            auto *self = static_cast<HubRelay *>(t->data);
            self->settings_.log(std::to_string(self->joined_.size()) +
                                " tree children still here; they join srun directly");
            std::vector<uvnet::FrameConnection *> left;
            for (auto &[node, c] : self->joined_)
                left.push_back(c);
            for (auto *c : left)
                c->close("its relay is leaving");
        },
        atMostMs, 0);
}

void HubRelay::finishDrainIfDone() {
    if (!drained_ || !joined_.empty())
        return;
    drainTimer_.reset();
    auto done = std::exchange(drained_, [] {});
    done();
}

} // namespace stepmap::hub
