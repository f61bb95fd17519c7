#pragma once

// A TCP connection carrying authenticated frames, on a libuv loop. All
// member functions run on the loop's thread.
//
// Lifetime: accept and connect hand out a FrameConnection::Ptr. The memory
// goes once both the owner has let go of it and libuv has closed the
// handle; letting go of an open connection closes it without calling back.
// onClosed is called at most once, and not after the owner let go.

#include "protocol/uv/uv_handle.hpp"
#include "protocol/wire/frame_channel.hpp"

#include <uv.h>

#include <deque>
#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace stepmap::uvnet {

// How long a silent peer (its host or link dead, no FIN or RST) keeps a
// connection: unacknowledged data or keepalive probes for this long close
// it with "connection timed out".
constexpr unsigned kDeadLinkSeconds = 15;

// Benchmarks only (contrib/bench/server-scale.sh): every frame received is
// handed on this many milliseconds after it arrived, a network's one-way
// latency per hop on a machine that has none. STEPMAP_BENCH_LINK_DELAY_MS,
// read once; 0 (unset): at once. It can only slow its own process's links.
unsigned benchmarkLinkDelayMs();

class FrameConnection {
public:
    enum class State {
        Connecting, // connect: until the TCP connection is made
        Open,
        Flushing, // closeAfterFlush: the queued writes go out, then Closed
        Closed,   // closed, or closing (the handle is not free yet)
    };

    // The owner's release: closes quietly if still open.
    struct Release {
        void operator()(FrameConnection *c) const;
    };
    using Ptr = std::unique_ptr<FrameConnection, Release>;

    struct Callbacks {
        // The frames that arrived and passed authentication.
        std::function<void(FrameConnection &, std::vector<wire::Frame> &)> onFrames;
        // Called once, with the reason, when the connection is gone.
        std::function<void(FrameConnection &, const std::string &)> onClosed;
    };

    // Accepts a pending connection on server; null (and the pending
    // connection dropped) if that fails.
    // keyFor: the key a peer's Hello must carry by the node it names
    // (FrameChannel::setKeyForNode); none: the secret for every peer.
    static Ptr accept(uv_stream_t *server, std::string secret, Callbacks cb,
                      wire::FrameChannel::KeyForNode keyFor = {});
    // Starts connecting to host:port; failures are reported through onClosed
    // (already during this call if host cannot be resolved).
    static Ptr connect(uv_loop_t *loop, const std::string &host, int port, std::string secret,
                       Callbacks cb);

    FrameConnection(const FrameConnection &) = delete;
    FrameConnection &operator=(const FrameConnection &) = delete;

    void send(std::vector<std::uint8_t> bytes);
    void send(wire::MessageType type, const std::string &payload) {
        send(channel_.seal(type, payload));
    }
    void close(const std::string &why);
    // Closes once everything sent so far has been written.
    void closeAfterFlush(const std::string &why);

    wire::FrameChannel &channel() { return channel_; }
    uv_tcp_t *tcp() { return &tcp_; }
    State state() const { return state_; }
    bool closing() const { return state_ == State::Closed; }
    // Whether it closed because the peer stopped answering (timed out, or
    // its host became unreachable): a network or host failure, not a peer
    // that left.
    bool peerWentSilent() const { return peerWentSilent_; }

private:
    FrameConnection(uv_loop_t *loop, std::string secret, wire::FrameChannel::Role role,
                    Callbacks cb);
    ~FrameConnection() = default;
    void startReading();
    // benchmarkLinkDelayMs: frames wait here until due, in order.
    void hold(std::vector<wire::Frame> frames, unsigned delayMs);
    void releaseHeld();
    // Frees the object once both the owner and libuv are done with it.
    void freeIfUnused();

    static void onConnect(uv_connect_t *req, int status);
    // Closes for a libuv error `code` (what failed: "read failed", ...).
    void fail(const char *what, int code);
    static void onAlloc(uv_handle_t *h, size_t suggested, uv_buf_t *buf);
    static void onRead(uv_stream_t *s, ssize_t n, const uv_buf_t *buf);
    static void onWrite(uv_write_t *req, int status);
    static void onClose(uv_handle_t *h);

    uv_tcp_t tcp_{};
    uv_connect_t connectReq_{};
    uv_shutdown_t shutdownReq_{};
    std::string flushReason_; // closeAfterFlush's, for onClosed
    wire::FrameChannel channel_;
    Callbacks cb_;
    State state_ = State::Open;
    bool released_ = false; // the owner let go
    bool peerWentSilent_ = false;
    bool handleClosed_ = false; // libuv let go
    std::vector<char> readBuf_;
    struct Held {
        std::uint64_t due; // uv_now
        std::vector<wire::Frame> frames;
    };
    std::deque<Held> held_;
    UvHandlePtr<uv_timer_t> holdTimer_;
    bool eofAfterHeld_ = false; // the peer closed; what it sent before is still held
};

} // namespace stepmap::uvnet
