#pragma once

// Who may wait on a listener before proving the step secret, and who gives
// way when too many do. srun's hub and every fence-tree parent take
// connections from anyone who can reach them; strangers must not lock the
// step's own servers out. A connection just accepted is
// - refused at once when a process of another user on this host holds its
//   other end (the kernel names the owner, os/peer_owner.hpp): on a shared
//   node every local process connects from the node's addresses, so only
//   the uid tells an attacker from the step's servers. The step's user and
//   root pass;
// - else counted by its source address. A source at its own cap gives up
//   its oldest connection for the newcomer; when all sources together reach
//   the total, the oldest of the source holding the most gives way: a flood
//   from one address evicts its own connections, never another address's;
// - closed if it has not authenticated by the deadline.
// Refusals, evictions and late peers are logged by peer, the first few of
// each, then as counts now and then: a flood must not fill the log.
// Loop thread only.

#include "protocol/uv/frame_connection.hpp"

#include <sys/types.h>
#include <unistd.h>

#include <chrono>
#include <cstddef>
#include <functional>
#include <map>
#include <optional>
#include <string>

namespace stepmap::hub {

class HandshakeGate {
public:
    struct Settings {
        std::size_t maxWaiting = 64;
        // 0: only the total counts (srun's hub: every server may come from
        // one address, as on a one-machine cluster).
        std::size_t maxWaitingPerSource = 0;
        int deadlineMs = 5000;
        // Whose local processes may connect (and root's); none: anyone's.
        std::optional<uid_t> user = getuid();
        // Names the listener in log lines, e.g. "fence tree".
        std::string where;
        std::function<void(const std::string &)> log; // may be empty
    };

    explicit HandshakeGate(Settings settings);
    HandshakeGate(const HandshakeGate &) = delete;
    HandshakeGate &operator=(const HandshakeGate &) = delete;

    // A connection just accepted: false if it is refused (closed already).
    // Older waiting connections may be closed to make room; their owners'
    // onClosed runs inside this call.
    bool admit(uvnet::FrameConnection &c);
    // c no longer waits: it authenticated, or it is gone. Any number of times.
    void leave(uvnet::FrameConnection &c);
    // Closes the connections past the deadline and logs what was counted
    // but not logged; call every deadlineMs / 4 or so.
    void sweep();

    std::size_t waiting() const { return waiting_.size(); }
    int deadlineMs() const { return settings_.deadlineMs; }

private:
    struct Waiting {
        std::string source; // numeric address
        std::string peer;   // address and port, for the log
        std::chrono::steady_clock::time_point since;
    };
    enum Kind { Refused, Evicted, Late, kKinds };

    // How many wait from source.
    std::size_t from(const std::string &source) const;
    // The oldest waiting connection from source; null if none.
    uvnet::FrameConnection *oldestOf(const std::string &source) const;
    // Makes room for a newcomer from source; false if none can go.
    bool makeRoom(const std::string &source);
    void close(uvnet::FrameConnection *c, Kind kind, const std::string &why);
    void note(Kind kind, const std::string &line);

    Settings settings_;
    std::map<uvnet::FrameConnection *, Waiting> waiting_;
    std::map<std::string, std::size_t> perSource_;
    unsigned logged_[kKinds] = {};
    unsigned unlogged_[kKinds] = {};
    bool noDiagnostics_ = false; // the kernel cannot name peers: said once
    std::chrono::steady_clock::time_point lastSummary_;
};

} // namespace stepmap::hub
