#include "os/peer_owner.hpp"

#include "os/unique_fd.hpp"

#include <arpa/inet.h>
#include <linux/inet_diag.h>
#include <linux/netlink.h>
#include <linux/sock_diag.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>

#include <cerrno>
#include <cstring>
#include <string>

namespace stepmap::os {

namespace {

UserError errnoError(const char *what) {
    return UserError{std::string(what) + ": " + std::strerror(errno)};
}

// Address and port of a sockaddr as inet_diag's id fields want them.
void copyEndpoint(const sockaddr_storage &a, __be16 &port, __be32 addr[4]) {
    if (a.ss_family == AF_INET) {
        const auto &in = reinterpret_cast<const sockaddr_in &>(a);
        port = in.sin_port;
        std::memcpy(addr, &in.sin_addr, sizeof in.sin_addr);
    } else {
        const auto &in6 = reinterpret_cast<const sockaddr_in6 &>(a);
        port = in6.sin6_port;
        std::memcpy(addr, &in6.sin6_addr, sizeof in6.sin6_addr);
    }
}

} // namespace

Expected<PeerOwner> tcpPeerOwner(int fd) {
    sockaddr_storage local{}, peer{};
    socklen_t localLen = sizeof local, peerLen = sizeof peer;
    if (getsockname(fd, reinterpret_cast<sockaddr *>(&local), &localLen) != 0)
        return errnoError("getsockname");
    if (getpeername(fd, reinterpret_cast<sockaddr *>(&peer), &peerLen) != 0)
        return errnoError("getpeername");
    if ((local.ss_family != AF_INET && local.ss_family != AF_INET6) ||
        peer.ss_family != local.ss_family)
        return UserError{"not a TCP connection"};

    // The peer's socket is the one whose own end is our peer's address and
    // whose remote end is ours: an exact lookup, not a dump of every socket.
    struct {
        nlmsghdr header;
        inet_diag_req_v2 request;
    } ask{};
    ask.header.nlmsg_len = sizeof ask;
    ask.header.nlmsg_type = SOCK_DIAG_BY_FAMILY;
    ask.header.nlmsg_flags = NLM_F_REQUEST;
    ask.request.sdiag_family = static_cast<__u8>(local.ss_family);
    ask.request.sdiag_protocol = IPPROTO_TCP;
    // Every state but LISTEN: a closing peer still names its owner, and a
    // listener that happens to share the peer's port is not the peer.
    ask.request.idiag_states = ~0U & ~(1U << TCP_LISTEN);
    copyEndpoint(peer, ask.request.id.idiag_sport, ask.request.id.idiag_src);
    copyEndpoint(local, ask.request.id.idiag_dport, ask.request.id.idiag_dst);
    ask.request.id.idiag_cookie[0] = ask.request.id.idiag_cookie[1] = INET_DIAG_NOCOOKIE;

    UniqueFd diag(socket(AF_NETLINK, SOCK_DGRAM | SOCK_CLOEXEC, NETLINK_SOCK_DIAG));
    if (!diag)
        return errnoError("socket(NETLINK_SOCK_DIAG)");
    sockaddr_nl kernel{};
    kernel.nl_family = AF_NETLINK;
    if (sendto(diag.get(), &ask, sizeof ask, 0, reinterpret_cast<sockaddr *>(&kernel),
               sizeof kernel) != static_cast<ssize_t>(sizeof ask))
        return errnoError("asking the kernel's socket diagnostics");

    alignas(nlmsghdr) char reply[2048];
    ssize_t n;
    do
        n = recv(diag.get(), reply, sizeof reply, 0);
    while (n < 0 && errno == EINTR);
    if (n < 0)
        return errnoError("reading the kernel's socket diagnostics");
    // Walked by hand: the NLMSG_* macros cast in C's way.
    const std::size_t headerSize = NLMSG_ALIGN(sizeof(nlmsghdr));
    for (std::size_t at = 0; at + sizeof(nlmsghdr) <= static_cast<std::size_t>(n);) {
        nlmsghdr h;
        std::memcpy(&h, reply + at, sizeof h);
        if (h.nlmsg_len < sizeof h || at + h.nlmsg_len > static_cast<std::size_t>(n))
            break;
        const char *body = reply + at + headerSize;
        at += NLMSG_ALIGN(h.nlmsg_len);
        if (h.nlmsg_type == NLMSG_ERROR && h.nlmsg_len >= headerSize + sizeof(nlmsgerr)) {
            nlmsgerr e;
            std::memcpy(&e, body, sizeof e);
            if (e.error == -ENOENT)
                return PeerOwner{}; // not here: another host's, or gone
            errno = -e.error;
            return errnoError("the kernel's socket diagnostics");
        }
        if (h.nlmsg_type != SOCK_DIAG_BY_FAMILY || h.nlmsg_len < headerSize + sizeof(inet_diag_msg))
            continue;
        inet_diag_msg m;
        std::memcpy(&m, body, sizeof m);
        // The kernel may answer with the socket nearest the key; only the
        // exact one names the peer.
        if (m.id.idiag_sport != ask.request.id.idiag_sport ||
            m.id.idiag_dport != ask.request.id.idiag_dport || m.idiag_state == TCP_LISTEN)
            return PeerOwner{};
        return PeerOwner{true, static_cast<uid_t>(m.idiag_uid)};
    }
    return UserError{"the kernel's socket diagnostics gave no answer"};
}

} // namespace stepmap::os
