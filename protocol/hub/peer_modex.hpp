#pragma once

// Direct modex between node servers, without srun: a server asks the
// server that owns a rank over a direct link, and that server answers on
// it. srun's hub then routes no request of the step's own ranks, so what
// it spends per step no longer grows with the requests.
//
// Every server listens (the address it reaches srun from, any port) and
// gives its address to the step's address book, which the fence tree
// gathers once at the start (addressRecord / setAddressBook). A request
// goes to the owner's server over a link opened on first use and kept
// (the hub's frames and handshake: the step secret, per-connection
// nonces); at most maxLinks such links are open, the least recently used
// idle one closing for a new one.
//
// Nothing here is needed for the step to go on: a request this side cannot
// send directly (no address book, the owner unreachable, every link busy)
// is declined, and one whose link ends before the answer is handed back
// (onDetour); the caller sends both through srun's hub, which knows
// whether the owner's server left. A peer that cannot be reached is not
// tried again.
//
// The listening side trusts nobody before the handshake (a HandshakeGate:
// other local users refused, a deadline), and after it only requests for
// this node's ranks, from the node the link authenticated as, at most
// maxRequestsPerPeer unanswered (ids not reused): anything else ends that
// link. One link
// per asking node; a newer one replaces the older. Loop thread only.

#include "base/expected.hpp"
#include "protocol/hub/handshake_gate.hpp"
#include "protocol/hub/link_host.hpp"
#include "protocol/timeline/exchange_counters.hpp"
#include "protocol/uv/frame_connection.hpp"
#include "protocol/uv/uv_handle.hpp"

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

namespace stepmap::hub {

// Where a node's server takes its peers' requests.
struct PeerAddress {
    std::string host; // numeric
    int port = 0;
};

// One node's entry of the address book, fixed size: family, address, port
// (port 0: this node takes no direct requests).
std::string encodePeerAddress(const std::optional<PeerAddress> &address);
// Every node's entries in node order (a collecting fence's result); none
// if malformed.
std::optional<std::vector<std::optional<PeerAddress>>> decodeAddressBook(const std::string &bytes,
                                                                         std::uint32_t nodeCount);

class PeerModex {
public:
    struct Settings {
        std::string secret; // raw bytes
        std::uint32_t nodeIndex = 0;
        std::uint32_t nodeCount = 1;
        int handshakeDeadlineMs = 2000;
        std::size_t maxLinks = 256;
        std::size_t maxRequestsPerPeer = 4096;
        // An answer to request id: the owner's status and data.
        std::function<void(std::uint64_t id, int status, std::string data)> onAnswer;
        // Request id is not answered here after all (its link ended): it
        // goes through srun's hub.
        std::function<void(std::uint64_t id)> onDetour;
    };

    PeerModex(uv_loop_t *loop, Settings settings, LinkHost &host,
              timeline::ExchangeCounters &counted);
    ~PeerModex();
    PeerModex(const PeerModex &) = delete;
    PeerModex &operator=(const PeerModex &) = delete;

    // Listens on the local address of `near` (the hub link's socket), any
    // port. This node's address-book entry (no address if it cannot listen:
    // its ranks are then asked for through the hub).
    std::string listen(uv_tcp_t *near);
    void setAddressBook(std::vector<std::optional<PeerAddress>> book);
    bool hasAddressBook() const { return !book_.empty(); }

    // Sends request id for rank to its owner's server; false if it cannot
    // go directly (the caller uses the hub).
    bool ask(std::uint32_t owner, std::uint64_t id, std::uint32_t rank);
    std::size_t openLinks() const { return out_.size(); }
    // This server leaves: the requests it has not answered are answered
    // "gone" (the asking server says the rank's server left, as the hub
    // would), its links close once that is written, and it takes no more.
    void leave();

private:
    // A link to a rank's owner.
    struct Outgoing {
        uvnet::FrameConnection::Ptr conn;
        bool established = false;        // the challenge came, the Hello went
        std::vector<std::string> queued; // requests until then
        std::set<std::uint64_t> asked;   // sent or queued, not answered
        std::uint64_t lastUse = 0;
        std::uint64_t openedAt = 0;
    };
    // A link from a node that asks this one.
    struct Incoming {
        uvnet::FrameConnection::Ptr conn;
        bool joined = false;
        std::uint32_t node = 0;
        std::uint64_t serial = 0;
        std::set<std::uint64_t> unanswered; // request ids
    };

    Outgoing *linkTo(std::uint32_t owner);
    void onOutgoingFrames(std::uint32_t owner, std::vector<wire::Frame> &frames);
    void onOutgoingClosed(std::uint32_t owner, const std::string &why);
    // Ends the link to owner; its unanswered requests go through the hub.
    void dropOutgoing(std::uint32_t owner, const std::string &why, bool unreachable);
    void admit(uv_stream_t *server);
    void onIncomingFrames(uvnet::FrameConnection &c, std::vector<wire::Frame> &frames);
    void onIncomingClosed(uvnet::FrameConnection &c);
    bool answerRequest(Incoming &in, const wire::Frame &f);
    void sweep();

    uv_loop_t *loop_;
    Settings settings_;
    LinkHost &host_;
    LinkStatuses statuses_;
    timeline::ExchangeCounters &counted_;
    std::vector<std::optional<PeerAddress>> book_;
    std::set<std::uint32_t> unreachable_;
    std::map<std::uint32_t, Outgoing> out_;
    std::uint64_t uses_ = 0;
    uvnet::UvHandlePtr<uv_timer_t> sweep_;
    uvnet::UvHandlePtr<uv_tcp_t> listener_;
    std::unique_ptr<HandshakeGate> gate_;
    std::map<uvnet::FrameConnection *, Incoming> in_;
    std::map<std::uint32_t, uvnet::FrameConnection *> inByNode_;
    std::map<std::uint64_t, uvnet::FrameConnection *> inBySerial_;
    std::uint64_t nextSerial_ = 1;
};

} // namespace stepmap::hub
