#pragma once

// Who holds the other end of a TCP connection, when it is on this host.
//
// A listener on a shared node cannot tell another local user's connection
// from its own user's by address: every local process connects from the
// same addresses. The kernel knows which user made the peer's socket and
// says so through its socket diagnostics (NETLINK_SOCK_DIAG, what `ss -e`
// reads), to any user, for a socket of the same network namespace.

#include "base/expected.hpp"

#include <sys/types.h>

namespace stepmap::os {

struct PeerOwner {
    // False when no socket of this host holds the peer's address and port:
    // a peer on another host, or a local one that has closed already.
    bool onThisHost = false;
    uid_t uid = 0; // the peer socket's owner, when onThisHost
};

// The owner of the peer of connected TCP socket fd (IPv4 or IPv6). An error
// only when the kernel cannot be asked (no sock_diag) or fd is no
// connected TCP socket.
Expected<PeerOwner> tcpPeerOwner(int fd);

} // namespace stepmap::os
