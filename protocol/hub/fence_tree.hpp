#pragma once

// A node server's part of the fence tree (tree_shape.hpp): whole-step
// fences run over direct server-to-server links instead of through srun's
// hub. Each server waits for its own contribution and its children's, sends
// one TreeUp to its parent, and the root's result comes back down as
// TreeDown; a fence takes 2 * depth rounds and no message names the
// participants. Links use the hub's frames and handshake (the step secret,
// per-connection nonces): the parent listens like the hub, the child
// connects like a node server, and only the parent's own children may join.
// Until they authenticate, connections wait behind a HandshakeGate (other
// local users refused, counted per source address, a short deadline).
//
// A child that cannot join its parent in time (a flood it shares an
// address with, a firewall) sends its part through srun's hub instead
// (viaHub; the hub hands it to the parent's relayed()), and gets the
// result back the same way: slower, but the step goes on.
//
// A lost or misbehaving link fails every pending fence and every later
// one with a message naming the node, and closes the other links so that
// the whole tree learns it at once (the hub reports a lost server and srun
// ends the step). A neighbour that went silent (TCP gave up on it: see
// uvnet::kDeadLinkSeconds) is also reported (onLinkFailed): both servers
// may still reach srun, which must end the step itself. A child may hold
// only so many fences, and bytes, ahead of this node; beyond that its link
// ends the same way. Loop thread only.

#include "base/expected.hpp"
#include "protocol/hub/data_reply.hpp"
#include "protocol/hub/handshake_gate.hpp"
#include "protocol/hub/tree_shape.hpp"
#include "protocol/uv/frame_connection.hpp"
#include "protocol/uv/uv_handle.hpp"
#include "protocol/wire/message.hpp"

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

namespace stepmap::hub {

class FenceTree {
public:
    struct Settings {
        std::string secret; // raw bytes
        std::uint32_t nodeIndex = 0;
        TreeShape shape{1, 1};
        LinkStatuses statuses;
        // A child answers the listener's challenge at once: a connection
        // silent this long is a stranger's.
        int handshakeDeadlineMs = 2000;
        // Until first welcomed, a parent that drops the connection (it makes
        // room when flooded) is tried again this long; then this node's
        // part goes through srun's hub (viaHub).
        int joinRetryMs = 5000;
        // What one child may hold here ahead of this node: fences it
        // contributed to that have not gone on, and their bytes (two
        // fences of the largest frame). Beyond either its link ends.
        std::size_t maxFencesPerChild = 64;
        std::size_t maxBytesPerChild = 2 * std::size_t{wire::kMaxFrameSize};
        std::function<void(const std::string &)> log;
        // Sends a tree message to a neighbour through srun's hub: this
        // node's TreeUp when its parent could not be joined, a TreeDown to
        // a child that came that way. Without it, a parent that cannot be
        // joined breaks the tree.
        std::function<void(std::uint32_t node, std::string payload)> viaHub;
        // A joined neighbour stopped answering (its link or host failed):
        // the step cannot go on, and srun is to say between which nodes.
        std::function<void(std::uint32_t node, const std::string &why)> onLinkFailed;
    };

    FenceTree(uv_loop_t *loop, Settings settings);
    ~FenceTree();
    FenceTree(const FenceTree &) = delete;
    FenceTree &operator=(const FenceTree &) = delete;

    const TreeShape &shape() const { return settings_.shape; }
    bool hasChildren() const { return !children_.empty(); }
    // Listens for the children on the local address of `near` (the hub
    // link's socket: the address the other nodes reach this one by), any
    // port. The port, or why it cannot listen.
    Expected<int> listen(uv_tcp_t *near);
    // Joins the parent (the hub says where it listens once it joined).
    void connectParent(const std::string &host, int port);
    // A tree message a neighbour sent through srun's hub (viaHub): from
    // the parent a TreeDown, from a child a TreeUp.
    void relayed(std::uint32_t from, const std::string &payload);

