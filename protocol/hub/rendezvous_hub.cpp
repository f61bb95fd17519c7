#include "protocol/hub/rendezvous_hub.hpp"

#include "protocol/hub/data_reply.hpp"
#include "protocol/hub/job_ids.hpp"
#include "protocol/hub/rendezvous_state.hpp"
#include "protocol/hub/tree_shape.hpp"
#include "protocol/timeline/step_timeline.hpp"

#include "os/unique_fd.hpp"
#include "protocol/uv/frame_connection.hpp"
#include "protocol/uv/uv_handle.hpp"
#include "protocol/wire/name_payloads.hpp"
#include "protocol/wire/payloads.hpp"
#include "protocol/wire/profile_payloads.hpp"

#include <netdb.h>
#include <pthread.h>
#include <sys/socket.h>
#include <unistd.h>
#include <uv.h>

#include <algorithm>
#include <chrono>
#include <csignal>
#include <cstring>
#include <ctime>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <random>
#include <set>
#include <thread>

namespace stepmap::hub {

namespace {

// An address as text, e.g. "10.1.2.3"; "?" if it cannot be printed.
std::string numericText(const sockaddr *addr, socklen_t len) {
    char text[NI_MAXHOST] = {};
    if (getnameinfo(addr, len, text, sizeof text, nullptr, 0, NI_NUMERICHOST) != 0)
        return "?";
    return text;
}

std::string peerAddress(uvnet::FrameConnection &c) {
    sockaddr_storage addr{};
    int len = sizeof addr;
    if (uv_tcp_getpeername(c.tcp(), reinterpret_cast<sockaddr *>(&addr), &len) != 0)
        return "?";
    return numericText(reinterpret_cast<sockaddr *>(&addr), static_cast<socklen_t>(len));
}

} // namespace

std::vector<uvnet::FrameConnection *> RendezvousHub::State::peersIn(PeerState state) const {
    std::vector<uvnet::FrameConnection *> out;
    for (const auto &[c, peer] : peers)
        if (peer.state == state)
            out.push_back(c);
    return out;
}

void RendezvousHub::State::admit(uv_stream_t *server) {
    uvnet::FrameConnection::Callbacks cb;
    cb.onFrames = [this](uvnet::FrameConnection &c, std::vector<wire::Frame> &f) {
        onFrames(c, f);
    };
    cb.onClosed = [this](uvnet::FrameConnection &c, const std::string &why) { onClosed(c, why); };
    // A guest step's servers carry their step's key (job_ids.hpp).
    auto c = uvnet::FrameConnection::accept(server, secret, cb, [this](std::uint32_t node) {
        return stepOf(node) == 0 ? secret : guestKey(secret, stepOf(node));
    });
    if (!c || c->closing() || !gate->admit(*c))
        return; // c goes: closed quietly
    auto *raw = c.get();
    peers.emplace(raw, Peer{std::move(c), PeerState::Unauthenticated, 0});
}

void RendezvousHub::State::sendTo(std::uint32_t node, MessageType type,
                                  const std::string &payload) {
    auto it = servers.find(node);
    if (it == servers.end())
        return;
    // A server must read what srun sends it: what it leaves unread is
    // srun's memory, and others (its fence partners, those it asks for
    // data) decide how much.
    auto *c = it->second;
    const auto queued =
        uv_stream_get_write_queue_size(reinterpret_cast<const uv_stream_t *>(c->tcp()));
    if (queued > settings.maxQueuedBytesPerServer) {
        c->close("it does not read what srun sends it (" + std::to_string(queued) +
                 " bytes queued)");
        return;
    }
    // A node that joined through its tree parent is reached through the
    // relays it came by (hub/hub_relay.hpp).
    if (auto peer = peers.find(c); peer != peers.end() && peer->second.node != node) {
        c->send(MessageType::Relay,
                wire::encode(wire::RelayMsg{node, static_cast<std::uint32_t>(type), payload}));
        return;
    }
    c->send(type, payload);
}

void RendezvousHub::State::fail(const std::string &why) {
    if (stopping)
        return;
    if (events.onFailure)
        events.onFailure(why);
}

void RendezvousHub::State::onFrames(uvnet::FrameConnection &c, std::vector<wire::Frame> &frames) {
    for (auto &f : frames) {
        auto it = peers.find(&c);
        if (it == peers.end())
            return;
        Peer &peer = it->second;
        if (peer.state == PeerState::Unauthenticated) {
            // The first authenticated frame is the Hello.
            join(peer);
            if (c.closing())
                return;
            continue;
        }
        if (peer.state == PeerState::Leaving)
            return; // the step is over for it
        handle(peer.node, c, f);
        if (c.closing())
            return;
    }
}

void RendezvousHub::State::join(Peer &peer) {
    auto &c = *peer.conn;
    gate->leave(c);
    std::uint32_t node = c.channel().peerNode();
    peer.node = node;
    if (!admitServer(node, c, peerAddress(c), true)) {
        c.close("unexpected or duplicate server for node " + std::to_string(node));
        return;
    }
    peer.state = PeerState::Joined;
    ++directJoins;
}

bool RendezvousHub::State::admitServer(std::uint32_t node, uvnet::FrameConnection &c,
                                       const std::string &seenAt, bool direct) {
    // A spawned step's server (a guest) uses this hub for the job-wide
    // operations only: no fence tree, no say in the step's start.
    const bool guest = stepOf(node) != 0;
    // A server that joined through its tree parent may come back directly
    // when that parent leaves first, or its relay ends.
    auto route = servers.find(node);
    const bool relayedBefore = route != servers.end() && route->second != &c &&
                               peers.count(route->second) && peers.at(route->second).node != node;
    const bool rejoin =
        !guest && direct && everConnected.count(node) && (orphans.count(node) || relayedBefore);
    // A guest node joins once: one that left does not come back, and
    // nobody else of its step takes its place. (Only the step's own
    // servers hold the step's secret; a guest step's key is its own.)
    if (!(guest ? jobSteps->mayJoin(node) : serverNodes.count(node) > 0) ||
        (route != servers.end() && !rejoin) || (guest && everConnected.count(node)))
        return false;
    servers[node] = &c;
    orphans.erase(node);
    addresses[node] = seenAt;
    everConnected.insert(node);
    // One that joined through its tree parent was welcomed there.
    if (direct)
        sendTo(node, MessageType::Welcome, wire::encode(wire::WelcomeMsg{guest ? 0 : fanOut}));
    if (rejoin)
        return true;
    if (auto w = waitingForServer.find(node); w != waitingForServer.end()) {
        for (auto &[origin, payload] : w->second) {
            --waitingFrom[origin];
            sendTo(node, MessageType::DmodexRequest, payload);
        }
        waitingForServer.erase(w);
    }
    if (guest)
        return true;
    if (fanOut > 0 && node > 0)
        sendTreeParent(node);
    if (events.onJoined)
        events.onJoined(node);
    return true;
}

void RendezvousHub::State::onRelay(std::uint32_t from, uvnet::FrameConnection &c, wire::Frame &f) {
    auto m = wire::decodeRelay(f.payload);
    const TreeShape shape(static_cast<std::uint32_t>(serverNodes.size()), fanOut);
    // Only a step server's own subtree, below the level srun takes itself.
    if (!m || fanOut == 0 || stepOf(from) != 0 || m->node == from ||
        !shape.inSubtree(from, m->node) || !shape.joinsThroughParent(m->node)) {
        c.close("malformed relay");
        return;
    }
    const auto type = static_cast<MessageType>(m->type);
    auto route = servers.find(m->node);
    if (route == servers.end() && orphans.erase(m->node)) {
        // Its relay's own link went (that server left first) and its
        // relay joined again: it is heard of again through the new link.
        route = servers.emplace(m->node, &c).first;
    }
    if (route == servers.end()) {
        if (everConnected.count(m->node))
            return; // it left meanwhile
        c.close("relay for node " + std::to_string(m->node) + ", which has not joined");
        return;
    }
    // Heard through this link now (its old relay may have gone), unless it
    // has come back directly.
    if (auto peer = peers.find(route->second); peer == peers.end() || peer->second.node != m->node)
        route->second = &c;
    wire::Frame inner{type, std::move(m->payload)};
    handle(m->node, c, inner);
}

void RendezvousHub::State::onJoinedBelow(std::uint32_t from, uvnet::FrameConnection &c,
                                         const wire::Frame &f) {
    auto m = wire::decodeJoinedBelow(f.payload);
    const TreeShape shape(static_cast<std::uint32_t>(serverNodes.size()), std::max(fanOut, 1u));
    // From a relay on its own link (relays below it merge theirs into its).
    auto peer = peers.find(&c);
    if (!m || fanOut == 0 || stepOf(from) != 0 || peer == peers.end() ||
        peer->second.node != from) {
        c.close("malformed relayed joins");
        return;
    }
    ++relayedJoinFrames;
    for (const auto &joined : m->nodes) {
        if (joined.node == from || !shape.inSubtree(from, joined.node) ||
            !shape.joinsThroughParent(joined.node)) {
            c.close("relayed join of node " + std::to_string(joined.node) + ", outside node " +
                    std::to_string(from) + "'s subtree");
            return;
        }
        if (!admitServer(joined.node, c, joined.address, false)) {
            c.close("unexpected or duplicate server for node " + std::to_string(joined.node) +
                    " (through node " + std::to_string(from) + ")");
            return;
        }
    }
}

void RendezvousHub::State::onRelayClosed(std::uint32_t from, uvnet::FrameConnection &c,
                                         const wire::Frame &f) {
    auto m = wire::decodeNotice(f.payload);
    const TreeShape shape(static_cast<std::uint32_t>(serverNodes.size()), std::max(fanOut, 1u));
    if (!m || fanOut == 0 || m->rank == from || !shape.inSubtree(from, m->rank)) {
        c.close("malformed relay end");
        return;
    }
    auto route = servers.find(m->rank);
    if (route == servers.end() || route->second != &c)
        return; // it left, or came back directly
    servers.erase(route);
    names.forgetNode(m->rank);
    fail("lost the stepmap server of " + nodeName(m->rank) + ": its link to its tree parent " +
         nodeName(shape.parentOf(m->rank)) + " ended: " + m->text);
}

std::size_t RendezvousHub::State::forgetRoutesThrough(uvnet::FrameConnection &c,
                                                      std::uint32_t relay) {
    std::size_t n = 0;
    for (auto it = servers.begin(); it != servers.end();) {
        if (it->second == &c && it->first != relay) {
            orphans.insert(it->first);
            it = servers.erase(it);
            ++n;
        } else {
            ++it;
        }
    }
    return n;
}

void RendezvousHub::State::handle(std::uint32_t node, uvnet::FrameConnection &c, wire::Frame &f) {
    if (stepOf(node) != 0 && !guestMaySend(f.type)) {
        c.close("message type " + std::to_string(static_cast<int>(f.type)) +
                " from a spawned step's server");
        return;
    }
    switch (f.type) {
    case MessageType::Spawn:
        onSpawn(node, c, f);
        return;
    case MessageType::GuestStep:
        onGuestStep(node, c, f);
        return;
    case MessageType::JobBarrier:
        onJobBarrier(node, c, f);
        return;
    case MessageType::Fence:
        onFence(node, c, f);
        return;
    case MessageType::DmodexRequest:
        onDmodexRequest(node, c, f);
        return;
    case MessageType::TreeListen:
        onTreeListen(node, c, f);
        return;
    case MessageType::TreeRelay:
        onTreeRelay(node, c, f);
        return;
    case MessageType::DmodexResponse: {
        auto m = wire::decodeDmodexResponse(f.payload);
        if (m && !isServer(m->originNode) && everConnected.count(m->originNode))
            return; // the asking server left meanwhile
        if (!m || !isServer(m->originNode) || m->status == kHubRankGone) {
            c.close("malformed direct modex response");
            return;
        }
        sendTo(m->originNode, MessageType::DmodexResponse, f.payload);
        return;
    }
    case MessageType::Abort: {
        auto m = wire::decodeAbort(f.payload);
        if (!m) {
            c.close("malformed abort");
            return;
        }
        if (events.onAbort)
            events.onAbort(m->rank, m->status, m->message);
        return;
    }
    case MessageType::RankExit:
        onRankExit(node, c, f);
        return;
    case MessageType::ProfileState:
        onProfileState(node, c, f);
        return;
    case MessageType::NameRequest:
        onNameRequest(node, c, f);
        return;
    case MessageType::FenceStuck:
        onFenceStuck(node, c, f);
        return;
    case MessageType::FenceEntered:
        onFenceEntered(node, c, f);
        return;
    case MessageType::Notice:
        onNotice(node, c, f);
        return;
    case MessageType::LinkLost:
        onLinkLost(node, c, f);
        return;
    case MessageType::Timeline: {
        auto marks = timeline::decodeEvents(f.payload);
        if (!marks) {
            c.close("malformed timeline");
            return;
        }
        if (events.onTimeline && stepOf(node) == 0)
            events.onTimeline(node, std::move(*marks));
        return;
    }
    case MessageType::Exchange: {
        auto counters = timeline::decodeCounters(f.payload);
        if (!counters) {
            c.close("malformed exchange counters");
            return;
        }
        if (events.onExchange && stepOf(node) == 0)
            events.onExchange(node, *counters);
        return;
    }
    case MessageType::Shutdown:
        // The server leaves normally (its tasks are done): nobody is left
        // to answer its waiting lookups, which must not take a name.
        servers.erase(node);
        names.forgetNode(node);
        leaveJobBarriers(node);
        if (peers[&c].node != node)
            return; // relayed: its relay stays
        // Those it still relayed (they outlive it) join again directly.
        forgetRoutesThrough(c, node);
        peers[&c].state = PeerState::Leaving;
        c.close("server left");
        return;
    case MessageType::Relay:
        onRelay(node, c, f);
        return;
    case MessageType::RelayClosed:
        onRelayClosed(node, c, f);
        return;
    case MessageType::JoinedBelow:
        onJoinedBelow(node, c, f);
        return;
    default:
        c.close("unexpected message type " + std::to_string(static_cast<int>(f.type)));
        return;
    }
}

void RendezvousHub::State::onFence(std::uint32_t node, uvnet::FrameConnection &c,
                                   const wire::Frame &f) {
    auto m = wire::decodeFence(f.payload);
    if (!m) {
        c.close("malformed fence");
        return;
    }
    const std::string fenceText = "fence " + m->fenceId;
    // Only the step's servers, each once, in order, the sender among them:
    // a fence naming any other node would never complete.
    const bool steps = !m->nodes.empty() &&
                       std::adjacent_find(m->nodes.begin(), m->nodes.end(),
                                          std::greater_equal<>()) == m->nodes.end() &&
                       std::all_of(m->nodes.begin(), m->nodes.end(),
                                   [this](std::uint32_t n) { return serverNodes.count(n) > 0; }) &&
                       std::binary_search(m->nodes.begin(), m->nodes.end(), node);
    if (!steps) {
        c.close(fenceText + " names nodes that are not the step's servers, or not in order");
        return;
    }
    auto it = fences.find(m->fenceId);
    if (it != fences.end() && !std::equal(it->second.expected.begin(), it->second.expected.end(),
                                          m->nodes.begin(), m->nodes.end())) {
        c.close(fenceText + " names other nodes than the servers that opened it");
        return;
    }
    if (it != fences.end() && it->second.data.count(node)) {
        c.close("node " + std::to_string(node) + " is in " + fenceText + " twice");
        return;
    }
    FenceLoad &load = fenceLoad[node];
    if (load.fences >= settings.maxOpenFencesPerServer ||
        m->data.size() > settings.maxFenceBytesPerServer - load.bytes) {
        c.close("more than " + std::to_string(settings.maxOpenFencesPerServer) + " fences or " +
                std::to_string(settings.maxFenceBytesPerServer) +
                " bytes of fences open that the other servers have not completed");
        return;
    }
    if (it == fences.end()) {
        it = fences.emplace(m->fenceId, Fence{}).first;
        it->second.expected.insert(m->nodes.begin(), m->nodes.end());
    }
    Fence &fence = it->second;
    ++load.fences;
    load.bytes += m->data.size();
    fence.data[node] = std::move(m->data);
    if (fence.data.size() < fence.expected.size())
        return;
    std::string all;
    for (auto &[n, bytes] : fence.data) {
        fenceLoad[n].fences -= 1;
        fenceLoad[n].bytes -= bytes.size();
        all += bytes;
    }
    const std::set<std::uint32_t> to = std::move(fence.expected);
    fences.erase(it);
    std::string payload = wire::encode(wire::FenceDoneMsg{m->fenceId, 0, std::move(all)});
    for (auto n : to)
        sendTo(n, MessageType::FenceDone, payload);
}

void RendezvousHub::State::onTreeListen(std::uint32_t node, uvnet::FrameConnection &c,
                                        const wire::Frame &f) {
    auto m = wire::decodeTreeListen(f.payload);
    const TreeShape shape(static_cast<std::uint32_t>(serverNodes.size()), fanOut);
    if (!m || fanOut == 0 || shape.childrenOf(node).empty() || treeListeners.count(node)) {
        c.close("malformed fence tree listener");
        return;
    }
    treeListeners[node] = {addresses[node], m->port};
    for (auto child : shape.childrenOf(node))
        sendTreeParent(child);
}

void RendezvousHub::State::onTreeRelay(std::uint32_t node, uvnet::FrameConnection &c,
                                       const wire::Frame &f) {
    // Only between tree neighbours: a child and its parent, either way.
    auto m = wire::decodeTreeRelay(f.payload);
    const auto count = static_cast<std::uint32_t>(serverNodes.size());
    const TreeShape shape(count, std::max<std::uint32_t>(fanOut, 1));
    const bool neighbours = m && fanOut > 0 && m->node < count && m->node != node &&
                            ((node != 0 && m->node == shape.parentOf(node)) ||
                             (m->node != 0 && shape.parentOf(m->node) == node));
    if (!neighbours) {
        c.close("malformed fence tree relay");
        return;
    }
    sendTo(m->node, MessageType::TreeRelay,
           wire::encode(wire::TreeRelayMsg{node, std::move(m->payload)}));
}

void RendezvousHub::State::sendTreeParent(std::uint32_t child) {
    const std::uint32_t parent =
        TreeShape(static_cast<std::uint32_t>(serverNodes.size()), fanOut).parentOf(child);
    auto where = treeListeners.find(parent);
    auto route = servers.find(child);
    if (where == treeListeners.end() || route == servers.end())
        return;
    // One that joined through its tree parent was told there.
    if (auto peer = peers.find(route->second); peer == peers.end() || peer->second.node != child)
        return;
    sendTo(child, MessageType::TreeParent,
           wire::encode(wire::TreeParentMsg{parent, where->second.first, where->second.second}));
}

void RendezvousHub::State::onDmodexRequest(std::uint32_t node, uvnet::FrameConnection &c,
                                           const wire::Frame &f) {
    auto m = wire::decodeDmodexRequest(f.payload);
    auto ownerNode = m ? nodeOf(m->rank) : std::nullopt;
    // A rank of this step that does not exist is the asker's error; one of
    // another step that ended (or never was), or whose server left, is
    // answered so.
    if (!m || m->originNode != node || (!ownerNode && stepOf(m->rank) == 0)) {
        c.close("malformed direct modex request");
        return;
    }
    if (!ownerNode || leftJob(*ownerNode)) {
        sendTo(node, MessageType::DmodexResponse,
               wire::encode(wire::DmodexResponseMsg{m->requestId, node, kHubRankGone, {}}));
        return;
    }
    std::uint32_t owner = *ownerNode;
    ++modexRouted;
    if (!servers.count(owner)) {
        if (waitingFrom[node] >= settings.maxWaitingRequestsPerServer) {
            c.close("more than " + std::to_string(settings.maxWaitingRequestsPerServer) +
                    " direct-modex requests waiting for servers that have not joined");
            return;
        }
        ++waitingFrom[node];
        waitingForServer[owner].emplace_back(node, f.payload);
        return;
    }
    sendTo(owner, MessageType::DmodexRequest, f.payload);
}

void RendezvousHub::State::onNameRequest(std::uint32_t node, uvnet::FrameConnection &c,
                                         const wire::Frame &f) {
    auto m = wire::decodeNameRequest(f.payload);
    // Only for the server's own ranks: a node cannot publish as another's.
    if (!m || nodeOf(m->rank) != node) {
        c.close("malformed name request");
        return;
    }
    switch (m->op) {
    case wire::NameOp::Publish: {
        std::vector<NameEntry> entries;
        for (std::size_t i = 0; i < m->keys.size(); ++i)
            entries.push_back(NameEntry{std::move(m->keys[i]), m->rank, node,
                                        static_cast<NameScope>(m->scope), m->firstRead,
                                        std::move(m->values[i])});
        auto published = names.publish(std::move(entries));
        sendNameAnswer(NameAnswer{m->id, node, published.status, {}});
        for (const NameAnswer &done : published.completed)
            sendNameAnswer(done);
        return;
    }
    case wire::NameOp::Lookup: {
        const std::uint64_t until =
            m->wait && m->timeoutSec ? uv_now(&loop) + std::uint64_t{m->timeoutSec} * 1000 : 0;
        NameLookup lookup{.id = m->id,
                          .node = node,
                          .rank = m->rank,
                          .keys = std::move(m->keys),
                          .nodeOnly = m->scope != 0,
                          .wait = m->wait,
                          .atLeast = m->atLeast,
                          .deadlineMs = until};
        for (const NameAnswer &answer : names.lookup(std::move(lookup)))
            sendNameAnswer(answer);
        return;
    }
    case wire::NameOp::Unpublish:
        sendNameAnswer(NameAnswer{m->id, node, names.unpublish(m->rank, m->keys), {}});
        return;
    }
}

void RendezvousHub::State::sendNameAnswer(const NameAnswer &answer) {
    wire::NameReplyMsg reply;
    reply.id = answer.id;
    reply.status = static_cast<std::uint8_t>(answer.status);
    for (const NameEntry &e : answer.entries)
        reply.entries.push_back(
            {e.key, localOf(e.rank), e.value, jobSteps->nspaceOf(stepOf(e.rank))});
    sendTo(answer.node, MessageType::NameReply, wire::encode(reply));
}

void RendezvousHub::State::expireNames() {
    for (const NameAnswer &answer : names.expire(uv_now(&loop)))
        sendNameAnswer(answer);
}

void RendezvousHub::State::onNotice(std::uint32_t node, uvnet::FrameConnection &c,
                                    const wire::Frame &f) {
    auto m = wire::decodeNotice(f.payload);
    if (!m || nodeOf(m->rank) != node) {
        c.close("malformed notice");
        return;
    }
    if (++notices[node] <= kMaxNoticesPerServer && events.onNotice)
        events.onNotice(localOf(m->rank),
                        stepOf(m->rank) == 0
                            ? m->text
                            : "(spawned step " + jobSteps->tagOf(stepOf(m->rank)) + ") " + m->text);
}

std::string RendezvousHub::State::nodeName(std::uint32_t node) const {
    const std::uint32_t local = localOf(node);
    return local < settings.nodeNames.size() ? settings.nodeNames[local]
                                             : "node index " + std::to_string(local);
}

void RendezvousHub::State::onLinkLost(std::uint32_t node, uvnet::FrameConnection &c,
                                      const wire::Frame &f) {
    auto m = wire::decodeNotice(f.payload);
    if (!m || m->rank > kLocalMask || m->rank == localOf(node)) {
        c.close("malformed link report");
        return;
    }
    // Reported by the nodes of a spawned step: that step's srun says it.
    if (stepOf(node) != 0)
        return;
    fail("the network link between " + nodeName(node) + " and " + nodeName(m->rank) +
         " failed: " + nodeName(node) + "'s server lost its direct link to " + nodeName(m->rank) +
         "'s (" + m->text + ")");
}

void RendezvousHub::State::onFenceStuck(std::uint32_t node, uvnet::FrameConnection &c,
                                        const wire::Frame &f) {
    auto m = wire::decodeFenceProbe(f.payload);
    const std::uint32_t bound = serverNodes.empty() ? 0 : *serverNodes.rbegin() + 1;
    auto nodes = m ? fenceNodes(m->fenceId, bound) : std::nullopt;
    // A server reports only a fence of its own.
    if (!nodes || !std::binary_search(nodes->begin(), nodes->end(), node)) {
        c.close("malformed fence report");
        return;
    }
    std::set<std::uint32_t> joined;
    for (const auto &[n, conn] : servers)
        joined.insert(n);
    auto start = fenceProbes->stuck(m->fenceId, *nodes, joined);
    for (std::uint32_t n : start.ask)
        sendTo(n, MessageType::FenceQuery, wire::encode(wire::FenceProbeMsg{m->fenceId}));
    if (start.verdict)
        fail(*start.verdict);
}

void RendezvousHub::State::onFenceEntered(std::uint32_t node, uvnet::FrameConnection &c,
                                          const wire::Frame &f) {
    auto m = wire::decodeFenceProbe(f.payload);
    if (!m) {
        c.close("malformed fence answer");
        return;
    }
    if (auto verdict = fenceProbes->answer(m->fenceId, node, m->entered, m->waiting))
        fail(*verdict);
}

void RendezvousHub::State::onRankExit(std::uint32_t node, uvnet::FrameConnection &c,
                                      const wire::Frame &f) {
    auto m = wire::decodeAbort(f.payload);
    // Only the server's own ranks, and an exit status srun can exit with.
    if (!m || m->rank >= nodeOfRank.size() || nodeOfRank[m->rank] != node || m->status <= 0 ||
        m->status > 255) {
        c.close("malformed rank exit");
        return;
    }
    if (events.onRankExit)
        events.onRankExit(m->rank, m->status);
    // The other servers tell their ranks when the step recovers from a
    // failed rank (--with-ft=ulfm); they ignore it otherwise.
    const std::string payload = wire::encode(wire::AbortMsg{m->rank, m->status, ""});
    for (const auto &[other, connection] : servers)
        if (other != node && stepOf(other) == stepOf(node))
            sendTo(other, MessageType::RankFailed, payload);
}

void RendezvousHub::State::onProfileState(std::uint32_t node, uvnet::FrameConnection &c,
                                          const wire::Frame &f) {
    auto m = wire::decodeProfileState(f.payload);
    if (!m || profileStates.count(node)) {
        c.close("malformed or repeated profile state");
        return;
    }
    if (profileVerdict) {
        // Too late: the others went on without it, counting it withheld.
        sendTo(node, MessageType::ProfileVerdict, *profileVerdict);
        return;
    }
    profileStates[node] = m->usable;
    if (events.onProfileState)
        events.onProfileState(node, m->usable, m->reason);
    if (profileStates.size() == serverNodes.size()) {
        sendProfileVerdict();
        return;
    }
    if (!profileDeadline) {
        profileDeadline = uvnet::makeTimer(&loop);
        profileDeadline->data = this;
        uv_timer_start(
            profileDeadline.get(),
            [](uv_timer_t *t) { static_cast<State *>(t->data)->sendProfileVerdict(); },
            static_cast<std::uint64_t>(settings.profileDeadlineMs), 0);
    }
}

void RendezvousHub::State::sendProfileVerdict() {
    if (profileVerdict)
        return;
    profileDeadline.reset();
    wire::ProfileVerdictMsg verdict;
    for (auto n : serverNodes) {
        auto it = profileStates.find(n);
        if (it == profileStates.end() && events.onProfileState)
            events.onProfileState(n, false,
                                  "its server did not take part in the profile rendezvous within " +
                                      std::to_string(settings.profileDeadlineMs) +
                                      " ms of the first (no profile reached it, or it runs an "
                                      "older stepmap)");
        if (it == profileStates.end() || !it->second)
            verdict.withheld.push_back(n);
    }
    profileVerdict = wire::encode(verdict);
    // Only to those that asked: the others registered without waiting.
    for (auto [n, usable] : profileStates)
        sendTo(n, MessageType::ProfileVerdict, *profileVerdict);
}

void RendezvousHub::State::onClosed(uvnet::FrameConnection &c, const std::string &why) {
    auto it = peers.find(&c);
    if (it == peers.end())
        return;
    // An unauthenticated peer or one that left goes quietly; the loss of a
    // joined server ends the step.
    const bool lost = it->second.state == PeerState::Joined;
    gate->leave(c);
    const std::uint32_t node = it->second.node;
    // The servers it relayed are lost with it (with it named as the cause),
    // or, had it left normally, were told to join again by themselves.
    const std::size_t relayed = lost && stepOf(node) == 0 ? forgetRoutesThrough(c, node) : 0;
    peers.erase(it); // the connection's memory goes once libuv is done with it
    if (stopping && peers.empty())
        closeDeadline.reset();
    if (lost && stepOf(node) != 0) {
        // A spawned step's server: that step's srun reports its loss.
        servers.erase(node);
        names.forgetNode(node);
        leaveJobBarriers(node);
        jobSteps->forget(stepOf(node));
    } else if (lost) {
        servers.erase(node);
        names.forgetNode(node);
        fail("lost the stepmap server of " + nodeName(node) + ": " + why +
             (relayed ? " (with the link of " + std::to_string(relayed) +
                            " servers that joined srun through it)"
                      : ""));
    }
}

void RendezvousHub::State::onWakeup() {
    bool stop;
    int status;
    std::string reason;
    {
        std::lock_guard lock(mutex);
        stop = shutdownRequested;
        status = shutdownStatus;
        reason = shutdownReason;
    }
    takeSpawnFailures();
    if (!stop || stopping)
        return;
    std::string payload = wire::encode(wire::ShutdownMsg{status, reason});
    // Each relay tells the servers that joined through it.
    for (auto &[n, c] : servers)
        if (auto peer = peers.find(c); peer != peers.end() && peer->second.node == n)
            c->send(MessageType::Shutdown, payload);
    stopLoop();
}

void RendezvousHub::State::onConnectDeadline() {
    std::string missing;
    for (auto n : serverNodes)
        if (!everConnected.count(n))
            missing += (missing.empty() ? "" : ",") + std::to_string(n);
    if (!missing.empty())
        fail("the stepmap servers of node indices " + missing +
             " did not reach srun in time (died, or cannot connect to this host)");
}

void RendezvousHub::State::stopLoop() {
    stopping = true;
    for (auto *c : peersIn(PeerState::Unauthenticated))
        c->close("hub stopping");
    servers.clear();
    const auto joined = peersIn(PeerState::Joined);
    for (auto *c : joined) {
        peers[c].state = PeerState::Leaving;
        c->closeAfterFlush("hub stopping");
    }
    if (!peers.empty()) {
        closeDeadline = uvnet::makeTimer(&loop);
        closeDeadline->data = this;
        uv_timer_start(
            closeDeadline.get(),
            [](uv_timer_t *t) {
                auto *s = static_cast<State *>(t->data);
                for (auto *c : s->peersIn(PeerState::Leaving))
                    c->close("hub stopping: the server did not take the last frames");
            },
            2000, 0);
    }
    listener.reset();
    wakeup.reset();
    deadline.reset();
    sweep.reset();
    profileDeadline.reset();
}

namespace {

void setPort(sockaddr_storage &addr, std::uint16_t port) {
    if (addr.ss_family == AF_INET6)
        reinterpret_cast<sockaddr_in6 *>(&addr)->sin6_port = htons(port);
    else
        reinterpret_cast<sockaddr_in *>(&addr)->sin_port = htons(port);
}

// The first address of host (a name or a numeric address).
Expected<sockaddr_storage> resolve(const std::string &host) {
    addrinfo hints{};
    hints.ai_socktype = SOCK_STREAM;
    hints.ai_flags = AI_ADDRCONFIG;
    addrinfo *res = nullptr;
    int rc = getaddrinfo(host.c_str(), nullptr, &hints, &res);
    if (rc != 0 || !res)
        return UserError{"cannot resolve the rendezvous address '" + host +
                         "': " + gai_strerror(rc)};
    std::unique_ptr<addrinfo, decltype(&freeaddrinfo)> owner(res, freeaddrinfo);
    sockaddr_storage out{};
    std::memcpy(&out, res->ai_addr, res->ai_addrlen);
    return out;
}

// This host's address on the route to peer, as the routing table picks it
// (a UDP socket's connect sends nothing); none if there is no route.
std::optional<sockaddr_storage> localAddressToward(const std::string &peer) {
    auto remote = resolve(peer);
    if (!remote)
        return std::nullopt;
    os::UniqueFd fd(socket(remote->ss_family, SOCK_DGRAM | SOCK_CLOEXEC, 0));
    if (!fd)
        return std::nullopt;
    setPort(*remote, 9); // any port: only the route matters
    sockaddr_storage out{};
    socklen_t len = sizeof out;
    const socklen_t remoteLen =
        remote->ss_family == AF_INET6 ? sizeof(sockaddr_in6) : sizeof(sockaddr_in);
    if (connect(fd.get(), reinterpret_cast<sockaddr *>(&*remote), remoteLen) != 0 ||
        getsockname(fd.get(), reinterpret_cast<sockaddr *>(&out), &len) != 0)
        return std::nullopt;
    return out;
}

// Where to listen, by Settings' order of preference.
Expected<sockaddr_storage> listenAddress(const RendezvousHub::Settings &s) {
    if (!s.host.empty())
        return resolve(s.host);
    if (!s.toward.empty())
        if (auto local = localAddressToward(s.toward))
            return *local;
    char name[256] = {};
    return resolve(gethostname(name, sizeof name - 1) == 0 && name[0] ? name : "127.0.0.1");
}

// Binds to host on a port of [portMin, portMax] (any if 0), starting at a
// random one so that concurrent sruns spread over the range; then hands the
// socket to libuv. The numeric address it bound to.
Expected<std::string> bindListener(uv_tcp_t *listener, const RendezvousHub::Settings &s) {
    auto where = listenAddress(s);
    if (!where)
        return where.error();
    sockaddr_storage &addr = *where;
    std::string numeric =
        numericText(reinterpret_cast<const sockaddr *>(&addr),
                    addr.ss_family == AF_INET6 ? sizeof(sockaddr_in6) : sizeof(sockaddr_in));
    auto uvError = [](int rc) { return UserError{uv_strerror(rc)}; };
    os::UniqueFd fd(socket(addr.ss_family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0));
    if (!fd)
        return uvError(-errno);
    int on = 1;
    setsockopt(fd.get(), SOL_SOCKET, SO_REUSEADDR, &on, sizeof on);
    const socklen_t len = addr.ss_family == AF_INET6 ? sizeof(sockaddr_in6) : sizeof(sockaddr_in);
    const unsigned count = s.portMin == 0 ? 1u : static_cast<unsigned>(s.portMax - s.portMin) + 1;
    const unsigned first = s.portMin == 0 ? 0u : std::random_device{}() % count;
    int rc = -EADDRINUSE;
    for (unsigned i = 0; i < count && rc == -EADDRINUSE; ++i) {
        setPort(addr,
                s.portMin == 0 ? 0 : static_cast<std::uint16_t>(s.portMin + (first + i) % count));
        rc = bind(fd.get(), reinterpret_cast<const sockaddr *>(&addr), len) == 0 ? 0 : -errno;
    }
    if (rc == -EADDRINUSE && s.portMin != 0)
        return UserError{"no free port in SrunPortRange " + std::to_string(s.portMin) + "-" +
                         std::to_string(s.portMax)};
    if (rc != 0)
        return uvError(rc);
    rc = uv_tcp_open(listener, fd.get());
    if (rc != 0)
        return uvError(rc);
    fd.release(); // libuv owns it now
    return numeric;
}

// The bound port of a listening socket.
int boundPort(uv_tcp_t *listener) {
    sockaddr_storage bound{};
    int len = sizeof bound;
    uv_tcp_getsockname(listener, reinterpret_cast<sockaddr *>(&bound), &len);
    return bound.ss_family == AF_INET6 ? ntohs(reinterpret_cast<sockaddr_in6 *>(&bound)->sin6_port)
                                       : ntohs(reinterpret_cast<sockaddr_in *>(&bound)->sin_port);
}

} // namespace

Expected<void> RendezvousHub::State::listen() {
    listener = uvnet::makeHandle(uv_tcp_init, &loop);
    listener->data = this;
    auto bound = bindListener(listener.get(), settings);
    std::string why = bound ? std::string() : bound.error().message;
    if (bound) {
        address = std::move(bound.value());
        const int rc = uv_listen(reinterpret_cast<uv_stream_t *>(listener.get()), 1024,
                                 [](uv_stream_t *server, int status) {
                                     auto *s = static_cast<State *>(server->data);
                                     if (status == 0 && !s->stopping)
                                         s->admit(server);
                                 });
        if (rc != 0)
            why = uv_strerror(rc);
    }
    if (!why.empty())
        return UserError{"cannot listen for the step's servers on " +
                         (settings.host.empty() ? std::string("this host") : settings.host) + ": " +
                         why};
    port = boundPort(listener.get());
    return {};
}

void RendezvousHub::State::startTimers() {
    wakeup = uvnet::makeHandle(uv_async_init, &loop,
                               [](uv_async_t *a) { static_cast<State *>(a->data)->onWakeup(); });
    wakeup->data = this;
    deadline = uvnet::makeTimer(&loop);
    deadline->data = this;
    uv_timer_start(
        deadline.get(), [](uv_timer_t *t) { static_cast<State *>(t->data)->onConnectDeadline(); },
        static_cast<std::uint64_t>(settings.connectDeadlineSec) * 1000, 0);
    sweep = uvnet::makeTimer(&loop);
    sweep->data = this;
    const auto sweepMs = static_cast<std::uint64_t>(std::max(50, settings.handshakeDeadlineMs / 4));
    uv_timer_start(
        sweep.get(),
        [](uv_timer_t *t) {
            auto *self = static_cast<State *>(t->data);
            self->gate->sweep();
            self->expireNames();
            self->expireJobBarriers();
        },
        sweepMs, sweepMs);
}

void RendezvousHub::State::runLoop() {
    uv_run(&loop, UV_RUN_DEFAULT);
    while (uv_loop_close(&loop) == UV_EBUSY)
        uv_run(&loop, UV_RUN_NOWAIT);
}

Expected<std::unique_ptr<RendezvousHub>> RendezvousHub::start(std::vector<std::uint32_t> nodeOfRank,
                                                              std::uint32_t nodeCount,
                                                              std::string secret, Events events,
                                                              const Settings &settings) {
    auto st = std::make_unique<State>();
    st->nodeOfRank = std::move(nodeOfRank);
    for (auto n : st->nodeOfRank)
        if (n < nodeCount)
            st->serverNodes.insert(n);
    st->secret = std::move(secret);
    st->events = std::move(events);
    st->settings = settings;
    st->jobSteps = std::make_unique<JobSteps>(settings.nspace, settings.plan, st->nodeOfRank);
    // The tree needs servers on nodes 0..nodeCount-1, as plans place them.
    const bool everyNode = st->serverNodes.size() == nodeCount && nodeCount > 1;
    st->fanOut = everyNode ? settings.fenceFanOut : 0;
    // Room for every server to be mid-handshake at once, several times over.
    HandshakeGate::Settings gs;
    gs.maxWaiting = std::max(settings.maxUnauthenticated, 4 * st->serverNodes.size());
    gs.deadlineMs = settings.handshakeDeadlineMs;
    // Another user's process on srun's host is no server of this step,
    // unless srun runs as root (then the servers run as someone else).
    gs.user = getuid() == 0 ? std::nullopt : std::optional<uid_t>(getuid());
    gs.where = "srun's rendezvous";
    st->gate = std::make_unique<HandshakeGate>(std::move(gs));
    st->fenceProbes = std::make_unique<FenceProbes>(settings.nodeNames, settings.fenceTimeoutSec,
                                                    settings.maxOpenFencesPerServer);

    uv_loop_init(&st->loop);
    if (auto listening = st->listen(); !listening) {
        st->listener.reset();
        st->runLoop();
        return listening.error();
    }
    st->startTimers();
    State *raw = st.get();
    // The hub thread's firewall: what escapes the loop (the kernel out of
    // random bytes, HMAC failing: wire/secret.cpp) ends the step, not srun.
    st->thread = std::thread([raw] {
        // A server that went away fails the write to it with EPIPE: the
        // signal libuv's write(2) raises stays blocked in this thread (srun's
        // own disposition is srun's).
        // Named, so that top -H and perf tell it from srun's own threads.
        pthread_setname_np(pthread_self(), "stepmap-hub");
        sigset_t pipe;
        sigemptyset(&pipe);
        sigaddset(&pipe, SIGPIPE);
        pthread_sigmask(SIG_BLOCK, &pipe, nullptr);
        try {
            raw->runLoop();
        } catch (const std::exception &e) {
            if (raw->events.onFailure)
                raw->events.onFailure(std::string("srun's rendezvous failed: ") + e.what());
        }
        // What the thread used in all, for cpuMs() once it is gone.
        timespec used{};
        if (clock_gettime(CLOCK_THREAD_CPUTIME_ID, &used) == 0)
            raw->finalCpuMs.store(static_cast<double>(used.tv_sec) * 1e3 +
                                  static_cast<double>(used.tv_nsec) / 1e6);
    });
    std::unique_ptr<RendezvousHub> hub(new RendezvousHub);
    hub->state_ = std::move(st);
    return hub;
}

int RendezvousHub::port() const {
    return state_->port;
}

std::string RendezvousHub::address() const {
    return state_->address + ":" + std::to_string(state_->port);
}

std::uint32_t RendezvousHub::treeFanOut() const {
    return state_->fanOut; // set before the thread starts
}

std::uint64_t RendezvousHub::directJoins() const {
    return state_->directJoins.load();
}

std::uint64_t RendezvousHub::relayedJoinFrames() const {
    return state_->relayedJoinFrames.load();
}

std::uint64_t RendezvousHub::modexRouted() const {
    return state_->modexRouted.load();
}

double RendezvousHub::cpuMs() const {
    clockid_t clock;
    timespec used{};
    if (!state_->thread.joinable())
        return state_->finalCpuMs.load();
    if (pthread_getcpuclockid(state_->thread.native_handle(), &clock) != 0 ||
        clock_gettime(clock, &used) != 0)
        return 0;
    return static_cast<double>(used.tv_sec) * 1e3 + static_cast<double>(used.tv_nsec) / 1e6;
}

void RendezvousHub::spawnFailed(std::uint32_t index, const std::string &why) {
    if (!state_ || !state_->thread.joinable())
        return;
    std::lock_guard lock(state_->mutex);
    if (state_->shutdownRequested)
        return;
    state_->spawnFailures.emplace_back(index, why);
    uv_async_send(state_->wakeup.get());
}

void RendezvousHub::spawnedStepFailed(std::uint32_t index, const std::string &why) {
    if (!state_ || !state_->thread.joinable())
        return;
    std::lock_guard lock(state_->mutex);
    if (state_->shutdownRequested)
        return;
    state_->stepFailures.emplace_back(index, why);
    uv_async_send(state_->wakeup.get());
}

void RendezvousHub::shutdown(int status, const std::string &reason) {
    if (!state_ || !state_->thread.joinable())
        return;
    {
        std::lock_guard lock(state_->mutex);
        state_->shutdownRequested = true;
        state_->shutdownStatus = status;
        state_->shutdownReason = reason;
    }
    uv_async_send(state_->wakeup.get());
    state_->thread.join();
}

RendezvousHub::~RendezvousHub() {
    shutdown(0, "step done");
}

} // namespace stepmap::hub
