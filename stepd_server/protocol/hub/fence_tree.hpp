#pragma once

// A node server's part of the fence tree (tree_shape.hpp): whole-step
// fences run over direct server-to-server links instead of through srun's
// hub. Each server waits for its own contribution and its children's, sends
// one TreeUp to its parent, and the root's result comes back down as
// TreeDown; a fence takes 2 * depth rounds and no message names the
// participants. Links use the hub's frames and handshake (the step secret,
// per-connection nonces): the parent listens like the hub, the child
// connects like a node server, and only the parent's own children may join.
//
// A lost or misbehaving link fails every pending fence and every later
// one with a message naming the node, and closes the other links so that
// the whole tree learns it at once (the hub reports a lost server and srun
// ends the step); a parent that cannot be joined at all stops the server
// (onUnreachableParent), as nothing else would tell its parent. Loop
// thread only.

#include "data_reply.hpp"
#include "tree_shape.hpp"
#include "uv/frame_connection.hpp"
#include "uv/uv_handle.hpp"

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
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
        int handshakeDeadlineMs = 5000;
        // Until first welcomed, a parent that drops the connection (it
        // makes room when flooded) is tried again this long.
        int joinRetryMs = 30000;
        std::function<void(const std::string &)> log;
        // The parent could not be joined within joinRetryMs.
        std::function<void(const std::string &)> onUnreachableParent;
    };

    FenceTree(uv_loop_t *loop, Settings settings);
    ~FenceTree();
    FenceTree(const FenceTree &) = delete;
    FenceTree &operator=(const FenceTree &) = delete;

    const TreeShape &shape() const { return settings_.shape; }
    bool hasChildren() const { return !children_.empty(); }
    // Listens for the children on the local address of `near` (the hub
    // link's socket: the address the other nodes reach this one by), any
    // port. The port, or 0 with error set.
    int listen(uv_tcp_t *near, std::string &error);
    // Joins the parent (the hub says where it listens once it joined).
    void connectParent(const std::string &host, int port);

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
        std::chrono::steady_clock::time_point since;
    };
    struct Pending {
        bool local = false;  // this node's own contribution arrived
        bool sentUp = false; // waiting for the result from the parent
        bool collect = false;
        std::uint32_t count = 0; // contributing nodes so far
        std::string records;     // collect: their FenceRecords
        std::vector<std::uint32_t> childrenIn;
        DataReply done;
    };

    void admit(uv_stream_t *server);
    void closeStaleChildren();
    void onChildFrames(uvnet::FrameConnection &c, std::vector<wire::Frame> &frames);
    void onChildClosed(uvnet::FrameConnection &c, const std::string &why);
    void joinChild(Child &child);
    void onChildUp(Child &child, const wire::Frame &f);
    void openParent();
    void onParentFrames(std::vector<wire::Frame> &frames);
    void onParentClosed(const std::string &why);
    void sendUp(std::string payload);
    // Goes up (or, at the root, down) once everything below arrived.
    void advance(std::uint64_t sequence);
    void finishAtRoot(std::uint64_t sequence, Pending &p);
    void finishDown(std::uint64_t sequence, int status, const std::string &data);
    void breakTree(const std::string &why);

    uv_loop_t *loop_;
    Settings settings_;
    std::vector<std::uint32_t> children_; // this node's children in the shape
    uvnet::UvHandlePtr<uv_tcp_t> listener_;
    uvnet::UvHandlePtr<uv_timer_t> sweep_;
    std::map<uvnet::FrameConnection *, Child> links_;
    std::map<std::uint32_t, uvnet::FrameConnection *> joined_;
    uvnet::FrameConnection::Ptr parent_;
    std::string parentHost_;
    int parentPort_ = 0;
    bool parentReady_ = false, parentEverJoined_ = false;
    std::uint64_t parentDeadline_ = 0;
    uvnet::UvHandlePtr<uv_timer_t> retry_;
    std::vector<std::string> queuedUp_;
    std::optional<std::string> broken_; // why the tree no longer works
    std::uint64_t sequence_ = 0;
    std::map<std::uint64_t, Pending> pending_;
    unsigned fencesDone_ = 0;
};

} // namespace stepmap::hub
