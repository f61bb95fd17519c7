#include "client_admission.hpp"

#include "os/peer_owner.hpp"
#include "server_log.hpp"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <mutex>
#include <set>

namespace stepmap::server {

namespace {

std::atomic<bool> armed{false};
std::atomic<uid_t> admittedUid{0};
std::atomic<long> deadlineMs{0};
std::atomic<std::uint64_t> admittedCount{0}, refusedCount{0};

// The refused owners, for the summary; bounded (a flood from many uids
// is counted, not listed).
constexpr std::size_t kListedOwners = 16;
constexpr std::uint64_t kLoggedRefusals = 16;
std::mutex ownersMutex;
std::set<std::string> refusedOwners;

std::string peerAddress(int fd) {
    sockaddr_storage peer{};
    socklen_t length = sizeof peer;
    if (getpeername(fd, reinterpret_cast<sockaddr *>(&peer), &length) != 0)
        return "?";
    char text[INET6_ADDRSTRLEN] = "?";
    if (peer.ss_family == AF_INET) {
        const auto &in = reinterpret_cast<const sockaddr_in &>(peer);
        inet_ntop(AF_INET, &in.sin_addr, text, sizeof text);
        return std::string(text) + ":" + std::to_string(ntohs(in.sin_port));
    }
    if (peer.ss_family == AF_INET6) {
        const auto &in6 = reinterpret_cast<const sockaddr_in6 &>(peer);
        inet_ntop(AF_INET6, &in6.sin6_addr, text, sizeof text);
        return "[" + std::string(text) + "]:" + std::to_string(ntohs(in6.sin6_port));
    }
    return "a local socket";
}

// Whose the connection is: "uid N", or why it cannot be told (then it is
// refused too); empty for this server's own user.
std::string strangerOf(int fd) {
    sockaddr_storage local{};
    socklen_t length = sizeof local;
    if (getsockname(fd, reinterpret_cast<sockaddr *>(&local), &length) != 0)
        return "an unnamed socket";
    uid_t owner = 0;
    if (local.ss_family == AF_UNIX) {
        ucred cred{};
        socklen_t credLength = sizeof cred;
        if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &credLength) != 0)
            return "a peer without credentials";
        owner = cred.uid;
    } else {
        auto peer = os::tcpPeerOwner(fd);
        if (!peer)
            return "an unknown owner (" + peer.error().message + ")";
        if (!peer->onThisHost)
            return "no socket of this host (gone, or another host's)";
        owner = peer->uid;
    }
    return owner == admittedUid.load() ? std::string() : "uid " + std::to_string(owner);
}

void setDeadlines(int fd) {
    const long ms = deadlineMs.load();
    timeval tv{static_cast<time_t>(ms / 1000), static_cast<suseconds_t>(ms % 1000 * 1000)};
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
}

void noteRefusal(int fd, const std::string &who) {
    const std::uint64_t n = ++refusedCount;
    if (n <= kLoggedRefusals)
        logError("refused a PMIx connection from " + peerAddress(fd) + ", " + who +
                 ": only the job's user may connect" +
                 (n == kLoggedRefusals ? " (further refusals are counted, not logged)" : ""));
    std::lock_guard lock(ownersMutex);
    if (refusedOwners.size() < kListedOwners)
        refusedOwners.insert(who);
}

} // namespace

void admitOnly(uid_t uid, std::chrono::milliseconds handshakeDeadline) {
    admittedUid = uid;
    deadlineMs = static_cast<long>(handshakeDeadline.count());
    armed = true;
}

AdmissionCounts admissionCounts() {
    return {admittedCount.load(), refusedCount.load()};
}

std::string admissionSummary() {
    const std::uint64_t refused = refusedCount.load();
    if (refused == 0)
        return {};
    std::string owners;
    std::lock_guard lock(ownersMutex);
    for (const auto &who : refusedOwners)
        owners += (owners.empty() ? "" : "; ") + who;
    return "refused " + std::to_string(refused) + " PMIx connection" + (refused == 1 ? "" : "s") +
           " not from the job's user (" + owners + ")";
}

} // namespace stepmap::server

// The definition libpmix's listener thread calls (see the header). Never
// throws: it runs on PMIx's thread, under C.
extern "C" int accept(int listener, sockaddr *address, socklen_t *length) {
    using namespace stepmap::server;
    const int fd = ::accept4(listener, address, length, 0);
    if (fd < 0 || !armed.load())
        return fd;
    try {
        const std::string who = strangerOf(fd);
        if (who.empty()) {
            setDeadlines(fd);
            ++admittedCount;
            return fd;
        }
        noteRefusal(fd, who);
    } catch (...) {
        ++refusedCount;
    }
    ::close(fd);
    errno = ECONNABORTED;
    return -1;
}
