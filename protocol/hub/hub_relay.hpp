#pragma once

// Where a node server's tree children join srun's hub: through it, so that
// srun takes the root and its fan-out children only, however many nodes the
// step has (TreeShape::joinsThroughParent). The relay listens on a port
// every node derives alone (relayPort), before its own server has joined;
// children prove the step secret to it as they would to srun. The relay
// answers a child's join itself, as srun would (Welcome, and TreeParent: it
// is the child's tree parent), and tells srun of its subtree's joins
// together (JoinedBelow, one frame once the whole subtree is in, or after
// kJoinBatchMs), so that srun reads a frame per fan-out child, not per
// server. From then on it carries the children's frames up (RelayMsg, with
// the child's node) and srun's frames for them down, untouched: a child sees
// the same link it would have to srun. Frames of nodes deeper in a child's
// subtree pass the same way; a frame up first sends the joins it may follow.
//
// A child that cannot reach its parent's relay joins srun directly (its
// HubLink falls back), and so does one whose parent leaves before it: the
// relay waits a moment for its children to say goodbye first (drain), and
// those still there when it goes join srun on their own. A child's link that
// ends without goodbye is reported up (RelayClosed) and ends the step as a
// lost server does. Loop thread only.

#include "base/expected.hpp"
#include "protocol/hub/handshake_gate.hpp"
#include "protocol/hub/tree_shape.hpp"
#include "protocol/uv/frame_connection.hpp"
#include "protocol/uv/uv_handle.hpp"
#include "protocol/wire/payloads.hpp"

#include <uv.h>

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace stepmap::hub {

// The relay port of node in a site's range [first, last]: spread by the step
// (seed) so that steps sharing nodes rarely meet, and by the node, so that
// several servers of one step on one machine (a test cluster) do not either.
std::uint16_t relayPort(std::uint16_t first, std::uint16_t last, std::uint64_t seed,
                        std::uint32_t node);
// A step's seed for relayPort, from its "JOB.STEP" tag.
std::uint64_t relaySeed(const std::string &stepTag);

class HubRelay {
public:
    struct Settings {
        std::string secret; // raw bytes, the step's
        std::uint32_t nodeIndex = 0;
        TreeShape shape{1, 1};
        int handshakeDeadlineMs = 5000;
        // What a child may leave unread before its link is cut.
        std::size_t maxQueuedBytesPerChild = 64u << 20;
        std::function<void(const std::string &)> log;
        // A frame toward srun on this node's own link (queued there until
        // this node has joined).
        std::function<void(wire::MessageType, std::string)> sendUp;
    };

    HubRelay(uv_loop_t *loop, Settings settings);
    ~HubRelay();
    HubRelay(const HubRelay &) = delete;
    HubRelay &operator=(const HubRelay &) = delete;

    // Takes children on port of every local address; why not (the port is
    // taken: the children then join srun directly).
    Expected<void> listen(int port);
    // This node's own server joined srun: srun's fan-out, and the port its
    // fence tree children connect to. Children that joined before are
    // answered now.
    void welcomed(std::uint32_t fanOut, std::uint32_t treePort);
    // A frame srun sent for a node below this one; false if it is for no
    // node below (the caller's link is then broken).
    bool down(wire::RelayMsg m);
    // srun ends the step: every child is told, as srun would have.
    void shutdownAll(const std::string &payload);
    // This node's server leaves: no more children; done once those linked
    // have left, or after atMostMs (the rest then join srun themselves).
    void drain(unsigned atMostMs, std::function<void()> done);
    std::size_t linkedChildren() const { return joined_.size(); }

private:
    struct Child {
        uvnet::FrameConnection::Ptr conn;
        bool joined = false;
        bool leaving = false; // said goodbye
        std::uint32_t node = 0;
        bool answered = false; // welcomed on srun's behalf
    };
    static constexpr unsigned kJoinBatchMs = 100;

    void admit(uv_stream_t *server);
    void onFrames(uvnet::FrameConnection &c, std::vector<wire::Frame> &frames);
    void onClosed(uvnet::FrameConnection &c, const std::string &why);
    void join(Child &child);
    // Welcome and TreeParent, as srun would send them.
    void answer(Child &child);
    // The joins of child's subtree, which it gathered.
    bool takeJoinsBelow(Child &child, const std::string &payload);
    // Tells srun of the joins gathered so far (at once once every node
    // below this one is in; otherwise after kJoinBatchMs).
    void noteJoins();
    void sendJoins();
    // Hands frame on to child's link; false if the link was cut.
    bool sendToChild(uvnet::FrameConnection &c, wire::MessageType type, const std::string &payload);
    void finishDrainIfDone();

    void stopTakingJoins();

    uv_loop_t *loop_;
    Settings settings_;
    uvnet::UvHandlePtr<uv_tcp_t> listener_;
    uvnet::UvHandlePtr<uv_timer_t> sweep_;
    uvnet::UvHandlePtr<uv_timer_t> drainTimer_;
    uvnet::UvHandlePtr<uv_timer_t> joinBatch_;
    std::vector<wire::JoinedNode> joinsToSend_;
    std::uint32_t joinsSent_ = 0;
    std::optional<std::pair<std::uint32_t, std::uint32_t>> welcome_; // fan-out, tree port
    std::unique_ptr<HandshakeGate> gate_;
    std::map<uvnet::FrameConnection *, Child> links_;
    std::map<std::uint32_t, uvnet::FrameConnection *> joined_; // by child node
    std::function<void()> drained_;
    bool shutDown_ = false; // its children were told the step ends
};

} // namespace stepmap::hub