    // This node's part of the step's next whole-step fence.
    void fence(bool collect, std::string data, DataReply done);
    // Fails every pending fence (the server stops).
    void failAll(const std::string &why);
    unsigned fencesDone() const { return fencesDone_; }

private:
    struct Child {
        uvnet::FrameConnection::Ptr conn;
        bool joined = false;
        std::uint32_t node = 0;
        // It sent something after its Hello: losing the link now loses its
        // part (or it misbehaved). Until then the child may have given up
        // waiting for the Welcome (a lossy network) and join again, or
        // through the hub.
        bool contributed = false;
    };
    // A child's part of one fence, and the bytes it holds here.
    struct In {
        std::uint32_t node = 0;
        std::size_t bytes = 0;
    };
    struct Pending {
        bool local = false;  // this node's own contribution arrived
        bool sentUp = false; // waiting for the result from the parent
        bool collect = false;
        std::uint32_t count = 0; // contributing nodes so far
        std::string records;     // collect: their FenceRecords
        std::vector<In> childrenIn;
        DataReply done;
    };
    // What a child holds here: fences it is in that have not gone on.
    struct Load {
        std::size_t fences = 0;
        std::size_t bytes = 0;
    };

    void admit(uv_stream_t *server);
    void onChildFrames(uvnet::FrameConnection &c, std::vector<wire::Frame> &frames);
    void onChildClosed(uvnet::FrameConnection &c, const std::string &why);
    void joinChild(Child &child);
    // Forgets child node's direct link, which carried nothing yet: it comes
    // again (a new link, or through the hub). Closes the link quietly.
    void forgetSilentChild(std::uint32_t node);
    // A child's TreeUp, over its link or through the hub; the rule it
    // breaks, if it does (the caller ends the child's link).
    Expected<void> contribute(std::uint32_t child, const std::string &payload);
    // The parent's TreeDown; false if malformed or unexpected.
    bool takeResult(const std::string &payload);
    void openParent();
    void onParentFrames(std::vector<wire::Frame> &frames);
    // silent: the parent stopped answering (FrameConnection::peerWentSilent).
    void onParentClosed(const std::string &why, bool silent);
    void sendUp(std::string payload);
    // Goes up (or, at the root, down) once everything below arrived.
    void advance(std::uint64_t sequence);
    // The children's parts of p no longer count against them.
    void release(Pending &p);
    void finishAtRoot(std::uint64_t sequence, Pending &p);
    void finishDown(std::uint64_t sequence, int status, const std::string &data);
    void breakTree(const std::string &why);
    bool isChild(std::uint32_t node) const;

    uv_loop_t *loop_;
    Settings settings_;
    std::vector<std::uint32_t> children_; // this node's children in the shape
    uvnet::UvHandlePtr<uv_tcp_t> listener_;
    uvnet::UvHandlePtr<uv_timer_t> sweep_;
    std::unique_ptr<HandshakeGate> gate_; // while listening
    std::map<uvnet::FrameConnection *, Child> links_;
    std::map<std::uint32_t, uvnet::FrameConnection *> joined_;
    std::set<std::uint32_t> detoured_; // children that come through the hub
    std::map<std::uint32_t, Load> load_;
    uvnet::FrameConnection::Ptr parent_;
    std::string parentHost_;
    int parentPort_ = 0;
    bool parentReady_ = false, parentEverJoined_ = false;
    bool detourUp_ = false; // this node's parts go through the hub
    std::uint64_t parentDeadline_ = 0;
    uvnet::UvHandlePtr<uv_timer_t> retry_;
    uvnet::UvHandlePtr<uv_timer_t> attempt_; // one attempt to join the parent
    std::vector<std::string> queuedUp_;
    std::optional<std::string> broken_; // why the tree no longer works
    std::uint64_t sequence_ = 0;
    std::map<std::uint64_t, Pending> pending_;
    unsigned fencesDone_ = 0;
};

} // namespace stepmap::hub
