#pragma once

// Who may reach this node server's PMIx listener, and for how long a
// connection may keep PMIx waiting for its first words.
//
// PMIx 4.2.2 accepts its clients' loopback TCP connections on a thread of
// its own, then reads each connection's header on its one progress thread
// with a blocking recv and no deadline, and takes that header's word for
// the namespace's protocol modules (bfrops, buffer type, gds) before it
// checks who the peer is (ptl_base_connection_hdlr.c). So any local user
// who connects and sends nothing holds every rank of the node in PMIx_Init
// and every fence, and one who writes a header sets those modules for the
// real ranks. PMIx 4.2.2 never calls the host's `listener` upcall that
// would hand the accepting to us (checked: it starts its own thread).
//
// So this process defines accept(2): libpmix's call resolves to the
// executable's definition ahead of libc's (meson.build exports the symbol
// from stepmap-stepd). Once armed, a connection passes only when the kernel
// says its peer socket belongs to this server's own user (os/peer_owner.hpp,
// SO_PEERCRED for a Unix socket); everything else is closed before PMIx
// reads a byte, and PMIx's listener is told EAGAIN (the one error both
// PMIx 4.2's thread and PMIx 5's event handler take as "nothing now, go
// on"; PMIx 5 closes its listening socket on ECONNABORTED, checked in its
// ptl_base_listener.c). A connection that passes gets send
// and receive deadlines, so that even the job's own processes cannot hold
// PMIx's thread for longer than that in its blocking handshake (PMIx turns
// the socket non-blocking after it, where the deadlines do not apply);
// PMIx 5 retries a receive that timed out, so a watchdog shuts down a
// connection still in its handshake at the deadline as well.

#include <sys/types.h>

#include <chrono>
#include <cstdint>
#include <string>

namespace stepmap::server {

// Until called, accept() is libc's. uid: the only owner admitted.
void admitOnly(uid_t uid, std::chrono::milliseconds handshakeDeadline);

struct AdmissionCounts {
    std::uint64_t admitted = 0;
    std::uint64_t refused = 0;
    std::uint64_t timedOut = 0; // admitted, shut down at the handshake deadline
};
AdmissionCounts admissionCounts();

// "refused N connections from other users (uids ...)" or empty: the line
// the server logs as it leaves (each refusal is logged as it happens, the
// first few only).
std::string admissionSummary();

} // namespace stepmap::server
