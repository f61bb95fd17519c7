#include "protocol/hub/handshake_gate.hpp"

#include "os/peer_owner.hpp"

#include <netdb.h>
#include <sys/socket.h>

#include <vector>

namespace stepmap::hub {

namespace {

// Peers logged one by one per kind; beyond that they are counted.
constexpr unsigned kLoggedEach = 5;
// The counts are logged at most this often.
constexpr auto kSummaryEvery = std::chrono::seconds(5);

// The peer's numeric address, and with its port; "?" if unknown.
void peerOf(uvnet::FrameConnection &c, std::string &address, std::string &withPort) {
    sockaddr_storage addr{};
    int len = sizeof addr;
    char host[NI_MAXHOST] = "?", port[NI_MAXSERV] = "?";
    if (uv_tcp_getpeername(c.tcp(), reinterpret_cast<sockaddr *>(&addr), &len) == 0)
        getnameinfo(reinterpret_cast<sockaddr *>(&addr), static_cast<socklen_t>(len), host,
                    sizeof host, port, sizeof port, NI_NUMERICHOST | NI_NUMERICSERV);
    address = host;
    withPort = addr.ss_family == AF_INET6 ? "[" + address + "]:" + port : address + ":" + port;
}

} // namespace

HandshakeGate::HandshakeGate(Settings settings)
    : settings_(std::move(settings)), lastSummary_(std::chrono::steady_clock::now()) {}

bool HandshakeGate::admit(uvnet::FrameConnection &c) {
    Waiting w{{}, {}, std::chrono::steady_clock::now()};
    peerOf(c, w.source, w.peer);
    uv_os_fd_t fd = -1;
    if (settings_.user && uv_fileno(reinterpret_cast<uv_handle_t *>(c.tcp()), &fd) == 0) {
        auto owner = os::tcpPeerOwner(fd);
        if (!owner) {
            // Without sock_diag the addresses are all there is to go by.
            if (!noDiagnostics_ && settings_.log)
                settings_.log(settings_.where + ": cannot tell local users apart (" +
                              owner.error().message + "); counting connections by address only");
            noDiagnostics_ = true;
        } else if (owner->onThisHost && owner->uid != *settings_.user && owner->uid != 0) {
            note(Refused, "refused " + w.peer + ", a connection of uid " +
                              std::to_string(owner->uid) + " on this host (not the step's user)");
            c.close("a connection of another user");
            return false;
        }
    }
    if (settings_.maxWaitingPerSource > 0 && from(w.source) >= settings_.maxWaitingPerSource) {
        close(oldestOf(w.source), Evicted, "too many unauthenticated connections");
    } else if (waiting_.size() >= settings_.maxWaiting && !makeRoom(w.source)) {
        // Every address holds as many as this one: the newcomer goes.
        note(Evicted, "closed " + w.peer + ": too many connections waiting to authenticate");
        c.close("too many unauthenticated connections");
        return false;
    }
    ++perSource_[w.source];
    waiting_.emplace(&c, std::move(w));
    return true;
}

std::size_t HandshakeGate::from(const std::string &source) const {
    auto it = perSource_.find(source);
    return it == perSource_.end() ? 0 : it->second;
}

uvnet::FrameConnection *HandshakeGate::oldestOf(const std::string &source) const {
    uvnet::FrameConnection *oldest = nullptr;
    for (const auto &[c, w] : waiting_)
        if (w.source == source && (!oldest || w.since < waiting_.at(oldest).since))
            oldest = c;
    return oldest;
}

bool HandshakeGate::makeRoom(const std::string &source) {
    // The newcomer counts for its source: a flood from one address, once it
    // holds the most, evicts its own connections.
    std::string busiest = source;
    std::size_t most = from(source) + 1;
    for (const auto &[addr, n] : perSource_)
        if (n > most) {
            busiest = addr;
            most = n;
        }
    auto *victim = oldestOf(busiest);
    if (!victim)
        return false;
    close(victim, Evicted, "too many unauthenticated connections");
    return true;
}

void HandshakeGate::close(uvnet::FrameConnection *c, Kind kind, const std::string &why) {
    auto it = waiting_.find(c);
    if (it == waiting_.end())
        return;
    const std::string peer = it->second.peer;
    leave(*c); // before closing: its owner's onClosed calls leave again
    note(kind, "closed " + peer + ": " +
                   (kind == Late
                        ? "no authentication within " + std::to_string(settings_.deadlineMs) + " ms"
                        : std::string("too many connections waiting to authenticate")));
    c->close(why);
}

void HandshakeGate::leave(uvnet::FrameConnection &c) {
    auto it = waiting_.find(&c);
    if (it == waiting_.end())
        return;
    auto n = perSource_.find(it->second.source);
    if (n != perSource_.end() && --n->second == 0)
        perSource_.erase(n);
    waiting_.erase(it);
}

void HandshakeGate::sweep() {
    const auto now = std::chrono::steady_clock::now();
    const auto limit = now - std::chrono::milliseconds(settings_.deadlineMs);
    std::vector<uvnet::FrameConnection *> late;
    for (const auto &[c, w] : waiting_)
        if (w.since < limit)
            late.push_back(c);
    for (auto *c : late)
        close(c, Late, "no authentication in time");
    if (now - lastSummary_ < kSummaryEvery ||
        unlogged_[Refused] + unlogged_[Evicted] + unlogged_[Late] == 0)
        return;
    lastSummary_ = now;
    if (settings_.log)
        settings_.log(settings_.where + ": also refused " + std::to_string(unlogged_[Refused]) +
                      " connections of other users, closed " + std::to_string(unlogged_[Evicted]) +
                      " to make room and " + std::to_string(unlogged_[Late]) +
                      " that did not authenticate in time");
    for (auto &n : unlogged_)
        n = 0;
}

void HandshakeGate::note(Kind kind, const std::string &line) {
    if (logged_[kind] >= kLoggedEach || !settings_.log) {
        ++unlogged_[kind];
        return;
    }
    ++logged_[kind];
    settings_.log(settings_.where + ": " + line +
                  (logged_[kind] == kLoggedEach ? " (more such are counted, not logged)" : ""));
}

} // namespace stepmap::hub
