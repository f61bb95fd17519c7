#include "client_admission.hpp"

#include "os/peer_owner.hpp"
#include "server_log.hpp"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <condition_variable>
#include <deque>
#include <mutex>
#include <set>
#include <thread>

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

constexpr std::size_t kMaxInHandshake = 1024;

// The handshake deadline where the receive deadline does not hold: PMIx
// 5's blocking handshake receive retries on EAGAIN, so a connection of the
// job's user that sends nothing would hold PMIx's only thread for good.
// A connection still blocking (PMIx turns it non-blocking once its
// handshake is done) at its deadline is shut down: PMIx's receive then
// ends and it drops the connection. The socket is told from a later one
// with its number by its inode. At most kMaxInHandshake at once: beyond, a new
// connection is refused, so that a flood costs bounded memory.
class HandshakeWatch {
public:
    ~HandshakeWatch() {
        {
            std::lock_guard lock(mutex_);
            stopping_ = true;
        }
        wake_.notify_all();
        if (thread_.joinable())
            thread_.join();
    }

    bool watch(int fd, std::chrono::milliseconds deadline) {
        struct stat st {};
        if (fstat(fd, &st) != 0)
            return false;
        std::lock_guard lock(mutex_);
        if (watched_.size() >= kMaxInHandshake)
            return false;
        watched_.push_back({fd, st.st_ino, std::chrono::steady_clock::now() + deadline});
        if (!thread_.joinable())
            thread_ = std::thread([this] { run(); });
        wake_.notify_all();
        return true;
    }

    std::uint64_t shutDown() const { return shutDown_.load(); }

private:
    struct Watched {
        int fd;
        ino_t inode;
        std::chrono::steady_clock::time_point deadline;
    };

    void run() {
        std::unique_lock lock(mutex_);
        while (!stopping_) {
            if (watched_.empty()) {
                wake_.wait(lock);
                continue;
            }
            // Deadlines are in admission order: the front is the earliest.
            const auto due = watched_.front().deadline;
            if (std::chrono::steady_clock::now() < due) {
                wake_.wait_until(lock, due);
                continue;
            }
            const Watched w = watched_.front();
            watched_.pop_front();
            struct stat st {};
            const int flags = fcntl(w.fd, F_GETFL);
            if (flags >= 0 && !(flags & O_NONBLOCK) && fstat(w.fd, &st) == 0 &&
                st.st_ino == w.inode && S_ISSOCK(st.st_mode)) {
                shutdown(w.fd, SHUT_RDWR);
                ++shutDown_;
            }
        }
    }

    std::mutex mutex_;
    std::condition_variable wake_;
    std::deque<Watched> watched_;
    bool stopping_ = false;
    std::thread thread_;
    std::atomic<std::uint64_t> shutDown_{0};
};

HandshakeWatch &handshakeWatch() {
    static HandshakeWatch watch;
    return watch;
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
    return {admittedCount.load(), refusedCount.load(), handshakeWatch().shutDown()};
}

std::string admissionSummary() {
    const std::uint64_t refused = refusedCount.load();
    const std::uint64_t timedOut = handshakeWatch().shutDown();
    std::string text;
    if (refused > 0) {
        std::string owners;
        std::lock_guard lock(ownersMutex);
        for (const auto &who : refusedOwners)
            owners += (owners.empty() ? "" : "; ") + who;
        text = "refused " + std::to_string(refused) + " PMIx connection" +
               (refused == 1 ? "" : "s") + " (" + owners + ")";
    }
    if (timedOut > 0)
        text += (text.empty() ? "" : "; ") + std::string("shut down ") + std::to_string(timedOut) +
                " of the job's user's that did not finish the PMIx " + "handshake within " +
                std::to_string(deadlineMs.load()) + " ms";
    return text;
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
            if (handshakeWatch().watch(fd, std::chrono::milliseconds(deadlineMs.load()))) {
                setDeadlines(fd);
                ++admittedCount;
                return fd;
            }
            noteRefusal(fd, "the job's user, with " + std::to_string(kMaxInHandshake) +
                                " connections in their handshake already");
        } else {
            noteRefusal(fd, who);
        }
    } catch (...) {
        ++refusedCount;
    }
    ::close(fd);
    // EAGAIN: "nothing to accept now" to every PMIx release. PMIx 4.2's
    // listener loop goes on after any of EAGAIN or ECONNABORTED; PMIx 5's
    // event handler returns quietly on EAGAIN only, and on any other
    // error closes its listening socket, which would lock out the job's
    // own ranks after a stranger's first attempt.
    errno = EAGAIN;
    return -1;
}
