#include "protocol/hub/peer_modex.hpp"

#include "protocol/uv/listen_beside.hpp"
#include "protocol/wire/payloads.hpp"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include <algorithm>
#include <cstring>

namespace stepmap::hub {

using wire::MessageType;

namespace {

// family (0: none, 4, 6) | 16 address bytes | u16 port, big-endian
constexpr std::size_t kEntrySize = 1 + 16 + 2;

std::string nodeText(std::uint32_t node) {
    return "node index " + std::to_string(node);
}

} // namespace

std::string encodePeerAddress(const std::optional<PeerAddress> &address) {
    std::string entry(kEntrySize, '\0');
    if (!address || address->port <= 0 || address->port > 65535)
        return entry;
    unsigned char bytes[16] = {};
    if (inet_pton(AF_INET, address->host.c_str(), bytes) == 1)
        entry[0] = 4;
    else if (inet_pton(AF_INET6, address->host.c_str(), bytes) == 1)
        entry[0] = 6;
    else
        return entry;
    std::memcpy(entry.data() + 1, bytes, 16);
    entry[17] = static_cast<char>(address->port >> 8);
    entry[18] = static_cast<char>(address->port & 0xff);
    return entry;
}

std::optional<std::vector<std::optional<PeerAddress>>> decodeAddressBook(const std::string &bytes,
                                                                         std::uint32_t nodeCount) {
    if (bytes.size() != std::size_t{nodeCount} * kEntrySize)
        return std::nullopt;
    std::vector<std::optional<PeerAddress>> book(nodeCount);
    for (std::uint32_t n = 0; n < nodeCount; ++n) {
        const char *e = bytes.data() + std::size_t{n} * kEntrySize;
        const int port =
            (static_cast<unsigned char>(e[17]) << 8) | static_cast<unsigned char>(e[18]);
        if (e[0] == 0)
            continue;
        if ((e[0] != 4 && e[0] != 6) || port == 0)
            return std::nullopt;
        char text[INET6_ADDRSTRLEN] = {};
        if (!inet_ntop(e[0] == 4 ? AF_INET : AF_INET6, e + 1, text, sizeof text))
            return std::nullopt;
        book[n] = PeerAddress{text, port};
    }
    return book;
}

PeerModex::PeerModex(uv_loop_t *loop, Settings settings, LinkHost &host,
                     timeline::ExchangeCounters &counted)
    : loop_(loop), settings_(std::move(settings)), host_(host), statuses_(host.statuses()),
      counted_(counted), sweep_(uvnet::makeTimer(loop)) {
    sweep_->data = this;
    const auto every = static_cast<std::uint64_t>(std::max(50, settings_.handshakeDeadlineMs / 4));
    uv_timer_start(
        sweep_.get(), [](uv_timer_t *t) { static_cast<PeerModex *>(t->data)->sweep(); }, every,
        every);
    // The timer must not keep a loop alive that has nothing else to do.
    uv_unref(reinterpret_cast<uv_handle_t *>(sweep_.get()));
}

PeerModex::~PeerModex() {
    // Letting go closes quietly; the requests still out are the hub link's
    // to fail.
    out_.clear();
    in_.clear();
}

std::string PeerModex::listen(uv_tcp_t *near) {
    auto listening = uvnet::listenBeside(loop_, near, this, [](uv_stream_t *server, int status) {
        if (status == 0)
            static_cast<PeerModex *>(server->data)->admit(server);
    });
    sockaddr_storage addr{};
    int len = sizeof addr;
    char text[INET6_ADDRSTRLEN] = {};
    if (listening &&
        uv_tcp_getsockname(listening->handle.get(), reinterpret_cast<sockaddr *>(&addr), &len) == 0)
        uv_ip_name(reinterpret_cast<sockaddr *>(&addr), text, sizeof text);
    if (!listening || text[0] == '\0') {
        host_.log("cannot take other servers' direct-modex requests (" +
                  (listening ? std::string("no local address") : listening.error().message) +
                  "); they come through srun's hub");
        return encodePeerAddress(std::nullopt);
    }
    listener_ = std::move(listening->handle);
    HandshakeGate::Settings gs;
    // Every other node may ask at once; a flood from one address evicts
    // its own connections (several servers may share a host).
    gs.maxWaiting = std::min<std::size_t>(settings_.nodeCount, 1024) + 16;
    gs.maxWaitingPerSource = 64;
    gs.deadlineMs = settings_.handshakeDeadlineMs;
    gs.where = "direct-modex listener";
    gs.log = [this](const std::string &line) { host_.log(line); };
    gate_ = std::make_unique<HandshakeGate>(std::move(gs));
    host_.log("taking other servers' direct-modex requests on port " +
              std::to_string(listening->port));
    return encodePeerAddress(PeerAddress{text, listening->port});
}

void PeerModex::setAddressBook(std::vector<std::optional<PeerAddress>> book) {
    book_ = std::move(book);
}

bool PeerModex::ask(std::uint32_t owner, std::uint64_t id, std::uint32_t rank) {
    Outgoing *link = linkTo(owner);
    if (!link)
        return false;
    link->asked.insert(id);
    link->lastUse = ++uses_;
    std::string payload = wire::encode(wire::DmodexRequestMsg{id, settings_.nodeIndex, rank});
    if (link->established)
        link->conn->send(MessageType::DmodexRequest, payload);
    else
        link->queued.push_back(std::move(payload));
    return true;
}

PeerModex::Outgoing *PeerModex::linkTo(std::uint32_t owner) {
    if (owner == settings_.nodeIndex || owner >= book_.size() || !book_[owner] ||
        unreachable_.count(owner))
        return nullptr;
    if (auto it = out_.find(owner); it != out_.end())
        return &it->second;
    if (out_.size() >= settings_.maxLinks) {
        // The least recently used link with nothing outstanding makes room.
        auto idle = out_.end();
        for (auto it = out_.begin(); it != out_.end(); ++it)
            if (it->second.asked.empty() &&
                (idle == out_.end() || it->second.lastUse < idle->second.lastUse))
                idle = it;
        if (idle == out_.end())
            return nullptr;
        out_.erase(idle); // closes quietly
    }
    const PeerAddress &at = *book_[owner];
    auto conn = uvnet::FrameConnection::connect(
        loop_, at.host, at.port, settings_.secret,
        {[this, owner](auto &, std::vector<wire::Frame> &frames) {
             onOutgoingFrames(owner, frames);
         },
         [this, owner](auto &, const std::string &why) { onOutgoingClosed(owner, why); }});
    if (!conn || conn->closing()) {
        // Reported (onOutgoingClosed) already, before there was an entry.
        unreachable_.insert(owner);
        return nullptr;
    }
    Outgoing &link = out_[owner];
    link.conn = std::move(conn);
    link.openedAt = uv_now(loop_);
    return &link;
}

void PeerModex::onOutgoingFrames(std::uint32_t owner, std::vector<wire::Frame> &frames) {
    for (auto &f : frames) {
        auto it = out_.find(owner);
        if (it == out_.end() || it->second.conn->closing())
            return;
        Outgoing &link = it->second;
        if (f.type == MessageType::Challenge && !link.established) {
            link.conn->send(link.conn->channel().makeHello(settings_.nodeIndex));
            link.established = true;
            for (auto &payload : link.queued)
                link.conn->send(MessageType::DmodexRequest, payload);
            link.queued.clear();
            continue;
        }
        auto m = f.type == MessageType::DmodexResponse ? wire::decodeDmodexResponse(f.payload)
                                                       : std::nullopt;
        if (!m || m->originNode != settings_.nodeIndex || !link.asked.erase(m->requestId)) {
            dropOutgoing(owner, "malformed or unexpected direct-modex answer", true);
            return;
        }
        // (The hub link counts the bytes received, whichever way they came.)
        // kHubRankGone: the owner's server is leaving; the caller says so.
        settings_.onAnswer(m->requestId, m->status, std::move(m->data));
    }
}

void PeerModex::onOutgoingClosed(std::uint32_t owner, const std::string &why) {
    auto it = out_.find(owner);
    if (it == out_.end()) {
        host_.log("cannot reach " + nodeText(owner) + "'s server for direct modex (" + why +
                  "); asking through srun's hub");
        return;
    }
    // The owner's server may have left (the hub answers so), or its host or
    // the link failed: the hub knows which.
    dropOutgoing(owner, why, true);
}

void PeerModex::dropOutgoing(std::uint32_t owner, const std::string &why, bool unreachable) {
    auto it = out_.find(owner);
    if (it == out_.end())
        return;
    auto asked = std::move(it->second.asked);
    const bool everEstablished = it->second.established;
    out_.erase(it);
    if (unreachable)
        unreachable_.insert(owner);
    if (!asked.empty() || !everEstablished)
        host_.log("direct-modex link to " + nodeText(owner) + " ended (" + why + "); " +
                  std::to_string(asked.size()) +
                  " request(s) and later ones go through srun's hub");
    for (auto id : asked)
        settings_.onDetour(id);
}

void PeerModex::admit(uv_stream_t *server) {
    uvnet::FrameConnection::Callbacks cb;
    cb.onFrames = [this](uvnet::FrameConnection &c, std::vector<wire::Frame> &f) {
        onIncomingFrames(c, f);
    };
    cb.onClosed = [this](uvnet::FrameConnection &c, const std::string &) { onIncomingClosed(c); };
    auto c = uvnet::FrameConnection::accept(server, settings_.secret, cb);
    if (!c || c->closing() || !gate_->admit(*c))
        return; // c goes: closed quietly
    auto *raw = c.get();
    Incoming in;
    in.conn = std::move(c);
    in.serial = nextSerial_++;
    inBySerial_[in.serial] = raw;
    in_.emplace(raw, std::move(in));
}

void PeerModex::onIncomingFrames(uvnet::FrameConnection &c, std::vector<wire::Frame> &frames) {
    for (auto &f : frames) {
        auto it = in_.find(&c);
        if (it == in_.end() || c.closing())
            return;
        Incoming &in = it->second;
        if (in.joined) {
            if (!answerRequest(in, f))
                return;
            continue;
        }
        // The first authenticated frame is the Hello.
        gate_->leave(c);
        const std::uint32_t node = c.channel().peerNode();
        if (node >= settings_.nodeCount || node == settings_.nodeIndex) {
            c.close("a direct-modex link from " + nodeText(node) +
                    ", not another node of the step");
            return;
        }
        if (auto old = inByNode_.find(node); old != inByNode_.end()) {
            // The newer link replaces it (letting go closes it quietly).
            inBySerial_.erase(in_.at(old->second).serial);
            in_.erase(old->second);
        }
        in.joined = true;
        in.node = node;
        inByNode_[node] = &c;
    }
}

bool PeerModex::answerRequest(Incoming &in, const wire::Frame &f) {
    auto m =
        f.type == MessageType::DmodexRequest ? wire::decodeDmodexRequest(f.payload) : std::nullopt;
    std::string refused;
    if (!m || m->originNode != in.node)
        refused = "malformed direct-modex request";
    else if (!host_.ownsRank(m->rank))
        refused = "a direct-modex request for rank " + std::to_string(m->rank) +
                  ", which is not this node's";
    else if (in.unanswered.size() >= settings_.maxRequestsPerPeer)
        refused = "more than " + std::to_string(settings_.maxRequestsPerPeer) +
                  " unanswered direct-modex requests";
    else if (in.unanswered.count(m->requestId))
        refused = "direct-modex request " + std::to_string(m->requestId) + " asked twice";
    if (!refused.empty()) {
        host_.log("ending the direct-modex link from " + nodeText(in.node) + ": " + refused);
        in.conn->close(refused);
        return false;
    }
    in.unanswered.insert(m->requestId);
    ++counted_.modexAnswered;
    const auto req = *m;
    const std::uint64_t serial = in.serial;
    host_.localModex(req.rank, [this, req, serial](int st, std::string data) {
        auto at = inBySerial_.find(serial);
        if (at == inBySerial_.end())
            return; // the asking node's link went: it asks through the hub
        auto &link = in_.at(at->second);
        if (!link.unanswered.erase(req.requestId) ||
            link.conn->state() != uvnet::FrameConnection::State::Open)
            return; // answered "gone" as this server left
        if (st != statuses_.success)
            host_.log("answering " + nodeText(req.originNode) +
                      "'s direct-modex request for rank " + std::to_string(req.rank) + " with " +
                      host_.statusText(st) +
                      " (this node's PMIx library could not give the rank's data)");
        counted_.bytesSent += data.size();
        link.conn->send(MessageType::DmodexResponse,
                        wire::encode(wire::DmodexResponseMsg{req.requestId, req.originNode, st,
                                                             std::move(data)}));
    });
    return true;
}

void PeerModex::onIncomingClosed(uvnet::FrameConnection &c) {
    auto it = in_.find(&c);
    if (it == in_.end())
        return;
    if (gate_)
        gate_->leave(c);
    if (auto n = inByNode_.find(it->second.node); n != inByNode_.end() && n->second == &c)
        inByNode_.erase(n);
    inBySerial_.erase(it->second.serial);
    in_.erase(it);
}

void PeerModex::leave() {
    listener_.reset();
    gate_.reset();
    out_.clear(); // the hub link fails what they still wait for
    for (auto &[conn, in] : in_) {
        for (auto id : in.unanswered)
            in.conn->send(MessageType::DmodexResponse,
                          wire::encode(wire::DmodexResponseMsg{id, in.node, kHubRankGone, {}}));
        in.unanswered.clear();
        in.conn->closeAfterFlush("this server leaves");
    }
}

void PeerModex::sweep() {
    if (gate_)
        gate_->sweep();
    // A peer that never challenges (its host drops the connection request,
    // a stranger holds the port) would keep requests for TCP's minutes.
    const std::uint64_t now = uv_now(loop_);
    std::vector<std::uint32_t> late;
    for (auto &[owner, link] : out_)
        if (!link.established &&
            now - link.openedAt > static_cast<std::uint64_t>(settings_.handshakeDeadlineMs))
            late.push_back(owner);
    for (auto owner : late)
        dropOutgoing(owner,
                     "no challenge within " + std::to_string(settings_.handshakeDeadlineMs) + " ms",
                     true);
}

} // namespace stepmap::hub
