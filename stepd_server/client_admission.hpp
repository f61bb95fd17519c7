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
// reads a byte, and PMIx's listener thread is told ECONNABORTED (the one
// error it takes as "try the next one"). A connection that passes gets send
// and receive deadlines, so that even the job's own processes cannot hold
// PMIx's thread for longer than that in its blocking handshake (PMIx turns
// the socket non-blocking after it, where the deadlines do not apply).

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
};
AdmissionCounts admissionCounts();

// "refused N connections from other users (uids ...)" or empty: the line
// the server logs as it leaves (each refusal is logged as it happens, the
// first few only).
std::string admissionSummary();

} // namespace stepmap::server
